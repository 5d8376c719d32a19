"""Notebook 01 (000_1774b52266f446e5.txt, 64 KB pages on POWER6) says no more than its simulation shows:
each system judged against its own figure, restated figures counted once, every ``within`` swept over
its modelling choices, fault counts that are size / page size labelled arithmetic, and the STREAM
prefetch model with several streams at once."""

import math

import pytest

import pagesim.sources.datasets as D
from pagesim.engine.timing import _get_hierarchy
from pagesim.studies import power64k as S

SYSTEMS = {"JS22", "Power 575"}


# --------------------------------------------------------------------------- the prefetch model


def test_one_stream_by_hand():
    """One 4 KiB page of one stream: 32 lines of 128 B at 8 GB/s (16 ns each) and one restart of
    2 lines at 100 ns instead of 16: 512 + 2 x 84 = 680 ns."""
    bw = S.stream_bandwidth("4K", 4096, 1, streams=1, line=128, ramp_lines=2, latency_ns=100.0, peak_gbs=8.0)
    assert bw == pytest.approx(4096 / 680)


def test_three_streams_by_hand():
    """Three streams: the two others keep 2/3 of the 100 ns latency's lines in flight, which hide
    66.7 ns of the 168 ns start-up: 512 + 101.33 ns for the page."""
    bw = S.stream_bandwidth("4K", 4096, 1, streams=3, line=128, ramp_lines=2, latency_ns=100.0, peak_gbs=8.0)
    assert bw == pytest.approx(4096 / (512 + 168 - 200 / 3))


def test_one_stream_is_the_model_without_overlap():
    """streams=1 hides nothing: the model of a lone stream (the notebook's one-stream table and its
    Try-this answer: 30.1% in quick mode)."""
    c = S.stream_counts(quick=True)
    assert S.stream_gain(c, 1) == pytest.approx(30.1, abs=0.05)
    t = S.prefetch_table(quick=True, counts=c)
    assert list(t["page"]) == ["4K", "64K"] and t.loc[1, "modelled GB/s"] > t.loc[0, "modelled GB/s"]


def test_more_streams_hide_more_of_each_restart():
    c = {"bytes": 3 * (64 << 20), "arrays": 3, "restarts": {"4K": 3 * 16384, "64K": 3 * 1024}}
    gains = [S.stream_gain(c, k) for k in range(1, 9)]
    assert all(b < a for a, b in zip(gains, gains[1:]))
    assert all(g >= 0 for g in gains)
    # and where the others hide the whole start-up, the page size no longer matters
    assert S.stream_gain(c, 8, ramp_lines=1) == pytest.approx(0.0)
    assert S.stream_gain(c, 3, ramp_lines=0) == pytest.approx(0.0)


@pytest.mark.parametrize("key", ["ramp_lines", "latency_ns", "peak_gbs"])
def test_a_costlier_restart_gives_a_larger_gain(key):
    c = {"bytes": 3 * (64 << 20), "arrays": 3, "restarts": {"4K": 3 * 16384, "64K": 3 * 1024}}
    gains = [S.stream_gain(c, 3, **{key: S.PREFETCH[key] * f}) for f in (0.5, 1, 2, 4)]
    assert all(b > a for a, b in zip(gains, gains[1:]))


def test_stream_model_rejects_nonsense():
    with pytest.raises(ValueError, match="streams"):
        S.stream_bandwidth("4K", 4096, 1, streams=0)
    with pytest.raises(ValueError, match="peak_gbs"):
        S.stream_bandwidth("4K", 4096, 1, peak_gbs=0)


def test_the_systems_differ_by_what_the_document_states():
    """SMT off for the Power 575's STREAM run, on for the JS22's ((1) STREAM, key parameters): 3 and 6
    streams per core, so the JS22 hides more of each restart and gains less."""
    params = D.load("power64k_stream_params").set_index("system")["smt"]
    assert S.STREAM_SMT == {"Power 575": params["p 575"] == "enabled", "JS22": params["JS22"] == "enabled"}
    t = S.stream_systems(S.stream_counts(quick=True))
    assert t.loc["Power 575", "streams per core"] == 3 and t.loc["JS22", "streams per core"] == 6
    assert t.loc["JS22", "gain %"] < t.loc["Power 575", "gain %"]


def test_prefetch_latency_is_the_timing_models():
    for system in S.SYSTEMS.values():
        h = _get_hierarchy(system["hierarchy"])
        assert h.memory_latency / system["clock_ghz"] == pytest.approx(S.PREFETCH["latency_ns"])


