"""The region lookup the OS-stage kernels share, and the distinct blocks of an address array."""

import numpy as np

from ._jit import jit
from .rules import region_of


@jit
def find_region(a, reg_start, reg_end, last):
    """Index of the region holding address ``a`` (``last`` first, then a binary search over the
    sorted starts), or -1 when no region holds it."""
    if reg_start[last] <= a and a < reg_end[last]:
        return last
    lo = region_of(a, reg_start)
    if reg_start[lo] <= a and a < reg_end[lo]:
        return lo
    return -1


WINDOW_BITS = 24  # the most blocks the bitmap covers around the first address: 2**24 bits (2 MiB)
BITMAP_MIN = 1 << 16  # shorter arrays use the hash set alone (no bitmap to clear)
SEEN_BITS = 10  # blocks seen, direct-mapped by their low bits: 8 KiB, in the L1 data cache


@jit
def window_bits(n):
    """log2 of the blocks the bitmap covers for ``n`` addresses: about 8 bits an address (as many
    bytes of bitmap as addresses), from 2**12 up to 2**WINDOW_BITS. A 2 MiB bitmap for 100,000
    addresses cost 0.3 ms to zero and scan, as much as their pass; blocks outside the window go to
    the hash set, so the result is the same."""
    wb = 12
    while wb < WINDOW_BITS and (1 << wb) < 8 * n:
        wb += 1
    return wb


@jit
def distinct_blocks(addrs, shift):
    """The sorted distinct values of ``addrs >> shift`` (uint64), in one pass over ``addrs``: the
    block of the previous address is skipped at once; blocks within 2**WINDOW_BITS of the first
    address's block are set in a bitmap; any others go to an open-addressing hash set. Memory is
    the bitmap plus the distinct blocks, however long ``addrs`` is. In front of both, a
    direct-mapped table of 2**SEEN_BITS blocks already seen (by their low bits) skips a block met
    before without touching the bitmap, which at 2**24 bits (2 MiB) is beyond the fastest caches:
    a random trace over 1 GiB (512 blocks) took 0.92 ns an address without it."""
    n = addrs.shape[0]
    sh = np.uint64(shift)
    use_bitmap = n >= BITMAP_MIN
    wb = window_bits(n)
    half = np.uint64(1 << (wb - 1))
    first = addrs[0] >> sh if n else np.uint64(0)
    lo = first - half if first >= half else np.uint64(0)
    width = np.uint64(1 << wb)
    bitmap = np.zeros((1 << wb) // 64 if use_bitmap else 1, dtype=np.uint64)
    in_bitmap = 0
    cap = 64
    table = np.zeros(cap, dtype=np.uint64)  # block + 1; 0 is empty
    used = 0
    last = np.uint64(0xFFFFFFFFFFFFFFFF)  # never a block: a block is an address shifted right
    seen = np.full(1 << SEEN_BITS, last, dtype=np.uint64)
    seen_mask = np.uint64((1 << SEEN_BITS) - 1)
    for i in range(n):
        b = addrs[i] >> sh
        if b == last:
            continue
        last = b
        slot = np.int64(b & seen_mask)
        if seen[slot] == b:
            continue
        seen[slot] = b
        d = b - lo
        if use_bitmap and b >= lo and d < width:
            w = np.int64(d >> np.uint64(6))
            bit = np.uint64(1) << (d & np.uint64(63))
            if (bitmap[w] & bit) == 0:
                bitmap[w] |= bit
                in_bitmap += 1
            continue
        key = b + np.uint64(1)
        mask = np.uint64(cap - 1)
        h = (b * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(40)
        while True:
            slot = np.int64(h & mask)
            t = table[slot]
            if t == key:
                break
            if t == 0:
                table[slot] = key
                used += 1
                if 2 * used > cap:  # grow: rehash into a table twice the size
                    old = table
                    cap *= 2
                    table = np.zeros(cap, dtype=np.uint64)
                    mask = np.uint64(cap - 1)
                    for j in range(old.shape[0]):
                        k = old[j]
                        if k != 0:
                            g = ((k - np.uint64(1)) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(40)
                            while table[np.int64(g & mask)] != 0:
                                g += np.uint64(1)
                            table[np.int64(g & mask)] = k
                break
            h += np.uint64(1)
    out = np.empty(in_bitmap + used, dtype=np.uint64)
    q = 0
    if use_bitmap:
        for w in range(bitmap.shape[0]):
            x = bitmap[w]
            while x != 0:
                t = x & (~x + np.uint64(1))  # lowest set bit
                out[q] = lo + np.uint64(w * 64) + np.uint64(_ctz(t))
                q += 1
                x ^= t
    for j in range(cap):
        if table[j] != 0:
            out[q] = table[j] - np.uint64(1)
            q += 1
    out.sort()
    return out


@jit
def _ctz(t):
    """Index of the single set bit of ``t``."""
    r = 0
    if t >> np.uint64(32):
        r += 32
        t >>= np.uint64(32)
    if t >> np.uint64(16):
        r += 16
        t >>= np.uint64(16)
    if t >> np.uint64(8):
        r += 8
        t >>= np.uint64(8)
    if t >> np.uint64(4):
        r += 4
        t >>= np.uint64(4)
    if t >> np.uint64(2):
        r += 2
        t >>= np.uint64(2)
    if t >> np.uint64(1):
        r += 1
    return r
