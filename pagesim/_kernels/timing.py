"""The timing model's cache kernel: data accesses and page-walk references through one data-cache
hierarchy, in program order.

Model (the plain-Python twin in tests/twins/reference_timing.py must agree on every counter):

- The translate kernel logs every walk as (address, references x 16 + page-size index, index of the
  access in its chunk). Access i's walks come first (translation precedes the load), then, for a
  data access (kind 0), the access's own line. Instruction fetches go to the instruction cache,
  which is not modelled: their walks are replayed, their lines are not.
- A reference looks the levels up in order. A hit ends the lookups; a miss fills the level at once
  and goes on outward (every level looked in is filled: non-inclusive, no back-invalidation; a line
  evicted from an outer level stays in the inner ones). Served by level c (0 = L1) or, after missing
  every level, by memory (index = number of levels). Replacement is exact LRU; empty ways fill
  first, lowest first. As in translate.py, a level of up to 16 ways keeps each set's recency order
  packed in one 64-bit word (O(1) hit and victim), wider levels keep stamps, and sets are padded to
  a multiple of 4 ways so the tag search runs in groups of 4 (3.5x faster than stamps over
  unpadded ways, measured on a random trace).
- Line addresses: a data access's line is its virtual address >> line shift (set indexes as if the
  page frames were coloured like the virtual pages: a modelling assumption). Page-table references
  live in a separate region of line space (bit 62 set), one layout per walker kind:
    radix   the walk's lowest ``refs`` levels, top first; level l's entry E of table T at byte
            frame(T) x 8 x 2**bits[l] + 8 E of that level's table space (frame: below);
    hashed  reference 0 the primary PTEG h, reference 1 the secondary PTEG ~h, 128 bytes each
            (h as in the translate kernel's hash);
    tsb     reference 0 the TSB entry (16 bytes, slot z x entries + vpn mod entries), then the
            software walk's references j = 0..refs-2, each an 8-byte entry v = vpn >> (9 (R-1-j))
            of table j, in 4 KiB pages of 512 entries, page v >> 9 at frame(v >> 9) (a modelling
            assumption for the OS tables the handler reads);
    vhpt    the short-format VHPT's 8-byte entry of the page (a linear table per page size, its
            4 KiB pages at frame(vpn >> 9)).
  The hashed page table and the TSB are contiguous in memory (as the OS allocates them); page-table
  pages are at frame(t) = t x FRAME_MULT mod 2**b, pseudo-random frames (a modelling assumption: an
  OS takes table pages from wherever its allocator has them).
- ``exclusive`` hierarchies (the K8's L1/L2): a line lives in one level; an L1 miss served by level
  c moves the line from c into L1, L1's victim goes to L2 (most recent), L2's victim to L3 and so
  on, the last level's victim is dropped; a line from memory goes into L1 only.
- Fast path: a data access to the same line as the previous reference (walk references included)
  is an L1 hit that changes no state (the line is already the most recent in its set).
"""

from collections import namedtuple

import numba
import numpy as np

from ._jit import jit
from .rules import HASHED, RADIX, TSB, find_tag, hpt_group, lru_touch, order_victim, region_of, stamp_victim

PT_SPACE = 1 << 62  # page-table lines: bit 62 set; data lines are addresses >> 4 or more, below 2**59
KIND_SHIFT = 59  # what the page-table line is: 0 radix, 1 HPT, 2 TSB, 3 software walk, 4 VHPT
SUB_SHIFT = 55  # radix level, or page-size index / software-walk table
# Page-table pages sit at pseudo-random frames: table t is frame (t x FRAME_MULT) mod 2**b, a
# bijection on b-bit table numbers (FRAME_MULT is odd), so distinct tables never share a line, and
# tables do not all fall on the same cache sets as they would at their virtual alignment. b = 44 for
# the software-walk and VHPT tables; for radix level l, b = 63 - level_shift[l] - level_bits[l],
# every table number an address below 2**63 can have.
FRAME_MULT = 0x5851F42D4C957F2D
FRAME_BITS = 44
FRAME_MASK = (1 << FRAME_BITS) - 1