def test_stream_sweep_keys_are_the_values_run():
    c = S.stream_counts(quick=True)
    sw = S.stream_sweep(c, "memory latency ns")
    assert sorted(sw) == [50.0, 100.0, 200.0]
    assert sw[100.0] == S.stream_model(c)["gain %"].to_dict()


# --------------------------------------------------------------------------- timed runs and choices


def test_repricing_work_adds_work_times_accesses():
    ds = S.timed_datasets(quick=True, benchmarks=("Linpack",))
    a, b = S.timed_frame(ds), S.timed_frame(ds, work=2.0)
    assert ((b["cycles"] - a["cycles"]) - a["work_cycles"] * a["accesses"]).abs().max() < 1e-6 * a["cycles"].max()
    assert (b["derat_misses"] == a["derat_misses"]).all()


def test_choices_name_what_each_figure_rests_on():
    assert "SPECjbb hot fraction" in S.choices_for("SPECjbb2005") and "work cycles per access (x derived)" in S.choices_for("SPECjbb2005")
    assert "memory latency (x assumed)" not in S.choices_for("Linpack", "derat")
    linpack = {"D-ERAT entries", "D-ERAT ways", "Linpack packed rows mc", "Linpack window columns nc", "Linpack register tile"}
    assert linpack <= set(S.choices_for("Linpack", "derat"))
    # the assumed ERAT associativity and hashed page table size are named and swept: they move the figures
    ptegs = "hashed page table PTEGs (x the RAM rule)"
    assert {"D-ERAT ways", ptegs} <= set(S.choices_for("SPECjbb2005"))
    assert ptegs not in S.choices_for("Linpack", "derat")  # the ERAT's misses do not depend on it
    assert S.chosen("D-ERAT ways") == 2 and S.chosen(ptegs) == 1.0
    assert S.chosen("D-ERAT entries") == 128 and S.chosen("SPECjbb live set MiB") == 4 and S.chosen("memory latency (x assumed)") == 1


# --------------------------------------------------------------------------- the notebook's verdicts


@pytest.fixture(scope="module")
def findings(quick_findings):
    return quick_findings("01_power_64k")


PER_SYSTEM = ("erat-linpack", "faster-Linpack", "faster-SPECjbb2005")


@pytest.mark.parametrize("fid", PER_SYSTEM)
def test_each_system_has_its_own_band(findings, fid):
    f = findings[fid]
    assert f["rows"] and {r["row"] for r in f["rows"]} == SYSTEMS
    doc = {r["row"]: r["document"] for r in f["rows"]}
    for r in f["rows"]:
        lo, hi = r["low"], r["high"]
        assert lo <= doc[r["row"]] <= hi
        assert (r["verdict"] == "within") == (lo <= r["simulation"] <= hi)
    assert not hasattr(S, "farthest")


def test_restatements_are_counted_once(findings):
    """IPC: the model's IPC changes exactly as its throughput, so the IPC findings restate the
    throughput ones (their document figures count, their simulated figure does not again). The
    conclusion's 11-21% is the range of the four table figures: each of its rows is judged against
    its own table figure, not one merged band."""
    for wl in ("Linpack", "SPECjbb2005"):
        ipc = findings[f"ipc-{wl}"]
        # the model gave a figure (its IPC gain is its speed-up): judged per system against the IPC rows, never "not reproduced"
        assert ipc["verdict"] in ("within", "direction", "contradicted") and ipc["figures"] == 2 and ipc["reuses"] == f"faster-{wl}"
        assert {r["row"] for r in ipc["rows"]} == SYSTEMS and set(ipc["choices"]) <= set(ipc["swept"])
        thr = {r["row"]: r["simulation"] for r in findings[f"faster-{wl}"]["rows"]}
        assert {r["row"]: r["simulation"] for r in ipc["rows"]} == thr
    conc = findings["faster-conclusion"]
    assert conc["reuses"] == "faster-Linpack, faster-SPECjbb2005" and conc["figures"] == 0
    for r in conc["rows"]:
        wl, sy = r["row"].split(" ", 1)
        assert (r["low"], r["high"]) == next((x["low"], x["high"]) for x in findings[f"faster-{wl}"]["rows"] if x["row"] == sy)
    assert (conc["verdict"] == "within") == all(r["verdict"] == "within" for r in conc["rows"])
    pump = findings["stream-chip-pump"]
    assert pump["reuses"] == "stream-gain" and pump["figures"] == 0 and pump["verdict"] in ("within", "direction", "contradicted")


