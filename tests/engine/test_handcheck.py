"""Cases small enough to check by hand; several are the documents' own exact counts."""

import numpy as np
import pytest

import pagesim
from pagesim import Layout, Machine, PageWalkCache, Region, Structure, Walker

K4 = 4096


def test_power5plus_reach_is_8mib():
    # 000_1774b52266f446e5.txt, Introduction: 2048 entries x 4KB = 8MB; 16 times more with 64KB
    m = pagesim.machine("power5+")
    assert m.reach("4K", structure="TLB") == 8 << 20
    assert m.reach("64K", structure="TLB") == 16 * (8 << 20)
    assert (8 << 20) / (16 << 30) == pytest.approx(0.0005, rel=0.03)  # "0.05% of the total main memory"


@pytest.mark.parametrize("page,faults", [("4K", 16), ("64K", 1)])
def test_64k_region_faults(page, faults):
    # 000_1774b52266f446e5.txt, Page Fault Handling: 16 faults with 4KB pages, one with 64KB
    ds = pagesim.simulate("power6", "touch", size="64K", pattern="memset", page_size=page)
    assert int(ds["faults"].sum()) == faults
    assert int(ds["pages_touched"].sum()) == faults


@pytest.mark.parametrize("pattern", ["memset", "random"])
@pytest.mark.parametrize("page,faults", [("64K", 256), ("16M", 1)])
def test_16m_mmap_faults_and_dtlb_misses(page, faults, pattern):
    # 003_e083a135b5a1afda.txt §VII: 256 faults with 64K pages, 1 with 16M, continuous or random;
    # "dTLB load miss ... exactly same as page-faults"
    count = {"accesses": 200_000} if pattern == "random" else {}
    ds = pagesim.simulate("power8", "touch", size="16M", pattern=pattern, page_size=page, seed=4, **count)
    assert int(ds["faults"].sum()) == faults
    if pattern == "memset":
        assert int(ds["misses"].sel(structure="primary D-ERAT").sum()) == faults


def test_opteron_2m_has_8_entries_and_no_l2():
    k8 = pagesim.machine("opteron-k8")
    chain = k8.chain("data", 2 << 20)
    assert [s.entries for s in chain] == [8]
    assert sum(s.entries for s in k8.chain("data", 4096)) + sum(s.entries for s in k8.chain("instr", 4096)) == 64 + 1024


def _one_level(entries, ways, policy="lru"):
    return Machine(
        name="hand", title="hand", page_sizes=(K4,), base_page=K4, structures=(Structure("T", 1, "data", entries, ways, (K4,), policy),), walker=Walker("vhpt")
    )


def test_lru_by_hand():
    # 2-entry fully associative LRU; pages A B A C B: A miss, B miss, A hit, C miss (evicts B), B miss
    base = 1 << 32
    A, B, C = base, base + K4, base + 2 * K4
    ds = pagesim.simulate(_one_level(2, 2), addresses=np.array([A, B, A, C, B], dtype=np.uint64), layout=Layout.single(3 * K4, K4, start=base))
    assert int(ds["hits"].sum()) == 1 and int(ds["misses"].sum()) == 4
    assert int(ds["faults"].sum()) == 3 and int(ds["walks"].sum()) == 4


def test_fifo_by_hand():
    # same trace, FIFO: the hit on A does not refresh it, so C evicts A and B then hits
    base = 1 << 32
    A, B, C = base, base + K4, base + 2 * K4
    ds = pagesim.simulate(_one_level(2, 2, "fifo"), addresses=np.array([A, B, A, C, B], dtype=np.uint64), layout=Layout.single(3 * K4, K4, start=base))
    assert int(ds["hits"].sum()) == 2 and int(ds["misses"].sum()) == 3


