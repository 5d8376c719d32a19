"""Where a virtualised run's time goes on a walk-heavy trace: the same machine and addresses with
the host's page-walk caches left out, each alone, and all of them, interleaved in one process.

    python benchmarks/bench_nested_parts.py [--n 1e6] [--repeat 5] [--machine skylake]

Uniformly random accesses over 1 GiB from 1 TiB (almost every access walks), 4 KiB guest pages
on 4 KiB host pages. The guest's walker and caches are the same in every run, so the translation
kernel and its walk log are the same; only the host side differs: no page-walk caches (the
replay computes each guest-physical address and counts the host's references, and looks nothing
up), one of the machine's caches alone, or all of them (the virtualised preset). CPU ns per
access, best and median of the repeats; each host's extra time over the host without caches, per
guest walk. The replay runs on the calling thread (not pipelined beside the translation), so the
CPU times add up as the parts do. The hosts without all their caches are not the machine: a timing
split only.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import pagesim
from pagesim import Layout, Region, Walker
from pagesim.engine import nested as NE


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=float, default=1e6)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--machine", default="skylake")
    a = ap.parse_args(argv)
    n = int(a.n)
    NE.pipelined = lambda chunk_size, n_accesses: False  # every replay on the calling thread
    rng = np.random.default_rng(0)
    addrs = np.uint64(1 << 40) + (rng.integers(0, 1 << 30, n).astype(np.uint64) & ~np.uint64(7))
    lay = Layout((Region(1 << 40, 1 << 30, 4096, "heap"),))
    base = pagesim.machine(a.machine)
    full = base.virtualised("4K")
    hw = full.host.walker

    def host(pwc):
        return base.virtualised("4K", host_walker=Walker("radix", level_bits=hw.level_bits, base_shift=hw.base_shift, pwc=tuple(pwc)))

    machines = {"bare metal": base, "host without page-walk caches": host(())}
    for p in hw.pwc:
        machines[f"host with its {p.name} alone"] = host([p])
    machines["host with all its caches (the preset)"] = full
    walks = {}
    for k, m in machines.items():  # compile or load, untimed; the guest walks each run replays
        walks[k] = int(pagesim.simulate(m, addresses=addrs, layout=lay)["walks"].sum())
    t = {k: [] for k in machines}
    for _ in range(a.repeat):
        for k, m in machines.items():
            c = time.process_time()
            pagesim.simulate(m, addresses=addrs, layout=lay)
            t[k].append((time.process_time() - c) / n * 1e9)
    bare, none = min(t["bare metal"]), min(t["host without page-walk caches"])
    w = walks["host without page-walk caches"]
    print(f"{a.machine}, {n:,} random accesses over 1 GiB, {w:,} guest walks; CPU ns/access, best (median) of {a.repeat} interleaved")
    for k, v in t.items():
        extra = "" if k == "bare metal" else f"   +{(min(v) - none) * n / w:5.1f} ns a walk over the host without caches"
        print(f"  {k:<40} {min(v):7.1f} ({statistics.median(v):7.1f})   x{min(v) / bare:5.2f} bare metal{extra}")


if __name__ == "__main__":
    main()
