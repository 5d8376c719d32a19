"""benchmarks/bench_floor.py times pagesim's kernel against minimal kernels that claim to do the same
counting. Its claim holds only while their counters agree, so they are checked here on short traces
(the benchmark checks them again on its own trace before timing), and a changed geometry must make
them differ (else the comparison could not catch anything)."""

import dataclasses
import sys
from pathlib import Path

import numpy as np
import pytest

import pagesim
from pagesim import Layout, Region

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import bench_floor as F  # noqa: E402
import bench_pycachesim as B  # noqa: E402

LAYOUT = Layout((Region(B.BASE, B.SPAN, B.PAGE, "table"),))


def mixed(n: int) -> np.ndarray:
    """Runs of nearby pages with jumps across the GiB: hits and misses at every level, and
    page-walk cache hits at every depth."""
    rng = np.random.default_rng(7)
    hot = rng.integers(0, B.SPAN // 8, 64, dtype=np.uint64) * np.uint64(8)
    pick = rng.integers(0, 64, n)
    off = rng.integers(0, 1 << 22, n, dtype=np.uint64) & ~np.uint64(7)
    return np.uint64(B.BASE) + (hot[pick] + off) % np.uint64(B.SPAN)


@pytest.mark.parametrize("kind", ["random", "sequential", "mixed"])
def test_minimal_kernels_count_what_pagesim_counts(kind):
    a = mixed(200_000) if kind == "mixed" else B.trace(kind, 200_000)
    for m, minimal in ((B.tlb_machine(), F.run_minimal), (pagesim.machine("golden-cove"), F.run_minimal_pwc)):
        got, _ = F.pagesim_kernel(m, LAYOUT, a, chunk=30_011)
        want = minimal(a)
        assert got.tolist() == want.tolist(), (m.name, kind)
    if kind == "mixed":  # every kind of event happens, so the comparison tests something
        assert all(x > 0 for x in want), want.tolist()


def test_a_different_page_walk_cache_changes_the_counts():
    gc = pagesim.machine("golden-cove")
    pwc = list(gc.walker.pwc)
    pwc[2] = dataclasses.replace(pwc[2], entries=16, ways=4)
    other = dataclasses.replace(gc, walker=dataclasses.replace(gc.walker, pwc=tuple(pwc)))
    a = mixed(100_000)
    got, _ = F.pagesim_kernel(other, LAYOUT, a)
    assert got.tolist() != F.run_minimal_pwc(a).tolist()


def test_bench_instructions_names_a_bad_argument(capsys):
    import bench_instructions as I

    for argv, part in ((["--machines", "golden-cove,pentium"], "--machines='golden-cove,pentium' is not allowed"), (["--n", "10"], "--n=10 is not allowed")):
        with pytest.raises(SystemExit):
            I.main(argv)
        assert part in capsys.readouterr().err
