"""The OS stage: what backs each region, decided fault by fault with a PhysicalMemory.

Region policies (``Region.policy``):
  base     every page of the region's page size comes from the allocator at its first touch.
  thp      Linux transparent huge pages. The region's page_size is the huge page it asks for; the
           region itself starts and ends on base pages (a 3 MiB ``MADV_HUGEPAGE`` mapping). Only a
           chunk that is a huge-page-aligned range wholly inside the region can be a huge page (Linux
           falls back when ``haddr < vma->vm_start || haddr + HPAGE_PMD_SIZE > vma->vm_end``:
           ``transhuge_vma_suitable``, now ``thp_vma_suitable_order``, in include/linux/huge_mm.h);
           the partial chunks at the head and tail are base pages, each allocated at its own first
           touch, and are no fallback. The first fault in a whole chunk maps a huge page when the
           allocator has a free aligned block (after compaction, if enabled); otherwise that chunk
           is backed by base pages too (in the backing layout, base-page pieces say policy 'base').
           Measured on Linux 6.18 (x86-64, THP in madvise mode, ``pagesim host``): 3 MiB aligned
           takes 257 faults (1 huge + 256 x 4K), 4 MiB starting 1 MiB past a 2 MiB boundary 513.
           Not modelled: multi-size THP (Linux 6.8+, off by default), which can back the rest
           with folios between the base and the huge page.
  mpss     Solaris MPSS: the same rule for the preferred page size (a modelling simplification:
           Solaris may also try sizes between the preferred and the base page).
  hugetlb  hugetlbfs: pages come from the pool reserved up front (``reserve_hugetlb``); the whole
           region is taken from it when the layout is mapped, and a pool too small fails there.

Without a PhysicalMemory every request is granted (``granted``): each whole chunk of a THP or
MPSS region is a huge page and the partial chunks are base pages, as above. A THP, MPSS or
hugetlb region whose page_size is not larger than the base page is refused (it would ask for no
huge page); ``default_huge_page`` gives the size simulate(policy=...) uses without a page_size.

First touches happen in the same order whatever backs a page, so one pass over the accesses gives
the order of first touches of base pages, and replaying it through the allocator gives every
decision in fault order. The result is a layout of the backing actually given (what ``pmap -sx``
shows), which the translation stage then simulates.
"""

from __future__ import annotations

import numpy as np

from .._kernels.firsttouch import first_touches
from ..core.check import check_choice
from ..core.units import format_size, log2
from ..model.layout import POLICIES, Layout, Region
from .memory import OutOfMemory, PhysicalMemory

CHUNKED = ("thp", "mpss")  # backed chunk by chunk: a huge page where one fits and is free, else base pages
MAX_BASE_PAGES = 1 << 26  # the first-touch list takes 8 bytes a base page
HASHED_HUGE = 16 << 20  # 003_e083a135b5a1afda.txt: POWER8 Linux uses 16M for Hugepage and for THP


def default_huge_page(machine, policy: str) -> int:
    """The huge page size a ``policy`` region gets on ``machine`` when no page_size is given.

    radix tables: the page one level above the base page maps (Linux's PMD size, the THP size:
    2M with 4K pages, 32M with 16K pages); hashed (POWER): 16M. Other tables (SPARC TSB, Itanium
    VHPT) have no single such size, so the caller must say which.
    """
    w = machine.walker
    if w.kind == "radix":
        shifts = w.radix_leaf_shifts()
        if len(shifts) > 1 and 1 << shifts[0] == machine.base_page and 1 << shifts[1] in machine.page_sizes:
            return 1 << shifts[1]
    elif w.kind == "hashed" and HASHED_HUGE in machine.page_sizes and HASHED_HUGE > machine.base_page:
        return HASHED_HUGE
    larger = ", ".join(format_size(p) for p in machine.page_sizes if p > machine.base_page) or "none"
    raise ValueError(
        f"policy={policy!r} without page_size: machine {machine.name!r} ({w.kind} page table) has no default huge page size; give page_size=, one of {larger}"
    )


def huge_page_for(machine, policy: str, page_size=None) -> int:
    """The page size of simulate(policy=...)'s regions: ``page_size``, or the machine's default
    huge page; refused when it is not larger than the base page."""
    check_choice("policy", policy, POLICIES)
    if page_size is None:
        return default_huge_page(machine, policy)
    p = machine.check_page_size(page_size)
    if p <= machine.base_page:
        larger = ", ".join(format_size(q) for q in machine.page_sizes if q > machine.base_page) or "none on this machine"
        try:
            default_huge_page(machine, policy)
            omit = ", or leave page_size out for the machine's huge page"
        except ValueError:  # no default on this machine: do not suggest leaving it out
            omit = ""
        raise ValueError(
            f"page_size={format_size(p)} with policy={policy!r}: the page size of a {policy} region is the huge page it asks "
            f"for, larger than the base page {format_size(machine.base_page)} of machine {machine.name!r}; allowed: {larger}{omit} "
            "(or use policy='base')"
        )
    return p


