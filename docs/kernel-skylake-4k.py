"""Written by pagesim._kernels.writer for the chain shape (((4, 4, 0, 1, 44, 7, 0), (12, 12, 0, 1, 108, 23, 0)), 0, None, ((4, 4, 0, 1, 1, 0, 0, 1, 39), (4, 4, 0, 1, 2, 4, 1, 2, 30), (8, 8, 0, 1, 4, 12, 3, 3, 21)), False, False). Do not edit."""
# rules.py dbd5d5b590a261c50c70
# sets.py e0632969e7567c215f36
# simd.py 0db92554bded8a195a90
# walks.py 40460ec6300744cb3fb9
# policies/__init__.py 1d1c6efcebfc2dc66066
# policies/fifo.py 170f16b1aa64c3e03210
# policies/lru.py eaa45d01f7a18ed8dc21
# policies/plru.py fdbd68cabee0b0300c0b
# policies/random.py b2bfd3b6ad1637655a94
import numpy as np
from pagesim._kernels._jit import jit
from pagesim._kernels.rules import SEGMENT_SHIFT, find_tag, hpt_group, region_of, stamp_victim
from pagesim._kernels.sets import hash_lookup
from pagesim._kernels.simd import find_way, min_way
from pagesim._kernels.walks import NOT_IN_HPT, hpt_insert
from pagesim._kernels.rules import NIBBLE_HIGHS, NIBBLE_ONES
ORDER_LRU, ORDER_FIFO, LIST_LRU, LIST_FIFO, RANDOM_FILL, DIRECT_LRU, DIRECT_FIFO, STAMP_LRU = 0, 1, 2, 3, 4, 5, 6, 7


