"""Physical memory, fragmentation scenarios, hugetlb pools and the backing the OS gives."""

import copy
import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from twins.reference_os import reference_backing

import pagesim
from pagesim import Layout, OutOfMemory, PhysicalMemory, Region
from pagesim.system.memory import FREE, MOVABLE
from pagesim.system.paging import resolve


def brute_force_block_free(state, order):
    size = 1 << order
    n = state.size // size
    return bool((state[: n * size].reshape(n, size) == FREE).all(axis=1).any())


@given(st.lists(st.tuples(st.booleans(), st.integers(0, 4)), max_size=120), st.integers(0, 2**31))
def test_buddy_allocator_matches_brute_force(ops, seed):
    m = PhysicalMemory(64 * 4096, "4K", "64K")  # 64 frames, orders 0..4
    rng = np.random.default_rng(seed)
    live = []
    for is_alloc, order in ops:
        if is_alloc or not live:
            expect = brute_force_block_free(m.state, order)
            b = m.alloc(order)
            assert (b is not None) == expect
            if b is not None:
                assert b % (1 << order) == 0
                live.append((b, order))
        else:
            b, order = live.pop(int(rng.integers(len(live))))
            m.free(b, order)
        # free lists cover exactly the free frames, disjointly
        cover = np.zeros(m.nframes, dtype=int)
        for start, o in m._heads.items():
            cover[start : start + (1 << o)] += 1
        assert (cover == (m.state == FREE)).all()
        for k in range(m.max_order + 1):
            assert (m.free_blocks(4096 << k) > 0) == brute_force_block_free(m.state, k)


def test_scenarios():
    fresh = PhysicalMemory("1G", "4K", "4M")
    assert fresh.free_blocks("2M") == 512
    scattered = fresh.fragment(held=0.95, seed=3)
    assert scattered.free_blocks("2M") == 0 and scattered.free_frames() == fresh.nframes - round(0.95 * fresh.nframes)
    caged = fresh.fragment(held=0.5, placement="caged")
    assert caged.free_blocks("2M") == 256  # the cage leaves the upper half whole
    assert fresh.free_blocks("2M") == 512  # fragment() returns a copy


def test_hugetlb_reservation_fails_at_reservation_time():
    fresh = PhysicalMemory("1G", "4K", "4M")
    with pytest.raises(OutOfMemory, match="larger than memory"):
        fresh.reserve_hugetlb(600, "2M")
    with pytest.raises(OutOfMemory, match="failed after 0: no free aligned 2M block"):
        fresh.fragment(held=0.95, seed=1).reserve_hugetlb(1, "2M")
    pool = fresh.reserve_hugetlb(8, "2M")
    assert len(pool.hugetlb_pool[2 << 20]) == 8
    lay = Layout((Region(1 << 40, "32M", "2M", "pool", policy="hugetlb"),))
    with pytest.raises(OutOfMemory, match="needs 16 hugetlb pages of 2M but the pool has 8"):
        pagesim.simulate("zen4", "touch", layout=lay, memory=pool)


def _layout():
    return Layout(
        (
            Region(1 << 40, "8M", "2M", "thp", policy="thp"),
            Region((1 << 40) + (1 << 30), "64K", "4K", "plain"),
            Region((1 << 40) + (2 << 30), "8M", "2M", "mpss", policy="mpss"),
        )
    )


@pytest.mark.parametrize(
    "held,placement,movable,compaction", [(0.0, "scattered", 0, False), (0.9, "scattered", 0, False), (0.6, "scattered", 0.8, True), (0.4, "caged", 0, False)]
)
def test_backing_matches_per_access_reference(held, placement, movable, compaction):
    mem = PhysicalMemory("64M", "4K", "2M").fragment(held=held, placement=placement, movable=movable, seed=2)
    lay = _layout()
    rng = np.random.default_rng(7)
    addrs = []
    for _ in range(3000):
        r = lay.regions[int(rng.integers(3))]
        addrs.append(r.start + int(rng.integers(r.length)))
    chunks = [(np.array(addrs, dtype=np.uint64), None)]
    got_layout, report, got_mem = resolve(lay, chunks, copy.deepcopy(mem), 4096, compaction)
    huge, granted, fallbacks, ref_state = reference_backing(lay, addrs, copy.deepcopy(mem), 4096, compaction)
    assert (got_mem.state == ref_state).all()
    got_huge = {
        (i, r.start + j * r.page_size)
        for r in got_layout.regions
        if r.page_size == 2 << 20
        for i, orig in enumerate(lay.regions)
        if orig.start <= r.start < orig.end
        for j in range(r.pages)
    }
    assert got_huge == huge
    assert {k: v for k, v in report["huge_granted"].items() if v} == granted
    assert {k: v for k, v in report["huge_fallbacks"].items() if v} == fallbacks