TConfig = namedtuple(
    "TConfig",
    [
        "sets",
        "ways",
        "mask",
        "cbase",  # int64[C]: per cache level (mask -1: modulo)
        "pways",
        "obase",  # int64[C]: ways padded to a multiple of 4; first order word
        "line_shift",  # int64[1]
        "reg_start",
        "reg_end",
        "reg_size",  # int64[R]
        "page_shift",  # int64[K]
        "walk_kind",  # int64[1]
        "level_bits",
        "level_shift",  # int64[NL]: radix index bits and the shift of each level's index
        "leaf_level",  # int64[K]: radix level index of a page size's leaf entry
        "frame_mask",  # int64[NL]: 2**(63 - level_shift - level_bits) - 1, the range of a level's table numbers
        "hpt_mask",
        "tsb_entries",  # int64[1] each
        "exclusive",  # int64[1]: 1 for exclusive levels (power-of-two sets, at most 16 ways)
    ],
)

TState = namedtuple(
    "TState",
    [
        "tags",
        "stamps",  # int64[sum sets x padded ways]; stamps used by levels of more than 16 ways
        "order",  # uint64[sum sets]: packed recency order (levels of up to 16 ways)
        "clock",  # int64[1]
        "memo",  # int64[2]: line of the last reference (-1: none), page-size index of that data line
    ],
)


@jit
def time_chunk(addrs, kinds, wlog, nlog, cfg, st, data_hits, walk_hits):
    """Replay one chunk: ``addrs`` (int64), ``kinds`` (uint8 or empty: all data), the translate
    kernel's walk log ``wlog[:nlog]`` for this chunk. Adds to ``data_hits`` and ``walk_hits``
    (int64[levels + 1, K]: served by level c, last row memory). Returns the log words used."""
    return _time_chunk(addrs, kinds, wlog, nlog, cfg, st, data_hits, walk_hits, True)


@jit
def time_chunk_pow2(addrs, kinds, wlog, nlog, cfg, st, data_hits, walk_hits):
    """``time_chunk`` for hierarchies whose every level has a power-of-two number of sets and at
    most 16 ways (every preset): the general paths compiled out, 1.6x faster (measured)."""
    return _time_chunk(addrs, kinds, wlog, nlog, cfg, st, data_hits, walk_hits, False)