@jit
def translate_chunk(addrs, kinds, cfg, st, cnt):
    """Simulate ``addrs`` (data accesses to one page size) up to the first address outside every
    region. Returns (its index or -1, the fast-path memo, the ring heads, the counts)."""
    tags, links, order, htab, pos, rng = st.tags, st.links, st.order, st.htab, st.pos, st.rng
    mapped, page_state = st.mapped, st.page_state
    reg_start, reg_end, reg_size, reg_base, reg_fa, page_shift = cfg.reg_start, cfg.reg_end, cfg.reg_size, cfg.reg_base, cfg.reg_fa, cfg.page_shift
    st_sets, st_ways, st_mask, st_mode, st_base, st_pways, st_obase = cfg.st_sets, cfg.st_ways, cfg.st_mask, cfg.st_mode, cfg.st_base, cfg.st_pways, cfg.st_obase
    set_hash, tag_shift, idx_off, chain = cfg.set_hash, cfg.tag_shift, cfg.idx_off, cfg.chain
    z = reg_size[0]  # one page size
    rps = page_shift[z]
    q_refs = cfg.radix_refs[z]
    # the chain's positions (what the shape fixes is written in below as constants)
    s0 = chain[0, z, 0]
    h0 = tag_shift[s0, z]
    e0 = idx_off[s0, 0]
    n0 = st_sets[s0]
    m0 = st_mask[s0] & 9223372036854775807
    s1 = chain[0, z, 1]
    h1 = tag_shift[s1, z]
    e1 = idx_off[s1, 0]
    n1 = st_sets[s1]
    m1 = st_mask[s1] & 9223372036854775807
    q0_skip = 1
    q0_h = 39
    q0_m = 0
    q0_n = 1
    q0_b = 0
    q0_o = 0
    q0_k = -1
    q1_skip = 2
    q1_h = 30
    q1_m = 1
    q1_n = 2
    q1_b = 4
    q1_o = 1
    q1_k = -1
    q2_skip = 3
    q2_h = 21
    q2_m = 3
    q2_n = 4
    q2_b = 12
    q2_o = 3
    q2_k = -1
    c_res0 = 0
    c_res1 = 0
    c_walk = 0
    c_fault = 0
    c_refs = 0
    c_q0h = 0
    c_q0m = 0
    c_q1h = 0
    c_q1m = 0
    c_q2h = 0
    c_q2m = 0
    # the current region in locals: held in arrays, every store to tags could alias them
    lo = 0
    rs = reg_start[0]
    rlen = np.uint64(reg_end[0] - rs)
    rb = reg_base[0]
    bad = -1
    a0, f0, g0, r0 = st.memo_addr[0], st.memo_shift[0], st.memo_z[0], st.run[0]
    n = addrs.shape[0]
    if a0 == -1 and n > 0 and addrs[0] < 0:
        bad = 0
        n = 0
    for i in range(n):
        a = addrs[i]
        if ((a ^ a0) >> f0) == 0:  # fast path
            r0 += 1
            continue
        if r0:
            c_res0 += r0
            r0 = 0
        if np.uint64(a - rs) >= rlen:  # another region (a negative address is outside every one)
            lo = region_of(a, reg_start)
            if not (reg_start[lo] <= a and a < reg_end[lo]):
                a0 = -1
                f0 = 0
                bad = i
                break
            rs = reg_start[lo]
            rlen = np.uint64(reg_end[lo] - rs)
            rb = reg_base[lo]
            e0 = idx_off[s0, lo]
            e1 = idx_off[s1, lo]
        j = 2
        key = a >> h0
        tag = key * 16 + z
        sx = key & m0
        base = 44 + sx * 4
        osl = 7 + sx
        hw = find_way(tags, base, 4, tag)
        hit = hw >= 0
        if hit:
            x_0 = (order[np.uint64(osl)]) ^ (np.uint64(hw) * NIBBLE_ONES)
            t_0 = (x_0 - NIBBLE_ONES) & ~x_0 & NIBBLE_HIGHS
            b_0 = (t_0 & (~t_0 + np.uint64(1))) >> np.uint64(3)
            (order[np.uint64(osl)]) = ((order[np.uint64(osl)]) & ~((b_0 << np.uint64(4)) - np.uint64(1))) | (((order[np.uint64(osl)]) & (b_0 - np.uint64(1))) << np.uint64(4)) | np.uint64(hw)
        else:
            o_0 = (order[np.uint64(osl)])
            victim = np.int64((o_0 >> np.uint64(4 * (4 - 1))) & np.uint64(15))
            if 4 < 16:
                ow = ((o_0 << np.uint64(4)) | np.uint64(victim)) & ((np.uint64(1) << np.uint64(4 * 4)) - np.uint64(1))
            else:
                ow = (o_0 << np.uint64(4)) | np.uint64(victim)
            order[np.uint64(osl)] = ow
            tags[np.uint64(base + victim)] = tag
        if hit:
            j = 0
            c_res0 += 1
        else:
            key = a >> h1
            tag = key * 16 + z
            sx = key & m1
            base = 108 + sx * 12
            osl = 23 + sx
            hw = find_way(tags, base, 12, tag)
            hit = hw >= 0
            if hit:
                x_1 = (order[np.uint64(osl)]) ^ (np.uint64(hw) * NIBBLE_ONES)
                t_1 = (x_1 - NIBBLE_ONES) & ~x_1 & NIBBLE_HIGHS
                b_1 = (t_1 & (~t_1 + np.uint64(1))) >> np.uint64(3)
                (order[np.uint64(osl)]) = ((order[np.uint64(osl)]) & ~((b_1 << np.uint64(4)) - np.uint64(1))) | (((order[np.uint64(osl)]) & (b_1 - np.uint64(1))) << np.uint64(4)) | np.uint64(hw)
            else:
                o_1 = (order[np.uint64(osl)])
                victim = np.int64((o_1 >> np.uint64(4 * (12 - 1))) & np.uint64(15))
                if 12 < 16:
                    ow = ((o_1 << np.uint64(4)) | np.uint64(victim)) & ((np.uint64(1) << np.uint64(4 * 12)) - np.uint64(1))
                else:
                    ow = (o_1 << np.uint64(4)) | np.uint64(victim)
                order[np.uint64(osl)] = ow
                tags[np.uint64(base + victim)] = tag
            if hit:
                j = 1
                c_res1 += 1
        if j == 2:  # a miss everywhere: a walk
            c_walk += 1
            gid = rb + ((a - rs) >> rps)
            faulted = False
            word = mapped[np.uint64(gid >> 6)]
            bit = np.uint64(1) << np.uint64(gid & 63)
            if (word & bit) == 0:
                c_fault += 1
                faulted = True
                mapped[np.uint64(gid >> 6)] = word | bit
            refs = q_refs
            best = 0
            if q0_skip < refs:
                key = a >> q0_h
                qhit = True
                if key != q0_k:
                    sx = 0
                    base = q0_b + sx * 4
                    osl = q0_o + sx
                    hw = find_way(tags, base, 4, key * 16)
                    hit = hw >= 0
                    if hit:
                        x_q0 = (order[np.uint64(osl)]) ^ (np.uint64(hw) * NIBBLE_ONES)
                        t_q0 = (x_q0 - NIBBLE_ONES) & ~x_q0 & NIBBLE_HIGHS
                        b_q0 = (t_q0 & (~t_q0 + np.uint64(1))) >> np.uint64(3)
                        (order[np.uint64(osl)]) = ((order[np.uint64(osl)]) & ~((b_q0 << np.uint64(4)) - np.uint64(1))) | (((order[np.uint64(osl)]) & (b_q0 - np.uint64(1))) << np.uint64(4)) | np.uint64(hw)
                    else:
                        o_q0 = (order[np.uint64(osl)])
                        victim = np.int64((o_q0 >> np.uint64(4 * (4 - 1))) & np.uint64(15))
                        if 4 < 16:
                            ow = ((o_q0 << np.uint64(4)) | np.uint64(victim)) & ((np.uint64(1) << np.uint64(4 * 4)) - np.uint64(1))
                        else:
                            ow = (o_q0 << np.uint64(4)) | np.uint64(victim)
                        order[np.uint64(osl)] = ow
                        tags[np.uint64(base + victim)] = key * 16
                    qhit = hit
                    q0_k = key
                if qhit:
                    c_q0h += 1
                    if q0_skip > best:
                        best = q0_skip
                else:
                    c_q0m += 1
            if q1_skip < refs:
                key = a >> q1_h
                qhit = True
                if key != q1_k:
                    sx = key & q1_m
                    base = q1_b + sx * 4
                    osl = q1_o + sx
                    hw = find_way(tags, base, 4, key * 16)
                    hit = hw >= 0
                    if hit:
                        x_q1 = (order[np.uint64(osl)]) ^ (np.uint64(hw) * NIBBLE_ONES)
                        t_q1 = (x_q1 - NIBBLE_ONES) & ~x_q1 & NIBBLE_HIGHS
                        b_q1 = (t_q1 & (~t_q1 + np.uint64(1))) >> np.uint64(3)
                        (order[np.uint64(osl)]) = ((order[np.uint64(osl)]) & ~((b_q1 << np.uint64(4)) - np.uint64(1))) | (((order[np.uint64(osl)]) & (b_q1 - np.uint64(1))) << np.uint64(4)) | np.uint64(hw)
                    else:
                        o_q1 = (order[np.uint64(osl)])
                        victim = np.int64((o_q1 >> np.uint64(4 * (4 - 1))) & np.uint64(15))
                        if 4 < 16:
                            ow = ((o_q1 << np.uint64(4)) | np.uint64(victim)) & ((np.uint64(1) << np.uint64(4 * 4)) - np.uint64(1))
                        else:
                            ow = (o_q1 << np.uint64(4)) | np.uint64(victim)
                        order[np.uint64(osl)] = ow
                        tags[np.uint64(base + victim)] = key * 16
                    qhit = hit
                    q1_k = key
                if qhit:
                    c_q1h += 1
                    if q1_skip > best:
                        best = q1_skip
                else:
                    c_q1m += 1
            if q2_skip < refs:
                key = a >> q2_h
                qhit = True
                if key != q2_k:
                    sx = key & q2_m
                    base = q2_b + sx * 8
                    osl = q2_o + sx
                    hw = find_way(tags, base, 8, key * 16)
                    hit = hw >= 0
                    if hit:
                        x_q2 = (order[np.uint64(osl)]) ^ (np.uint64(hw) * NIBBLE_ONES)
                        t_q2 = (x_q2 - NIBBLE_ONES) & ~x_q2 & NIBBLE_HIGHS
                        b_q2 = (t_q2 & (~t_q2 + np.uint64(1))) >> np.uint64(3)
                        (order[np.uint64(osl)]) = ((order[np.uint64(osl)]) & ~((b_q2 << np.uint64(4)) - np.uint64(1))) | (((order[np.uint64(osl)]) & (b_q2 - np.uint64(1))) << np.uint64(4)) | np.uint64(hw)
                    else:
                        o_q2 = (order[np.uint64(osl)])
                        victim = np.int64((o_q2 >> np.uint64(4 * (8 - 1))) & np.uint64(15))
                        if 8 < 16:
                            ow = ((o_q2 << np.uint64(4)) | np.uint64(victim)) & ((np.uint64(1) << np.uint64(4 * 8)) - np.uint64(1))
                        else:
                            ow = (o_q2 << np.uint64(4)) | np.uint64(victim)
                        order[np.uint64(osl)] = ow
                        tags[np.uint64(base + victim)] = key * 16
                    qhit = hit
                    q2_k = key
                if qhit:
                    c_q2h += 1
                    if q2_skip > best:
                        best = q2_skip
                else:
                    c_q2m += 1
            wr = refs - best
            c_refs += wr
        a0, f0, g0 = a, h0, z
    return bad, a0, f0, g0, r0, (), (c_res0, c_res1, c_walk, c_fault, c_refs, c_q0h, c_q0m, c_q1h, c_q1m, c_q2h, c_q2m,)


