"""sweep() on every core and on a Dask cluster: the same Dataset as a
serial sweep, bit for bit, over a sweep whose points differ in machine, page sizes, workload,
seed, OS policy and RAM limit."""

import numpy as np
import pytest
import xarray as xr

import pagesim

AXES = {
    "machine": ["skylake", "power6", "ultrasparc-iii", "itanium2"],
    "workload": [
        pagesim.workload("random", working_set="6M", accesses=4000),
        pagesim.workload("stream", n=1500),
        pagesim.workload("md", atoms=400, atoms_per_cell=2),
        pagesim.workload("pointer_chase", working_set="3M", accesses=3000),
    ],
    "seed": [0, 5],
}
FIXED = dict(progress=False)


@pytest.fixture(scope="module")
def serial():
    return pagesim.sweep(AXES, **FIXED)


@pytest.mark.parametrize("workers", [2, 3])
def test_threads_identical_to_serial(serial, workers):
    got = pagesim.sweep(AXES, workers=workers, **FIXED)
    xr.testing.assert_identical(got, serial)


def test_threads_identical_with_page_size_axis_policy_and_ram():
    axes = {"machine": ["skylake", "zen4"], "page_size": ["2M", "1G"], "ram": [None, pagesim.Ram("96M")]}
    fixed = dict(workload="random", working_set="40M", accesses=3000, policy="thp", progress=False)
    a = pagesim.sweep(axes, **fixed)
    b = pagesim.sweep(axes, workers=2, **fixed)
    xr.testing.assert_identical(a, b)
    assert {"machine", "page_size", "ram"} <= set(b["walks"].dims) and b.sizes["ram"] == 2


def test_workers_none_is_one_per_core(monkeypatch):
    """One per core the process may use: its affinity, no more than its control group's quota."""
    import os

    from pagesim.core import check as C
    from pagesim.engine.sweep import check_workers

    assert 1 <= check_workers(None) <= len(os.sched_getaffinity(0))
    monkeypatch.setattr(C.os, "sched_getaffinity", lambda pid: set(range(8)))
    monkeypatch.setattr(C, "_own_quota", lambda: None)
    assert check_workers(None) == 8
    monkeypatch.setattr(C, "_own_quota", lambda: 2.5)
    assert check_workers(None) == 2


def test_threads_progress_bar_counts_every_point(capsys):
    ds = pagesim.sweep({"seed": [0, 1, 2]}, machine="skylake", workload="random", working_set="1M", accesses=500, workers=2, progress=True)
    assert ds.sizes["seed"] == 3
    err = capsys.readouterr().err
    assert "3/3" in err


def test_threads_raise_the_first_failing_point_as_serial_does():
    # working_set 8 bytes is fine, 1 byte is not: the error is the serial sweep's, from the first bad point
    axes = {"working_set": ["1M", "1", "2"]}
    kw = dict(machine="skylake", workload="random", accesses=100, progress=False)
    with pytest.raises(ValueError) as serial_err:
        pagesim.sweep(axes, **kw)
    with pytest.raises(ValueError) as threaded_err:
        pagesim.sweep(axes, workers=3, **kw)
    assert str(threaded_err.value) == str(serial_err.value)
    assert "working_set" in str(serial_err.value)


@pytest.mark.parametrize(
    "bad,exc,words",
    [(0, ValueError, "workers=0"), (-2, ValueError, "workers=-2"), (1.5, TypeError, "workers must be an int"), (True, TypeError, "workers must be an int")],
)
def test_bad_workers(bad, exc, words):
    with pytest.raises(exc, match=words):
        pagesim.sweep({"seed": [0, 1]}, machine="skylake", workload="random", accesses=10, workers=bad, progress=False)


def test_workers_and_client_together_rejected():
    with pytest.raises(ValueError, match="not both"):
        pagesim.sweep({"seed": [0, 1]}, machine="skylake", workload="random", accesses=10, workers=2, client="tcp://127.0.0.1:1", progress=False)


def test_client_of_the_wrong_type():
    pytest.importorskip("distributed", reason="dask.distributed is not installed (pip install 'pagesim[dask]')")
    with pytest.raises(TypeError, match="client must be a dask.distributed.Client"):
        pagesim.sweep({"seed": [0, 1]}, machine="skylake", workload="random", accesses=10, client=42, progress=False)


