"""The autograder zip grades a submission in a fresh environment, as Gradescope or `otter grade` would.

`pagesim exercises build` writes otter's autograder zip; its environment.yml lists otter-grader and
pagesim's dependencies, and its files/ ship pagesim itself (it is not on PyPI). This test unpacks
the zip, creates a fresh venv, installs the zip's pip requirements from PyPI into it, and grades the
sample submissions of assignment 05 there with `otter run`: nothing of this checkout is importable
in that venv, so pagesim can only come from the zip. It needs PyPI (skipped without it) and takes
minutes (pip's downloads and installs, then a kernel per submission); the time of each step is
printed (pytest -s).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

pytest.importorskip("otter", reason="otter-grader is not installed (pip install -e '.[exercises]')")
yaml = pytest.importorskip("yaml")

from pagesim.teaching import grading  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
NAME = "05_shared_page_tables"  # no simulation: no kernel to compile in the fresh venv
SAMPLES = REPO / "exercises" / "samples" / NAME


def _pypi_reachable() -> bool:
    try:
        socket.create_connection(("pypi.org", 443), timeout=5).close()
        return True
    except OSError:
        return False


def _run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    assert r.returncode == 0, f"{' '.join(map(str, cmd))[:300]} failed:\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}"
    return r


@pytest.mark.skipif(not _pypi_reachable(), reason="PyPI is not reachable: the fresh venv installs from it")
def test_autograder_zip_grades_a_sample_in_a_fresh_venv(tmp_path):
    times = {}
    t = time.monotonic()
    built = grading.build(tmp_path / "build", only=[NAME], check=False, quiet=True)[NAME]
    (zpath,) = (built / "autograder").glob(f"{NAME}-autograder_*.zip")
    times["build"] = time.monotonic() - t

    ag = tmp_path / "zip"
    with zipfile.ZipFile(zpath) as zf:
        zf.extractall(ag)
        assert any(n.startswith("files/pagesim/") and n.endswith("exercises.py") for n in zf.namelist()), "pagesim is not in the zip's files/"
    env_yml = yaml.safe_load((ag / "environment.yml").read_text())
    pip_reqs = next(d["pip"] for d in env_yml["dependencies"] if isinstance(d, dict) and "pip" in d)
    assert any(r.startswith("otter-grader") for r in pip_reqs) and any(r.startswith("numba") for r in pip_reqs), pip_reqs

    # a fresh venv that sees nothing of this checkout: no PYTHONPATH, no pagesim of ours
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PAGESIM", "VIRTUAL_ENV", "JUPYTER", "IPYTHON"))}
    env.update(PAGESIM_CACHE_DIR=str(tmp_path / "kernels"), JUPYTER_PATH=str(tmp_path / "venv" / "share" / "jupyter"), HOME=str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    t = time.monotonic()
    _run([sys.executable, "-m", "venv", str(tmp_path / "venv")], env=env)
    py = tmp_path / "venv" / "bin" / "python"
    cache = Path(os.environ.get("PIP_CACHE_DIR", Path.home() / ".cache" / "pip"))
    _run([str(py), "-m", "pip", "install", "--quiet", "--cache-dir", str(cache), *pip_reqs], env=env, cwd=ag)
    times["venv + pip install"] = time.monotonic() - t
    probe = subprocess.run([str(py), "-c", "import pagesim"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert probe.returncode != 0, "pagesim is importable in the fresh venv before grading: the test would not show that the zip ships it"

    expected = {"solution": 6.0, "wrong": 5.0}  # exercises/README.md's table: 6 / 0 / 5
    for kind, want in expected.items():
        sub = tmp_path / kind
        sub.mkdir()
        (sub / f"{NAME}.ipynb").write_bytes((SAMPLES / f"{kind}.ipynb").read_bytes())
        t = time.monotonic()
        _run([str(tmp_path / "venv" / "bin" / "otter"), "run", "-a", str(zpath), "-o", str(sub), "--no-logo", str(sub / f"{NAME}.ipynb")], env=env, cwd=sub)
        times[f"otter run {kind}"] = time.monotonic() - t
        results = json.loads((sub / "results.json").read_text())
        scores = {tc["name"]: float(tc["score"]) for tc in results["tests"] if "score" in tc}  # one entry per question (and a scoreless "Public Tests")
        assert sorted(scores) == ["q1", "q2", "q3"] and sum(scores.values()) == want, f"{kind}: {scores}, expected {want} in all: {json.dumps(results)[:2000]}"
    print("autograder zip in a fresh venv: " + ", ".join(f"{k} {v:.0f} s" for k, v in times.items()) + f"; total {sum(times.values()) / 60:.1f} min")
