"""One-page-size runs place their data chain apart (pagesim.engine.stages.MachineParts.placed).
Each machine here has page sizes whose data chains differ, instruction-only TLBs placed after
the chain, a structure at another chain position for another page size, wide (direct-indexed)
structures and an SLB with stamps; every one-page-size run, specialised and generic, data only
and with instruction accesses, must give the reference model's counts."""

import numpy as np
import pytest
from helpers import dataset_counters
from twins.reference import reference_simulate

import pagesim
from pagesim import Layout, Machine, PageWalkCache, Region, Structure, Walker
from pagesim._kernels import specialize as S
from pagesim.engine import stages as E

K4, K64, M2, G1 = 4096, 65536, 2 << 20, 1 << 30


def radix_machine():
    """4K: L1 4K (16 sets), L2, L3; 2M: L1 2M (8 sets), L2; 1G: L2 only (the L2 is position 1
    of the 4K and 2M chains, position 0 of the 1G chain). The instruction L1 sits after the chain."""
    return Machine(
        name="placed-radix",
        title="t",
        page_sizes=(K4, M2, G1),
        base_page=K4,
        structures=(
            Structure("L1d 4K", 1, "data", 64, 4, (K4,)),
            Structure("L1d 2M", 1, "data", 32, 4, (M2,), "fifo"),
            Structure("L1i", 1, "instr", 16, 8, (K4, M2)),
            Structure("L2", 2, "unified", 40, 20, (K4, M2, G1)),  # 2 sets of 20 ways: direct index
            Structure("L3d 4K", 3, "data", 12, 3, (K4,), "random"),
        ),
        walker=Walker("radix", level_bits=(9, 9, 9, 9), pwc=(PageWalkCache("pde", 3, 4, 2), PageWalkCache("pdpte", 2, 2, 2, "fifo"))),
    )


def hashed_machine():
    """A hashed page table with a 32-way LRU SLB (stamps): 4K looks up L1 then the 33-way L2, 64K
    only the L2 (position 0); the instruction side has its own L1 of both sizes."""
    return Machine(
        name="placed-hashed",
        title="t",
        page_sizes=(K4, K64),
        base_page=K4,
        structures=(
            Structure("L1d 4K", 1, "data", 8, 2, (K4,)),
            Structure("L1i", 1, "instr", 6, 3, (K4, K64), "fifo"),
            Structure("L2", 2, "unified", 66, 33, (K4, K64)),
        ),
        walker=Walker("hashed", hpt_ptegs=16),
        slb=Structure("SLB", 1, "unified", 32, 32, (K4,)),
    )


def cases():
    for m in (radix_machine(), hashed_machine()):
        for page in m.page_sizes:
            yield pytest.param(m, page, id=f"{m.name}-{page}")


def layout_and_trace(page, n=3000, seed=0):
    rng = np.random.default_rng(seed + page % 9973)
    npages = 48 if page < G1 else 6
    data = Region(1 << 40, npages * page, page, "data")
    code = Region((1 << 40) + (npages + 3) * page + (1 << 30), 5 * page, page, "code")
    layout = Layout((data, code))
    hot = rng.integers(0, npages, 12)
    pages = np.where(rng.random(n) < 0.5, hot[rng.integers(0, 12, n)], rng.integers(0, npages, n))
    addrs = data.start + pages * page + rng.integers(0, min(page, 1 << 16), n)
    kinds = (rng.random(n) < 0.35).astype(np.uint8)
    mixed = np.where(kinds == 1, code.start + rng.integers(0, code.length, n), addrs)
    return layout, addrs.astype(np.uint64), mixed.astype(np.uint64), kinds


@pytest.mark.parametrize("m,page", list(cases()))
def test_one_page_size_runs_match_reference(m, page):
    layout, addrs, mixed, kinds = layout_and_trace(page)
    want, _ = reference_simulate(m, layout, [int(a) for a in addrs], None, 5)
    for specialize, chunk in ((True, 1 << 20), (True, 333), (False, 1 << 20)):
        got, _ = dataset_counters(pagesim.simulate(m, addresses=addrs, layout=layout, seed=5, specialize=specialize, chunk_size=chunk))
        assert got == want, (specialize, chunk)
    want, _ = reference_simulate(m, layout, [int(a) for a in mixed], list(kinds), 5)
    for chunk in (1 << 20, 101):  # instruction accesses: the generic kernel, on the same placement
        got, _ = dataset_counters(pagesim.simulate(m, addresses=mixed, kinds=kinds, layout=layout, seed=5, chunk_size=chunk))
        assert got == want, chunk


def test_chains_of_equal_shape_share_their_places():
    """The radix machine's 4K and 2M chains differ in their L1's sets and replacement only, so each
    position starts at one place; the instruction L1 (in no data chain) and the structures of
    other page sizes' chains never overlap the chain looked up."""
    m = radix_machine()
    mp = E.machine_parts(m)
    for z in range(mp.nk):
        config, order, links, slots = mp.placed(z)
        spans = sorted(zip(config["st_base"].tolist(), (config["st_base"] + config["st_sets"] * config["st_pways"]).tolist()))
        assert all(end <= nxt for (_, end), (nxt, _) in zip(spans, spans[1:])) and spans[-1][1] <= slots
    c4 = E.kernel_inputs(m, Layout.single(1 << 24, K4, start=1 << 40), 0)[0]
    c2 = E.kernel_inputs(m, Layout.single(1 << 30, M2, start=1 << 40), 0)[0]
    assert [int(c4.st_base[c4.chain[0, 0, j]]) for j in range(2)] == [int(c2.st_base[c2.chain[0, 1, j]]) for j in range(2)]
    assert S.chain_shape(c4, 0)[0][1][4:6] == S.chain_shape(c2, 1)[0][1][4:6]  # the L2's compiled start