def test_radix_walk_references():
    # x86-64: 4 references for a 4K page, 3 for 2M, with no page-walk cache (the K8 preset has none)
    m = pagesim.machine("opteron-k8")
    assert m.walker.pwc == () and "walker.pwc" in m.assumptions
    ds4 = pagesim.simulate(m, "touch", size="4K", page_size="4K")
    ds2 = pagesim.simulate(m, "touch", size="2M", page_size="2M")
    assert int(ds4["walk_refs"].sum()) == 4 and int(ds2["walk_refs"].sum()) == 3
    # second 4K page in the same 2M region: without a page-walk cache, 4 references again
    base = 1 << 40
    ds = pagesim.simulate(m, addresses=np.array([base, base + K4], dtype=np.uint64), layout=Layout.single(2 * K4, K4, start=base))
    assert ds["walk_refs"].sum().item() == 4 + 4


def test_pde_cache_leaves_one_reference():
    # second 4K page in the same 2M region: the PDE cache hits, one reference (the PTE).
    # A what-if K8 with a 16-entry PDE cache (the K8 preset has none: its walker's source says why)
    k8 = pagesim.machine("opteron-k8")
    m = k8.derive(walker=Walker("radix", level_bits=(9, 9, 9, 9), pwc=(PageWalkCache("PDE cache", skip=3, entries=16, ways=16),)))
    base = 1 << 40
    ds = pagesim.simulate(m, addresses=np.array([base, base + K4], dtype=np.uint64), layout=Layout.single(2 * K4, K4, start=base))
    assert ds["walk_refs"].sum().item() == 4 + 1
    assert int(ds["pwc_hits"].sum()) == 1


def test_tsb_hit_after_tlb_eviction():
    # UltraSPARC II: 64-entry dTLB; touch 65 pages, then the first again: a TLB miss that the TSB holds
    base = 1 << 32
    addrs = [base + i * 8192 for i in range(65)] + [base]
    ds = pagesim.simulate("ultrasparc-ii", addresses=np.array(addrs, dtype=np.uint64), layout=Layout.single(65 * 8192, "8K", start=base))
    assert int(ds["tsb_misses"].sum()) == 65 and int(ds["tsb_hits"].sum()) == 1
    assert int(ds["walk_refs"].sum()) == 65 * 4 + 1


def test_itanium_l1_holds_4k_pieces_of_large_pages():
    # a 64K page: the L1 DTLB holds it as sixteen 4K pieces, the L2 as one entry
    base = 1 << 32
    addrs = [base + i * K4 for i in range(16)]
    ds = pagesim.simulate("itanium2", addresses=np.array(addrs, dtype=np.uint64), layout=Layout.single(64 << 10, "64K", start=base))
    assert int(ds["misses"].sel(structure="L1 DTLB").sum()) == 16
    assert int(ds["hits"].sel(structure="L2 DTLB").sum()) == 15
    assert int(ds["faults"].sum()) == 1


def test_ultrasparc_iii_cu_programs_t512_1_for_4m_heap():
    # 002_7166aff63bc805c7.txt: 8 or more 4M pages program the second 512-entry dTLB
    lay = Layout((Region(0x22000, 3960 * 1024, "8K", "[ heap ]"), Region(0x400000, 128 << 20, "4M", "[ heap ]")))
    ds = pagesim.simulate("ultrasparc-iii-cu", "random", working_set="1M", accesses=10, layout=lay)
    assert "T512_1" in ds.attrs["programmed"] and "4M" in ds.attrs["programmed"]
    small = Layout((Region(0x400000, 4 << 20, "4M", "[ heap ]"),))
    assert pagesim.simulate("ultrasparc-iii-cu", "random", working_set="1M", accesses=10, layout=small).attrs["programmed"] == "{}"


def test_counters_add_up():
    ds = pagesim.simulate("skylake", "random", working_set="256M", accesses=50_000, seed=2)
    l1 = ds["hits"].sel(structure="L1 DTLB 4K") + ds["misses"].sel(structure="L1 DTLB 4K")
    assert int(l1.sum()) == 50_000 == int(ds["accesses"].sum())
    assert int(ds["misses"].sel(structure="STLB").sum()) == int(ds["walks"].sum())
