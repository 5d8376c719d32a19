"""The timing model (pagesim.engine.timing): the cache-replay kernel against its plain-Python reference
model, hand-checked cases, the cost arithmetic and the errors."""

import json

import numpy as np
import pytest
import xarray as xr
from hypothesis import given
from hypothesis import strategies as st
from twins.reference_timing import pt_lines, reference_timing
from twins.strategies import cases

import pagesim
from pagesim import Layout, Machine, Region, Structure, Walker
from pagesim.engine.stages import resolve_programmable
from pagesim.engine.timing import CacheLevel, Hierarchy, hierarchies, hierarchy, simulate_timed, timed_cycles

KIB = 1024


def _counts(ds):
    out = {}
    for var in ("data_level_hits", "walk_level_hits"):
        v = ds[var].values
        out[var] = {(c, z): int(v[c, z]) for c in range(v.shape[0]) for z in range(v.shape[1]) if v[c, z]}
    return out["data_level_hits"], out["walk_level_hits"]


@st.composite
def hierarchies_st(draw):
    line = draw(st.sampled_from([16, 64, 128]))
    n = draw(st.integers(1, 3))
    levels, lat = [], 1
    for i in range(n):
        ways = draw(st.sampled_from([1, 2, 3, 4, 5, 8, 16, 17, 20]))  # 17, 20: the stamp path
        sets = draw(st.sampled_from([1, 2, 3, 4, 16]))
        lat += draw(st.integers(0, 20))
        levels.append(CacheLevel(f"L{i + 1}", sets * ways * line, ways, lat, line))
    exclusive = all(c.ways <= 16 and c.sets & (c.sets - 1) == 0 for c in levels) and draw(st.booleans())
    return Hierarchy("hyp", tuple(levels), lat + draw(st.integers(0, 200)), inclusion="exclusive" if exclusive else "non-inclusive")


@given(cases(), hierarchies_st(), st.sampled_from([1, 7, 1 << 20]))
def test_kernel_matches_reference(case, h, chunk):
    m, layout, addrs, kinds, seed = case
    ds = simulate_timed(m, addresses=addrs, kinds=kinds, layout=layout, seed=seed, chunk_size=chunk, hierarchy=h)
    m_eff, _ = resolve_programmable(m, layout)
    want = reference_timing(m_eff, layout, [int(a) for a in addrs], None if kinds is None else list(kinds), h, seed)
    assert _counts(ds) == want
    # every walk reference and every data access is served somewhere, once
    assert int(ds["walk_level_hits"].sum()) == int(ds["walk_refs"].sum())
    assert int(ds["data_level_hits"].sum()) == int(ds["accesses"].sel(side="data").sum())


