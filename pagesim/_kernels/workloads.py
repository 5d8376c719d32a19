"""Address generators for the workloads. Each fills ``out`` and, where it has one, advances a
``state`` array so the next chunk continues where this one stopped."""
import numpy as np

from ._jit import jit

GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@jit
def splitmix64(x):
    x = x + GOLDEN
    z = x
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@jit
def gen_uniform_random(out, start, seed, slots, base, elem):
    """out[i] = base + elem * (hash(seed, start + i) mod slots): counter-based, so any chunking
    gives the same sequence."""
    key = splitmix64(np.uint64(seed))
    s = np.uint64(slots)
    for i in range(out.shape[0]):
        h = splitmix64(key ^ np.uint64(start + i))
        out[i] = base + np.int64(h % s) * elem


@jit
def gen_pointer_chase(out, state, a, c, bits, nodes, base, node):
    mask = (np.uint64(1) << np.uint64(bits)) - np.uint64(1)
    ua = np.uint64(a)
    uc = np.uint64(c)
    un = np.uint64(nodes)
    x = np.uint64(state[0])
    for i in range(out.shape[0]):
        x = (ua * x + uc) & mask
        while x >= un:
            x = (ua * x + uc) & mask
        out[i] = base + np.int64(x) * node
    state[0] = np.int64(x)


@jit
def gen_blocked_matrix(out, st, n, b, A, B, C):
    ii, jj, kk, i, k, j, ph = st[0], st[1], st[2], st[3], st[4], st[5], st[6]
    pos = 0
    m = out.shape[0]
    while pos < m:
        if ph == 0:
            out[pos] = A + (i * n + k) * 8
            ph = 1
            j = jj
        elif ph == 1:
            out[pos] = B + (k * n + j) * 8
            ph = 2
        else:
            out[pos] = C + (i * n + j) * 8
            j += 1
            if j < min(jj + b, n):
                ph = 1
            else:
                ph = 0
                k += 1
                if k >= min(kk + b, n):
                    k = kk
                    i += 1
                    if i >= min(ii + b, n):
                        kk += b
                        if kk >= n:
                            kk = 0
                            jj += b
                            if jj >= n:
                                jj = 0
                                ii += b
                                if ii >= n:
                                    ii = 0
                        i = ii
                        k = kk
        pos += 1
    st[0], st[1], st[2], st[3], st[4], st[5], st[6] = ii, jj, kk, i, k, j, ph


@jit
def gen_md(out, st, slot, c, apc, atom_bytes, base):
    """Cell-list neighbour loop: for each cell, for each atom t: the atom itself, then every atom of
    the 27 neighbouring cells (periodic). state = (cell, t, phase 0..27, u)."""
    cell, t, ph, u = st[0], st[1], st[2], st[3]
    ncell = c * c * c
    pos = 0
    m = out.shape[0]
    while pos < m:
        if ph == 0:
            out[pos] = base + slot[cell * apc + t] * atom_bytes
            ph = 1
            u = 0
        else:
            nb = ph - 1
            x = cell % c
            y = (cell // c) % c
            z = cell // (c * c)
            nx = (x + nb % 3 - 1 + c) % c
            ny = (y + (nb // 3) % 3 - 1 + c) % c
            nz = (z + nb // 9 - 1 + c) % c
            ncid = nx + c * (ny + c * nz)
            out[pos] = base + slot[ncid * apc + u] * atom_bytes
            u += 1
            if u == apc:
                u = 0
                ph += 1
                if ph == 28:
                    ph = 0
                    t += 1
                    if t == apc:
                        t = 0
                        cell += 1
                        if cell == ncell:
                            cell = 0
        pos += 1
    st[0], st[1], st[2], st[3] = cell, t, ph, u


@jit
def gen_hot_cold(out, start, seed, slots, hot_slots, hot_threshold, base, elem):
    """Counter-based like gen_uniform_random: access i goes to the first ``hot_slots`` slots when
    its first hash falls below ``hot_threshold`` (a fraction of 2**64), else anywhere."""
    key = splitmix64(np.uint64(seed))
    key2 = splitmix64(key ^ np.uint64(0x5DEECE66D))
    s = np.uint64(slots)
    hs = np.uint64(hot_slots)
    thr = np.uint64(hot_threshold)
    for i in range(out.shape[0]):
        c = np.uint64(start + i)
        h = splitmix64(key ^ c)
        g = splitmix64(key2 ^ c)
        if h < thr:
            out[i] = base + np.int64(g % hs) * elem
        else:
            out[i] = base + np.int64(g % s) * elem
