"""The address-translation kernel: TLB lookups, page walks and first-touch faults over a chunk.

Model (the plain-Python twin in tests/reference.py must agree on every counter):

- An access of kind k (0 data, 1 instruction) to a page of size index z looks up the structures
  ``chain[k, z, 0..]`` in order. Each lookup either hits (LRU: the entry becomes most recent) or
  misses and fills that structure at once (so every level looked in is filled; levels not looked
  in are untouched). A hit ends the lookups.
- After a miss at the first level, the SLB (if any) is looked up with 256 MiB segment tags.
- A miss everywhere is a walk. The page's first walk is also its fault (first touch).
  Walk references: radix = levels below the leaf, minus the levels skipped by the deepest
  page-walk cache that hits (all applicable caches are looked up and filled); hashed = 1 in the
  primary group, 2 in the secondary group, 2 when the entry is not in the table (then inserted);
  tsb = 1 TSB probe, plus ``sw_walk_refs`` on a TSB miss; vhpt = 1.
- Fast path: an access in the same entry granule as the previous access of its kind is an L1 hit
  that changes no state (LRU: the entry is already most recent; FIFO and random: hits change
  nothing), so it only counts. When a structure first in one kind's chains appears anywhere in the
  other kind's chains (unified first in both, or a unified L2 that is first for instructions), any
  slow access ends the other kind's fast path.

Replacement is exact LRU, FIFO or random; empty ways fill first, lowest-numbered first. Sets of
up to 16 ways keep their recency order packed in one 64-bit word (4 bits a way, most recent in the
low nibble): a miss takes the victim from the top nibble and rotates, a hit finds the way's rank
with a SWAR zero-nibble search and moves it to the front, both O(1). Wider structures (fully
associative TLBs of 32-256 entries, SLBs) keep each set's ways in a ring of links, least recent at
the head: a miss takes the head way and moves the head on to the next way (the victim is then the
most recent, with no link changed), an LRU hit moves its way just behind the head (FIFO: nothing).
The ring starts as way 0, 1, 2, ... so empty ways fill in that order. Where a wide structure's tag
is found:
- DIRECT_LRU, DIRECT_FIFO: each granule an entry can hold (a page, a piece of one, an SLB's segment)
  has a number in the layout, ``key + idx_off[s, region]`` (``_engine.granule_offsets``; the
  structures' numbers do not overlap), and ``pos`` holds each number's way or -1: one load finds
  the way, a miss stores two. Chosen when the
  layout has at most ``_engine.DIRECT_MAX`` such granules (a random trace's miss in a 64-way
  structure: 2.5 ns, against 11 through the hash table). An LRU SLB so indexed keeps stamps
  instead of a ring (STAMP_LRU): each way's last use, so a hit is one store; a miss takes the
  oldest (an SLB mostly hits, where a ring relinks the way).
- LIST_LRU, LIST_FIFO, otherwise (and always in simulate_processes): a hash table of the
  structure's own holds (tag, way) pairs for the whole structure, since a tag determines its set
  (linear probing, backward-shift deletion). It has HASH_FACTOR pairs per entry, so it is at most
  1/8 full (probe loops of unpredictable length cost branch mispredictions: a miss in a
64-way structure measured 50 ns at 1/2 full, 16 ns at 1/8). Random fills an empty way if there is one, else way
``xorshift64() % ways``; one generator serves all structures. Every set is padded to a multiple
of 4 ways (padding never matches) so the tag search runs in branch-free groups of 4: with a
run-time way count a plain loop measured 4x slower.
"""

from collections import namedtuple

import numpy as np

from ._jit import jit
from .simd import find_way, min_way  # noqa: F401 - the specialised copies call them (specialize.py)

# How a structure keeps its replacement state (chosen in Python from policy and ways):
ORDER_LRU, ORDER_FIFO, LIST_LRU, LIST_FIFO, RANDOM_FILL, DIRECT_LRU, DIRECT_FIFO, STAMP_LRU = 0, 1, 2, 3, 4, 5, 6, 7
HASH_MULT = 0x9E3779B97F4A7C15  # Fibonacci hashing of tags into a LIST_* structure's table
HASH_FACTOR = 8  # a LIST_* structure's table has 8 (tag, way) pairs per entry
NIBBLE_ONES = np.uint64(0x1111111111111111)
NIBBLE_HIGHS = np.uint64(0x8888888888888888)
RADIX, HASHED, TSB, VHPT = 0, 1, 2, 3
NOT_IN_HPT, PRIMARY, SECONDARY = 0, 1, 2
SEGMENT_SHIFT = 28  # 256 MiB segments (SLB tags)
MAX_CHAIN = 4  # structures one access may look up in turn (the deepest preset, POWER8, has 3)
VSID_MULT = 0x5DEECE66D  # modelling assumption: a multiplicative VSID scramble

