"""THP and MPSS regions that are not a whole number of huge pages, or do not start on one, and
the page size a huge-page policy asks for.

Linux maps a huge page only for a huge-page-aligned range wholly inside the VMA; the rest of a
THP region is base pages. Counts measured on this project's machine (Linux 6.18, x86-64, THP in
madvise mode, a 2 MiB-aligned MADV_HUGEPAGE mapping touched with one write per 4 KiB page):
3M 257 faults, 5M 258, 17M 264, 1M 256, 2M+4K 2; 4M starting 1M past a 2M boundary 513.
tests/host/test_host.py asks the running kernel again.
"""

import copy
import json
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from twins.reference_os import reference_backing, reference_faults

import pagesim
from pagesim import Layout, PhysicalMemory, Region
from pagesim.system.paging import default_huge_page, resolve

K, M = 1 << 10, 1 << 20
BASE = 1 << 40  # 1 GiB-aligned


@pytest.mark.parametrize("size,faults", [("3M", 257), ("5M", 258), ("17M", 264), ("1M", 256), ("2M", 1), (2 * M + 4 * K, 2), ("64M", 32)])
def test_memset_of_a_thp_region_faults_as_linux(size, faults):
    ds = pagesim.simulate("zen4", "touch", size=size, pattern="memset", page_size="2M", policy="thp")
    assert int(ds["faults"].sum()) == faults
    # the same with a PhysicalMemory that has every block free: the same backing
    ds = pagesim.simulate("zen4", "touch", size=size, pattern="memset", page_size="2M", policy="thp", memory=PhysicalMemory("1G"))
    assert int(ds["faults"].sum()) == faults


@pytest.mark.parametrize(
    "offset,length,faults",
    [
        ("1M", "4M", 513),  # 1M head + one 2M page + 1M tail
        ("4K", "4M", 513),  # 511-page head, one 2M page, 1-page tail
        (2 * M - 4 * K, "6M", 514),  # 1-page head, two 2M pages, 511-page tail
        ("1M", "2M", 512),  # straddles a boundary: no 2M range lies inside, all 4K
    ],
)
def test_unaligned_start(offset, length, faults):
    lay = Layout((Region(BASE + pagesim.core.units.parse_size(offset), length, "2M", "[ anon ]", policy="thp"),))
    r = lay.regions[0]
    addrs = np.arange(r.start, r.end, 4096, dtype=np.uint64)
    for mem in (None, PhysicalMemory("1G")):
        ds = pagesim.simulate("zen4", addresses=addrs, layout=lay, memory=mem)
        assert int(ds["faults"].sum()) == faults


def test_pmap_shows_head_and_tail_as_base_pages():
    lay = Layout((Region(BASE + M, 4 * M, "2M", "[ anon ]", policy="thp"),))
    ds = pagesim.simulate("zen4", addresses=np.arange(BASE + M, BASE + 5 * M, 4096, dtype=np.uint64), layout=lay)
    rows = [ln.split() for ln in pagesim.pmap(ds).splitlines()[2:-2]]
    assert [(int(r[0], 16) - BASE, int(r[1]), int(r[2]), r[3]) for r in rows] == [(M, 1024, 1024, "4K"), (2 * M, 2048, 2048, "2M"), (4 * M, 1024, 1024, "4K")]
    assert json.loads(ds.attrs["requested_layout"])[0]["length"] == 4 * M  # what was asked for is kept beside it
    assert int(ds["pages_mapped"].sel(page_size=4096)) == 512 and int(ds["pages_mapped"].sel(page_size=2 * M)) == 1


def test_fragmented_memory_tail_is_no_fallback():
    # 3M on memory with no free 2M block: the one whole chunk falls back (1 fallback); the tail
    # was never a candidate, so it is not counted as one
    mem = PhysicalMemory("64M", "4K", "2M").fragment(held=0.95, seed=1)
    assert mem.free_blocks("2M") == 0
    ds = pagesim.simulate("zen4", "touch", size="3M", pattern="memset", page_size="2M", policy="thp", memory=mem)
    back = json.loads(ds.attrs["backing"])
    assert back["huge_fallbacks"] == {"buffer": 1} and back["huge_granted"] == {"buffer": 0}
    assert int(ds["faults"].sum()) == 768


