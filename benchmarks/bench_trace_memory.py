"""Memory of a sparse trace: peak resident memory of read_trace() and of simulate() on a hex trace
of random 47-bit addresses (nearly one distinct 2 MiB block per address), in a fresh process.

    python benchmarks/bench_trace_memory.py [--n 1e6] [--page-size 2M] [--seed 1]

The trace file is written first (in a temporary folder, by this process); the child loads the
kernels with a small run, then resets its peak (VmHWM, where Linux allows) and reads the trace,
then simulates it. Prints the distinct 2 MiB blocks, the peaks above the resident size before
the read, and those peaks per distinct block, each step's seconds, and the error when the run is
refused (with 4K pages, a sparse trace of a million addresses maps more pages than pagesim
simulates).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
from bench_memory import PRELUDE  # the peak-memory helpers of the memory benchmark

CHILD = (
    PRELUDE
    + r"""
import numpy as np
import pagesim
from pagesim.sources.traces import read_trace

path, page = sys.argv[1], sys.argv[2]
pagesim.simulate("skylake", addresses=np.arange(1000, dtype=np.uint64) * np.uint64(4096) + np.uint64(1 << 40), page_size=page)
base = status("VmRSS")
was_reset = reset_peak()
out = {"reset": was_reset, "before_kib": base}
t = time.perf_counter()
tr = read_trace(path, format="hex")
out["read_seconds"] = time.perf_counter() - t
out["read_peak_kib"] = peak_since(was_reset) - base
out["blocks"] = len(tr.blocks)
out["accesses"] = tr.n_accesses
t = time.perf_counter()
try:
    ds = pagesim.simulate("skylake", tr, page_size=page)
    out["regions"] = int(ds.sizes["region"])
    out["walks"] = int(ds["walks"].sum())
except ValueError as e:
    out["error"] = str(e)
out["simulate_seconds"] = time.perf_counter() - t
out["peak_kib"] = peak_since(was_reset) - base
print(json.dumps(out))
"""
)


def write_trace(path: str, n: int, seed: int) -> None:
    """``n`` random 47-bit addresses, one hex number a line."""
    rng = np.random.default_rng(seed)
    with open(path, "w") as f:
        for s in range(0, n, 1 << 20):
            a = rng.integers(0, 1 << 47, min(n, s + (1 << 20)) - s, dtype=np.uint64)
            f.write("\n".join(f"{x:x}" for x in a.tolist()) + "\n")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=float, default=1e6, help="addresses in the trace (default 10**6)")
    ap.add_argument("--page-size", default="2M", help="page size of the run (default 2M)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    n = int(args.n)
    if n < 1 or n != args.n:
        ap.error(f"--n {args.n!r} must be a whole number of addresses, at least 1")
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "sparse.hex")
        write_trace(path, n, args.seed)
        size = os.path.getsize(path)
        r = subprocess.run([sys.executable, "-c", CHILD, path, args.page_size], capture_output=True, text=True)
    if r.returncode:
        print(r.stderr, file=sys.stderr)
        return 1
    o = json.loads(r.stdout.strip().splitlines()[-1])
    b = o["blocks"]
    print(f"hex trace of {o['accesses']:,} random 47-bit addresses ({size / 2**20:.0f} MiB), skylake, {args.page_size} pages")
    print(f"distinct 2 MiB blocks: {b:,}")
    print(f"read_trace: {o['read_seconds']:.1f} s, peak {o['read_peak_kib'] / 1024:.0f} MiB above the start, {o['read_peak_kib'] * 1024 / b:.0f} bytes a block")
    what = f"refused: {o['error']}" if "error" in o else f"{o['regions']:,} regions, {o['walks']:,} walks"
    print(f"simulate: {o['simulate_seconds']:.1f} s, {what}")
    print(f"peak of both: {o['peak_kib'] / 1024:.0f} MiB above the start, {o['peak_kib'] * 1024 / b:.0f} bytes a block")
    if not o["reset"]:
        print("(the peak could not be reset before the read: it includes the loading of pagesim and its kernels)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
