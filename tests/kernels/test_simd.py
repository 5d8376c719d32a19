"""The vector tag search (pagesim._kernels.simd.find_way) against a plain search: every set width
compiled as a constant (one vector compare), tags found at every way, absent, repeated, and padding
(-1); a width not known at compile time, or too wide, fails to compile."""

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pagesim._kernels.simd import MAX_LANES, MAX_MIN_LANES, find_way, min_way


def plain(tags, base, ways, tag):
    for w in range(ways):
        if tags[base + w] == tag:
            return w
    return -1


def constant_width(ways):
    # a literal width, as the specialised kernels write it in
    src = f"def f(tags, base, tag):\n    return find_way(tags, base, {ways}, tag)\n"
    ns = {"find_way": find_way}
    exec(src, ns)  # noqa: S102 - the test's own source
    return numba.njit(ns["f"])


@numba.njit
def runtime_width(tags, base, ways, tag):
    return find_way(tags, base, ways, tag)


@pytest.mark.parametrize("ways", [1, 3, 4, 8, 12, 16, 20, 32, 33, 36, 64, 100, 1024])
def test_find_way_matches_a_plain_search(ways):
    rng = np.random.default_rng(ways)
    f = constant_width(ways)
    tags = rng.integers(-1, 40, 10 * ways + 7).astype(np.int64)
    for base in range(0, tags.size - ways + 1, 3):
        for tag in range(-1, 41):
            assert f(tags, base, tag) == plain(tags, base, ways, tag), (ways, base, tag)


def test_width_must_be_a_constant_within_the_vector():
    tags = np.zeros(64, dtype=np.int64)
    with pytest.raises(numba.core.errors.TypingError, match=f"ways must be a constant from 1 to {MAX_LANES}"):
        runtime_width(tags, 0, 4, 0)
    with pytest.raises(numba.core.errors.TypingError, match=f"ways must be a constant from 1 to {MAX_LANES}"):
        constant_width(MAX_LANES + 4)(tags, 0, 0)


def min_constant_width(ways):
    src = f"def f(arr, base):\n    return min_way(arr, base, {ways})\n"
    ns = {"min_way": min_way}
    exec(src, ns)  # noqa: S102 - the test's own source
    return numba.njit(ns["f"])


@pytest.mark.parametrize("ways", [1, 4, 12, 20, 32, 48, 64])
def test_min_way_is_the_first_minimum(ways):
    """The STAMP_LRU victim: the lowest lane holding the minimum, repeats and int64 extremes included."""
    rng = np.random.default_rng(ways)
    f = min_constant_width(ways)
    big = np.iinfo(np.int64).max
    for trial in range(200):
        arr = rng.integers(-3, 4, 3 * ways + 5).astype(np.int64)
        if trial % 3 == 0:
            arr[rng.integers(arr.size, size=ways // 2 + 1)] = big
        if trial % 5 == 0:
            arr[rng.integers(arr.size)] = -big - 1
        for base in range(0, arr.size - ways + 1, 1 + ways // 3):
            assert f(arr, base) == int(np.argmin(arr[base : base + ways])), (ways, base)


def test_min_way_width_must_be_a_constant_within_the_vector():
    arr = np.zeros(128, dtype=np.int64)
    with pytest.raises(numba.core.errors.TypingError, match="ways must be a constant from 1 to 64"):
        min_constant_width(MAX_MIN_LANES + 4)(arr, 0)


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 4), st.lists(st.integers(0, 12), min_size=1, max_size=60))
def test_lane_lookup_is_an_lru_list(ways, keys):
    """rules.lane_lookup (a set of up to 4 ways kept as one word of 16-bit lanes) against a plain
    LRU list: the same hits, and the word holds the list's tags, most recent in the low lane, empty
    lanes (0xFFFF) above them."""
    from pagesim._kernels.rules import LANE_EMPTY, lane_lookup

    w, lru = np.uint64(0xFFFF_FFFF_FFFF_FFFF), []
    for k in keys:
        hit, w = lane_lookup(np.uint64(w), k, ways)  # compiled, as the replay runs it (it returns a Python int)
        assert bool(hit) == (k in lru)
        if k in lru:
            lru.remove(k)
        lru = [k, *lru][:ways]
        lanes = [(int(w) >> (16 * i)) & 0xFFFF for i in range(4)]
        assert lanes == lru + [LANE_EMPTY] * (4 - len(lru))
