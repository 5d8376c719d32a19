"""Cold compile: CPU seconds of a new process's first ``simulate`` calls, with an empty kernel cache.

For each preset named: the first ``simulate(m, addresses=a, specialize=True)`` (the specialised
kernel of its base page's chain shape, plus the kernels every run needs) and then
``specialize=False`` (the generic kernel of its walker), on 10^5 random addresses. Run it with an
empty ``PAGESIM_CACHE_DIR`` (``compare_trees.py --cold`` does), else it times loading.

    PAGESIM_CACHE_DIR=$(mktemp -d) python benchmarks/bench_compile.py [--presets skylake,power8,ultrasparc-iii]
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--presets", default="skylake,power8,ultrasparc-iii")
    a = ap.parse_args()
    t0 = time.process_time()
    from pagesim import machine, simulate

    print(f"import: {time.process_time() - t0:.2f} s CPU")
    addrs = (1 << 40) + np.random.default_rng(0).integers(0, 1 << 30, 100_000, dtype=np.int64)
    for name in a.presets.split(","):
        for spec in (True, False):
            t = time.process_time()
            simulate(machine(name), addresses=addrs, specialize=spec)
            print(f"{name} {'specialised' if spec else 'generic'}: {time.process_time() - t:.2f} s CPU")


if __name__ == "__main__":
    main()
