"""pagesim against pycachesim on the same addresses and the same TLB configuration, in one process.

Configuration (issue 2): L1 64 entries 4-way + L2 1536 entries 12-way, LRU, one page size (4 KiB),
no page-walk caches; pycachesim models each TLB as a cache whose line is a page, fed Python lists
(its fastest input). Both get the same 10 million addresses; miss counts must be identical.

Prints accesses per second for each tool and the ratio, for a uniformly random trace over 1 GiB
and a sequential 8-byte-stride trace. The bar: random >= 3x, sequential >= 4x. Exit status 1 if a
miss count differs or a ratio is below its bar.

    python benchmarks/bench_pycachesim.py [--n 10000000] [--repeat 3]
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import pagesim
from pagesim import Layout, Machine, Region, Structure, Walker

PAGE = 4096
BASE = 1 << 40
BARS = {"random": 3.0, "sequential": 4.0}


def tlb_machine() -> Machine:
    return Machine(
        name="bench-2level",
        title="L1 64x4 + L2 1536x12, LRU, 4 KiB, no page-walk caches",
        page_sizes=(PAGE,),
        base_page=PAGE,
        structures=(
            Structure("L1", 1, "data", 64, 4, (PAGE,)),
            Structure("L2", 2, "data", 1536, 12, (PAGE,)),
        ),
        walker=Walker("radix", level_bits=(9, 9, 9, 9), base_shift=12),
    )


def traces(n: int):
    rng = np.random.default_rng(2024)
    rand = (BASE + (rng.integers(0, (1 << 30) // 8, n, dtype=np.int64) * 8)).astype(np.uint64)
    seq = (BASE + np.arange(n, dtype=np.uint64) * np.uint64(8)).astype(np.uint64)
    return {"random": rand, "sequential": seq}


def run_pycachesim(addrs_list):
    from cachesim import Cache, CacheSimulator, MainMemory

    mem = MainMemory()
    l2 = Cache("L2", 1536 // 12, 12, PAGE, "LRU")
    l1 = Cache("L1", 64 // 4, 4, PAGE, "LRU", store_to=l2, load_from=l2)
    mem.load_to(l2)
    mem.store_from(l2)
    cs = CacheSimulator(l1, mem)
    t = time.perf_counter()
    cs.load(addrs_list, length=8)
    dt = time.perf_counter() - t
    return dt, int(l1.MISS_count), int(l2.MISS_count)


def run_pagesim(m, layout, addrs):
    t = time.perf_counter()
    ds = pagesim.simulate(m, addresses=addrs, layout=layout, chunk_size=1 << 20)
    dt = time.perf_counter() - t
    return dt, int(ds["misses"].sel(structure="L1").sum()), int(ds["misses"].sel(structure="L2").sum())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000_000, help="addresses per trace (default 10 million)")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per tool; the best is reported")
    args = ap.parse_args(argv)
    m = tlb_machine()
    layout = Layout((Region(BASE, 1 << 30 if args.n * 8 <= 1 << 30 else -(-args.n * 8 // PAGE) * PAGE, PAGE, "table"),))
    ok = True
    # warm numba (compilation or cache load) outside the timing
    pagesim.simulate(m, addresses=np.array([BASE], dtype=np.uint64), layout=layout)
    print(f"pagesim {pagesim.__version__} vs pycachesim 0.3.1, {args.n:,} addresses per trace, best of {args.repeat}")
    print(f"{'trace':<11} {'tool':<11} {'accesses/s':>14} {'L1 misses':>12} {'L2 misses':>12}")
    for name, addrs in traces(args.n).items():
        lst = addrs.tolist()
        pc = min((run_pycachesim(lst) for _ in range(args.repeat)), key=lambda r: r[0])
        ps = min((run_pagesim(m, layout, addrs) for _ in range(args.repeat)), key=lambda r: r[0])
        for tool, r in (("pycachesim", pc), ("pagesim", ps)):
            print(f"{name:<11} {tool:<11} {args.n / r[0] / 1e6:>12.1f} M {r[1]:>12,} {r[2]:>12,}")
        same = pc[1:] == ps[1:]
        ratio = pc[0] / ps[0]
        verdict = "ok" if same and ratio >= BARS[name] else "BELOW BAR" if same else "MISS COUNTS DIFFER"
        print(f"{name:<11} ratio pagesim/pycachesim = {ratio:.2f}x (bar {BARS[name]:.0f}x), miss counts {'identical' if same else 'DIFFERENT'}: {verdict}")
        ok &= same and ratio >= BARS[name]
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
