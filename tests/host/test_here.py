"""The documents' kernels as real code: each makes exactly the accesses of the pagesim workload of
the same name (so the prediction simulates what was timed), and the timing driver on this machine."""

import sys

import numpy as np
import pytest

from pagesim import machine
from pagesim.host import here
from pagesim.host.linux import why_not
from pagesim.sources.workloads import workload

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="madvise and /proc are Linux's")

KERNELS = here.kernels(quick=True, limit=64 << 20, seed=7)


@pytest.mark.parametrize("name", list(KERNELS))
def test_the_kernel_makes_the_accesses_of_its_workload(name):
    k = KERNELS[name]
    bufs = here.Buffers(k, thp=False)
    try:
        n = min(k.accesses, 300_000)
        trace = here.record(k, bufs, n)
    finally:
        bufs.close()
    w = workload(k.workload, **k.params)
    assert [size for _, size in w.spans()] == [size for _, size in k.buffers]
    assert w.n_accesses == k.accesses
    expected, _ = next(w.chunks(here.bases(k), n, seed=7))
    assert trace.size == n
    first = np.flatnonzero(trace != expected[:n])
    assert first.size == 0, f"{name}: access {first[:1]} differs: {trace[first[:3]]} against {expected[first[:3]]}"


@pytest.mark.parametrize("name", list(KERNELS))
def test_loading_a_kernel_runs_the_compiled_code_a_run_uses(name):
    """Kernel.load (a program's start-up, --start-only) calls the compiled code with the argument
    types of a run and no work: it loads the code a run uses, and compiles nothing more."""
    from pagesim._kernels import native

    fn = {"STREAM triad": native.triad, "RandomAccess": native.gups, "DGEMM": native.dgemm, "strided solver": native.planes, "MD": native.md}[name]
    k = KERNELS[name]
    bufs = here.Buffers(k, thp=False)
    try:
        here.record(k, bufs, 1000)
    finally:
        bufs.close()
    compiled = list(fn.signatures)
    k.load()
    assert list(fn.signatures) == compiled


def test_a_record_shorter_than_the_run_stops_writing_at_its_end():
    k = KERNELS["STREAM triad"]
    bufs = here.Buffers(k, thp=False)
    try:
        for n in (1, 2, 4, 5):  # the triad writes three addresses an element: cuts inside an element too
            log = np.full(n + 3, -1, dtype=np.int64)
            k.execute(bufs.arrays, here.bases(k), log[:n])
            assert (log[n:] == -1).all()
            assert (log[:n] >= here.START).all()
    finally:
        bufs.close()


def test_the_kernels_compute_what_they_say():
    """The triad's and DGEMM's results, against numpy's, so the timed code is the kernel it names."""
    k = KERNELS["STREAM triad"]
    bufs = here.Buffers(k, thp=False)
    try:
        a, b, c = (x.view(np.float64) for x in bufs.arrays)
        b[:] = np.arange(b.size)
        c[:] = 2.0
        k.execute(bufs.arrays, here.bases(k), np.zeros(0, dtype=np.int64))
        assert np.array_equal(a, b + 3.0 * c)
    finally:
        bufs.close()
    k = KERNELS["DGEMM"]
    bufs = here.Buffers(k, thp=False)
    try:
        n = k.params["n"]
        A, B, C = (x.view(np.float64).reshape(n, n) for x in bufs.arrays)
        rng = np.random.default_rng(0)
        A[:], B[:], C[:] = rng.random((n, n)), rng.random((n, n)), 0.0
        k.execute(bufs.arrays, here.bases(k), np.zeros(0, dtype=np.int64))
        assert np.allclose(C, A @ B)
    finally:
        bufs.close()


def test_random_access_table_shrinks_to_the_memory_it_may_use():
    assert KERNELS["RandomAccess"].size == 32 << 20
    assert here.kernels(quick=True, limit=1 << 40)["RandomAccess"].size == 256 << 20


def test_the_prediction_adds_the_simulated_translation_cycles_to_the_measured_thp_time():
    k = KERNELS["RandomAccess"]
    bufs = here.Buffers(k, thp=False)
    try:
        trace = here.record(k, bufs, 50_000)
    finally:
        bufs.close()
    m = machine("skylake")
    span = here.bases(k)[-1] + k.size - here.START  # one 32 MiB buffer: whole 2 MiB blocks
    assert m.walker.walkers == 2  # Skylake runs two walks at once (datasets/architecture/NOTES.md §1.1)
    c4, c2 = (here.simulated(m, trace, p, span, overlap=2)[0] for p in (4096, 2 << 20))
    assert c4 > c2 > 0  # 32 MiB at random: 4K pages walk on most accesses, 2M pages rarely
    got = here.predict(k, trace, thp_ns=10.0, hz=2e9, mods=[("bare", m)])["bare"]
    assert got == pytest.approx(((10.0 + (c4 - c2) / 2.0) / 10.0 - 1) * 100)


