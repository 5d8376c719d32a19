"""A plain reference for memory pressure: an OrderedDict for LRU, a deque for clock (second chance)."""

from collections import OrderedDict, deque


def reference_pressure(layout, addresses, available, reclaim):
    resident = OrderedDict()  # page -> size, least recent first (LRU)
    queue = deque()  # clock: pages in the order they came in
    refbit = {}
    ever = set()
    used = peak = minor = major = outs = scans = 0
    last = None
    for a in addresses:
        r = next(r for r in layout.regions if r.start <= a < r.end)
        page = (r.start, (a - r.start) // r.page_size)
        if page == last:
            continue
        last = page
        if page in resident:
            if reclaim == "lru":
                resident.move_to_end(page)
            else:
                refbit[page] = 1
            continue
        if page in ever:
            major += 1
        else:
            minor += 1
            ever.add(page)
        while used + r.page_size > available:
            if reclaim == "lru":
                _, size = resident.popitem(last=False)
            else:
                while True:
                    v = queue.popleft()
                    scans += 1
                    if refbit[v]:
                        refbit[v] = 0
                        queue.append(v)
                    else:
                        break
                size = resident.pop(v)
            used -= size
            outs += 1
        resident[page] = r.page_size
        used += r.page_size
        peak = max(peak, used)
        if reclaim == "clock":
            refbit[page] = 1
            queue.append(page)
    return {"minor_faults": minor, "major_faults": major, "swap_outs": outs, "reclaim_scans": scans, "resident_peak": peak, "resident_end": used}
