"""What ``NUMBA_CPU_NAME=generic`` (Binder's setting, so a cache warmed on one node serves another)
costs against kernels compiled for this CPU: the benchmark TLB of ``bench_pycachesim.py``, 3 million
addresses, the translation kernel alone (specialised and generic), random and sequential.

Each setting runs in its own processes with its own kernel cache (warmed first, not timed); the two
alternate ``--rounds`` times, and each process reports its best of 3 in CPU time. Printed: per
setting and case, the range of the rounds' ns/access, and the ratio of the medians.

    python benchmarks/bench_cpu_name.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

N = 3_000_000
CHUNK = 1 << 20


def child() -> None:
    """One process: ns/access of each kernel and trace, best of 3; printed as JSON."""
    import numpy as np

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import bench_pycachesim as B

    from pagesim import Layout, Region
    from pagesim.engine import stages as E
    from pagesim.sources.workloads import Addresses

    m = B.tlb_machine()
    layout = Layout((Region(B.BASE, B.SPAN, B.PAGE, "table"),))
    out = {}
    for kind in ("random", "sequential"):
        a = B.trace(kind, N)
        for spec in (True, False):
            cfg, st, cnt, *_ = E.kernel_inputs(m, layout, 0)
            run = E.choose_kernel(spec, cfg, Addresses(addresses=a))
            best = float("inf")
            for _ in range(3):
                cfg, st, cnt, *_ = E.kernel_inputs(m, layout, 0)
                t = time.process_time()
                for s in range(0, N, CHUNK):
                    run(a[s : s + CHUNK].view(np.int64), E._EMPTY, cfg, st, cnt)
                best = min(best, time.process_time() - t)
            out[f"{kind}, {'specialised' if spec else 'generic'} kernel"] = best / N * 1e9
    print(json.dumps(out))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child()
        return 0
    if args.rounds < 1:
        ap.error(f"--rounds={args.rounds} is not allowed: at least 1")
    with tempfile.TemporaryDirectory() as tmp:
        settings = {"host CPU": {}, "NUMBA_CPU_NAME=generic": {"NUMBA_CPU_NAME": "generic"}}
        envs = {}
        for name, extra in settings.items():
            env = {k: v for k, v in os.environ.items() if k != "NUMBA_CPU_NAME"}
            env.update(extra, PAGESIM_CACHE_DIR=str(Path(tmp) / name.replace("=", "_").replace(" ", "_")))
            envs[name] = env
        cmd = [sys.executable, __file__, "--child"]
        for env in envs.values():  # compile into each cache, untimed
            subprocess.run(cmd, env=env, check=True, capture_output=True)
        rows: dict[str, dict[str, list[float]]] = {name: {} for name in settings}
        for _ in range(args.rounds):
            for name, env in envs.items():
                res = json.loads(subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1])
                for case, v in res.items():
                    rows[name].setdefault(case, []).append(v)
    host, gen = rows["host CPU"], rows["NUMBA_CPU_NAME=generic"]
    print(f"NUMBA_CPU_NAME=generic against the host CPU: ns/access (range of {args.rounds} alternating processes, each best of 3, CPU time)")
    print(f"{'case':34s} {'host CPU':>16s} {'generic':>16s} {'generic/host (medians)':>24s}")
    for case in host:
        h, g = sorted(host[case]), sorted(gen[case])
        print(f"{case:34s} {h[0]:7.2f}-{h[-1]:<7.2f} {g[0]:7.2f}-{g[-1]:<7.2f} {g[len(g) // 2] / h[len(h) // 2]:23.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
