"""The host's side of nested (two-dimensional) paging: every guest walk replayed through the host's
nested TLB and page-walk caches, in program order.

Model (the plain-Python twin, ``tests/twins/reference.py`` with a virtualised machine, must agree on
every counter):

- The translation kernel logs each guest walk as (guest-virtual address a, guest references r x 16
  + page-size index z, index of the access in its chunk): the guest walk read the r lowest levels
  of its table for a page of size z (the guest's page-walk caches skipped the rest).
- Each of those r guest table entries, then the data, is at a guest-physical address (gPA) the
  host translates: r + 1 translations a walk, in that order (top level first, the data last).
- z is the access's page class (``pagesim.engine.stages.MachineParts.classes``): its guest page
  size, and the host page backing its data (the default host page, or a host region's).
- Guest-physical addresses (a modelling assumption, ``rules.guest_frame``): level l's table that
  covers a, number t = a >> (shift[l] + bits[l]), is a table page of 8 x 2**bits[l] bytes at frame
  guest_frame(t, salt l + 1) of guest RAM, and its entry for a is 8 x ((a >> shift[l]) mod
  2**bits[l]) into it; the guest page of a, number a >> page_shift[z], is at frame
  guest_frame(page, salt 0) in pages of that size, and a's offset in its page is kept. Guest RAM
  is 2**ram_bits bytes; the data of class z is in its host page's range of it, the area d_area[z]
  (address d_area[z] x 2**ram_bits onwards; the default host page's is area 0, where the tables are).
- One translation of gPA g backed by host pages of 2**hs bytes (a table entry: the default host
  page; the data: class z's, d_shift[z]) in area ar: the nested TLB (when there is one) looks up key
  (g >> hs) | (ar << 56) in set key mod sets; a hit ends it with no reference, a miss fills it.
  Then the host walks: its references are the host table's levels for that host page (host_levels;
  the data: d_levels[z]), less the levels the deepest hitting host page-walk cache skips (each cache
  whose skip is below that count is looked up with key g >> its shift, in set key mod its sets, and
  filled on a miss).
- Every cache is set-associative with exact LRU (a hit or a fill makes the entry the most recent;
  empty ways fill first, lowest first): kept as each set's packed order of up to 16 ways
  (``rules.lru_touch``, ``rules.order_victim``), or a stamp a way in wider sets. Counters: host
  references by (kind, page size), nested TLB hits and misses by page size, each host page-walk
  cache's hits and misses by page size.
"""

from collections import namedtuple

import numpy as np

from ._jit import jit
from .rules import find_tag, guest_frame, lru_touch, order_victim, stamp_victim

# The host's caches: the nested TLB first (when there is one), then its page-walk caches; each
# cache c's sets (and sets - 1 when a power of two, else -1), ways (and padded to a multiple of 4),
# where its ways start in tags and stamps, where its sets start in orders, the shift of its key, the
# levels it skips (-1: the nested TLB) and the key it looked up last. orders: each set's packed LRU
# order (sets of up to 16 ways); stamps: each way's last use (wider sets), clock[0] counting their
# lookups.
Caches = namedtuple("Caches", ["sets", "mask", "ways", "pways", "base", "sbase", "shift", "skip", "last", "tags", "orders", "stamps", "clock"])
# host references by (kind, page size); nested TLB hits and misses by page size; each page-walk
# cache's hits and misses by page size
Counts = namedtuple("Counts", ["host_refs", "ntlb_hits", "ntlb_misses", "pwc_hits", "pwc_misses"])


