"""Verdicts say no more than the simulation shows: one band per system, each simulated figure counted
once, robustness to modelling choices, failures as contradicted, checks on this machine apart."""

import pytest

from pagesim.studies.findings import FindingFailed, Findings
from pagesim.validation.report import figures, headline, render


def _rec(F, notebook="01_x.ipynb"):
    from dataclasses import asdict

    return {"notebook": notebook, "status": "ok", "document": F.document, "findings": [asdict(f) for f in F.items]}


def test_each_system_is_judged_against_its_own_band():
    """JS22 6.3% and Power 575 56.9% with one simulated 30.1%: a merged band would hold it; per
    system it is 4.8x JS22's figure, so the finding is direction with both ratios shown."""
    F = Findings("x", "doc")
    f = F.measured("stream", "STREAM gain", "s", {"JS22": 6.3, "Power 575": 56.9}, {"JS22": 30.1, "Power 575": 30.1}, rel=0.5, unit="%")
    assert f.verdict == "direction"
    assert [r["verdict"] for r in f.rows] == ["direction", "within"]
    assert f.band == "JS22 document +-50%: 3.15..9.45%; Power 575 document +-50%: 28.45..85.35%"
    assert "JS22 4.78" in F.table().loc[0, "sim / doc"] and "Power 575 0.53" in F.table().loc[0, "sim / doc"]
    g = F.measured("lin", "Linpack", "s", {"JS22": 11.3, "Power 575": 14.4}, {"JS22": 8.5, "Power 575": 7.0}, rel=0.5, unit="%")
    assert g.verdict == "direction" and round(g.ratio, 2) == 0.49  # Power 575 at 0.49x, outside 7.2..21.6
    h = F.measured("ok", "both in", "s", {"a": 10, "b": 20}, {"a": 11, "b": 19}, rel=0.5)
    assert h.verdict == "within" and h.figures == 2
    k = F.measured("sign", "one flips", "s", {"a": 10, "b": 20}, {"a": -1, "b": 19}, rel=0.5)
    assert k.verdict == "contradicted"
    with pytest.raises(ValueError, match="same rows"):
        F.measured("bad", "rows differ", "s", {"a": 1}, {"b": 1}, rel=0.5)
    with pytest.raises(ValueError, match="same rows"):
        F.measured("bad2", "one simulated figure for rows", "s", {"a": 1, "b": 2}, 1.5, rel=0.5)


def test_a_restated_figure_is_counted_once():
    F = Findings("x", "doc")
    F.measured("faster", "throughput", "s", 12, 11, rel=0.5)
    F.measured("ipc", "IPC moves as throughput", "s", 11, 11, rel=0.5, reuses="faster")
    assert "restates the simulated figure of faster" in F.get("ipc").why
    both = F.measured("conc2", "conclusion over two", "s", 12, 11, rel=0.5, reuses=("faster", "ipc"))
    assert both.reuses == "faster, ipc" and "figures of faster, ipc" in both.why
    with pytest.raises(ValueError, match="names no finding"):
        F.measured("conc3", "conclusion", "s", 15, 11, rel=0.5, reuses=("faster", "nope"))
    with pytest.raises(ValueError, match="names no finding"):
        F.measured("conc", "conclusion", "s", 15, 11, rel=0.5, reuses="nope")
    h = headline([_rec(F)])
    assert "counted once: 1 (1 within)" in h and "1 of the 1 that are checked" in h and "ipc -> faster" in h
    assert figures([_rec(F)])[0]["figures"] == 3  # the restating finding still carries its own document figure


def test_robust_needs_the_whole_x05_x2_range_in_band():
    F = Findings("x", "doc")
    F.measured("md", "MD gain", "s", (17, 33), 9.5, rel=0.5, unit="%", choices=("working set MiB",))
    with pytest.raises(FindingFailed, match="never swept"):
        F.save("")
    with pytest.raises(ValueError, match="reach 16..64"):
        F.robust("md", "working set MiB", 32, {24: 5.0, 32: 9.5, 48: 20.0})
    f = F.robust("md", "working set MiB", 32, {16: -11.6, 20: -11.6, 32: 9.5, 64: 26.4})
    assert f.verdict == "within" and f.robust is False and f.label == "within"
    assert "outside at 16 (-11.6); 20 (-11.6)" in f.robustness[0]
    G = Findings("y", "doc")
    G.measured("a", "gain", "s", 10, 10, rel=0.5, choices=("hot",))
    g = G.robust("a", "hot", 0.5, {0.25: 9, 0.5: 10, 1.0: 12})
    assert g.robust and g.label == "within (robust)"
    G.save("")
    rows = G.measured("r", "rows", "s", {"a": 10, "b": 20}, {"a": 10, "b": 20}, rel=0.5)
    assert G.robust("r", "w", 2, {1: {"a": 9, "b": 21}, 2: {"a": 10, "b": 20}, 4: {"a": 14, "b": 29}}).robust
    assert not G.robust("r", "z", 2, {1: {"a": 9, "b": 21}, 2: {"a": 10, "b": 20}, 4: {"a": 16, "b": 29}}).robust
    assert rows.label == "within"
    with pytest.raises(ValueError, match="say why"):
        G.robust("a", "hot", 0.5, {0.25: 9, 0.5: 10, 0.9: 12}, span=(0.25, 0.9))
    h = headline([_rec(G)])
    assert "1 within and robust" in h and "1 within but not robust" in h
    assert "| within (robust) |" in render([_rec(G)])


