"""Specialised kernels (geometry compiled in as constants) against the reference model.

Each case compiles one specialised copy (seconds, then cached on disk), so the cases are chosen to
cover every branch the constants remove: each replacement mode (order-word LRU and FIFO, stamp LRU
and FIFO above 16 ways, random), modulo set indexing, entries covering part of a page, chains of
1 to 4 structures, each walker kind, and regions with and without fault-around.
"""

import numpy as np
import pytest
from helpers import dataset_counters
from reference import reference_simulate

import pagesim
from pagesim import Layout, Machine, PageWalkCache, Region, Structure, Walker

K4, K64, M2 = 4096, 65536, 2 << 20

CASES = {
    "lru-2level-radix-pwc": (
        [Structure("L1", 1, "data", 16, 4, (K4,)), Structure("L2", 2, "unified", 96, 12, (K4,))],
        Walker("radix", level_bits=(9, 9, 9, 9), pwc=(PageWalkCache("pde", 3, 4, 2), PageWalkCache("pml4", 1, 2, 2))),
        K4,
    ),
    "fifo-random-stamps-4level-vhpt": (
        [
            Structure("A", 1, "data", 6, 2, (K4,), "fifo"),
            Structure("B", 2, "data", 10, 5, (K4,), "random"),
            Structure("C", 3, "data", 20, 20, (K4,), "lru"),
            Structure("D", 4, "data", 24, 24, (K4,), "fifo"),
        ],
        Walker("vhpt"),
        K4,
    ),
    "max-entry-hashed-slb": (
        [Structure("ERAT", 1, "data", 8, 8, (K64,), max_entry=K4), Structure("TLB", 2, "unified", 12, 3, (K64,))],
        Walker("hashed", hpt_ptegs=2),
        K64,
    ),
    "tsb-16way": ([Structure("T", 1, "data", 32, 16, (K64,))], Walker("tsb", tsb_entries=8), K64),
    "no-structure": ([], Walker("radix", level_bits=(9, 9, 9, 9)), M2),
}


@pytest.mark.parametrize("name", list(CASES))
def test_specialised_matches_reference(name):
    structs, walker, page = CASES[name]
    sizes = tuple(sorted({K4, page} if walker.kind != "radix" else {K4, M2}))
    slb = Structure("SLB", 1, "unified", 2, 2, (sizes[0],)) if walker.kind == "hashed" else None
    m = Machine(name=name, title=name, page_sizes=sizes, base_page=sizes[0], structures=tuple(structs), walker=walker, slb=slb)
    fa = 4 if name in ("tsb-16way", "fifo-random-stamps-4level-vhpt") else 1  # both settings of any_fa
    regions = (Region(1 << 34, 40 * page, page, "a"), Region((1 << 34) + (1 << 30), 24 * page, page, "b", fault_around=fa))
    layout = Layout(regions)
    rng = np.random.default_rng(11)
    addrs, prev = [], regions[0].start
    for _ in range(6000):
        u = rng.random()
        if u < 0.3:
            a = prev
        else:
            r = regions[int(rng.integers(2))]
            a = r.start + int(rng.integers(r.length))
        addrs.append(a)
        prev = a
    addrs = np.array(addrs, dtype=np.uint64)
    got, touched = dataset_counters(pagesim.simulate(m, addresses=addrs, layout=layout, seed=9, specialize=True, chunk_size=1000))
    generic, _ = dataset_counters(pagesim.simulate(m, addresses=addrs, layout=layout, seed=9, specialize=False))
    want, ref_touched = reference_simulate(m, layout, [int(a) for a in addrs], None, 9)
    assert got == want
    assert generic == want
    assert touched == ref_touched


def test_auto_choice_does_not_depend_on_what_ran_before():
    """specialize='auto' picks the kernel from the call's inputs alone: a small run gets the generic
    kernel even after a specialised copy of the same geometry was loaded in this process."""
    from pagesim import _engine as E
    from pagesim._kernels import translate as K
    from pagesim.workloads import Addresses

    m = pagesim.machine("skylake")
    a = (np.arange(2000, dtype=np.uint64) * np.uint64(4096)) + np.uint64(1 << 40)
    layout = Layout.covering_addresses(a, 4096)
    cfg = E.kernel_inputs(m, layout, 0)[0]
    w = Addresses(addresses=a)
    assert E.choose_kernel("auto", cfg, w) is K.run_chunk
    pagesim.simulate(m, addresses=a, layout=layout, specialize=True)  # loads the specialised copy
    assert E.choose_kernel("auto", cfg, w) is K.run_chunk


@pytest.mark.parametrize("name", ["skylake", "power6", "itanium2"])
def test_specialised_presets_match_reference(name):
    """Specialised copies of real presets: page-walk caches (skylake), a 64-entry fully associative
    SLB (power6) and wide fully associative TLBs (itanium2) with their geometry compiled in."""
    from pagesim.simulate import resolve_programmable

    m = pagesim.machine(name)
    p = m.base_page
    layout = Layout((Region(1 << 36, 4096 * p, p, "a"), Region((1 << 36) + (1 << 33), 512 * p, p, "b")))
    rng = np.random.default_rng(17)
    addrs = []
    for _ in range(5000):
        r = layout.regions[int(rng.random() < 0.2)]
        addrs.append(r.start + int(rng.integers(r.length)))
    addrs = np.array(addrs, dtype=np.uint64)
    got, touched = dataset_counters(pagesim.simulate(m, addresses=addrs, layout=layout, seed=4, specialize=True, chunk_size=777))
    m_eff, _ = resolve_programmable(m, layout)
    want, ref_touched = reference_simulate(m_eff, layout, [int(a) for a in addrs], None, 4)
    assert got == want
    assert touched == ref_touched
