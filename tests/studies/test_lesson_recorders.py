"""The study functions that record the findings of notebooks 03, 06 and 07 (the notebooks call them in
one line per section): what each records, on small inputs built by hand."""

import pandas as pd
import pytest

import pagesim.sources.datasets as D
from pagesim.studies import mpss, yourmachine, yourprogram
from pagesim.studies.findings import Findings


def test_mpss_time_base_band_is_the_findings_band():
    """The sweep of section 1 puts the 4M share against the document's after figure +-50%: the band measured() gives it."""
    doc = D.load("mpss_trapstat")
    F = Findings("t", "t")
    f = F.measured("x", "x", "x", mpss.doc_pct(doc, "after"), 0.1, rel=mpss.AFTER_REL, unit="%", change=False)
    assert mpss.after_band(doc) == f.limits
    assert mpss.doc_pct(doc, "before") == 46.2 and mpss.doc_pct(doc, "after") == 0.2


def test_mpss_left_out_records_the_documents_items_as_not_reproduced():
    doc, pm = D.load("mpss_trapstat"), D.load("mpss_pmap")
    F = Findings("t", "t")
    mpss.record_left_out(F, doc, pm)
    assert [f.id for f in F.items] == ["trapstat-kernel", "trapstat-itlb", "defaults", "kernel-heap", "pmap-other"]
    assert {f.verdict for f in F.items} == {"not reproduced"}


def test_mpss_pmap_heap_is_the_listings():
    class Run:
        attrs = {"layout": '[{"page_size": 8192, "length": 4055040}, {"page_size": 4194304, "length": 134217728}]'}

    pm = D.load("mpss_pmap")
    F = Findings("t", "t")
    mpss.record_pmap(F, pm, {"after": (Run(), None)})
    assert F.get("pmap-heap").simulation == "131072" and F.get("pmap-heap").verdict == "arithmetic"
    assert mpss.heap_kbytes(Run()) == {"8K": 3960, "4M": 131072}


