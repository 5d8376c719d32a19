"""Every dataset loads with provenance and units; figures spot-checked against the documents."""

from pathlib import Path

import pandas as pd
import pytest

import pagesim.sources.datasets as D

SEEDS = Path(__file__).resolve().parents[3] / "shared" / "seeds"
EXPECTED = {
    "power64k_systems",
    "power64k_counters",
    "power64k_stream_params",
    "power64k_linpack_params",
    "power64k_results",
    "power64k_facts",
    "cscs_hpcc",
    "cscs_pchan",
    "cscs_namd",
    "cscs_tlb_entries",
    "cscs_reach",
    "cscs_findings",
    "mpss_trapstat",
    "mpss_pmap",
    "mpss_tlb_designs",
    "mpss_findings",
    "power8_counters",
    "power8_setup",
    "shared_pt_figures",
    "architecture_tlbs",
}


def test_list_names_every_dataset():
    assert set(D.list()) == EXPECTED


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_loads_with_provenance_and_units(name):
    df = D.load(name)
    assert isinstance(df, pd.DataFrame) and len(df) > 0
    for k in ("document", "document_file", "section", "description", "units", "columns"):
        assert df.attrs[k], k
    assert set(df.attrs["units"]) == set(df.columns) == set(df.attrs["columns"])


def test_spot_checks():
    r = D.load("power64k_results").set_index(["workload", "metric", "system"])["percent"]
    assert r["Linpack", "Data ERAT Misses", "Power 575"] == 98.4 and r["Linpack", "Data ERAT Misses", "JS22"] == 96.1
    assert r["SPECjbb2005", "Data ERAT Misses", "Power 575"] == 36.3 and r["SPECjbb2005", "ops/sec", "JS22"] == 21.4
    assert r["STREAM", "GB/sec", "Power 575"] == 56.9
    assert "(metric with 64KB pages - metric with 4KB pages) / metric with 4KB pages" in D.load("power64k_results").attrs["formula"]
    p = D.load("cscs_pchan").set_index("processors")
    assert (p.loc[24, "large"], p.loc[24, "small"], p.loc[24, "improvement_percent"]) == (3117, 2287, 36)
    # the document's formula reproduces its own column, rounded
    assert ((100 * (p["large"] - p["small"]) / p["small"]).round().astype(int) - p["improvement_percent"]).abs().max() <= 1
    n = D.load("cscs_namd").set_index("processors")
    assert n.loc[256, "improvement_percent"] == 17
    h = D.load("cscs_hpcc").set_index("benchmark")
    assert h.loc["Single node Random Access", "bound"] == "over" and pd.isna(h.loc["Single node Random Access", "percent_high"])
    t = D.load("mpss_trapstat")
    tot = t[(t.cpu == "ttl") & (t.event == "all")].set_index(["output", "run"])["pct_time"]
    assert tot["-t", "before"] == 46.2 and tot["-T", "after"] == 0.2
    d = t[(t.output == "-T") & (t.run == "before") & (t["mode"] == "u") & (t.page_size == "8k") & (t.event == "dtlb-miss")]
    assert int(d["count"].iloc[0]) == 2170236
    pm = D.load("mpss_pmap")
    heap = pm[(pm["mapped_file"] == "[ heap ]") & (pm.pgsz == "4M")]
    assert int(heap["kbytes"].iloc[0]) == 131072
    c = D.load("power8_counters")
    assert set(c[c.counter == "page-faults"]["value"]) == {256, 1}
    assert (c[(c.counter == "hw-cache-references") & (c.access == "random") & (c.page_kind == "normal")]["relation"] == ">").all()
    s = D.load("shared_pt_figures").set_index(["configuration", "pool_pages", "metric"])
    assert s.loc[("x86-64 4-way 8 GB", "small", "page-table memory with sharing"), "value_low"] == 51
    assert s.loc[("ppc64 (Oracle and DB2)", "small", "transaction throughput increase"), "value_high"] == 65
    e = D.load("cscs_tlb_entries").set_index(["page_size", "level"])
    assert e.loc[("4K", "L2"), "paper_entries"] == e.loc[("4K", "L2"), "vendor_sum"] == 1024


@pytest.mark.skipif(not SEEDS.is_dir(), reason="the source documents (../shared/seeds) are not beside this checkout")
def test_statements_and_raw_extracts_are_in_the_documents():
    """Every quoted statement, and every raw trapstat/pmap line, appears verbatim in its document."""
    cat = D.catalog()
    for name in D.list():
        meta = D.info(name)
        if meta["document"] == "reference":
            continue
        text = (SEEDS / meta["document_info"]["file"]).read_text(encoding="utf-8")
        flat = " ".join(text.replace("$", "").split())  # 003 prints its bounds as LaTeX: ( $< 120$ )
        df = D.load(name)
        if "statement" in df.columns:
            for st in df["statement"]:
                for piece in str(st).split(" ... "):
                    assert " ".join(piece.split()) in flat, (name, piece)
        for f in meta.get("files", []):
            for line in (D.data_root() / f).read_text(encoding="utf-8").splitlines():
                assert line in text, (name, line)
    assert cat["documents"]["cscs"]["date"] == "June 5, 2006"


def test_readme_is_generated_from_the_catalog():
    text = (Path(D.__file__).resolve().parents[2] / "datasets" / "README.md").read_text(encoding="utf-8")
    assert text.startswith(D.readme())


def test_unknown_dataset():
    with pytest.raises(ValueError, match="no dataset named 'nope': choose one of power64k_systems"):
        D.load("nope")


def test_parsers_name_the_line():
    with pytest.raises(ValueError, match="line 3: expected 3 '|' separators"):
        D.parse_trapstat("sol9# trapstat -t\ncpu m| x\n  0 u| 1 0.0 0 0.0 | 2 0.0 0 0.0\n")
    with pytest.raises(ValueError, match="line 4: not a pmap -sx mapping line"):
        D.parse_pmap("a\nb\nc\nXYZ\n")
