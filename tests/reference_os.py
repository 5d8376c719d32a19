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
    """The free lists rebuilt block by block with heappush (pagesim's code before issue 11 part 4):
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
    """compact() as it was: the first aligned block with no pinned or in-use frame whose movable pages
    fit elsewhere; its free frames taken, each movable page allocated elsewhere one by one."""
    import numpy as np

    size = 1 << order
    n = mem.nframes // size
    st = mem.state[: n * size].reshape(n, size)
    ok = ~((st == 1) | (st == 3)).any(axis=1)
    for b in np.flatnonzero(ok).tolist():
        moving = np.flatnonzero(st[b] == 2)
        if moving.size == 0:
            continue
        if int(np.count_nonzero(mem.state == 0)) - int(np.count_nonzero(st[b] == 0)) < moving.size:
            continue
        mem.state[b * size : (b + 1) * size][st[b] == 0] = 3
        mem._heads, mem._heaps = rebuild(mem)
        for _ in range(moving.size):
            assert mem.alloc(0, 2) is not None
        mem.state[b * size : (b + 1) * size] = 0
        mem._heads, mem._heaps = rebuild(mem)
        mem.migrated += int(moving.size)
        return int(moving.size)
    return None
