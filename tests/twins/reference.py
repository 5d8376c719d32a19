"""A plain-Python reference model of pagesim's translation simulator.

Written for clarity, not speed: every set is a Python list, every page a dict entry, no fast path.
It reads the same Machine and Layout objects and must produce identical counters
(tests/kernels/test_differential.py). If the two disagree, this file is the specification.
"""

from __future__ import annotations

from collections import defaultdict

# the model's constants are shared with the kernels; the logic below is this oracle's own
from pagesim._kernels.rules import FRAME_MULT, LARGE_SEGMENT_SHIFT, SALT_MULT, SEGMENT_SHIFT, VSID_MASK, VSID_MULT


class XorShift:
    def __init__(self, seed: int):
        self.x = (seed * 0x9E3779B97F4A7C15 + 0x2545F4914F6CDD1D) % (1 << 64) or 1

    def next(self) -> int:
        x = self.x
        x ^= (x << 13) & 0xFFFFFFFFFFFFFFFF
        x ^= x >> 7
        x ^= (x << 17) & 0xFFFFFFFFFFFFFFFF
        self.x = x
        return x


class RefCache:
    """One set-associative structure. LRU sets are lists ordered most-recent first; FIFO sets are
    lists ordered oldest first; random and tree pseudo-LRU sets are fixed arrays of ways (None =
    empty), a pseudo-LRU set with its tree as a list of bits (node n, 1 the root, children 2n and
    2n + 1; 1: the victim is on the right)."""

    def __init__(self, sets: int, ways: int, policy: str, rng: XorShift):
        self.nsets, self.ways, self.policy, self.rng = sets, ways, policy, rng
        if policy in ("random", "plru"):
            self.sets = [[None] * ways for _ in range(sets)]
            self.tree = [[0] * ways for _ in range(sets)]
        else:
            self.sets = [[] for _ in range(sets)]

    def _plru_use(self, bits: list, way: int) -> None:
        """Every node on ``way``'s path points away from it."""
        node, lo, span = 1, 0, self.ways
        while span > 1:
            span //= 2
            right = way >= lo + span
            bits[node] = 0 if right else 1
            node = 2 * node + right
            lo += span if right else 0

    def _plru_victim(self, bits: list) -> int:
        node, lo, span = 1, 0, self.ways
        while span > 1:
            span //= 2
            right = bits[node]
            node = 2 * node + right
            lo += span if right else 0
        return lo

    def access(self, key: int, tag) -> bool:
        s = self.sets[key % self.nsets]
        if self.policy == "lru":
            if tag in s:
                s.remove(tag)
                s.insert(0, tag)
                return True
            if len(s) == self.ways:
                s.pop()
            s.insert(0, tag)
            return False
        if self.policy == "fifo":
            if tag in s:
                return True
            if len(s) == self.ways:
                s.pop(0)
            s.append(tag)
            return False
        if self.policy == "plru":
            bits = self.tree[key % self.nsets]
            if tag in s:
                self._plru_use(bits, s.index(tag))
                return True
            way = s.index(None) if None in s else self._plru_victim(bits)
            s[way] = tag
            self._plru_use(bits, way)
            return False
        if tag in s:
            return True
        if None in s:
            s[s.index(None)] = tag
        else:
            s[self.rng.next() % self.ways] = tag
        return False


def _guest_frame(n: int, salt: int, bits: int) -> int:
    """Where a virtualised guest keeps page or table number n: the top ``bits`` bits of
    (n xor salt x SALT_MULT) x FRAME_MULT, in 64-bit arithmetic."""
    if bits <= 0:
        return 0
    mask = (1 << 64) - 1
    return (((n ^ (salt * SALT_MULT & mask)) * FRAME_MULT) & mask) >> (64 - bits)


def _log2(v):
    return v.bit_length() - 1


