"""The Python examples of the README and of docs/ run as written; the README's links lead somewhere."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_readme_python_blocks_run():
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        blocks = re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), re.S)
        assert blocks or page.parent.name == "docs", page
        for b in blocks:
            exec(compile(b, str(page.relative_to(ROOT)), "exec"), {})


def test_the_readme_links_to_pages_that_exist():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\(((?:docs|exercises|datasets|notebooks)/[^)#]+)\)", text)
    assert "docs/os.md" in links and "docs/speed.md" in links
    for link in links:
        assert (ROOT / link).exists(), link