@pytest.fixture(scope="module")
def cluster_client():
    distributed = pytest.importorskip("distributed", reason="dask.distributed is not installed (pip install 'pagesim[dask]')")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            yield client


def test_dask_local_cluster_identical_to_serial(serial, cluster_client):
    got = pagesim.sweep(AXES, client=cluster_client, **FIXED)
    xr.testing.assert_identical(got, serial)


def test_dask_scheduler_address_identical_and_errors_as_serial(cluster_client):
    axes = {"machine": ["skylake", "opteron-k8"], "page_size": ["4K", "2M"]}
    fixed = dict(workload="stream", working_set="12M", progress=False)
    xr.testing.assert_identical(pagesim.sweep(axes, client=cluster_client.scheduler.address, **fixed), pagesim.sweep(axes, **fixed))
    kw = dict(machine="skylake", workload="random", accesses=100, progress=False)
    with pytest.raises(ValueError, match="working_set"):
        pagesim.sweep({"working_set": ["1M", "1"]}, client=cluster_client, **kw)


def test_every_kernel_releases_the_gil():
    """Threads overlap only inside nogil kernels: every numba dispatcher pagesim defines, and the
    generated specialised copies, are compiled with nogil=True."""
    import importlib
    import pkgutil

    from numba.core.registry import CPUDispatcher

    import pagesim._kernels as kernels
    from pagesim._kernels import specialize as S
    from pagesim.engine.stages import kernel_inputs as _build
    from pagesim.model.layout import Layout

    found = []
    for m in pkgutil.iter_modules(kernels.__path__):
        mod = importlib.import_module(f"pagesim._kernels.{m.name}")
        found += [(m.name, k, f) for k, f in vars(mod).items() if isinstance(f, CPUDispatcher)]
    mach = pagesim.machine("skylake")
    cfg = _build(mach, Layout.single("64M", "4K"), 0)[0]
    run_chunk = S.kernel(S.chain_shape(cfg, 0))  # a Python wrapper of the generated translate_chunk
    found.append(("specialised", "translate_chunk", run_chunk.__globals__["translate_chunk"]))
    assert len(found) > 20
    assert [(m, k) for m, k, f in found if not f.targetoptions.get("nogil")] == []


def _flat_concat(parts):
    """The reference: one xr.concat over every run (what sweep did before runs were grouped),
    machine-specific coordinates set aside and put back where every run agrees."""
    aux = {}
    for ds in parts:
        for name, c in ds.coords.items():
            if name not in ds.indexes and len(c.dims) == 1:
                aux.setdefault(name, c.dims[0])
    parts = [ds.reset_coords([c for c in aux if c in ds.coords]) for ds in parts]
    out = xr.concat(parts, dim="run", join="outer", data_vars="all", coords="minimal", compat="equals", combine_attrs="drop_conflicts")
    for name, dim in aux.items():
        values, agree = {}, True
        for ds in parts:
            if name in ds:
                for key, v in zip(ds[dim].values.tolist(), ds[name].values.tolist()):
                    agree &= values.setdefault(key, v) == v
        if agree:
            attrs = next(ds[name].attrs for ds in parts if name in ds)
            out = out.drop_vars(name).assign_coords({name: (dim, [values.get(k) for k in out[dim].values.tolist()], attrs)})
    return out


@pytest.mark.parametrize(
    "axes",
    [
        # seed first: runs of one machine and workload are interleaved with others, so grouping reorders
        {"seed": [0, 3], "machine": ["skylake", "power6", "ultrasparc-iii"], "workload": [AXES["workload"][0], AXES["workload"][2]]},
        {"machine": ["skylake", "zen4"], "page_size": ["4K", "2M"], "ram": [None, pagesim.Ram("96M")]},
        {"seed": [0, 1, 2]},  # one signature: a single group
        {"machine": ["skylake", "power6", "zen4"]},  # no two runs alike: no groups
    ],
)
def test_grouped_concat_is_one_flat_concat(axes):
    """sweep concatenates runs of one machine and layout first, then the groups: the same Dataset
    (values, dtypes, attributes, variable order) as one xr.concat over every run."""
    import itertools

    from pagesim.engine.sweep import _point
    from pagesim.engine.xrdata import concat_runs as _concat

    fixed = dict(machine="skylake", workload="random", working_set="40M", accesses=2000)
    fixed = {k: v for k, v in fixed.items() if k not in axes and not ("workload" in axes and k in ("working_set", "accesses"))}
    names = list(axes)
    parts = [_point({**fixed, **dict(zip(names, combo))}, names) for combo in itertools.product(*axes.values())]
    got, want = _concat(parts, xr), _flat_concat(parts)
    xr.testing.assert_identical(got, want)
    assert list(got.variables) == list(want.variables)
    assert list(got.attrs) == list(want.attrs)
    for k, v in want.variables.items():
        assert got[k].dtype == v.dtype and list(got[k].attrs.items()) == list(v.attrs.items()), k


