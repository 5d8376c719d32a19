"""Hypothesis strategies for the translation kernels and their twins: random machines (radix,
hashed, TSB and VHPT walkers; page-walk caches; structures first in one kind's chain and later in
the other's; wide sets) and layouts and traces over them."""

import dataclasses

import numpy as np
from hypothesis import strategies as st

from pagesim import Layout, Machine, PageWalkCache, Region, Structure, Walker
from pagesim._kernels import policies

KIB = 1024


WIDE_WAYS = [17, 20, 33, 64, 72, 128]  # more than 16 ways: a direct index or a hash table, and recency rings


def policies_for(ways: int) -> list[str]:
    """Every replacement policy pagesim has that allows sets of ``ways``."""
    return [name for name, p in policies.BY_NAME.items() if p.allows(ways) is None]


@st.composite
def machines(draw, cross=None, wide=False, kinds=("radix", "hashed", "tsb", "vhpt")):
    """A random machine; ``wide``: every TLB has more than 16 ways (some sets not a power of two);
    ``kinds``: the walkers to draw from."""
    kind = draw(st.sampled_from(kinds))
    if kind == "radix":
        bits = draw(st.sampled_from([(3, 3, 3, 3), (2, 4, 3), (4, 4, 4, 4), (9, 9, 9, 9)]))
        base = 12
        leaves, acc = [], base
        for b in reversed(bits):
            leaves.append(1 << acc)
            acc += b
        pool = leaves[:3]
        npwc = draw(st.integers(0, len(bits) - 1))
        skips = draw(st.permutations(list(range(1, len(bits)))))[:npwc]
        pwc = tuple(
            PageWalkCache(f"pwc{s}", s, entries, ways, replacement=draw(st.sampled_from(policies_for(ways))))
            for s in skips
            for entries, ways in [draw(st.sampled_from([(1, 1), (2, 2), (4, 2), (4, 1)]))]
        )
        walker = Walker("radix", level_bits=bits, base_shift=base, pwc=pwc)
    else:
        pool = [4 * KIB, 8 * KIB, 64 * KIB, 2048 * KIB]
        walker = Walker(kind, tsb_entries=draw(st.sampled_from([1, 4, 64])), hpt_ptegs=draw(st.sampled_from([1, 2, 16])), sw_walk_refs=draw(st.integers(1, 4)))
    sizes = sorted(draw(st.sets(st.sampled_from(pool), min_size=1, max_size=3)))
    structs = []
    nlev = draw(st.integers(2 if cross else 0, 3))
    # A structure can be first in one kind's chain and later in the other's: a level that only one
    # side has (a data-only L1 below a unified L2 makes the L2 first for instructions). Half the
    # machines are built that way on purpose, so the fast path's guard for it is always exercised.
    cross = nlev >= 2 and (draw(st.booleans()) if cross is None else cross)
    for level in range(1, nlev + 1):
        if cross and level == 1:
            sides = draw(st.sampled_from([("data",), ("instr",)]))
        elif cross:
            sides = ("unified",)
        else:
            sides = draw(st.sampled_from([("unified",), ("data", "instr"), ("data",), ("instr",)]))
        for side in sides:
            held = draw(st.sets(st.sampled_from(sizes), min_size=1))
            groups = [sorted(held)] if draw(st.booleans()) else [[p] for p in sorted(held)]
            for g in groups:
                # a small shared structure is where the other kind's accesses evict entries
                if wide:
                    ways, sets = draw(st.sampled_from(WIDE_WAYS)), draw(st.sampled_from([1, 1, 2, 3, 5]))
                else:
                    ways = draw(st.sampled_from([1, 2] if cross and level > 1 else [1, 2, 3, 4, 5, 8, 16, 17, 20]))
                    sets = draw(st.sampled_from([1, 2, 3, 4]))
                max_entry = draw(st.sampled_from([None, None, 4 * KIB])) if min(g) >= 4 * KIB else None
                structs.append(
                    Structure(
                        name=f"L{level}{side[0]}{'-'.join(map(str, g))}",
                        level=level,
                        side=side,
                        entries=sets * ways,
                        ways=ways,
                        sizes=tuple(g),
                        replacement=draw(st.sampled_from(policies_for(ways))),
                        max_entry=max_entry,
                    )
                )
    slb = None
    if kind == "hashed" and structs and draw(st.booleans()):
        slb = (
            Structure("SLB", 1, "unified", 2, 2, (sizes[0],))
            if not wide
            else Structure("SLB", 1, "unified", 32, 32, (sizes[0],), draw(st.sampled_from(["lru", "fifo"])))
        )
    return Machine(name="random", title="hypothesis machine", page_sizes=tuple(sizes), base_page=sizes[0], structures=tuple(structs), walker=walker, slb=slb)