def test_power8_thp_under_pressure_falls_back():
    # 003_e083a135b5a1afda.txt: 16 MiB, 64K base pages. Fresh memory: one 16M THP fault. With 95%
    # of memory held by scattered pinned pages no 16M block is free: the region falls back to 64K.
    fresh = PhysicalMemory("8G", "64K", "16M")
    kw = dict(size="16M", pattern="memset", page_size="16M", policy="thp")
    assert int(pagesim.simulate("power8", "touch", memory=fresh, **kw)["faults"].sum()) == 1
    ds = pagesim.simulate("power8", "touch", memory=fresh.fragment(held=0.95, seed=1), **kw)
    assert int(ds["faults"].sum()) == 256
    assert "64K" in pagesim.pmap(ds) and json.loads(ds.attrs["backing"])["huge_fallbacks"]["buffer"] == 1
    # movable background pages and compaction: the huge page is had, at the cost of migration
    ds = pagesim.simulate("power8", "touch", memory=fresh.fragment(held=0.95, movable=1.0, seed=1), compaction=True, **kw)
    assert int(ds["faults"].sum()) == 1 and int(ds["pages_migrated"]) > 0


def test_solaris_kernel_cage_keeps_large_pages_available():
    # 002_7166aff63bc805c7.txt: locked small pages fragment memory; the kernel cage confines them
    fresh = PhysicalMemory("2G", "8K", "4M")
    kw = dict(working_set="128M", accesses=20000, page_size="4M", policy="mpss", seed=1)
    scattered = pagesim.simulate("ultrasparc-iii-cu", "random", memory=fresh.fragment(held=0.5, seed=1), **kw)
    caged = pagesim.simulate("ultrasparc-iii-cu", "random", memory=fresh.fragment(held=0.5, placement="caged"), **kw)
    assert json.loads(scattered.attrs["backing"])["huge_granted"]["table"] == 0
    assert json.loads(caged.attrs["backing"])["huge_granted"]["table"] == 32
    assert int(caged["walks"].sum()) < int(scattered["walks"].sum())


def test_memory_errors():
    with pytest.raises(ValueError, match="pagesim models at most 16777216"):
        PhysicalMemory("1T", "4K")
    with pytest.raises(ValueError, match=r"held=1.5 must be a fraction in \[0, 1\): the share of memory"):
        PhysicalMemory("1G").fragment(held=1.5)
    with pytest.raises(ValueError, match="placement='random'"):
        PhysicalMemory("1G").fragment(held=0.5, placement="random")
    with pytest.raises(ValueError, match="memory frames are 4K but the machine's base page is 64K"):
        pagesim.simulate("power8", "touch", memory=PhysicalMemory("1G", "4K"))
    with pytest.raises(OutOfMemory, match="memory is full"):
        pagesim.simulate("zen4", "touch", size="64M", page_size="4K", memory=PhysicalMemory("32M", "4K"))
    # apple-m1's THP is 32M (16K granule), more than the default max_block: the error says what would work
    with pytest.raises(ValueError, match=r"page_size=32M exceeds the allocator's max_block=16M, .*PhysicalMemory\('1G', frame='16K', max_block='32M'\)"):
        pagesim.simulate("apple-m1", "random", working_set="64M", accesses=1000, policy="thp", memory=PhysicalMemory("1G", frame="16K"))
    with pytest.raises(ValueError, match=r"page_size=8K is smaller than this memory's frames \(16K\): allowed 16K..16M"):
        PhysicalMemory("1G", frame="16K").order_of("8K")