def test_choices_moved_together_are_shown_beside_the_one_at_a_time_sweeps():
    """together() records how far corners of several choices take a figure, naming the lowest and
    highest corner and how many leave the band; the verdict and 'robust' stay as the one-at-a-time
    sweeps set them."""
    F = Findings("x", "doc")
    F.measured("ra", "RA", "s", (-80, -40), -67.4, band=(-80, -40), unit="%", choices=("mlp",))
    F.robust("ra", "mlp", 4, {2: -55.6, 4: -67.4, 8: -75.4})
    f = F.together("ra", "mlp and memory", {"mlp 2, memory x0.5": -38.9, "mlp 8, memory x2": -80.9, "mlp 4, memory x1": -67.4})
    assert f.robust and f.label == "within (robust)"
    text = f.robustness[-1]
    assert text.startswith("mlp and memory moved together, each at either end of its range (3 corners): from -80.9 (mlp 8, memory x2) to -38.9")
    assert text.endswith("outside its band at 2 of the 3")
    assert F.together("ra", "a", {"x": -50, "y": -60}).robustness[-1].endswith("in its band at every corner")
    with pytest.raises(ValueError, match="at least 2 corners"):
        F.together("ra", "a", {"x": -50})
    with pytest.raises(ValueError, match="the run at x"):
        F.together("ra", "a", {"x": float("nan"), "y": 1})
    F.measured("rows", "rows", "s", {"a": 10}, {"a": 10}, rel=0.5)
    with pytest.raises(ValueError, match="one figure"):
        F.together("rows", "a", {"x": 1, "y": 2})
    F.measured("fixed", "a sign the set-up fixes", "s", -10, -12, rel=0.5, unit="%", sign_fixed=True)
    with pytest.raises(FindingFailed, match="the corner b gives the other sign"):
        F.together("fixed", "a", {"a": -3, "b": 2})
    with pytest.raises(ValueError, match="choices must name the choices"):
        F.together("ra", " ", {"x": -50, "y": -60})
    # a corner just outside the band is not rounded onto its edge
    edge = F.together("ra", "a", {"p": -80.0000001, "q": -39.9999999}).robustness[-1]
    assert "from -80.0000001 (p) to -39.9999999 (q); outside its band at 2 of the 2" in edge
    edge = F.together("ra", "a", {"p": -80.0000000001, "q": -39.99999999999}).robustness[-1]
    assert "from -80.0000000001 (p) to -39.99999999999 (q)" in edge


def test_a_direction_names_where_a_swept_choice_turns_its_sign():
    F = Findings("x", "doc")
    F.measured("d", "small pages worse", "s", -1, -6.6, rel=0.5, unit="%", choices=("order",))
    assert F.get("d").verdict == "direction"
    held = F.robust("d", "order", 1024, {512: -6.4, 1024: -6.6, 2048: -4.0})
    assert "the document's sign at every value run" in held.robustness[-1]
    turned = F.robust("d", "work", 2, {1: -3.0, 2: -6.6, 4: 0.0, 3: 2.5})
    assert "the other sign, or none, at 3, 4 (so its direction rests on the value chosen)" in turned.robustness[-1]
    R = Findings("y", "doc")
    R.measured("r", "rows", "s", {"a": 10, "b": -20}, {"a": 40, "b": -50}, rel=0.5)
    assert R.get("r").verdict == "direction"
    rows = R.robust("r", "w", 2, {1: {"a": 30, "b": -60}, 2: {"a": 40, "b": -50}, 4: {"a": 35, "b": 5}})
    assert "the other sign, or none, at 4" in rows.robustness[-1]


def test_failures_are_contradicted_not_not_reproduced():
    F = Findings("x", "doc")
    assert F.measured("t9", "throughput +9%", "s", 9, 0.0, rel=0.5, unit="%").verdict == "contradicted"
    f = F.contradicted("walks", "walks fall 27%", "s", "27%", "unchanged", why="TLB entries stay per process in the model")
    assert f.verdict == "contradicted"
    with pytest.raises(ValueError, match="say why"):
        F.contradicted("w2", "x", "s", 1, 2, why="")


