"""binder/ follows repo2docker's conventions and builds whatever the host: every dependency pinned
(binder/requirements.txt, compiled by `make lock`), pagesim installed without fetching anything,
the kernel cache outside $HOME, and nothing the build node measures can fail the build (that part:
tests/validation/test_notebooks_report.py, test_a_check_measured_on_the_build_machine_is_never_a_gate)."""

import os
import re
import shlex
import subprocess
import sys
import venv
from pathlib import Path

import pytest

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
BINDER = ROOT / "binder"
#: the files repo2docker reads from binder/ (https://repo2docker.readthedocs.io/en/latest/config_files.html);
#: README.md and build.in are ours, for readers and for `make lock`
REPO2DOCKER = {"runtime.txt", "apt.txt", "requirements.txt", "postBuild", "start"}
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[\w,.-]+\])?==([\w.!+-]+)(\s*;.*)?$")


def _name(req: str) -> str:
    return re.split(r"[<>=!~;\[ ]", req, maxsplit=1)[0].strip().lower().replace("_", "-")


def _pins() -> dict:
    pins = {}
    for ln in (BINDER / "requirements.txt").read_text().splitlines():
        if ln.strip() and not ln.lstrip().startswith("#"):
            m = PIN.match(ln.strip())
            assert m, f"binder/requirements.txt: not pinned to one version: {ln!r}"
            pins[m.group(1).lower().replace("_", "-")] = m.group(3)
    return pins


def _lock_commands() -> list[list[str]]:
    """The `uv pip compile` commands of the Makefile's lock target, as uv writes them in its header
    (without -q)."""
    lines = (ROOT / "Makefile").read_text().split("\nlock:", 1)[1].split("\n\n", 1)[0].splitlines()
    return [[a for a in shlex.split(ln.strip().replace("$(VENV)/bin/", "")) if a != "-q"] for ln in lines if "uv pip compile" in ln]


def test_binder_holds_repo2docker_files_only():
    extra = {p.name for p in BINDER.iterdir()} - REPO2DOCKER - {"README.md", "build.in"}
    assert extra == set(), f"binder/ has files repo2docker does not read: {extra}"
    assert re.fullmatch(r"python-3\.\d+\n?", (BINDER / "runtime.txt").read_text())
    for ln in (BINDER / "apt.txt").read_text().splitlines():
        assert re.fullmatch(r"[a-z0-9][a-z0-9+.-]+", ln.strip()), f"apt.txt: not a Debian package name: {ln!r}"
    for script in ("postBuild", "start"):
        p = BINDER / script
        assert os.access(p, os.X_OK), f"binder/{script} is not executable"
        assert p.read_text().startswith("#!/bin/bash\n")
    assert (BINDER / "start").read_text().rstrip().endswith('exec "$@"')


def test_requirements_pin_every_dependency_for_binders_python():
    pins = _pins()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    wanted = list(project["project"]["dependencies"]) + list(project["build-system"]["requires"])
    for extra in ("notebooks", "exercises", "dask"):
        wanted += [r for r in project["project"]["optional-dependencies"][extra] if not r.startswith("pagesim")]
    missing = [r for r in wanted if _name(r) not in pins and "python_version<" not in r.replace(" ", "")]
    assert missing == [], f"binder/requirements.txt does not pin {missing}: run make lock"
    header = (BINDER / "requirements.txt").read_text().splitlines()[1].lstrip("# ").strip()
    (binder_cmd,) = [c for c in _lock_commands() if "binder/requirements.txt" in c]
    assert shlex.split(header) == binder_cmd, "binder/requirements.txt was not written by the Makefile's lock command"
    assert binder_cmd[binder_cmd.index("--python-version") + 1] == (BINDER / "runtime.txt").read_text().strip().removeprefix("python-")


def test_ci_installs_the_lock_the_makefile_writes():
    header = (ROOT / ".ci" / "lock.txt").read_text().splitlines()[1].lstrip("# ").strip()
    assert shlex.split(header) in _lock_commands()
    assert 'export PIP_CONSTRAINT="$PWD/.ci/lock.txt"' in (ROOT / ".ci" / "run").read_text()


def test_postbuild_installs_nothing_unpinned_and_caches_outside_home():
    post = (BINDER / "postBuild").read_text()
    start = (BINDER / "start").read_text()
    assert "set -euo pipefail" in post
    installs = [ln for ln in post.splitlines() if "pip install" in ln and not ln.lstrip().startswith("#")]
    assert installs and all("--no-deps" in ln and "--no-build-isolation" in ln for ln in installs), installs
    cache = [ln for ln in post.splitlines() if ln.startswith("PAGESIM_CACHE_DIR=")]
    assert cache and cache == [ln for ln in start.splitlines() if ln.startswith("PAGESIM_CACHE_DIR=")]
    assert "HOME" not in cache[0] and "~" not in cache[0] and "sys.prefix" in cache[0]
    for text in (post, start):
        assert "export NUMBA_CPU_NAME=generic" in text
    assert "pagesim warm" in post and "pagesim notebooks --quick" in post


def test_the_pinned_environment_resolves_in_a_fresh_venv(tmp_path):
    """pip resolves binder/requirements.txt in a new environment of this Python (a dry run:
    nothing is installed; every pin must exist for this platform and agree with the others)."""
    if sys.version_info[:2] != (3, 11):
        pytest.skip("binder/requirements.txt is compiled for Python 3.11 (binder/runtime.txt)")
    env = tmp_path / "venv"
    venv.create(env, with_pip=True)
    # Binder installs with no constraint file: CI's PIP_CONSTRAINT (.ci/lock.txt, a separate compile
    # for every supported Python) must not reach this resolution
    clean = {k: v for k, v in os.environ.items() if k != "PIP_CONSTRAINT"}
    out = subprocess.run(
        [str(env / "bin" / "python"), "-m", "pip", "install", "--dry-run", "--quiet", "--ignore-installed", "-r", str(BINDER / "requirements.txt")],
        capture_output=True,
        text=True,
        timeout=900,
        env=clean,
    )
    if out.returncode != 0 and re.search(r"(?i)connection|network is unreachable|temporary failure in name resolution", out.stderr):
        pytest.skip(f"no package index reachable: {out.stderr.strip()[-200:]}")
    assert out.returncode == 0, out.stderr[-3000:]
