"""A plain reference for the OS stage: walk the accesses one by one and apply each region's policy
at each fault, with no first-touch pass. It shares only the allocator (tested on its own against a
brute-force scan in test_memory.py).

A THP/MPSS region's chunks are the huge-page-aligned ranges of its page size that it overlaps; a
huge page is tried only for a chunk lying wholly inside the region (Linux maps a huge page only if
``haddr >= vma->vm_start and haddr + HPAGE_PMD_SIZE <= vma->vm_end``); a partial chunk at the head
or tail is base pages, and no fallback."""


def reference_backing(layout, addresses, mem, base_page, compaction=False):
    state = {}  # (region index, chunk start address) -> 'huge' | 'base'; (region index, 'p', base page) -> True
    granted, fallbacks = {}, {}
    for a in addresses:
        ri = next(i for i, r in enumerate(layout.regions) if r.start <= a < r.end)
        r = layout.regions[ri]
        if r.policy == "hugetlb":
            continue
        chunk = a - a % r.page_size
        if r.policy == "base":
            if (ri, chunk) not in state:
                state[(ri, chunk)] = "base"
                assert mem.alloc(mem.order_of(r.page_size)) is not None
            continue
        if (ri, chunk) not in state:
            if chunk < r.start or chunk + r.page_size > r.end:
                state[(ri, chunk)] = "base"
            else:
                k = mem.order_of(r.page_size)
                b = mem.alloc(k)
                if b is None and compaction and mem.compact(k) is not None:
                    b = mem.alloc(k)
                state[(ri, chunk)] = "huge" if b is not None else "base"
                tally = granted if b is not None else fallbacks
                tally[r.name] = tally.get(r.name, 0) + 1
                if b is not None:
                    continue
        if state[(ri, chunk)] == "base":
            bp = a - a % base_page
            if (ri, "p", bp) not in state:
                state[(ri, "p", bp)] = True
                assert mem.alloc(0) is not None
    huge_chunks = {k for k, v in state.items() if v == "huge"}
    return huge_chunks, granted, fallbacks, mem.state.copy()


def reference_faults(layout, addresses, base_page, huge_chunks):
    """First-touch faults given the huge chunks (as reference_backing returns them): one per huge
    chunk touched, one per base page touched elsewhere, one per page of a base or hugetlb region."""
    seen = set()
    for a in addresses:
        ri = next(i for i, r in enumerate(layout.regions) if r.start <= a < r.end)
        r = layout.regions[ri]
        chunk = a - a % r.page_size
        if r.policy in ("base", "hugetlb") or (ri, chunk) in huge_chunks:
            seen.add((ri, chunk))
        else:
            seen.add((ri, "p", a - a % base_page))
    return len(seen)


def reference_rebuild_free_lists(mem):
    """The free lists rebuilt block by block with heappush (an earlier, slower form of pagesim's own code):
    for each order from the largest, every aligned all-free block not inside a larger one."""
    import heapq

    import numpy as np

    heads, heaps = {}, [[] for _ in range(mem.max_order + 1)]
    free = mem.state == 0
    covered = np.zeros(mem.nframes, dtype=bool)
    for order in range(mem.max_order, -1, -1):
        size = 1 << order
        n = mem.nframes // size
        if n == 0:
            continue
        blocks = free[: n * size].reshape(n, size).all(axis=1) & ~covered[: n * size].reshape(n, size).any(axis=1)
        for b in np.flatnonzero(blocks).tolist():
            heads[b * size] = order
            heapq.heappush(heaps[order], b * size)
            covered[b * size : (b + 1) * size] = True
    return heads, heaps


def reference_compact(mem, order, rebuild):
    """compact() frame by frame: Linux's two scanners (mm/compaction.c) as pagesim models them.

    The migrate scanner walks up aligned 2**order blocks from where it stopped last time, passing
    any block with a pinned (1) or in-use (3) frame; the first block with movable (2) pages is
    compacted if the free scanner, walking down from where it stopped, finds enough free (0)
    frames above the block: each movable page, in address order, goes to the next free frame the
    free scanner meets. Otherwise, or when the next block reaches past the free scanner, the
    scanners have met and compaction is over for good. The scanner positions live in
    ``mem.ref_scanners``, apart from the code under test's."""
    sc = mem.__dict__.setdefault("ref_scanners", {"migrate": 0, "free": mem.nframes, "met": False})
    if sc["met"]:
        return None
    size = 1 << order
    b = (sc["migrate"] + size - 1) // size
    while (b + 1) * size <= mem.nframes and (b + 1) * size <= sc["free"]:
        lo, hi = b * size, (b + 1) * size
        if any(int(mem.state[f]) in (1, 3) for f in range(lo, hi)):
            sc["migrate"] = hi
            b += 1
            continue
        movers = [f for f in range(lo, hi) if int(mem.state[f]) == 2]
        if not movers:
            b += 1
            continue
        dst, f = [], sc["free"] - 1
        while len(dst) < len(movers) and f >= hi:
            if int(mem.state[f]) == 0:
                dst.append(f)
            f -= 1
        if len(dst) < len(movers):
            break
        for src, to in zip(movers, dst):
            mem.state[to] = 2
            mem.state[src] = 0
        sc["migrate"], sc["free"] = hi, dst[-1]
        mem._heads, mem._heaps = rebuild(mem)
        mem.migrated += len(movers)
        return len(movers)
    sc["met"] = True
    return None