def reference_simulate(machine, layout, accesses, kinds=None, seed=0, flush_at=None, walk_log=None, walk_index=None):
    """Simulate ``accesses`` (ints) and return a dict of counters keyed like the Dataset variables,
    each a dict {(...index...): count} with only non-zero entries.

    flush_at: {access index: structure names (TLBs, page-walk caches, 'SLB')} emptied just before
    that access (a context switch). walk_log: a list that receives (address, references, page-size
    index) for every walk; walk_index: a list that receives the index of the access that walked."""
    flush_at = flush_at or {}
    m = machine
    rng = XorShift(seed)
    sizes = list(m.page_sizes)
    tlbs = list(m.structures)
    caches = {s.name: RefCache(s.sets, s.ways, s.replacement, rng) for s in tlbs}
    slb = RefCache(m.slb.sets, m.slb.ways, m.slb.replacement, rng) if m.slb is not None else None
    w = m.walker
    pwcs = [(p, RefCache(p.entries // p.ways, p.ways, p.replacement, rng)) for p in w.pwc] if w.kind == "radix" else []
    regions = sorted(layout.regions, key=lambda r: r.start)
    state = {}  # page -> 1 touched, 2 prefaulted and not yet touched
    hpt_where = {}  # page -> 1 primary, 2 secondary (absent: not in the table)
    hpt_groups = defaultdict(list)  # group -> list of 8 slots
    hpt_rr = defaultdict(int)
    tsb = {}
    c = defaultdict(int)

    host = m.host
    if host is not None:
        ntlb = RefCache(host.nested_tlb // host.nested_tlb_ways, host.nested_tlb_ways, "lru", rng) if host.nested_tlb else None
        host_pwcs = [(pw, RefCache(pw.entries // pw.ways, pw.ways, "lru", rng)) for pw in host.walker.pwc]

    def host_translate(g, z, hp=None):
        """The host's references to translate guest-physical address g, in host pages of ``hp``
        bytes (None: the default host page): the nested TLB, else a walk of the host's table less
        what its deepest hitting page-walk cache skips."""
        hp = hp or host.page_size
        if ntlb is not None:
            key = (g >> _log2(hp)) | (host.page_sizes.index(hp) << 56)
            if ntlb.access(key, key):
                c[("nested_tlb_hits", z)] += 1
                return 0
            c[("nested_tlb_misses", z)] += 1
        levels = host.walker.leaf_refs(hp)
        best = 0
        for pw, cache in host_pwcs:
            if pw.skip < levels:
                key = g >> host.walker.pwc_shift(pw.skip)
                if cache.access(key, key):
                    c[("host_pwc_hits", pw.name, z)] += 1
                    best = max(best, pw.skip)
                else:
                    c[("host_pwc_misses", pw.name, z)] += 1
        return levels - best

    def region_of(a):
        for r in regions:
            if r.start <= a < r.end:
                return r
        raise ValueError(f"address {a:#x} outside the layout")

    def hpt_insert(page, a, p):
        shift = _log2(p)
        seg_shift = SEGMENT_SHIFT if shift < SEGMENT_SHIFT else LARGE_SEGMENT_SHIFT
        vsid = ((a >> seg_shift) * VSID_MULT) & VSID_MASK
        pidx = (a & ((1 << seg_shift) - 1)) >> shift
        mask = w.hpt_ptegs - 1
        h = (vsid ^ pidx) & mask
        for grp, where in ((h, 1), ((~h) & mask, 2)):
            slots = hpt_groups[grp] or [None] * 8
            hpt_groups[grp] = slots
            if None in slots:
                slots[slots.index(None)] = page
                hpt_where[page] = where
                return
        slots = hpt_groups[h]
        old = slots[hpt_rr[h]]
        del hpt_where[old]
        c["hpt_evictions"] += 1
        slots[hpt_rr[h]] = page
        hpt_where[page] = 1
        hpt_rr[h] = (hpt_rr[h] + 1) % 8

    for i, a in enumerate(accesses):
        for name in flush_at.get(i, ()):
            if name == "SLB":
                slb = RefCache(m.slb.sets, m.slb.ways, m.slb.replacement, rng)
            elif name in caches:
                s = next(s for s in tlbs if s.name == name)
                caches[name] = RefCache(s.sets, s.ways, s.replacement, rng)
            else:
                j = next(j for j, (pw, _) in enumerate(pwcs) if pw.name == name)
                pw = pwcs[j][0]
                pwcs[j] = (pw, RefCache(pw.entries // pw.ways, pw.ways, pw.replacement, rng))
        kind = "data" if kinds is None or kinds[i] == 0 else "instr"
        r = region_of(a)
        p = r.page_size
        z = sizes.index(p)
        page = (r.start, (a - r.start) // p)
        c[("accesses", kind, z)] += 1
        hit = False
        # a virtualised machine's host regions: the data's host page, and the TLB entries it allows
        hp = None
        if host is not None and host.regions:
            hp = next((q for lo, hi, q in host.regions if lo <= r.start and r.end <= hi), host.page_size)
        e = p if hp is None else min(p, hp)
        for j, s in enumerate(m.chain(kind, e)):
            key = a >> _log2(s.entry_size(e))
            if caches[s.name].access(key, (key, e)):
                c[("hits", s.name, z)] += 1
                hit = True
                break
            c[("misses", s.name, z)] += 1
            if j == 0 and slb is not None:
                seg = a >> SEGMENT_SHIFT
                c[("hits" if slb.access(seg, seg) else "misses", "SLB", z)] += 1
        if hit:
            continue
        c[("walks", kind, z)] += 1
        faulted = page not in state
        if faulted:
            c[("faults", z)] += 1
            vpn = a // p
            for q in range(vpn - vpn % r.fault_around, vpn - vpn % r.fault_around + r.fault_around):
                qpage = (r.start, (q * p - r.start) // p)
                if r.start <= q * p < r.end and qpage not in state:
                    state[qpage] = 2
                    c[("prefaulted", z)] += 1
            c[("prefaulted", z)] -= 1
            state[page] = 1
        elif state[page] == 2:
            state[page] = 1
        if w.kind == "radix":
            refs = w.leaf_refs(p)
            best = 0
            for pw, cache in pwcs:
                if pw.skip < refs:
                    key = a >> w.pwc_shift(pw.skip)
                    if cache.access(key, key):
                        c[("pwc_hits", pw.name, z)] += 1
                        best = max(best, pw.skip)
                    else:
                        c[("pwc_misses", pw.name, z)] += 1
            refs -= best
            if host is not None:
                host_refs = 0
                top = w.leaf_refs(p) - 1  # the leaf's level, counted from the top (0)
                for lv in range(top - refs + 1, top + 1):
                    shift = w.base_shift + sum(w.level_bits[lv + 1 :])
                    bits = w.level_bits[lv]
                    table = a >> (shift + bits)
                    frame = _guest_frame(table, lv + 1, _log2(host.guest_ram) - 3 - bits)
                    host_refs += host_translate(frame * (8 << bits) + 8 * ((a >> shift) % (1 << bits)), z)
                frame = _guest_frame(a // p, 0, _log2(host.guest_ram) - _log2(p))
                area = host.page_sizes.index(hp) if hp is not None else 0
                host_refs += host_translate(area * host.guest_ram + frame * p + a % p, z, hp)
                c[("host_walk_refs", kind, z)] += host_refs
                refs += host_refs
        elif w.kind == "hashed":
            where = hpt_where.get(page)
            if where == 1:
                refs = 1
            elif where == 2:
                refs = 2
                c[("hpt_secondary", z)] += 1
            else:
                if not faulted:
                    c["hpt_refills"] += 1
                hpt_insert(page, a, p)
                refs = 2
        elif w.kind == "tsb":
            vpn = a >> _log2(p)
            slot = (z, vpn % w.tsb_entries)
            if tsb.get(slot) == vpn:
                c[("tsb_hits", kind, z)] += 1
                refs = 1
            else:
                c[("tsb_misses", kind, z)] += 1
                tsb[slot] = vpn
                refs = 1 + w.sw_walk_refs
        else:
            refs = 1
        c[("walk_refs", kind, z)] += refs
        if walk_log is not None:
            walk_log.append((a, refs, z))
        if walk_index is not None:
            walk_index.append(i)
    return {k: v for k, v in c.items() if v}, sum(1 for v in state.values() if v == 1)
