"""Notebook 05 as a lesson: its sections record their findings through the study's ``record_*``
functions (one short cell each), its Predict questions compute their answers, and each section that
showed only a table draws a figure."""

import re

import matplotlib
import nbformat
import numpy as np
import pandas as pd
import pytest

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

import pagesim.sources.datasets as D  # noqa: E402
from pagesim.studies import sharedpt as S  # noqa: E402
from pagesim.studies.findings import Findings  # noqa: E402
from pagesim.validation.notebooks import notebooks_dir  # noqa: E402

NOTEBOOK = notebooks_dir() / "05_shared_page_tables.ipynb"
SMALL = {"processes": 3, "quantum": 500, "pool": 64 << 20, "accesses": 4000}


@pytest.fixture(scope="module")
def doc():
    return D.load("shared_pt_figures")


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_the_document_figures_by_hand(doc):
    d8 = S.document_figures(doc)
    assert d8["small", "page-table memory without sharing"] == 1.65 and d8["huge", "page-table memory with sharing"] == 37
    assert S.walk_document(doc, "small") == {"ITLB": -27.0, "DTLB": -26.0}
    assert S.walk_document(doc, "huge") == {"ITLB": -28.0, "DTLB": -10.0}
    assert list(S.other_configurations(doc).index) == [20, 21, 22, 23, 24]


def test_each_section_records_its_findings_in_one_short_cell():
    """Every record_* of the study is called once, in a cell of at most 3 lines, and nothing else
    in the notebook records a finding."""
    nb = nbformat.read(NOTEBOOK, as_version=4)
    calls = [(c.source, m) for c in nb.cells if c.cell_type == "code" for m in re.findall(r"S\.(record_\w+)\(", c.source)]
    assert [m for _, m in calls] == [
        "record_page_tables",
        "record_io",
        "record_sharing",
        "record_walks",
        "record_other",
        "record_hugepages_and_throughput",
        "record_robust",
    ]
    assert all(len(src.splitlines()) <= 3 for src, _ in calls)


def test_section_1_records_the_calibrated_sizes_and_the_freed_share(doc):
    F = Findings("05_shared_page_tables", "004_b9bff536459e6bfe.txt")
    t = S.record_page_tables(F, S.page_table_memory(), doc)
    assert list(t.index) == ["pt-small-private", "pt-small-shared", "pt-huge-private", "pt-huge-shared", "freed-20"]
    assert list(t.verdict) == ["calibrated"] * 4 + ["arithmetic"]
    assert t.loc["pt-small-private", "simulation"] == "1.653" and t.loc["freed-20", "simulation"] == "20"


def test_section_2_prediction_by_hand():
    """A 16 GiB database, the pool 5.125 GiB growing by the freed 1.60 GiB: the miss ratio falls from
    1 - 5.125/16 = 0.680 to 1 - 6.729/16 = 0.579, 14.7% fewer disk I/Os."""
    r = S.predict_io(None, 16)
    assert r.answer == pytest.approx(14.7465, abs=1e-3) and r.right is None
    assert S.predict_io(14.7, 16).right and not S.predict_io(12.5, 16).right
    assert "0.680" in r.how and "0.579" in r.how


def test_section_2_records_the_io_with_the_sizes_that_give_it(doc):
    F = Findings("05_shared_page_tables", "004_b9bff536459e6bfe.txt")
    pool, freed = S.TWICHELL_8GB["buffer_pool"], S.freed_bytes()
    io = S.buffer_pool_io(pool, freed, [d * S.GIB for d in S.IO_DATABASES_GIB])
    sizes, exact = S.io_sizes(doc, pool, freed)
    t = S.record_io(F, io, sizes, exact, doc, pool, freed)
    assert list(t.index) == ["io", "context-switches"] and set(t.verdict) == {"not reproduced"}
    assert "23% itself at 12.1 GiB" in F.get("io").sensitivity
    ax = S.plot_io(sizes, doc)
    assert ax.get_xlabel() == "database size D (GiB)" and "uniform buffer-pool model" in ax.get_title()


@pytest.mark.parametrize("pages", ["small", "huge"])
def test_the_sharing_figure_shows_equal_walks_and_where_they_are_served(doc, pages):
    t = S.database_run("4K" if pages == "small" else "2M", seed=1, **SMALL)
    fig = S.plot_sharing(t, doc, pages)
    walks, served, misses = fig.axes
    heights = [p.get_height() for p in walks.patches]  # ITLB private, shared; DTLB private, shared
    assert heights[0] == heights[1] and heights[2] == heights[3] and heights[0] > 0
    w = t.set_index("page tables")
    stacks = [p.get_height() for p in served.patches]  # L1D, L2, memory for private and shared
    assert stacks[4:6] == [w.loc["private", "walk refs memory"], w.loc["shared", "walk refs memory"]]
    assert sorted(p.get_width() for p in misses.patches)[0] <= 0
    assert S.DATABASE_MODEL in fig._suptitle.get_text()


def test_section_3_prediction_is_the_simulated_change():
    t = S.database_run("4K", seed=1, **SMALL)
    r = S.predict_walks(0, t)
    assert r.answer == 0 and r.right and not S.predict_walks(-26, t).right


