"""A built wheel installed outside the checkout runs a notebook: every module the notebooks import
(pagesim.studies once was missing from the wheel) and the datasets ship in it. Building it, and the
Makefile's editable install, warn about nothing."""

import json
import os
import re
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wheel_python(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("wheel")
    # Build from a copy without build/: setuptools reuses build/lib, whose stale files once hid that
    # the package list left pagesim.studies out (`make run` writes its report to build/ too).
    src = tmp / "src"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns("build", ".venv", ".git", "__pycache__", "*.egg-info", ".hypothesis", ".pytest_cache"))
    # verbose, so the build backend's own output (its warnings) is in the log
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "-w", str(tmp), str(src)], capture_output=True, text=True)
    if build.returncode != 0 and "Could not" in build.stderr and "setuptools" in build.stderr:
        pytest.skip(f"cannot fetch setuptools to build the wheel: {build.stderr.strip()[-200:]}")
    assert build.returncode == 0, build.stderr[-2000:]
    (tmp / "build.log").write_text(build.stdout + build.stderr)
    (whl,) = tmp.glob("pagesim-*.whl")
    env_dir = tmp / "venv"
    venv.create(env_dir, with_pip=True)
    py = env_dir / "bin" / "python"
    # The dependencies come from this test's own environment (a .pth line adds its site-packages
    # after the new environment's own, and .pth files inside it, such as the editable install of
    # the checkout, are not processed), so only pagesim itself comes from the wheel.
    site = subprocess.run([str(py), "-c", "import site; print(site.getsitepackages()[0])"], capture_output=True, text=True, check=True).stdout.strip()
    deps = [p for p in sys.path if p.endswith("site-packages")]
    Path(site, "test-deps.pth").write_text("\n".join(deps) + "\n")
    subprocess.run([str(py), "-m", "pip", "install", "--quiet", "--no-deps", str(whl)], check=True)
    return py, site


#: a warning class a Python build backend emits (SetuptoolsDeprecationWarning, BuildBackendWarning,
#: ...); pip's own "WARNING:" lines are about this machine's pip configuration, not the package
BACKEND_WARNING = re.compile(r"\b[A-Z]\w*Warning\b")


def test_building_the_wheel_warns_about_nothing(wheel_python):
    py, _ = wheel_python
    log = (py.parents[2] / "build.log").read_text()
    assert "Building wheel for pagesim" in log
    warned = [ln for ln in log.splitlines() if BACKEND_WARNING.search(ln)]
    assert warned == [], "\n".join(warned[:20])


def test_the_makefiles_editable_install_warns_about_nothing(tmp_path):
    """The Makefile's install command, run on a copy of the checkout into a new environment
    (dependencies and build backend from this one, no download), prints nothing."""
    line = next(ln.strip() for ln in (ROOT / "Makefile").read_text().splitlines() if "pip install" in ln and "-e" in ln)
    env_part, _, _ = line.partition("$(PY)")
    assert env_part.strip() == 'PYTHONWARNINGS="ignore:Editable installation"', line
    src = tmp_path / "src"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns("build", ".venv", ".git", "__pycache__", "*.egg-info", ".hypothesis", ".pytest_cache"))
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    py = env_dir / "bin" / "python"
    # the build backend too comes from this environment, not the setuptools a new venv may bring
    subprocess.run([str(py), "-m", "pip", "uninstall", "--quiet", "--yes", "setuptools"], capture_output=True)
    site = subprocess.run([str(py), "-c", "import site; print(site.getsitepackages()[0])"], capture_output=True, text=True, check=True).stdout.strip()
    Path(site, "test-deps.pth").write_text("\n".join(p for p in sys.path if p.endswith("site-packages")) + "\n")
    env = dict(os.environ, PYTHONWARNINGS="ignore:Editable installation")
    out = subprocess.run(
        [str(py), "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", "-e", str(src)], capture_output=True, text=True, env=env
    )
    assert out.returncode == 0, out.stderr[-2000:]
    warned = [ln for ln in (out.stdout + out.stderr).splitlines() if BACKEND_WARNING.search(ln)]
    assert warned == [], "\n".join(warned[:20])


def test_wheel_holds_every_package(wheel_python):
    py, site = wheel_python
    out = subprocess.run(
        [str(py), "-c", "import pagesim, pagesim.studies.power64k, pagesim.sources.datasets as D; print(pagesim.__file__); print(len(D.load('cscs_pchan')))"],
        capture_output=True,
        text=True,
        cwd=str(ROOT / "notebooks"),
    )
    assert out.returncode == 0, out.stderr[-2000:]
    where, rows = out.stdout.split()
    assert where.startswith(site), f"pagesim imported from {where}, not the installed wheel"
    assert int(rows) == 9


def test_wheel_runs_a_notebook(wheel_python, tmp_path):
    py, site = wheel_python
    code = (
        "import json, sys; from pathlib import Path; import pagesim.validation.notebooks as N; "
        f"r = N.execute(Path({str(ROOT / 'notebooks' / '00_basics.ipynb')!r}), Path({str(tmp_path)!r}), quick=True); "
        "print(json.dumps({'status': r['status'], 'error': r.get('error', ''), 'n': len(r.get('findings', []))}))"
    )
    # nbconvert's templates are data files of the environment the dependencies come from
    env = dict(os.environ, JUPYTER_PATH=os.pathsep.join([str(Path(sys.prefix, "share", "jupyter")), os.environ.get("JUPYTER_PATH", "")]))
    out = subprocess.run([str(py), "-c", code], capture_output=True, text=True, cwd=str(tmp_path), env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    rec = json.loads(out.stdout.strip().splitlines()[-1])
    assert rec["status"] == "ok", rec["error"]
    assert rec["n"] > 0
