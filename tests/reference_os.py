"""A plain reference for the OS stage: walk the accesses one by one and apply each region's policy
at each fault, with no first-touch pass. It shares only the allocator (tested on its own against a
brute-force scan in test_memory.py)."""


def reference_backing(layout, addresses, mem, base_page, compaction=False):
    state = {}  # (region index, chunk) -> 'huge' | 'base'; (region index, 'p', base page) -> True
    granted, fallbacks = {}, {}
    for a in addresses:
        ri = next(i for i, r in enumerate(layout.regions) if r.start <= a < r.end)
        r = layout.regions[ri]
        if r.policy == "hugetlb":
            continue
        chunk = (a - r.start) // r.page_size
        if r.policy == "base":
            if (ri, chunk) not in state:
                state[(ri, chunk)] = "base"
                assert mem.alloc(mem.order_of(r.page_size)) is not None
            continue
        if (ri, chunk) not in state:
            k = mem.order_of(r.page_size)
            b = mem.alloc(k)
            if b is None and compaction and mem.compact(k) is not None:
                b = mem.alloc(k)
            state[(ri, chunk)] = "huge" if b is not None else "base"
            key = "huge" if b is not None else "base"
            (granted if b is not None else fallbacks)[r.name] = (granted if b is not None else fallbacks).get(r.name, 0) + 1
            if key == "huge":
                continue
        if state[(ri, chunk)] == "base":
            bp = (a - r.start) // base_page
            if (ri, "p", bp) not in state:
                state[(ri, "p", bp)] = True
                assert mem.alloc(0) is not None
    huge_chunks = {k for k, v in state.items() if v == "huge"}
    return huge_chunks, granted, fallbacks, mem.state.copy()
