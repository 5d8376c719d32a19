"""The OS stage: what backs each region, decided fault by fault with a PhysicalMemory.

Region policies (``Region.policy``):
  base     every page of the region's page size comes from the allocator at its first touch.
  thp      Linux transparent huge pages: the first fault in a huge-page chunk of the region maps a
           huge page when the allocator has a free aligned block (after compaction, if enabled);
           otherwise that chunk is backed by base pages, each allocated at its own first touch.
  mpss     Solaris MPSS: the same rule for the preferred page size (a modelling simplification:
           Solaris may also try sizes between the preferred and the base page).
  hugetlb  hugetlbfs: pages come from the pool reserved up front (``reserve_hugetlb``); the whole
           region is taken from it when the layout is mapped, and a pool too small fails there.

First touches happen in the same order whatever backs a page, so one pass over the accesses gives
the order of first touches of base pages, and replaying it through the allocator gives every
decision in fault order. The result is a layout of the backing actually given (what ``pmap -sx``
shows), which the translation stage then simulates.
"""
from __future__ import annotations

import numpy as np

from ._kernels.firsttouch import first_touches
from .layout import Layout, Region
from .memory import OutOfMemory, PhysicalMemory
from .units import format_size, log2

POLICIES = ("base", "thp", "mpss", "hugetlb")
MAX_BASE_PAGES = 1 << 26  # the first-touch list takes 8 bytes a base page


def first_touch_order(layout: Layout, chunks, base_page: int) -> np.ndarray:
    """Layout-wide base-page indices in order of first touch."""
    starts = np.array([r.start for r in layout.regions], dtype=np.int64)
    ends = np.array([r.end for r in layout.regions], dtype=np.int64)
    counts = np.array([r.length // base_page for r in layout.regions], dtype=np.int64)
    total = int(counts.sum())
    if total > MAX_BASE_PAGES:
        raise ValueError(f"the layout spans {total} base pages; modelling physical memory handles at most {MAX_BASE_PAGES} (2**26)")
    bases = np.zeros(len(counts), dtype=np.int64)
    bases[1:] = np.cumsum(counts)[:-1]
    seen = np.zeros((total + 63) // 64, dtype=np.uint64)
    out = np.empty(total, dtype=np.int64)
    n_out = np.zeros(1, dtype=np.int64)
    for addrs, _ in chunks:
        a = np.ascontiguousarray(addrs, dtype=np.uint64).view(np.int64)
        bad = first_touches(a, starts, ends, bases, log2(base_page), seen, out, n_out)
        if bad >= 0:
            raise ValueError(f"address {int(a[bad]) & ((1 << 64) - 1):#x} lies outside every region of the layout")
    return out[: n_out[0]]


def resolve(layout: Layout, chunks, memory: PhysicalMemory, base_page: int, compaction: bool = False):
    """Decide the backing of every region. Returns (layout actually given, report dict, memory after)."""
    mem = memory  # the caller passes a copy it owns
    if mem.frame != base_page:
        raise ValueError(
            f"memory frames are {format_size(mem.frame)} but the machine's base page is {format_size(base_page)}: "
            f"make PhysicalMemory(frame='{format_size(base_page)}')"
        )
    for r in layout.regions:
        if r.policy not in POLICIES:
            raise ValueError(f"region {r.name!r} policy={r.policy!r} is not allowed: use one of {', '.join(POLICIES)}")
        if r.page_size < base_page:
            raise ValueError(f"region {r.name!r} page_size={format_size(r.page_size)} is below the base page {format_size(base_page)}")
    # hugetlb regions take their pages from the pool when the layout is mapped
    pool = {p: list(v) for p, v in mem.hugetlb_pool.items()}
    for r in layout.regions:
        if r.policy == "hugetlb":
            have = len(pool.get(r.page_size, []))
            if have < r.pages:
                raise OutOfMemory(
                    f"region {r.name!r} needs {r.pages} hugetlb pages of {format_size(r.page_size)} but the pool has {have}: "
                    "reserve them first with PhysicalMemory.reserve_hugetlb"
                )
            del pool[r.page_size][: r.pages]
    granted = [r.pages if r.policy == "hugetlb" else 0 for r in layout.regions]
    order = first_touch_order(layout, chunks, base_page)
    counts = [r.length // base_page for r in layout.regions]
    offs = np.cumsum([0] + counts)
    reg_of = np.searchsorted(offs, order, side="right") - 1
    chunk_state = [dict() for _ in layout.regions]  # chunk index -> 'huge' | 'base'
    fallbacks = [0] * len(layout.regions)
    migrated = 0
    for p, ri in zip(order.tolist(), reg_of.tolist()):
        r = layout.regions[ri]
        if r.policy == "hugetlb":
            continue
        local = p - int(offs[ri])
        if r.policy == "base":
            c = local // (r.page_size // base_page)
            if c not in chunk_state[ri]:
                chunk_state[ri][c] = "base"
                if mem.alloc(mem.order_of(r.page_size)) is None:
                    raise OutOfMemory(
                        f"memory is full: no free {format_size(r.page_size)} block for region {r.name!r} "
                        "(memory pressure and reclaim are not modelled yet)"
                    )
            continue
        per = r.page_size // base_page
        c = local // per
        st = chunk_state[ri].get(c)
        if st is None:
            k = mem.order_of(r.page_size)
            b = mem.alloc(k)
            if b is None and compaction:
                moved = mem.compact(k)
                if moved is not None:
                    migrated += moved
                    b = mem.alloc(k)
            if b is not None:
                chunk_state[ri][c] = "huge"
                granted[ri] += 1
                continue
            chunk_state[ri][c] = "base"
            fallbacks[ri] += 1
            st = "base"
        if st == "base":
            if mem.alloc(0) is None:
                raise OutOfMemory(f"memory is full: no base frame for region {r.name!r} (memory pressure and reclaim are not modelled yet)")
    regions = []
    for ri, r in enumerate(layout.regions):
        if r.policy not in ("thp", "mpss"):
            regions.append(r)
            continue
        n = r.pages
        runs, cur, start = [], None, 0
        for c in range(n + 1):
            kind = None if c == n else ("huge" if chunk_state[ri].get(c) == "huge" else "base")
            if kind != cur:
                if cur is not None:
                    runs.append((cur, start, c))
                cur, start = kind, c
        for kind, c0, c1 in runs:
            size = r.page_size if kind == "huge" else base_page
            regions.append(Region(r.start + c0 * r.page_size, (c1 - c0) * r.page_size, size, r.name, r.mode, 1, r.policy))
    report = {
        "huge_granted": {layout.regions[i].name: granted[i] for i in range(len(granted))},
        "huge_fallbacks": {layout.regions[i].name: fallbacks[i] for i in range(len(fallbacks))},
        "pages_migrated": migrated,
        "memory_after": mem.describe(),
    }
    return Layout(tuple(regions)), report, mem
