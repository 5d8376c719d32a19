"""The models behind notebook 01's Linpack, STREAM and hashed-page-table figures: the HPL trailing
update workload checked by hand, the page table sized from the RAM by Linux's rule, the STREAM model
with a chip's shared memory, and the run-length sweep. Nothing here asserts a figure of the document."""

import numpy as np
import pytest

import pagesim.sources.datasets as D
from pagesim.sources.workloads import HPLUpdate, workload
from pagesim.studies import power64k as S

BASES = [0, 1 << 30, 2 << 30]  # A, Lpack, Upack


def refs(w, chunk=1 << 20):
    return np.concatenate([a for a, _ in w.chunks(BASES, chunk)]).astype(np.int64)


# --------------------------------------------------------------------------- the HPL trailing update


def test_hpl_update_small_case_by_hand():
    """lda 64, nb 2, one block of mc 4 rows, nc 4 columns, a 2 x 2 register tile."""
    w = workload("hpl_update", lda=64, nb=2, mc=4, nc=4, mr=2, nr=2)
    a = refs(w)
    # U pack 2 x 4 read + write; L pack 4 x 2 read + write; kernel: 2 column slivers x 2 row slivers x
    # (2 steps x (2 + 2) loads + a 2 x 2 tile of C)
    assert w.n_accesses == a.size == 16 + 16 + 2 * 2 * (2 * 4 + 4)
    # U pack: column j of the window is matrix column nb + j, rows 0..nb, read then written to its sliver
    assert list(a[:4]) == [(2 * 64 + 0) * 8, BASES[2] + 0, (2 * 64 + 1) * 8, BASES[2] + 2 * 8]
    # L pack: rows nb..nb+mc of panel column k (an lda stride between columns), read then written
    lp = a[16:32].reshape(-1, 2)
    assert list(lp[:4, 0]) == [2 * 8, 3 * 8, 4 * 8, 5 * 8] and lp[4, 0] == (64 + 2) * 8
    assert lp[1, 1] == BASES[1] + 1 * 8 and lp[2, 1] == BASES[1] + 4 * 8  # rows 0, 1 form sliver 0, rows 2, 3 sliver 1
    # kernel, first tile: step 0 loads L sliver 0 (2) then U sliver 0 (2), step 1 the same; then C
    k = a[32:44]
    assert list(k[:4]) == [BASES[1], BASES[1] + 8, BASES[2], BASES[2] + 8]
    assert list(k[8:]) == [(2 * 64 + 2) * 8, (2 * 64 + 3) * 8, (3 * 64 + 2) * 8, (3 * 64 + 3) * 8]


def test_hpl_update_chunks_and_cut():
    w = workload("hpl_update", lda=300, nb=8, mc=16, nc=8, row_blocks=3)
    a = refs(w)
    assert a.size == w.n_accesses == 2 * 8 * 8 + 3 * (2 * 16 * 8 + w.kernel_per_block)
    assert np.array_equal(refs(w, chunk=37), a)
    cut = workload("hpl_update", lda=300, nb=8, mc=16, nc=8, row_blocks=3, accesses=500)
    assert np.array_equal(refs(cut, chunk=64), a[:500])


def test_hpl_update_touches_only_its_spans():
    w = workload("hpl_update", lda=200, nb=6, mc=8, nc=8, row_blocks=2)
    a = refs(w)
    for (_, size), base in zip(w.spans(), BASES):
        inside = (a >= base) & (a < base + size)
        assert inside.any()
    assert (((a >= 0) & (a < w.spans()[0][1])) | (a >= BASES[1])).all()


def test_hpl_update_rejects_a_window_larger_than_the_matrix():
    with pytest.raises(ValueError, match="lda"):
        HPLUpdate(lda=100, nb=64, mc=48, nc=8)
    with pytest.raises(ValueError, match="multiple"):
        HPLUpdate(lda=1000, nb=8, mc=10, nc=8, mr=4)


