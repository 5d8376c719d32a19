"""pagesim's Datasets, built fast: xarray's public constructor and ``xr.concat``, or, on an xarray
where this process has checked that they give the same result, direct paths through xarray's
internal structures.

Why: the public constructor merges and aligns (about 2.4 ms a Dataset, more than a small
simulation), and ``xr.concat`` with an outer join reindexes run by run (about 1 ms a run, the GIL
held). pagesim's Datasets are simple (numpy data, a pandas index on each dimension coordinate),
so they can be put together directly, ~20x faster.

What is private to xarray, and used only here: ``Dataset._construct_direct``; the slots of a
``Variable`` (``_data``, ``_dims``, ``_attrs``, ``_encoding``) and ``fastpath=True``; a Dataset's
``_variables``, ``_indexes``, ``_coord_names`` and ``_encoding``; ``xarray.core.dtypes`` (fill
values and promotion), ``merge_attrs`` and ``get_indexer_nd``. They are used only after
:func:`verified` says so: the first time a Dataset is built (or runs are concatenated) in a process,
small Datasets shaped like pagesim's are made both ways and compared (identical, with the same
variable, coordinate, dimension and attribute order, dtypes and index types). Any difference, or
any error, and the process keeps to the public paths, which give the same Datasets more slowly
(with a one-line warning).
So a new xarray release can make pagesim slower, never wrong. ``PAGESIM_XARRAY=public`` in the
environment keeps to the public paths from the start.
"""

from __future__ import annotations

import copy
import os
import threading
import warnings

import numpy as np

_VERIFIED: dict = {}
_VERIFY_LOCK = threading.Lock()


def verified(kind: str) -> bool:
    """Whether this process builds Datasets (``kind`` "dataset") or concatenates runs ("concat")
    by the direct paths: decided once per process, by building small Datasets shaped like
    pagesim's both ways and comparing them (``_probe_dataset``, ``_probe_concat``)."""
    hit = _VERIFIED.get(kind)
    if hit is None:
        with _VERIFY_LOCK:
            hit = _VERIFIED.get(kind)
            if hit is None:
                hit = _VERIFIED[kind] = _probe(kind)
    return hit


def _probe(kind: str) -> bool:
    if os.environ.get("PAGESIM_XARRAY", "").strip().lower() == "public":
        return False
    import xarray as xr  # deferred: xarray is slow to import; only Datasets need it

    try:
        ok = bool(_probe_dataset(xr) if kind == "dataset" else _probe_concat(xr))
    except Exception:  # noqa: BLE001 - any error in a direct path: the public paths are used
        ok = False
    if not ok:
        what = "Datasets" if kind == "dataset" else "a sweep's runs"
        warnings.warn(
            f"pagesim: xarray {xr.__version__} differs from what pagesim's fast path for {what} expects: "
            "the public xarray functions are used instead (same results, slower)",
            stacklevel=3,
        )
    return ok


def same(got, want) -> bool:
    """Identical Datasets, with the same variable, coordinate, dimension and attribute order,
    the same dtype, dimensions and attributes (in order) of every variable, and indexes of the same
    type over equal pandas indexes of the same dtype."""
    if not got.identical(want) or type(got) is not type(want):
        return False
    if [list(got.variables), list(got.coords), list(got.dims), list(got.attrs.items())] != [
        list(want.variables),
        list(want.coords),
        list(want.dims),
        list(want.attrs.items()),
    ]:
        return False
    for k, v in want.variables.items():
        g = got.variables[k]
        if (type(g), g.dims, g.dtype, list(g.attrs.items())) != (type(v), v.dims, v.dtype, list(v.attrs.items())):
            return False
    if list(got.xindexes) != list(want.xindexes):
        return False
    for k, ix in want.xindexes.items():
        g = got.xindexes[k]
        if type(g) is not type(ix) or not g.index.equals(ix.index) or g.index.dtype != ix.index.dtype:
            return False
    return True


