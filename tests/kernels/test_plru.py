"""Tree pseudo-LRU replacement: a hand-worked sequence where it and LRU part ways, the reference
model on sets up to 32 ways (specialised and generic kernels), and the ways it refuses."""

import numpy as np
import pytest
from helpers import dataset_counters
from twins.reference import reference_simulate

import pagesim
from pagesim import Layout, Machine, PageWalkCache, Region, Structure, Walker

K4 = 4096
BASE = 1 << 36


def _machine(ways: int, entries: int, replacement: str, pwc: str = "lru") -> Machine:
    return Machine(
        name=f"plru{ways}",
        title="one TLB",
        page_sizes=(K4,),
        base_page=K4,
        structures=(Structure("T", 1, "data", entries, ways, (K4,), replacement),),
        walker=Walker("radix", level_bits=(9, 9, 9, 9), pwc=(PageWalkCache("pde", 3, 4, 4, pwc),)),
    )


@pytest.mark.parametrize("specialize", [True, False])
def test_hand_worked_sequence_where_plru_and_lru_part_ways(specialize):
    """A 4-way set fills ways 0-3 with pages A, B, C, D; a hit on A points the root right and A's
    node right; E then follows root -> right, that node (last set by D: left) -> way 2, so E evicts
    C, where LRU evicts B. C misses and follows root (now left) -> A's node (right) -> way 1, evicting
    B, which then misses too. PLRU: 1 hit of 8 (A); LRU: 2 (A and C)."""
    A, B, C, D, E = (BASE + p * K4 for p in range(5))
    seq = np.array([A, B, C, D, A, E, C, B], dtype=np.uint64)
    layout = Layout((Region(BASE, 64 * K4, K4, "r"),))
    got = {}
    for policy in ("plru", "lru"):
        ds = pagesim.simulate(_machine(4, 4, policy), addresses=seq, layout=layout, specialize=specialize)
        got[policy] = int(ds["hits"].sel(structure="T").sum()), int(ds["misses"].sel(structure="T").sum())
    assert got == {"plru": (1, 7), "lru": (2, 6)}


@pytest.mark.parametrize("ways,sets", [(1, 4), (2, 8), (8, 4), (16, 2), (32, 1), (32, 2)])
def test_plru_matches_reference(ways, sets):
    """Hot pages a little above and below the structure's size, in two regions, chunked so the
    kernel's state crosses calls; a PLRU page-walk cache as well. Specialised and generic kernels
    give the reference's counters."""
    m = _machine(ways, ways * sets, "plru", pwc="plru")
    layout = Layout((Region(BASE, 900 * K4, K4, "a"), Region(BASE + (1 << 33), 300 * K4, K4, "b")))
    rng = np.random.default_rng(ways * 100 + sets)
    hot = rng.integers(0, 1200, ways * sets + 3)
    addrs = []
    for _ in range(6000):
        page = int(hot[rng.integers(hot.size)]) if rng.random() < 0.8 else int(rng.integers(1200))
        r, p = (layout.regions[0], page) if page < 900 else (layout.regions[1], page - 900)
        addrs.append(r.start + p * K4 + int(rng.integers(K4)))
    addrs = np.array(addrs, dtype=np.uint64)
    want, touched = reference_simulate(m, layout, [int(a) for a in addrs], None, 0)
    for specialize in (True, False):
        got, got_touched = dataset_counters(pagesim.simulate(m, addresses=addrs, layout=layout, specialize=specialize, chunk_size=997))
        assert got == want, specialize
        assert got_touched == touched
    assert want[("hits", "T", 0)] > 0 and want[("misses", "T", 0)] > ways * sets  # it hits, and it evicts


@pytest.mark.parametrize("ways", [3, 6, 12, 64])
def test_plru_refuses_ways_it_cannot_build_a_tree_over(ways):
    with pytest.raises(ValueError, match=rf"structure 'T'.*replacement='plru' with ways={ways}: tree pseudo-LRU needs a power of two from 1 to 32 ways"):
        Structure("T", 1, "data", ways, ways, (K4,), "plru")
