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