def test_overlapped_walks_divide_the_walk_cycles_only():
    """RandomAccess's updates are independent, so the prediction lets the preset's walkers run their
    walks side by side: the walk component is divided by the overlap, the TLB hit latency is not."""
    k = KERNELS["RandomAccess"]
    bufs = here.Buffers(k, thp=False)
    try:
        trace = here.record(k, bufs, 20_000)
    finally:
        bufs.close()
    m = machine("zen4")
    span = here.bases(k)[-1] + k.size - here.START
    walk1, walk6 = (here.simulated(m, trace, 4096, span, ("walk",), overlap=o)[0] for o in (1, 6))
    hit1, hit6 = (here.simulated(m, trace, 4096, span, ("tlb_hit_latency",), overlap=o)[0] for o in (1, 6))
    assert walk1 > 0 and walk6 == pytest.approx(walk1 / 6)
    assert hit1 > 0 and hit6 == hit1
    with pytest.raises(ValueError, match="overlap"):
        here.simulated(m, trace, 4096, span, overlap=0)
    for bad in ("walk", ("walk", "bogus"), ()):
        with pytest.raises((TypeError, ValueError), match="components"):
            here.simulated(m, trace, 4096, span, bad)


def test_models_add_the_virtual_machine_only_under_a_hypervisor():
    assert [n for n, _ in here.models("skylake", None)] == ["bare metal"]
    names = [n for n, m in here.models("skylake", "kvm")]
    assert names == ["bare metal", "VM, host 4K pages"]
    assert here.models("skylake", "kvm")[1][1].host is not None


@pytest.mark.skipif(why_not(True) is not None, reason="transparent huge pages are not usable here")
def test_a_run_times_pairs_and_predicts_each_kernel():
    seen = []
    res = here.run(["RandomAccess", "DGEMM"], quick=True, repeats=2, record_n=20_000, preset="skylake", progress=seen.append)
    t = res.table.set_index("kernel")
    assert list(t.index) == ["RandomAccess", "DGEMM"] and len(seen) == 2
    assert all(len(p) == 2 for p in res.pairs.values())
    assert (t["4K ns/access"] > 0).all() and (t["THP ns/access"] > 0).all()
    for model in res.models:
        assert t[f"predicted gain % ({model})"].notna().all()
    judged = f"predicted gain % ({res.models[0]})"
    assert np.allclose(t["prediction error (points)"], t[judged] - t["measured gain %"])


@pytest.mark.parametrize(
    "kw, match",
    [
        (dict(names=["FFT"]), "names"),
        (dict(names="DGEMM"), "names"),
        (dict(names=5), "names"),
        (dict(names=[]), "names"),
        (dict(names=["DGEMM", "DGEMM"]), "names"),
        (dict(repeats=0), "repeats"),
        (dict(record_n=10), "record_n"),
        (dict(seed=-1), "seed"),
        (dict(seed=2**64), "seed"),
        (dict(preset="nope"), "preset"),
        (dict(preset="power6"), "preset='power6'"),
        (dict(preset=""), "preset"),
        (dict(progress=5), "progress"),
    ],
)
def test_bad_arguments_name_the_parameter(kw, match):
    with pytest.raises((ValueError, TypeError), match=match):
        here.run(quick=True, **kw)


@pytest.mark.parametrize(
    "kw, match",
    [
        (dict(plane=12), "plane=12"),
        (dict(plane=0), "plane=0"),
        (dict(plane=12.5), "plane"),
        (dict(plane=1 << 30), "plane"),
        (dict(seed=2**64), "seed"),
        (dict(seed=1.5), "seed"),
        (dict(limit=20 << 20), "limit=20M"),
        (dict(limit=-5), "limit"),
        (dict(quick="no"), "quick"),
    ],
)
def test_bad_kernel_sizes_name_the_parameter(kw, match):
    with pytest.raises((ValueError, TypeError), match=match):
        here.kernels(**kw)


