"""Instructions per access of the translation kernel, counted exactly under valgrind, for the
benchmark TLB and some presets; a measure this shared host's noise cannot blur.

On this project's machine the same kernel's CPU time moves by a third from one process to the next
(see docs/speed.md, "every preset"), so a ratio of times near a bar (every preset within 2x of
the benchmark machine) can fall either side of it. The number of instructions a kernel executes
does not move: valgrind's cachegrind counts every one. Each machine is run twice in a child
process under cachegrind, on the kernel alone as ``simulate`` calls it (``bench_floor.py``'s
``pagesim_kernel``: a layout given, no Dataset): once with ``--n`` random addresses over 1 GiB and
once with the first 1,000 of them, the trace made and the kernel called twice in both (its call
costs about 700,000 instructions beyond its accesses, which a run of none left in: 0.7 an access at
10^6, 700 at 10^3); the difference over ``--n`` less 1,000 is the kernel's instructions per
access. A run's count moved by up to about 10^6 instructions (0.1 an access at 10^7, 1 at 10^6)
from one invocation to the next, with a longer environment, and once between runs of one
invocation, though three runs in a row have agreed to 2,400. A third run first compiles the
kernels for the processor valgrind reports (numba caches per processor, so this happens once per
cache directory).

Instructions are not time: a cache miss or a mispredicted branch costs more than an add. The time
ratios are printed by ``bench_pycachesim.py``; these show how much of a ratio is work.

    python benchmarks/bench_instructions.py [--n 1e7] [--machines benchmark,golden-cove,zen4] [--jobs 2]

Needs valgrind on the PATH. A run took about 20 s of CPU at 10^6 addresses and 45 s at 10^7 (Python's
start-up under valgrind is most of it at 10^6); three runs a machine.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT = "benchmark,golden-cove,zen4,skylake,power8"
WARM = 1000  # addresses of the first kernel call in every run, and of the second in the run subtracted
MIN_N = 10**5  # a run's count moves by up to ~10^6 instructions between invocations: 10 an access here


def child(name: str, n: int, total: int) -> None:
    """Run the kernel on the first ``n`` of ``total`` random addresses (inside valgrind)."""
    sys.path.insert(0, str(HERE))
    import bench_floor as F
    import bench_pycachesim as B

    import pagesim
    from pagesim import Layout, Region

    m = B.tlb_machine() if name == "benchmark" else pagesim.machine(name)
    a = B.trace("random", total)
    layout = Layout((Region(B.BASE, B.SPAN, B.PAGE, "table"),))
    F.pagesim_kernel(m, layout, a[:WARM])  # loads (or compiles) the kernel in both runs
    F.pagesim_kernel(m, layout, a[:n])  # n is WARM in the run subtracted: the same calls in both


def instructions(name: str, n: int, total: int) -> int:
    cmd = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null"]
    cmd += [sys.executable, str(Path(__file__).resolve()), "--child", name, str(n), str(total)]
    path = os.pathsep.join(filter(None, [str(HERE.parent), os.environ.get("PYTHONPATH")]))
    # one BLAS thread: OpenBLAS's idle threads spin a varying number of instructions (tens of
    # millions a run); with them off and a fixed hash seed, three runs of nothing agreed to 2,400
    quiet = {k: "1" for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    r = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=path, PYTHONHASHSEED="0", **quiet))
    m = re.search(r"I\s+refs:\s+([\d,]+)", r.stderr)
    if r.returncode or not m:
        raise RuntimeError(f"valgrind run of {name} (n={n}) failed (exit {r.returncode}):\n{r.stderr[-2000:]}")
    return int(m.group(1).replace(",", ""))


def per_access(name: str, n: int) -> float:
    instructions(name, WARM, n)  # compile for valgrind's processor, if not cached yet
    return (instructions(name, n, n) - instructions(name, WARM, n)) / (n - WARM)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        child(argv[1], int(argv[2]), int(argv[3]))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=float, default=1e7, help="random addresses over 1 GiB (default 1e7)")
    ap.add_argument("--machines", default=DEFAULT, help=f"'benchmark' and preset names, comma-separated (default {DEFAULT})")
    ap.add_argument("--jobs", type=int, default=2, help="valgrind runs at once (default 2)")
    args = ap.parse_args(argv)
    n = int(args.n) if math.isfinite(args.n) else 0  # nan and inf are refused below, not by a traceback
    if n < MIN_N or args.n != n:
        ap.error(f"--n={args.n:g} is not allowed: a whole number of addresses, at least {MIN_N:g} (fewer drown in the runs' noise)")
    if args.jobs < 1:
        ap.error(f"--jobs={args.jobs} is not allowed: at least 1")
    names = [x for x in args.machines.split(",") if x]
    sys.path.insert(0, str(HERE.parent))
    import pagesim

    known = ["benchmark", *pagesim.machines()]
    bad = [x for x in names if x not in known]
    if bad or not names:
        ap.error(f"--machines={args.machines!r} is not allowed: names from {', '.join(known)}")
    if "benchmark" not in names:
        names.insert(0, "benchmark")
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (Debian: apt install valgrind); nothing measured")
        return 1
    with ThreadPoolExecutor(args.jobs) as ex:
        got = dict(zip(names, ex.map(lambda x: per_access(x, n), names)))
    print(f"pagesim {pagesim.__version__}: instructions per access of the kernel alone (cachegrind), {n:,} random addresses over 1 GiB, base pages")
    print(f"{'machine':20s} {'instructions':>12s} {'vs benchmark':>13s}")
    for k, v in got.items():
        print(f"{k:20s} {v:12.1f} {v / got['benchmark']:12.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
