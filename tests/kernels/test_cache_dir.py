"""Where compiled kernels are cached: one directory chosen at import (PAGESIM_CACHE_DIR, else
NUMBA_CACHE_DIR/pagesim, else XDG_CACHE_HOME or ~/.cache /pagesim), a private temporary directory
with a warning when that cannot be written, no caching with a warning when nothing can.

"Cannot be written" is made real for any user, root included, by putting a plain file where a
directory must go (``~/.cache`` and ``pagesim/_kernels/__pycache__``): no one can create a
directory there. The package is imported from a copy, so the copy's ``__pycache__`` can be broken
or inspected. Where ``unshare -m`` works (root on Linux) one test also mounts the copy and HOME
read-only, which is the case reported: a system-wide install, a read-only container.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pagesim._kernels._jit import choose_cache_dir

PKG = Path(__file__).resolve().parents[2] / "pagesim"
UID = os.getuid() if hasattr(os, "getuid") else "user"

# a small kernel is compiled (and cached) so that the cache's files can be looked for
PROBE = """
import numpy as np
import pagesim
from pagesim._kernels import _jit, regions
print("CACHE_DIR", _jit.CACHE_DIR)
assert regions.find_region(5, np.array([0], dtype=np.int64), np.array([10], dtype=np.int64), 0) == 0
"""


def _copy_package(dest: Path) -> Path:
    shutil.copytree(PKG, dest / "pagesim", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return dest / "pagesim"


def _run(tmp_path, code, env_extra, *, prefix=()):
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "PAGESIM_CACHE_DIR", "XDG_CACHE_HOME")}
    env.update(PYTHONPATH=str(tmp_path / "src"), PYTHONDONTWRITEBYTECODE="1", **env_extra)
    return subprocess.run([*prefix, sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path)


def _numba_files(d: Path):
    return sorted(p.name for p in d.rglob("*.nbi")) if d.is_dir() else []


@pytest.fixture
def unwritable(tmp_path):
    """A HOME whose .cache is a file, a package copy whose _kernels/__pycache__ is a file, and a
    fresh temporary directory."""
    pkg = _copy_package(tmp_path / "src")
    (pkg / "_kernels" / "__pycache__").write_text("not a directory")
    home = tmp_path / "home"
    home.mkdir()
    (home / ".cache").write_text("not a directory")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    return {"HOME": str(home), "TMPDIR": str(tmp)}


def test_unwritable_home_and_package_fall_back_to_a_private_temp_dir(tmp_path, unwritable):
    r = _run(tmp_path, PROBE, unwritable)
    assert r.returncode == 0, r.stderr  # was: RuntimeError: cannot cache function 'find_region': no locator available
    want = tmp_path / "tmp" / f"pagesim-{UID}"
    assert f"CACHE_DIR {want}" in r.stdout
    warnings = [ln for ln in r.stderr.splitlines() if "CacheWarning" in ln]
    assert len(warnings) == 1 and f"{tmp_path / 'home' / '.cache' / 'pagesim'}" in warnings[0] and "PAGESIM_CACHE_DIR" in warnings[0]
    assert "regions.find_region" in " ".join(_numba_files(want / "numba"))
    assert (os.stat(want).st_mode & 0o077) == 0  # private: no one else can plant a kernel there


def test_nothing_writable_compiles_without_a_cache(tmp_path, unwritable):
    (tmp_path / "tmp" / f"pagesim-{UID}").write_text("someone else's file")  # the temporary fallback is taken
    code = (
        PROBE
        + """
