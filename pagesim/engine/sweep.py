"""sweep(): run simulate() over every combination of some axes; one Dataset with those dimensions."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # xarray is imported when a Dataset is built: it is most of pagesim's import time
    import xarray as xr

import itertools
import json
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait

import numpy as np

from ..core.check import check_bool, check_int, usable_cores
from ..core.progress import bar as progress_bar
from ..core.units import parse_size
from ..model.machines import Machine
from ..sources.workloads import Workload
from .simulate import simulate
from .xrdata import concat_runs


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
        return usable_cores()
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

    The result's attrs are those every run shares; an attr whose value differs between runs (a
    virtualised machine's ``host``, a derived machine's ``machine_changes``, a workload's
    parameters) is kept run by run in ``attrs["run_attrs"]``: a JSON list, one entry per run with
    its labels (``"run"``) and its values of those attrs.

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
    out = concat_runs(parts, xr)
    out = out.assign_coords(xr.Coordinates.from_pandas_multiindex(index, "run")).unstack("run")
    # unstack sorts each axis' labels: put them back in the order given, so that isel(axis=i)
    # is the i-th value passed
    out = out.isel({k: out.indexes[k].get_indexer(pd.Index(labels[k], tupleize_cols=False)) for k in names})
    out.attrs["sweep_axes"] = str(labels)
    differ = _differing_attrs(parts)
    if differ:
        # what one run's attrs say and the others' do not (a machine's host, its changes): kept run by run
        out.attrs["run_attrs"] = json.dumps(
            [{"run": {k: labels[k][i] for k, i in zip(names, c)}, **{a: ds.attrs.get(a) for a in differ}} for c, ds in zip(combos, parts)], default=str
        )
    return out


def _differing_attrs(parts: list) -> list:
    """The attrs whose value is not the same in every run (missing in some counts as differing)."""
    keys = sorted({k for ds in parts for k in ds.attrs})
    return [k for k in keys if len({json.dumps(ds.attrs.get(k), default=str, sort_keys=True) for ds in parts}) > 1]