def _assert_same_dataset(got, want):
    """assert_identical, and the same variable, coordinate, dimension and attribute order, dtypes,
    dimensions of every variable, and indexes of the same pandas dtype."""
    xr.testing.assert_identical(got, want)
    assert list(got.variables) == list(want.variables)
    assert list(got.coords) == list(want.coords)
    assert list(got.dims) == list(want.dims)
    assert list(got.attrs.items()) == list(want.attrs.items())
    for k, v in want.variables.items():
        g = got.variables[k]
        assert (type(g), g.dims, g.dtype, list(g.attrs.items())) == (type(v), v.dims, v.dtype, list(v.attrs.items())), k
    for k, ix in want.xindexes.items():
        assert type(got.xindexes[k]) is type(ix) and got.xindexes[k].index.equals(ix.index) and got.xindexes[k].index.dtype == ix.index.dtype, k


_RNG_ARRAYS = [np.random.default_rng(1).integers(0, 1 << 30, 600, dtype=np.uint64), np.random.default_rng(2).integers(0, 1 << 34, 500, dtype=np.uint64)]


@pytest.mark.parametrize(
    "axes, fixed",
    [
        (AXES, {}),  # hashed (power6), TSB (ultrasparc-iii), VHPT (itanium2) and radix machines; four workloads
        ({"seed": [0, 3], "machine": ["skylake", "power6", "ultrasparc-iii"], "workload": [AXES["workload"][0], AXES["workload"][2]]}, {}),
        (
            {"machine": ["skylake", "zen4"], "page_size": ["2M", "1G"], "ram": [None, pagesim.Ram("96M")]},
            dict(workload="random", working_set="40M", accesses=2000, policy="thp"),
        ),
        ({"machine": ["ultrasparc-iii", "skylake", "neoverse-n1"], "fault_around": [1, 16]}, dict(workload="random", working_set="16M", accesses=2000)),
        ({"addresses": _RNG_ARRAYS, "seed": [0, 1]}, dict(machine="skylake")),
        ({"machine": ["power6", "skylake", "zen4"]}, dict(workload="random", working_set="4M", accesses=500)),
        ({"size": ["3M", "4M"]}, dict(machine="skylake", workload="touch", policy="thp")),
    ],
)
def test_concat_in_numpy_is_xarrays(axes, fixed):
    """The runs concatenated in numpy (xrdata._concat_arrays): the Dataset xarray's outer-join
    concat gives (_concat_xarray), down to dtypes, attribute and variable order."""
    import itertools

    from pagesim.engine.sweep import _point
    from pagesim.engine.xrdata import _aux_coords, _concat_arrays, _concat_xarray
    from pagesim.engine.xrdata import concat_runs as _concat

    names = list(axes)
    parts = [_point({**FIXED, **fixed, **dict(zip(names, combo))}, names) for combo in itertools.product(*axes.values())]
    aux = _aux_coords(parts)
    got = _concat_arrays(parts, aux, xr)
    assert got is not None
    want = _concat_xarray(parts, aux, xr)
    _assert_same_dataset(got, want)
    _assert_same_dataset(_concat(parts, xr), want)


