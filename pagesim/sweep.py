"""sweep(): run simulate() over every combination of some axes; one Dataset with those dimensions."""
from __future__ import annotations

import itertools

import xarray as xr

from .machines import Machine
from .units import parse_size
from .workloads import Workload


def _label(axis: str, v):
    if isinstance(v, Machine):
        return v.name
    if isinstance(v, Workload):
        return v.label
    if axis in ("page_size", "working_set"):
        return parse_size(v, axis)
    return v


def sweep(axes: dict, progress: bool = True, **fixed) -> xr.Dataset:
    """``axes`` maps a simulate() keyword (``machine``, ``page_size``, ``workload``, ``working_set``,
    ``seed``, any workload parameter...) to the values to try; ``fixed`` holds the rest.

    >>> ds = sweep({"machine": ["skylake", "opteron-k8"], "page_size": ["4K", "2M"]},
    ...            workload="random", working_set="64M", accesses=10**5, progress=False)
    >>> ds["walks"].sum(["side", "page_size"]).shape
    (2, 2)
    """
    if not isinstance(axes, dict) or not axes:
        raise ValueError("axes must be a non-empty dict such as {'page_size': ['4K', '2M']}")
    from .simulate import simulate

    for k, vals in axes.items():
        if k in fixed:
            raise ValueError(f"{k!r} is both a sweep axis and a fixed argument")
        if isinstance(vals, (str, bytes)) or not hasattr(vals, "__iter__"):
            raise ValueError(f"axis {k!r} needs a list of values, got {vals!r}")
    names = list(axes)
    values = [list(axes[k]) for k in names]
    for k, vals in zip(names, values):
        labels = [_label(k, v) for v in vals]
        if len(set(labels)) != len(labels):
            raise ValueError(f"axis {k!r} has repeated values: {labels}")
    combos = list(itertools.product(*values))
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(combos), desc="sweep", unit="run")
    parts = []
    for combo in combos:
        kw = dict(fixed)
        kw.update(zip(names, combo))
        machine = kw.pop("machine")
        ds = simulate(machine, **kw)
        ds = ds.expand_dims({k: [_label(k, v)] for k, v in zip(names, combo)})
        parts.append(ds)
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    out = xr.combine_by_coords(parts, combine_attrs="drop_conflicts", join="outer", data_vars="all", coords="different", compat="no_conflicts")
    out.attrs["sweep_axes"] = str({k: [_label(k, v) for v in vals] for k, vals in zip(names, values)})
    return out
