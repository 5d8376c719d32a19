"""The nested replay alone, on one thread: a virtualised run's walk logs captured once, then
replayed again and again through fresh host caches, each replay timed.

    python benchmarks/bench_nested_replay.py [--n 4e6] [--repeat 12] [--machine skylake]

Uniformly random accesses over 1 GiB from 1 TiB (almost every access walks), 4 KiB guest pages on
4 KiB host pages, chunks of 1,048,576 accesses, the replay on the calling thread. The logs are
captured from one ``simulate`` call; each repeat makes a new ``NestedStage`` (the replay the run
used: specialised, as at this length) and replays every captured log through it in order. Printed:
each replay's wall-clock ns a walk in the order they ran (one chunk's log, about a million walks),
then each repeat's whole time a walk, best and median. Every repeat's counters are checked equal to
the captured run's (the same replay of the same logs: a consistency check, not evidence of the
model). Shows how steady the replay's own time is on a machine, apart from the translation and
from a second thread.
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
    ap.add_argument("--repeat", type=int, default=12)
    ap.add_argument("--machine", default="skylake")
    a = ap.parse_args(argv)
    n = int(a.n)
    rng = np.random.default_rng(0)
    addrs = np.uint64(1 << 40) + (rng.integers(0, 1 << 30, n).astype(np.uint64) & ~np.uint64(7))
    lay = Layout((Region(1 << 40, 1 << 30, 4096, "heap"),))
    m = pagesim.machine(a.machine).virtualised("4K")

    logs, stages = [], []
    replay, pipelined = NE.NestedStage._replay, NE.pipelined

    def capture(stage, wlog, nlog, kinds):
        logs.append((wlog[:nlog].copy(), kinds.copy()))
        stages.append(stage)
        replay(stage, wlog, nlog, kinds)

    NE.NestedStage._replay, NE.pipelined = capture, lambda chunk_size, n_accesses: False
    try:
        pagesim.simulate(m, addresses=addrs, layout=lay)
    finally:
        NE.NestedStage._replay, NE.pipelined = replay, pipelined
    want = stages[0].counts
    walks = sum(len(w) for w, _ in logs) // 3

    print(f"{a.machine}, {n:,} random accesses over 1 GiB, {walks:,} walks in {len(logs)} logs; the replay on one thread, ns a walk")
    totals = []
    for r in range(a.repeat):
        stage = NE.NestedStage(m, "auto", n)
        each = []
        for wlog, kinds in logs:
            t = time.perf_counter()
            stage._replay(wlog, len(wlog), kinds)
            each.append((time.perf_counter() - t) / (len(wlog) // 3) * 1e9)
        for got, exp in zip(stage.counts, want):
            if not np.array_equal(got, exp):
                raise RuntimeError("internal error: a replay of the same logs counted differently")
        totals.append(sum(e * (len(w) // 3) for e, (w, _) in zip(each, logs)) / walks)
        print(f"  repeat {r + 1:2d}: each log {' '.join(f'{e:5.1f}' for e in each)}; all {totals[-1]:5.1f}")
    print(f"  best {min(totals):.1f}, median {statistics.median(totals):.1f}, worst {max(totals):.1f} ns a walk")


if __name__ == "__main__":
    main()
