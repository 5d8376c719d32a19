"""sweep(): run simulate() over every combination of some axes; one Dataset with those dimensions."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # xarray is imported when a Dataset is built: it is most of pagesim's import time
    import xarray as xr

import itertools
import os
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait

import numpy as np

from ..core.check import check_bool, check_int
from ..core.progress import bar as progress_bar
from ..core.units import parse_size
from ..model.machines import Machine
from ..sources.workloads import Workload
from .simulate import simulate


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
    variables with the run's dimensions where they differ. Built in numpy (``_concat_arrays``)
    when the runs are what simulate() makes, else by xarray (``_concat_xarray``): the same Dataset."""
    aux = _aux_coords(parts)
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


def _concat_xarray(parts: list, aux: dict, xr):
    """``_concat`` by xarray: the runs concatenated by ``_concat_grouped``, then the coordinates
    in ``aux`` put back where every run agrees."""
    out = _concat_grouped(parts, aux, xr)
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


def _point(kw: dict, names: list):
    """One point of a sweep: simulate() with its keywords, the swept page size's clash renamed.
    Module-level (and importable) so that a Dask worker can run it. xarray, which simulate()
    imports when it builds its result, is imported first: a worker's other threads may be building
    kernels, and an import taking place beside that (numpy.ma parses signatures as it loads) is
    what can make two threads convert syntax trees at once (numba's compiler parses each kernel's
    source, and CPython 3.11 cannot convert two syntax trees at once in one process)."""
    import xarray  # noqa: F401

    kw = dict(kw)
    machine = kw.pop("machine")
    ds = simulate(machine, **kw)
    clash = [k for k in names if k in ds.dims]
    if clash:
        # sweeping page_size: the counters' own page-size dimension becomes mapped_page_size
        ds = ds.rename({k: f"mapped_{k}" for k in clash})
        if "page" in ds.coords:
            ds = ds.rename({"page": "mapped_page"})
    return ds


def check_workers(workers) -> int:
    """The number of threads a sweep runs points in: ``workers`` checked (1..1024), or with None one
    per core this process may use."""
    if workers is None:
        try:
            return max(1, len(os.sched_getaffinity(0)))
        except AttributeError:  # not on Linux
            return max(1, os.cpu_count() or 1)
    return check_int("workers", workers, 1, 1024, " (threads running points at once; None: one per core)")


def _run_threads(kws: list, names: list, workers: int, bar) -> list:
    """Every point in ``workers`` threads; results in the order of ``kws``. The kernels release the
    GIL (nogil), so points overlap. If points fail, the error raised is that of the first failing
    point in sweep order, as a serial sweep would raise (points start in order, so every earlier
    point has started and is waited for)."""
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="pagesim-sweep") as ex:
        futures = [ex.submit(_point, kw, names) for kw in kws]
        pending = set(futures)
        while pending:
            done, pending = wait(pending, return_when=FIRST_EXCEPTION)
            if bar is not None:
                bar.update(len(done))
            if any(f.exception() is not None for f in done):
                for f in pending:
                    f.cancel()
                wait(pending)
                break
    failed = [f for f in futures if f.done() and not f.cancelled() and f.exception() is not None]
    if failed:
        raise failed[0].exception()
    return [f.result() for f in futures]


def _run_dask(kws: list, names: list, client, bar) -> list:
    """Every point as one task on a Dask cluster (``client``: a distributed.Client or a scheduler
    address); results gathered in the order of ``kws``."""
    try:
        from distributed import Client, as_completed  # deferred: dask is optional (the dask extra)
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("sweep(client=...) needs dask.distributed: pip install 'pagesim[dask]'") from e
    own = None
    if isinstance(client, str):
        own = client = Client(client)
    elif not isinstance(client, Client):
        raise TypeError(f"client must be a dask.distributed.Client or a scheduler address such as 'tcp://host:8786', got {type(client).__name__} {client!r}")
    try:
        futures = client.map(_point, kws, names=names, pure=False)
        try:
            for f in as_completed(futures):
                if f.status == "error":
                    break
                if bar is not None:
                    bar.update(1)
            return client.gather(futures)  # raises the error of the first failed point in sweep order
        finally:
            client.cancel(futures)
    finally:
        if own is not None:
            own.close()