def _probe_parts():
    """Variables and coordinates as pagesim's Datasets have them: int64 counters over two
    dimensions, a float per page size, a string variable, dimension coordinates of int and str,
    a coordinate without an index, scalars, attributes and none."""
    sizes = np.array([4096, 2097152], dtype=np.int64)
    structs = np.array(["L1 dTLB", "L2 TLB", "walk"])
    dv = {
        "misses": (("page_size", "structure"), np.arange(6, dtype=np.int64).reshape(2, 3), {"units": "misses"}),
        "cycles": (("page_size",), np.array([1.5, 0.25]), {}),
        "kind": ("structure", np.array(["tlb", "tlb", "walker"]), None),
        "total": ((), np.int64(7), {"units": "accesses"}),
    }
    coords = {
        "page_size": ("page_size", sizes, {"units": "bytes"}),
        "structure": ("structure", structs, None),
        "entries": ("structure", np.array([64, 1536, 0], dtype=np.int64), {"units": "entries"}),
    }
    return dv, coords, {"machine": "probe", "seed": 0}


def _probe_dataset(xr) -> bool:
    dv, coords, attrs = _probe_parts()
    want = xr.Dataset(dv, coords=coords, attrs=attrs)
    if not same(_direct(xr, dv, coords, attrs), want):
        return False
    steps = [
        ("coord", "level", ("level", ["L1", "L2", "memory"])),
        ("var", "lat", (("level",), np.array([4, 12, 200]), {"units": "cycles"})),
        ("var", "cycles", (("page_size",), np.array([3.0, 1.0]), {"note": "replaced in place"})),
        ("drop", "kind"),
        ("var", "share", ((), 0.25, {})),
    ]
    return same(_rebuilt_direct(xr, want, steps, {"mlp": 2.0}), _rebuilt_public(want, steps, {"mlp": 2.0}))


def _probe_concat(xr) -> bool:
    """Four runs: two alike, one with other page sizes and its ``entries`` different, one without
    a variable and with a float where the others have ints."""
    dv, coords, attrs = _probe_parts()
    runs = [xr.Dataset(dv, coords=coords, attrs=attrs) for _ in range(2)]
    other = dict(coords, page_size=("page_size", np.array([4096, 1 << 30], dtype=np.int64), {"units": "bytes"}))
    other["entries"] = ("structure", np.array([64, 2048, 0], dtype=np.int64), {"units": "entries"})
    runs.append(xr.Dataset(dv, coords=other, attrs=dict(attrs, seed=1)))
    fewer = {k: v for k, v in dv.items() if k != "kind"}
    fewer["total"] = ((), 7.5, {"units": "accesses"})
    runs.append(xr.Dataset(fewer, coords=coords, attrs=attrs))
    aux = _aux_coords(runs)
    want = _concat_xarray(runs, aux, xr, grouped=False)
    got = _concat_arrays(runs, aux, xr)
    return got is not None and same(got, want) and same(_concat_xarray(runs, aux, xr, grouped=True), want)


def build_dataset(dv: dict, coords: dict, attrs: dict):
    """``xarray.Dataset(dv, coords=coords, attrs=attrs)`` for variables given as (dims, values[,
    attrs]) tuples. Where :func:`verified`, built without xarray's merge and alignment (which cost
    ~2 ms a call, more than a small simulation): every variable is made once, dimension coordinates
    get their index directly. Same result as the constructor (tests/model/test_costs.py compares
    them)."""
    import xarray as xr  # deferred: xarray is slow to import; only Datasets need it

    if verified("dataset"):
        try:
            return _direct(xr, dv, coords, attrs)
        except (AttributeError, TypeError, ImportError):  # a direct path this xarray lacks for these variables
            pass
    return xr.Dataset(dv, coords=coords, attrs=attrs)


