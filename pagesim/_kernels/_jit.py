"""The one place that sets numba options for every pagesim kernel, and the one place that decides
where compiled kernels are cached.

The cache directory is chosen once, when pagesim is imported:
  1. ``$PAGESIM_CACHE_DIR`` if set, else
  2. ``$NUMBA_CACHE_DIR/pagesim`` if ``NUMBA_CACHE_DIR`` is set, else
  3. ``$XDG_CACHE_HOME/pagesim`` (``~/.cache/pagesim`` when XDG_CACHE_HOME is unset);
if that directory cannot be created or written (a read-only home, a read-only container), a private
directory ``pagesim-<uid>`` in the system's temporary directory, with a one-line
:class:`CacheWarning`; if that fails too, nothing is cached (every process compiles its kernels
afresh, which is slower but correct), again with a one-line warning.

Numba's files go to ``<cache>/numba/<options>`` (one directory per set of compile options, which
numba's own cache does not key on: code compiled with other options is never loaded) and the generated specialised kernels (specialize.py) to
``<cache>/kernels``. Only pagesim's own kernels use this directory: numba's global setting is
pointed at it while a pagesim function is decorated and restored afterwards, so other numba code in
the same process keeps its own cache location. Without this, numba caches next to the package
source (``pagesim/_kernels/__pycache__``) or in ``~/.cache/numba``, and raises "cannot cache
function ...: no locator available" at import when neither is writable.
"""

from __future__ import annotations

import os
import stat
import sys
import tempfile
import warnings
from pathlib import Path

import numba
from numba.core import config as _numba_config
from numba.core.compiler_lock import global_compiler_lock


class CacheWarning(UserWarning):
    """pagesim could not use the cache directory it wanted (see pagesim._kernels._jit)."""


def _writable(d: Path) -> bool:
    try:
        d.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=d):
            pass
        return True
    except OSError:
        return False


def _private_temp_dir() -> Path | None:
    """``<tmp>/pagesim-<uid>``, only if it is a real directory that this user owns and no one else
    can write (anything else could plant code that pagesim would import)."""
    uid = os.getuid() if hasattr(os, "getuid") else None
    d = Path(tempfile.gettempdir()) / f"pagesim-{uid if uid is not None else 'user'}"
    try:
        d.mkdir(mode=0o700, exist_ok=True)
        st = os.lstat(d)
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode) or (uid is not None and st.st_uid != uid) or st.st_mode & 0o022:
        return None
    return d if _writable(d) else None


def choose_cache_dir(environ=None) -> tuple[Path | None, str | None]:
    """(the cache directory or None for no caching, a warning to show or None); see the module doc."""
    env = os.environ if environ is None else environ
    if env.get("PAGESIM_CACHE_DIR"):
        want, named = Path(env["PAGESIM_CACHE_DIR"]), "PAGESIM_CACHE_DIR"
    elif env.get("NUMBA_CACHE_DIR"):
        want, named = Path(env["NUMBA_CACHE_DIR"]) / "pagesim", "NUMBA_CACHE_DIR/pagesim"
    else:
        xdg = env.get("XDG_CACHE_HOME")
        try:
            base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
        except RuntimeError:  # no HOME and no password entry
            base = None
        want, named = (base / "pagesim" if base else None), "the user cache directory"
    if want is not None:
        want = want.absolute()  # a relative setting means the directory it named at import
    if want is not None and _writable(want):
        return want, None
    where = f"{want} ({named})" if want is not None else named
    tmp = _private_temp_dir()
    if tmp is not None:
        return tmp, (
            f"pagesim: cannot write the cache directory {where}; compiled kernels are cached in {tmp} instead (set PAGESIM_CACHE_DIR to a writable directory)"
        )
    return None, (
        f"pagesim: cannot write the cache directory {where} nor a private temporary one; compiled kernels "
        "are not cached, so each process compiles them again (set PAGESIM_CACHE_DIR to a writable directory)"
    )


def _caller_level() -> int:
    """The stacklevel of the first frame outside pagesim and the import machinery, so that the
    warning points at the user's ``import pagesim`` (warnings.warn does not count importlib's frames)."""
    pkg = str(Path(__file__).resolve().parents[1])
    f, level = sys._getframe(2), 2
    while f is not None:
        name = f.f_code.co_filename
        if not name.startswith("<frozen importlib"):
            if not name.startswith(pkg):
                return level
            level += 1
        f = f.f_back
    return 2


CACHE_DIR, _warning = choose_cache_dir()
if _warning:
    warnings.warn(_warning, CacheWarning, stacklevel=_caller_level())
# nogil=True: a kernel releases the GIL, so sweeps can run in threads.
# error_model="numpy": no Python-style division checks in the hot loop (divisors are validated
#   non-zero before a kernel is called).
COMPILE_OPTIONS = dict(nogil=True, error_model="numpy")


def numba_dir(cache_dir: Path, options: dict) -> Path:
    """Where numba caches kernels compiled with ``options``: numba keys its cache on a function's
    source file, signature and the machine, not on options such as ``error_model``, so each set of
    options gets a directory of its own."""
    tag = "-".join(f"{k}={options[k]}" for k in sorted(options))
    return cache_dir / "numba" / tag


NUMBA_DIR = numba_dir(CACHE_DIR, COMPILE_OPTIONS) if CACHE_DIR is not None else None
KERNELS_DIR = CACHE_DIR / "kernels" if CACHE_DIR is not None else None

# cache=True: compiled kernels persist between sessions, in NUMBA_DIR (above).
OPTIONS = dict(cache=CACHE_DIR is not None, **COMPILE_OPTIONS)


# Every step that builds a kernel runs under one lock, numba's own compiler lock: rendering a
# kernel's source (writer.py), writing and importing
# its file, decorating it (numba's global cache setting is swapped meanwhile), and numba compiling
# or loading any kernel, which holds this lock itself. CPython 3.11's conversion between syntax trees
# and Python objects keeps one recursion counter for the whole interpreter, so two threads doing it
# at once fail with "SystemError: AST constructor recursion depth mismatch"; numba's compiler does
# it too (numba.misc.firstlinefinder parses each function's source). Threads of sweep(workers=N), or
# of a threaded Dask worker, build and compile kernels at once on a cold cache. Reentrant.
BUILD_LOCK = global_compiler_lock


def jit(fn):
    if NUMBA_DIR is None:
        return numba.njit(**OPTIONS)(fn)
    # numba picks a function's cache locator when it is decorated, from its global CACHE_DIR
    with BUILD_LOCK:
        saved = _numba_config.CACHE_DIR
        _numba_config.CACHE_DIR = str(NUMBA_DIR)
        try:
            return numba.njit(**OPTIONS)(fn)
        finally:
            _numba_config.CACHE_DIR = saved