def test_concat_in_numpy_promotes_as_xarray_does():
    """A string coordinate the runs disagree on becomes an object variable with NaN where a run lacks
    the label; an int variable one run lacks becomes float; one that is float in one run and int
    in another is float: the dtypes and values xarray's concat gives."""
    from pagesim.engine.sweep import _point
    from pagesim.engine.xrdata import _aux_coords, _concat_arrays, _concat_xarray

    parts = [
        _point({"machine": m, "workload": "random", "working_set": "4M", "accesses": 500, "seed": s}, ["machine", "seed"])
        for m in ("skylake", "zen4")
        for s in (0, 1)
    ]
    side = parts[1]["structure_side"].values.copy()
    side[0] = "elsewhere"
    parts[1] = parts[1].assign_coords(structure_side=("structure", side, parts[1]["structure_side"].attrs))
    parts[2] = parts[2].drop_vars("hpt_refills", errors="ignore").assign(extra=((), 3)).assign(walks=parts[2]["walks"].astype(float))
    aux = _aux_coords(parts)
    got = _concat_arrays(parts, aux, xr)
    want = _concat_xarray(parts, aux, xr)
    assert got is not None and want["structure_side"].dtype == object and want["extra"].dtype == float and want["walks"].dtype == float
    _assert_same_dataset(got, want)


def test_concat_in_numpy_leaves_what_it_does_not_model_to_xarray():
    """Runs with a coordinate simulate() never makes (here a scalar one): _concat_arrays declines,
    _concat gives xarray's Dataset."""
    from pagesim.engine.sweep import _point
    from pagesim.engine.xrdata import _aux_coords, _concat_arrays, _concat_xarray
    from pagesim.engine.xrdata import concat_runs as _concat

    parts = [_point({"machine": m, "workload": "random", "working_set": "4M", "accesses": 500}, ["machine"]) for m in ("skylake", "power6")]
    parts = [p.assign_coords(extra=7) for p in parts]
    aux = _aux_coords(parts)
    assert _concat_arrays(parts, aux, xr) is None
    _assert_same_dataset(_concat(parts, xr), _concat_xarray(parts, aux, xr))


def test_study_timed_pairs_in_threads_identical(monkeypatch):
    """Notebook 02's timed runs (studies.cscs.timed_pairs) in two threads: every Dataset identical
    to the serial run's, in the same places; a bad workers value is refused as sweep refuses it."""
    from pagesim.studies import cscs

    cases = {
        "STREAM": ("stream", dict(n=20_000)),
        "single-node RandomAccess (1 GiB)": ("random", dict(working_set="1G", accesses=30_000)),
    }
    monkeypatch.setattr(cscs, "kernel_cases", lambda quick=False: cases)
    serial = cscs.timed_pairs(seed=3)
    threaded = cscs.timed_pairs(seed=3, workers=2)
    assert list(threaded) == list(serial)
    for label in serial:
        assert list(threaded[label]) == ["4K", "2M"]
        for p in ("4K", "2M"):
            xr.testing.assert_identical(threaded[label][p], serial[label][p])
    with pytest.raises(ValueError, match="workers=0"):
        cscs.timed_pairs(workers=0)


def test_study_strong_scaling_in_threads_identical():
    """Notebook 02's strong scaling (studies.cscs.strong_scaling) in two threads: the same table, in
    the order of the processor counts."""
    import pandas as pd

    from pagesim.studies import cscs

    procs = [400, 96, 1000, 2000, 160]  # 2.4 MiB down to 0.5 MiB per process, out of order
    serial = cscs.strong_scaling(procs, total_mib=960, seed=2, progress=False)
    threaded = cscs.strong_scaling(procs, total_mib=960, seed=2, progress=False, workers=2)
    assert serial["processors"].tolist() == procs
    pd.testing.assert_frame_equal(threaded, serial)
    with pytest.raises(ValueError, match="workers=0"):
        cscs.strong_scaling(procs, workers=0)