def _direct(xr, dv, coords, attrs, order=None):
    """``order``: the names of every variable, coordinates and data variables mixed, in the order
    the Dataset keeps them (default: the data variables, then the coordinates, as the constructor
    keeps them)."""
    variables, indexes, dims = {}, {}, {}
    make = _variable_maker(xr)
    shapes = []  # (name, dims, shape) of every variable, to check their sizes agree
    for k, t in coords.items():
        d, vals = t[0], np.asarray(t[1])
        at = t[2] if len(t) > 2 else None
        shapes.append((k, (d,) if isinstance(d, str) else tuple(d), vals.shape))
        if k == d or (type(d) is tuple and d == (k,)):  # a dimension coordinate: it gets a pandas index, as the constructor gives it
            idx, v = _dimension_index(k, vals)
            indexes[k] = idx
            if make is _variable:
                v = v.copy(deep=False)
                v.attrs = dict(at or {})
            else:  # what copy(deep=False) gives: the same (immutable) index adapter, its own attrs
                v = _shell(type(v), v._dims, v._data, dict(at) if at else None, copy.copy(v._encoding))
        else:
            v = make(xr, d, vals, at)
        variables[k] = v
    for k, (d, vals, at) in dv.items():
        variables[k] = v = make(xr, d, vals, at)
        shapes.append((k, v._dims, v._data.shape))
    for k, d, shape in shapes:
        if len(d) != len(shape):
            raise ValueError(f"internal error: variable {k!r} has dims {d} but shape {shape}")
        for name, size in zip(d, shape):
            if dims.setdefault(name, size) != size:
                raise ValueError(f"internal error: variable {k!r} has {name}={size}, another has {dims[name]}")
    if order is None:
        order = list(dv) + [k for k in coords if k not in dv]
    if sorted(order) != sorted(variables):
        raise ValueError(f"internal error: order {list(order)} names other variables than {list(variables)}")
    variables = {k: variables[k] for k in order}
    dims = {d: dims[d] for d in _dims_in_order(variables)}
    return xr.Dataset._construct_direct(variables, set(coords), dims, dict(attrs), indexes)


def _dims_in_order(variables):
    seen = {}
    for v in variables.values():
        for d in v._dims:
            seen.setdefault(d, None)
    return list(seen)


def rebuilt(ds, steps, attrs_update=None):
    """``ds`` after ``steps``, built once, as xarray builds it step by step: ("drop", name) as
    ``ds.drop_vars(name)``; ("var", name, (dims, values[, attrs])) as ``ds[name] = ...``;
    ("coord", name, (dims, values[, attrs])) as ``ds.assign_coords({name: ...})`` for a new name
    (drop an existing coordinate first). A variable already there keeps its place, a new one goes
    last; then ``ds.attrs.update(attrs_update)``. For a
    Dataset pagesim has just built (numpy data, a pandas index on each dimension coordinate and
    nothing else): the step-by-step way merges and aligns at every step, ~2 ms each; on an xarray
    not :func:`verified`, it is done step by step. The steps are checked first, for both ways."""
    names, coord_names = set(ds.variables), set(ds.coords)
    for step in steps:
        op, name = step[0], step[1]
        if op == "drop":
            names.discard(name)
            coord_names.discard(name)
        elif op in ("var", "coord"):
            if op == "coord" and name in names:  # xarray moves a replaced index: not modelled here
                raise ValueError(f"internal error: coordinate {name!r} exists; drop it first")
            if op == "var" and name in coord_names:
                raise ValueError(f"internal error: {name!r} is a coordinate; set it with 'coord'")
            names.add(name)
            if op == "coord":
                coord_names.add(name)
        else:
            raise ValueError(f"internal error: unknown step {op!r}")
    import xarray as xr  # deferred: xarray is slow to import; only Datasets need it

    if verified("dataset"):
        try:
            return _rebuilt_direct(xr, ds, steps, attrs_update)
        except (AttributeError, TypeError, ImportError):  # a direct path this xarray lacks for these variables
            pass
    return _rebuilt_public(ds, steps, attrs_update)