Config = namedtuple(
    "Config",
    [
        "st_sets",
        "st_ways",
        "st_mask",
        "st_mode",
        "st_base",  # int64[NS]
        "st_pways",
        "st_obase",  # int64[NS]: ways padded to a multiple of 4; first order word
        # int64[sum sets], read at a structure's first set: where its hash table starts in st.htab (LIST_*)
        "set_hash",
        "tag_shift",  # int64[NS, K]
        "idx_off",  # int64[NS, R]: key + idx_off[s, r] is a DIRECT_*/STAMP_LRU structure's granule's slot in st.pos in region r (0 for other modes)
        "chain",  # int64[2, K, L]; -1 ends a chain
        "reg_start",
        "reg_end",
        "reg_size",
        "reg_base",  # int64[R]
        "reg_fa",  # int64[R]: pages one fault maps (1: demand paging)
        "page_shift",  # int64[K]
        "walk_kind",
        "radix_refs",  # int64[1], int64[K]
        "pwc_struct",
        "pwc_skip",  # int64[P]
        "slb_struct",  # int64[1]: -1 if none
        "tsb_mask",
        "sw_walk_refs",
        "hpt_mask",  # int64[1] each
        "shared_first",  # int64[1]: 1 if a structure first in one kind's chains is in the other kind's
        "any_fa",  # int64[1]: 1 if a region maps more than one page per fault
        "log_walks",  # int64[1]: 1 to append every walk to st.wlog
    ],
)

State = namedtuple(
    "State",
    [
        "tags",  # int64[S = sum sets*padded ways]: each way's tag, -1 empty
        # int64[2 * S or 1]: LIST_*, DIRECT_* sets' recency rings, (previous way, next way) per
        # slot, -1 none; STAMP_LRU: way w's last use at links[2 * (its set's first slot) + w]
        "links",
        # uint64[sum sets]: packed recency order (ORDER_*), the ring's head (LIST_*, DIRECT_*),
        # the set's clock (STAMP_LRU) or fill count (RANDOM_FILL)
        "order",
        "htab",  # int64[2 * HASH_FACTOR * entries of every LIST_* structure, or 1]: their hash tables, (tag, way) pairs, tag -1 empty
        "pos",  # int16[sum of the DIRECT_* structures' granules, or 1]: each granule's way in its structure, -1 if absent
        "rng",  # uint64[1]
        # uint8[total pages]: 0 unmapped, 1 mapped and touched, 2 prefaulted, not yet touched;
        # written only with fault-around: read it with _engine.page_states
        "page_state",
        "mapped",  # uint64[ceil(total pages / 64)]: bit set once a page is mapped (L1-cache sized)
        "page_hpt",  # uint8[total pages or 1]: where the HPT holds the page
        "tsb",  # int64[K * tsb_entries or 1]
        "hpt_slots",  # int64[ptegs * 8 or 1]: global page id + 1, 0 empty
        "hpt_rr",  # uint8[ptegs or 1]: per group, its filled slots (0-8) until full, then 8 + its round-robin eviction pointer
        "memo_addr",
        "memo_shift",
        "memo_z",
        "run",  # int64[2] each (per kind)
        "wlog",
        "wlog_n",  # int64[3 * chunk or 1], int64[1]: walks as (address, refs * 16 + z, access index in the chunk)
    ],
)

Counters = namedtuple(
    "Counters",
    [
        "resolved",  # int64[2, K, L+1]: accesses resolved at chain position j (L: by a walk)
        "hits",
        "misses",  # int64[NS, K]: SLB and page-walk caches only (TLB counts follow from resolved)
        "walk_refs",  # int64[2, K]
        "tsb_hits",
        "tsb_misses",  # int64[2, K]
        "faults",  # int64[K]
        "prefaulted",  # int64[K]: pages mapped by fault-around beside the faulting page
        "hpt_secondary",  # int64[K]: walks resolved in the secondary group
        "hpt_events",  # int64[2]: evictions, refills (entry missing from HPT on a mapped page)
    ],
)


