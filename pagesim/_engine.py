"""The engine shared by ``simulate`` and ``simulate_processes``: one Dataset built directly."""
from __future__ import annotations

import numpy as np


def build_dataset(dv: dict, coords: dict, attrs: dict):
    """``xarray.Dataset(dv, coords=coords, attrs=attrs)`` for variables given as (dims, values[,
    attrs]) tuples, built without xarray's merge and alignment (which cost ~2 ms a call, more than
    a small simulation): every variable is made once, dimension coordinates get their index
    directly. Same result as the constructor (tests/test_costs.py compares them); if this xarray
    does not offer the direct path, the constructor is used."""
    import xarray as xr

    try:
        return _direct(xr, dv, coords, attrs)
    except (AttributeError, TypeError, ImportError):  # an xarray without Dataset._construct_direct
        return xr.Dataset(dv, coords=coords, attrs=attrs)


def _direct(xr, dv, coords, attrs):
    import pandas as pd
    from xarray.core.indexes import PandasIndex

    variables, indexes, dims = {}, {}, {}
    for k, t in coords.items():
        d, vals = t[0], np.asarray(t[1])
        at = dict(t[2]) if len(t) > 2 else {}
        if k == d:  # a dimension coordinate: it gets a pandas index, as the constructor gives it
            idx = PandasIndex(pd.Index(vals), d, coord_dtype=vals.dtype)
            indexes[k] = idx
            v = idx.create_variables()[k]
            v.attrs.update(at)
        else:
            v = _variable(xr, d, vals, at)
        variables[k] = v
    for k, (d, vals, at) in dv.items():
        variables[k] = _variable(xr, d, vals, at)
    for k, v in variables.items():
        for name, size in zip(v.dims, v.shape):
            if dims.setdefault(name, size) != size:
                raise ValueError(f"internal error: variable {k!r} has {name}={size}, another has {dims[name]}")
    return xr.Dataset._construct_direct(variables, set(coords), dims, dict(attrs), indexes)


def _variable(xr, dims, vals, attrs):
    a = np.asarray(vals)
    if a.dtype.kind not in "biufU":  # anything else goes through xarray's own conversion
        return xr.Variable(dims, vals, dict(attrs))
    return xr.Variable((dims,) if isinstance(dims, str) else dims, a, dict(attrs), fastpath=True)
