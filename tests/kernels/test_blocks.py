"""Laying out raw addresses: pagesim._kernels.regions.distinct_blocks (one pass, bitmap window plus
hash set) against numpy's sort-based np.unique, and Layout.covering_addresses on it."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import pagesim
from pagesim import Layout
from pagesim._kernels.regions import BITMAP_MIN, distinct_blocks, window_bits


def unique_blocks(a, shift):
    return np.unique(np.asarray(a, dtype=np.uint64) >> np.uint64(shift))


@given(st.lists(st.integers(0, (1 << 63) - 1), min_size=1, max_size=300), st.sampled_from([12, 16, 21, 30]))
def test_distinct_blocks_small(addrs, shift):
    a = np.array(addrs, dtype=np.uint64)
    assert np.array_equal(distinct_blocks(a, shift), unique_blocks(a, shift))


@given(st.integers(0, 2**32), st.sampled_from([8, 26, 40, 62]), st.integers(0, 5))
def test_distinct_blocks_bitmap_and_hash(seed, spread_bits, far):
    """Long arrays (bitmap window) with addresses inside and outside the window, at its edges and
    near 0 and 2**63."""
    rng = np.random.default_rng(seed)
    n = BITMAP_MIN + int(rng.integers(0, 5000))
    base = int(rng.integers(0, 1 << 62))
    a = (np.uint64(base) + rng.integers(0, 1 << spread_bits, n, dtype=np.uint64)) % np.uint64(1 << 63)
    edge = np.uint64(1 << (window_bits(n) - 1))
    first = a[0] >> np.uint64(21)
    extra = [first + edge, first + edge - np.uint64(1), first - edge if first >= edge else first, np.uint64(0), np.uint64((1 << 42) - 1)]
    for i, b in enumerate(extra[: far + 1]):
        a[1 + 7 * i] = b << np.uint64(21)
    assert np.array_equal(distinct_blocks(a, 21), unique_blocks(a, 21))


def test_window_grows_with_the_array():
    """The bitmap window: 2**12 blocks for short arrays, about 8 bits an address, 2**24 at most."""
    assert window_bits(BITMAP_MIN) == 19 and window_bits(100_000) == 20 and window_bits(10**6) == 23
    assert window_bits(1) == 12 and window_bits(10**9) == 24


def test_covering_addresses_no_copy_and_same_layout():
    rng = np.random.default_rng(3)
    a = ((1 << 40) + rng.integers(0, 1 << 33, 200_000)).astype(np.int64)
    a[:50] += 1 << 45  # a second, far group
    lay = Layout.covering_addresses(a, 4096)
    blocks = unique_blocks(a, 21).tolist()
    assert lay == Layout.from_blocks(blocks, 2 << 20, 4096)
    w = pagesim.sources.workloads.Addresses(addresses=a)
    assert np.shares_memory(w.addresses, a)  # int64 input is viewed, not copied
    ds = pagesim.simulate("skylake", addresses=a[:5000])
    assert int(ds["accesses"].sum()) == 5000


def test_blocks_colliding_in_the_seen_table():
    """Blocks with the same low bits take one slot of the table of blocks seen, in turn: each
    evicts the other, and a block met again after its eviction is still counted once. Inside and
    outside the bitmap window, short and long arrays."""
    from pagesim._kernels.regions import SEEN_BITS

    rng = np.random.default_rng(7)
    for n in (5000, BITMAP_MIN + 3):
        blocks = np.array([(k << SEEN_BITS) + 5 for k in range(6)] + [(1 << 40) + 5, 17, 17 + (1 << SEEN_BITS)], dtype=np.uint64)
        a = (blocks[rng.integers(0, blocks.size, n)] << np.uint64(21)) + rng.integers(0, 1 << 21, n, dtype=np.uint64)
        got = distinct_blocks(a, 21)
        assert np.array_equal(got, unique_blocks(a, 21)) and got.size == blocks.size


def test_split_at_cuts_regions_at_page_aligned_bounds_only():
    from pagesim import Region

    lay = Layout((Region(0, 8 << 20, 4096, "a", fault_around=4), Region(16 << 20, 4 << 20, 2 << 20, "b")))
    cut = lay.split_at([4096, 1 << 20, 17 << 20, 18 << 20, 1 << 40])
    assert [(r.start, r.end, r.name) for r in cut.regions] == [
        (0, 4096, "a"),
        (4096, 1 << 20, "a @0x1000"),
        (1 << 20, 8 << 20, "a @0x100000"),
        (16 << 20, 18 << 20, "b"),
        (18 << 20, 20 << 20, "b @0x1200000"),
    ]  # 17 MiB is inside a 2 MiB page of b: not a cut
    assert all(r.fault_around == 4 for r in cut.regions[:3]) and sum(r.pages for r in cut.regions) == sum(r.pages for r in lay.regions)