@given(
    frames_log=st.integers(4, 12),
    extra=st.integers(0, 7),
    max_order=st.integers(0, 6),
    held=st.floats(0, 0.9),
    movable=st.sampled_from([0.0, 0.5, 1.0]),
    placement=st.sampled_from(["scattered", "caged"]),
    seed=st.integers(0, 2**20),
    ops=st.lists(st.tuples(st.sampled_from(["alloc", "compact", "free"]), st.integers(0, 6)), max_size=40),
)
def test_free_lists_and_compaction_as_the_push_by_push_reference(frames_log, extra, max_order, held, movable, placement, seed, ops):
    """The numpy rebuild of the free lists and compact() give the very heaps, heads, frame states and
    migration counts of the plain references in tests/twins/reference_os.py (the free lists rebuilt push by
    push, compaction's scanners walked frame by frame), whatever happens in between."""
    from twins.reference_os import reference_compact, reference_rebuild_free_lists

    nframes = (1 << frames_log) + extra
    max_order = min(max_order, frames_log)
    m = PhysicalMemory(nframes * 4096, "4K", 4096 << max_order).fragment(held, placement, movable=movable, seed=seed)
    ref = copy.deepcopy(m)
    assert (m._heads, m._heaps) == reference_rebuild_free_lists(m)
    live = []
    rng = np.random.default_rng(seed)
    for op, order in ops:
        order = min(order, max_order)
        if op == "alloc":
            got, want = m.alloc(order), ref.alloc(order)
            assert got == want
            if got is not None:
                live.append((got, order))
        elif op == "compact":
            assert m.compact(order) == reference_compact(ref, order, reference_rebuild_free_lists)
        elif live:
            b, o = live.pop(int(rng.integers(len(live))))
            m.free(b, o)
            ref.free(b, o)
        assert (m.state == ref.state).all() and m._heads == ref._heads and m._heaps == ref._heaps and m.migrated == ref.migrated


def test_deepcopy_shares_nothing_mutable():
    m = PhysicalMemory("1M", "4K", "64K").reserve_hugetlb(1, "64K").fragment(0.5, movable=0.5, seed=3)
    c = copy.deepcopy(m)
    assert c._heads == m._heads and c._heaps == m._heaps and (c.state == m.state).all() and c.hugetlb_pool == m.hugetlb_pool
    c.alloc(0)
    c.hugetlb_pool[65536].append(0)
    assert c._heads != m._heads and not (c.state == m.state).all() and c.hugetlb_pool != m.hugetlb_pool


def _huge_pages_by_compaction(mem, order, count, base_allocs=0, rng=None, compact=None):
    """What a THP fault sequence does to memory (as paging.resolve does): ``count`` times, an
    aligned 2**order block, compacting (with ``compact``, default mem.compact) when none is free;
    optionally up to ``base_allocs`` base pages allocated before each. Returns (blocks obtained,
    pages each compaction migrated, frames each vacated)."""
    compact = compact or (lambda o: mem.compact(o))
    got, moved, vacated = [], [], []
    for _ in range(count):
        for _ in range(int(rng.integers(base_allocs + 1)) if rng is not None else 0):
            mem.alloc(0)
        b = mem.alloc(order)
        if b is None:
            before = mem.state.copy()
            n = compact(order)
            if n is None:
                break
            moved.append(n)
            vacated.append(np.flatnonzero((before == MOVABLE) & (mem.state == FREE)))
            b = mem.alloc(order)
            assert b is not None
        got.append(b)
    return got, moved, vacated