@jit
def translate_chunk(addrs, kinds, cfg, st, cnt):
    """Simulate ``addrs`` (int64; one of 2**63 or above, negative here, stops the chunk like any
    address outside every region). ``kinds`` is uint8 per access (0 data,
    1 instruction) or empty for all-data. Returns (-1 or the index of the first address outside
    every region, where the chunk stops; then the fast-path memo). Call it through ``run_chunk``.

    Every array is taken out of the tuples once, here: reading ``cfg.x`` inside the loop costs a
    reference-count round trip per read, which measured ~600 ns per access. The helpers are
    closures; the generated kernels have the lookup closures written out in place
    (``inline.py``), and numba inlines the rest."""
    st_sets, st_ways, st_mask, st_mode, st_base = cfg.st_sets, cfg.st_ways, cfg.st_mask, cfg.st_mode, cfg.st_base
    st_pways, st_obase, set_hash = cfg.st_pways, cfg.st_obase, cfg.set_hash
    tag_shift, chain, idx_off = cfg.tag_shift, cfg.chain, cfg.idx_off
    reg_start, reg_end, reg_size, reg_base, reg_fa = cfg.reg_start, cfg.reg_end, cfg.reg_size, cfg.reg_base, cfg.reg_fa
    page_shift, radix_refs = cfg.page_shift, cfg.radix_refs
    pwc_struct, pwc_skip = cfg.pwc_struct, cfg.pwc_skip
    # <scalars> (specialize replaces these with constants)
    walk_kind = cfg.walk_kind[0]
    slb_struct = cfg.slb_struct[0]
    tsb_mask = cfg.tsb_mask[0]
    sw_walk_refs = cfg.sw_walk_refs[0]
    hpt_mask = cfg.hpt_mask[0]
    shared = cfg.shared_first[0] != 0
    npwc = pwc_struct.shape[0]
    all_data = kinds.shape[0] == 0
    any_fa = cfg.any_fa[0] != 0
    log_walks = cfg.log_walks[0] != 0
    # </scalars>
    tags, links, order, htab, pos, rng = st.tags, st.links, st.order, st.htab, st.pos, st.rng
    page_state, page_hpt, tsb, hpt_slots, hpt_rr = st.page_state, st.page_hpt, st.tsb, st.hpt_slots, st.hpt_rr
    memo_addr, memo_shift, memo_z, run = st.memo_addr, st.memo_shift, st.memo_z, st.run
    mapped = st.mapped
    wlog, wlog_n = st.wlog, st.wlog_n
    resolved, hits, misses, walk_refs = cnt.resolved, cnt.hits, cnt.misses, cnt.walk_refs
    tsb_hits, tsb_misses, faults, hpt_secondary, hpt_events = cnt.tsb_hits, cnt.tsb_misses, cnt.faults, cnt.hpt_secondary, cnt.hpt_events
    prefaulted = cnt.prefaulted
    nreg = reg_start.shape[0]
    # The current region in locals (start, length, first global page id, page-size index, page
    # shift): read from arrays, every store to ``tags`` could alias them, so LLVM reloads them each
    # access (the region check measured ~2 ns of a random access's 14).
    last_reg = 0
    rs = reg_start[0]
    rlen = np.uint64(reg_end[0] - rs)
    rb = reg_base[0]
    rz = reg_size[0]
    rps = page_shift[rz]
    es = idx_off[max(slb_struct, 0), 0]  # the SLB's granule numbers (if DIRECT_*) in the current region

    # Indices into the structures' arrays are np.uint64: numba adds a negative-index wraparound (a
    # sign test, a mask with the array's length, an add) to every signed index, and unsigned
    # indices skip it (the first 10^6 accesses of a random trace: 1.51x -> 1.37x the time of a
    # minimal two-level kernel). The lookup closures up to lk_scan (and lookup_g, lookup) return
    # only at their end: the generator writes their calls out in place (pagesim._kernels.inline),
    # which spares numba's closure-inlining pass (1.6-1.8 s of Skylake's 6.2-6.5 s compile).
    def find(base, pw, tag):
        """The way of ``tag`` in the set whose first slot is ``base``, or -1. Specialised copies
        replace the body with one vector compare (simd.py: their ``pw`` is a constant)."""
        hw = -1
        # <scalar-find>
        for gi in range(pw >> 2):
            g = base + 4 * gi
            if (tags[np.uint64(g)] == tag) | (tags[np.uint64(g + 1)] == tag) | (tags[np.uint64(g + 2)] == tag) | (tags[np.uint64(g + 3)] == tag):
                for w in range(g, g + 4):
                    if tags[np.uint64(w)] == tag:
                        hw = w - base
                        break
                break
        # </scalar-find>
        # <vector-find> hw = find_way(tags, base, pw, tag)
        return hw

    # The packed-order and random modes' updates (lk_scan's hit and miss).
    def order_hit(osl, hw):
        """ORDER_LRU hit: way ``hw`` becomes most recent (its rank found by a SWAR zero-nibble search)."""
        o = order[np.uint64(osl)]
        x = o ^ (np.uint64(hw) * NIBBLE_ONES)
        t = (x - NIBBLE_ONES) & ~x & NIBBLE_HIGHS
        below = (t & (~t + np.uint64(1))) >> np.uint64(3)
        order[np.uint64(osl)] = (o & ~((below << np.uint64(4)) - np.uint64(1))) | ((o & (below - np.uint64(1))) << np.uint64(4)) | np.uint64(hw)

    def order_fill(osl, base, ways, tag):
        """ORDER_LRU, ORDER_FIFO miss: the least recent way (top nibble) takes ``tag`` and becomes most recent."""
        o = order[np.uint64(osl)]
        victim = (o >> np.uint64(4 * (ways - 1))) & np.uint64(15)
        if ways < 16:
            order[np.uint64(osl)] = ((o << np.uint64(4)) | victim) & ((np.uint64(1) << np.uint64(4 * ways)) - np.uint64(1))
        else:
            order[np.uint64(osl)] = (o << np.uint64(4)) | victim
        tags[np.uint64(base + np.int64(victim))] = tag

    def random_fill(osl, base, ways, tag):
        """RANDOM_FILL miss: an empty way if there is one, else way xorshift64() % ways."""
        filled = np.int64(order[np.uint64(osl)])
        if filled < ways:
            order[np.uint64(osl)] = np.uint64(filled + 1)
            tags[np.uint64(base + filled)] = tag
        else:
            x = rng[0]
            x ^= x << np.uint64(13)
            x ^= x >> np.uint64(7)
            x ^= x << np.uint64(17)
            rng[0] = x
            tags[np.uint64(base + np.int64(x % np.uint64(ways)))] = tag

    # Two lookups, one per way of finding a tag; each looks ``tag`` up in the structure with this
    # geometry and fills it on a miss, True on a hit. Specialised copies call the one their
    # structure uses (with its mode a constant, so the other modes' branches fold away).
    def lk_scan(key, tag, idx, m, sets, pw, sbase, obase, ways, mode):
        """ORDER_LRU, ORDER_FIFO (the recency or fill order packed in one word per set) and
        RANDOM_FILL: the set's ways scanned for the tag in groups of 4."""
        set_idx = key & m if m >= 0 else key % sets
        base = sbase + set_idx * pw
        osl = obase + set_idx
        hw = find(base, pw, tag)
        hit = hw >= 0
        if hit:
            if mode == ORDER_LRU:
                order_hit(osl, hw)
        elif mode == RANDOM_FILL:
            random_fill(osl, base, ways, tag)
        else:  # ORDER_LRU, ORDER_FIFO
            order_fill(osl, base, ways, tag)
        return hit

    def hhome(tag, cap):
        """Where ``tag`` starts its probe in a table of ``cap`` pairs: the high bits of a Fibonacci
        hash scaled to ``cap`` (a multiply, no division; ``cap`` need not be a power of two)."""
        h = (np.uint64(tag) * np.uint64(HASH_MULT)) >> np.uint64(32)
        return np.int64((h * np.uint64(cap)) >> np.uint64(32))

    def hdelete(hb, cap, tag):
        """Remove ``tag`` (present) from the table of ``cap`` pairs at ``hb``; each later entry of
        its run moves back into the gap unless that would put it before its home."""
        i = hhome(tag, cap)
        while htab[np.uint64(hb + 2 * i)] != tag:
            i += 1
            if i == cap:
                i = 0
        j = i
        while True:
            j += 1
            if j == cap:
                j = 0
            t = htab[np.uint64(hb + 2 * j)]
            if t < 0:
                break
            k = hhome(t, cap)
            if (i < k <= j) if i <= j else (i < k or k <= j):
                continue  # its home lies after the gap: it stays
            htab[np.uint64(hb + 2 * i)] = t
            htab[np.uint64(hb + 2 * i + 1)] = htab[np.uint64(hb + 2 * j + 1)]
            i = j
        htab[np.uint64(hb + 2 * i)] = -1

    def ring_hit(lb, osl, w):
        """LRU hit on way ``w`` of a set kept as a ring (links from ``lb``, its least recent way,
        the head, in ``order[osl]``): ``w`` becomes most recent, just behind the head."""
        head = np.int64(order[np.uint64(osl)])
        if w == head:  # the least recent becomes the most recent: the head moves on
            order[np.uint64(osl)] = np.uint64(links[np.uint64(lb + 2 * w + 1)])
        else:
            t = links[np.uint64(lb + 2 * head)]  # the most recent way
            if w != t:
                p = links[np.uint64(lb + 2 * w)]
                n = links[np.uint64(lb + 2 * w + 1)]
                links[np.uint64(lb + 2 * p + 1)] = n
                links[np.uint64(lb + 2 * n)] = p
                links[np.uint64(lb + 2 * t + 1)] = w
                links[np.uint64(lb + 2 * w)] = t
                links[np.uint64(lb + 2 * w + 1)] = head
                links[np.uint64(lb + 2 * head)] = w

    def ring_victim(base, osl):
        """A miss in a ring-kept set: its least recent way (the head), which becomes the most
        recent as the head moves on to the next way (no link changes)."""
        victim = np.int64(order[np.uint64(osl)])
        order[np.uint64(osl)] = np.uint64(links[np.uint64(2 * (base + victim) + 1)])
        return victim

    def lk_list(key, tag, idx, m, sets, pw, sbase, obase, ways, mode):
        """LIST_LRU, LIST_FIFO (more than 16 ways, keys that are not granules of the layout: an SLB,
        a page-walk cache, or a layout too large for a direct index): the tag's way from the
        structure's hash table, the victim from the head of its set's ring, both O(1)."""
        cap = HASH_FACTOR * sets * ways  # the table's pairs
        hb = set_hash[obase]
        i = hhome(tag, cap)
        while True:
            t = htab[np.uint64(hb + 2 * i)]
            if t == tag:
                if mode == LIST_LRU:
                    set_idx = key & m if m >= 0 else key % sets
                    ring_hit(2 * (sbase + set_idx * pw), obase + set_idx, htab[np.uint64(hb + 2 * i + 1)])
                return True
            if t < 0:
                break
            i += 1
            if i == cap:
                i = 0
        # a miss: the tag goes into the empty pair i (before the victim's tag leaves, so the pair
        # stays valid whatever the deletion moves), and into the least recent way
        set_idx = key & m if m >= 0 else key % sets
        base = sbase + set_idx * pw
        victim = ring_victim(base, obase + set_idx)
        old = tags[np.uint64(base + victim)]
        htab[np.uint64(hb + 2 * i)] = tag
        htab[np.uint64(hb + 2 * i + 1)] = victim
        tags[np.uint64(base + victim)] = tag
        if old >= 0:
            hdelete(hb, cap, old)
        return False

    def direct_fill(base, victim, idx):
        """A directly indexed set's miss: way ``victim`` of the set at ``base`` leaves its granule's
        slot in ``pos`` and takes granule ``idx``."""
        old = tags[np.uint64(base + victim)]
        if old >= 0:
            pos[np.uint64(old)] = -1
        tags[np.uint64(base + victim)] = idx
        pos[np.uint64(idx)] = victim

    def lk_direct(key, tag, idx, m, sets, pw, sbase, obase, ways, mode):
        """DIRECT_LRU, DIRECT_FIFO (more than 16 ways, in a chain): ``idx`` numbers the entry's
        granule in the layout, and ``pos`` holds each granule's way (-1: absent), so a lookup is
        one load and a miss two stores; the victim is the head of the set's ring. The set's
        ``tags`` hold granule numbers. O(1) with no probing: a random trace's miss in a 64-way
        structure measured 2.1-2.5 ns against 9-11 through the hash table with a head/tail list
        (a standalone numba harness of both, 2e6 random lookups over 262,144 keys)."""
        w = np.int64(pos[np.uint64(idx)])
        set_idx = key & m if m >= 0 else key % sets
        base = sbase + set_idx * pw
        hit = w >= 0
        if hit:
            if mode == DIRECT_LRU:
                ring_hit(2 * base, obase + set_idx, w)
        else:
            direct_fill(base, ring_victim(base, obase + set_idx), idx)
        return hit

    def lk_stamp(key, tag, idx, m, sets, pw, sbase, obase, ways, mode):
        """STAMP_LRU (a wide LRU SLB with a direct index): a segment's way from ``pos`` as in
        lk_direct, but recency kept as stamps, the set's clock in its order word and each way's
        last use in ``links[2 * base + way]``: a hit is one store, a miss takes the way with the
        oldest stamp (empty ways hold -ways..-1, padding the largest int64, so empty ways fill
        first, lowest first). An SLB mostly hits (a random trace over 1 GiB touches 4 segments),
        where a ring's hit relinks its way: POWER5+'s SLB cost 9 ns of an access with rings."""
        w = np.int64(pos[np.uint64(idx)])
        set_idx = key & m if m >= 0 else key % sets
        base = sbase + set_idx * pw
        c = np.int64(order[np.uint64(obase + set_idx)]) + 1
        order[np.uint64(obase + set_idx)] = np.uint64(c)
        sb = 2 * base
        hit = w >= 0
        if hit:
            links[np.uint64(sb + w)] = c
        else:
            victim = 0
            # <scalar-min>
            oldest = links[np.uint64(sb)]
            for v in range(1, pw):
                x = links[np.uint64(sb + v)]
                if x < oldest:
                    oldest = x
                    victim = v
            # </scalar-min>
            # <vector-min> victim = min_way(links, sb, pw)
            direct_fill(base, victim, idx)
            links[np.uint64(sb + victim)] = c
        return hit

    # <generic-lookup> (specialised copies call each structure's own lookup)
    def lookup_g(key, tag, idx, m, sets, pw, sbase, obase, ways, mode):
        """Look ``tag`` (granule ``idx`` of the layout) up in the structure with this geometry; on a
        miss, fill it. True on a hit. The generic kernel's lookup: ``mode`` is read at run time."""
        if mode == LIST_LRU or mode == LIST_FIFO:
            hit = lk_list(key, tag, idx, m, sets, pw, sbase, obase, ways, mode)
        elif mode == DIRECT_LRU or mode == DIRECT_FIFO:
            hit = lk_direct(key, tag, idx, m, sets, pw, sbase, obase, ways, mode)
        elif mode == STAMP_LRU:
            hit = lk_stamp(key, tag, idx, m, sets, pw, sbase, obase, ways, mode)
        else:
            hit = lk_scan(key, tag, idx, m, sets, pw, sbase, obase, ways, mode)
        return hit

    def lookup(s, key, tag, idx):
        """An SLB or page-walk cache lookup. A page-walk cache passes ``idx`` 0: it keeps its hash
        table when wide (its keys are not numbered in the layout), so never reads it."""
        return lookup_g(key, tag, idx, st_mask[s], st_sets[s], st_pways[s], st_base[s], st_obase[s], st_ways[s], st_mode[s])

    # </generic-lookup>

    # <hashed>
    def hpt_insert(gid, a, z):
        """Put page ``gid`` in the first empty slot of its primary group, else of its secondary
        group, else evict round-robin from the primary. A slot is only ever emptied to be refilled
        at once, so a group's slots fill in order and ``hpt_rr`` counts them (0-8) until the group
        is full, then holds 8 + the round-robin pointer: the 64 KiB of counts decide where the
        page goes, not a scan of its 128-byte group in the 4 MiB table, a cache miss at each
        first touch (POWER5+'s kernel on a random trace over 1 GiB: 33 -> 19 ns an access)."""
        shift = page_shift[z]
        seg_shift = SEGMENT_SHIFT if shift < SEGMENT_SHIFT else 40
        vsid = ((a >> seg_shift) * VSID_MULT) & 0xFFFFFFFFF
        pidx = (a & ((np.int64(1) << seg_shift) - 1)) >> shift
        h = (vsid ^ pidx) & hpt_mask
        h2 = (~h) & hpt_mask
        c = np.int64(hpt_rr[h])
        c2 = np.int64(hpt_rr[h2])
        if c < 8:
            hpt_slots[h * 8 + c] = gid + 1
            hpt_rr[h] = np.uint8(c + 1)
            page_hpt[gid] = PRIMARY
        elif c2 < 8:
            hpt_slots[h2 * 8 + c2] = gid + 1
            hpt_rr[h2] = np.uint8(c2 + 1)
            page_hpt[gid] = SECONDARY
        else:
            # both groups full: evict round-robin from the primary group
            rr = c - 8
            slot = h * 8 + rr
            page_hpt[hpt_slots[slot] - 1] = NOT_IN_HPT
            hpt_events[0] += 1
            hpt_slots[slot] = gid + 1
            page_hpt[gid] = PRIMARY
            hpt_rr[h] = np.uint8(8 + ((rr + 1) & 7))

    # </hashed>
    # <walkfn> (a specialised radix kernel writes its walk into the main loop instead)
    def walk(a, k, z, gid, faulted):
        # <radix>
        if walk_kind == RADIX:
            refs = radix_refs[z]
            best = 0
            # <pwc> (specialize writes one block per page-walk cache with its geometry as constants)
            for p in range(npwc):
                skip = pwc_skip[p]
                if skip < refs:
                    s = pwc_struct[p]
                    key = a >> tag_shift[s, 0]
                    if lookup(s, key, key * 16, 0):
                        hits[s, z] += 1
                        if skip > best:
                            best = skip
                    else:
                        misses[s, z] += 1
            # </pwc>
            return refs - best
        # </radix>
        # <hashed>
        if walk_kind == HASHED:
            where = page_hpt[gid]
            if where == PRIMARY:
                return 1
            if where == SECONDARY:
                hpt_secondary[z] += 1
                return 2
            if not faulted:
                hpt_events[1] += 1
            hpt_insert(gid, a, z)
            return 2
        # </hashed>
        # <tsb>
        if walk_kind == TSB:
            vpn = a >> page_shift[z]
            slot = z * (tsb_mask + 1) + (vpn & tsb_mask)
            if tsb[slot] == vpn:
                tsb_hits[k, z] += 1
                return 1
            tsb_misses[k, z] += 1
            tsb[slot] = vpn
            return 1 + sw_walk_refs
        # </tsb>
        return 1

    # </walkfn>
    n = addrs.shape[0]
    L = chain.shape[2]
    # The current chain's geometry lives in local scalars (up to MAX_CHAIN positions), reloaded
    # only when the (kind, page size) pair changes: held in arrays, every store to ``tags`` could
    # alias them and LLVM reloads them on the critical path (measured 76 -> 45 M accesses/s).
    # <geometry> (pagesim._kernels.specialize replaces this block with constants)
    cur_k = -1
    cur_z = -1
    nc = 0
    s0 = s1 = s2 = s3 = -1
    h0 = h1 = h2 = h3 = 0  # tag shifts
    m0 = m1 = m2 = m3 = 0  # set masks (-1: modulo)
    n0 = n1 = n2 = n3 = 1  # sets
    p0 = p1 = p2 = p3 = 4  # padded ways
    b0 = b1 = b2 = b3 = 0  # first tag slot
    o0 = o1 = o2 = o3 = 0  # first order word
    w0 = w1 = w2 = w3 = 1  # ways
    d0 = d1 = d2 = d3 = 0  # replacement mode
    e0 = e1 = e2 = e3 = 0  # key + e: the entry's granule number in the layout (DIRECT_* lookups)
    # </geometry>
    # Fast-path memo per kind in locals (a0/a1: last address, f0/f1: its entry shift, g0/g1: its
    # page-size index, r0/r1: pending run of fast hits), written back to ``st`` at the end.
    # An address of 2**63 or above is negative here; ``| (a >> 63)`` (all ones when negative)
    # sends it to the slow path, where no region holds it, even when it equals the empty memo
    # (-1 with shift 0). So address arrays need no pass of their own to check their range.
    bad = -1
    a0, f0, g0, r0 = memo_addr[0], memo_shift[0], memo_z[0], run[0]
    a1, f1, g1, r1 = memo_addr[1], memo_shift[1], memo_z[1], run[1]
    for i in range(n):
        a = addrs[i]
        k = 0 if all_data else np.int64(kinds[i])
        if k == 0:
            if (((a ^ a0) | (a >> 63)) >> f0) == 0:
                r0 += 1
                continue
        elif (((a ^ a1) | (a >> 63)) >> f1) == 0:
            r1 += 1
            continue
        # ---------------------------------------------------------------- slow path
        if r0 and (k == 0 or shared):
            resolved[0, g0, 0] += r0  # <count run>
            r0 = 0
        if r1 and (k == 1 or shared):
            resolved[1, g1, 0] += r1
            r1 = 0
        if shared:
            if k == 0:
                a1 = -1
                f1 = 0
            else:
                a0 = -1
                f0 = 0
        # region: the last one again, or a binary search for the last start <= a
        lo = last_reg
        if np.uint64(a - rs) >= rlen:  # outside [rs, rs + rlen), negative a included (no overflow: rs >= 0)
            lo = 0
            hi = nreg - 1
            while lo < hi:
                mid = (lo + hi + 1) >> 1
                if reg_start[mid] <= a:
                    lo = mid
                else:
                    hi = mid - 1
            if not (reg_start[lo] <= a and a < reg_end[lo]):
                if k == 0:
                    a0 = -1
                    f0 = 0
                else:
                    a1 = -1
                    f1 = 0
                bad = i
                break
            last_reg = lo
            rs = reg_start[lo]
            rlen = np.uint64(reg_end[lo] - rs)
            rb = reg_base[lo]
            rz = reg_size[lo]
            rps = page_shift[rz]
            # the DIRECT_* structures' granule numbers in this region (s < 0: an unused position)
            e0 = idx_off[max(s0, 0), lo]
            e1 = idx_off[max(s1, 0), lo]
            e2 = idx_off[max(s2, 0), lo]
            e3 = idx_off[max(s3, 0), lo]
            es = idx_off[max(slb_struct, 0), lo]
        z = rz
        if k != cur_k or z != cur_z:  # <reload>
            cur_k = k
            cur_z = z
            nc = 0
            while nc < L and chain[k, z, nc] >= 0:
                nc += 1
            s0 = chain[k, z, 0]
            if nc > 0:
                h0, m0, n0, p0, b0, o0, w0, d0 = tag_shift[s0, z], st_mask[s0], st_sets[s0], st_pways[s0], st_base[s0], st_obase[s0], st_ways[s0], st_mode[s0]
                e0 = idx_off[s0, last_reg]
            if nc > 1:
                s1 = chain[k, z, 1]
                h1, m1, n1, p1, b1, o1, w1, d1 = tag_shift[s1, z], st_mask[s1], st_sets[s1], st_pways[s1], st_base[s1], st_obase[s1], st_ways[s1], st_mode[s1]
                e1 = idx_off[s1, last_reg]
            if nc > 2:
                s2 = chain[k, z, 2]
                h2, m2, n2, p2, b2, o2, w2, d2 = tag_shift[s2, z], st_mask[s2], st_sets[s2], st_pways[s2], st_base[s2], st_obase[s2], st_ways[s2], st_mode[s2]
                e2 = idx_off[s2, last_reg]
            if nc > 3:
                s3 = chain[k, z, 3]
                h3, m3, n3, p3, b3, o3, w3, d3 = tag_shift[s3, z], st_mask[s3], st_sets[s3], st_pways[s3], st_base[s3], st_obase[s3], st_ways[s3], st_mode[s3]
                e3 = idx_off[s3, last_reg]
            # </reload>
        j = nc  # where the access is resolved; nc means a walk
        if nc > 0:
            key = a >> h0
            if lookup_g(key, key * 16 + z, key + e0, m0, n0, p0, b0, o0, w0, d0):
                j = 0
            else:
                if slb_struct >= 0:
                    skey = a >> SEGMENT_SHIFT
                    if lookup(slb_struct, skey, skey * 16, skey + es):  # <slb>
                        hits[slb_struct, z] += 1  # <count slb-hit>
                    else:
                        misses[slb_struct, z] += 1  # <count slb-miss>
                if nc > 1:
                    key = a >> h1
                    if lookup_g(key, key * 16 + z, key + e1, m1, n1, p1, b1, o1, w1, d1):
                        j = 1
                    elif nc > 2:
                        key = a >> h2
                        if lookup_g(key, key * 16 + z, key + e2, m2, n2, p2, b2, o2, w2, d2):
                            j = 2
                        elif nc > 3:
                            key = a >> h3
                            if lookup_g(key, key * 16 + z, key + e3, m3, n3, p3, b3, o3, w3, d3):
                                j = 3
        if j < nc:
            resolved[k, z, j] += 1  # <count resolved>
        else:
            resolved[k, z, L] += 1  # <count walk>
            gid = rb + ((a - rs) >> rps)
            faulted = False
            word = mapped[np.uint64(gid >> 6)]
            bit = np.uint64(1) << np.uint64(gid & 63)
            if (word & bit) == 0:
                faults[z] += 1  # <count fault>
                faulted = True
                # <fa> (specialize keeps this block only when a region maps more than one page per fault)
                fa = reg_fa[lo] if any_fa else 1
                if fa == 1:
                    mapped[gid >> 6] = word | bit
                    page_state[gid] = 1
                else:
                    # fault-around: map the group of fa pages around this one, aligned in the
                    # virtual address space (fa pages of the region's size), within the region
                    first = reg_base[lo]
                    last = first + ((reg_end[lo] - reg_start[lo]) >> page_shift[z])
                    grp = gid - ((a >> page_shift[z]) & (fa - 1))
                    for q in range(max(grp, first), min(grp + fa, last)):
                        qb = np.uint64(1) << np.uint64(q & 63)
                        if (mapped[q >> 6] & qb) == 0:
                            mapped[q >> 6] |= qb
                            if q != gid:
                                page_state[q] = 2
                                prefaulted[z] += 1
                    page_state[gid] = 1
                # </fa>
                # <nofa> mapped[np.uint64(gid >> 6)] = word | bit
                # without fault-around page_state is not written: a page is touched exactly when
                # its mapped bit is set, and pagesim._engine.page_states reads it from there
            # <fa>
            elif any_fa and page_state[gid] == 2:
                page_state[gid] = 1  # first touch of a prefaulted page: no fault
            # </fa>
            wr = walk(a, k, z, gid, faulted)
            walk_refs[k, z] += wr  # <count refs>
            # <log>
            if log_walks:
                q = wlog_n[0]
                wlog[q] = a
                wlog[q + 1] = wr * 16 + z
                wlog[q + 2] = i
                wlog_n[0] = q + 3
            # </log>
        if k == 0:
            if nc > 0:
                a0, f0, g0 = a, h0, z
            else:
                a0, f0 = -1, 0
        else:
            if nc > 0:
                a1, f1, g1 = a, h0, z
            else:
                a1, f1 = -1, 0
    # The memo goes back to the caller as a return value: stored here into st.memo_* after the loop,
    # the stores were lost under numba 0.68.1 (even at NUMBA_OPT=0; a print beside them made them
    # appear), so ``run_chunk`` stores it.
    return bad, a0, f0, g0, r0, a1, f1, g1, r1  # <return>


def run_chunk(addrs, kinds, cfg, st, cnt) -> int:
    """Simulate one chunk and keep the fast-path memo in ``st``. Returns -1 or the index of the
    first address outside every region."""
    bad, a0, f0, g0, r0, a1, f1, g1, r1 = translate_chunk(addrs, kinds, cfg, st, cnt)
    st.memo_addr[:] = (a0, a1)
    st.memo_shift[:] = (f0, f1)
    st.memo_z[:] = (g0, g1)
    st.run[:] = (r0, r1)
    return bad


def finish(st, cnt):
    """Attribute the pending fast-path runs; call once after the last chunk. Plain Python: two
    additions, not worth a compiled function (which took 1.2-1.5 s to compile on a cold start)."""
    for k in range(2):
        r = int(st.run[k])
        if r:
            cnt.resolved[k, int(st.memo_z[k]), 0] += r
            st.run[k] = 0
