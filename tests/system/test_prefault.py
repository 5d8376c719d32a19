"""Fault-around: POWER's 64 KiB emulation mode maps 16 contiguous 4 KiB pages per fault
(000_1774b52266f446e5.txt, Page Fault Handling)."""

import numpy as np
import pytest

import pagesim
from pagesim import Layout, Region


def test_emulated_64k_page_one_fault_sixteen_pages():
    ds = pagesim.simulate("power6", "touch", size="64K", pattern="memset", page_size="4K", fault_around=16)
    assert int(ds["faults"].sum()) == 1
    assert int(ds["prefaulted"].sum()) == 15
    assert int(ds["prefaulted_untouched"].sum()) == 0
    assert int(ds["pages_touched"].sum()) == 16


def test_prefaulted_but_unwanted_pages_hold_memory():
    # one byte touched in each of 4 emulated 64 KiB pages: 4 faults, 60 pages prefaulted and never used
    base = 1 << 40
    addrs = np.array([base + i * 65536 + 100 for i in range(4)], dtype=np.uint64)
    ds = pagesim.simulate("power6", addresses=addrs, layout=Layout.single("256K", "4K", start=base, fault_around=16))
    assert int(ds["faults"].sum()) == 4
    assert int(ds["prefaulted_untouched"].sum()) == 60
    assert int(ds["prefault_waste"].sum()) == 60 * 4096


def test_group_is_aligned_in_the_address_space_and_clipped_to_the_region():
    # region starts 8 KiB past a 64 KiB boundary and is 16 KiB long: the group is clipped to it
    base = (1 << 40) + 8192
    ds = pagesim.simulate("power6", addresses=np.array([base], dtype=np.uint64), layout=Layout((Region(base, "16K", "4K", "r", fault_around=16),)))
    assert int(ds["faults"].sum()) == 1 and int(ds["prefaulted"].sum()) == 3


def test_fault_around_costs_zeroing_for_every_mapped_page():
    a = pagesim.simulate("power6", "touch", size="64K", pattern="memset", page_size="4K")
    b = pagesim.simulate("power6", "touch", size="64K", pattern="memset", page_size="4K", fault_around=16)
    assert float(b["cycles"].sel(component="fault").sum()) < float(a["cycles"].sel(component="fault").sum())


def test_bad_fault_around():
    with pytest.raises(ValueError, match="fault_around=3 must be a power of two"):
        Region(0, "64K", "4K", "r", fault_around=3)
    with pytest.raises(ValueError, match="give fault_around/policy or layout, not both"):
        pagesim.simulate("power6", "touch", layout=Layout.single("64K", "4K"), fault_around=16)