def test_hpl_params_follow_the_documents_table():
    t = D.load("power64k_linpack_params").set_index("system")
    for system, row in (("Power 575", "p 575"), ("JS22", "JS22")):
        h = S.HPL[system]
        assert (h["N"], h["NB"], h["P"], h["Q"]) == tuple(int(t.loc[row, c]) for c in ("n", "nb", "p", "q"))
        q = S.hpl_params(system)
        assert q["lda"] == -(-h["N"] // h["P"]) and q["nb"] == h["NB"]
        w = workload("hpl_update", **q)
        assert w.n_accesses == S.HPL_WINDOW["full"]["accesses"]  # the window reaches the references simulated
    assert S.hpl_params("JS22", tile=2)["mr"] == S.hpl_params("JS22", tile=2)["nr"] == 2


def test_linpack_work_per_access_from_the_register_tile():
    """4 x 4 tile: 8 loads per 16 multiply-adds; two FMAs a cycle, so 1 cycle per access for one
    thread (the FPUs bind, not the two load/store units), 2 for two SMT threads sharing the core."""
    assert S.work_cycles("Linpack", "JS22")["work_cycles"] == pytest.approx(1.0)
    assert S.work_cycles("Linpack", "Power 575")["work_cycles"] == pytest.approx(2.0)
    assert S.work_cycles("Linpack", "JS22", tile=2)["work_cycles"] == pytest.approx(0.5)


# --------------------------------------------------------------------------- the hashed page table


@pytest.mark.parametrize(
    "memory, ptegs",
    [(32 << 30, 1 << 22), (128 << 30, 1 << 24), (1 << 30, 1 << 17), (3 << 30, 1 << 19), (32_000_000_000, 1 << 22), (1 << 20, 1 << 11)],
)
def test_linux_sizes_the_page_table_from_the_ram(memory, ptegs):
    """RAM rounded up to a power of two, >> 13, at least 2048 PTEGs: a table of 1/64 of the RAM."""
    assert S.hpt_ptegs_for(memory) == ptegs
    if ptegs > 2048:
        assert S.hpt_ptegs_for(memory) * 128 == (1 << (memory - 1).bit_length()) // 64


def test_each_system_gets_its_own_page_table():
    assert S.system_ptegs("JS22") == 1 << 22 and S.system_ptegs("Power 575") == 1 << 24
    assert S.chosen("hashed page table PTEGs (x the RAM rule)") == 1.0
    with pytest.raises(ValueError):
        S.hpt_ptegs_for(0)


def test_run_length_is_a_swept_choice():
    for choice, factors in S.RUN_LENGTH_FACTORS.items():
        v = S.TIMED_CHOICES[choice]
        assert v["kind"] == "workload" and v["key"] == "accesses" and min(factors) > 2
    assert "SPECjbb references simulated" in S.choices_for("SPECjbb2005")


# --------------------------------------------------------------------------- STREAM on two systems


@pytest.fixture(scope="module")
def counts():
    return S.stream_counts(quick=True)


def test_chip_pump_mode_leaves_the_cores_prefetch_bound(counts):
    t = S.stream_model(counts)
    k = t.loc["Power 575", "streams per core"]
    assert np.isnan(t.loc["Power 575", "chip cap GB/s"])
    assert t.loc["Power 575", "gain %"] == pytest.approx(S.stream_gain(counts, k))


def test_a_chip_capped_at_both_page_sizes_gains_nothing(counts):
    t = S.stream_model(counts)
    assert S.STREAM_CHIPS["JS22"]["chip_gbs"] == pytest.approx(2 * 533e6 * 8 / 1e9)
    asked = t.loc["JS22", ["chip asks GB/s 4K", "chip asks GB/s 64K"]]
    cap = t.loc["JS22", "chip cap GB/s"]
    assert (asked > cap).all() and t.loc["JS22", "gain %"] == 0
    # a cap above both demands leaves the per-core gain; one between them leaves part of it
    free = S.stream_model(counts, chip_gbs=100)
    assert free.loc["JS22", "gain %"] == pytest.approx(S.stream_gain(counts, t.loc["JS22", "streams per core"]))
    mid = S.stream_model(counts, chip_gbs=float(asked.mean()))
    assert 0 < mid.loc["JS22", "gain %"] < free.loc["JS22", "gain %"]


def test_stream_sweeps_cover_every_parameter(counts):
    sw = S.stream_sweeps(counts)
    assert set(sw) == set(S.STREAM_CHOICES)
    cap = S.STREAM_CHIPS["JS22"]["chip_gbs"]
    assert sorted(sw["JS22 chip memory GB/s"]) == pytest.approx([cap / 2, cap, 2 * cap])


def test_a_fit_on_one_system_is_found_by_bisection(counts):
    r = S.fit_ramp(counts, "Power 575", 30.0)
    assert S.stream_model(counts, ramp_lines=r).loc["Power 575", "gain %"] == pytest.approx(30.0, abs=1e-6)
