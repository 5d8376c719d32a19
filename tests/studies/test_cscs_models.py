"""The models behind notebook 02's single-node FFT and PCHAN rows (001_ec4ce787d7978bc9.txt, tables 2
and 3): the shape of the access streams they generate, nothing about the document's figures."""

import json

import numpy as np
import pytest

from pagesim.sources.workloads import FFT, FFTE, StencilRK, workload
from pagesim.studies import cscs as S


def _addresses(w, bases, chunk=1 << 20):
    return np.concatenate([a for a, _ in w.chunks(bases, chunk=chunk)]).astype(np.int64)


def _bases(w, gap=1 << 32):
    return [(1 << 40) + i * gap for i in range(len(w.spans()))]


def test_radix2_fft_strides_double_per_stage():
    w = FFT(size=64 * 16)
    a = _addresses(w, [0]) // 16
    for s in range(w.stages):
        pairs = a[s * 64 : (s + 1) * 64].reshape(-1, 2)
        assert (pairs[:, 1] - pairs[:, 0] == 2**s).all()


def test_ffte_splits_the_vector_as_zfft1d_does():
    w = FFTE(size=256 << 20)
    assert (w.points, w.n1, w.n2, w.m1, w.m2) == (1 << 24, 4096, 4096, 64, 64)
    assert FFTE(size=128 << 20).n1 == 4096 and FFTE(size=128 << 20).n2 == 2048
    assert FFTE.passes(4096) == 4 and FFTE.passes(2048) == 4 and FFTE.passes(8192) == 5
    with pytest.raises(ValueError, match="power of two"):
        FFTE(size=3 << 20)


def test_ffte_counts_and_stays_inside_its_arrays_for_any_chunking():
    w = workload("ffte", size=4 << 20, blocks=1)  # 2**18 points: 512 x 512
    bases = _bases(w)
    a = _addresses(w, bases)
    assert a.shape[0] == w.n_accesses == sum(w.phase_accesses().values())
    assert (a == _addresses(w, bases, chunk=9_999)).all()
    inside = np.zeros(a.shape[0], dtype=bool)
    for base, (_, n) in zip(bases, w.spans()):
        inside |= (a >= base) & (a < base + n)
    assert inside.all()


def test_ffte_transposes_step_a_column_apart():
    w = FFTE(size=4 << 20, blocks=1)
    bases = _bases(w)
    a = _addresses(w, bases)
    reads = a[0 : 2 * w.nblk : 2]  # the first tile row: A(ii, jj..jj+15), j innermost
    assert (np.diff(reads) == 16 * w.n1).all()
    writes_b = a[(a >= bases[1]) & (a < bases[1] + w.size)][: 2 * w.nblk]
    assert (writes_b[: w.nblk] - bases[1] == 16 * np.arange(w.nblk)).all()  # B(ii.., 0): a column's 16 rows
    assert writes_b[w.nblk] - writes_b[0] == 16 * w.n1  # then the next column, n1 elements on


def test_ffte_work_weighs_each_phase():
    w = FFTE(size=S.FFT_SIZE, blocks=S.FFT_BLOCKS[0])
    acc = w.phase_accesses()
    assert acc["fft"] > acc["copy"] > 0 and acc["twiddle"] > 0
    assert 0.5 < S.ffte_work(w) < 3.0
    assert S.KERNEL_WORK["FFT"][0] == round(S.ffte_work(w), 3)


def test_stencil_rk_touches_its_ten_arrays_and_no_other():
    w = StencilRK(nx=12, ny=11, nz=10, fields=5, radius=2)
    assert w.arrays == 10 and len(w.spans()) == 10
    bases = _bases(w)
    a = _addresses(w, bases, chunk=1_000)
    touched = {int((x - bases[0]) // (1 << 32)) for x in a}
    assert touched == set(range(10))
    assert a.shape[0] == w.n_accesses == w.interior * (5 * 13 + 5 * 2 + 5 * 3)
    for base in bases:
        mine = a[(a >= base) & (a < base + (1 << 32))]
        assert mine.min() >= base and mine.max() < base + w.field_bytes


def test_stencil_rk_reads_z_neighbours_a_plane_apart():
    w = StencilRK(nx=12, ny=11, nz=10, fields=5, radius=2)
    bases = _bases(w)
    a = _addresses(w, bases)
    plane = 12 * 11 * 8
    first = a[:15]  # field 0 at the first point: itself, x-, x+, y-, y+, z-, z+, then R read and written
    assert (first[9:11] - first[0] == np.array([-plane, -2 * plane])).all()
    assert (first[11:13] - first[0] == np.array([plane, 2 * plane])).all()
    assert (first[13:15] == bases[5] + (first[0] - bases[0])).all()


def test_stencil_rk_sample_keeps_both_sweeps_in_proportion():
    w = StencilRK(nx=40, ny=40, nz=40, accesses=90 * 100)
    assert w.points == 100 and w.n_accesses == 9_000
    a = _addresses(w, _bases(w))
    upd = a[100 * 75 :]
    assert upd.shape[0] == 100 * 15


def test_pchan_case_is_the_sourced_scheme():
    wl, kw, work = S.scaling_case("PCHAN", 24)
    w = workload(wl, **kw)
    assert wl == "stencil_rk" and w.fields == 5 and w.radius == 2 and w.arrays == 10
    assert work == S.KERNEL_WORK["PCHAN stencil"][0]


def test_the_timed_runs_lay_each_kernels_arrays_out_in_one_heap():
    """Notebook 02's timed runs hold a workload's arrays back to back in one heap: PCHAN's ten arrays
    then share no set of the K8's 4-way L2 TLB, and its 4 KB pages walk on under 1% of accesses (as
    separate regions on 1 GiB boundaries they walked on over a quarter)."""
    runs = S.timed_runs({24: S.scaling_case("PCHAN", 24, quick=True)})[24]
    for p, ds in runs.items():
        assert ds.attrs["workload"] == "heap", p
        assert json.loads(json.loads(ds.attrs["workload_params"])["parameters"]) == S.scaling_case("PCHAN", 24, quick=True)[1]
    n = int(runs["4K"]["accesses"].sum())
    assert int(runs["4K"]["walks"].sum()) < 0.01 * n
    # the ten arrays span more than the eight 2 MB entries' 16 MB: the 2 MB pages walk all the time
    assert int(runs["2M"]["walks"].sum()) > 0.1 * n


def test_layout_walks_sets_the_heap_beside_separate_regions():
    t = S.layout_walks(quick=True)
    heap, apart = t.loc["one heap"], t.loc["separate regions, 1 GiB apart"]
    assert heap.loc["4K", "walks"] * 50 < apart.loc["4K", "walks"]
    assert heap.loc["2M", "walks"] == apart.loc["2M", "walks"]  # eight fully associative entries: no sets


def test_a_timed_run_takes_numpy_numbers_as_parameters():
    """The heap's parameters are JSON: a numpy integer among a case's parameters is its number."""
    got = S.timed_runs({"x": ("stream", {"n": np.int64(1000)}, 0.5)})["x"]
    want = S.timed_runs({"y": ("stream", {"n": 1000}, 0.5)})["y"]
    assert int(got["4K"]["walks"].sum()) == int(want["4K"]["walks"].sum())
    assert json.loads(got["4K"].attrs["workload_params"]) == json.loads(want["4K"].attrs["workload_params"])