@jit
def nested_chunk(
    wlog, nlog, kinds, g_shift, g_bits, g_leaf, t_frame_bits, page_shift, d_frame_bits, d_area, d_levels, d_shift, ram_bits, host_levels, ntlb, hc, cnt
):
    """Replay the ``nlog`` words of ``wlog`` (3 a walk) through the host; returns the words used.
    Guest level l's index bits ``g_bits[l]`` sit above bit ``g_shift[l]``; ``g_leaf[z]``: the
    level of class z's leaf entry; ``t_frame_bits[l]`` and ``d_frame_bits[z]``: the frame
    numbers' widths of level l's tables and of z's pages in guest RAM; ``d_area``, ``d_levels``,
    ``d_shift``: class z's data area, host levels and host page shift. One loop looks
    up every cache of a translation, the nested TLB first (a hit there ends the translation), so
    the lookup is written once (a helper taking the arrays, inlined, made the random trace of
    ``benchmarks/bench_nested.py`` 2.8x slower)."""
    c_sets, c_mask, c_ways, c_pways, c_base, c_sbase = hc.sets, hc.mask, hc.ways, hc.pways, hc.base, hc.sbase
    c_shift, c_skip, last, tags, orders, stamps = hc.shift, hc.skip, hc.last, hc.tags, hc.orders, hc.stamps
    host_refs, ntlb_hits, ntlb_misses, pwc_hits, pwc_misses = cnt.host_refs, cnt.ntlb_hits, cnt.ntlb_misses, cnt.pwc_hits, cnt.pwc_misses
    ncache = c_sets.shape[0]
    clock = hc.clock[0]
    all_data = kinds.shape[0] == 0
    q = 0
    while q + 3 <= nlog:
        a = wlog[q]
        rz = wlog[q + 1]
        i = wlog[q + 2]
        q += 3
        r = rz >> 4
        z = rz & 15
        k = 0 if all_data else np.int64(kinds[i])
        top = g_leaf[z]
        total = 0
        for step in range(r + 1):
            if step < r:  # the entry of guest level lv, top first
                lv = top - r + 1 + step
                t = a >> (g_shift[lv] + g_bits[lv])
                e = (a >> g_shift[lv]) & ((1 << g_bits[lv]) - 1)
                g = (guest_frame(t, lv + 1, t_frame_bits[lv]) << (3 + g_bits[lv])) | (e << 3)
                levels = host_levels
                nkey = g >> c_shift[0] if ntlb else 0
            else:  # the data
                ps = page_shift[z]
                ar = d_area[z]
                g = (ar << ram_bits) | (guest_frame(a >> ps, 0, d_frame_bits[z]) << ps) | (a & ((1 << ps) - 1))
                levels = d_levels[z]
                nkey = (g >> d_shift[z]) | (ar << 56)
            best = 0
            walks = True
            for c in range(ncache):
                if c >= ntlb and c_skip[c] >= levels:
                    continue
                key = nkey if c < ntlb else g >> c_shift[c]
                # a key equal to the one the cache looked up last is a hit that changes nothing:
                # that entry is already the most recent of its set
                hit = key == last[c]
                if not hit:
                    last[c] = key
                    si = key & c_mask[c] if c_mask[c] >= 0 else key % c_sets[c]
                    base = c_base[c] + si * c_pways[c]
                    w = find_tag(tags, base, c_pways[c], key)
                    hit = w >= 0
                    wy = c_ways[c]
                    if wy <= 16:
                        s = c_sbase[c] + si
                        if hit:
                            orders[s] = lru_touch(orders[s], w)
                        else:
                            v, orders[s] = order_victim(orders[s], wy)
                            tags[base + v] = key
                    else:
                        clock += 1
                        if hit:
                            stamps[base + w] = clock
                        else:
                            v = stamp_victim(stamps, base, wy)
                            tags[v] = key
                            stamps[v] = clock
                if c < ntlb:  # the nested TLB
                    if hit:
                        ntlb_hits[z] += 1
                        walks = False
                        break
                    ntlb_misses[z] += 1
                elif hit:
                    pwc_hits[c - ntlb, z] += 1
                    if c_skip[c] > best:
                        best = c_skip[c]
                else:
                    pwc_misses[c - ntlb, z] += 1
            if walks:
                total += levels - best
        host_refs[k, z] += total
    hc.clock[0] = clock
    return q
