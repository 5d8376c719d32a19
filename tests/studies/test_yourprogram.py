"""Notebook 06's computations: reuse distances against a plain LRU stack, the working-set curve
against the simulator, the sweep against direct simulation of the trace file, the recommendation rule."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from twins.reference_kernels import reference_distances

import pagesim
from pagesim.studies import yourprogram as Y


def test_distances_by_hand():
    # pages A B A C B A: A cold, B cold, A after {B}: 1, C cold, B after {C, A}: 2, A after {B, C}: 2
    a = np.array([0, 4096, 100, 3 * 4096, 4096 + 8, 5], dtype=np.uint64)
    assert Y.reuse_distances(a, "4K").tolist() == [-1, -1, 1, -1, 2, 2]
    assert Y.lru_misses(Y.reuse_distances(a, "4K"), [1, 2, 3]).tolist() == [6, 5, 3]


@given(st.lists(st.integers(0, 12), min_size=1, max_size=300))
def test_distances_match_reference(pages):
    a = np.array(pages, dtype=np.uint64) << np.uint64(12)
    assert Y.reuse_distances(a, "4K").tolist() == reference_distances(pages)


@settings(max_examples=50)  # each example is a whole simulate() (about 0.1 s of xarray bookkeeping)
@given(st.lists(st.integers(0, 40), min_size=1, max_size=400), st.sampled_from([1, 2, 3, 8, 17]))
def test_lru_curve_equals_simulated_fully_associative_tlb(pages, entries):
    a = (np.array(pages, dtype=np.uint64) << np.uint64(12)) + np.uint64(1 << 30)
    ds = pagesim.simulate(Y.lru_machine(entries, "4K"), addresses=a, page_size="4K", specialize=False)
    assert int(ds["walks"].sum()) == int(Y.lru_misses(Y.reuse_distances(a, "4K"), [entries])[0])


@pytest.fixture(scope="module")
def gups():
    return Y.load("gups", max_accesses=40_000)


def test_load_window_and_errors(gups):
    full = Y.load("chase")
    assert full.whole and full.n == full.total
    part = Y.load("chase", max_accesses=1000, start=500)
    assert not part.whole and part.n == 1000 and part.start == 500
    assert np.array_equal(part.addresses, full.addresses[500:1500])
    with pytest.raises(ValueError, match="neither a shipped trace"):
        Y.load("no-such-trace")
    with pytest.raises(ValueError, match="start=10,000,000 is beyond"):
        Y.load("chase", start=10_000_000)
    with pytest.raises(ValueError, match=r"max_accesses=0 is out of range: allowed 1\.\."):
        Y.load("chase", max_accesses=0)
    assert gups.n == 40_000 and (gups.kinds == 0).all() and gups.name == "gups"


def test_a_copy_of_a_shipped_trace_keeps_its_own_name(tmp_path):
    copy = tmp_path / "ls-lackey.txt.gz"
    copy.write_bytes(Y.shipped_traces()["chase"].read_bytes())
    assert Y.load(str(copy), max_accesses=10).name == "ls-lackey.txt.gz"


def test_sweep_equals_direct_simulate_of_the_file():
    """Walks and accesses of the in-memory sweep equal simulate(machine, read_trace(file)) at every
    page size of two presets (the second path reads and parses the file again for each point)."""
    s = Y.load("gups")
    names = ["skylake", "ultrasparc-iii-cu"]
    table = Y.sweep_presets(s, names)
    assert len(table) == sum(len(pagesim.machine(n).page_sizes) for n in names)
    pts = [(n, pagesim.format_size(p)) for n in names for p in pagesim.machine(n).page_sizes]
    rows = Y.direct_points(s.path, table, pts)
    assert len(rows) == 7
    for r in rows:
        assert r["sweep walks"] == r["simulate walks"] and r["sweep accesses"] == r["simulate accesses"] == s.total, r
    assert len({r["sweep walks"] for r in rows}) > 3  # the points differ: the comparison is not of one number


def test_footprint_matches_simulator(gups):
    fp = Y.footprint(gups, [4096, 2 << 20]).set_index("page")
    t = Y.sweep_presets(gups, ["skylake"]).set_index("page")
    assert fp.loc["4K", "pages"] == t.loc["4K", "pages touched"]
    assert fp.loc["2M", "pages"] == t.loc["2M", "pages touched"]
    assert fp.loc["4K", "mapped vs 4K"] == 1.0 and fp.loc["2M", "mapped vs 4K"] > 1


def test_reach_is_the_one_the_simulation_used(gups):
    """UltraSPARC III Cu's T512_1 holds nothing until programmed; the simulation programs it to a large
    page once 8 or more are mapped (Solaris's rule), so the table's reach, covers and the reason are
    those of the programmed TLB (2 GiB with 4M pages), not the unprogrammed 64 MiB."""
    m = pagesim.machine("ultrasparc-iii-cu")
    t = Y.sweep_presets(gups, ["ultrasparc-iii-cu"]).set_index("page")
    assert m.reach("4M") == 64 << 20 and m.reach("4M", programmed=True) == 2 << 30
    assert t.loc["4M", "reach"] == 2 << 30 and t.loc["4M", "programmed"] == "dTLB T512_1"
    assert bool(t.loc["4M", "covers"]) == (t.loc["4M", "data footprint"] <= 2 << 30)
    assert t.loc["8K", "reach"] == m.reach("8K") and t.loc["8K", "programmed"] == ""  # 8K pages only: T512_1 is left unused
    # the simulation programmed it: T512_1 answers lookups with 4M pages and none with 8K
    ds = pagesim.sweep({"page_size": ["8K", "4M"]}, machine=m, addresses=gups.addresses, kinds=gups.kinds, specialize=False, progress=False)
    hits = ds["hits"].sel(structure="dTLB T512_1").sum("mapped_page_size")
    assert int(hits.sel(page_size=4 << 20)) > 0 and int(hits.sel(page_size=8 << 10)) == 0
    # the whole trace: 4M pages recommended, for the reach they had
    r = Y.recommend(Y.sweep_presets(Y.load("gups"), ["ultrasparc-iii-cu"])).per_machine.set_index("machine").loc["ultrasparc-iii-cu", "reason"]
    assert "4M reach 2 GiB (dTLB T512_1 programmed to 4M) covers the data footprint 276 MiB" in r, r


def _table(rows):
    cols = ["machine", "page", "page_size", "base", "accesses", "walks", "walks per 1000", "translation share", "reach", "data footprint", "mapped", "covers"]
    df = pd.DataFrame(rows, columns=cols)
    return df


def test_recommendation_rule_by_hand():
    M = 1 << 20
    t = _table(
        [
            # base pages thrash; 2M cuts walks and maps 1.5x: recommended; 1G would map 8x: excluded
            ("a", "4K", 4096, True, 1000, 500, 500.0, 0.3, 6 * M, 100 * M, 100 * M, False),
            ("a", "2M", 2 * M, False, 1000, 10, 10.0, 0.01, 3072 * M, 150 * M, 150 * M, True),
            ("a", "1G", 1 << 30, False, 1000, 1, 1.0, 0.001, 4 << 30, 1 << 30, 800 * M, True),
            # footprint fits the base reach and 2M walks less by under 10%: base pages
            ("b", "4K", 4096, True, 1000, 5, 5.0, 0.01, 8 * M, 4 * M, 4 * M, True),
            ("b", "2M", 2 * M, False, 1000, 4.6, 4.6, 0.001, 4096 * M, 6 * M, 6 * M, True),
            # a smaller-than-base page is never recommended; the larger one within 10% of the best is
            ("c", "4K", 4096, False, 1000, 50, 50.0, 0.1, 8 * M, 90 * M, 90 * M, False),
            ("c", "64K", 64 << 10, True, 1000, 40, 40.0, 0.1, 128 * M, 100 * M, 100 * M, False),
            ("c", "16M", 16 * M, False, 1000, 2, 2.0, 0.0, 32 << 30, 112 * M, 112 * M, True),
        ]
    )
    r = Y.recommend(t)
    got = r.per_machine.set_index("machine")["recommended"].to_dict()
    assert got == {"a": "2M", "b": "4K", "c": "16M"}
    assert "fits the 4K reach" in r.per_machine.set_index("machine").loc["b", "reason"]
    assert r.text.startswith("data footprint 100 MiB fits the base-page reach of 1 of 3 presets")
    assert "2M covers it on 2 of 2 presets with 2M pages" in r.text
    with pytest.raises(ValueError, match="max_bloat=0.5"):
        Y.recommend(t, max_bloat=0.5)


def test_recommendations_of_shipped_traces():
    """Direction only: the whole gups trace's random updates want 2M pages on x86 (a part of it
    touches too few pages for 2M to stay within twice the memory); ls does not."""
    names = ["skylake", "zen4", "opteron-k8"]
    g = Y.recommend(Y.sweep_presets(Y.load("gups"), names)).per_machine.set_index("machine")
    assert g.loc["skylake", "recommended"] == "2M" and g.loc["zen4", "recommended"] == "2M"
    assert g.loc["skylake", "walks per 1000 (recommended)"] < g.loc["skylake", "walks per 1000 (base)"] / 10
    ls = Y.recommend(Y.sweep_presets(Y.load("ls", max_accesses=200_000), names)).per_machine
    assert (ls["recommended"] == "4K").all()


def test_sensitivity_and_prefix_shapes(gups):
    sens = Y.sensitivity(gups, ["skylake"], parts=2)
    assert list(sens["window"]) == ["part 1 of 2", "part 2 of 2", "whole sample"]
    assert sens["accesses"].tolist() == [20_000, 20_000, 40_000]
    pc = Y.prefix_curve(gups, "skylake", fractions=(0.5, 1.0))
    assert set(pc["page"]) == {"4K", "2M", "1G"} and pc["accesses"].max() == 40_000
    with pytest.raises(ValueError, match="parts=0"):
        Y.sensitivity(gups, ["skylake"], parts=0)


def test_reuse_curve_is_monotone(gups):
    rc = Y.reuse_curve(gups, ["4K", "2M"], max_entries=1 << 12)
    for _, g in rc.groupby("page"):
        m = g.sort_values("entries")["misses"].to_numpy()
        assert (np.diff(m) <= 0).all() and m[-1] >= 1


def test_reason_names_a_page_ruled_out_for_memory():
    """power6 keeps 4K on the gups trace only because 16M would map more than max_bloat x the memory:
    the reason must say so (it once read as if no larger page helped)."""
    from pagesim.studies import yourprogram as Y

    pm = Y.recommend(Y.sweep_presets(Y.load("gups", max_accesses=100_000))).per_machine.set_index("machine")
    assert pm.loc["power6", "recommended"] == "4K"
    assert "16M would cut walks" in pm.loc["power6", "reason"] and "over max_bloat=2" in pm.loc["power6", "reason"]
    wide = Y.recommend(Y.sweep_presets(Y.load("gups", max_accesses=100_000)), max_bloat=3).per_machine.set_index("machine")
    assert wide.loc["power6", "recommended"] == "16M"


def test_checks_of_the_tool_are_bookkeeping_not_measurements(gups):
    """Notebook 06's checks compare pagesim with itself or with the file (the reader against the
    file's line count, the engine by two methods): arithmetic, each saying so in its note, so a reader
    does not take them for a measurement that agreed."""
    from pagesim.studies.findings import Findings

    F = Findings("06_your_program.ipynb", "a trace", host=True)
    Y.record_count(F, gups, None)
    Y.record_reuse(F, gups)
    assert [f.verdict for f in F.items] == ["arithmetic"] * len(F.items) and F.get("count") and F.get("reuse-vs-simulate")
    for f in F.items:
        assert f.why and "not" in f.why and ("check" in f.why), (f.id, f.why)
    assert set(Y.SELF_CHECK) >= {"count", "reuse-vs-simulate", "sweep-vs-simulate", "footprint"}


@pytest.mark.skipif(not __import__("sys").platform.startswith("linux"), reason="pagesim measure needs Linux")
def test_section_8_measures_the_program_and_sets_the_prediction_beside_it():
    from pagesim.host.linux import why_not_both

    out = Y.measured_program(quick=True, repeat=1, preset="skylake")
    if why_not_both() is not None:
        assert out is None
        return
    meas, t = out
    assert len(meas.pairs()) == 1 and all(r.returncode == 0 for r in meas.runs)
    measured = ["measured here", "measured here: start-up only", "measured here less start-up"]
    assert list(t.index[:3]) == measured and all(i.startswith("predicted: ") for i in t.index[3:])
    off, on = meas.pairs()[0]
    assert t.loc["measured here", "faults off"] == off.minor_faults and t.loc["measured here", "faults on"] == on.minor_faults
    # THP off: one fault per 4 KiB page the program touches, at least its 256 MiB table's
    assert off.minor_faults >= (256 << 20) // 4096
    # the measurement counts the process's start-up too (thousands of faults: Python, numpy, numba);
    # less the start-up's, it counts what the prediction counts: the table's pages
    start = t.loc["measured here: start-up only"]
    assert start["faults off"] > 1000 and start["faults on"] > 1000
    less = t.loc["measured here less start-up"]
    assert less["faults off"] == off.minor_faults - start["faults off"] and less["faults on"] == on.minor_faults - start["faults on"]
    predicted = t.loc[t.index[3]]
    assert 0.9 < less["faults off"] / predicted["faults off"] < 1.1  # 4K pages: one fault per page, both
    assert "start-up" in t.loc["measured here", "faults count"] and "traced data" in predicted["faults count"]
    assert (t["time off / on"].dropna() > 0).all() and t["time off / on"].notna().sum() == len(t) - 2


@pytest.mark.parametrize("kw, match", [(dict(repeat=0), "repeat"), (dict(preset="power6"), "preset")])
def test_section_8_checks_its_arguments_before_running_anything(kw, match, monkeypatch):
    ran = []
    monkeypatch.setattr(Y.subprocess, "run", lambda *a, **k: ran.append(a))
    monkeypatch.setattr(Y, "why_not_both", lambda: None)
    with pytest.raises(ValueError, match=match):
        Y.measured_program(quick=True, **kw)
    assert ran == []


def test_the_sweeps_bookkeeping_checks_are_arithmetic_and_a_mismatch_stops_the_notebook():
    """The sweep against simulate and the footprint against pages_touched are equal by construction:
    recorded as arithmetic (never an 'exact' agreement), and a difference is a bug that raises."""
    import types

    import pandas as pd

    from pagesim.studies.findings import FindingFailed, Findings

    s = types.SimpleNamespace(path="/tmp/t.trace", whole=True)
    direct = pd.DataFrame([{"machine": "skylake", "page": "4K", "sweep walks": 5, "simulate walks": 5, "sweep accesses": 9, "simulate accesses": 9}])
    table = pd.DataFrame([{"machine": "skylake", "page": "4K", "pages touched": 3}])
    fp = pd.DataFrame([{"page": "4K", "pages": 3}])
    F = Findings("06_your_program.ipynb", "a trace", host=True)
    Y.record_sweep(F, s, table, fp, direct)
    assert {f.id: f.verdict for f in F.items} == {"sweep-vs-simulate": "arithmetic", "footprint": "arithmetic"}
    with pytest.raises(FindingFailed, match="footprint"):
        Y.record_sweep(Findings("06_your_program.ipynb", "a trace", host=True), s, table, fp.assign(pages=4), direct)
