"""A 200-point sweep run serially, in two threads (``workers=2``) and on a two-worker Dask
LocalCluster (two processes of one thread each), in one run, with the three results checked
identical (xarray.testing.assert_identical) before any time is printed.

    python benchmarks/bench_sweep.py [--accesses 1000000] [--repeat 3]

The points: 5 machines x 4 workloads x 10 seeds, ``--accesses`` each. The three ways are timed in
turn, ``--repeat`` rounds (interleaved, so a busy moment of a shared machine does not fall on one
way only); the table shows the best round of each, the spread over rounds and the ratio of best
times against serial. Kernels are compiled and the cluster's workers warmed before timing.
Exit status 1 if the results differ.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import xarray as xr

import pagesim

MACHINES = ["skylake", "zen4", "power6", "opteron-k8", "neoverse-n1"]
WORKLOADS = ["random", "pointer_chase", "hot_cold", "stream"]


def axes(accesses: int, seeds: int) -> tuple[dict, dict]:
    ws = [
        pagesim.workload(w, working_set="256M", accesses=accesses) if w != "stream" else pagesim.workload("stream", n=max(1, accesses // 3)) for w in WORKLOADS
    ]
    return {"machine": MACHINES, "workload": ws, "seed": list(range(seeds))}, dict(progress=False)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--accesses", type=int, default=1_000_000, help="accesses per point")
    ap.add_argument("--seeds", type=int, default=10, help="seeds per machine and workload (10: 200 points)")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    from distributed import Client, LocalCluster

    ax, fixed = axes(args.accesses, args.seeds)
    npoints = len(MACHINES) * len(WORKLOADS) * args.seeds
    print(
        f"sweep of {npoints} points ({len(MACHINES)} machines x {len(WORKLOADS)} workloads x {args.seeds} seeds), "
        f"{args.accesses:,} accesses each; {os.cpu_count()} cores; best of {args.repeat} interleaved rounds"
    )
    warm_ax, _ = axes(2000, 1)
    pagesim.sweep(warm_ax, **fixed)  # compile and load every kernel the points use
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, Client(cluster) as client:
        pagesim.sweep(warm_ax, client=client, **fixed)  # each worker process loads its kernels
        ways = {
            "serial": lambda: pagesim.sweep(ax, **fixed),
            "threads, workers=2": lambda: pagesim.sweep(ax, workers=2, **fixed),
            "LocalCluster, 2 workers": lambda: pagesim.sweep(ax, client=client, **fixed),
        }
        times = {k: [] for k in ways}
        results = {}
        for _ in range(args.repeat):
            for k, fn in ways.items():
                t = time.perf_counter()
                results[k] = fn()
                times[k].append(time.perf_counter() - t)
    ok = True
    for k in ways:
        try:
            xr.testing.assert_identical(results[k], results["serial"])
        except AssertionError as e:
            ok = False
            print(f"{k}: result DIFFERS from serial: {str(e)[:300]}")
    if ok:
        print("results identical (assert_identical) to the serial sweep: threads and LocalCluster")
    best_serial = min(times["serial"])
    print(f"{'how':<26} {'best s':>8} {'spread s':>10} {'points/s':>9} {'vs serial':>10}")
    for k, ts in times.items():
        b = min(ts)
        print(f"{k:<26} {b:>8.2f} {max(ts) - b:>10.2f} {npoints / b:>9.1f} {best_serial / b:>9.2f}x")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
