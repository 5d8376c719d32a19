"""Determinism, chunking, workloads, sweep, layout and the command line."""

import subprocess
import sys

import numpy as np
import pytest
import xarray as xr

import pagesim
from pagesim import Layout, Region
from pagesim.engine.simulate import place


def test_same_seed_identical_dataset_any_chunking():
    a = pagesim.simulate("zen4", "pointer_chase", working_set="64M", accesses=30_000, seed=7)
    b = pagesim.simulate("zen4", "pointer_chase", working_set="64M", accesses=30_000, seed=7, chunk_size=777)
    xr.testing.assert_identical(a, b)
    c = pagesim.simulate("zen4", "pointer_chase", working_set="64M", accesses=30_000, seed=8)
    assert int(c["walks"].sum()) != int(a["walks"].sum())


def test_specialised_and_generic_identical():
    a = pagesim.simulate("skylake", "random", working_set="64M", accesses=20_000, seed=1, specialize=False)
    b = pagesim.simulate("skylake", "random", working_set="64M", accesses=20_000, seed=1, specialize=True)
    xr.testing.assert_identical(a, b)


def test_attrs_record_inputs():
    ds = pagesim.simulate("power6", "stream", working_set="3M", seed=3)
    for k in ("machine", "workload", "workload_params", "layout", "seed", "pagesim_version", "assumptions"):
        assert k in ds.attrs
    assert ds.attrs["seed"] == 3 and ds.attrs["pagesim_version"] == pagesim.__version__
    assert ds["page_size"].attrs["units"] == "bytes"


@pytest.mark.parametrize(
    "name,kw,n",
    [
        ("sequential", dict(size="1M", stride=8), 131072),
        ("strided", dict(size="1M", stride=4096), 256),
        ("stream", dict(n=1000), 3000),
        ("random", dict(size="1M", accesses=5000), 5000),
        ("pointer_chase", dict(size="1M", accesses=5000), 5000),
        ("blocked_matrix", dict(n=16, block=8), 16 * 16 * 2 + 2 * 16**3),
        ("md", dict(atoms=216, atoms_per_cell=8), 27 * 8 * (1 + 27 * 8)),
        ("touch", dict(size="64K", pattern="memset"), 8192),
    ],
)
def test_workloads_stay_in_their_arrays(name, kw, n):
    w = pagesim.workload(name, **kw)
    assert w.n_accesses == n
    lay = place(w, 4096)
    got = 0
    for a, _ in w.chunks([r.start for r in lay.regions], chunk=1000, seed=1):
        inside = np.zeros(a.shape, bool)
        for r in lay.regions:
            inside |= (a >= r.start) & (a < r.start + dict(w.spans())[r.name])
        assert inside.all()
        got += a.size
    assert got == n


def test_pointer_chase_visits_every_node_once_per_cycle():
    w = pagesim.workload("pointer_chase", size=64 * 1000, node=64, accesses=1000)
    a = np.concatenate([c for c, _ in w.chunks([0], chunk=300, seed=2)])
    assert np.unique(a).size == 1000


def test_md_shuffle_changes_locality():
    kw = dict(working_set="16M", page_size="4K", seed=1)
    ordered = pagesim.simulate("opteron-k8", "md", shuffle=0.0, **kw)
    shuffled = pagesim.simulate("opteron-k8", "md", shuffle=1.0, **kw)
    assert int(shuffled["walks"].sum()) > 5 * int(ordered["walks"].sum())


def test_sweep_dimensions():
    ds = pagesim.sweep({"machine": ["skylake", "opteron-k8"], "page_size": ["4K", "2M"]}, workload="random", working_set="64M", accesses=5000, progress=False)
    assert ds["walks"].sum(["side", "mapped_page_size"]).shape == (2, 2)
    single = pagesim.simulate("opteron-k8", "random", working_set="64M", accesses=5000, page_size="2M")
    assert int(ds["walks"].sel(machine="opteron-k8", page_size=2 << 20).sum()) == int(single["walks"].sum())
    with pytest.raises(ValueError, match="repeated values"):
        pagesim.sweep({"page_size": ["4K", "4096"]}, machine="skylake", workload="random", progress=False)


