"""The documents' kernels as real code: STREAM's triad, RandomAccess (GUPS), a blocked DGEMM, the
strided solver's sweep through planes and the MD neighbour loop, run on real buffers by
``pagesim.host.here`` to time them on this machine with 4 KiB pages and with transparent huge pages.

Each kernel makes, in the same order, the accesses of the pagesim workload of the same name
(``sources/workloads.py``: ``stream``, ``random``, ``blocked_matrix``, ``planes``, ``md``), and can
record them: given a non-empty ``log``, it writes the address of each access (its offset in its
buffer plus that buffer's ``base``) until the log is full. The recorded addresses are what the
prediction simulates, so the simulated trace is the trace the timed code makes. With an empty log
the record branch is never taken (the timed runs).
"""

import numpy as np

from ._jit import jit
from .workloads import cell_id, splitmix64

ELEMENT = 8  # bytes of a double or a 64-bit word


@jit
def triad(a, b, c, q, passes, base_a, base_b, base_c, log):
    """a[i] = b[i] + q c[i] for every i, ``passes`` times: loads b[i] and c[i], stores a[i]."""
    n = a.shape[0]
    cap = log.shape[0]
    pos = 0
    for _ in range(passes):
        for i in range(n):
            a[i] = b[i] + q * c[i]
            if pos < cap:
                log[pos] = base_b + i * ELEMENT
                if pos + 1 < cap:
                    log[pos + 1] = base_c + i * ELEMENT
                if pos + 2 < cap:
                    log[pos + 2] = base_a + i * ELEMENT
                pos += 3
    return pos


@jit
def gups(table, updates, seed, base, log):
    """RandomAccess: ``updates`` times, table[h mod size] ^= h for the i-th hash h of ``seed``
    (the table's length a power of two). The store goes to the word just loaded, so only the load
    is an access of the trace (the store hits the same TLB entry)."""
    key = splitmix64(np.uint64(seed))
    mask = np.uint64(table.shape[0] - 1)
    cap = log.shape[0]
    for i in range(updates):
        h = splitmix64(key ^ np.uint64(i))
        j = np.int64(h & mask)
        table[j] ^= h
        if i < cap:
            log[i] = base + j * ELEMENT
    return updates


@jit
def dgemm(A, B, C, n, b, base_a, base_b, base_c, log):
    """C += A B on n x n doubles in b x b tiles (row-major): for each tile triple (ii, jj, kk), for
    i, for k: load A[i, k]; for j: load B[k, j], update C[i, j]."""
    cap = log.shape[0]
    pos = 0
    for ii in range(0, n, b):
        for jj in range(0, n, b):
            for kk in range(0, n, b):
                for i in range(ii, min(ii + b, n)):
                    for k in range(kk, min(kk + b, n)):
                        aik = A[i * n + k]
                        if pos < cap:
                            log[pos] = base_a + (i * n + k) * ELEMENT
                        pos += 1
                        for j in range(jj, min(jj + b, n)):
                            C[i * n + j] += aik * B[k * n + j]
                            if pos < cap:
                                log[pos] = base_b + (k * n + j) * ELEMENT
                                if pos + 1 < cap:
                                    log[pos + 1] = base_c + (i * n + j) * ELEMENT
                            pos += 2
    return pos


@jit
def planes(grid, n_planes, plane_words, step_words, per_plane, sweeps, base, log):
    """A solver's sweep along the slow dimension: for each position j of a plane, a recurrence
    through the ``n_planes`` planes (x = x / 2 + grid[k, j], stored back), ``sweeps`` times."""
    cap = log.shape[0]
    pos = 0
    for _ in range(sweeps):
        for j in range(per_plane):
            x = 0.0
            for k in range(n_planes):
                idx = k * plane_words + j * step_words
                x = 0.5 * x + grid[idx]
                grid[idx] = x
                if pos < cap:
                    log[pos] = base + idx * ELEMENT
                pos += 1
    return pos


@jit
def md(atoms, slot, c, apc, atom_words, steps, base, log):
    """A cell-list MD neighbour loop over ``c**3`` cells of ``apc`` atoms: for each cell, for each of
    its atoms, read the atom, then every atom of the 27 neighbouring cells (periodic), summing the
    squared distance of their first coordinates. ``slot[k]`` is where the k-th atom in cell order
    is stored. Returns the sum (so the loads are not optimised away)."""
    cap = log.shape[0]
    pos = 0
    total = 0.0
    for _ in range(steps):
        for cell in range(c * c * c):
            x = cell % c
            y = (cell // c) % c
            z = cell // (c * c)
            for t in range(apc):
                me = slot[cell * apc + t] * atom_words
                xa = atoms[me]
                if pos < cap:
                    log[pos] = base + me * ELEMENT
                pos += 1
                for nb in range(27):
                    row = cell_id(x, y, z, nb % 3, (nb // 3) % 3, nb // 9, c) * apc
                    for u in range(apc):
                        other = slot[row + u] * atom_words
                        d = atoms[other] - xa
                        total += d * d
                        if pos < cap:
                            log[pos] = base + other * ELEMENT
                        pos += 1
    return total