@pytest.mark.parametrize("name", ["opteron-k8", "power6", "ultrasparc-iii-cu", "itanium2", "skylake"])
def test_presets_match_reference(name):
    m = pagesim.machine(name)
    rng = np.random.default_rng(2)
    regions, at = [], 1 << 36
    for i, p in enumerate(m.page_sizes[:3]):
        at = -(-at // p) * p
        regions.append(Region(at, min(8, max(1, (64 << 20) // p)) * p, p, f"r{i}"))
        at += regions[-1].length + (1 << 30)
    layout = Layout(tuple(regions))
    addrs = []
    for _ in range(4000):
        r = regions[int(rng.integers(len(regions)))]
        addrs.append(r.start + int(rng.integers(min(r.length, 16 << 20))))
    kinds = rng.integers(0, 2, len(addrs)).astype(np.uint8)
    h = Hierarchy("small", (CacheLevel("L1", "4K", 2, 3, 64), CacheLevel("L2", "32K", 4, 10, 64)), 100)
    ds = simulate_timed(m, addresses=np.array(addrs, dtype=np.uint64), kinds=kinds, layout=layout, seed=1, hierarchy=h, chunk_size=1000)
    m_eff, _ = resolve_programmable(m, layout)
    assert _counts(ds) == reference_timing(m_eff, layout, addrs, list(kinds), h, 1)


# ------------------------------------------------------------------------------- hand-checked
# one fully associative 64-line L1 and a memory: no conflict misses in these small cases
FA = Hierarchy("fa", (CacheLevel("L1", "4K", 64, 3, 64), CacheLevel("L2", "64K", 64, 10, 64)), 100)


def _k8_one_region(pages=4, page=4 * KIB):
    base = 1 << 40
    return pagesim.machine("opteron-k8"), Layout.single(pages * page, page, start=base), base


def test_walk_right_after_a_walk_to_the_same_table_hits_l1():
    # K8, 4K pages, no page-walk cache: the first access walks 4 references, all from memory (cold);
    # the access to the next page walks again (its TLB entry is new) and reads the same PML4, PDPT
    # and PD entries (same lines) and the PTE next to the first one (same 64-byte line): 4 L1 hits.
    m, layout, base = _k8_one_region()
    ds = simulate_timed(m, addresses=np.array([base, base + 4 * KIB], dtype=np.uint64), layout=layout, hierarchy=FA)
    w = ds["walk_level_hits"].sel(page_size=4096).values
    assert w.tolist() == [4, 0, 4]  # L1D, L2, memory
    d = ds["data_level_hits"].sel(page_size=4096).values
    assert d.tolist() == [0, 0, 2]  # two different data lines, both cold


def test_pte_line_holds_eight_entries():
    # 64-byte lines hold 8 PTEs: the 9th page's PTE is on another line, so its walk misses once more
    m, layout, base = _k8_one_region(pages=9)
    addrs = np.array([base + i * 4 * KIB for i in range(9)], dtype=np.uint64)
    ds = simulate_timed(m, addresses=addrs, layout=layout, hierarchy=FA)
    w = ds["walk_level_hits"].sel(page_size=4096).values
    assert w.tolist() == [9 * 4 - 5, 0, 5]  # memory: the 4 cold entries of the first walk, then the 9th PTE's line


def test_same_line_data_access_hits_l1_and_costs_nothing_beyond_work():
    m, layout, base = _k8_one_region()
    addrs = np.array([base, base + 8, base + 16, base + 63], dtype=np.uint64)
    ds = simulate_timed(m, addresses=addrs, layout=layout, work_cycles=1.0)
    assert ds["data_level_hits"].sel(page_size=4096).values.tolist() == [3, 0, 1]
    h = hierarchy("opteron-k8")
    stall = float(ds["cycles"].sel(component="data_stall").sum())
    assert stall == h.memory_latency - h.levels[0].latency  # one cold line, beyond L1
    walk = float(ds["cycles"].sel(component="walk").sum())
    assert walk == m.costs.walk_base_cycles + 4 * h.memory_latency  # one walk, 4 references from memory


def test_exclusive_levels_hold_a_line_once():
    # two 1-line levels, exclusive: A, B, A. A from memory into L1; B from memory into L1, A moves to
    # L2; A again: served by L2 and swapped with B (B to L2). Non-inclusive: A fills both levels, B
    # evicts A from L1 and L2 (1 line each), so A comes from memory again.
    line = 64
    lv = (CacheLevel("L1", line, 1, 1, line), CacheLevel("L2", line, 1, 5, line))
    base = 1 << 40
    layout = Layout.single(3 * 4096, 4096, start=base)
    m = Machine(
        name="big", title="one big TLB", page_sizes=(4096,), base_page=4096, structures=(Structure("T", 1, "data", 8, 8, ("4K",)),), walker=Walker("vhpt")
    )
    addrs = np.array([base, base + 4096, base, base + 4096], dtype=np.uint64)
    # walks (VHPT entries) also pass through the caches: count data accesses only
    ex = simulate_timed(m, addresses=addrs, layout=layout, hierarchy=Hierarchy("x", lv, 50, inclusion="exclusive"))
    ni = simulate_timed(m, addresses=addrs, layout=layout, hierarchy=Hierarchy("n", lv, 50))
    want_ex, _ = reference_timing(m, layout, [int(a) for a in addrs], None, Hierarchy("x", lv, 50, inclusion="exclusive"))
    assert _counts(ex)[0] == want_ex
    assert int(ex["data_level_hits"].sel(cache_level="L2").sum()) > int(ni["data_level_hits"].sel(cache_level="L2").sum())
    with pytest.raises(ValueError, match="exclusive levels need a power-of-two number of sets and at most 16 ways"):
        Hierarchy("x", (CacheLevel("L1", 3 * 64, 1, 1), CacheLevel("L2", "64K", 16, 5)), 50, inclusion="exclusive")
    with pytest.raises(ValueError, match="inclusion='inclusive' is not allowed"):
        Hierarchy("x", lv, 50, inclusion="inclusive")


def test_instruction_fetches_are_not_data_but_their_walks_are_replayed():
    m, layout, base = _k8_one_region()
    ds = simulate_timed(m, addresses=np.array([base, base + 4 * KIB], dtype=np.uint64), kinds=np.array([1, 1], dtype=np.uint8), layout=layout, hierarchy=FA)
    assert int(ds["data_level_hits"].sum()) == 0
    assert ds["walk_level_hits"].sel(page_size=4096).values.tolist() == [4, 0, 4]


def test_counts_equal_untimed_simulate():
    ds0 = pagesim.simulate("opteron-k8", "random", working_set="64M", accesses=20_000, seed=4)
    ds1 = simulate_timed("opteron-k8", "random", working_set="64M", accesses=20_000, seed=4)
    for v in ("accesses", "hits", "misses", "walks", "walk_refs", "faults"):
        assert (ds0[v].values == ds1[v].values).all(), v
    # the untimed cost components other than the walk are unchanged
    for c in ("tlb_hit_latency", "fault", "work"):
        assert float(ds0["cycles"].sel(component=c).sum()) == float(ds1["cycles"].sel(component=c).sum())


def test_cycles_are_the_counters_priced():
    ds = simulate_timed("opteron-k8", "random", working_set="64M", accesses=20_000, seed=4, mlp=2.0, work_cycles=3.0)
    lat = ds["cache_latency"].values
    d = ds["data_level_hits"].values
    w = ds["walk_level_hits"].values
    stall = ((d[1:] * (lat[1:, None] - lat[0])).sum(axis=0)) / 2.0
    assert np.allclose(ds["cycles"].sel(component="data_stall").values, stall)
    walks = ds["walks"].sum("side").values
    base = pagesim.machine("opteron-k8").costs.walk_base_cycles
    assert np.allclose(ds["cycles"].sel(component="walk").values, walks * base + (w * lat[:, None]).sum(axis=0))
    assert np.allclose(ds["cycles"].sel(component="work").values, ds["accesses"].sum("side").values * 3.0)
    assert float(ds["total_cycles"]) == pytest.approx(float(ds["cycles"].sum()))
    # re-priced with mlp 4: the stall halves, the rest stays
    ds4 = timed_cycles(ds, mlp=4.0)
    assert np.allclose(ds4["cycles"].sel(component="data_stall").values, stall / 2)
    assert np.allclose(ds4["cycles"].sel(component="walk").values, ds["cycles"].sel(component="walk").values)
    ds_w = timed_cycles(ds, walk_mlp=2.0)
    assert np.allclose(ds_w["cycles"].sel(component="walk").values, ds["cycles"].sel(component="walk").values / 2)
    # cycles_by_component: the same numbers without a Dataset, for every re-pricing argument
    from pagesim.engine.timing import cycles_by_component

    ds_b = timed_cycles(ds, walk_base_cycles=2 * float(ds.attrs["walk_base_cycles"]))
    walks = ds["walks"].sum("side").values
    added = ds_b["cycles"].sel(component="walk").values - ds["cycles"].sel(component="walk").values
    assert np.allclose(added, walks * float(ds.attrs["walk_base_cycles"])) and ds_b.attrs["walk_base_cycles"] == 2 * float(ds.attrs["walk_base_cycles"])
    import ast

    # the costs the result states are the ones it was priced with; the rest of them stay
    costs, costs_b = ast.literal_eval(ds.attrs["costs"]), ast.literal_eval(ds_b.attrs["costs"])
    assert costs_b == {**costs, "walk_base_cycles": 2 * float(ds.attrs["walk_base_cycles"])}
    assert ast.literal_eval(timed_cycles(ds_b, mlp=2.0).attrs["costs"]) == costs_b
    # the machine's own figures changed from those simulated are listed among its changes (was: a
    # preset's stayed empty); the program's (mlp, work) are not, and a round trip leaves none
    base = float(ds.attrs["walk_base_cycles"])
    lat0 = json.loads(ds.attrs["latencies"])
    assert json.loads(ds.attrs["machine_changes"]) == []
    assert json.loads(ds_b.attrs["machine_changes"]) == [f"re-priced: walk_base_cycles={2 * base} (simulated with {base})"]
    ds_l = timed_cycles(ds_b, latencies=[2 * x for x in lat0])
    want = (
        f"re-priced: latencies={json.dumps([2.0 * x for x in lat0])} (simulated with {json.dumps(lat0)}), walk_base_cycles={2 * base} (simulated with {base})"
    )
    assert json.loads(ds_l.attrs["machine_changes"]) == [want]
    assert json.loads(timed_cycles(ds_l, latencies=lat0, walk_base_cycles=base).attrs["machine_changes"]) == []
    assert json.loads(timed_cycles(ds, mlp=4.0, work_cycles=1.0, walk_mlp=2.0).attrs["machine_changes"]) == []
    # a second re-pricing starts from the first's latencies (was: from the simulated ones, silently)
    again = timed_cycles(ds_l, mlp=float(ds_l.attrs["mlp"]))
    assert float(again["total_cycles"]) == pytest.approx(float(ds_l["total_cycles"])) and again.attrs["latencies"] == ds_l.attrs["latencies"]
    assert list(again["cache_latency"].values) == [2.0 * x for x in lat0]
    assert json.loads(again.attrs["machine_changes"]) == [want]
    # a result without as_simulated (an earlier pagesim's) names the figures changed since it was last priced
    old = ds_l.copy()
    del old.attrs["as_simulated"]
    assert json.loads(timed_cycles(old, walk_base_cycles=3 * base).attrs["machine_changes"])[-1] == f"re-priced: walk_base_cycles={3 * base} (was {2 * base})"
    # a machine's own change that starts as a re-pricing line would is kept (was: filtered by its text)
    import dataclasses

    odd = dataclasses.replace(pagesim.machine("opteron-k8"), changes=("re-priced: a change of the machine's own",))
    t = simulate_timed(odd, "random", working_set="16M", accesses=2000, seed=1)
    assert json.loads(timed_cycles(t, walk_base_cycles=1.0).attrs["machine_changes"])[:-1] == list(odd.changes) != []
    by = cycles_by_component(ds_l, mlp=float(ds_l.attrs["mlp"]))
    assert np.allclose(np.stack([by[str(c)] for c in ds_l["component"].values]), ds_l["cycles"].values)
    with pytest.raises(ValueError, match="walk_base_cycles=-1"):
        timed_cycles(ds, walk_base_cycles=-1)
    for kw in ({}, {"mlp": 4.0}, {"walk_mlp": 2.0}, {"work_cycles": 7.5}, {"latencies": [1, 20, 300]}, {"walk_base_cycles": 3.0}):
        want = timed_cycles(ds, **kw)["cycles"]
        got = cycles_by_component(ds, **kw)
        assert list(got) == [str(c) for c in want["component"].values]
        for c, row in got.items():
            assert np.array_equal(row, want.sel(component=c).values), (kw, c)


def test_repriced_result_describes_the_hierarchy_it_is_priced_with():
    """attrs["hierarchy"] gives the latencies the cycles are priced with (it kept the simulated
    ones after a re-pricing with other latencies), and returns to them on a round trip."""
    ds = simulate_timed("opteron-k8", "random", working_set="16M", accesses=2000, seed=1)
    lat0 = json.loads(ds.attrs["latencies"])
    again = timed_cycles(timed_cycles(ds, latencies=[3, 12, 300]), mlp=2.0)
    h = json.loads(again.attrs["hierarchy"])
    assert [lv[4] for lv in h["levels"]] + [h["memory_latency"]] == [3, 12, 300] != lat0
    assert [lv[:4] for lv in h["levels"]] == [lv[:4] for lv in json.loads(ds.attrs["hierarchy"])["levels"]]
    back = json.loads(timed_cycles(again, latencies=lat0).attrs["hierarchy"])
    assert [lv[4] for lv in back["levels"]] + [back["memory_latency"]] == lat0
    # named as Hierarchy.replace_level names a what-if: starred, the latencies changed among its assumptions
    sim = json.loads(ds.attrs["hierarchy"])
    moved = [f"{lv[0]}.latency" for lv, x in zip(sim["levels"], [3, 12]) if lv[4] != x] + ["memory_latency"] * (sim["memory_latency"] != 300)
    assert moved and h["name"] == sim["name"] + "*" and h["assumed"] == sim["assumed"] + moved
    assert back == sim
    # a preset's latency already among its assumptions is not listed twice
    twice = json.loads(timed_cycles(ds, latencies=[lat0[0], lat0[1] + 5, lat0[2]]).attrs["hierarchy"])
    assert len(twice["assumed"]) == len(set(twice["assumed"])) and f"{sim['levels'][1][0]}.latency" in twice["assumed"]
    # a result without the simulated hierarchy (an earlier pagesim's) is starred against the one last priced
    old = ds.copy()
    del old.attrs["as_simulated"]
    h_old = json.loads(timed_cycles(old, latencies=[lat0[0], lat0[1] + 5, lat0[2]]).attrs["hierarchy"])
    assert h_old["name"] == sim["name"] + "*" and [lv[4] for lv in h_old["levels"]] == [lat0[0], lat0[1] + 5]


def test_larger_pages_cost_fewer_walk_cycles_on_random_access():
    kw = dict(working_set="256M", accesses=50_000, seed=1)
    small = simulate_timed("opteron-k8", "random", page_size="4K", **kw)
    large = simulate_timed("opteron-k8", "random", page_size="2M", **kw)
    ws, wl = float(small["cycles"].sel(component="walk").sum()), float(large["cycles"].sel(component="walk").sum())
    assert wl < ws


def test_presets_load_and_describe():
    names = hierarchies()
    assert {"opteron-k8", "power6"} <= set(names)
    for n in names:
        h = hierarchy(n)
        assert h.describe().startswith(n)
        assert h.source
    assert hierarchy(pagesim.machine("opteron-k8").derive(va_bits=48)).name == "opteron-k8"


def test_preset_assumptions_name_real_fields():
    # an `assumed` entry that names no field would hide an unsourced figure behind a typo
    for n in hierarchies():
        h = hierarchy(n)
        fields = {"memory_latency", "clock_ghz"} | {f"{c.name}.{f}" for c in h.levels for f in ("size", "ways", "line", "latency")}
        assert set(h.assumed) <= fields, (n, set(h.assumed) - fields)


# ------------------------------------------------------------------------------------- errors
def test_errors_name_the_parameter():
    with pytest.raises(ValueError, match=r"mlp=0\.5 is out of range: allowed 1..64"):
        simulate_timed("opteron-k8", "random", accesses=10, mlp=0.5)
    with pytest.raises(ValueError, match=r"walk_mlp=100 is out of range"):
        simulate_timed("opteron-k8", "random", accesses=10, walk_mlp=100)
    with pytest.raises(TypeError, match="mlp must be a number"):
        simulate_timed("opteron-k8", "random", accesses=10, mlp="2")
    with pytest.raises(ValueError, match="work_cycles=-1"):
        simulate_timed("opteron-k8", "random", accesses=10, work_cycles=-1)
    with pytest.raises(ValueError, match="no data-cache hierarchy preset of that name"):
        simulate_timed("opteron-k8", "random", accesses=10, hierarchy="nonesuch")
    with pytest.raises(ValueError, match="machine 'zen4' has no data-cache hierarchy preset"):
        simulate_timed("zen4", "random", accesses=10)
    with pytest.raises(TypeError, match="hierarchy must be"):
        hierarchy(3)
    with pytest.raises(ValueError, match=r"cache level 'L1' ways=0 must be an int in 1..64"):
        CacheLevel("L1", "32K", 0, 4)
    with pytest.raises(ValueError, match=r"size=1000 must be a positive multiple of line x ways"):
        CacheLevel("L1", 1000, 2, 4)
    with pytest.raises(ValueError, match="line=48"):
        CacheLevel("L1", "48K", 2, 4, 48)
    with pytest.raises(ValueError, match=r"latency=-1 is out of range"):
        CacheLevel("L1", "32K", 8, -1)
    with pytest.raises(ValueError, match="same line size"):
        Hierarchy("x", (CacheLevel("L1", "32K", 8, 4, 64), CacheLevel("L2", "1M", 8, 12, 128)), 100)
    with pytest.raises(ValueError, match="must not decrease outward"):
        Hierarchy("x", (CacheLevel("L1", "32K", 8, 4), CacheLevel("L2", "1M", 8, 2)), 100)
    with pytest.raises(ValueError, match="levels: allowed 1..4"):
        Hierarchy("x", (), 100)
    ds = simulate_timed("opteron-k8", "random", accesses=10)
    with pytest.raises(ValueError, match=r"latencies=\[1.0, 2.0\] must be 3 finite"):
        timed_cycles(ds, latencies=[1.0, 2.0])
    with pytest.raises(ValueError, match="needs a simulate_timed"):
        timed_cycles(pagesim.simulate("opteron-k8", "random", accesses=10))


def test_pt_lines_of_a_radix_walk_are_top_first():
    m = Machine(
        name="r",
        title="r",
        page_sizes=(4096,),
        base_page=4096,
        structures=(Structure("T", 1, "data", 1, 1, ("4K",)),),
        walker=Walker("radix", level_bits=(9, 9, 9, 9), base_shift=12),
    )
    a = (5 << 39) | (6 << 30) | (7 << 21) | (8 << 12)
    lines = pt_lines(m, a, 0, 4, 64)
    # level 0 (PML4) entry 5 of table 0 (frame 0): byte 40, line 0; level 3 (PT) entry 8 (byte 64,
    # line 1 of its table) of table a >> 21, at that table's frame
    from twins.reference_timing import frame

    assert lines[0] == (1 << 62) + 0
    assert lines[3] == (1 << 62) + (3 << 55) + frame(a >> 21, 63 - 12 - 9) * 64 + 1


def test_general_kernel_equals_the_power_of_two_kernel(monkeypatch):
    # every preset hierarchy runs the kernel compiled without the modulo and stamp paths; the
    # general kernel must count the same on such a hierarchy
    from pagesim.engine import timing as TM

    kw = dict(working_set="64M", accesses=30_000, seed=2)
    fast = simulate_timed("power6", "random", **kw)
    monkeypatch.setattr(TM._Replay, "pow2", property(lambda self: False, lambda self, v: None), raising=False)
    general = simulate_timed("power6", "random", **kw)
    assert (fast["data_level_hits"].values == general["data_level_hits"].values).all()
    assert (fast["walk_level_hits"].values == general["walk_level_hits"].values).all()
    assert int(fast["walk_level_hits"].sum()) > 0


def test_errors_name_what_the_user_gave():
    """A machine without caches was reported as a bad hierarchy= the user
    never passed; duplicate level names, a level called 'memory' and any clock_ghz were accepted;
    latencies= as a dict gave a bare float() error."""
    from pagesim.engine.timing import CacheLevel, Hierarchy, simulate_timed, timed_cycles

    with pytest.raises(ValueError, match="machine 'skylake' has no data-cache hierarchy preset"):
        simulate_timed("skylake", "random", working_set="1M", accesses=100)
    with pytest.raises(ValueError, match="level names must differ"):
        Hierarchy("x", (CacheLevel("L1", "32K", 8, 4), CacheLevel("L1", "256K", 8, 14)), memory_latency=100)
    with pytest.raises(ValueError, match="not be 'memory'"):
        Hierarchy("x", (CacheLevel("memory", "32K", 8, 4),), memory_latency=100)
    for bad in (-1, float("nan")):
        with pytest.raises(ValueError, match="clock_ghz"):
            Hierarchy("x", (CacheLevel("L1", "32K", 8, 4),), memory_latency=100, clock_ghz=bad)
    ds = simulate_timed("opteron-k8", "random", working_set="1M", accesses=1000, work_cycles=1)
    with pytest.raises(TypeError, match="latencies=.* must be a sequence"):
        timed_cycles(ds, latencies={"L1D": 3})


@pytest.mark.parametrize("workload", ["random", "stream"])
def test_timed_specialised_and_generic_identical(workload):
    """The walk log is generated into specialised kernels too: a timed run is the same Dataset
    with either kernel."""
    kw = dict(working_set="8M", accesses=20_000, seed=3) if workload == "random" else dict(n=7000)
    a = simulate_timed("opteron-k8", workload, specialize=True, **kw)
    b = simulate_timed("opteron-k8", workload, specialize=False, **kw)
    xr.testing.assert_identical(a, b)