def test_study_timed_pairs_reuse_only_runs_with_the_same_chain(monkeypatch):
    """timed_pairs makes a run again only when its inputs differ: the counterfactual's 4K runs (its
    new TLB holds 2 MB pages only) come from the Opteron's, priced identically to running them; its
    2M runs, whose chain differs, are made; a machine with another 4K chain makes both."""
    from pagesim.studies import cscs

    cases = {"STREAM": ("stream", dict(n=20_000)), "single-node RandomAccess (1 GiB)": ("random", dict(working_set="1G", accesses=30_000))}
    monkeypatch.setattr(cscs, "kernel_cases", lambda quick=False: cases)
    monkeypatch.setattr(cscs, "_RUNS", {})
    made = []
    real = cscs.simulate_timed

    def counting(m, wl, **kw):
        made.append((m.name, kw["page_size"]))
        return real(m, wl, **kw)

    monkeypatch.setattr(cscs, "simulate_timed", counting)
    more = cscs.more_2m_entries(512)
    base = cscs.timed_pairs(seed=4)
    assert len(made) == 4
    made.clear()
    reused = cscs.timed_pairs(seed=4, m=more, workers=2)
    assert made == [(more.name, "2M")] * 2
    for label in cases:
        ds = reused[label]["4K"]
        assert ds.attrs["machine"] == more.name and "opteron-k8" in ds.attrs["counters_from"]
        assert base[label]["4K"].attrs["machine"] == "opteron-k8" and "counters_from" not in base[label]["4K"].attrs
    # a caller changing what it got back does not change what a later call reuses
    base["STREAM"]["4K"].attrs["machine"] = "scribbled"
    base["STREAM"]["4K"]["accesses"].values[...] = -1
    made.clear()
    again = cscs.timed_pairs(seed=4, m=more)
    assert made == [] and again["STREAM"]["4K"].attrs["machine"] == more.name
    assert cscs.price(again["STREAM"], 1.0) == cscs.price(reused["STREAM"], 1.0)
    monkeypatch.setattr(cscs, "_RUNS", {})
    made.clear()
    fresh = cscs.timed_pairs(seed=4, m=more)
    assert len(made) == 4
    for label in cases:
        for mlp in (1.0, 3.0):
            assert cscs.price(reused[label], mlp) == cscs.price(fresh[label], mlp)
    made.clear()
    other = pagesim.machine("opteron-k8").replace_structure("L2 DTLB 4K", entries=256)
    cscs.timed_pairs(seed=4, m=other)
    cscs.timed_pairs(seed=5, m=more)
    assert made == [(other.name, "4K"), (other.name, "2M")] * 2 + [(more.name, "4K"), (more.name, "2M")] * 2


def test_axes_keep_the_order_given(serial, cluster_client):
    """Every axis lists its values in the order passed (unstacking sorted them: machines
    alphabetically), each point holds that value's own run, and a Dask sweep gives the same."""
    assert serial["machine"].values.tolist() == AXES["machine"]
    assert serial["seed"].values.tolist() == AXES["seed"]
    assert serial["workload"].values.tolist() == [w.label for w in AXES["workload"]]
    for i, m in enumerate(AXES["machine"]):
        for j, w in enumerate(AXES["workload"]):
            one = pagesim.simulate(m, w, seed=5)
            point = serial.isel(machine=i, workload=j, seed=1)
            for v in ("walks", "hits", "misses", "faults", "cycles"):
                own = point[v].sel({d: one[d].values for d in one[v].dims})  # the sweep holds every machine's page sizes and structures
                assert np.array_equal(own.values, one[v].values), (m, w.label, v)
    axes = {"page_size": ["2M", "4K"], "machine": ["skylake", "opteron-k8"]}
    fixed = dict(workload="stream", working_set="12M", progress=False)
    got = pagesim.sweep(axes, client=cluster_client, **fixed)
    assert got["page_size"].values.tolist() == [2 << 20, 4 << 10] and got["machine"].values.tolist() == ["skylake", "opteron-k8"]
    xr.testing.assert_identical(got, pagesim.sweep(axes, **fixed))


def test_what_differs_between_runs_is_kept_run_by_run():
    """A sweep over virtualised machines keeps each run's host (the nested TLB of one of them), which
    the attrs every run shares cannot hold."""
    import json

    z = pagesim.machine("zen4")
    ds = pagesim.sweep(
        {"machine": [z.virtualised("4K"), z.virtualised("4K", nested_tlb=64)]}, workload="random", working_set="16M", accesses=5000, progress=False
    )
    runs = json.loads(ds.attrs["run_attrs"])
    assert [r["run"]["machine"] for r in runs] == list(ds["machine"].values)
    assert [json.loads(r["host"])["nested_tlb"] for r in runs] == [0, 64]
    assert "host" not in ds.attrs
    same = pagesim.sweep({"seed": [1, 2]}, machine="skylake", workload="random", working_set="16M", accesses=5000, progress=False)
    assert json.loads(same.attrs["run_attrs"]) == [{"run": {"seed": 1}, "seed": 1}, {"run": {"seed": 2}, "seed": 2}]