def _faults(huge_granted: int):
    rows = []
    for size in (2 << 20, 4 << 20):
        rows.append({"size": size, "page": "4K", "real_faults": size // 4096, "simulated_faults": size // 4096, "huge_pages": 0, "huge_pages_expected": 0})
        rows.append(
            {
                "size": size,
                "page": "THP",
                "real_faults": size >> 21,
                "simulated_faults": size >> 21,
                "huge_pages": huge_granted,
                "huge_pages_expected": size >> 21,
            }
        )
    f = pd.DataFrame(rows)
    f["working set"] = f["size"].astype(str)
    f["equal"] = f["real_faults"] == f["simulated_faults"]
    return f


def test_yourmachine_faults_checked_when_granted_noted_when_not():
    F = Findings("t", "t", host=True)
    yourmachine.record_faults(F, _faults(huge_granted=0))
    assert F.get("faults-4K").verdict == "exact"
    assert F.get("faults-THP").verdict == "not reproduced" and "granted 0 of 3 huge pages" in F.get("faults-THP").why


def test_yourmachine_thp_not_measured_is_a_note():
    F = Findings("t", "t", host=True)
    yourmachine.record_thp(F, {"holds": None, "why": "THP not measured: no THP here", "pairs": []})
    assert F.get("thp-direction").verdict == "not reproduced" and F.get("thp-direction").why == "THP not measured: no THP here"
    assert yourmachine.plot_thp({"holds": None, "why": "x", "pairs": []}) is None


def test_yourmachine_thp_direction_from_the_pairs():
    d = {
        "holds": True,
        "ratio": 1.5,
        "reach": 6 << 20,
        "source": "skylake",
        "pairs": [(8 << 20, 30.0, 20.0), (16 << 20, 40.0, 25.0)],
        "sizes_holding": 2,
        "worst": (16 << 20, 40.0, 25.0),
        "why": "",
    }
    F = Findings("t", "t", host=True)
    yourmachine.record_thp(F, d)
    f = F.get("thp-direction")
    assert f.verdict == "direction" and "2 sizes from 8M to 16M" in f.document and "THP no slower at 2 of 2 sizes" in f.simulation


def test_yourprogram_sampling_counts_the_parts_that_agree():
    sens = pd.DataFrame(
        [
            {"machine": "skylake", "window": "whole sample", "recommended": "2M", "walks per 1000 (base)": 10.0},
            {"machine": "skylake", "window": "part 1", "recommended": "2M", "walks per 1000 (base)": 12.0},
            {"machine": "skylake", "window": "part 2", "recommended": "4K", "walks per 1000 (base)": 0.5},
        ]
    )
    F = Findings("t", "t", host=True)
    text = yourprogram.record_sampling(F, sens)
    assert text.endswith("in 1 of 2 (preset, part) pairs")
    assert F.get("sampling").simulation.startswith("same page in 1 of 2; base-page walks per 1,000 from 0.5 to 12")


def test_yourprogram_shipped_quick_records_nothing():
    F = Findings("t", "t", host=True)
    yourprogram.record_shipped(F, {})
    assert F.items == [] and yourprogram.shipped_text({}) == ""


def _planted(sizes, model: str, column: str, cost: float):
    """A flat probe (100 ns a load at every size) whose 4K curve is raised by ``cost`` times
    ``model``'s ``column``, 4K less THP: (the probe result, the simulated models)."""
    from pagesim.host.probe import ProbeResult

    med = pd.DataFrame(
        [{"size": s, "page": p, "stride": "page", "median_ns": 100.0, "q1_ns": 99, "q3_ns": 101, "loads": 1} for s in sizes for p in ("4K", "THP")]
    )
    res = ProbeResult(runs=None, medians=med, faults=None, presets=["skylake"])
    sim = yourmachine.simulated_models(res)
    x = sim[sim.model == model].pivot(index="size", columns="page", values=column)
    med.loc[med.page == "4K", "median_ns"] = [100 + cost * (x.loc[s, "4K"] - x.loc[s, "THP"]) for s in sizes]
    return res, sim


def test_model_fit_finds_the_model_a_gap_was_made_from():
    """yourmachine.model_fit: a 4K/THP gap built from the host-4K model's references at 3 ns each is
    fitted best by that model, with t = 3 and no error (the fit's mechanics, not evidence about a machine)."""
    res, sim = _planted([1 << k for k in range(20, 28)], "VM, host 4K pages", "refs per load", 3)
    fit = yourmachine.model_fit(res, sim, by="refs per load").set_index("model")
    assert fit["best"].idxmax() == "VM, host 4K pages"
    assert fit.loc["VM, host 4K pages", "t (ns per reference, fitted)"] == 3.0
    assert fit.loc["VM, host 4K pages", "ratio RMS error"] < 1e-9 < fit.loc["bare metal", "ratio RMS error"]
    assert fit.loc["VM, host 4K pages", "THP walks on most loads from"] == "8M"  # splintered: the 4K reach
    assert fit.loc["bare metal", "THP walks on most loads from"] == "never"


def test_model_fit_by_cycles_counts_level_two_hits():
    """By translation cycles (the default), a gap made from the bare-metal model's cycles at 0.4 ns
    each is fitted best by bare metal, with t = 0.4: the fit reads the cycles column, not the walks."""
    res, sim = _planted([1 << k for k in range(16, 26)], "bare metal", "cycles per load", 0.4)
    fit = yourmachine.model_fit(res, sim).set_index("model")
    assert fit.attrs["by"] == "cycles per load" and fit["best"].idxmax() == "bare metal"
    assert fit.loc["bare metal", "t (ns per cycle, fitted)"] == 0.4
    with pytest.raises(ValueError, match="by"):
        yourmachine.model_fit(res, sim, by="walks")


def test_model_fit_at_the_clock_fits_nothing():
    """At the clock, t is one period of the clock given: a gap made from the host-4K model's cycles at
    0.5 ns each is predicted exactly by that model at 2 GHz, and not at 1 GHz (where t would be 1 ns),
    whatever the fit finds."""
    res, sim = _planted([1 << k for k in range(16, 26)], "VM, host 4K pages", "cycles per load", 0.5)
    at2 = yourmachine.model_fit(res, sim, hz=2e9).set_index("model")
    assert at2.attrs["ns per cycle at the clock"] == 0.5
    assert at2["best at the clock"].idxmax() == "VM, host 4K pages"
    assert at2.loc["VM, host 4K pages", "ratio RMS error at the clock"] < 1e-9
    at1 = yourmachine.model_fit(res, sim, hz=1e9).set_index("model")
    assert at1.loc["VM, host 4K pages", "ratio RMS error at the clock"] > 0.01
    assert at1.loc["VM, host 4K pages", "ratio RMS error"] < 1e-9  # the fit does not see the clock
    assert "ratio RMS error at the clock" not in yourmachine.model_fit(res, sim, by="refs per load")
    with pytest.raises(ValueError, match="hz"):
        yourmachine.model_fit(res, sim, hz=0)


def test_record_models_names_the_best_model_both_ways():
    res, sim = _planted([1 << k for k in range(16, 26)], "VM, host 4K pages", "cycles per load", 0.5)
    F = Findings("t", "t", host=True)
    yourmachine.record_models(F, yourmachine.model_fit(res, sim, hz=2e9), "skylake", "KVM")
    text = F.get("model-fit").simulation
    assert text.startswith("fitted: VM, host 4K pages (ratio RMS error: bare metal ")
    assert "at the preset's costs and this clock, nothing fitted: VM, host 4K pages (ratio RMS error: bare metal " in text
    assert "VM, host 4K pages 0.000" in text and "4K/THP at 32M: bare metal " in text


def test_model_fit_of_nothing_in_common_is_empty_and_one_size_names_no_winner():
    res, sim = _planted([1 << 20], "VM, host 4K pages", "cycles per load", 0.5)
    empty = yourmachine.model_fit(res, sim.iloc[0:0], hz=2e9)
    assert len(empty) == 0
    fit = yourmachine.model_fit(res, sim, hz=2e9)
    assert set(fit["sizes"]) == {1}
    F = Findings("t", "t", host=True)
    yourmachine.record_models(F, fit, "skylake", None)
    assert F.get("model-fit").simulation.startswith("not told apart: 1 size compared")
    refs = yourmachine.model_fit(*_planted([1 << k for k in range(20, 24)], "bare metal", "refs per load", 3), by="refs per load")
    G = Findings("t", "t", host=True)
    yourmachine.record_models(G, refs, "skylake", None)
    g = G.get("model-fit")
    assert "per reference" in g.finding and "clock" not in g.finding + g.simulation + g.why
    for bad in (0, 1, float("nan"), True, "2e9"):
        with pytest.raises((ValueError, TypeError), match="hz"):
            yourmachine.model_fit(res, sim, by="refs per load", hz=bad)


def test_plot_models_draws_what_the_table_judges():
    """Each model's dashed (fitted) and dotted (at the clock) lines end at the ratios its row gives."""
    import matplotlib

    matplotlib.use("Agg")
    res, sim = _planted([1 << k for k in range(16, 26)], "VM, host 4K pages", "cycles per load", 0.5)
    fit = yourmachine.model_fit(res, sim, hz=2e9)
    ax = yourmachine.plot_models(res, sim, fit)
    ends = {ln.get_label(): ln.get_ydata()[-1] for ln in ax.get_lines()}
    for _, row in fit.iterrows():
        (fitted,) = [v for k, v in ends.items() if k.startswith(f"{row['model']} (fitted")]
        (clock,) = [v for k, v in ends.items() if k.startswith(f"{row['model']} (at the clock")]
        assert fitted == pytest.approx(row["4K/THP model"]) and clock == pytest.approx(row["4K/THP model at the clock"])


def test_a_measured_knee_is_shown_not_called_not_reproduced():
    """07's knees (a measurement of this machine beside the sizes that could explain it) were
    recorded as "not reproduced", which the report defines as nothing run or an unstated choice on
    both sides: they are shown, not judged; a document's figure cannot be merely shown."""
    import pandas as pd

    F = Findings("07_your_machine.ipynb", "this machine", host=True)
    row = {"structure": "L1 DTLB reach, 4K pages", "curve": "4K pages, page stride", "expected (closest presets or Linux)": "zen4 288K"}
    loc = pd.DataFrame([{**row, "measured knee": "256K -> 364K (2.0 -> 3.8 ns)", "start": 256 << 10}])
    yourmachine.record_knees(F, loc)
    assert [f.verdict for f in F.items] == ["shown"]
    D_ = Findings("01_power_64k.ipynb", "a document")
    with pytest.raises(ValueError, match="'shown' is for a measurement of this machine"):
        D_.shown("x", "a document's figure", "table 1", 5, 4, "beside it")
    assert D_.shown("p", "a prediction", "(model)", "-", 4, "the model's", model=True).verdict == "shown"
