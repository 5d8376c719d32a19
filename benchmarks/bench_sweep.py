"""A 200-point sweep run serially, in two threads (``workers=2``) and on a two-worker Dask
LocalCluster (two processes of one thread each), in one run, with the three results checked
identical (xarray.testing.assert_identical) before any time is printed.

    python benchmarks/bench_sweep.py [--accesses 1000000] [--repeat 3]

The points: 5 machines x 4 workloads x 10 seeds, ``--accesses`` each. The ways are timed in turn,
``--repeat`` rounds (interleaved, so a busy moment of a shared machine does not fall on one way
only); the table shows the best round of each, the spread over rounds and the ratio of best times
against serial. Kernels are compiled and the cluster's workers warmed before timing.
Exit status 1 if the results differ, or if a kernel a point calls does not release the GIL.

Serial and threads are timed first, with no cluster running; then the LocalCluster's rounds,
interleaved with serial rounds timed beside it, and its ratio is against those. An idle
LocalCluster is not idle: its scheduler and client event loop in this process and its two worker
processes took 0.13 of a core together (0.05 + 0.04 + 0.05, heartbeats and monitors), which a
serial sweep leaves to the spare core but two threads using both cores pay for, along with the
event loop taking the GIL.

Beside the ratios, measured on a shared machine and so noisy, it prints a load-independent figure:
the share of a serial sweep's CPU time (this thread's, time.thread_time) spent holding the GIL,
i.e. outside the nogil numba kernels (workload setup, layout, kernel inputs, Dataset and costs,
the final concatenation), and the workers=2 speed-up that share allows: 2/(1+f) if GIL-held work
never overlaps the other thread's kernels (Amdahl), min(2, 1/f) if it always does. Each kernel
call from Python is timed by wrapping numba's dispatcher (its argument unboxing, done with the
GIL held, counts as kernel time: tens of microseconds a call, against milliseconds of kernel).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import xarray as xr

import pagesim

SERIAL_BESIDE = "serial, beside the LocalCluster"
MACHINES = ["skylake", "zen4", "power6", "opteron-k8", "neoverse-n1"]
WORKLOADS = ["random", "pointer_chase", "hot_cold", "stream"]


def axes(accesses: int, seeds: int) -> tuple[dict, dict]:
    ws = [
        pagesim.workload(w, working_set="256M", accesses=accesses) if w != "stream" else pagesim.workload("stream", n=max(1, accesses // 3)) for w in WORKLOADS
    ]
    return {"machine": MACHINES, "workload": ws, "seed": list(range(seeds))}, dict(progress=False)


def gil_profile(ax: dict, fixed: dict) -> dict:
    """One serial sweep with every numba kernel call from Python timed (thread CPU time), and the
    final concatenation timed: where the GIL is held. Also checks that every dispatcher called
    was compiled nogil (names of those that were not in ``not_nogil``)."""
    from numba.core.registry import CPUDispatcher

    sweep_mod = sys.modules["pagesim.engine.sweep"]
    base_call = CPUDispatcher.__call__  # numba's own call (the C dispatcher's, inherited)
    kern = {"t": 0.0, "calls": 0, "names": {}}

    def timed_call(self, *a, **k):
        t = time.thread_time()
        try:
            return base_call(self, *a, **k)
        finally:
            kern["t"] += time.thread_time() - t
            kern["calls"] += 1
            kern["names"][self.py_func.__qualname__] = bool(self.targetoptions.get("nogil"))

    concat = {"t": 0.0}
    orig_concat = sweep_mod.concat_runs

    def timed_concat(*a, **k):
        t = time.thread_time()
        try:
            return orig_concat(*a, **k)
        finally:
            concat["t"] += time.thread_time() - t

    if "__call__" in vars(CPUDispatcher):
        raise RuntimeError("numba's CPUDispatcher defines __call__ itself: this timing wrapper would not be exact")
    CPUDispatcher.__call__ = timed_call
    sweep_mod.concat_runs = timed_concat
    try:
        t = time.thread_time()
        pagesim.sweep(ax, **fixed)
        total = time.thread_time() - t
    finally:
        sweep_mod.concat_runs = orig_concat
        del CPUDispatcher.__call__
    return {
        "total": total,
        "kernels": kern["t"],
        "calls": kern["calls"],
        "concat": concat["t"],
        "called": sorted(kern["names"]),
        "not_nogil": sorted(k for k, v in kern["names"].items() if not v),
    }


def print_gil(g: dict, npoints: int) -> float:
    held = g["total"] - g["kernels"]
    f = held / g["total"]
    print(f"GIL held in a serial sweep (this thread's CPU time, so load-independent): f = {100 * f:.1f}% of {g['total']:.2f} s")
    print(
        f"  inside nogil kernels: {g['kernels']:.2f} s ({g['calls']} calls, {1000 * g['kernels'] / npoints:.1f} ms a point); "
        f"GIL held: {1000 * (held - g['concat']) / npoints:.2f} ms a point + {g['concat']:.2f} s final concat"
    )
    print(
        f"  workers=2 speed-up this allows: {2 / (1 + f):.2f}x if GIL-held work never overlaps a kernel (Amdahl 2/(1+f)), "
        f"{min(2.0, 1 / f):.2f}x at best (min(2, 1/f))"
    )
    if g["not_nogil"]:
        print(f"  kernels called WITHOUT nogil (they hold the GIL): {', '.join(g['not_nogil'])}")
    else:
        print(f"  every kernel a point calls releases the GIL (nogil): {', '.join(g['called'])}")
    return f


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
    gil = gil_profile(ax, fixed)
    times: dict = {}
    cpu: dict = {}  # this process's CPU seconds (a LocalCluster's run in its workers: not counted)
    results = {}

    def rounds(ways: dict) -> None:
        for _ in range(args.repeat):
            for k, fn in ways.items():
                c, t = time.process_time(), time.perf_counter()
                results[k] = fn()
                times.setdefault(k, []).append(time.perf_counter() - t)
                cpu.setdefault(k, []).append(time.process_time() - c)

    rounds({"serial": lambda: pagesim.sweep(ax, **fixed), "threads, workers=2": lambda: pagesim.sweep(ax, workers=2, **fixed)})
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, Client(cluster) as client:
        pagesim.sweep(warm_ax, client=client, **fixed)  # each worker process loads its kernels
        rounds({SERIAL_BESIDE: lambda: pagesim.sweep(ax, **fixed), "LocalCluster, 2 workers": lambda: pagesim.sweep(ax, client=client, **fixed)})
    ways = list(times)
    ok = True
    for k in ways:
        try:
            xr.testing.assert_identical(results[k], results["serial"])
        except AssertionError as e:
            ok = False
            print(f"{k}: result DIFFERS from serial: {str(e)[:300]}")
    if ok:
        print("results identical (assert_identical) to the serial sweep: threads, LocalCluster and serial beside it")
    f = print_gil(gil, npoints)
    ok = ok and not gil["not_nogil"]
    print(f"{'how':<34} {'best s':>8} {'spread s':>10} {'points/s':>9} {'vs serial':>10} {'CPU s':>8} {'cores used':>11}")
    for k, ts in times.items():
        b = min(ts)
        i = ts.index(b)
        best_serial = min(times[SERIAL_BESIDE if k.startswith("LocalCluster") else "serial"])
        c = f"{cpu[k][i]:>8.2f} {cpu[k][i] / b:>11.2f}" if not k.startswith("LocalCluster") else f"{'-':>8} {'-':>11}"
        print(f"{k:<34} {b:>8.2f} {max(ts) - b:>10.2f} {npoints / b:>9.1f} {best_serial / b:>9.2f}x {c}")
    print(f"{'bound from GIL share f':<34} {'':>8} {'':>10} {'':>9} {2 / (1 + f):>6.2f}-{min(2.0, 1 / f):.2f}x (2/(1+f) .. min(2, 1/f))")
    print("(LocalCluster's ratio is against the serial rounds timed beside it; the others' against serial with no cluster running)")
    used = [c / t for c, t in zip(cpu["serial"], times["serial"])]
    cpu_ratio = min(cpu["threads, workers=2"]) / min(cpu["serial"])
    print(
        f"CPU seconds, workers=2 vs serial: {cpu_ratio:.2f}x (above 1: the threads slow each other, e.g. sharing caches); "
        f"bound with it: {min(2.0, 2 / (1 + f) / cpu_ratio):.2f}x"
    )
    if max(used) < 0.9:
        print(
            f"the serial sweep got at most {max(used):.2f} of a core: the machine is busy with other work, so the wall-clock "
            "ratios above say more about the load than about sweep()"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