def _chunks(r: Region) -> tuple[int, int, int, int]:
    """(first chunk number, chunks spanned, first whole chunk, end of whole chunks), chunks counted
    from the huge-page-aligned boundary at or below the region's start."""
    p = r.page_size
    c0 = r.start // p
    return c0, -(-r.end // p) - c0, -(-r.start // p) - c0, r.end // p - c0


def backing_regions(r: Region, huge, base_page: int) -> list[Region]:
    """The pieces of THP/MPSS region ``r`` as mapped: runs of huge chunks (``huge(c)`` true, chunk
    numbers as in ``_chunks``) in ``r.page_size`` pages, everything else in base pages."""
    c0, n, _, _ = _chunks(r)
    runs, cur, first = [], None, 0
    for c in range(n + 1):
        kind = None if c == n else bool(huge(c))
        if kind != cur:
            if cur is not None:
                runs.append((cur, first, c))
            cur, first = kind, c
    out = []
    for is_huge, a, b in runs:
        s, e = max(r.start, (c0 + a) * r.page_size), min(r.end, (c0 + b) * r.page_size)
        if is_huge:
            out.append(Region(s, e - s, r.page_size, r.name, r.mode, 1, r.policy))
        else:
            out.append(Region(s, e - s, base_page, r.name, r.mode, 1, "base"))
    return out


def granted(layout: Layout, base_page: int) -> Layout:
    """The backing when every request is granted: every whole chunk of a THP/MPSS region is a
    huge page, its partial head and tail chunks base pages. Other regions are kept as they are."""
    if all(r.policy == "base" for r in layout.regions):
        return layout  # nothing to check (_check_huge passes every base region) or split
    for r in layout.regions:
        _check_huge(r, base_page)
    if not any(r.policy in CHUNKED for r in layout.regions):
        return layout
    regions = []
    for r in layout.regions:
        if r.policy in CHUNKED:
            _, _, lo, hi = _chunks(r)
            regions += backing_regions(r, lambda c, lo=lo, hi=hi: lo <= c < hi, base_page)
        else:
            regions.append(r)
    return Layout(tuple(regions))


def _check(layout: Layout, base_page: int) -> None:
    for r in layout.regions:
        check_choice(f"region {r.name!r} policy", r.policy, POLICIES)
        if r.page_size < base_page:
            raise ValueError(f"region {r.name!r} page_size={format_size(r.page_size)} is below the base page {format_size(base_page)}")
        _check_huge(r, base_page)


def _check_huge(r: Region, base_page: int) -> None:
    """A THP/MPSS/hugetlb region asks for a page larger than the base page; a THP/MPSS region
    starts and ends on the base page."""
    if r.policy != "base" and r.page_size <= base_page:
        raise ValueError(
            f"region {r.name!r} page_size={format_size(r.page_size)} with policy={r.policy!r}: a {r.policy} region's "
            f"page_size is the huge page it asks for, larger than the base page {format_size(base_page)} "
            "(or use policy='base' for base pages)"
        )
    if r.policy in CHUNKED and (r.start % base_page or r.length % base_page):
        raise ValueError(
            f"region {r.name!r} [{r.start:#x}, {r.end:#x}) with policy={r.policy!r} does not start and end on the base page {format_size(base_page)}"
        )


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


_NO_RECLAIM = " (a PhysicalMemory does not reclaim: give it more memory, or model a RAM limit with reclaim and swap with ram=Ram(...))"


def resolve(layout: Layout, chunks, memory: PhysicalMemory, base_page: int, compaction: bool = False):
    """Decide the backing of every region. Returns (layout actually given, report dict, memory after)."""
    mem = memory  # the caller passes a copy it owns
    if mem.frame != base_page:
        raise ValueError(
            f"memory frames are {format_size(mem.frame)} but the machine's base page is {format_size(base_page)}: "
            f"make PhysicalMemory(frame='{format_size(base_page)}')"
        )
    _check(layout, base_page)
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
    chunk_state = [dict() for _ in layout.regions]  # chunk number (see _chunks) -> 'huge' | 'base'
    spans = [_chunks(r) for r in layout.regions]
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
                    raise OutOfMemory(f"memory is full: no free {format_size(r.page_size)} block for region {r.name!r}" + _NO_RECLAIM)
            continue
        per = r.page_size // base_page
        c0, _, lo, hi = spans[ri]
        c = (r.start // base_page + local) // per - c0
        st = chunk_state[ri].get(c)
        if st is None and not lo <= c < hi:  # a partial chunk at the head or tail: no huge page fits
            chunk_state[ri][c] = st = "base"
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
                raise OutOfMemory(f"memory is full: no base frame for region {r.name!r}" + _NO_RECLAIM)
    regions = []
    for ri, r in enumerate(layout.regions):
        if r.policy not in CHUNKED:
            regions.append(r)
            continue
        regions += backing_regions(r, lambda c, st=chunk_state[ri]: st.get(c) == "huge", base_page)
    report = {
        "huge_granted": {layout.regions[i].name: granted[i] for i in range(len(granted))},
        "huge_fallbacks": {layout.regions[i].name: fallbacks[i] for i in range(len(fallbacks))},
        "pages_migrated": migrated,
        "memory_after": mem.describe(),
    }
    return Layout(tuple(regions)), report, mem