def sweep(axes: dict, progress: bool = True, *, workers: int | None = 1, client=None, **fixed) -> xr.Dataset:
    """``axes`` maps a simulate() keyword (``machine``, ``page_size``, ``workload``, ``working_set``,
    ``seed``, any workload parameter...) to the values to try; ``fixed`` holds the rest.
    Each axis becomes a dimension named after it. When ``page_size`` is an axis, the counters' own
    page-size dimension is renamed ``mapped_page_size`` (every region then uses the swept size).

    workers: how many points run at once, in threads of this process (the kernels release the
        GIL); None: one per core. The result is identical whatever the number. The default is 1
        because every point in flight holds its own kernel state and chunk of addresses (memory
        grows with ``workers``), and a machine shared with other work (Binder, CI) should not be
        taken over unasked.
    client: a ``dask.distributed.Client``, or a scheduler address such as ``'tcp://host:8786'``:
        each point runs as one task on that cluster and the results are gathered into the same
        Dataset a serial sweep gives. Every worker needs pagesim (same version) installed.

    >>> ds = sweep({"machine": ["skylake", "opteron-k8"], "page_size": ["4K", "2M"]},
    ...            workload="random", working_set="64M", accesses=10**5, progress=False)
    >>> ds["walks"].sum(["side", "mapped_page_size"]).shape
    (2, 2)
    """
    if not isinstance(axes, dict) or not axes:
        raise ValueError("axes must be a non-empty dict such as {'page_size': ['4K', '2M']}")
    import xarray as xr  # deferred: xarray is slow to import; only Datasets need it

    for k, vals in axes.items():
        if k in fixed:
            raise ValueError(f"{k!r} is both a sweep axis and a fixed argument")
        if isinstance(vals, (str, bytes)) or not hasattr(vals, "__iter__"):
            raise ValueError(f"axis {k!r} needs a list of values, got {vals!r}")
    if "machine" not in axes and "machine" not in fixed:
        raise ValueError("sweep needs machine=, either fixed (machine='skylake') or as an axis")
    check_bool("progress", progress)
    nworkers = check_workers(workers)
    if client is not None and workers not in (1, None):
        raise ValueError(f"give workers={workers!r} or client=, not both: with a client the cluster's workers run the points")
    names = list(axes)
    values = [list(axes[k]) for k in names]
    for k, vals in zip(names, values):
        if not vals:
            raise ValueError(f"axis {k!r} is empty: give at least one value, e.g. {{{k!r}: [...]}}")
    labels = {k: _labels(k, vals) for k, vals in zip(names, values)}
    combos = list(itertools.product(*[range(len(v)) for v in values]))
    kws = []
    for combo in combos:
        kw = dict(fixed)
        kw.update({k: values[a][i] for a, (k, i) in enumerate(zip(names, combo))})
        kws.append(kw)
    bar = None
    if progress:
        bar = progress_bar(total=len(combos), desc="sweep", unit="run")
    try:
        if client is not None:
            parts = _run_dask(kws, names, client, bar)
        elif nworkers > 1 and len(kws) > 1:
            parts = _run_threads(kws, names, nworkers, bar)
        else:
            parts = []
            for kw in kws:
                parts.append(_point(kw, names))
                if bar is not None:
                    bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    import pandas as pd  # deferred: pandas is slow to import; only tables need it

    index = pd.MultiIndex.from_tuples([tuple(labels[k][i] for k, i in zip(names, c)) for c in combos], names=names)
    out = _concat(parts, xr)
    out = out.assign_coords(xr.Coordinates.from_pandas_multiindex(index, "run")).unstack("run")
    # unstack sorts each axis' labels: put them back in the order given, so that isel(axis=i)
    # is the i-th value passed
    out = out.isel({k: out.indexes[k].get_indexer(pd.Index(labels[k], tupleize_cols=False)) for k in names})
    out.attrs["sweep_axes"] = str(labels)
    return out