def _rebuilt_direct(xr, ds, steps, attrs_update):
    items = {}
    coord_names = set(ds.coords)
    for k, v in ds.variables.items():
        items[k] = (v.dims, v.values, dict(v.attrs))
    for step in steps:
        op, name = step[0], step[1]
        if op == "drop":
            del items[name]
            coord_names.discard(name)
        else:
            items[name] = step[2]
            if op == "coord":
                coord_names.add(name)
    attrs = dict(ds.attrs)
    attrs.update(attrs_update or {})
    coords = {k: t for k, t in items.items() if k in coord_names}
    dv = {k: t for k, t in items.items() if k not in coord_names}
    return _direct(xr, dv, coords, attrs, order=list(items))


def _rebuilt_public(ds, steps, attrs_update):
    out = ds.copy()
    for step in steps:
        if step[0] == "drop":
            out = out.drop_vars(step[1])
        elif step[0] == "var":
            out[step[1]] = step[2]
        else:
            out = out.assign_coords({step[1]: step[2]})
    out.attrs.update(attrs_update or {})
    return out


_SLOTS = {"_attrs", "_data", "_dims", "_encoding"}
_MAKER: list = []


def _variable_maker(xr):
    """``_variable_shell`` when this xarray's Variable is what it is known to be (its slots, across
    its classes, are exactly _attrs, _data, _dims and _encoding, and no instance dict) and a shell
    equals what the constructor makes; else ``_variable`` (the constructor). Decided once."""
    if not _MAKER:
        ok = False
        try:
            slots, has_dict = set(), False
            for cls in xr.IndexVariable.__mro__[:-1]:  # every class but object
                sl = cls.__dict__.get("__slots__")
                if sl is None:
                    has_dict = True
                slots |= {sl} if isinstance(sl, str) else set(sl or ())
            if slots == _SLOTS and not has_dict:
                a = np.arange(6, dtype=np.int64).reshape(2, 3)
                want = _variable(xr, ("x", "y"), a, {"units": "u"})
                got = _variable_shell(xr, ("x", "y"), a, {"units": "u"})
                ok = all(getattr(want, n) is getattr(got, n) or getattr(want, n) == getattr(got, n) for n in ("_data", "_dims", "_attrs", "_encoding"))
                ok = ok and type(got) is type(want) and _variable(xr, (), np.asarray(1.5), None)._attrs is _variable_shell(xr, (), 1.5, None)._attrs
        except Exception:  # noqa: BLE001 - any surprise: use the constructor
            ok = False
        _MAKER.append(_variable_shell if ok else _variable)
    return _MAKER[0]


def _shell(cls, dims, data, attrs, encoding):
    v = object.__new__(cls)
    object.__setattr__(v, "_data", data)
    object.__setattr__(v, "_dims", dims)
    object.__setattr__(v, "_attrs", attrs)
    object.__setattr__(v, "_encoding", encoding)
    return v


def _variable_shell(xr, dims, vals, attrs):
    """``_variable`` without the constructor's argument handling (a quarter of the time): the
    numpy array and dims set as the constructor's fast path sets them (empty attrs are None)."""
    a = np.asarray(vals)
    dims = (dims,) if isinstance(dims, str) else tuple(dims)
    if a.dtype.kind not in "biufU" or len(dims) != a.ndim or len(set(dims)) != len(dims):
        return _variable(xr, dims, vals, attrs)  # the constructor converts, or raises or warns
    return _shell(xr.Variable, dims, a, dict(attrs) if attrs else None, None)


_INDEXES: dict = {}
_INDEXES_MAX = 512


