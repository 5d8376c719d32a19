"""sweep(): run simulate() over every combination of some axes; one Dataset with those dimensions."""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # xarray is imported when a Dataset is built: it is most of pagesim's import time
    import xarray as xr

import itertools

import numpy as np

from .machines import Machine
from .units import parse_size
from .workloads import Workload


def _label(axis: str, v):
    if v is None:  # the default of ram=, memory=, work_cycles=...: a value of its own (pandas would drop None)
        return "None"
    if isinstance(v, Machine):
        return v.name
    if isinstance(v, Workload):
        return v.label
    if isinstance(v, np.ndarray):
        return f"array({v.size})"
    if axis in ("page_size", "working_set"):
        return parse_size(v, axis)
    return v


def _labels(axis: str, vals: list) -> list:
    """One label per value; values that are different but would share a label (two workloads of
    one working set, two address arrays) are told apart, by the parameters in which they differ
    where there are any, else by their position on the axis."""
    labels = [_label(axis, v) for v in vals]
    try:
        hash(tuple(labels))
    except TypeError:
        labels = [repr(x) for x in labels]
    for lab in set(labels):
        at = [i for i, x in enumerate(labels) if x == lab]
        if len(at) < 2:
            continue
        group = [vals[i] for i in at]
        if not all(isinstance(v, (Workload, Machine, np.ndarray)) for v in group):
            raise ValueError(f"axis {axis!r} has repeated values: {[vals[i] for i in at]} are all {lab!r}")
        for i, v in enumerate(group):
            if any(j != i and _same(v, u) for j, u in enumerate(group)):
                raise ValueError(f"axis {axis!r} has repeated values: {lab!r} appears {len(at)} times")
        if all(isinstance(v, Workload) for v in group):
            params = [{k: str(x) for k, x in v.params().items()} for v in group]
            keys = sorted({k for p in params for k in p if len({q.get(k) for q in params}) > 1})
            if keys and len({tuple(p.get(k) for k in keys) for p in params}) == len(params):
                for i, p in zip(at, params):
                    labels[i] = f"{lab} " + ", ".join(f"{k}={p.get(k)}" for k in keys)
                continue
        for n, i in enumerate(at):
            labels[i] = f"{lab} #{n + 1}"
    return labels


def _same(a, b) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape and bool(np.array_equal(a, b))
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - values that cannot be compared are not the same
        return False


def _concat(parts: list, xr):
    """Concatenate runs along "run". Coordinates that describe a machine's own structures or page
    sizes (``page``, a structure's ``level``, ``entries``...) can differ between runs of different
    machines: they are set aside, and put back as coordinates where every run agrees, or kept as
    variables with the run's dimensions where they differ."""
    aux = {}
    for ds in parts:
        for name, c in ds.coords.items():
            if name not in ds.indexes and len(c.dims) == 1:
                aux.setdefault(name, c.dims[0])
    parts = [ds.reset_coords([c for c in aux if c in ds.coords]) for ds in parts]
    out = xr.concat(parts, dim="run", join="outer", data_vars="all", coords="minimal", compat="equals", combine_attrs="drop_conflicts")
    for name, dim in aux.items():
        values = {}
        agree = True
        for ds in parts:
            if name not in ds:
                continue
            for key, v in zip(ds[dim].values.tolist(), ds[name].values.tolist()):
                if values.setdefault(key, v) != v:
                    agree = False
        if agree:
            attrs = next(ds[name].attrs for ds in parts if name in ds)
            out = out.drop_vars(name).assign_coords({name: (dim, [values.get(k) for k in out[dim].values.tolist()], attrs)})
    return out


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
        if not vals:
            raise ValueError(f"axis {k!r} is empty: give at least one value, e.g. {{{k!r}: [...]}}")
    labels = {k: _labels(k, vals) for k, vals in zip(names, values)}
    combos = list(itertools.product(*[range(len(v)) for v in values]))
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(combos), desc="sweep", unit="run")
    parts = []
    for combo in combos:
        kw = dict(fixed)
        kw.update({k: values[a][i] for a, (k, i) in enumerate(zip(names, combo))})
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

    index = pd.MultiIndex.from_tuples([tuple(labels[k][i] for k, i in zip(names, c)) for c in combos], names=names)
    out = _concat(parts, xr)
    out = out.assign_coords(xr.Coordinates.from_pandas_multiindex(index, "run")).unstack("run")
    out.attrs["sweep_axes"] = str(labels)
    return out
