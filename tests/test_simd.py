"""The vector tag search (pagesim._kernels.simd.find_way) against a plain search: every set width
compiled as a constant (one vector compare) and at run time (groups of four), tags found at every
way, absent, repeated, and padding (-1)."""

import numba
import numpy as np
import pytest

from pagesim._kernels.simd import MAX_LANES, find_way


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


@pytest.mark.parametrize("ways", [4, 8, 12, 16, 20, 32])
def test_find_way_matches_a_plain_search(ways):
    rng = np.random.default_rng(ways)
    f = constant_width(ways)
    tags = rng.integers(-1, 40, 10 * ways + 7).astype(np.int64)
    for base in range(0, tags.size - ways + 1, 3):
        for tag in range(-1, 41):
            want = plain(tags, base, ways, tag)
            assert f(tags, base, tag) == want, (ways, base, tag)
            assert runtime_width(tags, base, ways, tag) == want, (ways, base, tag)


def test_wider_than_the_vector_uses_the_groups():
    ways = MAX_LANES + 4
    f = constant_width(ways)
    tags = np.full(ways, 5, dtype=np.int64)
    tags[-1] = 9
    assert f(tags, 0, 9) == ways - 1 and f(tags, 0, 5) == 0 and f(tags, 0, 6) == -1