def _dimension_index(name: str, vals: np.ndarray):
    """The xarray PandasIndex of dimension coordinate ``name`` with values ``vals``, and its
    variable, as the Dataset constructor makes them. Kept for up to 512 short (name, values): making
    a pandas Index costs 15-40 us and a call needs five or six, mostly the same ones (page sizes,
    sides, structures, components). Sharing is safe: a pandas Index is immutable (its values are
    read-only), and each Dataset gets a shallow copy of the variable with its own attrs."""
    key = (name, vals.dtype.str, vals.shape, vals.tobytes()) if vals.size <= 64 else None  # long ones (a trace's regions) are not kept
    hit = _INDEXES.get(key)
    if hit is None:
        import pandas as pd  # deferred: pandas is slow to import; only tables need it
        from xarray.indexes import PandasIndex  # deferred: xarray is slow to import; only Datasets need it

        idx = PandasIndex(pd.Index(vals), name, coord_dtype=vals.dtype)
        hit = (idx, idx.create_variables()[name])
        if key is not None:
            if len(_INDEXES) >= _INDEXES_MAX:
                _INDEXES.clear()
            _INDEXES[key] = hit
    return hit


def _variable(xr, dims, vals, attrs):
    a = np.asarray(vals)
    if a.dtype.kind not in "biufU":  # anything else goes through xarray's own conversion
        return xr.Variable(dims, vals, dict(attrs or {}))
    return xr.Variable((dims,) if isinstance(dims, str) else dims, a, dict(attrs or {}), fastpath=True)


def concat_runs(parts: list, xr):
    """Concatenate runs along "run". Coordinates that describe a machine's own structures or page
    sizes (``page``, a structure's ``level``, ``entries``...) can differ between runs of different
    machines: they are set aside, and put back as coordinates where every run agrees, or kept as
    variables with the run's dimensions where they differ. Where :func:`verified`, built in numpy
    (``_concat_arrays``) when the runs are what simulate() makes, else by xarray grouped
    (``_concat_xarray``); elsewhere by one public ``xr.concat``: the same Dataset."""
    aux = _aux_coords(parts)
    if not verified("concat"):
        return _concat_xarray(parts, aux, xr, grouped=False)
    out = _concat_arrays(parts, aux, xr)
    if out is None:
        out = _concat_xarray(parts, aux, xr)
    return out


def _aux_coords(parts: list) -> dict:
    """The runs' one-dimensional coordinates without an index (name: dimension), in order of first appearance."""
    aux = {}
    for ds in parts:
        for name, c in ds.coords.variables.items():
            if name not in ds.xindexes and c.ndim == 1:
                aux.setdefault(name, c.dims[0])
    return aux


def _concat_xarray(parts: list, aux: dict, xr, grouped: bool = True):
    """``concat_runs`` by xarray: the runs concatenated by ``_concat_grouped`` (or, not
    ``grouped``, by one public ``xr.concat``), then the coordinates in ``aux`` put back where every
    run agrees."""
    if grouped:
        out = _concat_grouped(parts, aux, xr)
    else:
        out = xr.concat([ds.reset_coords([c for c in aux if c in ds.coords]) for ds in parts], **_CONCAT, combine_attrs="drop_conflicts")
    for name, dim in aux.items():
        values = {}
        agree = True
        for ds in parts:
            if name not in ds.variables:
                continue
            for key, v in zip(ds.variables[dim].values.tolist(), ds.variables[name].values.tolist()):
                if values.setdefault(key, v) != v:
                    agree = False
        if agree:
            attrs = next(ds.variables[name].attrs for ds in parts if name in ds.variables)
            out = out.drop_vars(name).assign_coords({name: (dim, [values.get(k) for k in out[dim].values.tolist()], attrs)})
    return out


_PROMOTED: dict = {}


def _promoted(xdt, dtypes: tuple, fill: bool):
    """The dtype xarray gives: concatenating arrays of ``dtypes`` (``duck_array_ops.concatenate``),
    then, with ``fill``, filling missing values (``where`` with the fill value of that dtype).
    Asked of xarray's own rules once per combination."""
    key = (dtypes, fill)
    hit = _PROMOTED.get(key)
    if hit is None:
        d = xdt.result_type(*[np.zeros(1, dtype=t) for t in dtypes]) if len(set(dtypes)) > 1 else dtypes[0]
        d = np.dtype(d)
        if fill:
            d = np.dtype(xdt.result_type(np.zeros(1, dtype=d), _fill(xdt, d)))
        hit = _PROMOTED[key] = d
    return hit


