"""The memory-pressure kernel against its plain-Python reference model, on the same accesses in
one process, with clock and with LRU reclaim.

    python benchmarks/bench_os.py [--accesses 300000]

Prints accesses per second of each and the ratio; checks the counters are identical first (exit
status 1 if not). The references are the models in tests/ (there is no external tool for these).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from twins.reference_pressure import reference_pressure  # noqa: E402

from pagesim import Layout, Ram  # noqa: E402
from pagesim.system.pressure import run  # noqa: E402


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--accesses", type=int, default=300_000)
    args = ap.parse_args(argv)
    n = args.accesses
    lay = Layout.single("64M", "4K")
    rng = np.random.default_rng(1)
    addrs = lay.regions[0].start + rng.integers(0, 64 << 20, n).astype(np.uint64)
    ok = True
    print(f"memory pressure: {n:,} uniform random accesses over 64 MiB of 4 KiB pages, 32 MiB of RAM for the program")
    print(f"{'reclaim':<8} {'reference/s':>14} {'pagesim/s':>14} {'ratio':>8}  counters")
    for reclaim in ("clock", "lru"):
        ram = Ram("96M", kernel="64M", reclaim=reclaim)
        run(lay, [(addrs[:1000], None)], ram)  # compile / load the kernel
        got, t_fast = timed(lambda ram=ram: run(lay, [(addrs[i : i + (1 << 20)], None) for i in range(0, n, 1 << 20)], ram))
        want, t_ref = timed(lambda ram=ram, reclaim=reclaim: reference_pressure(lay, addrs.tolist(), ram.available, reclaim))
        same = got == want
        ok &= same
        print(
            f"{reclaim:<8} {n / t_ref:>14,.0f} {n / t_fast:>14,.0f} {t_ref / t_fast:>7.0f}x  "
            f"{'identical' if same else 'DIFFER'} (major faults {got['major_faults']:,}, swap-outs {got['swap_outs']:,})"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
