"""Memory stays flat as the trace grows: peak resident memory of one simulate() call at 10**6,
10**8 and 10**9 accesses, each in a fresh process (so earlier runs do not raise the peak).

    python benchmarks/bench_memory.py [--max-exp 9] [--workload random]

Prints accesses, seconds, accesses per second and peak RSS; exit status 1 if the largest run's
peak exceeds the smallest's by more than 64 MiB (chunks are 2**20 accesses, 8 MiB each).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys

CHILD = r"""
import json, resource, sys, time
import pagesim
n, wl = int(sys.argv[1]), sys.argv[2]
pagesim.simulate("skylake", wl, working_set="1G", accesses=1000)  # load kernels before measuring
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.perf_counter()
ds = pagesim.simulate("skylake", wl, working_set="1G", accesses=n)
dt = time.perf_counter() - t
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"n": int(ds["accesses"].sum()), "seconds": dt, "peak_kib": peak, "before_kib": base}))
"""


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-exp", type=int, default=9, help="largest run is 10**MAX_EXP accesses (default 9)")
    ap.add_argument("--workload", default="random", help="random (GUPS over 1 GiB) or sequential")
    args = ap.parse_args(argv)
    rows = []
    for e in [6, 8, args.max_exp] if args.max_exp > 8 else [6, args.max_exp]:
        r = subprocess.run([sys.executable, "-c", CHILD, str(10**e), args.workload], capture_output=True, text=True, check=True)
        rows.append(json.loads(r.stdout.strip().splitlines()[-1]))
    print(f"skylake, {args.workload} over 1 GiB, 4 KiB pages; one fresh process per run")
    print(f"{'accesses':>14} {'seconds':>9} {'accesses/s':>12} {'peak RSS':>10} {'before run':>11}")
    for r in rows:
        print(f"{r['n']:>14,} {r['seconds']:>9.2f} {r['n'] / r['seconds'] / 1e6:>10.1f} M {r['peak_kib'] / 1024:>8.0f} MiB {r['before_kib'] / 1024:>9.0f} MiB")
    growth = (rows[-1]["peak_kib"] - rows[0]["peak_kib"]) / 1024
    print(f"peak growth from {rows[0]['n']:,} to {rows[-1]['n']:,} accesses: {growth:+.0f} MiB ({'flat' if growth <= 64 else 'NOT FLAT'})")
    return 0 if growth <= 64 else 1


if __name__ == "__main__":
    sys.exit(main())