_FILLS: dict = {}


def _fill(xdt, dtype):
    """xarray's fill value for missing values of ``dtype`` (dtypes.get_fill_value), once per dtype."""
    hit = _FILLS.get(dtype, _FILLS)
    if hit is _FILLS:
        hit = _FILLS[dtype] = xdt.get_fill_value(dtype)
    return hit


def _unique_dicts(dicts):
    """``dicts`` without those equal to the one before: merge_attrs with drop_conflicts gives the
    same result for them (a repeat neither adds a key nor conflicts)."""
    out = []
    for d in dicts:
        if out:
            last = out[-1]
            try:
                if d is last or d == last:
                    continue
            except Exception:  # noqa: BLE001 - values that cannot be compared: keep the dict
                pass
        out.append(d)
    return out


def _concat_arrays(parts: list, aux: dict, xr):
    """``_concat_xarray``'s Dataset, built in numpy: xr.concat's outer join (the union of each
    dimension's labels by xarray's own index join, each run's values placed by pandas'
    get_indexer, missing ones filled as xarray fills them) and its dtype rules (asked of
    xarray: ``_promoted``), applied to each group of runs with one signature at once, and one
    Dataset built at the end. xarray spent ~1 ms a run reindexing variable by variable with the
    GIL held, after every point had run (it capped ``workers=2``); this is ~10x less.
    None (the caller then uses xarray) when a run holds anything this does not model: an index
    other than a pandas index on its own dimension, a dimension without one, a non-index
    coordinate not in ``aux``, data other than numpy int, float or str, encodings, a name
    "run", a name that is an index in one run and a variable in another, or a variable with
    different dimensions in different runs."""
    try:
        from xarray.core import dtypes as xdt  # deferred: xarray is slow to import; only Datasets need it
        from xarray.core.indexes import PandasIndex, get_indexer_nd  # deferred: xarray is slow to import; only Datasets need it

        try:
            from xarray.structure.merge import merge_attrs  # deferred: xarray is slow to import; only Datasets need it
        except ImportError:  # xarray before 2025.x
            from xarray.core.merge import merge_attrs  # deferred: xarray is slow to import; only Datasets need it
    except ImportError:
        return None
    groups: dict = {}
    for i, ds in enumerate(parts):
        groups.setdefault(_signature(ds), []).append(i)
    members = list(groups.values())
    reps = [parts[g[0]] for g in members]
    index_names: dict = {}  # in order of first appearance
    var_dims: dict = {}  # every other variable (aux coordinates included): its dimensions
    for ds in reps:
        if ds._encoding or "run" in ds._variables or "run" in ds.dims:
            return None
        for k, v in ds._variables.items():
            if v._encoding:
                return None
            idx = ds._indexes.get(k)
            if idx is not None:
                if type(idx) is not PandasIndex or v.dims != (k,) or idx.dim != k:
                    return None
                index_names.setdefault(k)
            elif (k in ds._coord_names and k not in aux) or var_dims.setdefault(k, v.dims) != v.dims:
                return None
        if any(d not in ds._indexes for d in ds.dims):
            return None
    if any(k in var_dims for k in index_names):
        return None
    # the union of each dimension's labels, as xr.align(join="outer") makes it
    joined = {}
    for name in index_names:
        idxs = [ds._indexes[name] for ds in reps if name in ds._indexes]
        first = idxs[0]
        if all(o is first or first.equals(o) for o in idxs[1:]):
            joined[name] = (first, False)
        else:
            j = idxs[0]
            for o in idxs[1:]:
                j = j.join(o, how="outer")
            joined[name] = (j, True)
    blocks: list[dict] = []  # per group: variable -> (run, ...) array, reindexed to the union
    raw: list[dict] = []  # per group: aux variable -> its runs' values as they were
    indexers: dict = {}  # (dimension, a run's labels) -> where the union's labels are in them
    for sig, g, ds in zip(groups, members, reps):
        take, mask = {}, {}
        for d, labels in sig[2]:
            j, reindexed = joined[d]
            if not reindexed:
                continue
            ix = indexers.get((d, labels))
            if ix is None:
                ix = indexers[(d, labels)] = get_indexer_nd(ds._indexes[d].index, j.index)
            if (ix < 0).any():
                mask[d] = ix
            elif not np.array_equal(ix, np.arange(ds.sizes[d])):
                take[d] = ix
        got, got_raw = {}, {}
        for k, dims in var_dims.items():
            if k not in ds._variables:
                continue
            arrs = [parts[i]._variables[k]._data for i in g]  # one signature: one dtype and shape
            if arrs[0].dtype.kind not in "iufU" or arrs[0].size == 0 or not all(type(a) is np.ndarray for a in arrs):
                return None  # (xarray fills an empty variable's reindexed shape with a float NaN whatever its dtype)
            a = np.stack(arrs)
            if k in aux:
                got_raw[k] = a
            if any(d in mask for d in dims):
                # xarray's _getitem_with_mask: every reindexed axis taken, the result promoted to
                # hold the fill value, positions of labels the run lacks set to it
                fill = _fill(xdt, a.dtype)
                for ax, d in enumerate(dims, 1):
                    ix = mask.get(d, take.get(d))
                    if ix is not None:
                        a = np.take(a, np.where(ix < 0, 0, ix), axis=ax)
                a = a.astype(_promoted(xdt, (a.dtype,), True))
                for ax, d in enumerate(dims, 1):
                    if d in mask:
                        sel = [slice(None)] * a.ndim
                        sel[ax] = mask[d] < 0
                        a[tuple(sel)] = fill
            else:
                for ax, d in enumerate(dims, 1):
                    if d in take:
                        a = np.take(a, take[d], axis=ax)
            got[k] = a
        blocks.append(got)
        raw.append(got_raw)
    n = len(parts)
    rows = [np.array(g, dtype=np.int64) for g in members]
    # aux coordinates every run agrees on go back as coordinates (labels -> value, first seen wins)
    agreed = {}
    for name, dim in aux.items():
        values, agree = {}, True
        for gi, ds in enumerate(reps):
            if name not in raw[gi]:
                continue
            keys = ds._variables[dim].values.tolist()
            for row in raw[gi][name].tolist():
                for key, v in zip(keys, row):
                    if values.setdefault(key, v) != v:
                        agree = False
        if agree:
            attrs = next(p._variables[name].attrs for p in parts if name in p._variables)
            agreed[name] = xr.Variable(dim, [values.get(k) for k in joined[dim][0].index.tolist()], attrs)

    def var_attrs(k) -> dict:  # every run's attributes of k, merged as xr.concat merges them
        return merge_attrs(_unique_dicts([parts[i]._variables[k]._attrs or {} for i in range(n) if k in parts[i]._variables]), "drop_conflicts") or {}

    data_vars = {}
    for k, dims in var_dims.items():
        if k in agreed:
            continue
        present = [gi for gi, b in enumerate(blocks) if k in b]
        concat = _promoted(xdt, tuple(blocks[gi][k].dtype for gi in present), False)
        final = _promoted(xdt, (concat,), True) if len(present) < len(blocks) else concat
        shape = blocks[present[0]][k].shape[1:]
        out = np.empty((n, *shape), dtype=final)
        for gi, b in enumerate(blocks):
            if k in b:
                out[rows[gi]] = b[k].astype(concat, copy=False)
            else:
                out[rows[gi]] = _fill(xdt, concat)
        data_vars[k] = xr.Variable(("run", *dims), out, var_attrs(k))
    coords, indexes = {}, {}
    for name in index_names:
        j, reindexed = joined[name]
        var = j.create_variables()[name] if reindexed else next(ds._variables[name] for ds in reps if name in ds._variables).copy(deep=False)
        var.attrs = var_attrs(name)
        coords[name] = var
        indexes[name] = j
    coords.update(agreed)
    attrs = merge_attrs(_unique_dicts([ds.attrs for ds in parts]), "drop_conflicts") or {}
    return xr.Dataset(data_vars, coords=xr.Coordinates(coords, indexes=indexes), attrs=attrs)


