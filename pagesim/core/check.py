"""Validation helpers: every public entry point checks its inputs with these before anything reaches
a numba kernel. Each error names the parameter, the value given and what is allowed."""

from __future__ import annotations

import math
import os
import sys
import warnings
from pathlib import Path

import numpy as np


def check_int(name: str, value, lo: int, hi: int | None = None, what: str = "") -> int:
    """An int (numpy integers too, never bool) in ``lo..hi`` (``hi`` None: no upper bound)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} {value!r}")
    v = int(value)
    if v < lo or (hi is not None and v > hi):
        allowed = f"{lo}.." + ("" if hi is None else f"{hi}")
        raise ValueError(f"{name}={v!r} is out of range: allowed {allowed}{what}")
    return v


def check_number(name: str, value, lo: float | None = None, hi: float | None = None) -> float:
    """A finite real number (int or float, not bool, not NaN or infinity) in ``lo..hi``."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number, got {type(value).__name__} {value!r}")
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"{name}={value!r} must be a finite number")
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        lo_s = "" if lo is None else f"{lo:g}"
        hi_s = "" if hi is None else f"{hi:g}"
        raise ValueError(f"{name}={value!r} is out of range: allowed {lo_s}..{hi_s}")
    return v


def check_fraction(name: str, value, *, open_high: bool = False, what: str = "") -> float:
    """A number in [0, 1] (``open_high``: [0, 1)); ``what`` says what the fraction is of."""
    v = check_number(name, value)
    if not (0.0 <= v < 1.0 if open_high else 0.0 <= v <= 1.0):
        raise ValueError(f"{name}={value!r} must be a fraction in [0, {'1)' if open_high else '1]'}{what}")
    return v


def check_choice(name: str, value, allowed) -> object:
    """One of ``allowed`` (compared with ==)."""
    allowed = tuple(allowed)
    try:
        ok = value in allowed
    except TypeError:  # unhashable or incomparable
        ok = False
    if not ok:
        raise ValueError(f"{name}={value!r} is not allowed: use one of {', '.join(map(repr, allowed))}")
    return value


def check_bool(name: str, value) -> bool:
    """True or False (numpy's bool too); anything else, even 0 or 1, is a TypeError."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {type(value).__name__} {value!r}")
    return bool(value)


def check_seed(seed) -> int:
    """A seed for numpy's default_rng: an int in 0..2**63-1."""
    return check_int("seed", seed, 0, (1 << 63) - 1)


def warn(message: str, category=UserWarning) -> None:
    """``warnings.warn`` pointing at the first caller outside pagesim (the user's line), however
    deep inside pagesim the warning is raised."""
    pkg = str(Path(__file__).resolve().parents[1])
    f, level = sys._getframe(1), 2
    while f is not None and f.f_code.co_filename.startswith(pkg):
        f, level = f.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)


def usable_cores(cgroup: Path = Path("/sys/fs/cgroup")) -> int:
    """The number of cores this process may keep busy at once: its CPU affinity (on Linux; elsewhere
    the machine's cores), no more than its control group's CPU quota allows (a container such as
    Binder's may see every core of its host and be given one or two; ``cgroup`` is where the
    control groups are mounted)."""
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        n = os.cpu_count() or 1
    quota = cgroup_cpu_quota(cgroup)
    if quota is not None:
        n = min(n, int(quota))
    return max(1, n)


def cgroup_cpu_quota(cgroup: Path = Path("/sys/fs/cgroup")) -> float | None:
    """The CPUs' worth of time a period this process's control group may use (cgroup v2's
    ``cpu.max``, or v1's ``cpu/cpu.cfs_quota_us`` over ``cpu.cfs_period_us``), or None when it sets
    no quota or none can be read."""
    try:
        quota, period = (cgroup / "cpu.max").read_text().split()[:2]
        return None if quota == "max" else int(quota) / int(period)
    except (OSError, ValueError):
        pass
    try:
        quota = int((cgroup / "cpu" / "cpu.cfs_quota_us").read_text())
        period = int((cgroup / "cpu" / "cpu.cfs_period_us").read_text())
        return None if quota <= 0 or period <= 0 else quota / period
    except (OSError, ValueError):
        return None
