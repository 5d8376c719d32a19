"""Memory pressure: RAM limit, clock and LRU reclaim, swap-outs and major faults."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from twins.reference_pressure import reference_pressure

import pagesim
from pagesim import Layout, Ram, Region
from pagesim.system.pressure import run

K = 1024


@st.composite
def layouts_and_traces(draw):
    sizes = [4 * K, 16 * K, 64 * K]
    regions, at = [], 1 << 30
    for i in range(draw(st.integers(1, 3))):
        p = draw(st.sampled_from(sizes))
        n = draw(st.integers(1, 12))
        regions.append(Region(at, n * p, p, f"r{i}"))
        at += -(-(n * p) // (64 * K)) * 64 * K + draw(st.integers(0, 3)) * 64 * K
    lay = Layout(tuple(regions))
    picks = draw(st.lists(st.tuples(st.integers(0, len(regions) - 1), st.integers(0, 2**20)), min_size=1, max_size=300))
    addrs = [regions[r].start + off % regions[r].length for r, off in picks]
    return lay, addrs


@given(layouts_and_traces(), st.integers(1, 40), st.sampled_from(["clock", "lru"]), st.integers(1, 7))
def test_pressure_matches_reference(lt, avail_units, reclaim, chunk):
    lay, addrs = lt
    biggest = max(r.page_size for r in lay.regions)
    available = max(biggest, avail_units * 4 * K)
    ram = Ram(available + (1 << 20), kernel="1M", reclaim=reclaim)
    a = np.array(addrs, dtype=np.uint64)
    got = run(lay, ((a[i : i + chunk], None) for i in range(0, a.size, chunk)), ram)
    assert got == reference_pressure(lay, addrs, available, reclaim)


def test_no_pressure_means_only_minor_faults():
    ds = pagesim.simulate("skylake", "random", working_set="4M", accesses=20_000, ram=Ram("1G"))
    assert int(ds["major_faults"]) == 0 and int(ds["swap_outs"]) == 0
    assert int(ds["minor_faults"]) == int(ds["faults"].sum()) == int(ds["pages_touched"].sum())
    assert float(ds["swap_share"]) == 0.0


def test_sequential_sweeps_over_a_small_ram_swap_every_page():
    # 2 passes over 8 MiB with 4 MiB for the program: LRU and clock both evict every page before
    # its reuse (the classic LRU worst case), so the second pass faults on every page again
    lay = Layout.single("8M", "4K")
    a = np.tile(np.arange(lay.regions[0].start, lay.regions[0].end, 4096, dtype=np.uint64), 2)
    for reclaim in ("lru", "clock"):
        got = run(lay, [(a, None)], Ram("5M", kernel="1M", reclaim=reclaim))
        assert got["minor_faults"] == 2048 and got["major_faults"] == 2048
        assert got["swap_outs"] == 4096 - 1024
        assert got["resident_peak"] == 4 << 20


def test_swap_is_charged():
    ram = Ram("40M", kernel="32M")
    ds = pagesim.simulate("skylake", "random", working_set="16M", accesses=50_000, ram=ram)
    assert int(ds["major_faults"]) > 0
    swap = float(ds["cycles"].sel(component="swap").sum())
    assert swap == int(ds["major_faults"]) * ram.swap_in_cycles + int(ds["swap_outs"]) * ram.swap_out_cycles
    assert 0 < float(ds["swap_share"]) < 1
    assert "major faults" in pagesim.summary(ds)


def test_huge_pages_swap_whole():
    lay = Layout.single("8M", "2M")
    a = np.tile(np.arange(lay.regions[0].start, lay.regions[0].end, 4096, dtype=np.uint64), 2)
    got = run(lay, [(a, None)], Ram("7M", kernel="1M", reclaim="lru"))
    assert got["minor_faults"] == 4 and got["major_faults"] == 4 and got["resident_peak"] == 6 << 20


def test_bad_ram():
    with pytest.raises(ValueError, match="ram limit=64M.*not above the kernel's own 64M"):
        Ram("64M")
    with pytest.raises(ValueError, match="ram reclaim='fifo' is not allowed: use one of 'clock', 'lru'"):
        Ram("1G", reclaim="fifo")
    with pytest.raises(ValueError, match="less than one 2M page"):
        pagesim.simulate("skylake", "random", working_set="4M", accesses=10, page_size="2M", ram=Ram("65M"))
    with pytest.raises(TypeError, match="ram must be a pagesim Ram"):
        pagesim.simulate("skylake", "random", working_set="4M", accesses=10, ram="1G")
    with pytest.raises(ValueError, match="ram swap_in_cycles=-1"):
        Ram("1G", swap_in_cycles=-1)