def test_host_checks_are_counted_apart():
    F = Findings("04_x", "doc")
    F.exact("faults", "faults", "s", 256, 256)
    F.exact("host-a", "real faults", "this machine", 16384, 16384, host=True)
    h = headline([_rec(F, "04_x.ipynb")])
    assert "counted once: 1 (1 exact)" in h and "Apart: 1 finding measured on the machine" in h
    G = Findings("07_your_machine", "this machine", host=True)
    assert G.exact("k", "k", "s", 1, 1).host
    # the per-notebook table: the verdict columns count the document's findings only, host checks in their own column
    F.measured("gain", "a gain", "s", 10, 30, rel=0.5)
    F.measured("again", "the gain restated", "s", 10, 30, rel=0.5, reuses="gain")
    row = next(line for line in render([_rec(F, "04_x.ipynb")]).splitlines() if line.startswith("| 04_x.ipynb | ok"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    # exact, within (robust), within, direction, contradicted, not reproduced, arithmetic, calibrated, restated, model only, host checks
    assert cells[-11:] == ["1", "0", "0", "1", "0", "0", "0", "0", "1", "0", "1"], row


def test_figures_per_document():
    F = Findings("02_x", "001.txt")
    F.measured("scaling", "16 rows", "s", {i: 10 for i in range(4)}, {0: 10, 1: 11, 2: 30, 3: 9}, rel=0.5)
    F.not_reproduced("fft", "FFT", "s", "10%", "not simulated", why="no FFT", figures=1)
    F.exact("count", "exact count", "s", 1, 1)
    x = figures([_rec(F, "02_x.ipynb")])[0]
    # three rows inside their bands, one far outside: the finding is direction, so none counts as within
    assert (x["figures"], x["within"], x["robust"]) == (5, 0, 0)
    F.measured("two", "both in", "s", {"a": 10, "b": 20}, {"a": 11, "b": 19}, rel=0.5)
    assert "| 02_x.ipynb | 001.txt | 7 | 2 (29%) | 0 (0%) |" in render([_rec(F, "02_x.ipynb")])
    with pytest.raises(ValueError, match="figures must be a whole number"):
        F.exact("c2", "x", "s", 1, 1, figures=-1)


def test_a_zero_change_against_a_drop_shows_no_negative_zero():
    from pagesim.studies.findings import ratio_text

    F = Findings("x", "doc")
    f = F.measured("walks", "walks fall", "s", {"ITLB": -27, "DTLB": -26}, {"ITLB": 0.0, "DTLB": 0.0}, rel=0.5, unit="%")
    assert f.verdict == "contradicted" and ratio_text({"rows": f.rows}) == "ITLB 0.00; DTLB 0.00"


def test_a_change_under_a_tenth_of_the_documents_is_no_change():
    F = Findings("x", "doc")
    f = F.measured("tp", "throughput +3%", "s", 3, 0.17, rel=0.5, unit="%")
    assert f.verdict == "contradicted" and "under a tenth of the document's change (0.06x): counted as no change" in f.why
    g = F.measured("rows", "misses fall", "s", {"L1D": -2, "L2": -6.5}, {"L1D": -2.93, "L2": -0.17}, rel=0.5, unit="%", why="x")
    assert g.verdict == "contradicted" and [r["verdict"] for r in g.rows] == ["within", "contradicted"] and "L2: under a tenth" in g.why
    assert F.measured("big", "a tenth or more", "s", 3, 0.4, rel=0.5).verdict == "direction"
    # a level a tenth of the document's is an order of magnitude off too, said as such (not "no change")
    lv = F.measured("level", "a residual share", "s", 0.2, 0.015, rel=0.5, change=False)
    assert lv.verdict == "contradicted" and "under a tenth of the document's figure (0.07x): an order of magnitude off" in lv.why
    # a level outside its band has no sign to agree on: contradicted, not direction (a change keeps its direction)
    lv2 = F.measured("level2", "a residual share", "s", 0.2, 0.075, rel=0.5, change=False)
    assert lv2.verdict == "contradicted" and "a level (a share, a residual) has no sign to agree on" in lv2.why and "(0.37x)" in lv2.why
    assert F.measured("chg", "a change", "s", 0.2, 0.075, rel=0.5).verdict == "direction"


def test_predictions_of_the_model_are_counted_apart():
    F = Findings("04_x", "doc")
    F.exact("faults", "faults", "s", 256, 256)
    F.not_reproduced("thp-fallback", "THP without compaction", "(model)", "not measured", "256 faults", why="a prediction", model=True)
    h = headline([_rec(F, "04_x.ipynb")])
    assert "counted once: 1 (1 exact)" in h and "1 prediction of the model that no document figure stands beside (thp-fallback)" in h


def test_a_figure_ten_times_off_is_not_agreement():
    """A row 12.6x the document's level (kernel instructions of THP under pressure) has the same
    sign, but an order of magnitude off is contradicted, change or level; 9x stays direction."""
    F = Findings("x", "doc")
    f = F.measured("instr", "kernel instructions", "s", {"ideal": 2e5, "pressure": 2e5}, {"ideal": 1.71e5, "pressure": 2.515e6}, rel=0.5, change=False)
    assert f.verdict == "contradicted" and [r["verdict"] for r in f.rows] == ["within", "contradicted"]
    assert "pressure: more than ten times the document's figure (12.6x)" in f.why
    g = F.measured("gain", "a gain", "s", 1.0, 9.0, rel=0.5)
    assert g.verdict == "direction"
    h = F.measured("gain2", "a gain far over", "s", 1.0, 10.5, rel=0.5)
    assert h.verdict == "contradicted"


def test_the_notebook_table_shows_short_notes_and_the_report_the_whole():
    """F.table() cuts each note to its first clause that is not the band's description (the report
    keeps the whole note); F.table(full=True) has the band and the whole note."""
    from pagesim.studies.findings import short_note

    note = "band: each system's figure +-50% (a stated default); timing model, nothing fitted to it. Swept: x"
    assert short_note(note) == "timing model, nothing fitted to it (more in the report)"
    assert short_note("64 KiB / 4 KiB") == "64 KiB / 4 KiB"
    F = Findings("x", "doc")
    F.measured("g", "a gain", "s", 10, 11, rel=0.5, why=note)
    short, full = F.table(), F.table(full=True)
    assert "band" not in short.columns and short.loc[0, "note"].startswith("timing model")
    assert full.loc[0, "band"] and full.loc[0, "note"].startswith("band: each system's figure")


def test_a_verdict_below_within_that_a_sweep_turns_says_so():
    """A direction or contradicted finding that lands in its band at another value of a modelling
    choice says its verdict rests on the value chosen (the sweep does not leave it looking settled)."""
    F = Findings("x", "doc")
    F.measured("e", "share left", "s", 1.6, 22.1, rel=0.5, unit="%", choices=("mc",))
    f = F.robust("e", "mc", 480, {240: 58.7, 480: 22.1, 960: 1.1})
    assert f.verdict == "not reproduced"  # on both sides of 1.6 over the sweep
    assert "in its band at 960 (so this verdict, not within, rests on the value chosen)" in f.robustness[0]
    g = F.robust("e", "other", 2, {1: 30.0, 2: 22.1, 4: 20.0})
    assert "rests on the value chosen" not in g.robustness[-1] and "in its band at none" in g.robustness[-1]


def test_a_row_that_a_sweep_puts_in_its_band_says_so():
    """One system's row enters its band at another value of a choice while the other row stays out:
    the finding stays below within, and the note names the row whose verdict rests on the choice."""
    F = Findings("x", "doc")
    F.measured("e", "share left", "s", {"JS22": 3.9, "Power 575": 1.6}, {"JS22": 1.4, "Power 575": 22.1}, rel=0.5, unit="%", choices=("mc",))
    f = F.robust("e", "mc", 480, {240: {"JS22": 2.0, "Power 575": 58.7}, 480: {"JS22": 1.4, "Power 575": 22.1}, 960: {"JS22": 0.6, "Power 575": 1.1}})
    assert f.verdict != "within" and "in its band at none" in f.robustness[0]
    assert "Power 575 in its band at 960" in f.robustness[0] and "JS22 in its band at 240" in f.robustness[0]
    assert "so that row's verdict rests on the value chosen" in f.robustness[0]


def test_a_sign_the_set_up_fixes_is_no_evidence():
    """A model that cannot give the other sign earns nothing for the sign: outside the band it is
    contradicted, with its ratio; inside it stays within (the size is the evidence)."""
    F = Findings("x", "doc")
    f = F.measured("tput", "throughput up 9%", "s", 9, 27.5, rel=0.5, unit="%", sign_fixed=True)
    assert f.verdict == "contradicted" and "fixes the sign" in f.why and "3.06x" in f.why
    assert F.measured("tput2", "same, sign free", "s", 9, 27.5, rel=0.5, unit="%").verdict == "direction"
    assert F.measured("tput3", "in band", "s", 9, 10, rel=0.5, unit="%", sign_fixed=True).verdict == "within"
    rows = F.measured("rows", "two rows", "s", {"a": 10, "b": 20}, {"a": 11, "b": 50}, rel=0.5, sign_fixed=True)
    assert rows.verdict == "contradicted" and [r["verdict"] for r in rows.rows] == ["within", "contradicted"]
    with pytest.raises(ValueError, match="sign_fixed must be True or False"):
        F.measured("bad", "x", "s", 9, 10, rel=0.5, sign_fixed="yes")


def test_a_sign_the_set_up_fixes_turns_every_row_outside_its_band():
    F = Findings("x", "doc")
    f = F.measured("i", "f", "s", {"a": 10, "b": 10, "c": 10}, {"a": 12, "b": 30, "c": -3}, rel=0.5, sign_fixed=True)
    assert f.verdict == "contradicted" and [r["verdict"] for r in f.rows] == ["within", "contradicted", "contradicted"]


def test_a_document_range_with_both_signs_makes_no_sign_claim():
    F = Findings("x", "doc")
    assert F.measured("both", "f", "s", (-5, 15), 40, rel=0.5).verdict == "contradicted"
    assert F.measured("in", "f", "s", (-5, 15), 10, rel=0.5).verdict == "within"


@pytest.mark.parametrize(
    "kw,err,match",
    [
        (dict(band=(12, 8)), ValueError, r"band=\(12, 8\): low above high"),
        (dict(band=(20, 30)), ValueError, r"does not hold the document's figure 10"),
        (dict(band=(8, 12, 99)), ValueError, r"must be \(low, high\)"),
        (dict(points=-5), ValueError, r"points=-5 must be a positive width"),
        (dict(rel=-0.5), ValueError, r"rel=-0.5 must be a fraction"),
        (dict(rel=5), ValueError, r"rel=5 must be a fraction .* reach the other sign"),
        (dict(rel=True), ValueError, r"rel=True must be a fraction"),
    ],
)
def test_a_band_that_could_say_more_than_the_numbers_is_refused(kw, err, match):
    with pytest.raises(err, match=match):
        Findings("x", "doc").measured("i", "f", "s", 10, 12, **kw)


def test_a_document_and_simulation_must_be_numbers():
    F = Findings("x", "doc")
    with pytest.raises(ValueError, match=r"document=\(5, 10, 15\) must be one figure or a range"):
        F.measured("i", "f", "s", (5, 10, 15), 12, rel=0.5)
    with pytest.raises(TypeError, match="simulation must be a number, got NoneType"):
        F.measured("i", "f", "s", 10, None, rel=0.5)
    with pytest.raises(ValueError, match="band is per row"):
        F.measured("i", "f", "s", {"a": 10}, {"a": 11}, band={"b": (5, 15)})


def test_counted_in_names_a_finding_recorded_before_it_and_carries_no_figure():
    F = Findings("x", "doc")
    F.measured("d", "rows", "s", {"r1": 10, "r2": 10}, {"r1": 12, "r2": 11}, rel=0.5)
    e = F.measured("e", "the same figure", "s", 10, 11, rel=0.5, counted_in="d")
    assert e.figures == 0 and e.reuses == "d"
    with pytest.raises(ValueError, match="must name the finding"):
        F.measured("f", "x", "s", 10, 11, rel=0.5, counted_in="f")
    with pytest.raises(ValueError, match="covers none itself"):
        F.measured("g", "x", "s", 10, 11, rel=0.5, counted_in="d", figures=1)
    with pytest.raises(ValueError, match="stands beside no document figure"):
        F.measured("h", "x", "s", 10, 11, rel=0.5, model=True, reuses="d")
    m = F.measured("m", "a prediction", "s", 10, 11, rel=0.5, model=True)
    assert m.figures == 0
    rec = _rec(F)
    assert figures([rec])[0]["figures"] == 2  # d's two rows; e's figure is d's, m stands beside none
    later = F.measured("k", "judged in a later section", "s", 10, 11, rel=0.5, counted_in="rows-later")
    assert later.reuses == "rows-later"
    with pytest.raises(FindingFailed, match=r"no finding of this notebook that counts: .*k -> rows-later \(not recorded\)"):
        F.save("")  # never recorded: the figure would be counted nowhere
    F.measured("rows-later", "the rows", "s", {"r1": 10}, {"r1": 11}, rel=0.5)
    F.save("")


def test_a_chain_that_goes_round_is_counted_and_one_that_ends_counted_is_not():
    F = Findings("01_x.ipynb", "doc")
    F.measured("a", "judged in b", "s", 10, 11, rel=0.5, counted_in="b")
    F.measured("b", "judged in a", "s", 10, 11, rel=0.5, counted_in="a")
    F.measured("c", "counted", "s", 10, 11, rel=0.5)
    F.measured("d", "restates c", "s", 10, 11, rel=0.5, reuses="c")
    F.measured("e", "restates d", "s", 10, 11, rel=0.5, reuses="d")
    h = headline([_rec(F)])
    assert "counted once: 3 (3 within)" in h and "d -> c; e -> d" in h and "Counted here, as their reference names no counted finding: 2" in h
    with pytest.raises(FindingFailed, match=r"a -> b \(leads back to a\); b -> a \(leads back to b\)"):
        F.save("")


def test_a_chain_ending_at_a_finding_counted_itself_is_not_counted_again():
    """a restates b, which names a check on this machine: b counts (its reference is broken), so a,
    restating a counted finding, does not count again."""
    F = Findings("01_x.ipynb", "doc")
    F.measured("h", "host", "s", 10, 11, rel=0.5, host=True)
    F.measured("b", "restates h", "s", 10, 11, rel=0.5, reuses="h")
    F.measured("a", "restates b", "s", 10, 11, rel=0.5, reuses="b")
    h = headline([_rec(F)])
    assert "counted once: 1 (1 within)" in h and "a -> b" in h and "b -> h" in h
    with pytest.raises(FindingFailed, match=r"b -> h \(not counted\)"):
        F.save("")


def test_references_with_the_notebooks_name_resolve_and_ids_cannot_hold_separators():
    F = Findings("01_x.ipynb", "doc")
    F.measured("c", "counted", "s", 10, 11, rel=0.5)
    F.measured("r", "restates c, named with its notebook", "s", 10, 11, rel=0.5, counted_in="01_x.ipynb:c")
    F.measured("z", "names its own notebook's missing id", "s", 10, 11, rel=0.5, counted_in="01_x:zz")
    assert "counted once: 2 (2 within)" in headline([_rec(F)])
    with pytest.raises(FindingFailed, match=r"z -> 01_x:zz \(not recorded\)"):
        F.save("")
    for bad in ("p, q", "k:2", ""):
        with pytest.raises(ValueError, match="must be a non-empty text without"):
            F.measured(bad, "x", "s", 10, 11, rel=0.5)


def test_a_band_holds_the_whole_document_range_and_keeps_its_sign():
    F = Findings("x", "doc")
    with pytest.raises(ValueError, match="does not hold the document's figure 10..20"):
        F.measured("t", "f", "s", (10, 20), 40, band=(20, 40))
    with pytest.raises(ValueError, match="reaches the other sign"):
        F.measured("p", "f", "s", 2, -2, points=5)
    with pytest.raises(ValueError, match="reaches the other sign"):
        F.measured("b", "f", "s", 2, -2, band=(-1, 5))
    assert F.measured("ok", "f", "s", -40, -60, band=(-80, -40)).verdict == "within"


def test_a_restatement_of_something_not_counted_is_counted_itself():
    """A finding whose reuses= names a check on this machine, a model prediction or a finding of
    another notebook that is not there would otherwise be counted nowhere."""
    F = Findings("01_x.ipynb", "doc")
    F.measured("h", "host check", "s", 10, 11, rel=0.5, host=True)
    F.measured("m", "model only", "s", 10, 11, rel=0.5, model=True)
    F.measured("a", "restates h", "s", 10, 11, rel=0.5, reuses="h")
    F.measured("b", "restates m", "s", 10, 11, rel=0.5, reuses="m")
    F.measured("c", "names another notebook's", "s", 10, 11, rel=0.5, reuses="02_y:zz")
    other = {"notebook": "02_y.ipynb", "status": "ok", "findings": []}
    h = headline([_rec(F), other])
    assert "counted once: 3 (3 within)" in h and "Not counted again" not in h
    h = headline([_rec(F)])  # 02_y not run: its finding is taken on trust
    assert "counted once: 2 (2 within)" in h and "c -> 02_y:zz" in h


def test_a_check_on_this_machine_may_restate_another_check():
    F = Findings("07_your_x.ipynb", "this machine", host=True)
    F.measured("a", "measured here", "s", 10, 11, rel=0.5)
    F.measured("b", "restates a", "s", 10, 11, rel=0.5, reuses="a")
    assert F.unresolved() == []
    F.save("")


def test_a_sign_the_set_up_fixes_must_not_turn_in_a_sweep():
    F = Findings("x", "doc")
    f = F.measured("k", "small pages worse", "s", -1, -6.6, rel=0.5, unit="%", sign_fixed=True, choices=("tile",))
    assert f.verdict == "contradicted" and f.sign_fixed
    assert "the document's sign at every value run" in F.robust("k", "tile", 64, {32: -12.8, 64: -6.6, 128: -1.8}).robustness[-1]
    with pytest.raises(FindingFailed, match=r"recorded with sign_fixed=True, but tile at 256 gives the other sign"):
        F.robust("k", "tile", 64, {32: -12.8, 64: -6.6, 128: -1.8, 256: 0.5})
    # no change is not the other sign: a set-up that only removes a cost can remove none
    zero = F.robust("k", "ramp", 8, {4: 0.0, 8: -6.6, 16: -7.0})
    assert "the other sign, or none, at 4" in zero.robustness[-1]
    R = Findings("y", "doc")
    R.measured("r", "rows", "s", {"a": 10, "b": 20}, {"a": 30, "b": 20}, rel=0.5, sign_fixed=True)
    with pytest.raises(FindingFailed, match="at 4 gives the other sign"):
        R.robust("r", "w", 2, {1: {"a": 30, "b": 20}, 2: {"a": 30, "b": 20}, 4: {"a": 30, "b": -1}})


def test_a_restatement_says_no_more_than_the_finding_that_counts_its_figure():
    F = Findings("x", "doc")
    F.not_reproduced("src", "one fault", "s", 1, 1, why="rests on an assumption the document does not state")
    F.check("again", "one fault, needs migration", "s", 1, 1, True, kind="direction", reuses="src")
    with pytest.raises(FindingFailed, match=r"again \(direction\) -> src \(not reproduced\)"):
        F.save("")
    G = Findings("y", "doc")
    G.not_reproduced("src", "one fault", "s", 1, 1, why="rests on an assumption the document does not state")
    G.not_reproduced("again", "one fault, needs migration", "s", 1, 1, why="the same assumption", reuses="src")
    G.measured("m", "gain", "s", 10, 10, rel=0.5)
    G.measured("m2", "gain again", "s", 12, 10, rel=0.5, reuses="m")  # evidence restating evidence
    G.save("")
    # across notebooks: the report's headline names it
    A = Findings("a", "doc")
    A.not_reproduced("src", "one fault", "s", 1, 1, why="an assumption")
    B = Findings("b", "doc")
    B.check("again", "one fault", "s", 1, 1, True, kind="direction", reuses="01_a:src")
    h = headline([_rec(A, "01_a.ipynb"), _rec(B, "02_b.ipynb")])
    assert "Read with care: 1 restate a figure with a stronger verdict than the finding that counts it (again (direction) -> 01_a:src (not reproduced))" in h


def test_sign_fixed_needs_a_signed_figure_and_every_row_s_sign_is_watched():
    F = Findings("x", "doc")
    with pytest.raises(ValueError, match=r"sign_fixed=True needs a document figure with a sign.*\(0\)"):
        F.measured("a", "f", "s", 0, 0, points=5, sign_fixed=True)
    with pytest.raises(ValueError, match=r"\(-2..6\)"):
        F.measured("b", "f", "s", (-2, 6), 2, band=(-3, 8), sign_fixed=True)
    with pytest.raises(ValueError, match=r"\(B 0\)"):
        F.measured("c", "f", "s", {"A": 10, "B": 0}, {"A": 30, "B": 0}, points=1, sign_fixed=True)
    # a direction's within row that turns its sign at another value is named too
    F.measured("d", "f", "s", {"A": 10, "B": -5}, {"A": 30, "B": -5}, rel=0.5)
    t = F.robust("d", "c", 1, {0.5: {"A": 30, "B": -5}, 1: {"A": 30, "B": -5}, 2: {"A": 30, "B": 5}}).robustness[-1]
    assert "the other sign, or none, at 2" in t


def test_a_stronger_restatement_is_named_even_when_another_of_its_references_is_broken():
    A = Findings("a", "doc")
    A.contradicted("c", "x", "s", 1, 2, why="the model disagrees")
    B = Findings("b", "doc")
    B.measured("w", "x", "s", 10, 10, rel=0.5, reuses=("01_a:c", "01_a:nope"))
    h = headline([_rec(A, "01_a.ipynb"), _rec(B, "02_b.ipynb")])
    assert "w -> 01_a:nope (not recorded)" in h and "Read with care: 1 restate a figure with a stronger verdict" in h


def test_a_sweep_takes_numbers_only():
    F = Findings("x", "doc")
    F.measured("a", "gain", "s", 10, 10, rel=0.5, choices=("c",))
    for bad in (float("nan"), "10", True, None):
        with pytest.raises((TypeError, ValueError), match="the run of c at 2"):
            F.robust("a", "c", 1, {0.5: 10, 1: 10, 2: bad})


def test_a_sweep_on_both_sides_of_the_document_is_not_reproduced():
    """A figure outside its band whose runs over an unstated choice fall on both sides of the
    document's figure could be matched by picking the choice: not reproduced, not contradicted."""
    F = Findings("x", "doc")
    f = F.measured("fft", "FFT", "s", -10, -15.8, rel=0.3, unit="%")
    assert f.verdict == "contradicted" or f.verdict == "direction"
    f = F.robust("fft", "walk overlap", 1.0, {0.5: -20.0, 1.0: -15.8, 2.0: -9.6})
    assert f.verdict == "not reproduced" and "both sides of the document's figure" in f.robustness[0]
    assert "not reproduced: a modelling choice the document does not state" in f.why
    # a sweep that stays on one side leaves the verdict
    g = F.measured("g", "gain", "s", 20, 5, rel=0.5, unit="%")
    g = F.robust("g", "w", 2, {1: 4.0, 2: 5.0, 4: 9.0})
    assert g.verdict in ("direction", "contradicted") and "both sides" not in g.robustness[0]
    # a document range is reached from below: that is enough
    F.measured("rng", "range", "s", (17, 33), 5, rel=0.5, unit="%")
    assert F.robust("rng", "ws", 32, {16: 2.0, 32: 5.0, 64: 17.5}).verdict == "not reproduced"


def test_rows_on_both_sides_are_marked_and_the_finding_follows_the_rest():
    F = Findings("x", "doc")
    F.measured("erat", "left", "s", {"JS22": 3.9, "Power 575": 1.6}, {"JS22": 1.4, "Power 575": 22.1}, rel=0.5, unit="%", change=False)
    f = F.robust("erat", "entries", 128, {64: {"JS22": 1.2, "Power 575": 2.2}, 128: {"JS22": 1.4, "Power 575": 22.1}, 256: {"JS22": 13.9, "Power 575": 39.2}})
    assert [r["verdict"] for r in f.rows] == ["not reproduced", "contradicted"] and f.verdict == "contradicted"
    assert "JS22: on both sides of the document's figure" in f.robustness[0]
    f = F.robust("erat", "rows mc", 480, {240: {"JS22": 3.4, "Power 575": 58.7}, 480: {"JS22": 1.4, "Power 575": 22.1}, 960: {"JS22": 0.6, "Power 575": 1.1}})
    assert [r["verdict"] for r in f.rows] == ["not reproduced", "not reproduced"] and f.verdict == "not reproduced"
    assert "in every row outside its band" in f.why


def test_a_verdict_the_sweeps_change_is_not_also_said_to_be_contradicted():
    """The note said "...outside the band (...): contradicted. Not reproduced: ...", two verdicts at
    once: what was said of the values chosen says so."""
    F = Findings("x", "doc")
    F.measured("erat", "left", "s", {"JS22": 3.9, "Power 575": 1.6}, {"JS22": 1.4, "Power 575": 22.1}, rel=0.5, unit="%", change=False)
    assert F.get("erat").why.endswith("): contradicted. Power 575: more than ten times the document's figure (13.8x): the same sign, but not agreement")
    F.robust("erat", "entries", 128, {64: {"JS22": 1.2, "Power 575": 2.2}, 128: {"JS22": 1.4, "Power 575": 22.1}, 256: {"JS22": 13.9, "Power 575": 39.2}})
    assert "): contradicted." in F.get("erat").why  # still contradicted: Power 575 stays on one side
    f = F.robust("erat", "rows mc", 480, {240: {"JS22": 3.4, "Power 575": 58.7}, 480: {"JS22": 1.4, "Power 575": 22.1}, 960: {"JS22": 0.6, "Power 575": 1.1}})
    assert f.verdict == "not reproduced" and "): contradicted at the values chosen. Power 575" in f.why and "): contradicted." not in f.why
    f = F.robust("erat", "ways", 2, {1: {"JS22": 8.2, "Power 575": 48.3}, 2: {"JS22": 1.4, "Power 575": 22.1}, 4: {"JS22": 8.6, "Power 575": 17.8}})
    assert f.why.count("at the values chosen") == 1


def test_a_bound_is_shown_in_the_document_s_words():
    F = Findings("x", "doc")
    f = F.measured("ra", "random access", "table 2", -40, -67.4, band=(-80, -40), unit="%", said="over 40% worse")
    assert f.document == "over 40% worse (-40% the bound)" and f.verdict == "within"
    with pytest.raises(ValueError, match="said= is the document's words for one figure"):
        F.measured("rows", "r", "s", {"a": 1, "b": 2}, {"a": 1, "b": 2}, rel=0.5, said="x")
    # a row inside its band does not hold the finding back; a within is never touched
    G = Findings("y", "doc")
    G.measured("k", "kernel", "s", {"a": 200, "b": 200}, {"a": 171, "b": 2500}, rel=0.5)
    assert G.robust("k", "pressure", 1, {0.5: {"a": 171, "b": 150}, 1: {"a": 171, "b": 2500}, 2: {"a": 171, "b": 3000}}).verdict == "not reproduced"
    G.measured("w", "within", "s", 10, 11, rel=0.5, choices=("c",))
    w = G.robust("w", "c", 1, {0.5: 4.0, 1: 11.0, 2: 30.0})
    assert w.verdict == "within" and w.robust is False


def test_named_settings_follow_the_same_rules():
    F = Findings("x", "doc")
    F.measured("k", "kernel", "s", {"ideal": 200, "pressure": 200}, {"ideal": 171, "pressure": 2500}, rel=0.5)
    with pytest.raises(ValueError, match="the chosen 'scattered' among them"):
        F.settings("k", "placement", "scattered", {"caged": {"ideal": 171, "pressure": 171}}, why="w")
    with pytest.raises(ValueError, match="say why"):
        F.settings("k", "placement", "scattered", {"scattered": {"ideal": 171, "pressure": 2500}, "caged": {"ideal": 171, "pressure": 171}}, why="")
    f = F.settings("k", "placement", "scattered", {"scattered": {"ideal": 171, "pressure": 2500}, "caged": {"ideal": 171, "pressure": 171}}, why="unstated")
    assert f.verdict == "not reproduced" and "caged: ideal 171, pressure 171 (in its band)" in f.robustness[0] and f.robust is False
    G = Findings("y", "doc")
    G.measured("w", "within", "s", 10, 11, rel=0.5, choices=("placement",))
    g = G.settings("w", "placement", "a", {"a": 11.0, "b": 12.0}, why="unstated")
    assert g.label == "within (robust)" and g.swept == ("placement",)
    G.save("")


def test_only_the_x05_x2_range_can_make_a_finding_not_reproduced():
    """Runs beyond x0.5..x2 are shown, but the rule of not reproduced looks at the range alone."""
    F = Findings("x", "doc")
    F.measured("s", "scaling", "s", 30, -17.5, rel=0.5, unit="%")
    f = F.robust("s", "grid", 16, {2: -17.0, 8: -10.0, 16: -17.5, 32: -12.0, 128: 60.0})
    assert f.verdict == "contradicted" and "both sides" not in f.robustness[0] and "128 (60)" in f.robustness[0]


def test_a_finding_follows_its_rows_left_when_some_are_not_reproduced():
    F = Findings("x", "doc")
    F.measured("r", "rows", "s", {"a": 10.0, "b": 10.0}, {"a": 20.0, "b": -5.0}, rel=0.2)
    f = F.robust("r", "ws", 1.0, {0.5: {"a": 15, "b": -5}, 1.0: {"a": 20, "b": -5}, 2.0: {"a": 25, "b": 12}})
    assert [r["verdict"] for r in f.rows] == ["direction", "not reproduced"] and f.verdict == "direction"
    assert "those left outside their band (a) have the document's sign" in f.why


def test_a_contradiction_that_a_swept_choice_brings_into_the_band_says_so():
    """A within that leaves its band at another value of a choice is not robust; a contradicted whose
    figure (or a row of it) enters its band at another value rested on the value chosen, and the
    headline said only "contradicted"."""
    from dataclasses import asdict

    from pagesim.validation.report import headline

    F = Findings("01_x.ipynb", "doc")
    F.measured("stream", "gain", "s", {"JS22": 6.3, "P575": 56.9}, {"JS22": 0.0, "P575": 18.3}, rel=0.5, unit="%", sign_fixed=True)
    F.robust("stream", "ramp", 2, {1: {"JS22": 0.0, "P575": 3.2}, 2: {"JS22": 0.0, "P575": 18.3}, 4: {"JS22": 0.0, "P575": 47.7}})
    F.measured("far", "gain", "s", 10, 1.0, rel=0.5, unit="%", sign_fixed=True)
    F.robust("far", "ramp", 2, {1: 0.5, 2: 1.0, 4: 2.0})
    assert F.get("stream").verdict == F.get("far").verdict == "contradicted"
    assert F.get("stream").reaches and not F.get("far").reaches
    h = headline([{"notebook": "01_x.ipynb", "status": "ok", "findings": [asdict(f) for f in F.items]}])
    assert "2 contradicted: read them below; of them, in their band (or with a row in its own) at another value of a choice swept" in h
    assert "unstated figure): 1 (stream), whose disagreement rests on the value chosen" in h
    G = Findings("01_y.ipynb", "doc")
    G.measured("k", "kernel", "s", {"a": 200, "b": 200}, {"a": 171, "b": 2500}, rel=0.5)
    G.settings("k", "pages", "scattered", {"scattered": {"a": 171, "b": 2500}, "caged": {"a": 171, "b": 2400}}, "where they lie")
    assert not G.get("k").reaches  # row a is in its band at every setting, b at none
    G.settings("k", "more", "scattered", {"scattered": {"a": 171, "b": 2500}, "other": {"a": 90, "b": 250}}, "x")
    assert G.get("k").reaches
