"""The OS stage in its plain and its faster form, on the studies that spent their time there, in one
process, results checked identical first:

- notebook 03's fragmentation table (``studies.mpss.fragmentation``): the free lists rebuilt block by
  block with heappush and PhysicalMemory deep-copied entry by entry (before) against the numpy
  rebuild and a container copy (after); both run today's compaction (PhysicalMemory.compact);
- notebook 05's walks and cache misses (``studies.sharedpt.walks_and_misses``): page-table pages
  numbered by ``np.unique(rows, axis=0)`` (before) against one packed int64 key (after).

    python benchmarks/bench_os_stage.py [--repeat 3]

"before" runs today's code with the replaced functions put back (from tests/twins/reference_os.py and the
function below), so nothing else differs. Best of ``--repeat`` interleaved rounds, with the spread.
Exit status 1 if any result differs.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from twins.reference_os import reference_rebuild_free_lists  # noqa: E402

from pagesim.engine import processes as P  # noqa: E402
from pagesim.studies import mpss, sharedpt  # noqa: E402
from pagesim.system import memory as M  # noqa: E402


def _old_table_ids(o, lvl, t):
    uniq, inv = np.unique(np.stack([o, lvl, t], axis=1), axis=0, return_inverse=True)
    return inv.reshape(-1).astype(np.int64), int(uniq.shape[0])


def _old_rebuild(self):
    self._heads, self._heaps = reference_rebuild_free_lists(self)


@contextlib.contextmanager
def before():
    saved = (M.PhysicalMemory._rebuild_free_lists, M.PhysicalMemory.__deepcopy__, P._table_ids)
    M.PhysicalMemory._rebuild_free_lists = _old_rebuild
    del M.PhysicalMemory.__deepcopy__  # the generic deepcopy
    P._table_ids = _old_table_ids
    try:
        yield
    finally:
        (M.PhysicalMemory._rebuild_free_lists, M.PhysicalMemory.__deepcopy__, P._table_ids) = saved


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    cases = {
        "03 mpss.fragmentation()": lambda: mpss.fragmentation(),
        "05 sharedpt.walks_and_misses()": lambda: sharedpt.walks_and_misses(),
    }
    ok = True
    print(f"OS stage, before and after; best of {args.repeat} interleaved rounds")
    print(f"{'study':<32} {'before s':>9} {'spread':>7} {'after s':>8} {'spread':>7} {'before/after':>13}")
    for name, fn in cases.items():
        fn()  # compile and load kernels
        tb, ta, rb, ra = [], [], None, None
        for _ in range(args.repeat):
            with before():
                t = time.perf_counter()
                rb = fn()
                tb.append(time.perf_counter() - t)
            t = time.perf_counter()
            ra = fn()
            ta.append(time.perf_counter() - t)
        same = rb.equals(ra)
        ok &= same
        print(
            f"{name:<32} {min(tb):>9.2f} {max(tb) - min(tb):>7.2f} {min(ta):>8.2f} {max(ta) - min(ta):>7.2f} "
            f"{min(tb) / min(ta):>12.1f}x  {'identical' if same else 'DIFFER'}"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
