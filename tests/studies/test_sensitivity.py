"""Sensitivity sweeps: the range finder on functions whose answer is known, the
study sweeps against the studies they vary and against the physics that fixes their direction, and
the re-costing of work cycles against a new simulation."""

import math

import numpy as np
import pytest

from pagesim.studies import cscs, mpss, power64k, sharedpt
from pagesim.studies import sensitivity as V
from pagesim.studies.findings import Findings, note_text

# --------------------------------------------------------------------------- the range finder


def test_range_of_a_line_is_found_to_the_resolution():
    h = V.holding_range(lambda x: {"y": x}, np.round(np.arange(0, 1.01, 0.1), 2), (0.33, 0.57), key="y", parameter="x", resolution=0.001)
    [(lo, hi)] = h.intervals
    assert 0.33 <= lo <= 0.33 + 0.001 and 0.57 - 0.001 <= hi <= 0.57
    assert h.contains(0.4) and not h.contains(0.3) and not h.contains(0.6)
    assert h.table["holds"].tolist() == [0.33 <= y <= 0.57 for y in h.table["y"]]
    assert h.text().startswith(f"x {lo:g}..{hi:g} of the 0..1 swept; edges to within 0.001")


def test_a_band_between_two_swept_values_is_found():
    # 0 and 1 are both outside, on opposite sides: the band is found inside the gap
    h = V.holding_range(lambda x: {"y": 10 * x}, [0, 1], (4.2, 4.3), key="y", parameter="x", resolution=1e-4)
    [(lo, hi)] = h.intervals
    assert 0.42 <= lo <= hi <= 0.43 and hi - lo > 0.0095
    # without refinement the sweep says honestly that no swept value holds
    h0 = V.holding_range(lambda x: {"y": 10 * x}, [0, 1], (4.2, 4.3), key="y", parameter="x")
    assert h0.intervals == [] and h0.text() == "no x in the 0..1 swept"


def test_quantum_keeps_the_parameter_on_its_grid():
    h = V.holding_range(lambda x: {"y": x}, [8, 64, 128], (-math.inf, 70), key="y", parameter="text", unit=" MiB", quantum=4)
    assert all(x % 4 == 0 for x in h.table["text"])
    assert h.intervals == [(8, 68)] and h.text() == "text 8..68 MiB of the 8..128 MiB swept; edges to within 4 MiB"


def test_two_ranges_and_single_points():
    h = V.holding_range(lambda x: {"y": abs(x)}, [-3, -2, -1, 0, 1, 2, 3], (2, 2), key="y", parameter="x")
    assert h.intervals == [(-2, -2), (2, 2)] and h.range_text() == "-2 and 2"


def test_range_finder_errors():
    with pytest.raises(ValueError, match="low edge"):
        V.holding_range(lambda x: {"y": x}, [0, 1], (1, 0), key="y", parameter="x")
    with pytest.raises(KeyError, match="returned no 'y'"):
        V.holding_range(lambda x: {"z": x}, [0, 1], (0, 1), key="y", parameter="x")
    with pytest.raises(RuntimeError, match="max_evals"):
        V.holding_range(lambda x: {"y": x}, [0, 1], (0.5, 0.5), key="y", parameter="x", resolution=1e-9, max_evals=10)
    with pytest.raises(ValueError, match="resolution"):
        V.holding_range(lambda x: {"y": x}, [0, 1], (0, 1), key="y", parameter="x", resolution=0)


def test_from_table_reuses_the_sweep():
    calls = []
    h = V.holding_range(lambda x: calls.append(x) or {"y": x, "z": -x}, [0, 1, 2, 3], (1, 2), key="y", parameter="x")
    n = len(calls)
    g = V.from_table(h, "z", (-3, -2))
    assert len(calls) == n and g.intervals == [(2, 3)]


def test_alignment_rule():
    sizes = [k << 10 for k in range(512, 2049, 32)]
    assert V.alignment_rule(sizes, [s % (64 << 10) != 0 for s in sizes]) == 64 << 10
    assert V.alignment_rule(sizes, [s % (128 << 10) != 0 for s in sizes]) == 128 << 10
    assert V.alignment_rule(sizes, [s < (1 << 20) for s in sizes]) is None


# --------------------------------------------------------------------------- findings and report