def test_section_4_figure_and_findings(doc):
    other = S.other_configurations(doc)
    fig = S.plot_other(other)
    assert len(fig.axes[0].get_yticklabels()) == len(other) == 5
    assert "not simulated" in fig.axes[0].get_title()
    F = Findings("05_shared_page_tables", "004_b9bff536459e6bfe.txt")
    t = S.record_other(F, other)
    assert list(t.index) == [f"other-{i}" for i in range(20, 25)] and set(t.verdict) == {"not reproduced"}
    assert F.get("other-23").document == "range 60-65%"


def test_the_throughput_figure_names_its_model(doc):
    fig = S.plot_throughput({"throughput": 12.0}, {"throughput": 1.0}, doc)
    ax = fig.axes[0]
    assert "priced" in ax.get_title() and S.DATABASE_MODEL in ax.get_title()
    heights = sorted(round(p.get_height(), 6) for p in ax.patches if isinstance(p, matplotlib.patches.Rectangle) and p.get_width() < 0.5)
    assert heights == [1.0, 3.0, 9.0, 12.0]


def test_record_robust_and_its_figure(doc):
    """The sweeps recorded with the findings they test (small runs: the verdicts are not the
    notebook's), and the figure draws one line per swept choice against each finding's band."""
    base = {**S.DATABASE, **SMALL}
    F = Findings("05_shared_page_tables", "004_b9bff536459e6bfe.txt")
    t4, t2 = S.database_run("4K", seed=1, **base), S.database_run("2M", seed=1, **base)
    e4, e2 = S.sharing_effects(t4), S.sharing_effects(t2)
    curve = {pp: S.warmup_curve(base, pp, seed=1, warmups=(0.0, 4.0, 8.0, 16.0)) for pp in ("4K", "2M")}
    S.record_sharing(F, t4, e4, doc)
    S.record_walks(F, curve["4K"], t4, base, doc)
    S.record_hugepages_and_throughput(F, t2, e4, e2, curve["2M"], base, doc)
    sw = {pp: S.sweep_effects(base, pp, seed=1) for pp in ("4K", "2M")}
    t = S.record_robust(F, sw, base, seed=1)
    assert list(t.index) == [fid for fid, *_ in S.ROBUST]
    # the throughput with one re-simulated choice at either end and the pricing choices at either end
    for fid in ("throughput-9", "throughput-huge"):
        (line,) = [r for r in F.get(fid).robustness if "moved together" in r]
        assert "(48 corners): from " in line and "work cycles" in line, line
    paired = S.paired_runs(base, "4K", seed=1)
    assert len(paired) == 48 and paired["buffer pool read (MiB) 128, work cycles 100, mlp 1"] > paired["buffer pool read (MiB) 128, work cycles 400, mlp 1"]
    assert all(set(F.get(fid).swept) >= set(S.SIM_CHOICES) for fid in t.index)
    fig = S.plot_robust(F, sw, base)
    assert len(fig.axes) == 6
    assert [len(ax.get_lines()) for ax in fig.axes] == [9, 6, 8, 9, 6, 8]  # the walks: also the fault handler's two choices
    assert isinstance(t, pd.DataFrame)


def test_the_warmup_figure_keeps_the_message_in_view(doc):
    """With 2 MiB pages the counted walks stay near 0%: the message's bands (-42..-14% and -15..-5%)
    must still be in view, not cut off by the data's range."""
    curve = pd.DataFrame({"warm-up (pool sweeps)": [0.0, 8.0, 16.0], "ITLB walks counted %": [-1.9, 0.0, 0.0], "DTLB walks counted %": [-0.6, 0.0, 0.0]})
    ax = S.plot_warmup(curve, doc, "huge", 8.0)
    lo, hi = ax.get_ylim()
    assert lo <= -42 and hi >= 0
    assert S.DATABASE_MODEL in ax.get_title()


def test_paired_runs_names_bad_inputs_and_counts_its_corners():
    """paired_runs takes what database_run takes (sizes as text, a partial base, numpy integers),
    gives fewer corners where a sweep's ends coincide (work 0), and names a bad metric or a sweep
    end that cannot run (an IndexError, a bare KeyError, a float process count before)."""
    small = {**SMALL, "accesses": 1500}
    runs = S.paired_runs({**small, "pool": "64M", "processes": np.int64(3)}, "4K", seed=1)
    assert len(runs) == 48 and any(k.startswith("processes per core 6,") for k in runs)
    assert len(S.paired_runs({**small, "work_cycles": 0.0}, "4K", seed=1)) == 24
    with pytest.raises(ValueError, match=r"metric='nonesuch' is not a sharing effect: choose one of .*'throughput'"):
        S.paired_runs(small, "4K", seed=1, metric="nonesuch")
    with pytest.raises(ValueError, match=r"paired_runs: text=2048 \(an end of its sweep around 4096\): .*text=2048 a multiple of 4 KiB"):
        S.paired_runs({**small, "text": 4096}, "4K", seed=1)
    with pytest.raises(ValueError, match=r"paired_runs: processes=0 .*processes=0"):
        S.paired_runs({**small, "processes": 1}, "4K", seed=1)