_CONCAT = dict(dim="run", join="outer", data_vars="all", coords="minimal", compat="equals")


def _signature(ds) -> tuple:
    """What decides how a run aligns with others: its variables (name, dims, dtype), which are
    coordinates, and its indexes' labels. Runs with one signature need no reindexing among themselves."""
    return (
        tuple([(k, v._dims, v.dtype.str) for k, v in ds._variables.items()]),
        frozenset(ds._coord_names),
        tuple([(k, tuple(ix.index.tolist()) if hasattr(ix, "index") else ix) for k, ix in ds._indexes.items()]),
    )


def _concat_grouped(parts: list, aux: dict, xr):
    """``xr.concat`` of the runs, the coordinates in ``aux`` made data variables first, with
    ``join="outer"``, ``data_vars="all"``, ``coords="minimal"``, ``combine_attrs="drop_conflicts"``:
    the same Dataset, faster. An outer join reindexes every run whose labels differ from the
    union (every run of a sweep over machines or workloads): ~25 ms a run with the GIL held, so a
    200-point sweep spent longer concatenating than simulating. Runs with one signature (same
    machine and layout) are stacked first without reindexing, then the groups are joined (one
    reindex per group) and the runs put back in sweep order. Attributes are combined over all
    runs at once, as a flat concat does (drop_conflicts group by group is not the same)."""
    groups: dict = {}
    for i, ds in enumerate(parts):
        groups.setdefault(_signature(ds), []).append(i)
    if len(groups) == len(parts):
        return xr.concat([ds.reset_coords([c for c in aux if c in ds.coords]) for ds in parts], **_CONCAT, combine_attrs="drop_conflicts")
    out = xr.concat([_stack([parts[i] for i in g], aux, xr) for g in groups.values()], **_CONCAT, combine_attrs="drop_conflicts")
    order = np.array([i for g in groups.values() for i in g], dtype=np.int64)
    if not np.array_equal(order, np.arange(len(parts))):
        out = out.isel(run=np.argsort(order, kind="stable"))
    try:
        from xarray.structure.merge import merge_attrs  # deferred: xarray is slow to import; only Datasets need it
    except ImportError:  # xarray before 2025.x
        from xarray.core.merge import merge_attrs  # deferred: xarray is slow to import; only Datasets need it
    out.attrs = merge_attrs([ds.attrs for ds in parts], "drop_conflicts") or {}
    for k, v in out.variables.items():
        v.attrs = merge_attrs([ds.variables[k].attrs for ds in parts if k in ds.variables], "drop_conflicts") or {}
    return out


def _stack(parts: list, aux: dict, xr):
    """Runs of one signature concatenated along "run" as xr.concat does after ``reset_coords(aux)``
    (data variables stacked with "run" first; indexes and other coordinates, equal in every run,
    kept once), without its per-variable, per-run overhead. Attributes are set by the caller."""
    first = parts[0]
    reset = [k for k in first.coords if k in aux]
    keep = {k: v for k, v in first.coords.variables.items() if k not in reset}
    if len(parts) == 1 or any(not all(p.variables[k].equals(v) for p in parts[1:]) for k, v in keep.items() if k not in first.xindexes):
        return xr.concat([p.reset_coords(reset) for p in parts], **_CONCAT, combine_attrs="drop_conflicts")  # let xarray handle (or refuse) them
    data = {
        k: xr.Variable(("run", *v.dims), np.stack([p.variables[k].values for p in parts]), dict(v.attrs)) for k, v in first.variables.items() if k not in keep
    }
    return xr.Dataset(data, coords=first.coords.to_dataset().drop_vars(reset).coords, attrs=dict(first.attrs))