@st.composite
def cases(draw, cross=None, wide=False, virtualised=False):
    """A machine, a layout, addresses, kinds and a seed. ``wide``: machines(wide=True), with regions
    and traces long enough to touch more pages than a wide structure holds (so it evicts).
    ``virtualised``: a radix machine under a host (its page one of the machine's, a nested TLB or
    none, the host's page-walk caches the guest's or none, guest RAM from the largest page up)."""
    m = draw(machines(cross, wide, kinds=("radix",) if virtualised else ("radix", "hashed", "tsb", "vhpt")))
    if virtualised:
        entries, ways = draw(st.sampled_from([(0, 1), (1, 1), (4, 2), (6, 2), (16, 4), (16, 16), (34, 17)]))  # sets of up to 16 ways and wider
        pwc = tuple(dataclasses.replace(p, replacement="lru") for p in m.walker.pwc) if draw(st.booleans()) else ()
        host_walker = Walker("radix", level_bits=m.walker.level_bits, base_shift=m.walker.base_shift, pwc=pwc)
        reach = m.walker.base_shift + sum(m.walker.level_bits)  # the host table's, shaped like the guest's
        ram = draw(st.sampled_from([r for r in (2 << 20, 64 << 20, 16 << 30) if max(m.page_sizes) <= r <= 1 << reach]))
        host = dict(host_page=draw(st.sampled_from(m.page_sizes)), nested_tlb=entries, nested_tlb_ways=ways, host_walker=host_walker, guest_ram=ram)
    nreg = draw(st.integers(1, 3))
    regions, at = [], 1 << 33
    for i in range(nreg):
        p = draw(st.sampled_from(m.page_sizes))
        npages = draw(st.sampled_from([1, 2, 3, 6, 40] + ([300, 700] if wide else [])))
        at = -(-at // p) * p + draw(st.sampled_from([0, 1, 3])) * p
        regions.append(Region(at, npages * p, p, f"r{i}", fault_around=draw(st.sampled_from([1, 1, 2, 4, 16]))))
        at += npages * p
        if draw(st.booleans()):
            at += draw(st.sampled_from([1 << 28, 1 << 30]))  # another SLB segment / PWC tag
    if virtualised:
        # host regions: some layout regions (and whatever else their host pages' bounds take in
        # whole) on other host pages, or none
        hosted = []
        for r in regions:
            if not draw(st.booleans()):
                continue
            h = draw(st.sampled_from([p for p in m.page_sizes if p <= ram]))
            lo, hi = r.start // h * h, -(-r.end // h) * h
            cut = any(lo < o.end and o.start < hi and not (lo <= o.start and o.end <= hi) for o in regions)
            if not cut and not any(lo < b and a < hi for a, b, _ in hosted):
                hosted.append((lo, hi, h))
        if len({h for *_, h in hosted} | {host["host_page"]}) * ram > 1 << reach:
            hosted = []  # each host page's guest memory would not fit in the host table's reach
        m = m.virtualised(**host, host_regions=hosted)
    layout = Layout(tuple(regions))
    seed = draw(st.integers(0, 2**32))
    n = draw(st.integers(1, 2000 if wide else 400))
    rng = np.random.default_rng(seed)
    addrs, prev = [], None
    for _ in range(n):
        u = rng.random()
        if prev is not None and u < 0.4:
            a = prev + int(rng.integers(-64, 64))  # near the last access: the fast path
            r = next((r for r in regions if r.start <= a < r.end), None)
            if r is None:
                a = prev
        elif prev is not None and u < 0.5:
            a = prev
        elif len(addrs) >= 2 and u < 0.65:
            a = addrs[-2]  # back to the access before last (often of the other kind)
        else:
            r = regions[int(rng.integers(len(regions)))]
            a = r.start + int(rng.integers(r.length))
        addrs.append(a)
        prev = a
    mix = draw(st.sampled_from(["data", "random", "alternate"]))
    if mix == "data":
        kinds = None
    elif mix == "random":
        kinds = rng.integers(0, 2, n).astype(np.uint8)
    else:  # kinds alternating, so an access and the one before last share a kind
        kinds = (np.arange(n) % 2).astype(np.uint8)
    return m, layout, np.array(addrs, dtype=np.uint64), kinds, seed
