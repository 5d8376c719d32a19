"""The README's Python examples run as written."""

import re
from pathlib import Path


def test_readme_python_blocks_run():
    text = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks
    for b in blocks:
        exec(compile(b, "README.md", "exec"), {})