def test_sweep_working_set():
    ds = pagesim.sweep({"working_set": ["1M", "64M"]}, machine="skylake", workload="random", accesses=20_000, progress=False)
    w = ds["walks"].sum(["side", "page_size"])
    assert int(w.sel(working_set=1 << 20)) < int(w.sel(working_set=64 << 20))


def test_derived_machine_what_if():
    k8 = pagesim.machine("opteron-k8")
    more = k8.add_structure(name="L2 DTLB 2M", level=2, side="data", entries=512, ways=4, sizes=["2M"])
    assert more.reach("2M") == 1 << 30 and "added L2 DTLB 2M" in more.changes[0]
    assert any("what-if" in a for a in more.assumptions)
    kw = dict(working_set="256M", accesses=50_000, page_size="2M", seed=1)
    assert int(pagesim.simulate(more, "random", **kw)["walks"].sum()) < int(pagesim.simulate(k8, "random", **kw)["walks"].sum())


def test_pmap_view():
    lay = Layout((Region(0x22000, 3960 * 1024, "8K", "[ heap ]"), Region(0x400000, 128 << 20, "4M", "[ heap ]")))
    text = lay.pmap()
    assert "0000000000400000    131072" in text and "4M" in text and "total Kb            135032" in text


def test_every_preset_has_sources_and_simulates():
    for name in pagesim.machines():
        m = pagesim.machine(name)
        assert all(s.source for s in m.structures), name
        ds = pagesim.simulate(m, "random", working_set="8M", accesses=2000)
        assert int(ds["accesses"].sum()) == 2000


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "pagesim", *args], capture_output=True, text=True)


def test_cli_machines_lists_every_preset_with_sources():
    r = _cli("machines")
    assert r.returncode == 0
    for name in pagesim.machines():
        assert name in r.stdout
    assert "InstLatx64" in r.stdout and "Sources" in r.stdout
    # UltraSPARC III Cu's programmable T512_1 counts as programmed (marked), so it differs from the III
    lines = {ln.split()[0]: ln for ln in r.stdout.splitlines() if ln.startswith("ultrasparc-iii")}
    assert "4M:2G*" in lines["ultrasparc-iii-cu"] and "4M:64M" in lines["ultrasparc-iii"]


def test_cli_simulate_and_errors():
    r = _cli("simulate", "--machine", "opteron-k8", "--workload", "random", "--working-set", "16M", "--page-size", "2M", "--accesses", "1000", "--quiet")
    assert r.returncode == 0 and "L1 DTLB 2M" in r.stdout
    r = _cli("simulate", "--machine", "opteron-k8", "--workload", "random", "--page-size", "1G")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert "page_size=1G is not supported" in r.stderr


@pytest.mark.parametrize("order", [["skylake", "power6"], ["power6", "skylake"], ["ultrasparc-iii", "apple-m1", "itanium2"]])
def test_sweep_machines_with_different_page_sizes(order):
    """Once failed with xarray's MergeError on 'page' (45 of 182 ordered preset pairs)."""
    ds = pagesim.sweep({"machine": order}, workload="random", working_set="4M", accesses=500, progress=False)
    for name in order:
        single = pagesim.simulate(name, "random", working_set="4M", accesses=500)
        got = ds["walks"].sel(machine=name).sel(page_size=single["page_size"].values)
        assert got.fillna(0).astype(int).values.tolist() == single["walks"].values.tolist()
    labels = dict(zip(ds["page_size"].values.tolist(), ds["page"].values.tolist()))
    assert all(labels[p] == pagesim.core.units.format_size(p) for p in labels)


