"""The numba kernel against the plain-Python reference model: identical counters, every run."""

import numpy as np
import pytest
from helpers import assert_matches_reference, dataset_counters
from hypothesis import given, settings
from hypothesis import strategies as st
from twins.reference import reference_simulate
from twins.strategies import KIB, cases, machines

import pagesim
from pagesim import Layout, Machine, PageWalkCache, Region, Structure, Walker
from pagesim._kernels import translate as K
from pagesim.engine import stages as E


@given(cases(), st.sampled_from([1, 7, 1 << 20]))
def test_kernel_matches_reference(case, chunk):
    assert_matches_reference(case, chunk)


@given(cases(cross=True), st.sampled_from([1, 7, 1 << 20]))
def test_cross_kind_chains_match_reference(case, chunk):
    """Every machine here has a level only one side has below a unified level, so one structure is
    first in one kind's chain and later in the other's."""
    test_kernel_matches_reference.hypothesis.inner_test(case, chunk)


@settings(max_examples=min(settings().max_examples, 60))  # long traces: each example costs ~10x a plain one
@given(cases(wide=True), st.sampled_from([1, 7, 1 << 20]))
def test_wide_structures_match_reference(case, chunk):
    """Every TLB more than 16 ways (17 to 128, sets 1 to 5, LRU, FIFO and random), the SLB too:
    the direct index (DIRECT_*: these layouts are small) and recency rings against the
    reference's plain lists. Regions are 0, 1 or 3 pages apart or 256 MiB / 1 GiB apart, so two
    regions often share an SLB segment, which must get one number."""
    test_kernel_matches_reference.hypothesis.inner_test(case, chunk)


@settings(max_examples=min(settings().max_examples, 40))
@given(cases(wide=True), st.sampled_from([1, 7, 1 << 20]))
def test_wide_structures_hash_table_match_reference(case, chunk):
    """The same with no direct index allowed (DIRECT_MAX = 0, as for a layout of more than 2**24
    granules): every wide structure finds its tags through its hash table (LIST_*)."""
    m, layout = case[0], case[1]
    old, E.DIRECT_MAX = E.DIRECT_MAX, 0
    try:
        cfg = E.kernel_inputs(m, layout, 0)[0]
        assert not np.isin(cfg.st_mode, [K.DIRECT_LRU, K.DIRECT_FIFO]).any()
        test_kernel_matches_reference.hypothesis.inner_test(case, chunk)
    finally:
        E.DIRECT_MAX = old


def test_direct_index_is_chosen_by_layout_size():
    """Wide structures index their entries directly up to DIRECT_MAX granules, then keep the table
    (an LRU SLB keeps stamps); all give the reference's counts (the tests above)."""
    m = pagesim.machine("power8")
    small = Layout.single(1 << 30, 4 * KIB, start=1 << 40)
    slb = len(m.structures)
    tlbs = [i for i, s in enumerate(m.structures) if s.ways > 16]
    cfg, st = E.kernel_inputs(m, small, 0)[:2]
    assert cfg.st_mode[tlbs].tolist() == [K.DIRECT_LRU] * len(tlbs) and cfg.st_mode[slb] == K.STAMP_LRU
    b = cfg.st_base[slb]
    assert st.links[2 * b : 2 * b + 32].tolist() == list(range(-32, 0))  # empty ways oldest, way 0 first
    big = Layout.single((E.DIRECT_MAX + 1) * 4 * KIB, 4 * KIB, start=1 << 40)
    cfg = E.kernel_inputs(m, big, 0)[0]
    assert cfg.st_mode[tlbs].tolist() == [K.LIST_LRU] * len(tlbs)
    assert cfg.st_mode[slb] == K.STAMP_LRU  # 4 segments of 256 MiB: still direct
    assert cfg.idx_off.shape == (slb + 1, 1)
    assert E.kernel_inputs(m, small, 0, direct=False)[0].st_mode[tlbs + [slb]].tolist() == [K.LIST_LRU] * (len(tlbs) + 1)