def test_holds_for_attaches_the_range_to_a_recorded_finding():
    F = Findings("x", "doc")
    f = F.measured("m", "gain", "s", (17, 33), 60, rel=0.5, unit="%")
    assert f.limits == (8.5, 49.5)
    F.holds_for("m", "work_cycles 26..67 of the 1..1000 swept")
    assert F.get("m").sensitivity.startswith("work_cycles") and F.get("m").verdict == "direction"
    assert "Holds for work_cycles 26..67" in F.table(full=True).loc[0, "note"]
    with pytest.raises(KeyError, match="no finding 'nope'"):
        F.holds_for("nope", "x 1..2")
    with pytest.raises(ValueError, match="non-empty"):
        F.holds_for("m", " ")
    assert note_text("a reason", "x 1..2") == "a reason. Holds for x 1..2."
    assert note_text("a reason.", "") == "a reason."
    assert note_text("", "x 1") == "Holds for x 1."


def test_report_shows_the_sensitivity():
    from pagesim.validation.report import render

    rec = {
        "notebook": "99_x.ipynb",
        "status": "ok",
        "seconds": 1,
        "findings": [
            {
                "id": "a",
                "finding": "f",
                "source": "s",
                "document": "1",
                "simulation": "2",
                "verdict": "direction",
                "why": "set by a parameter",
                "sensitivity": "p 0.45..0.55 of the 0.2..0.8 swept",
            }
        ],
    }
    assert "set by a parameter. Holds for p 0.45..0.55 of the 0.2..0.8 swept." in render([rec])


def test_sweep_plot_draws_band_mark_and_ranges():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    from pagesim.teaching import plotting

    df = pd.DataFrame({"x": [1, 2, 3, 4], "y": [10, 20, 30, 40], "holds": [False, True, True, False]})
    ax = plotting.sweep(
        df, "x", "y", band=[(15, math.inf, "above 15"), (25, 25, "figure")], mark=2.5, intervals=[(2, 3)], holds="holds", xlabel="x (units)", ylabel="y (%)"
    )
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert {"above 15", "figure", "where the finding holds", "this notebook's value", "finding holds", "finding fails"} <= set(labels)
    assert ax.get_xlabel() == "x (units)" and ax.get_ylabel() == "y (%)"
    plt.close("all")


# --------------------------------------------------------------------------- 01: hot fraction


def test_jbb_point_is_the_study_run_at_its_own_hot_fraction():
    runs = power64k.erat_runs(quick=True).set_index(["workload", "page"])
    hf = power64k.WORKLOADS["SPECjbb2005"]["quick"]["hot_fraction"]
    p = power64k.jbb_point(hf, quick=True)
    assert p["D-ERAT misses 4K"] == runs.loc[("SPECjbb2005", "4K"), "derat_misses"]
    assert p["D-ERAT misses 64K"] == runs.loc[("SPECjbb2005", "64K"), "derat_misses"]


def test_jbb_reduction_grows_with_the_hot_fraction_and_the_range_holds_the_default():
    # physics: the 4 MiB live set fits the data ERAT with 64 KB pages, not with 4 KB; the cold
    # references miss with both. More references into the live set: a larger reduction.
    doc = (34.7, 36.3)
    h = power64k.jbb_hot_fraction((doc[0] - 5, doc[1] + 5), quick=True, values=[0.2, 0.35, 0.5, 0.65, 0.8])
    red = h.table["reduction %"].tolist()
    assert all(b > a for a, b in zip(red, red[1:]))
    [(lo, hi)] = h.intervals
    default = power64k.WORKLOADS["SPECjbb2005"]["quick"]["hot_fraction"]
    assert lo < default < hi and 0.35 < lo and hi < 0.65
    assert h.text().startswith(f"hot_fraction {lo:.3g}..{hi:.3g} of the 0.2..0.8 swept")


# --------------------------------------------------------------------------- 02: plane size, MD work


def test_small_pages_win_exactly_when_the_planes_fit_the_l2_tlb_sets():
    h = cscs.solver_plane_sizes(quick=True, sizes=[k << 10 for k in (960, 992, 1024, 1040, 1056, 1088)])
    t = h.table.set_index("plane KiB")
    assert t.loc[1040, "holds"] and not t.loc[1024, "holds"]  # the notebook's plane, and 1 MiB
    fits = t["most planes in one set"] <= t["L2 TLB ways"]
    assert (t["holds"] == fits).all()
    assert (t.loc[fits, "walks 4K"] < t.loc[~fits, "walks 4K"].min()).all()
    text = cscs.solver_text(h)
    assert text.startswith("plane sizes that are not multiples of 64 KiB: 3 of the 6 swept (sizes from 960 to 1088 KiB)")


