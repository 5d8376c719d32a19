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
  nothing), so it only counts. When one structure is first in both kinds' chains, any slow access
  ends both fast paths.

Replacement: the victim is the way with the smallest stamp; empty ways have stamp 0, so the
lowest-numbered empty way fills first. LRU stamps on fill and hit, FIFO on fill only. Random fills
an empty way if there is one, else way ``xorshift64() % ways``; one generator serves all structures.
"""
from collections import namedtuple

import numpy as np

from ._jit import jit

LRU, FIFO, RANDOM = 0, 1, 2
RADIX, HASHED, TSB, VHPT = 0, 1, 2, 3
NOT_IN_HPT, PRIMARY, SECONDARY = 0, 1, 2
SEGMENT_SHIFT = 28  # 256 MiB segments (SLB tags)
VSID_MULT = 0x5DEECE66D  # modelling assumption: a multiplicative VSID scramble

Config = namedtuple(
    "Config",
    [
        "st_sets", "st_ways", "st_mask", "st_policy", "st_base",  # int64[NS]
        "tag_shift",  # int64[NS, K]
        "chain",  # int64[2, K, L]; -1 ends a chain
        "reg_start", "reg_end", "reg_size", "reg_base",  # int64[R]
        "page_shift",  # int64[K]
        "walk_kind", "radix_refs",  # int64[1], int64[K]
        "pwc_struct", "pwc_skip",  # int64[P]
        "slb_struct",  # int64[1]: -1 if none
        "tsb_mask", "sw_walk_refs", "hpt_mask",  # int64[1] each
        "shared_first",  # int64[1]: 1 if a structure is first in both kinds' chains
    ],
)

State = namedtuple(
    "State",
    [
        "tags", "stamps",  # int64[sum sets*ways]
        "clock", "rng",  # int64[1], uint64[1]
        "page_state",  # uint8[total pages]: 0 never touched, 1 mapped
        "page_hpt",  # uint8[total pages or 1]: where the HPT holds the page
        "tsb",  # int64[K * tsb_entries or 1]
        "hpt_slots",  # int64[ptegs * 8 or 1]: global page id + 1, 0 empty
        "hpt_rr",  # uint8[ptegs or 1]: round-robin eviction pointer per group
        "memo_addr", "memo_shift", "memo_s", "memo_z", "run",  # int64[2] each (per kind)
    ],
)

Counters = namedtuple(
    "Counters",
    [
        "accesses",  # int64[2, K]
        "hits", "misses",  # int64[NS, K]
        "walks", "walk_refs",  # int64[2, K]
        "tsb_hits", "tsb_misses",  # int64[2, K]
        "faults",  # int64[K]
        "hpt_secondary",  # int64[K]: walks resolved in the secondary group
        "hpt_events",  # int64[2]: evictions, refills (entry missing from HPT on a mapped page)
    ],
)


@jit
def _rng_next(rng):
    x = rng[0]
    x ^= x << np.uint64(13)
    x ^= x >> np.uint64(7)
    x ^= x << np.uint64(17)
    rng[0] = x
    return x


@jit
def _lookup(s, key, tag, cfg, st):
    """Look ``tag`` up in structure ``s``; on a miss, fill it. Returns True on a hit."""
    ways = cfg.st_ways[s]
    m = cfg.st_mask[s]
    if m >= 0:
        set_idx = key & m
    else:
        set_idx = key % cfg.st_sets[s]
    base = cfg.st_base[s] + set_idx * ways
    tags = st.tags
    stamps = st.stamps
    victim = base
    vstamp = np.int64(0x7FFFFFFFFFFFFFFF)
    for w in range(base, base + ways):
        if tags[w] == tag:
            if cfg.st_policy[s] == LRU:
                st.clock[0] += 1
                stamps[w] = st.clock[0]
            return True
        sw = stamps[w]
        if sw < vstamp:
            vstamp = sw
            victim = w
    policy = cfg.st_policy[s]
    if policy == RANDOM:
        if vstamp != 0:
            victim = base + np.int64(_rng_next(st.rng) % np.uint64(ways))
        stamps[victim] = 1
    else:
        st.clock[0] += 1
        stamps[victim] = st.clock[0]
    tags[victim] = tag
    return False


@jit
def _find_region(a, cfg):
    lo = 0
    hi = cfg.reg_start.shape[0] - 1
    while lo < hi:
        mid = (lo + hi + 1) >> 1
        if cfg.reg_start[mid] <= a:
            lo = mid
        else:
            hi = mid - 1
    if cfg.reg_start[lo] <= a and a < cfg.reg_end[lo]:
        return lo
    return -1


@jit
def _hpt_insert(gid, a, z, cfg, st, cnt):
    shift = cfg.page_shift[z]
    seg_shift = SEGMENT_SHIFT if shift < SEGMENT_SHIFT else 40
    vsid = ((a >> seg_shift) * VSID_MULT) & 0xFFFFFFFFF
    pidx = (a & ((np.int64(1) << seg_shift) - 1)) >> shift
    h = (vsid ^ pidx) & cfg.hpt_mask[0]
    for grp, where in ((h, PRIMARY), ((~h) & cfg.hpt_mask[0], SECONDARY)):
        for w in range(grp * 8, grp * 8 + 8):
            if st.hpt_slots[w] == 0:
                st.hpt_slots[w] = gid + 1
                st.page_hpt[gid] = where
                return
    # both groups full: evict round-robin from the primary group
    rr = np.int64(st.hpt_rr[h])
    slot = h * 8 + rr
    old = st.hpt_slots[slot] - 1
    st.page_hpt[old] = NOT_IN_HPT
    cnt.hpt_events[0] += 1
    st.hpt_slots[slot] = gid + 1
    st.page_hpt[gid] = PRIMARY
    st.hpt_rr[h] = np.uint8((rr + 1) & 7)


@jit
def _walk(a, k, z, gid, faulted, cfg, st, cnt):
    """References of the walk for address ``a`` (page size index ``z``, global page id ``gid``)."""
    kind = cfg.walk_kind[0]
    if kind == RADIX:
        refs = cfg.radix_refs[z]
        best = 0
        for p in range(cfg.pwc_struct.shape[0]):
            skip = cfg.pwc_skip[p]
            if skip < refs:
                s = cfg.pwc_struct[p]
                key = a >> cfg.tag_shift[s, 0]
                if _lookup(s, key, key * 16, cfg, st):
                    cnt.hits[s, z] += 1
                    if skip > best:
                        best = skip
                else:
                    cnt.misses[s, z] += 1
        return refs - best
    if kind == HASHED:
        where = st.page_hpt[gid]
        if where == PRIMARY:
            return 1
        if where == SECONDARY:
            cnt.hpt_secondary[z] += 1
            return 2
        if not faulted:
            cnt.hpt_events[1] += 1
        _hpt_insert(gid, a, z, cfg, st, cnt)
        return 2
    if kind == TSB:
        vpn = a >> cfg.page_shift[z]
        slot = z * (cfg.tsb_mask[0] + 1) + (vpn & cfg.tsb_mask[0])
        if st.tsb[slot] == vpn:
            cnt.tsb_hits[k, z] += 1
            return 1
        cnt.tsb_misses[k, z] += 1
        st.tsb[slot] = vpn
        return 1 + cfg.sw_walk_refs[0]
    return 1


@jit
def _flush(k, st, cnt):
    r = st.run[k]
    if r:
        cnt.hits[st.memo_s[k], st.memo_z[k]] += r
        cnt.accesses[k, st.memo_z[k]] += r
        st.run[k] = 0


@jit
def _invalidate(k, st, cnt):
    _flush(k, st, cnt)
    st.memo_addr[k] = -1
    st.memo_shift[k] = 0


@jit
def translate_chunk(addrs, kinds, cfg, st, cnt):
    """Simulate ``addrs`` (int64, all below 2**63). ``kinds`` is uint8 per access (0 data,
    1 instruction) or empty for all-data. Returns -1, or the index of the first address outside
    every region (the chunk stops there; the counters hold the accesses before it)."""
    n = addrs.shape[0]
    all_data = kinds.shape[0] == 0
    L = cfg.chain.shape[2]
    shared = cfg.shared_first[0] != 0
    for i in range(n):
        a = addrs[i]
        k = 0 if all_data else np.int64(kinds[i])
        if ((a ^ st.memo_addr[k]) >> st.memo_shift[k]) == 0:
            st.run[k] += 1
            continue
        # ---------------------------------------------------------------- slow path
        _flush(k, st, cnt)
        if shared:
            _invalidate(1 - k, st, cnt)
        r = _find_region(a, cfg)
        if r < 0:
            st.memo_addr[k] = -1
            st.memo_shift[k] = 0
            return i
        z = cfg.reg_size[r]
        gid = cfg.reg_base[r] + ((a - cfg.reg_start[r]) >> cfg.page_shift[z])
        cnt.accesses[k, z] += 1
        hit = False
        for j in range(L):
            s = cfg.chain[k, z, j]
            if s < 0:
                break
            key = a >> cfg.tag_shift[s, z]
            if _lookup(s, key, key * 16 + z, cfg, st):
                cnt.hits[s, z] += 1
                hit = True
                break
            cnt.misses[s, z] += 1
            if j == 0 and cfg.slb_struct[0] >= 0:
                sl = cfg.slb_struct[0]
                skey = a >> SEGMENT_SHIFT
                if _lookup(sl, skey, skey * 16, cfg, st):
                    cnt.hits[sl, z] += 1
                else:
                    cnt.misses[sl, z] += 1
        if not hit:
            cnt.walks[k, z] += 1
            faulted = False
            if st.page_state[gid] == 0:
                st.page_state[gid] = 1
                cnt.faults[z] += 1
                faulted = True
            cnt.walk_refs[k, z] += _walk(a, k, z, gid, faulted, cfg, st, cnt)
        s0 = cfg.chain[k, z, 0]
        if s0 >= 0:
            st.memo_addr[k] = a
            st.memo_shift[k] = cfg.tag_shift[s0, z]
            st.memo_s[k] = s0
            st.memo_z[k] = z
        else:
            st.memo_addr[k] = -1
            st.memo_shift[k] = 0
    return -1


@jit
def finish(st, cnt):
    """Attribute the pending fast-path runs; call once after the last chunk."""
    _flush(0, st, cnt)
    _flush(1, st, cnt)