def test_stream_is_judged_per_system_and_swept(findings):
    """Each system's STREAM figure against its own band, the model's every assumed parameter swept;
    the Conclusions' 57% and 'about 6%' restate it and count no figure."""
    f = findings["stream-gain"]
    assert {r["row"] for r in f["rows"]} == SYSTEMS and f["figures"] == 2
    assert "The JS22's figure rests on that assumed channel: at " in f["why"]  # the unsourced memory configuration named
    assert set(S.STREAM_CHOICES) <= set(f["swept"])
    for fid in ("stream-other-systems", "stream-chip-pump"):
        # the model ran: its figure is judged (a projection or a restatement, so no figure counted), or
        # its sweeps fall on both sides of the document's figure
        g = findings[fid]
        assert g["verdict"] in ("within", "direction", "contradicted") or "both sides of the document's figure" in " ".join(g["robustness"]), fid
        assert g["reuses"] == "stream-gain"
        assert findings[fid]["figures"] == 0 and set(S.STREAM_CHOICES) <= set(findings[fid]["swept"])


def test_every_within_is_swept_over_its_choices(findings):
    for f in findings.values():
        if f["rows"] or f["limits"]:
            assert f["choices"], f"{f['id']}: a simulated figure names the modelling choices it rests on"
            assert set(f["choices"]) <= set(f["swept"]), f["id"]
            assert f["robust"] is not None, f["id"]
    assert {"SPECjbb hot fraction", "work cycles per access (x derived)"} <= set(findings["faster-SPECjbb2005"]["swept"])


def test_faults_that_are_size_over_page_size_are_arithmetic(findings):
    assert findings["faults-4k"]["verdict"] == "arithmetic" and findings["faults-4k"]["simulation"] == "16"
    assert findings["faults-64k"]["verdict"] == "arithmetic" and findings["faults-64k"]["simulation"] == "1"


def test_every_measured_figure_of_the_document_is_covered_once(findings):
    """STREAM 2, Linpack ERAT/throughput/IPC 2 each, SPECjbb2005 the same: 14. The Conclusions' 11-21% and
    57% restate table figures, and 'about 6%' on other systems projects the JS22's: they count none."""
    by = {fid: f["figures"] for fid, f in findings.items() if f["figures"]}
    assert by == {
        "stream-gain": 2,
        "erat-linpack": 2,
        "erat-jbb": 2,
        "faster-Linpack": 2,
        "faster-SPECjbb2005": 2,
        "ipc-Linpack": 2,
        "ipc-SPECjbb2005": 2,
    }
    results = D.load("power64k_results")
    assert sum(by.values()) == len(results)  # the table rows
    assert all(math.isfinite(r["ratio"]) for fid in PER_SYSTEM for r in findings[fid]["rows"])


def test_linpack_erat_is_judged_on_the_misses_left(findings):
    """Near 100% a band on the reduction passes any large cut: the share of misses left is compared
    (the document's 3.9% and 1.6% against each system's own HPL run)."""
    f = findings["erat-linpack"]
    doc = {r["row"]: r["document"] for r in f["rows"]}
    assert doc == {"JS22": pytest.approx(3.9), "Power 575": pytest.approx(1.6)}
    assert f["verdict"] != "within" or all(0.5 <= r["ratio"] <= 1.5 for r in f["rows"])


def test_inputs_that_fix_a_result_are_arithmetic(findings):
    assert findings["prefault-waste"]["verdict"] == "arithmetic"
    # the document's words: "one 64KB page fault results in prefaulting 16 contiguous 4KB pages"
    assert findings["prefault-16"]["document"] == "one 64KB page fault prefaults 16 contiguous 4KB pages"


@pytest.mark.parametrize(
    "fid",
    ["faster-Linpack", "faster-SPECjbb2005", "ipc-Linpack", "ipc-SPECjbb2005", "faster-conclusion", "stream-gain", "stream-chip-pump", "stream-other-systems"],
)
def test_a_speed_up_whose_sign_the_model_fixes_earns_nothing_for_the_sign(findings, fid):
    """The timing model's 64 KB pages only take walks away, the prefetch model's only prefetch
    restarts: a figure outside its band is contradicted, not direction, row by row."""
    f = findings[fid]
    assert "the sign is the model's set-up" in f["why"]
    assert f["verdict"] != "direction" and all(r["verdict"] != "direction" for r in f.get("rows") or [])
