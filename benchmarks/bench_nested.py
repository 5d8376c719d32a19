"""A virtualised machine's run against the same machine's bare-metal run: the same addresses,
interleaved, in one process.

    python benchmarks/bench_nested.py [--n 4e6] [--repeat 5] [--machine skylake] [--chunk 1048576]

Traces over 1 GiB from 1 TiB: uniformly random (almost every access walks: the nested replay's
worst case), a hot/cold mix (90% of accesses in 16 MiB) and a sequential sweep in 64-byte steps
(one walk every 64 accesses). For each, the machine bare metal,
virtualised on 4K host pages, on 2M host pages with a 32-entry nested TLB, on 4K host pages
with the lower half of the range on 2M ones (host regions), on 4K host pages with
``specialize=False`` (the generic translation kernel and nested replay, which read the
structures' geometry at run time), and on 4K host pages with the replay on the calling thread
(not pipelined beside the translation of the next chunk, as it is by default with two usable
cores); then, to split the time, on 4K host pages with the walk log written and the replay skipped
(its counts are not a virtualised run's: a timing split only). Wall-clock and CPU (every thread's)
ns per access, best and median of the repeats, and each against bare metal's; then, for host 4K
pages pipelined and not, the replay's own wall-clock time a walk (each chunk's replay timed where it
runs: the worker thread beside the translation, or the calling thread), median and range of the
repeats.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import pagesim
from pagesim import Layout, Region
from pagesim.engine import nested as NE


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=float, default=4e6)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--machine", default="skylake")
    ap.add_argument("--chunk", type=int, default=1 << 20, help="simulate's chunk_size (its default)")
    a = ap.parse_args(argv)
    n = int(a.n)
    rng = np.random.default_rng(0)
    start = np.uint64(1 << 40)
    uniform = start + (rng.integers(0, 1 << 30, n).astype(np.uint64) & ~np.uint64(7))
    hot = rng.random(n) < 0.9
    mixed = np.where(hot, start + (rng.integers(0, 16 << 20, n).astype(np.uint64) & ~np.uint64(7)), uniform)
    sweep = start + (np.arange(n, dtype=np.uint64) * np.uint64(64)) % np.uint64(1 << 30)
    lay = Layout((Region(1 << 40, 1 << 29, 4096, "low"), Region((1 << 40) + (1 << 29), 1 << 29, 4096, "high")))
    base = pagesim.machine(a.machine)
    half = {(1 << 40, (1 << 40) + (1 << 29)): "2M"}  # a layout region of its own, below
    machines = {
        "bare metal": base,
        "host 4K pages": base.virtualised("4K"),
        "host 2M pages, nested TLB 32": base.virtualised("2M", nested_tlb=32),
        "host 4K, half on 2M": base.virtualised("4K", host_regions=half),
        "host 4K, specialize=False": base.virtualised("4K"),
        "host 4K, replay not pipelined": base.virtualised("4K"),
    }
    generic = {"host 4K, specialize=False"}  # the generic translation kernel and nested replay
    log_only = "host 4K, log only (no replay)"
    machines[log_only] = base.virtualised("4K")
    replay, pipelined = NE.NestedStage._replay, NE.pipelined

    def skip(stage, wlog, nlog, kinds):  # the log written by the translation kernel, then dropped
        pass

    spent = [0.0, 0]  # the replay's seconds and walks in the current run

    def timed(stage, wlog, nlog, kinds):
        t = time.perf_counter()
        replay(stage, wlog, nlog, kinds)
        spent[0] += time.perf_counter() - t
        spent[1] += nlog // 3

    def run(k, m, addrs):
        NE.NestedStage._replay = skip if k == log_only else timed
        spent[:] = [0.0, 0]
        if k in (log_only, "host 4K, replay not pipelined"):
            NE.pipelined = lambda chunk_size, n: False
        try:
            pagesim.simulate(m, addresses=addrs, layout=lay, specialize="auto" if k not in generic else False, chunk_size=a.chunk)
        finally:
            NE.NestedStage._replay, NE.pipelined = replay, pipelined

    print(
        f"{a.machine}, {n:,} accesses over 1 GiB, 4 KiB guest pages, chunks of {a.chunk:,}, {NE.usable_cores()} usable cores; "
        f"ns/access, wall-clock and CPU, best (median) of {a.repeat} interleaved"
    )
    for trace, addrs in (("random", uniform), ("90% in 16 MiB", mixed), ("sequential", sweep)):
        for k, m in machines.items():  # compile or load, untimed
            run(k, m, addrs)
        wall = {k: [] for k in machines}
        cpu = {k: [] for k in machines}
        per_walk = {k: [] for k in machines}
        for _ in range(a.repeat):
            for k, m in machines.items():
                c, w = time.process_time(), time.perf_counter()
                run(k, m, addrs)
                wall[k].append((time.perf_counter() - w) / n * 1e9)
                cpu[k].append((time.process_time() - c) / n * 1e9)
                if spent[1]:
                    per_walk[k].append(spent[0] / spent[1] * 1e9)
        bw, bc = min(wall["bare metal"]), min(cpu["bare metal"])
        for k in machines:
            w, c = wall[k], cpu[k]
            print(
                f"  {trace:<14} {k:<30} wall {min(w):6.1f} ({statistics.median(w):6.1f}) x{min(w) / bw:5.2f}"
                f"   CPU {min(c):6.1f} ({statistics.median(c):6.1f}) x{min(c) / bc:5.2f}"
            )
        for k in ("host 4K pages", "host 4K, replay not pipelined"):
            v = per_walk[k]
            print(f"  {trace:<14} {k:<30} the replay alone: {statistics.median(v):6.1f} ns a walk ({min(v):.1f}-{max(v):.1f})")


if __name__ == "__main__":
    main()