def run_chunk(addrs, kinds, cfg, st, cnt) -> int:
    """Simulate one chunk; keep the fast-path memo and ring heads in ``st``, add the counts to ``cnt``."""
    bad, a0, f0, g0, r0, hd, c = translate_chunk(addrs, kinds, cfg, st, cnt)
    st.memo_addr[0], st.memo_shift[0], st.memo_z[0], st.run[0] = a0, f0, g0, r0
    z = int(cfg.reg_size[0])
    # each count added only when not zero: a numpy element update costs about a microsecond
    if c[0]:
        cnt.resolved[0, z, 0] += c[0]
    if c[1]:
        cnt.resolved[0, z, 1] += c[1]
    if c[2]:
        cnt.resolved[0, z, cfg.chain.shape[2]] += c[2]
    if c[3]:
        cnt.faults[z] += c[3]
    if c[4]:
        cnt.walk_refs[0, z] += c[4]
    if c[5]:
        cnt.hits[cfg.pwc_struct[0], z] += c[5]
    if c[6]:
        cnt.misses[cfg.pwc_struct[0], z] += c[6]
    if c[7]:
        cnt.hits[cfg.pwc_struct[1], z] += c[7]
    if c[8]:
        cnt.misses[cfg.pwc_struct[1], z] += c[8]
    if c[9]:
        cnt.hits[cfg.pwc_struct[2], z] += c[9]
    if c[10]:
        cnt.misses[cfg.pwc_struct[2], z] += c[10]
    return bad
