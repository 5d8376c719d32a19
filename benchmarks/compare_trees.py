"""One benchmark script run under two source trees of pagesim, alternately, in one run.

A change to the engine is judged against the code before it on the same machine at the same time
(the machine this project runs on is shared: figures from two sessions are not comparable). Each
tree runs with ``PYTHONPATH`` set to it and its own kernel cache (``PAGESIM_CACHE_DIR``, under
``--cache``), warmed by one untimed run first; then the rounds alternate A, B, A, B, ... Each run's
output is printed with its tree's label, so the script's own figures (and ratios against the
reference tools it measures in the same process) can be read side by side.

With ``--cold``, every round starts each tree from an empty kernel cache instead, and the script is
expected to time compilation (``benchmarks/bench_compile.py``).

    python benchmarks/compare_trees.py A=/path/to/old B=. --rounds 3 -- bench_floor.py --n 2e6 --repeat 5
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path


def run(label: str, tree: Path, cache: Path, script: str, args: list[str]) -> str:
    env = dict(os.environ, PYTHONPATH=str(tree), PAGESIM_CACHE_DIR=str(cache))
    path = Path(script) if Path(script).is_absolute() else tree / "benchmarks" / script
    r = subprocess.run([sys.executable, str(path), *args], env=env, capture_output=True, text=True, cwd=tree)
    if r.returncode != 0:
        raise SystemExit(f"{label}: {path} exited {r.returncode}\n{r.stderr[-2000:]}")
    return r.stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trees", nargs=2, help="LABEL=PATH of each source tree")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cold", action="store_true", help="an empty kernel cache for every run")
    ap.add_argument("--cache", default=None, help="where the trees' kernel caches go (default: a temporary directory)")
    argv = sys.argv[1:]
    if "--" not in argv or argv.index("--") == len(argv) - 1:
        ap.error("give the benchmark after --: SCRIPT [ARGS], a file in each tree's benchmarks/ or an absolute path")
    cut = argv.index("--")
    a, script = ap.parse_args(argv[:cut]), argv[cut + 1 :]
    trees = []
    for t in a.trees:
        label, _, path = t.partition("=")
        if not path or not Path(path, "pagesim").is_dir():
            ap.error(f"trees: {t!r} is not LABEL=PATH of a pagesim source tree")
        trees.append((label, Path(path).resolve()))
    root = Path(a.cache) if a.cache else Path(tempfile.mkdtemp(prefix="pagesim-compare-"))
    caches = {label: root / label for label, _ in trees}
    if not a.cold:
        for label, tree in trees:
            run(label, tree, caches[label], script[0], script[1:])  # warm: compiles, not shown
    for r in range(a.rounds):
        for label, tree in trees:
            if a.cold:
                shutil.rmtree(caches[label], ignore_errors=True)
            out = run(label, tree, caches[label], script[0], script[1:])
            print(f"===== round {r + 1}, {label} ({tree})")
            print(out.rstrip(), flush=True)


if __name__ == "__main__":
    main()