def test_a_plane_given_with_a_unit_makes_the_workloads_accesses():
    k = here.kernels(quick=True, plane="1M", limit=64 << 20)["strided solver"]
    assert k.params["plane"] == 1 << 20
    bufs = here.Buffers(k, thp=False)
    try:
        trace = here.record(k, bufs, 5000)
    finally:
        bufs.close()
    expected, _ = next(workload(k.workload, **k.params).chunks(here.bases(k), 5000, seed=0))
    assert np.array_equal(trace, expected)


def test_record_and_predict_check_their_numbers():
    k = KERNELS["DGEMM"]
    bufs = here.Buffers(k, thp=False)
    try:
        with pytest.raises(ValueError, match="n="):
            here.record(k, bufs, -5)
        trace = here.record(k, bufs, 2000)
    finally:
        bufs.close()
    mods = here.models("skylake")
    with pytest.raises(ValueError, match="thp_ns"):
        here.predict(k, trace, thp_ns=0.0, hz=2e9, mods=mods)
    with pytest.raises(ValueError, match="hz"):
        here.predict(k, trace, thp_ns=1.0, hz=0, mods=mods)


def test_the_buffers_hold_normal_doubles():
    k = KERNELS["MD"]
    bufs = here.Buffers(k, thp=False)
    try:
        x = bufs.arrays[0].view(np.float64)
        assert np.isfinite(x).all() and (np.abs(x) >= np.finfo(np.float64).tiny).all()
    finally:
        bufs.close()


def test_a_kernel_runs_as_a_program_of_its_own():
    import subprocess

    cmd = here.program("DGEMM", quick=True, seed=3, limit=64 << 20)
    assert cmd[1:4] == ["-m", "pagesim.host.here", "DGEMM"] and "--quick" in cmd and cmd[cmd.index("--limit") + 1] == str(64 << 20)
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    assert out.startswith("DGEMM: ") and f"{KERNELS['DGEMM'].accesses:,} accesses" in out
    start = here.program("DGEMM", quick=True, seed=3, limit=64 << 20, start_only=True)
    assert start == cmd + ["--start-only"]
    assert subprocess.run(start, capture_output=True, text=True, check=True).stdout == "DGEMM: start-up only (no arrays, no run)\n"
    with pytest.raises(ValueError, match="name"):
        here.program("FFT")
    with pytest.raises(ValueError, match="limit"):
        here.program("DGEMM", limit=1 << 20)


def test_the_program_prediction_counts_fewer_faults_with_huge_pages():
    rows = here.predict_program("RandomAccess", True, on_seconds=1.0, mods=here.models("skylake", "kvm"), hz=2e9, record_n=200_000, limit=1 << 40)
    with pytest.raises(ValueError, match="on_seconds"):
        here.predict_program("RandomAccess", True, on_seconds=0.0, mods=here.models("skylake"), hz=2e9)
    assert [r["model"] for r in rows] == ["bare metal", "VM, host 4K pages"]
    for r in rows:
        # 256 MiB touched at random: one fault per 4 KiB page touched against one per 2 MiB page
        assert r["faults on"] <= (256 << 20) // (2 << 20) < r["faults off"]
        assert r["time off / on"] > 1.0 and r["accesses simulated"] == 200_000


def test_a_kernel_checks_its_arrays_before_the_numba_code_runs():
    k = KERNELS["STREAM triad"]
    small = [np.zeros(8, dtype=np.uint64)] * 3
    with pytest.raises(ValueError, match="bufs: STREAM triad's a"):
        k.execute(small, here.bases(k), np.zeros(0, dtype=np.int64))
    with pytest.raises(ValueError, match="takes 3 arrays"):
        k.execute(small[:2], here.bases(k), np.zeros(0, dtype=np.int64))
    bufs = here.numpy_buffers(k)
    with pytest.raises(ValueError, match="log"):
        k.execute(bufs, here.bases(k), np.zeros(4, dtype=np.int32))
    with pytest.raises(ValueError, match="bases"):
        k.execute(bufs, here.bases(k)[:1], np.zeros(0, dtype=np.int64))


def test_without_thp_the_table_says_why(monkeypatch):
    monkeypatch.setattr(here, "why_not", lambda thp, partial=False: "THP is off here" if thp else None)
    res = here.run(["DGEMM"], quick=True, repeats=1, record_n=2000, preset="skylake")
    t = res.table.set_index("kernel")
    assert t.loc["DGEMM", "not measured"] == "THP is off here" and "measured gain %" not in t.columns
    assert res.thp == "THP is off here" and res.pairs == {}