# ----------------------------------------------------------------- the page size a policy asks for
def test_thp_policy_without_page_size_uses_the_machines_huge_page():
    ds = pagesim.simulate("zen4", "touch", size="64M", pattern="memset", policy="thp", memory=PhysicalMemory("1G"))
    assert json.loads(ds.attrs["backing"])["huge_granted"] == {"buffer": 32}
    assert int(ds["faults"].sum()) == 32
    assert default_huge_page(pagesim.machine("skylake"), "thp") == 2 * M
    assert default_huge_page(pagesim.machine("apple-m1"), "thp") == 32 * M  # 16K pages: the level above maps 32M
    assert default_huge_page(pagesim.machine("power8"), "thp") == 16 * M  # 003_e083a135b5a1afda.txt: THP (16M)
    ds = pagesim.simulate("power8", "touch", size="16M", pattern="memset", policy="thp")
    assert int(ds["faults"].sum()) == 1


def test_base_page_size_with_a_huge_policy_is_refused():
    for policy in ("thp", "mpss", "hugetlb"):
        with pytest.raises(ValueError, match=rf"page_size=4K with policy='{policy}'.*base page 4K of machine 'zen4'; allowed: 2M, 1G"):
            pagesim.simulate("zen4", "touch", size="64M", page_size="4K", policy=policy)
    with pytest.raises(ValueError, match=r"region 'r' page_size=4K with policy='thp'.*allowed: 2M, 1G"):
        pagesim.simulate("zen4", "touch", size="64K", layout=Layout((Region(BASE, "64K", "4K", "r", policy="thp"),)))
    with pytest.raises(ValueError, match=r"policy='mpss' without page_size: machine 'ultrasparc-iii-cu' \(tsb page table\).*one of 64K, 512K, 4M"):
        pagesim.simulate("ultrasparc-iii-cu", "touch", size="8M", policy="mpss")
    with pytest.raises(ValueError, match=r"page_size=4K with policy='thp': a thp region's page_size is the huge page .* base page 4K"):
        resolve(Layout((Region(BASE, "64K", "4K", "r", policy="thp"),)), [], PhysicalMemory("1G"), 4096)


def test_thp_region_bounds_and_fault_around_are_checked():
    with pytest.raises(ValueError, match=r"with policy='thp' does not start and end on the base page 4K of machine 'zen4'"):
        pagesim.simulate("zen4", "touch", size="1M", layout=Layout((Region(BASE + 512, "1M", "2M", "r", policy="thp"),)))
    with pytest.raises(ValueError, match=r"fault_around=16 with policy='thp': fault-around applies to policy='base' regions only"):
        pagesim.simulate("zen4", "touch", size="4M", policy="thp", fault_around=16)
    with pytest.raises(ValueError, match=r"is not a multiple of its page size 2M"):  # hugetlb still takes whole pages
        Region(BASE, "3M", "2M", policy="hugetlb")


def test_policy_applies_to_address_and_trace_layouts():
    # addresses= used to drop policy= silently: the layout covering the addresses had 'base' regions
    mem = PhysicalMemory("128M", "4K", "2M").fragment(held=0.9, seed=1)
    assert mem.free_blocks("2M") == 0
    addrs = np.arange(BASE, BASE + 4 * M, 4096, dtype=np.uint64)
    ds = pagesim.simulate("zen4", addresses=addrs, page_size="2M", policy="thp", memory=mem)
    assert sum(json.loads(ds.attrs["backing"])["huge_fallbacks"].values()) == 2
    assert int(ds["faults"].sum()) == 1024


