"""Memory stays flat as the trace grows: peak resident memory of one simulate() call at 10**6,
10**8 and 10**9 accesses, each in a fresh process (so earlier runs do not raise the peak).

    python benchmarks/bench_memory.py [--max-exp 9] [--workload random] [--addresses]

Prints accesses, seconds, accesses per second and the peak RSS of the run (VmHWM, reset as the run
starts, where Linux allows); exit status 1 if the largest run's peak exceeds the smallest's by more
than 64 MiB (chunks are 2**20 accesses, 8 MiB each).
With ``--addresses`` the trace is a uint64 address array given as ``simulate(m, addresses=a)``
without a layout (laid out by pagesim), and the peak counted is what simulate adds on top of the
array itself (RSS peak minus RSS once the array is made). The sequential workload runs whole
passes over its array, so its array is min(1 GiB, 8 bytes x accesses) for a run to have the
accesses asked for (over 1 GiB, 10**6 would be one pass of 134M). Both kernels (generic and
specialised) are loaded before the measured run, so compiling or loading them is not counted.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

PRELUDE = r"""
import json, resource, sys, time


def status(key):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(key + ":"))


def reset_peak():
    # the peak (VmHWM) starts afresh at the resident size now (Linux >= 4.0), so that what came
    # before the run (loading kernels, making the array and its temporaries) is not counted
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def peak_since(was_reset):
    return status("VmHWM") if was_reset else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
"""

CHILD = (
    PRELUDE
    + r"""
import pagesim
n, wl = int(sys.argv[1]), sys.argv[2]
ws = min(1 << 30, 8 * n) if wl == "sequential" else 1 << 30  # sequential runs whole passes: n accesses need at most 8n bytes
for spec in (False, True):  # load (or compile) the generic and the specialised kernel before measuring
    pagesim.simulate("skylake", wl, working_set="64K", accesses=1000, specialize=spec)
base = status("VmRSS")
was_reset = reset_peak()
t = time.perf_counter()
ds = pagesim.simulate("skylake", wl, working_set=ws, accesses=n)
dt = time.perf_counter() - t
peak = peak_since(was_reset)
print(json.dumps({"n": int(ds["accesses"].sum()), "seconds": dt, "peak_kib": peak, "before_kib": base, "ws": ws, "reset": was_reset}))
"""
)

CHILD_ADDRESSES = (
    PRELUDE
    + r"""
import numpy as np
import pagesim
n, wl = int(sys.argv[1]), sys.argv[2]
for spec in (False, True):  # load (or compile) the generic and the specialised kernel before measuring
    pagesim.simulate("skylake", addresses=np.arange(1000, dtype=np.uint64) * np.uint64(4096) + np.uint64(1 << 40), specialize=spec)
a = np.empty(n, dtype=np.uint64)
rng = np.random.default_rng(1)
for s in range(0, n, 1 << 22):  # made in pieces: no temporary as large as the array
    m = min(n, s + (1 << 22)) - s
    if wl == "sequential":
        a[s : s + m] = (np.uint64(1 << 40) + (np.arange(s, s + m, dtype=np.uint64) * np.uint64(8)) % np.uint64(1 << 30))
    else:
        a[s : s + m] = np.uint64(1 << 40) + rng.integers(0, (1 << 30) // 8, m, dtype=np.uint64) * np.uint64(8)
base = status("VmRSS")  # resident now, the array included
was_reset = reset_peak()  # else the peak counted includes the pieces' temporaries (up to ~64 MiB)
t = time.perf_counter()
ds = pagesim.simulate("skylake", addresses=a)
dt = time.perf_counter() - t
peak = peak_since(was_reset)
print(json.dumps({"n": int(ds["accesses"].sum()), "seconds": dt, "peak_kib": peak - base, "before_kib": base, "ws": 1 << 30, "reset": was_reset}))
"""
)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-exp", type=int, default=9, help="largest run is 10**MAX_EXP accesses (default 9)")
    ap.add_argument("--workload", default="random", help="random (GUPS over 1 GiB) or sequential")
    ap.add_argument("--addresses", action="store_true", help="an address array without a layout (peak above the array)")
    args = ap.parse_args(argv)
    rows = []
    for e in [6, 8, args.max_exp] if args.max_exp > 8 else [6, args.max_exp]:
        r = subprocess.run(
            [sys.executable, "-c", CHILD_ADDRESSES if args.addresses else CHILD, str(10**e), args.workload], capture_output=True, text=True, check=True
        )
        rows.append(json.loads(r.stdout.strip().splitlines()[-1]))
    what = "address array (uint64), no layout" if args.addresses else "generated"
    over = "over min(1 GiB, 8 bytes x accesses) (whole passes)" if args.workload == "sequential" and not args.addresses else "over 1 GiB"
    print(f"skylake, {args.workload} {over}, 4 KiB pages, {what}; one fresh process per run, kernels loaded before the run")
    peak = "peak above array" if args.addresses else "peak RSS"
    print(f"{'accesses':>14} {'working set':>12} {'seconds':>9} {'accesses/s':>12} {peak:>16} {'before run':>11}")
    for r in rows:
        print(
            f"{r['n']:>14,} {r['ws'] / 2**20:>8.0f} MiB {r['seconds']:>9.2f} {r['n'] / r['seconds'] / 1e6:>10.1f} M "
            f"{r['peak_kib'] / 1024:>14.0f} MiB {r['before_kib'] / 1024:>9.0f} MiB"
        )
    if not all(r.get("reset") for r in rows):
        print("(the peak could not be reset before the run: it includes what came before, e.g. the kernels' loading or the array's making)")
    growth = (rows[-1]["peak_kib"] - rows[0]["peak_kib"]) / 1024
    print(f"peak growth from {rows[0]['n']:,} to {rows[-1]['n']:,} accesses: {growth:+.0f} MiB ({'flat' if growth <= 64 else 'NOT FLAT'})")
    return 0 if growth <= 64 else 1


if __name__ == "__main__":
    sys.exit(main())