@given(machines())
def test_one_page_size_placement(m):
    """MachineParts.placed: no two structures share a slot or a recency word, each fits the arrays
    and starts with the initial words and rings of the full placement, and each data chain
    position starts at one place for every page size."""
    mp = E.MachineParts(m)
    full = mp.config
    starts = {}
    for z in range(mp.nk):
        config, order, links, slots = mp.placed(z)
        sets, pways = config["st_sets"], config["st_pways"]
        for base, size, total in ((config["st_base"], sets * pways, slots), (config["st_obase"], sets, order.shape[0])):
            spans = sorted(zip(base.tolist(), (base + size).tolist()))
            assert all(end <= nxt for (_, end), (nxt, _) in zip(spans, spans[1:]))
            assert all(end <= total for _, end in spans)
        for s in range(mp.ns):
            o, fo, n = int(config["st_obase"][s]), int(full["st_obase"][s]), int(sets[s])
            assert order[o : o + n].tolist() == mp.order[fo : fo + n].tolist()
            assert config["set_hash"][o : o + n].tolist() == full["set_hash"][fo : fo + n].tolist()
            if links.shape[0] > 1:
                b, fb, w = 2 * int(config["st_base"][s]), 2 * int(full["st_base"][s]), 2 * int(sets[s] * pways[s])
                assert links[b : b + w].tolist() == mp.links[fb : fb + w].tolist()
        for j, s in enumerate(int(x) for x in config["chain"][0, z] if x >= 0):
            assert starts.setdefault(j, (config["st_base"][s], config["st_obase"][s])) == (config["st_base"][s], config["st_obase"][s])
        for s in range(len(m.structures), mp.ns):  # the SLB and the page-walk caches: placed as always
            assert (config["st_base"][s], config["st_obase"][s]) == (full["st_base"][s], full["st_obase"][s])


def test_granule_numbers_shared_only_by_neighbours():
    """Two regions in one 256 MiB segment share its number; a gap gives the next number."""
    seg = 1 << 28
    regs = Layout((Region(seg, 4096, 4096, "a"), Region(seg + 8192, 4096, 4096, "b"), Region(3 * seg, seg + 4096, 4096, "c"))).regions
    off, n = E.granule_offsets(regs, [28, 28, 28])
    assert [(r.start >> 28) + o for r, o in zip(regs, off)] == [0, 0, 1]
    assert ((regs[2].end - 1) >> 28) + off[2] == 2 and n == 3
    off, n = E.granule_offsets(regs, [12, None, 12])  # pages: never shared; an unused region gets none
    assert (regs[0].start >> 12) + off[0] == 0 and (regs[2].start >> 12) + off[2] == 1 and n == 1 + (seg + 4096) // 4096