@numba.njit(inline="always", nogil=True)  # inlined into the nogil kernels above
def _time_chunk(addrs, kinds, wlog, nlog, cfg, st, data_hits, walk_hits, general):
    sets, ways, mask, cbase, pways, obase = cfg.sets, cfg.ways, cfg.mask, cfg.cbase, cfg.pways, cfg.obase
    line_shift = cfg.line_shift[0]
    reg_start, reg_end, reg_size, page_shift = cfg.reg_start, cfg.reg_end, cfg.reg_size, cfg.page_shift
    walk_kind = cfg.walk_kind[0]
    level_bits, level_shift, leaf_level, frame_mask = cfg.level_bits, cfg.level_shift, cfg.leaf_level, cfg.frame_mask
    hpt_mask = cfg.hpt_mask[0]
    tsb_entries = cfg.tsb_entries[0]
    exclusive = cfg.exclusive[0] != 0
    tags, stamps, order, clock, memo = st.tags, st.stamps, st.order, st.clock, st.memo
    nlev = sets.shape[0]
    all_data = kinds.shape[0] == 0
    n = addrs.shape[0]

    def access(line):
        """Look ``line`` up level by level, filling each level it misses; the serving level."""
        for c in range(nlev):
            m = mask[c]
            if not general or m >= 0:
                s = line & m
            else:
                s = line % sets[c]
            pw = pways[c]
            b = cbase[c] + s * pw
            hw = find_tag(tags, b, pw, line)  # padded ways hold -1 and never match
            wy = ways[c]
            if not general or wy <= 16:  # recency order packed in one word, most recent in the low nibble
                osl = obase[c] + s
                if hw >= 0:
                    order[osl] = lru_touch(order[osl], hw)
                    return c
                victim, o = order_victim(order[osl], wy)
                order[osl] = o
                tags[b + np.int64(victim)] = line
            else:  # stamps: the way with the smallest stamp (empty ways have 0, lowest first)
                clock[0] += 1
                if hw >= 0:
                    stamps[b + hw] = clock[0]
                    return c
                victim = stamp_victim(stamps, b, wy)
                tags[victim] = line
                stamps[victim] = clock[0]
        return nlev

    def find(c, line):
        """(first tag slot of line's set at level c, its order word, the way holding line or -1)."""
        s = line & mask[c]
        pw = pways[c]
        b = cbase[c] + s * pw
        return b, obase[c] + s, find_tag(tags, b, pw, line)

    def insert(c, line):
        """Put ``line`` in level c as most recent, in place of the least recent way; the line it
        displaced (-1: the way was empty)."""
        s = line & mask[c]
        b = cbase[c] + s * pways[c]
        osl = obase[c] + s
        victim, o = order_victim(order[osl], ways[c])
        order[osl] = o
        old = tags[b + np.int64(victim)]
        tags[b + np.int64(victim)] = line
        return old

    def access_exclusive(line):
        """Exclusive levels: a line lives in one level. An L1 miss served by level c moves the line
        from c to L1; L1's victim goes to L2, L2's to L3 and so on; the last level's is dropped."""
        b, osl, hw = find(0, line)
        if hw >= 0:
            order[osl] = lru_touch(order[osl], hw)
            return 0
        served = nlev
        for c in range(1, nlev):
            b, osl, hw = find(c, line)
            if hw >= 0:  # take it out: the way becomes empty and least recent
                served = c
                tags[b + hw] = -1
                o = order[osl]
                wy = ways[c]
                k = 0
                while ((o >> np.uint64(4 * k)) & np.uint64(15)) != np.uint64(hw):
                    k += 1
                low = o & ((np.uint64(1) << np.uint64(4 * k)) - np.uint64(1))
                high = (o >> np.uint64(4 * (k + 1))) << np.uint64(4 * k)
                order[osl] = low | high | (np.uint64(hw) << np.uint64(4 * (wy - 1)))
                break
        v = insert(0, line)
        c = 1
        while v >= 0 and c < nlev:
            v = insert(c, v)
            c += 1
        return served

    def pt_line(a, z, r, refs):
        if walk_kind == RADIX:
            lvl = leaf_level[z] - refs + 1 + r
            bits = level_bits[lvl]
            sh = level_shift[lvl]
            t = a >> (sh + bits)
            e = (a >> sh) & ((np.int64(1) << bits) - 1)
            byte = (((t * FRAME_MULT) & frame_mask[lvl]) << (bits + 3)) + (e << 3)
            return PT_SPACE | (np.int64(lvl) << SUB_SHIFT) | (byte >> line_shift)
        if walk_kind == HASHED:
            h = hpt_group(a, page_shift[z], hpt_mask)
            if r == 1:
                h = (~h) & hpt_mask
            return PT_SPACE | (np.int64(1) << KIND_SHIFT) | ((h * 128) >> line_shift)
        vpn = a >> page_shift[z]
        if walk_kind == TSB:
            if r == 0:
                slot = z * tsb_entries + (vpn & (tsb_entries - 1))
                return PT_SPACE | (np.int64(2) << KIND_SHIFT) | ((slot * 16) >> line_shift)
            j = r - 1
            entry = vpn >> (9 * (refs - 2 - j))
            byte = (((entry >> 9) * FRAME_MULT) & FRAME_MASK) * 4096 + (entry & 511) * 8
            return PT_SPACE | (np.int64(3) << KIND_SHIFT) | (np.int64(z * 8 + j) << SUB_SHIFT) | (byte >> line_shift)
        byte = (((vpn >> 9) * FRAME_MULT) & FRAME_MASK) * 4096 + (vpn & 511) * 8
        return PT_SPACE | (np.int64(4) << KIND_SHIFT) | (np.int64(z) << SUB_SHIFT) | (byte >> line_shift)

    last = memo[0]
    last_z = memo[1]
    lo = 0
    q = 0
    for i in range(n):
        while q < nlog and wlog[q + 2] == i:
            wa = wlog[q]
            code = wlog[q + 1]
            refs = code >> 4
            z = code & 15
            for r in range(refs):
                ln = pt_line(wa, z, r, refs)
                walk_hits[access_exclusive(ln) if exclusive else access(ln), z] += 1
            last = -1
            q += 3
        if not all_data and kinds[i] != 0:
            continue
        a = addrs[i]
        line = a >> line_shift
        if line == last:
            data_hits[0, last_z] += 1
            continue
        if not (reg_start[lo] <= a and a < reg_end[lo]):
            lo = region_of(a, reg_start)
        z = reg_size[lo]
        data_hits[access_exclusive(line) if exclusive else access(line), z] += 1
        last = line
        last_z = z
    memo[0] = last
    memo[1] = last_z
    return q
