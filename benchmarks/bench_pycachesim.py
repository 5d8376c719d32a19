"""pagesim against pycachesim on the same addresses and the same TLB configuration, in one process.

Configuration: L1 64 entries 4-way + L2 1536 entries 12-way, LRU, one page size (4 KiB),
no page-walk caches; pycachesim models each TLB as a cache whose line is a page, fed Python lists
(its fastest input) of 2**20 addresses at a time (the conversion to lists is not timed).

For each trace length n (default 1e5, 1e6, 1e7, 1e8) and each trace (uniformly random over 1 GiB,
sequential with an 8-byte stride) it prints accesses per second of
  - pycachesim,
  - pagesim ``simulate(m, addresses=a)`` with no layout (pagesim lays the addresses out),
  - pagesim with the layout given,
and the ratios to pycachesim. The runs are interleaved (tool A, B, C, A, B, C, ...) and repeated;
the best is reported with the spread ((slowest - best) / best). Miss counts must be identical.

Then every preset's ns/access on one random trace (``--preset-n`` addresses over 1 GiB, each
preset's base page, no layout, ``specialize='auto'``, CPU time) against the benchmark machine's on the same
trace, interleaved and repeated the same way.

The bars, for the no-layout column: at 1e7 and 1e8 >= 5x random and >= 8x sequential,
at 1e6 >= 3x and >= 4x, at 1e5 >= 1x; every preset within 2x of the benchmark machine. The table says
which are met. Exit status 1 only if a miss count differs.

    python benchmarks/bench_pycachesim.py [--sizes 1e5,1e6,1e7,1e8] [--repeat 3] [--preset-n 1e7]
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np

import pagesim
from pagesim import Layout, Machine, Region, Structure, Walker

PAGE = 4096
BASE = 1 << 40
SPAN = 1 << 30
FEED = 1 << 20  # addresses per list handed to pycachesim


def bars(n: int) -> dict[str, float]:
    if n >= 10**7:
        return {"random": 5.0, "sequential": 8.0}
    if n >= 10**6:
        return {"random": 3.0, "sequential": 4.0}
    return {"random": 1.0, "sequential": 1.0}


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


def trace(kind: str, n: int) -> np.ndarray:
    """uint64 addresses, made in pieces (no temporary as large as the trace)."""
    a = np.empty(n, dtype=np.uint64)
    rng = np.random.default_rng(2024)
    for s in range(0, n, 1 << 22):
        m = min(n, s + (1 << 22)) - s
        if kind == "random":
            a[s : s + m] = np.uint64(BASE) + rng.integers(0, SPAN // 8, m, dtype=np.uint64) * np.uint64(8)
        else:
            a[s : s + m] = np.uint64(BASE) + (np.arange(s, s + m, dtype=np.uint64) * np.uint64(8)) % np.uint64(SPAN)
    return a


def run_pycachesim(addrs):
    from cachesim import Cache, CacheSimulator, MainMemory

    mem = MainMemory()
    l2 = Cache("L2", 1536 // 12, 12, PAGE, "LRU")
    l1 = Cache("L1", 64 // 4, 4, PAGE, "LRU", store_to=l2, load_from=l2)
    mem.load_to(l2)
    mem.store_from(l2)
    cs = CacheSimulator(l1, mem)
    dt = 0.0
    for s in range(0, addrs.size, FEED):
        lst = addrs[s : s + FEED].tolist()
        t = time.perf_counter()
        cs.load(lst, length=8)
        dt += time.perf_counter() - t
    return dt, (int(l1.MISS_count), int(l2.MISS_count))


def run_pagesim(m, addrs, layout=None):
    t = time.perf_counter()
    ds = pagesim.simulate(m, addresses=addrs, layout=layout)
    dt = time.perf_counter() - t
    return dt, (int(ds["misses"].sel(structure="L1").sum()), int(ds["misses"].sel(structure="L2").sum()))


def interleaved(fns: dict, repeat: int) -> dict:
    """{name: (best seconds, spread, result)}: every function run ``repeat`` times, in turn."""
    times = {k: [] for k in fns}
    results = {}
    for _ in range(repeat):
        for k, f in fns.items():
            dt, res = f()
            times[k].append(dt)
            if results.setdefault(k, res) != res:
                raise AssertionError(f"{k}: result changed between repeats: {results[k]} then {res}")
    return {k: (min(t), (max(t) - min(t)) / min(t), results[k]) for k, t in times.items()}


def pycachesim_table(m, sizes, repeat) -> bool:
    same_all = True
    print(f"pagesim {pagesim.__version__} vs pycachesim, {m.title}; M accesses/s, best of {repeat} interleaved (spread)")
    print(f"{'trace':<11} {'n':>6} {'pycachesim':>16} {'pagesim no layout':>22} {'ratio':>7} {'bar':>5} {'pagesim layout':>20} {'ratio':>7}  misses")
    for n in sizes:
        layout = Layout((Region(BASE, SPAN, PAGE, "table"),))
        for kind in ("random", "sequential"):
            a = trace(kind, n)
            if n >= 10**6:  # compile or load every kernel this n uses outside the timing
                pagesim.simulate(m, addresses=a[: 10**6], layout=layout)
            r = interleaved(
                {
                    "pycachesim": lambda a=a: run_pycachesim(a),
                    "no layout": lambda a=a: run_pagesim(m, a),
                    "layout": lambda a=a, layout=layout: run_pagesim(m, a, layout),
                },
                repeat,
            )
            pc, nl, ly = r["pycachesim"], r["no layout"], r["layout"]
            same = pc[2] == nl[2] == ly[2]
            same_all &= same
            rn, rl = pc[0] / nl[0], pc[0] / ly[0]
            bar = bars(n)[kind]

            def cell(x, n=n):
                return f"{n / x[0] / 1e6:8.1f} ({x[1]:4.0%})"

            print(
                f"{kind:<11} {n:>6.0e} {cell(pc):>16} {cell(nl):>22} {rn:>6.2f}x {bar:>4.0f}x {cell(ly):>20} {rl:>6.2f}x  "
                f"{'identical' if same else 'DIFFERENT ' + str((pc[2], nl[2], ly[2]))} {'(bar met)' if rn >= bar else '(BELOW BAR)'}"
            )
            del a
    return same_all


def preset_table(n, repeat) -> None:
    a = trace("random", n)
    names = pagesim.machines()
    bench = tlb_machine()
    for name in names:  # compile or load each preset's kernels outside the timing
        pagesim.simulate(name, addresses=a[: 10**6], specialize="auto")
    fns = {"benchmark machine": lambda: (_timed(bench, a), None)}
    for name in names:
        fns[name] = (lambda nm: lambda: (_timed(nm, a), None))(name)
    r = interleaved(fns, repeat)
    ref = r["benchmark machine"][0]
    head = f"{n:,} addresses over 1 GiB, base pages, no layout; ns/access of CPU time, best of {repeat} interleaved (spread)"
    print(f"\nevery preset on one random trace: {head}")
    print(f"{'machine':<20} {'ns/access':>10} {'spread':>7} {'vs benchmark':>13}")
    for k, (t, spread, _) in r.items():
        verdict = "" if k == "benchmark machine" else ("within 2x" if t / ref <= 2 else "MORE THAN 2x")
        print(f"{k:<20} {t / n * 1e9:>10.1f} {spread:>7.0%} {t / ref:>12.2f}x  {verdict}")


def _timed(m, a):
    # CPU time: on a shared 2-core machine another job's load blurs wall time more
    t = time.process_time()
    pagesim.simulate(m, addresses=a)
    return time.process_time() - t


def _count(text: str) -> int | None:
    """A whole number of addresses written like 1e7, else None (nan, inf, 1.5, words)."""
    try:
        v = float(text)
    except ValueError:
        return None
    return int(v) if math.isfinite(v) and v == int(v) else None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1e5,1e6,1e7,1e8", help="trace lengths, comma-separated (default 1e5,1e6,1e7,1e8)")
    ap.add_argument("--repeat", type=int, default=3, help="interleaved timed runs per tool; the best is reported")
    ap.add_argument("--preset-n", type=float, default=1e7, help="addresses of the every-preset trace (0: skip that table)")
    args = ap.parse_args(argv)
    sizes = []
    for x in args.sizes.split(","):
        if not x:  # --sizes '' runs the every-preset table alone
            continue
        v = _count(x)
        if v is None or v < 1:
            ap.error(f"--sizes={args.sizes!r} is not allowed: {x!r} is not a whole number of addresses of at least 1")
        sizes.append(v)
    preset_n = _count(str(args.preset_n))
    if preset_n is None or preset_n < 0:
        ap.error(f"--preset-n={args.preset_n:g} is not allowed: a whole number of addresses (0 skips that table)")
    if args.repeat < 1:
        ap.error(f"--repeat={args.repeat} is not allowed: at least 1")
    m = tlb_machine()
    pagesim.simulate(m, addresses=trace("random", 1000))  # load the generic kernel outside the timing
    ok = pycachesim_table(m, sizes, args.repeat)
    if preset_n:
        preset_table(preset_n, args.repeat)
    if not ok:
        print("MISS COUNTS DIFFER between pycachesim and pagesim")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
