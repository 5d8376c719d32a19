"""Specialised kernels keep a one-set DIRECT structure's ring head in a local across the loop,
return it and run_chunk stores it. Chains with such structures at every position (0-3),
LRU and FIFO, beside set-associative and wide multi-set ones, a wide FIFO SLB and a wide page-walk
cache, over several regions, at chunk sizes that split the run anywhere, against the reference;
hot sets of exactly entries - 1, entries and entries + 1 pages (LRU/FIFO edge cases)."""

import numpy as np
import pytest
from helpers import dataset_counters
from twins.reference import reference_simulate

import pagesim
from pagesim import Layout, Machine, PageWalkCache, Region, Structure, Walker
from pagesim._kernels import specialize as S
from pagesim.engine import stages as E

K4, K64, M2, M16 = 4096, 65536, 2 << 20, 16 << 20

MACHINES = {
    "four-fa": Machine(  # a one-set DIRECT structure at each of the four chain positions
        name="four-fa",
        title="four-fa",
        page_sizes=(K4, M2),
        base_page=K4,
        structures=(
            Structure("A", 1, "data", 17, 17, (K4, M2)),
            Structure("B", 2, "data", 33, 33, (K4, M2), "fifo"),
            Structure("C", 3, "unified", 64, 64, (K4, M2)),
            Structure("D", 4, "unified", 100, 100, (K4,), "fifo"),
        ),
        walker=Walker("radix", level_bits=(9, 9, 9, 9), pwc=(PageWalkCache("pde", 3, 32, 32, "fifo"),)),
    ),
    "mixed-slb": Machine(  # set-associative, a 2-set 64-way, then a 512-way FIFO; a 20-way FIFO SLB
        name="mixed-slb",
        title="mixed-slb",
        page_sizes=(K4, K64, M16),
        base_page=K4,
        structures=(
            Structure("E", 1, "data", 32, 4, (K4, K64)),
            Structure("F", 2, "data", 128, 64, (K4, K64)),
            Structure("G", 3, "unified", 512, 512, (K4, K64, M16), "fifo"),
        ),
        walker=Walker("hashed", hpt_ptegs=16),
        slb=Structure("SLB", 1, "unified", 20, 20, (K4,), "fifo"),
    ),
}
RING1 = {"four-fa": [1, 1, 1, 1], "mixed-slb": [0, 0, 1]}


def _layout(p, pages):
    """Three regions: two adjacent, one 256 MiB segment further on (the SLB sees several)."""
    a, b = pages // 2, pages // 4
    return Layout(
        (
            Region(1 << 36, a * p, p, "a"),
            Region((1 << 36) + a * p, b * p, p, "b"),
            Region((1 << 36) + (1 << 28), (pages - a - b) * p, p, "c"),
        )
    )


def _trace(layout, p, hot_n, n, seed):
    rng = np.random.default_rng(seed)
    total = sum(r.length // p for r in layout.regions)
    hot = rng.choice(total, hot_n, replace=False)
    out, i = [], 0
    while len(out) < n:
        u = rng.random()
        if u < 0.6:
            g = int(hot[i % hot_n])  # cyclic over the hot set: LRU's worst case at entries + 1
            i += 1
        elif u < 0.8:
            g = int(hot[int(rng.integers(hot_n))])
        else:
            g = int(rng.integers(total))
        for r in layout.regions:
            k = r.length // p
            if g < k:
                out += [r.start + g * p + int(rng.integers(p))] * int(rng.choice([1, 1, 1, 4]))  # same-page runs too
                break
            g -= k
    return np.array(out[:n], dtype=np.uint64)


@pytest.mark.parametrize("name", list(MACHINES))
def test_one_set_direct_structures_are_flagged(name):
    m = MACHINES[name]
    cfg = E.kernel_inputs(m, _layout(K4, 1200), 0)[0]
    shape = S.chain_shape(cfg, int(cfg.reg_size[0]))
    assert [c[-1] for c in shape[0]] == RING1[name]


@pytest.mark.parametrize("name", list(MACHINES))
def test_ring_heads_across_chunks_match_reference(name):
    m = MACHINES[name]
    p = K4
    layout = _layout(p, 1200)
    big = max(s.entries for s in m.chain("data", p) if s.ways == s.entries)
    for k, hot_n in enumerate((big - 1, big, big + 1)):
        addrs = _trace(layout, p, hot_n, 2500, 100 * k + len(name))
        want, ref_touched = reference_simulate(m, layout, [int(a) for a in addrs], None, k)
        first = None
        for chunk in (1, 3, 777, 1 << 20):
            got, touched = dataset_counters(pagesim.simulate(m, addresses=addrs, layout=layout, seed=k, specialize=True, chunk_size=chunk))
            assert got == want, (hot_n, chunk)
            assert touched == ref_touched
            first = first or got
        again, _ = dataset_counters(pagesim.simulate(m, addresses=addrs, layout=layout, seed=k, specialize=True, chunk_size=777))
        assert again == first  # nothing carried over from the runs before
