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
    gives the same sequence. A power-of-two ``slots`` takes the remainder with a mask (the same
    number, without a 64-bit division per access)."""
    key = splitmix64(np.uint64(seed))
    s = np.uint64(slots)
    if slots & (slots - 1) == 0:
        m = s - np.uint64(1)
        for i in range(out.shape[0]):
            h = splitmix64(key ^ np.uint64(start + i))
            out[i] = base + np.int64(h & m) * elem
    else:
        for i in range(out.shape[0]):
            h = splitmix64(key ^ np.uint64(start + i))
            out[i] = base + np.int64(h % s) * elem


@jit
def gen_sequential(out, start, per, base, stride):
    """out[i] = base + ((start + i) mod per) * stride: one division per chunk, then a counter that
    wraps at ``per`` (a pass of Sequential)."""
    pos = start % per
    for i in range(out.shape[0]):
        out[i] = base + pos * stride
        pos += 1
        if pos == per:
            pos = 0


@jit
def gen_planes(out, start, planes, per_plane, base, plane, step):
    """Access idx = (start + i) mod (planes * per_plane) goes to plane idx mod planes at position
    idx div planes: kept as two counters (plane k, position j), divided once per chunk."""
    idx = start % (planes * per_plane)
    k = idx % planes
    j = idx // planes
    for i in range(out.shape[0]):
        out[i] = base + k * plane + j * step
        k += 1
        if k == planes:
            k = 0
            j += 1
            if j == per_plane:
                j = 0


@jit
def gen_triad(out, start, n, b0, b1, b2, elem):
    """STREAM triad: access idx = start + i loads b[i'], c[i'] or stores a[i'] as idx mod 3 is 0, 1, 2,
    with i' = (idx div 3) mod n; ``b0, b1, b2`` are the bases of b, c, a. Counters, divided once per chunk."""
    r = start % 3
    e = (start // 3) % n
    for i in range(out.shape[0]):
        if r == 0:
            out[i] = b0 + e * elem
            r = 1
        elif r == 1:
            out[i] = b1 + e * elem
            r = 2
        else:
            out[i] = b2 + e * elem
            r = 0
            e += 1
            if e == n:
                e = 0


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
def cell_id(x, y, z, dx, dy, dz, c):
    """The id of the cell at offset (dx - 1, dy - 1, dz - 1) from cell (x, y, z), periodic; every
    coordinate stays within -1..c, so a compare wraps it (c >= 3)."""
    nx = x + dx - 1
    if nx < 0:
        nx += c
    elif nx >= c:
        nx -= c
    ny = y + dy - 1
    if ny < 0:
        ny += c
    elif ny >= c:
        ny -= c
    nz = z + dz - 1
    if nz < 0:
        nz += c
    elif nz >= c:
        nz -= c
    return nx + c * (ny + c * nz)


@jit
def gen_md(out, st, slot, c, apc, atom_bytes, base):
    """Cell-list neighbour loop: for each cell, for each atom t: the atom itself, then every atom of
    the 27 neighbouring cells (periodic; neighbour nb = dx + 3 dy + 9 dz, offsets dx - 1...).
    state = (cell, t, phase 0..27, u). The cell's coordinates and the neighbour offsets are counters,
    so no access divides (the state is divided once per chunk)."""
    cell, t, ph, u = st[0], st[1], st[2], st[3]
    ncell = c * c * c
    x = cell % c
    y = (cell // c) % c
    z = cell // (c * c)
    dx = dy = dz = 0
    row = 0  # slot index of the first atom of the neighbour cell in use (phase ph)
    if ph > 0:
        nb = ph - 1
        dx = nb % 3
        dy = (nb // 3) % 3
        dz = nb // 9
        row = cell_id(x, y, z, dx, dy, dz, c) * apc
    pos = 0
    m = out.shape[0]
    while pos < m:
        if ph == 0:
            out[pos] = base + slot[cell * apc + t] * atom_bytes
            ph = 1
            u = 0
            dx = dy = dz = 0
            row = cell_id(x, y, z, 0, 0, 0, c) * apc
        else:
            out[pos] = base + slot[row + u] * atom_bytes
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
                        x += 1
                        if x == c:
                            x = 0
                            y += 1
                            if y == c:
                                y = 0
                                z += 1
                        if cell == ncell:
                            cell = 0
                            z = 0
                else:
                    dx += 1
                    if dx == 3:
                        dx = 0
                        dy += 1
                        if dy == 3:
                            dy = 0
                            dz += 1
                    row = cell_id(x, y, z, dx, dy, dz, c) * apc
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
    if slots & (slots - 1) == 0 and hot_slots & (hot_slots - 1) == 0:  # remainders by masks: the same numbers
        m = s - np.uint64(1)
        hm = hs - np.uint64(1)
        for i in range(out.shape[0]):
            c = np.uint64(start + i)
            h = splitmix64(key ^ c)
            g = splitmix64(key2 ^ c)
            if h < thr:
                out[i] = base + np.int64(g & hm) * elem
            else:
                out[i] = base + np.int64(g & m) * elem
        return
    for i in range(out.shape[0]):
        c = np.uint64(start + i)
        h = splitmix64(key ^ c)
        g = splitmix64(key2 ^ c)
        if h < thr:
            out[i] = base + np.int64(g % hs) * elem
        else:
            out[i] = base + np.int64(g % s) * elem
