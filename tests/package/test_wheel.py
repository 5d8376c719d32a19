"""A built wheel installed outside the checkout runs a notebook: every module the notebooks import
(pagesim.studies once was missing from the wheel) and the datasets ship in it."""

import json
import os
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
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(tmp), str(src)], capture_output=True, text=True)
    if build.returncode != 0 and "Could not" in build.stderr and "setuptools" in build.stderr:
        pytest.skip(f"cannot fetch setuptools to build the wheel: {build.stderr.strip()[-200:]}")
    assert build.returncode == 0, build.stderr[-2000:]
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