def test_compaction_moves_each_page_once_4g():
    # 4 GiB half held by movable pages, 32 2M THP blocks freed by compaction: the pages migrated are
    # the movable pages those blocks held, each moved once to the far end of memory
    mem = PhysicalMemory("4G").fragment(0.5, movable=1.0)
    start = mem.state.copy()
    k = mem.order_of("2M")
    got, moved, vacated = _huge_pages_by_compaction(mem, k, 32)
    assert len(got) == 32 and len(moved) == 32
    held = sum(int(np.count_nonzero(start[b : b + (1 << k)] == MOVABLE)) for b in got)
    assert mem.migrated == sum(moved) == held == 8158
    ds = pagesim.simulate(
        "skylake", "touch", size="64M", pattern="memset", page_size="2M", policy="thp", memory=PhysicalMemory("4G").fragment(0.5, movable=1.0), compaction=True
    )
    assert int(ds["pages_migrated"]) == held and json.loads(ds.attrs["backing"])["huge_granted"]["buffer"] == 32


@given(
    frames_log=st.integers(6, 12),
    max_order=st.integers(1, 6),
    held=st.floats(0.05, 0.9),
    movable=st.sampled_from([0.5, 0.9, 1.0]),
    seed=st.integers(0, 2**20),
    base_allocs=st.integers(0, 3),
)
def test_compaction_migrates_only_the_movable_pages_of_the_blocks_it_frees(frames_log, max_order, held, movable, seed, base_allocs):
    """Whatever the memory, each compaction vacates movable pages that sat where they were at the
    start (none moved twice, none taken from a frame compaction filled), all of them inside the block
    it frees; the total is the movable pages those blocks held. The frame-by-frame reference gives
    the same counts and states."""
    from twins.reference_os import reference_compact, reference_rebuild_free_lists

    max_order = min(max_order, frames_log)
    mem = PhysicalMemory((1 << frames_log) * 4096, "4K", 4096 << max_order).fragment(held, movable=movable, seed=seed)
    ref = copy.deepcopy(mem)
    start = mem.state.copy()
    size = 1 << max_order
    got, moved, vacated = _huge_pages_by_compaction(mem, max_order, 1 << (frames_log - max_order), base_allocs, np.random.default_rng(seed))
    assert [v.size for v in vacated] == moved
    every = np.concatenate(vacated) if vacated else np.zeros(0, dtype=np.int64)
    assert np.unique(every).size == every.size and (start[every] == MOVABLE).all()
    assert all(v.size == 0 or (v[0] // size == v[-1] // size and v[0] // size * size in got) for v in vacated)
    assert mem.migrated == sum(moved) == sum(int(np.count_nonzero(start[b : b + size] == MOVABLE)) for b in got)
    # the same sequence against the frame-by-frame reference
    ref_compact = lambda o: reference_compact(ref, o, reference_rebuild_free_lists)  # noqa: E731
    want = _huge_pages_by_compaction(ref, max_order, 1 << (frames_log - max_order), base_allocs, np.random.default_rng(seed), ref_compact)
    assert want[0] == got and want[1] == moved and (ref.state == mem.state).all() and ref.migrated == mem.migrated


def test_free_and_alloc_refuse_what_would_hand_a_frame_out_twice():
    """free() of a frame never allocated, twice, with the wrong order or misaligned corrupted the
    free lists (16,385 frames handed out of 16,384); each is refused, naming what is wrong."""
    m = PhysicalMemory("64M")
    with pytest.raises(ValueError, match="frame 5 is already free"):
        m.free(5, 0)
    xs = [m.alloc(0) for _ in range(4)]
    with pytest.raises(ValueError, match="start=1 is not the start of a block of 2\\*\\*3 frames"):
        m.free(xs[1], 3)
    with pytest.raises(ValueError, match="frame 4 is already free"):
        m.free(0, 3)
    m.free(xs[1], 0)
    with pytest.raises(ValueError, match="frame 1 is already free"):
        m.free(xs[1], 0)
    for bad, err in (((-1, 0), ValueError), ((m.nframes, 0), ValueError), ((0, m.max_order + 1), ValueError), ((0.5, 0), TypeError)):
        with pytest.raises(err, match="start|order"):
            m.free(*bad)
    with pytest.raises(ValueError, match="order=-1"):
        m.alloc(-1)
    with pytest.raises(ValueError, match="owner=0"):
        m.alloc(0, owner=0)
    got = []
    while (b := m.alloc(0)) is not None:
        got.append(b)
    assert len(got) + 3 == m.nframes and len(set(got) | {0, 2, 3}) == m.nframes  # every frame once
