"""Every compiled kernel of ``pagesim._kernels`` paired with its plain-Python reference twin, as
numbagg pairs each function with its pandas and numpy twins (``COMPARISONS`` in its
``test/conftest.py``). ``tests/kernels/test_twins.py`` runs every pair the same way: the same few
generated cases through both, the results compared by the pair's ``compare``.

A pair runs the kernel through the function of pagesim that calls it (``simulate`` for the
translation kernels, ``simulate_timed`` for the cache replay, ...) or, for the small kernels, on
arrays directly; its twin is the slow, obviously correct model in ``tests/twins/``. A module of
``pagesim._kernels`` is either here or in ``NOT_KERNELS`` with its reason, and the test fails when
one is in neither. The differential tests with hypothesis (``tests/kernels/test_differential.py``
and the others that import these twins) search far more inputs; this registry is the one place
that names every pair.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Callable

import numpy as np
from helpers import dataset_counters

import pagesim
from pagesim import Layout, Ram, Region
from pagesim._kernels.chase import chase, scatter_counted
from pagesim._kernels.dcache import cache_lines_by_class
from pagesim._kernels.regions import distinct_blocks
from pagesim.engine.stages import resolve_programmable
from pagesim.engine.timing import CacheLevel, Hierarchy, simulate_timed
from pagesim.sources.workloads import ELEMENT
from pagesim.studies.yourprogram import reuse_distances
from pagesim.system.memory import PhysicalMemory
from pagesim.system.paging import resolve
from pagesim.system.pressure import run as run_pressure

from .reference import reference_simulate
from .reference_kernels import (
    reference_blocks,
    reference_cache_lines,
    reference_chase,
    reference_distances,
    reference_scatter,
    reference_sequential,
    reference_uniform_random,
)
from .reference_os import reference_backing, reference_faults
from .reference_pressure import reference_pressure
from .reference_timing import reference_timing


@dataclass(frozen=True)
class Pair:
    """A kernel and its twin. ``cases(rng)`` makes a few inputs; ``kernel(case)`` and ``twin(case)``
    compute the same counters from one, the first through the compiled kernel; ``compare(got,
    want)`` says whether they agree (exact equality unless the pair says otherwise)."""

    module: str  # the module of pagesim._kernels the kernel lives in
    what: str
    cases: Callable[[np.random.Generator], list]
    kernel: Callable
    twin: Callable
    compare: Callable = lambda got, want: got == want  # noqa: E731


# ----------------------------------------------------------------------------------------- inputs
PRESETS = ("opteron-k8", "power6", "ultrasparc-iii-cu", "itanium2", "skylake")


def translation_cases(rng, n: int = 3000) -> list:
    """A preset, a layout of up to three regions (one per page size), accesses and kinds drawn from ``rng``."""
    out = []
    for name in PRESETS:
        m = pagesim.machine(name)
        regions, at = [], 1 << 36
        for i, p in enumerate(m.page_sizes[:3]):
            at = -(-at // p) * p
            regions.append(Region(at, min(8, max(1, (64 << 20) // p)) * p, p, f"r{i}"))
            at += regions[-1].length + (1 << 30)
        picks = rng.integers(len(regions), size=n)
        addrs = np.array([regions[r].start + int(rng.integers(min(regions[r].length, 16 << 20))) for r in picks], dtype=np.uint64)
        kinds = rng.integers(0, 2, n).astype(np.uint8)
        out.append((m, Layout(tuple(regions)), addrs, kinds, int(rng.integers(1 << 20))))
    return out


def specialised_cases(rng) -> list:
    """As :func:`translation_cases`, with what the specialised kernels take: data accesses only, one
    region of one page size."""
    out = []
    for m, layout, addrs, _, seed in translation_cases(rng):
        r = layout.regions[0]
        a = (np.uint64(r.start) + addrs % np.uint64(r.length)).astype(np.uint64)
        out.append((m, Layout((r,)), a, np.zeros(a.size, np.uint8), seed))
    return out


def nested_cases(rng) -> list:
    """The radix presets' translation cases, each virtualised at a host page drawn from its page
    sizes, with a 16-entry nested TLB or none."""
    out = []
    for m, layout, addrs, kinds, seed in translation_cases(rng):
        if m.walker.kind == "radix":
            hp = m.page_sizes[int(rng.integers(len(m.page_sizes)))]
            out.append((m.virtualised(hp, nested_tlb=int(rng.choice([0, 16]))), layout, addrs, kinds, seed))
    return out


def translate_twin(case):
    m, layout, addrs, kinds, seed = case
    m_eff, _ = resolve_programmable(m, layout)
    return reference_simulate(m_eff, layout, [int(a) for a in addrs], list(kinds), seed)


def translate_kernel(specialize):
    def run(case):
        m, layout, addrs, kinds, seed = case
        return dataset_counters(pagesim.simulate(m, addresses=addrs, kinds=kinds, layout=layout, seed=seed, chunk_size=1000, specialize=specialize))

    return run


HIERARCHY = Hierarchy("small", (CacheLevel("L1", "4K", 2, 3, 64), CacheLevel("L2", "32K", 4, 10, 64)), 100)


def timing_counts(ds) -> tuple[dict, dict]:
    """{(level, page size index): hits} of data accesses and of walk references."""
    out = []
    for var in ("data_level_hits", "walk_level_hits"):
        v = ds[var].values
        out.append({(c, z): int(v[c, z]) for c in range(v.shape[0]) for z in range(v.shape[1]) if v[c, z]})
    return tuple(out)


def timing_kernel(case):
    m, layout, addrs, kinds, seed = case
    return timing_counts(simulate_timed(m, addresses=addrs, kinds=kinds, layout=layout, seed=seed, hierarchy=HIERARCHY, chunk_size=1000))


def timing_twin(case):
    m, layout, addrs, kinds, seed = case
    m_eff, _ = resolve_programmable(m, layout)
    return reference_timing(m_eff, layout, [int(a) for a in addrs], list(kinds), HIERARCHY, seed)


def small_layout_cases(rng) -> list:
    """Layouts of 4, 16 and 64 KiB pages and accesses to them, for the OS-side kernels."""
    out = []
    for _ in range(4):
        regions, at = [], 1 << 30
        for i in range(int(rng.integers(1, 4))):
            p = int(rng.choice([4096, 16384, 65536]))
            n = int(rng.integers(1, 13))
            regions.append(Region(at, n * p, p, f"r{i}"))
            at += -(-(n * p) // 65536) * 65536 + int(rng.integers(0, 4)) * 65536
        addrs = [regions[r].start + int(rng.integers(regions[r].length)) for r in rng.integers(len(regions), size=300)]
        out.append((Layout(tuple(regions)), addrs, int(rng.integers(1, 41)) * 4096, str(rng.choice(["clock", "lru"]))))
    return out


def pressure_kernel(case):
    lay, addrs, available, reclaim = case
    available = max(available, max(r.page_size for r in lay.regions))
    a = np.array(addrs, dtype=np.uint64)
    return run_pressure(lay, ((a[i : i + 7], None) for i in range(0, a.size, 7)), Ram(available + (1 << 20), kernel="1M", reclaim=reclaim))


def pressure_twin(case):
    lay, addrs, available, reclaim = case
    return reference_pressure(lay, addrs, max(available, max(r.page_size for r in lay.regions)), reclaim)


def thp_cases(rng) -> list:
    """THP regions beside base-page ones on a fragmented memory of 4 KiB and 2 MiB pages."""
    out = []
    for seed in range(3):
        regions = (
            Region((1 << 32) + [0, 4096, 255 * 4096][seed], [511, 1025, 2048][seed] * 4096, "2M", "thp", policy="thp"),
            Region(1 << 33, 40 * 4096, "4K", "base"),
        )
        addrs = [r.start + int(rng.integers(r.length)) for r in (regions[i] for i in rng.integers(2, size=400))]
        mem = PhysicalMemory("256M", "4K", "2M").fragment(held=[0.0, 0.5, 0.9][seed], placement="scattered", movable=0.0, seed=seed)
        out.append((Layout(regions), addrs, mem))
    return out


def firsttouch_kernel(case):
    lay, addrs, mem = case
    a = np.array(addrs, dtype=np.uint64)
    backed, _, got_mem = resolve(lay, [(a, None)], copy.deepcopy(mem), 4096, False)
    ds = pagesim.simulate("zen4", addresses=a, layout=lay, memory=mem)
    return got_mem.state.tolist(), int(ds["faults"].sum())


def firsttouch_twin(case):
    lay, addrs, mem = case
    huge, _, _, state = reference_backing(lay, addrs, copy.deepcopy(mem), 4096, False)
    return state.tolist(), reference_faults(lay, addrs, 4096, huge)


def dcache_cases(rng) -> list:
    out = []
    for caches in ([(4, 2)], [(8, 2), (32, 4)], [(1, 4), (16, 1), (64, 8)]):
        n = 2000
        lines = rng.integers(0, 4 * sum(s * w for s, w in caches), n).astype(np.int64)
        out.append((lines, rng.integers(0, 2, n).astype(np.bool_), caches))
    return out


def dcache_kernel(case):
    lines, is_data, caches = case
    sets = np.array([s for s, _ in caches], dtype=np.int64)
    ways = np.array([w for _, w in caches], dtype=np.int64)
    base = np.concatenate([[0], np.cumsum(sets * ways)[:-1]]).astype(np.int64)
    size = int((sets * ways).sum())
    tags, stamps, clock = np.full(size, -1, dtype=np.int64), np.zeros(size, dtype=np.int64), np.zeros(1, dtype=np.int64)
    counts = [np.zeros(len(caches), dtype=np.int64) for _ in range(4)]
    cache_lines_by_class(lines, is_data, sets, ways, base, tags, stamps, clock, *counts)
    return tuple(c.tolist() for c in counts)


def dcache_twin(case):
    lines, is_data, caches = case
    return tuple(list(c) for c in reference_cache_lines(lines.tolist(), is_data.tolist(), caches))


def chase_cases(rng) -> list:
    out = []
    for n in (1, 7, 1000):
        perm = rng.permutation(n)
        buf = np.empty(n, dtype=np.int64)
        buf[perm] = np.roll(perm, -1)  # one cycle through every index
        out.append((buf, int(rng.integers(n)), int(rng.integers(0, 5000))))
    return out


def scatter_cases(rng) -> list:
    out = []
    for n, k in ((1, 0), (8, 3), (1000, 5000)):
        out.append((np.zeros(n, np.int64), rng.integers(0, n, k).astype(np.int64), rng.integers(-(1 << 40), 1 << 40, k)))
    return out


def scatter_kernel(case):
    buf, idx, vals = case
    buf = buf.copy()
    ru = np.zeros(32, np.int64)  # larger than struct rusage wherever Linux runs
    assert scatter_counted(buf, idx, vals, 0, ru, ru.copy()) == 0  # 0: RUSAGE_SELF
    return buf.tolist()


def blocks_cases(rng) -> list:
    near = (1 << 40) + rng.integers(0, 1 << 30, 5000)
    far = rng.integers(0, 1 << 62, 200)
    return [
        (np.sort(near).astype(np.uint64), 12),
        (near.astype(np.uint64), 21),
        (np.concatenate([near, far]).astype(np.uint64), 21),
        (np.zeros(0, np.uint64), 12),
    ]


def reuse_cases(rng) -> list:
    return [rng.integers(0, k, n) for k, n in ((1, 10), (5, 200), (50, 2000), (2000, 3000))]


def workload_cases(rng) -> list:
    return [("random", int(s), int(rng.integers(1 << 40))) for s in (1, 3, 1 << 10, 1000003)] + [
        ("sequential", int(s), int(st)) for s, st in ((8, 1), (4096, 64), (100_000, 4095))
    ]


BASES = [1 << 30, 3 << 30, 5 << 30]


def workload_kernel(case):
    kind, a, b = case
    if kind == "random":
        w = pagesim.workload("random", size=a * ELEMENT, accesses=500)
        seed = b
    else:
        w = pagesim.workload("sequential", size=a, stride=min(b, a), passes=2)
        seed = 0
    return np.concatenate([x for x, _ in w.chunks(BASES, 97, seed)]).tolist()


def workload_twin(case):
    kind, a, b = case
    if kind == "random":
        return reference_uniform_random(BASES[0], a, 500, b, ELEMENT)
    w = pagesim.workload("sequential", size=a, stride=min(b, a), passes=2)
    return reference_sequential(BASES[0], w.per_pass, w.stride, w.n_accesses)


# --------------------------------------------------------------------------------------- the pairs
COMPARISONS = {
    "translate": Pair("translate", "the generic translation kernel: TLB, walk and fault counters", translation_cases, translate_kernel(False), translate_twin),
    "specialize": Pair(
        "specialize", "the specialised translation kernels (each chain shape compiled in)", specialised_cases, translate_kernel(True), translate_twin
    ),
    "nested": Pair(
        "nested", "the host's side of nested walks: host references, nested TLB and host walk caches", nested_cases, translate_kernel(False), translate_twin
    ),
    "timing": Pair("timing", "the data-cache replay of accesses and walk references", translation_cases, timing_kernel, timing_twin),
    "pressure": Pair("pressure", "reclaim under a RAM limit: swap-outs and major faults", small_layout_cases, pressure_kernel, pressure_twin),
    "firsttouch": Pair("firsttouch", "first touches: the backing the OS gives and the faults", thp_cases, firsttouch_kernel, firsttouch_twin),
    "dcache": Pair("dcache", "the page-walk data cache, lines by class", dcache_cases, dcache_kernel, dcache_twin),
    "chase": Pair("chase", "the latency probe's dependent loads", chase_cases, lambda c: int(chase(*c)), lambda c: reference_chase(*c)),
    "scatter": Pair("chase", "the fault probe's first touches (the buffer they leave)", scatter_cases, scatter_kernel, lambda c: reference_scatter(*c)),
    "regions": Pair(
        "regions", "the distinct blocks of a trace's addresses", blocks_cases, lambda c: distinct_blocks(*c).tolist(), lambda c: reference_blocks(*c)
    ),
    "reuse": Pair(
        "reuse",
        "LRU stack distances",
        reuse_cases,
        lambda pages: reuse_distances(np.asarray(pages, np.uint64) * np.uint64(4096), "4K").tolist(),
        reference_distances,
    ),
    "workloads": Pair("workloads", "the workload generators' addresses, in chunks", workload_cases, workload_kernel, workload_twin),
}

# modules of pagesim._kernels that hold no kernel of their own to pair
NOT_KERNELS = {
    "_jit": "the numba options and the cache directory",
    "rules": "the model rules the kernels apply (written in place or inlined), run by the translate, specialize, timing and dcache pairs",
    "sets": "a TLB set's state updates, written into the translation kernels: run by the translate and specialize pairs",
    "walks": "the hashed page table's insertion, inlined into the translation kernels: run by the translate and specialize pairs",
    "writer": "writes the translation kernels' source: the kernels it writes are the translate and specialize pairs",
    "simd": "the tag search inlined into the translation kernels, run by the translate and specialize pairs (and tests/kernels/test_simd.py)",
    "textparse": "the trace reader's byte parser: its reference is pagesim.sources.traces._parse_line (the formats' regular "
    "expressions), and tests/sources/test_traces.py requires the block reader to give what reading line by line with it gives",
    "native": "the documents' kernels as real code, timed on the host; they count nothing: tests/host/test_here.py checks that each "
    "makes exactly the accesses of its workload generator (the workloads pair's kernels)",
}
