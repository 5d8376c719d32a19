"""`pip install pagesim` is the library: importing it and simulating loads none of the notebooks'
modules (the `notebooks` extra), and `pagesim notebooks` without them says what to install."""

import subprocess
import sys
from pathlib import Path

from pagesim.validation import notebooks as N

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]


def test_the_library_runs_without_the_notebook_modules():
    code = (
        "import sys, pagesim; from pagesim.validation.notebooks import NOTEBOOK_MODULES; "
        "ds = pagesim.simulate('skylake', 'random', working_set='4M', accesses=1000); "
        "pagesim.sweep({'page_size': ['4K', '2M']}, False, machine='skylake', workload='random', working_set='1M', accesses=500); "
        "print(int(ds['walks'].sum()) > 0, sorted(m for m in NOTEBOOK_MODULES if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split("\n")[0] == "True []"


def test_the_extras_split_the_library_from_the_notebooks():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = {d.split(">")[0].split("=")[0].split(";")[0].strip() for d in project["dependencies"]}
    assert names == {"numba", "numpy", "xarray", "pandas", "tqdm", "tomli"}
    notebooks = {d.split(">")[0].strip() for d in project["optional-dependencies"]["notebooks"]}
    assert {"jupyterlab", "papermill", "seaborn", "ipywidgets", "ipykernel", "nbformat", "nbconvert"} <= notebooks
    assert project["license"] == "BSD-3-Clause" and (ROOT / "LICENSE").read_text().startswith("BSD 3-Clause License")


def test_running_the_notebooks_without_the_extra_says_what_to_install(monkeypatch, capsys):
    assert N.missing_modules(("json", "no_such_module_here")) == ["no_such_module_here"]
    monkeypatch.setattr(N, "missing_modules", lambda names=N.NOTEBOOK_MODULES: ["papermill", "seaborn"])
    assert N.main(["--quick", "00"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == "pagesim notebooks: error: running the notebooks needs papermill, seaborn: pip install 'pagesim[notebooks]'"
