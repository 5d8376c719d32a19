"""Notebook 01 as a lesson: every numbered section draws a figure from the study, the figures show
what their section's findings are about, and the findings the study records for a section are the
ones the notebook's cells used to record (ids, verdicts, notes)."""

import re

import matplotlib
import nbformat
import pandas as pd
import pytest

import pagesim.sources.datasets as D
from pagesim.studies import power64k as S
from pagesim.studies.findings import Findings
from pagesim.system.pagecache import file_sizes, internal_fragmentation
from pagesim.validation.notebooks import notebooks_dir

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

NB = notebooks_dir() / "01_power_64k.ipynb"


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def doc():
    return D.load("power64k_results")


@pytest.fixture(scope="module")
def facts():
    return D.load("power64k_facts").set_index("quantity")


def sections():
    """{section heading: the code of its cells}, for the numbered sections before 'What you learned'."""
    nb = nbformat.read(NB, as_version=4)
    out, current = {}, None
    for c in nb.cells:
        if c.cell_type == "markdown" and c.source.startswith("## "):
            head = c.source.splitlines()[0]
            if head.startswith("## What you learned"):
                break
            current = head if re.match(r"## \d", head) else None
            if current:
                out[current] = ""
        elif c.cell_type == "code" and current:
            out[current] += c.source + "\n"
    return out


def test_every_section_draws_a_figure():
    found = sections()
    assert len(found) == 8, list(found)
    for head, code in found.items():
        assert re.search(r"\b(S\.plot_\w+|MH\.plot)\(", code) and "plt.show()" in code, f"{head}: no figure"


def test_every_section_records_its_findings_in_one_cell():
    nb = nbformat.read(NB, as_version=4)
    record = [c.source for c in nb.cells if c.cell_type == "code" and "S.record_" in c.source]
    assert len(record) == 7 and all(len(s.splitlines()) <= 3 for s in record)


def test_coverage_figure_shows_the_documents_shares(facts):
    c = S.coverage()
    shares = S.coverage_shares(c).set_index(["memory", "page"])["share %"]
    assert round(shares["16 GB", "4K"], 2) == facts.loc["share of a 16GB system the TLB maps with 4KB pages", "value_low"]
    assert round(shares["1 GB", "4K"], 1) == facts.loc["share of a 1GB system the TLB maps with 4KB pages", "value_low"]
    assert shares["1 GB", "64K"] == pytest.approx(16 * shares["1 GB", "4K"])
    fig = S.plot_coverage(c)
    labels = [t.get_text() for t in fig.axes[0].texts]
    assert "0.781%" in labels and "12.5%" in labels, labels


def test_section_1_records_what_the_notebook_did(facts):
    F = Findings("01_power_64k", "000_1774b52266f446e5.txt")
    shown = S.record_coverage(F, S.coverage(), facts)
    assert list(shown.index) == ["coverage-entries", "coverage-8mb", "coverage-16g", "coverage-1g", "coverage-16x"]
    assert set(shown["verdict"]) == {"arithmetic"}
    assert F.get("coverage-16x").why == "64 KiB / 4 KiB"


def test_fragmentation_figure_and_findings(facts):
    curve = S.unused_by_file_size().set_index(["file KiB", "page"])["unused %"]
    assert curve[3.0, "4K"] == pytest.approx(25.0) and round(curve[3.0, "64K"]) == 95
    assert curve[64.0, "64K"] == 0.0 and curve[1.0, "64K"] == pytest.approx(100 * 63 / 64)
    mix = internal_fragmentation(file_sizes({"1K": 50_000, "3K": 50_000}), ["4K", "64K"], memory="1G")
    fig = S.plot_fragmentation(mix)
    assert len(fig.axes) == 2
    F = Findings("01_power_64k", "000_1774b52266f446e5.txt")
    shown = S.record_fragmentation(F, internal_fragmentation(file_sizes("3K", 1), ["4K", "64K"]), facts)
    assert list(shown.index) == ["frag-4k", "frag-64k"] and list(shown["simulation"]) == ["25", "95.3"]


def test_fault_figure_labels_each_mode():
    f = {"4K": {"faults": 16, "prefaulted": 0}, "64K": {"faults": 1, "prefaulted": 0}, "4K, 64K emulation": {"faults": 1, "prefaulted": 15}}
    waste = pd.DataFrame(
        {
            "touches": [16, 256],
            "faults (4K)": [16, 254],
            "faults (emulation)": [16, 200],
            "prefaulted": [240, 2900],
            "never touched": [239, 2700],
            "wasted KiB": [956, 10800],
        }
    )
    fig = S.plot_faults(f, waste)
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert texts == ["16 faults", "1 fault", "1 fault + 15 prefaulted"]


def test_stream_figure_marks_both_systems(doc):
    counts = {"bytes": 3 * (64 << 20), "arrays": 3, "restarts": {"4K": 3 * 16384, "64K": 3 * 1024}}
    pf = S.prefetch_table(counts=counts)
    sysgain = S.stream_systems(counts)
    curve = S.stream_curve(counts).set_index("streams per core")["gain %"]
    assert curve[3] == pytest.approx(sysgain.loc["Power 575", "gain %"]) and curve[6] == pytest.approx(sysgain.loc["JS22", "gain %"])
    fig = S.plot_stream(pf, counts, sysgain, doc)
    legend = [t.get_text() for t in fig.axes[1].get_legend().get_texts()]
    assert "Power 575 document" in legend and "JS22 simulated (6 streams)" in legend


def test_speedup_figure_shows_the_conclusions_span(doc, facts):
    tsum = pd.DataFrame([{"workload": wl, "system": sy, "throughput_improvement_pct": 10.0} for wl in ("Linpack", "SPECjbb2005") for sy in S.SYSTEMS])
    assert S.conclusion_span(facts) == (11.0, 21.0)
    fig = S.plot_speedups(tsum, doc, span=S.conclusion_span(facts))
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert legend[0] == "the Conclusions' 11-21%"
    assert len(fig.axes[0].get_xticklabels()) == 4
