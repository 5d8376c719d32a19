"""What the generic kernel's rounded key costs: each machine run on the generic kernel of its exact
features (walker, fault-around, walk log, chain depth, SLB, page-walk caches) and on the one
``specialize.generic_key`` rounds them to (the depth up to 2 or 4), interleaved, in one process.

    python benchmarks/bench_generic_key.py [--n 2e6] [--rounds 9]

Also the rounding not taken: the SLB lookup and the page-walk caches written for every machine
(``every feature``). Prints ns of CPU time per access, best and median over the rounds, and each
best against the exact key's. Machines: a one-structure radix machine
without page-walk caches (its depth of 1 rounds to 2), Skylake (depth 2: the same kernel both ways,
the noise floor) and POWER6 (depth 1, an SLB).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import pagesim
from pagesim import Layout, Machine, Structure, Walker
from pagesim._kernels import specialize as S

ROUNDED = S.generic_key  # the package's own key (the benchmark swaps S.generic_key while it runs)


def exact(key: tuple) -> tuple:
    """The key as the features are, unrounded."""
    return (int(key[0]), bool(key[1]), bool(key[2]), max(1, int(key[3])), bool(key[4]), bool(key[5]))


def every_feature(key: tuple) -> tuple:
    """The rounding not taken: the depth rounded, and the SLB lookup and the page-walk caches written
    for every machine (32 kernels in all)."""
    r = ROUNDED(key)
    return (r[0], r[1], r[2], r[3], True, r[0] == 0)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=float, default=2e6)
    ap.add_argument("--rounds", type=int, default=9)
    a = ap.parse_args(argv)
    rounded = ROUNDED
    machines = {
        "radix, 1 structure, no page-walk cache": Machine(
            "one-tlb", "one TLB", (4096,), 4096, (Structure("L1", 1, "data", 64, 4, (4096,)),), Walker("radix", level_bits=(9, 9, 9, 9))
        ),
        "skylake": pagesim.machine("skylake"),
        "power6": pagesim.machine("power6"),
    }
    rng = np.random.default_rng(0)
    addrs = np.uint64(1 << 40) + (rng.integers(0, 1 << 30, int(a.n)).astype(np.uint64) & ~np.uint64(7))
    lay = Layout.single(1 << 30, 4096, start=1 << 40)

    def run(m, key_fn, n=None):
        S.generic_key = key_fn
        S._by_key.clear()  # choose the kernel again for this key function
        t = time.process_time()
        pagesim.simulate(m, addresses=addrs[:n] if n else addrs, layout=lay, specialize=False)
        return time.process_time() - t

    try:
        for name, m in machines.items():
            keys = (("exact", exact), ("rounded", rounded), ("every feature", every_feature))
            for _, fn in keys:
                run(m, fn, 1000)  # compile or load
            t = {k: [] for k, _ in keys}
            for _ in range(a.rounds):
                for k, fn in keys:
                    run(m, fn, 1000)
                    t[k].append(run(m, fn) / len(addrs) * 1e9)
            best = {k: min(v) for k, v in t.items()}
            med = {k: statistics.median(v) for k, v in t.items()}
            cols = "   ".join(f"{k} {best[k]:6.2f} ({med[k]:6.2f}, x{best[k] / best['exact']:.3f})" for k, _ in keys)
            print(f"{name:<40} ns/access best (median, best/exact best): {cols}", flush=True)
    finally:
        S.generic_key = rounded
        S._by_key.clear()


if __name__ == "__main__":
    main()
