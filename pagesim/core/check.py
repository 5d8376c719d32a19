"""Validation helpers: every public entry point checks its inputs with these before anything reaches
a numba kernel. Each error names the parameter, the value given and what is allowed."""

from __future__ import annotations

import functools
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


def check_result(fn: str, ds, needs: tuple = (), variables: dict | None = None, whole: tuple = ()):
    """``ds`` as one simulation's result (an xarray Dataset, with the attrs in ``needs``), or a
    TypeError naming ``fn``. ``variables`` ({name: dimensions}): the data ``fn`` reads, each with
    exactly these dimensions; a result cut down to some of its variables, with ``.sel`` / ``.isel``
    of one value (which drops a dimension), or with one more (a sweep's, ``expand_dims``) is refused
    with a ValueError saying so. ``whole``: dimensions ``fn`` needs uncut, because it reads totals
    over them (the scalar ``total_cycles`` is the sum of ``cycles`` over its components and page
    sizes; ``side`` must hold both sides)."""
    import xarray as xr  # deferred: only results need it, and whoever holds one has imported it

    if not isinstance(ds, xr.Dataset):
        raise TypeError(f"{fn}: ds must be the Dataset a simulation returned (pagesim.simulate and the like), got {type(ds).__name__}")
    missing = [a for a in needs if a not in ds.attrs]
    if missing:
        raise TypeError(f"{fn}: ds is a Dataset without {', '.join(missing)} in its attrs: give one a simulation returned (pagesim.simulate and the like)")
    absent = [name for name in variables or {} if name not in ds.variables]
    if absent:
        raise ValueError(
            f"{fn}: ds has no {', '.join(map(repr, absent))}, which one simulation's result has (a sweep's result, or a Dataset "
            "of some of its variables?): pass one simulation's whole result"
        )
    for name, dims in (variables or {}).items():
        lost = [d for d in dims if d not in ds[name].dims]
        if lost:
            raise ValueError(f"{fn}: ds[{name!r}] has lost its dimension {lost[0]!r} (a result cut with .sel or .isel of one value): pass the whole result")
        extra = [d for d in ds[name].dims if d not in dims]
        if extra:
            raise ValueError(
                f"{fn}: ds[{name!r}] has the dimension {extra[0]!r}, which one simulation's result has not (a sweep's result, or "
                f"expand_dims): pass one simulation's result, as in ds.isel({extra[0]}=0)"
            )
    if "side" in whole and sorted(map(str, ds["side"].values)) != ["data", "instr"]:
        raise ValueError(f"{fn}: ds has the sides {[str(v) for v in ds['side'].values]}, not both (a result cut along 'side'): pass the whole result")
    if "cycles" in whole:
        total, parts = float(ds["total_cycles"]), float(ds["cycles"].sum())
        if abs(total - parts) > 1e-9 * max(abs(total), 1.0):
            raise ValueError(
                f"{fn}: ds's cycles add up to {parts:,.0f} of its total_cycles {total:,.0f} (a result cut along 'page_size' or "
                "'component'): pass the whole result"
            )
    return ds


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


def usable_cores(cgroup=None, own=None) -> int:
    """The number of cores this process may keep busy at once: its CPU affinity (on Linux; elsewhere
    the machine's cores), no more than the CPU quota of its control group allows, in whole cores
    (:func:`cgroup_cpu_quota`, read once a process unless ``cgroup`` or ``own`` is given; a
    container such as Binder's may see every core of its host and be given one or two)."""
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        n = os.cpu_count() or 1
    quota = _own_quota() if cgroup is None and own is None else cgroup_cpu_quota(cgroup, own)
    if quota is not None:
        n = min(n, int(quota))
    return max(1, n)


@functools.lru_cache(maxsize=1)
def _own_quota() -> float | None:
    return cgroup_cpu_quota()


def cgroup_cpu_quota(cgroup=None, own=None) -> float | None:
    """The CPUs' worth of time a period this process may use, by the tightest quota of its control
    group and the groups above it (``own`` names them; ``cgroup`` is where they are mounted, as
    systemd and container runtimes mount them: v1's cpu controller at ``cgroup/cpu``): cgroup v2's
    ``cpu.max``, v1's ``cpu.cfs_quota_us`` over ``cpu.cfs_period_us``. None when none sets a quota
    or none can be read. Unset, they are /sys/fs/cgroup and /proc/self/cgroup."""
    root = Path(cgroup or "/sys/fs/cgroup")
    try:
        lines = Path(own or "/proc/self/cgroup").read_text().splitlines()
    except (OSError, UnicodeDecodeError):
        lines = []
    fields = [line.split(":", 2) for line in lines if line.count(":") >= 2]
    v2 = next((f[2] for f in fields if f[0] == "0" and f[1] == ""), "/")
    v1 = next((f[2] for f in fields if "cpu" in f[1].split(",")), "/")
    quotas = [q for d in _groups(root, v2) if (q := _quota(d / "cpu.max", None)) is not None]
    quotas += [q for d in _groups(root / "cpu", v1) if (q := _quota(d / "cpu.cfs_quota_us", d / "cpu.cfs_period_us")) is not None]
    return min(quotas) if quotas else None


def _groups(mount: Path, path: str) -> list[Path]:
    """The control group at ``path`` under ``mount`` and each group above it, up to the mount."""
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if ".." in parts:
        return [mount]
    return [mount.joinpath(*parts[:k]) for k in range(len(parts), -1, -1)]


def _quota(quota_file: Path, period_file: Path | None) -> float | None:
    """One group's quota in CPUs: v2's "quota period" in one file, or v1's two files; None when it
    sets none (max, or not above zero) or the files cannot be read."""
    try:
        if period_file is None:
            quota, period = quota_file.read_text().split()[:2]
            if quota == "max":
                return None
        else:
            quota, period = quota_file.read_text().strip(), period_file.read_text().strip()
        q, p = int(quota), int(period)
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    return q / p if q > 0 and p > 0 else None