ds = pagesim.simulate("opteron-k8", "random", working_set="8M", accesses=2000, specialize=True)
assert int(ds["accesses"].sum()) == 2000
print("specialised", _jit.KERNELS_DIR)
"""
    )
    r = _run(tmp_path, code, unwritable)
    assert r.returncode == 0, r.stderr
    assert "CACHE_DIR None" in r.stdout and "specialised None" in r.stdout
    assert "compiled kernels are not cached" in r.stderr
    assert not list(tmp_path.rglob("*.nbi")) and not list(tmp_path.rglob("pagesim_kernel_*"))


def test_pagesim_cache_dir_holds_every_cache_and_the_package_none(tmp_path):
    pkg = _copy_package(tmp_path / "src")
    cache = tmp_path / "my cache"
    r = _run(tmp_path, PROBE, {"PAGESIM_CACHE_DIR": str(cache), "HOME": str(tmp_path)})
    assert r.returncode == 0, r.stderr
    assert f"CACHE_DIR {cache}" in r.stdout and "CacheWarning" not in r.stderr
    assert "regions.find_region" in " ".join(_numba_files(cache / "numba"))
    assert _numba_files(pkg) == []  # was: numba's index files in pagesim/_kernels/__pycache__
    assert not (tmp_path / ".cache").exists()


def test_choice_order(tmp_path):
    assert choose_cache_dir({"PAGESIM_CACHE_DIR": str(tmp_path / "p"), "NUMBA_CACHE_DIR": str(tmp_path / "n")}) == (tmp_path / "p", None)
    assert choose_cache_dir({"NUMBA_CACHE_DIR": str(tmp_path / "n")}) == (tmp_path / "n" / "pagesim", None)
    assert choose_cache_dir({"XDG_CACHE_HOME": str(tmp_path / "x")}) == (tmp_path / "x" / "pagesim", None)
    (tmp_path / "file").write_text("")
    d, warning = choose_cache_dir({"PAGESIM_CACHE_DIR": str(tmp_path / "file" / "sub")})
    assert d != tmp_path / "file" / "sub" and f"{tmp_path / 'file' / 'sub'} (PAGESIM_CACHE_DIR)" in warning


def _can_mount_read_only() -> bool:
    if not sys.platform.startswith("linux") or shutil.which("unshare") is None or UID != 0:
        return False
    r = subprocess.run(["unshare", "-m", "sh", "-c", "mount --bind / / 2>/dev/null"], capture_output=True)
    return r.returncode == 0


@pytest.mark.skipif(not _can_mount_read_only(), reason="needs root and unshare -m to mount a read-only copy")
def test_read_only_install_and_home(tmp_path):
    ro = tmp_path / "ro"
    _copy_package(ro / "src")
    (ro / "home").mkdir()
    script = f'mount --bind {ro} {ro} && mount -o remount,bind,ro {ro} && exec "$@"'
    env = {"HOME": str(ro / "home"), "TMPDIR": str(tmp_path)}
    r = _run(ro, PROBE, env, prefix=("unshare", "-m", "sh", "-c", script, "sh"))
    assert r.returncode == 0, r.stderr
    assert f"CACHE_DIR {tmp_path / f'pagesim-{UID}'}" in r.stdout and "CacheWarning" in r.stderr
    assert not (ro / "home" / ".cache").exists() and _numba_files(ro) == []


def test_each_set_of_compile_options_caches_apart(tmp_path):
    """numba's cache does not key on options such as error_model: kernels compiled with other
    options live in another directory, so they are never loaded for these."""
    from pagesim._kernels import _jit

    here = _jit.numba_dir(tmp_path, _jit.COMPILE_OPTIONS)
    assert here.parent == tmp_path / "numba"
    assert _jit.numba_dir(tmp_path, {**_jit.COMPILE_OPTIONS, "error_model": "python"}) != here
    assert _jit.numba_dir(tmp_path, {**_jit.COMPILE_OPTIONS, "fastmath": True}) != here
    assert _jit.numba_dir(tmp_path, dict(reversed(list(_jit.COMPILE_OPTIONS.items())))) == here
    if _jit.CACHE_DIR is not None:
        assert _jit.NUMBA_DIR == _jit.numba_dir(_jit.CACHE_DIR, _jit.COMPILE_OPTIONS)
        assert _jit.OPTIONS == {"cache": True, **_jit.COMPILE_OPTIONS}
