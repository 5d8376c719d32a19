"""The timing model's cost: ns per access of simulate_timed() against plain simulate(), same inputs.

    python benchmarks/bench_timing.py [--exps 6 7] [--repeat 3] [--machine opteron-k8]

For each size (10**6, 10**7 accesses) and workload (uniform random over 1 GiB, sequential 8-byte
stride over n x 8 bytes) the two calls run interleaved, ``repeat`` times each, after a warm-up that loads
the compiled kernels; prints the best ns/access of each, the spread (worst/best) and the ratio of
the bests. Also the peak resident memory of the process after the largest run (chunks keep it flat).
"""

from __future__ import annotations

import argparse
import resource
import time

import pagesim
from pagesim.engine.timing import simulate_timed

WORKLOADS = ("random", "sequential")


def _accesses(name, n):
    if name == "random":
        return "random", dict(working_set="1G", accesses=n)
    return "sequential", dict(size=n * 8, stride=8)  # n accesses of an 8-byte stride, one pass


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--exps", type=int, nargs="+", default=[6, 7])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--machine", default="opteron-k8")
    args = ap.parse_args(argv)
    m = args.machine
    pagesim.simulate(m, "random", working_set="1G", accesses=1000)  # compile / load kernels
    simulate_timed(m, "random", working_set="1G", accesses=1000)
    print(f"machine {m}, 4 KiB pages, hierarchy {pagesim.engine.timing.hierarchy(m).name}; best of {args.repeat}, interleaved")
    print(f"{'workload':<11} {'accesses':>12} {'untimed ns/acc':>15} {'spread':>7} {'timed ns/acc':>13} {'spread':>7} {'timed/untimed':>14}")
    for e in args.exps:
        n = 10**e
        for name in WORKLOADS:
            wl, kw = _accesses(name, n)
            t0, t1 = [], []
            for _ in range(args.repeat):
                t = time.perf_counter()
                ds0 = pagesim.simulate(m, wl, **kw)
                t0.append(time.perf_counter() - t)
                t = time.perf_counter()
                ds1 = simulate_timed(m, wl, **kw)
                t1.append(time.perf_counter() - t)
            acc = int(ds0["accesses"].sum())
            assert acc == int(ds1["accesses"].sum())
            b0, b1 = min(t0) / acc * 1e9, min(t1) / acc * 1e9
            print(f"{name:<11} {acc:>12,} {b0:>15.1f} {max(t0) / min(t0):>7.2f} {b1:>13.1f} {max(t1) / min(t1):>7.2f} {b1 / b0:>14.2f}")
    print(f"peak RSS of this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
