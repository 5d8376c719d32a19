"""The workload generators against the plain numpy formulas: counters in numba
instead of a division per access must give the same addresses, for any parameters and any chunking.
The references below are the numpy expressions (and the plain loop for md) pagesim used before."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import pagesim
from pagesim.sources.workloads import ELEMENT

BASES = [1 << 30, 3 << 30, 5 << 30]


def all_chunks(w, chunk, seed=0):
    return np.concatenate([a for a, _ in w.chunks(BASES, chunk, seed)])


def ref_sequential(w):
    idx = np.arange(w.n_accesses, dtype=np.uint64)
    return np.uint64(BASES[0]) + (idx % np.uint64(w.per_pass)) * np.uint64(w.stride)


def ref_planes(w):
    per_plane = -(-w.plane // w.step)
    idx = np.arange(w.accesses, dtype=np.uint64) % np.uint64(per_plane * w.planes)
    k = idx % np.uint64(w.planes)
    j = idx // np.uint64(w.planes)
    return np.uint64(BASES[0]) + k * np.uint64(w.plane) + j * np.uint64(w.step)


def ref_triad(w):
    order = np.array([BASES[1], BASES[2], BASES[0]], dtype=np.uint64)
    idx = np.arange(w.n_accesses, dtype=np.uint64)
    i = (idx // np.uint64(3)) % np.uint64(w.n)
    return order[(idx % np.uint64(3)).astype(np.intp)] + i * np.uint64(ELEMENT)


def ref_md(w, seed):
    """The cell-list loop as it was: every neighbour cell computed with divisions at every access."""
    total_atoms = w.n_cells * w.atoms_per_cell
    rng = np.random.default_rng(seed)
    slot = np.arange(total_atoms, dtype=np.int64)
    moved = rng.random(total_atoms) < float(w.shuffle)
    idx = np.flatnonzero(moved)
    slot[idx] = slot[rng.permutation(idx)]
    c, apc, out = w.cells_per_side, w.atoms_per_cell, []
    cell = t = ph = u = 0
    for _ in range(w.n_accesses):
        if ph == 0:
            out.append(BASES[0] + int(slot[cell * apc + t]) * w.atom_bytes)
            ph, u = 1, 0
        else:
            nb = ph - 1
            x, y, z = cell % c, (cell // c) % c, cell // (c * c)
            ncid = (x + nb % 3 - 1 + c) % c + c * ((y + (nb // 3) % 3 - 1 + c) % c + c * ((z + nb // 9 - 1 + c) % c))
            out.append(BASES[0] + int(slot[ncid * apc + u]) * w.atom_bytes)
            u += 1
            if u == apc:
                u, ph = 0, ph + 1
                if ph == 28:
                    ph, t = 0, t + 1
                    if t == apc:
                        t, cell = 0, (cell + 1) % (c * c * c)
    return np.array(out, dtype=np.uint64)


def ref_random(slots, n, seed, start=0):
    """splitmix64 of (seed key ^ counter) mod slots, in Python integers."""
    M = (1 << 64) - 1

    def mix(x):
        x = (x + 0x9E3779B97F4A7C15) & M
        x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & M
        x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & M
        return x ^ (x >> 31)

    key = mix(seed)
    return np.array([BASES[0] + (mix(key ^ (start + i)) % slots) * ELEMENT for i in range(n)], dtype=np.uint64)


chunks = st.sampled_from([1, 2, 3, 7, 64, 1000, 1 << 20])


@given(size=st.integers(8, 1 << 16), stride=st.integers(1, 5000), passes=st.integers(1, 4), chunk=chunks)
def test_sequential_and_strided(size, stride, passes, chunk):
    w = pagesim.workload("sequential", size=size, stride=min(stride, size), passes=passes)
    assert np.array_equal(all_chunks(w, chunk), ref_sequential(w))


@given(planes=st.integers(1, 40), plane=st.integers(8, 1 << 14), step=st.integers(1, 3000), accesses=st.integers(1, 20_000), chunk=chunks)
def test_planes(planes, plane, step, accesses, chunk):
    w = pagesim.workload("planes", planes=planes, plane=plane, step=min(step, plane), accesses=accesses)
    assert np.array_equal(all_chunks(w, chunk), ref_planes(w))


@given(n=st.integers(1, 5000), passes=st.integers(1, 3), chunk=chunks)
def test_stream_triad(n, passes, chunk):
    w = pagesim.workload("stream", n=n, passes=passes)
    assert np.array_equal(all_chunks(w, chunk), ref_triad(w))


@given(
    atoms=st.integers(27, 600),
    apc=st.integers(1, 4),
    shuffle=st.sampled_from([0.0, 0.5, 1.0]),
    steps=st.integers(1, 2),
    seed=st.integers(0, 2**32),
    chunk=chunks,
)
def test_md(atoms, apc, shuffle, steps, seed, chunk):
    w = pagesim.workload("md", atoms=atoms, atoms_per_cell=apc, atom_bytes=64, shuffle=shuffle, steps=steps)
    assert np.array_equal(all_chunks(w, chunk, seed), ref_md(w, seed))


@given(slots=st.one_of(st.integers(1, 1 << 20), st.sampled_from([1 << k for k in range(0, 40)])), seed=st.integers(0, 2**63 - 1), chunk=chunks)
def test_uniform_random_masks_and_remainders_agree(slots, seed, chunk):
    w = pagesim.workload("random", size=slots * ELEMENT, accesses=300)
    assert np.array_equal(all_chunks(w, chunk, seed), ref_random(slots, 300, seed))


@given(slots_log=st.integers(3, 30), hot_log=st.integers(0, 30), odd=st.booleans(), frac=st.sampled_from([0.0, 0.3, 0.9, 1.0]), seed=st.integers(0, 2**40))
def test_hot_cold_power_of_two_or_not_same_as_division(slots_log, hot_log, odd, frac, seed):
    size = (1 << slots_log) * ELEMENT + (ELEMENT if odd else 0)
    hot = min(size, (1 << hot_log) * ELEMENT)
    w = pagesim.workload("hot_cold", size=size, hot=hot, hot_fraction=frac, accesses=500)
    got = all_chunks(w, 97, seed)
    # the reference: the same two hashes, remainders by division
    from pagesim._kernels.workloads import splitmix64

    key = splitmix64(np.uint64(seed))
    key2 = splitmix64(key ^ np.uint64(0x5DEECE66D))
    thr = min((1 << 64) - 1, int(frac * (1 << 64)))
    slots, hs = size // ELEMENT, max(1, hot // ELEMENT)
    want = []
    for i in range(500):
        h = int(splitmix64(key ^ np.uint64(i)))
        g = int(splitmix64(key2 ^ np.uint64(i)))
        want.append(BASES[0] + (g % hs if h < thr else g % slots) * ELEMENT)
    assert np.array_equal(got, np.array(want, dtype=np.uint64))
