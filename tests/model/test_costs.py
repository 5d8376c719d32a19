"""The cost model in numpy (pagesim.model.costs) against the plain xarray formulation
(tests/twins/reference_costs.py): identical Datasets on every preset, with a RAM limit, with compaction,
and for simulate_processes."""

import numpy as np
import pytest
import xarray as xr
from twins.reference_costs import reference_add_costs

import pagesim
from pagesim.engine.processes import simulate_processes
from pagesim.model.machines import machines
from pagesim.system.memory import PhysicalMemory
from pagesim.system.pressure import Ram

COST_VARS = ["cycles", "total_cycles", "translation_share", "fault_share", "swap_share"]


def recomputed(ds, ram=None):
    """``ds`` with its cost variables dropped and added again by the reference."""
    bare = ds.drop_vars(COST_VARS + ["component"])
    bare.attrs = {k: v for k, v in ds.attrs.items() if k not in ("work_cycles_per_access", "costs")}
    m = pagesim.machine(ds.attrs["machine"])
    if ds.attrs.get("programmed") not in (None, "{}"):
        import json

        from pagesim import Layout
        from pagesim.engine.stages import resolve_programmable

        m, _ = resolve_programmable(m, Layout.from_records(json.loads(ds.attrs["layout"])))
    return reference_add_costs(bare, m, ds.attrs["work_cycles_per_access"], ram)


def same(a, b):
    xr.testing.assert_identical(a, b)
    for k in a.variables:
        assert a[k].dtype == b[k].dtype, k
    assert list(a.data_vars) == list(b.data_vars)
    assert a.attrs == b.attrs


@pytest.mark.parametrize("name", machines())
def test_costs_every_preset(name):
    m = pagesim.machine(name)
    rng = np.random.default_rng(5)
    a = (rng.integers(0, 1 << 26, 4000) + (1 << 40)).astype(np.uint64)
    k = rng.integers(0, 2, 4000).astype(np.uint8)
    for ds in (
        pagesim.simulate(name, "random", working_set="64M", accesses=5000, seed=3, page_size=m.page_sizes[-1]),
        pagesim.simulate(name, addresses=a, kinds=k, work_cycles=2.5),
    ):
        same(ds, recomputed(ds))


def test_costs_ram_and_compaction():
    ram = Ram(limit="96M")
    ds = pagesim.simulate("skylake", "random", working_set="64M", accesses=20000, ram=ram)
    assert float(ds["swap_share"]) > 0
    same(ds, recomputed(ds, ram))
    ds = pagesim.simulate("skylake", "random", working_set="64M", accesses=20000, policy="thp", memory=PhysicalMemory("1G"), compaction=True)
    same(ds, recomputed(ds))


@pytest.mark.parametrize("name", ["skylake", "power6"])
def test_costs_processes(name):
    caches = () if pagesim.machine(name).walker.kind != "radix" else pagesim.engine.processes.DEFAULT_CACHES
    ds = simulate_processes(name, "random", processes=3, quantum=2000, working_set="16M", accesses=6000, caches=caches)
    same(ds, recomputed(ds))


@pytest.mark.parametrize("name", ["skylake", "power6", "ultrasparc-iii"])
def test_direct_dataset_same_as_constructor(name):
    """pagesim.engine.xrdata.build_dataset builds the Dataset without xarray's merge: same result as the
    public constructor, dtypes, index coordinates and attrs included."""
    from pagesim.engine.xrdata import build_dataset

    ds = pagesim.simulate(name, "random", working_set="8M", accesses=3000)
    dv = {k: (v.dims, v.values, dict(v.attrs)) for k, v in ds.data_vars.items()}
    coords = {k: (v.dims[0] if v.dims else (), v.values, dict(v.attrs)) for k, v in ds.coords.items()}
    got = build_dataset(dv, coords, dict(ds.attrs))
    want = xr.Dataset(dv, coords=coords, attrs=dict(ds.attrs))
    same(got, want)
    same(got, ds)
    assert set(got.indexes) == set(want.indexes) == {"page_size", "side", "structure", "region", "component"} | ({"pwc"} if "pwc" in ds.coords else set())
