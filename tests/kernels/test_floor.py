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

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
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

    bad = [
        (["--machines", "golden-cove,pentium"], "--machines='golden-cove,pentium' is not allowed"),
        (["--n", "10"], "--n=10 is not allowed"),
        (["--n", "1e4"], "--n=10000 is not allowed"),
        (["--n", "nan"], "--n=nan is not allowed"),
        (["--n", "inf"], "--n=inf is not allowed"),
    ]
    for argv, part in bad:
        with pytest.raises(SystemExit):
            I.main(argv)
        assert part in capsys.readouterr().err


def test_pml4_and_pdpte_caches_count_what_pagesim_counts():
    """Inside the benchmark's 1 GiB every address has the same PML4 key and the same PDPTE key, so
    those two caches hit on every walk but the first and their geometry, keys and skips go
    unchecked. Here: eight regions of 2 GiB in six 512 GiB slots (the PML4 cache's one set holds
    4), two of the slots holding a second region in their upper half; 16 PDPTE keys, 8 to each of
    that cache's 2 sets of 4."""
    base, slot, size = 1 << 42, 1 << 39, 1 << 31
    starts = np.array([base + s * slot + h * (slot // 2) for s, h in ((0, 0), (0, 1), (1, 0), (2, 0), (3, 0), (4, 0), (5, 0), (5, 1))])
    layout = Layout(tuple(Region(int(x), size, B.PAGE, f"r{k}") for k, x in enumerate(starts)))
    rng = np.random.default_rng(11)
    n = 100_000
    # a few 2 MiB pieces in each region, so every cache both hits and misses
    pieces = rng.integers(0, size >> 21, (8, 6))
    k = rng.integers(0, 8, n)
    a = (starts[k] + (pieces[k, rng.integers(0, 6, n)] << 21) + rng.integers(0, 1 << 21, n)).astype(np.uint64)
    got, _ = F.pagesim_kernel(pagesim.machine("golden-cove"), layout, a, chunk=30_011)
    want = F.run_minimal_pwc(a, base, 6 * slot)
    assert got.tolist() == want.tolist()
    walks, q4, q3 = want[2], want[4], want[5]
    assert 0 < q4 < walks - 1 and 0 < q3 < walks - 1, want.tolist()  # misses beyond the first walk's


@pytest.mark.parametrize("value", ["nan", "inf", "0", "1.5"])
def test_bench_floor_names_a_bad_n(capsys, monkeypatch, value):
    monkeypatch.setattr(sys, "argv", ["bench_floor.py", "--n", value])
    with pytest.raises(SystemExit):
        F.main()
    assert f"--n={float(value):g} is not allowed" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv, part",
    [
        (["--preset-n", "nan"], "--preset-n=nan is not allowed"),
        (["--preset-n", "inf"], "--preset-n=inf is not allowed"),
        (["--preset-n", "2.5"], "--preset-n=2.5 is not allowed"),
        (["--sizes", "1e5,lots"], "--sizes='1e5,lots' is not allowed: 'lots'"),
        (["--sizes", "0"], "--sizes='0' is not allowed"),
        (["--repeat", "0"], "--repeat=0 is not allowed"),
    ],
)
def test_bench_pycachesim_names_a_bad_argument(capsys, argv, part):
    with pytest.raises(SystemExit):
        B.main(argv)
    assert part in capsys.readouterr().err
