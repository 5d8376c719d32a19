"""sweep(): run simulate() over every combination of some axes; one Dataset with those dimensions."""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # xarray is imported when a Dataset is built: it is most of pagesim's import time
    import xarray as xr

import itertools


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
    Each axis becomes a dimension named after it. When ``page_size`` is an axis, the counters' own
    page-size dimension is renamed ``mapped_page_size`` (every region then uses the swept size).

    >>> ds = sweep({"machine": ["skylake", "opteron-k8"], "page_size": ["4K", "2M"]},
    ...            workload="random", working_set="64M", accesses=10**5, progress=False)
    >>> ds["walks"].sum(["side", "mapped_page_size"]).shape
    (2, 2)
    """
    if not isinstance(axes, dict) or not axes:
        raise ValueError("axes must be a non-empty dict such as {'page_size': ['4K', '2M']}")
    import xarray as xr

    from .simulate import simulate

    for k, vals in axes.items():
        if k in fixed:
            raise ValueError(f"{k!r} is both a sweep axis and a fixed argument")
        if isinstance(vals, (str, bytes)) or not hasattr(vals, "__iter__"):
            raise ValueError(f"axis {k!r} needs a list of values, got {vals!r}")
    if "machine" not in axes and "machine" not in fixed:
        raise ValueError("sweep needs machine=, either fixed (machine='skylake') or as an axis")
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
        clash = [k for k in names if k in ds.dims]
        if clash:
            # sweeping page_size: the counters' own page-size dimension becomes mapped_page_size
            ds = ds.rename({k: f"mapped_{k}" for k in clash})
            if "page" in ds.coords:
                ds = ds.rename({"page": "mapped_page"})
        parts.append(ds)
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    import pandas as pd

    index = pd.MultiIndex.from_tuples([tuple(_label(k, v) for k, v in zip(names, c)) for c in combos], names=names)
    out = xr.concat(parts, dim="run", join="outer", coords="different", compat="equals", combine_attrs="drop_conflicts")
    out = out.assign_coords(xr.Coordinates.from_pandas_multiindex(index, "run")).unstack("run")
    out.attrs["sweep_axes"] = str({k: [_label(k, v) for v in vals] for k, vals in zip(names, values)})
    return out