# ----------------------------------------------------------------- the OS stage against its reference
@st.composite
def os_cases(draw):
    regions, at = [], BASE
    for i in range(draw(st.integers(1, 3))):
        policy = draw(st.sampled_from(["thp", "thp", "mpss", "base"]))
        if policy == "base":  # base pages only: a 2M base region on fragmented memory has nowhere to go
            regions.append(Region(at, draw(st.integers(1, 1024)) * 4 * K, "4K", f"r{i}"))
        else:
            head = draw(st.sampled_from([0, 1, 255, 256, 511])) * 4 * K
            pages = draw(st.one_of(st.integers(1, 2048), st.sampled_from([511, 512, 513, 1023, 1024, 1025])))
            regions.append(Region(at + head, pages * 4 * K, "2M", f"r{i}", policy=policy))
        at += 1 << 30
    lay = Layout(tuple(regions))
    rng = np.random.default_rng(draw(st.integers(0, 2**32)))
    addrs = []
    for _ in range(draw(st.integers(1, 200))):
        r = regions[int(rng.integers(len(regions)))]
        if rng.random() < 0.05:  # a run of consecutive pages, as memset touches them
            a0 = r.start + int(rng.integers(r.length)) // 4096 * 4096
            addrs += list(range(a0, min(r.end, a0 + int(rng.integers(1, 600)) * 4096), 4096))
        else:
            addrs.append(r.start + int(rng.integers(r.length)))
    mem = PhysicalMemory("256M", "4K", "2M").fragment(  # 0.9 held leaves 25M, more than the regions' 24M at most
        held=draw(st.sampled_from([0.0, 0.5, 0.8, 0.9])),
        placement=draw(st.sampled_from(["scattered", "caged"])),
        movable=draw(st.sampled_from([0.0, 0.8])),
        seed=draw(st.integers(0, 100)),
    )
    return lay, addrs, mem, draw(st.booleans())


@given(os_cases())
def test_os_stage_matches_reference(case):
    lay, addrs, mem, compaction = case
    chunks = [(np.array(addrs, dtype=np.uint64), None)]
    got_layout, report, got_mem = resolve(lay, chunks, copy.deepcopy(mem), 4096, compaction)
    huge, granted, fallbacks, ref_state = reference_backing(lay, addrs, copy.deepcopy(mem), 4096, compaction)
    assert (got_mem.state == ref_state).all()
    got_huge = set()
    for piece in got_layout.regions:
        i = next(i for i, r in enumerate(lay.regions) if r.start <= piece.start < r.end)
        if lay.regions[i].policy in ("thp", "mpss") and piece.page_size == 2 * M:
            got_huge |= {(i, piece.start + j * piece.page_size) for j in range(piece.pages)}
    assert got_huge == huge
    assert {k: v for k, v in report["huge_granted"].items() if v} == granted
    assert {k: v for k, v in report["huge_fallbacks"].items() if v} == fallbacks
    # the backing covers exactly what was asked for, every piece on its own page size
    assert sum(p.length for p in got_layout.regions) == sum(r.length for r in lay.regions)
    assert all(p.start % p.page_size == 0 and p.length % p.page_size == 0 for p in got_layout.regions)
    # end to end: the faults the translation stage counts on that backing
    a = np.array(addrs, dtype=np.uint64)
    ds = pagesim.simulate("zen4", addresses=a, layout=lay, memory=mem, compaction=compaction)
    assert int(ds["faults"].sum()) == reference_faults(lay, addrs, 4096, huge)
    # without a PhysicalMemory every whole chunk is a huge page
    everything, *_ = reference_backing(lay, addrs, PhysicalMemory("1G", "4K", "2M"), 4096)
    ds = pagesim.simulate("zen4", addresses=a, layout=lay)
    assert int(ds["faults"].sum()) == reference_faults(lay, addrs, 4096, everything)


def test_processes_back_the_tail_with_base_pages():
    from pagesim.engine.processes import simulate_processes

    lay = Layout((Region(BASE, "3M", "2M", "buffer", policy="thp"),))
    ds = simulate_processes("zen4", "touch", size="3M", pattern="memset", processes=2, quantum=100, layout=lay)
    assert ds["faults_per_process"].values.tolist() == [257, 257]


def test_sizes_may_be_sums():
    from pagesim.core.units import parse_size

    assert parse_size("2M+4K") == 2 * M + 4 * K and parse_size("1 GiB + 2 MiB") == (1 << 30) + 2 * M
    for bad in ("+4K", "2M+", "2M++4K"):
        with pytest.raises(ValueError, match=re.escape(f"size='{bad}' is not a size") + r".*or a sum such as '2M\+4K'"):
            parse_size(bad)