def _presets_cases():
    rng = np.random.default_rng(5)
    for name in pagesim.machines():
        m = pagesim.machine(name)
        regions, at = [], 1 << 36
        for i, p in enumerate(m.page_sizes[:3]):
            at = -(-at // p) * p
            regions.append(Region(at, min(4, max(1, (64 << 20) // p)) * p, p, f"r{i}"))
            at += regions[-1].length + (1 << 30)
        layout = Layout(tuple(regions))
        addrs = []
        for _ in range(3000):
            r = regions[int(rng.integers(len(regions)))]
            addrs.append(r.start + int(rng.integers(min(r.length, 8 << 20))))
        yield pytest.param(m, layout, np.array(addrs, dtype=np.uint64), rng.integers(0, 2, len(addrs)).astype(np.uint8), id=name)


@pytest.mark.parametrize("m,layout,addrs,kinds", list(_presets_cases()))
def test_presets_match_reference(m, layout, addrs, kinds):
    ds = pagesim.simulate(m, addresses=addrs, kinds=kinds, layout=layout, seed=3)
    got, touched = dataset_counters(ds)
    m_eff, _ = pagesim.simulate.__wrapped__ if hasattr(pagesim.simulate, "__wrapped__") else (None, None)
    from pagesim.engine.stages import resolve_programmable

    m_eff, _ = resolve_programmable(m, layout)
    want, ref_touched = reference_simulate(m_eff, layout, [int(a) for a in addrs], list(kinds), 3)
    assert got == want
    assert touched == ref_touched


def test_structure_first_for_one_kind_later_for_the_other():
    """Hand-checked: D1 (data) then U2 (unified, 2 sets of 1 way). Instructions look up U2 first.
    instr X walks and fills U2; data X+2 pages misses D1, maps to U2's same set and evicts X;
    instr X again must miss U2 and walk (2 instruction walks, no U2 hit). A fast path kept across
    the data access would count a U2 hit and 1 walk."""
    m = Machine(
        name="cross",
        title="data-only L1 under a unified L2",
        page_sizes=(4096,),
        base_page=4096,
        structures=(Structure("D1", 1, "data", 2, 2, ("4K",)), Structure("U2", 2, "unified", 2, 1, ("4K",))),
        walker=Walker("radix", level_bits=(9, 9, 9, 9), base_shift=12),
    )
    x = 1 << 33
    layout = Layout((Region(x, 1 << 20, 4096),))
    ds = pagesim.simulate(m, addresses=np.array([x, x + 2 * 4096, x], dtype=np.uint64), kinds=np.array([1, 0, 1]), layout=layout)
    assert ds["walks"].sel(side="instr").item() == 2
    assert ds["walks"].sel(side="data").item() == 1
    assert ds["hits"].sel(structure="U2").item() == 0


@pytest.mark.parametrize("name", ["skylake", "golden-cove"])
def test_code_on_one_1g_page_beside_data_on_many(name):
    """Skylake looks instruction 1G pages up in the STLB first, data 1G pages in the L1 DTLB and then
    the STLB: code on one 1G page and data over 64 must agree with the reference model (this
    case once gave 1 instruction walk for the reference's 256 on Skylake)."""
    m = pagesim.machine(name)
    g = 1 << 30
    code, data = Region(1 << 40, g, g, "code"), Region(1 << 41, 64 * g, g, "data")
    layout = Layout((code, data))
    rng = np.random.default_rng(1)
    n = 20_000
    kinds = (rng.random(n) < 0.3).astype(np.uint8)
    addrs = np.where(kinds == 1, code.start + rng.integers(0, g, n), data.start + rng.integers(0, 64 * g, n)).astype(np.uint64)
    ds = pagesim.simulate(m, addresses=addrs, kinds=kinds, layout=layout)
    got, touched = dataset_counters(ds)
    want, ref_touched = reference_simulate(m, layout, [int(a) for a in addrs], list(kinds), 0)
    assert got == want
    assert touched == ref_touched


@pytest.mark.parametrize("where", ["tlb", "pwc", "slb"])
def test_specialised_random_replacement_wider_than_32_ways(where):
    """A random-replacement structure of 33+ ways failed to compile in a
    specialised kernel (its tag search accepted at most 32 lanes); now searched 32 lanes at a time."""
    tlb = Structure("TLB", 1, "data", 36 if where == "tlb" else 4, 36 if where == "tlb" else 4, (4 * KIB,), "random")
    walker = (
        Walker("radix", level_bits=(9, 9, 9, 9), pwc=(PageWalkCache("pde", 3, 33, 33, "random"),))
        if where == "pwc"
        else Walker("hashed", hpt_ptegs=64)
        if where == "slb"
        else Walker("vhpt")
    )
    slb = Structure("SLB", 1, "unified", 33, 33, (4 * KIB,), "random") if where == "slb" else None
    m = Machine("r", "r", (4 * KIB,), 4 * KIB, (tlb,), walker, slb=slb)
    layout = Layout((Region(1 << 30, 64 << 20, 4 * KIB, "a"), Region(5 << 30, 64 << 20, 4 * KIB, "b")))
    rng = np.random.default_rng(1)
    addrs = np.concatenate([r.start + rng.integers(0, 1 << 23, 1500) for r in layout.regions]).astype(np.uint64)
    rng.shuffle(addrs)
    ds = pagesim.simulate(m, addresses=addrs, layout=layout, seed=2, specialize=True)
    got, touched = dataset_counters(ds)
    want, ref_touched = reference_simulate(m, layout, [int(a) for a in addrs], None, 2)
    assert got == want and touched == ref_touched