def test_sweep_axes_that_once_failed():
    with pytest.raises(ValueError, match=r"axis 'seed' is empty: give at least one value"):
        pagesim.sweep({"seed": []}, machine="skylake", workload="random", progress=False)
    arrays = [np.array([1 << 33]), np.array([(1 << 33) + 4096, (1 << 33) + 8192])]
    ds = pagesim.sweep({"addresses": arrays}, machine="skylake", progress=False)
    assert list(ds["addresses"].values) == ["array(1)", "array(2)"]
    assert int(ds["faults"].sel(addresses="array(2)").sum()) == 2
    w1 = pagesim.workload("random", working_set="4M", accesses=100)
    w2 = pagesim.workload("random", working_set="4M", accesses=200)
    ds = pagesim.sweep({"workload": [w1, w2]}, machine="skylake", progress=False)
    assert list(ds["workload"].values) == ["random(4M) accesses=100", "random(4M) accesses=200"]
    assert int(ds["accesses"].sel(workload="random(4M) accesses=200").sum()) == 200
    with pytest.raises(ValueError, match="repeated values"):
        pagesim.sweep({"workload": [w1, w1]}, machine="skylake", progress=False)


def test_sweep_keeps_none_and_split_regions():
    """None on an axis (the default of ram=) was dropped with its run; a THP region split into its
    huge part and a base-page tail gave two 'buffer' labels, and sweeps over it failed to align."""
    r = pagesim.sweep({"ram": [None, pagesim.Ram("128M")]}, machine="skylake", workload="random", working_set="96M", accesses=1000, progress=False)
    assert r.sizes["ram"] == 2 and "None" in list(r["ram"].values)
    ds = pagesim.simulate("skylake", "touch", size="3M", policy="thp")
    assert list(ds["region"].values) == ["buffer (2M)", "buffer (4K)"]
    s = pagesim.sweep({"size": ["3M", "4M"]}, machine="skylake", workload="touch", policy="thp", progress=False)
    assert int(s["faults"].sel(size="3M").sum()) == 257 and int(s["faults"].sel(size="4M").sum()) == 2


def test_accesses_for_whole_pass_workloads():
    """accesses= was silently ignored by md and silently ran a whole pass of sequential/stream when
    asked for less: md now runs whole steps, and asking for less than
    one pass (step) warns with the count that runs."""
    import warnings

    with pytest.warns(UserWarning, match=r"accesses=1,000 is less than one of its passes \(8,388,608"):
        w = pagesim.workload("sequential", working_set="64M", accesses=1000)
    assert w.n_accesses == 8_388_608
    with pytest.warns(UserWarning, match="less than one of its steps"):
        pagesim.workload("md", working_set="1M", accesses=10)
    one = pagesim.workload("md", working_set="1M").n_accesses
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert pagesim.workload("md", working_set="1M", accesses=3 * one).n_accesses == 3 * one
        assert pagesim.workload("md", working_set="1M", accesses=2 * one + 1).n_accesses == 3 * one


def test_addresses_with_unknown_keyword_names_it():
    """A mistyped keyword beside addresses= is named (it used to say 'give either addresses or a
    workload')."""
    a = (np.arange(100, dtype=np.uint64) * np.uint64(4096)) + np.uint64(1 << 40)
    with pytest.raises(TypeError, match="'chunksize'"):
        pagesim.simulate("skylake", addresses=a, chunksize=7)
    with pytest.raises(ValueError, match="give either addresses or a workload"):
        pagesim.simulate("skylake", "random", addresses=a)


def test_specialize_takes_true_false_or_auto_only():
    a = (np.arange(100, dtype=np.uint64) * np.uint64(4096)) + np.uint64(1 << 40)
    for bad in (1, 0, "yes", None, "Auto"):
        with pytest.raises(ValueError, match="specialize="):
            pagesim.simulate("skylake", addresses=a, specialize=bad)


def test_kinds_all_data_can_be_specialised():
    """kinds= of zeros only is all data: specialize=True accepts it, same Dataset as without kinds."""
    a = (np.random.default_rng(3).integers(0, 1 << 26, 5000, dtype=np.uint64) + np.uint64(1 << 40)) & ~np.uint64(7)
    with_kinds = pagesim.simulate("skylake", addresses=a, kinds=np.zeros(a.size, dtype=np.uint8), specialize=True)
    generic = pagesim.simulate("skylake", addresses=a, kinds=np.zeros(a.size, dtype=np.uint8), specialize=False)
    xr.testing.assert_identical(with_kinds, generic)
