"""Workload address generation, ns per access: the plain form (numpy expressions
with a division per access; the md kernel recomputing its neighbour cell with six divisions per
access; random with a 64-bit remainder) against today's generators, on the same parameters in one
process, outputs checked identical first.

    python benchmarks/bench_generators.py [--accesses 10000000] [--repeat 5]

Each pair is timed in turn, ``--repeat`` rounds (interleaved); the table shows the best round and
the spread (worst - best) of each, and before/after. Exit status 1 if any output differs.
"""

from __future__ import annotations

import argparse
import sys
import time

import numba
import numpy as np

import pagesim
from pagesim.sources.workloads import ELEMENT

BASES = [1 << 30, 3 << 30, 5 << 30]


# ---------------------------------------------------------------- the generators as they were
def old_sequential(w, chunk):
    per = w.per_pass
    for start in range(0, w.n_accesses, chunk):
        idx = np.arange(start, min(start + chunk, w.n_accesses), dtype=np.uint64)
        yield np.uint64(BASES[0]) + (idx % np.uint64(per)) * np.uint64(w.stride)


def old_planes(w, chunk):
    per_plane = -(-w.plane // w.step)
    total = per_plane * w.planes
    for start in range(0, w.accesses, chunk):
        idx = np.arange(start, min(start + chunk, w.accesses), dtype=np.uint64) % np.uint64(total)
        k = idx % np.uint64(w.planes)
        j = idx // np.uint64(w.planes)
        yield np.uint64(BASES[0]) + k * np.uint64(w.plane) + j * np.uint64(w.step)


def old_triad(w, chunk):
    order = np.array([BASES[1], BASES[2], BASES[0]], dtype=np.uint64)
    for start in range(0, w.n_accesses, chunk):
        idx = np.arange(start, min(start + chunk, w.n_accesses), dtype=np.uint64)
        i = (idx // np.uint64(3)) % np.uint64(w.n)
        yield order[(idx % np.uint64(3)).astype(np.intp)] + i * np.uint64(ELEMENT)


@numba.njit(nogil=True, error_model="numpy")
def _old_gen_md(out, st, slot, c, apc, atom_bytes, base):
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


def old_md(w, chunk, seed=0):
    total_atoms = w.n_cells * w.atoms_per_cell
    rng = np.random.default_rng(seed)
    slot = np.arange(total_atoms, dtype=np.int64)
    moved = rng.random(total_atoms) < float(w.shuffle)
    idx = np.flatnonzero(moved)
    slot[idx] = slot[rng.permutation(idx)]
    state = np.zeros(4, dtype=np.int64)
    left = w.n_accesses
    while left:
        out = np.empty(min(chunk, left), dtype=np.int64)
        _old_gen_md(out, state, slot, w.cells_per_side, w.atoms_per_cell, w.atom_bytes, BASES[0])
        left -= out.shape[0]
        yield out.view(np.uint64)


@numba.njit(nogil=True, error_model="numpy")
def _old_gen_uniform_random(out, start, seed, slots, base, elem):
    key = _mix(np.uint64(seed))
    s = np.uint64(slots)
    for i in range(out.shape[0]):
        h = _mix(key ^ np.uint64(start + i))
        out[i] = base + np.int64(h % s) * elem


@numba.njit(nogil=True)
def _mix(x):
    x = x + np.uint64(0x9E3779B97F4A7C15)
    z = x
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def old_random(w, chunk, seed=0):
    slots = w.size // ELEMENT
    for start in range(0, w.accesses, chunk):
        out = np.empty(min(chunk, w.accesses - start), dtype=np.int64)
        _old_gen_uniform_random(out, start, seed, slots, BASES[0], ELEMENT)
        yield out.view(np.uint64)


def new(w, chunk):
    for a, _ in w.chunks(BASES, chunk, 0):
        yield a


def drain(gen) -> int:
    """Consume a generator as simulate does (one chunk alive at a time); a checksum so nothing is skipped."""
    s = 0
    for a in gen:
        s ^= int(a[-1])
    return s


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--accesses", type=int, default=10_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    n, chunk = args.accesses, 1 << 20
    cases = {
        "sequential (stride 8)": (pagesim.workload("sequential", size=n * 8), old_sequential),
        "strided (stride 4K)": (pagesim.workload("strided", size="1G", passes=max(1, n // (1 << 18))), old_sequential),
        "planes": (pagesim.workload("planes", planes=64, plane="1M", accesses=n), old_planes),
        "stream triad": (pagesim.workload("stream", n=n // 3), old_triad),
        "md (shuffled)": (pagesim.workload("md", atoms=max(27, n // 217), atoms_per_cell=1), old_md),
        "random over 1G (2**27 slots)": (pagesim.workload("random", working_set="1G", accesses=n), old_random),
    }
    ok = True
    print(f"address generation, {n:,} accesses a workload (chunks of {chunk:,}), best of {args.repeat} interleaved rounds")
    print(f"{'workload':<30} {'before ns/acc':>13} {'spread':>7} {'after ns/acc':>13} {'spread':>7} {'before/after':>13}")
    for name, (w, old) in cases.items():
        a = np.concatenate(list(old(w, 1 << 16))) if w.n_accesses <= 3_000_000 else None
        same = drain(old(w, chunk)) == drain(new(w, chunk))  # also compiles both
        if a is not None:
            same &= bool(np.array_equal(a, np.concatenate(list(new(w, 1 << 16)))))
        else:  # a prefix, compared element by element
            small = type(w)(**{**w.params(), **({"accesses": 2_000_000} if "accesses" in w.params() else {})})
            same &= bool(np.array_equal(np.concatenate(list(old(small, 1 << 16))), np.concatenate(list(new(small, 1 << 16)))))
        ok &= same
        tb, ta = [], []
        for _ in range(args.repeat):
            t = time.perf_counter()
            drain(old(w, chunk))
            tb.append(time.perf_counter() - t)
            t = time.perf_counter()
            drain(new(w, chunk))
            ta.append(time.perf_counter() - t)
        m = w.n_accesses
        b, af = min(tb) / m * 1e9, min(ta) / m * 1e9
        print(
            f"{name:<30} {b:>13.2f} {(max(tb) - min(tb)) / m * 1e9:>7.2f} {af:>13.2f} {(max(ta) - min(ta)) / m * 1e9:>7.2f} "
            f"{b / af:>12.1f}x  {'identical' if same else 'DIFFER'}"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