def test_recosting_equals_a_new_simulation():
    from pagesim.engine.simulate import simulate

    kw = dict(atoms=4096, atom_bytes=256)
    r = cscs.small_page_change("opteron-k8", "md", work_cycles=cscs.MD_WORK, **kw)
    for page, col in (("4K", "T_small"), ("2M", "T_large")):
        ds = simulate("opteron-k8", "md", page_size=page, work_cycles=37.0, **kw)
        assert V.recost(r[col], cscs.MD_WORK, r["accesses"], 37.0) == pytest.approx(cscs.steady_cycles(ds), rel=1e-12)


def test_md_gain_falls_with_work_and_the_range_is_where_it_is_in_band():
    # a 4 MiB MD fits the eight 2 MB entries: large pages win here (a negative change), which is
    # as good a case as any for the dilution and the range
    row = cscs.small_page_change("opteron-k8", "md", atoms=16384, atom_bytes=256, work_cycles=cscs.MD_WORK)
    band = (-40.0, -5.0)
    h = V.md_work(row, band, cscs.MD_WORK)
    g = h.table["small_page_change_pct"].tolist()
    assert all(abs(b) < abs(a) for a, b in zip(g, g[1:]))  # more work per access dilutes the translation cost
    at_default = h.table.set_index("work_cycles").loc[cscs.MD_WORK, "small_page_change_pct"]
    assert at_default == pytest.approx(row["small_page_change_pct"], rel=1e-12)
    assert h.contains(cscs.MD_WORK) == (band[0] <= at_default <= band[1])
    [(lo, hi)] = h.intervals
    for w, inside in ((lo, True), (hi, True), (lo - 0.5, False), (hi + 0.5, False)):
        ts = V.recost(row["T_small"], cscs.MD_WORK, row["accesses"], w)
        tl = V.recost(row["T_large"], cscs.MD_WORK, row["accesses"], w)
        assert (band[0] <= 100 * (tl - ts) / ts <= band[1]) == inside


# --------------------------------------------------------------------------- 03: text size, S.WORK


def test_text_finding_holds_up_to_the_4m_itlb_reach():
    from pagesim.model.machines import machine

    m = machine("ultrasparc-iii-cu")
    reach_mib = sum(s.entries for s in m.chain("instr", 4 << 20)) * 4
    h = mpss.text_sizes(quick=True, values=[8, 32, 64, 128, 256])
    t = h.table.set_index("text")
    m4 = t["iTLB misses 4M"].tolist()
    assert all(b >= a for a, b in zip(m4, m4[1:]))  # a larger text needs more 4M pages than the iTLB holds
    [(lo, hi)] = h.intervals
    assert lo == 8 and reach_mib <= hi < 2 * reach_mib and h.contains(64)
    assert all(t.loc[x, "holds"] == (t.loc[x, "iTLB misses 4M"] < t.loc[x, "iTLB misses 8K"] / 10) for x in t.index)


def test_trapstat_work_recosting_equals_a_new_simulation(monkeypatch):
    ba = mpss.trapstat_before_after(accesses=20_000)
    h = mpss.trapstat_work(ba, (41.2, 51.2), values=[20, 100, 400])
    pct = h.table.set_index("S.WORK")
    monkeypatch.setattr(mpss, "WORK", 400.0)
    redo = mpss.trapstat_before_after(accesses=20_000)
    for run in ("before", "after"):
        assert pct.loc[400, f"%tim {run}"] == pytest.approx(mpss.total_pct(redo[run][1]), rel=1e-9)
    s = pct["%tim before"].tolist()
    assert s[0] > s[1] > s[2]


# --------------------------------------------------------------------------- 05: database size


def test_database_size_for_a_figure_matches_the_closed_form():
    # the uniform model: reduction = freed / (D - pool) once D > pool + freed
    pool, freed, gib = 5.0 * 2**30, 1.6 * 2**30, 2**30
    h = sharedpt.database_sizes(pool, freed, (22.95, 23.05))
    [(lo, hi)] = h.intervals
    exact = (pool + freed / 0.23) / gib
    assert lo - 0.01 <= exact <= hi + 0.01
    r = h.table["disk I/O reduction %"].tolist()
    assert all(b <= a for a, b in zip(r, r[1:]))  # a larger database: the same pool growth buys less
