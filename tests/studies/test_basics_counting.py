"""Notebook 00 shows figures that the documents' own notebooks judge, and properties of its own
model: neither is counted as a document finding in the headline."""

import ast
from pathlib import Path

import pytest

import pagesim
from pagesim.studies import basics as B
from pagesim.studies.findings import Findings
from pagesim.validation.report import counted

STUDIES = Path(B.__file__).parent
MODULE = {"01_power_64k": "power64k.py", "02_opteron_cscs": "cscs.py"}


@pytest.fixture(scope="module")
def recorded():
    F = Findings("00_basics", "the five documents")
    reach = pagesim.reach_table()
    B.record_reach(F, reach[reach.side == "data"])
    B.record_first_simulation(F, B.walks_vs_working_set("skylake", quick=True), "skylake")
    return {f.id: f for f in F.items}


def _ids_recorded_in(module: str) -> set:
    """The finding ids a study module records (the first argument of every F.<verdict>(...) call)."""
    ids = set()
    for node in ast.walk(ast.parse((STUDIES / module).read_text())):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args and isinstance(node.args[0], ast.Constant):
            if isinstance(node.func.value, ast.Name) and node.func.value.id == "F" and isinstance(node.args[0].value, str):
                ids.add(node.args[0].value)
    return ids


@pytest.mark.parametrize("fid", ["reach-power5", "reach-k8-2m", "k8-no-l2-2m", "faults-64k"])
def test_a_figure_the_documents_notebook_judges_is_not_counted_again(recorded, fid):
    f = recorded[fid]
    notebook, other = f.reuses.split(":")
    assert other in _ids_recorded_in(MODULE[notebook]), f"{fid} names {f.reuses}, which {MODULE[notebook]} does not record"
    assert "not counted again" in f.why


@pytest.mark.parametrize("fid", ["knee-4k", "knee-2m"])
def test_properties_of_the_model_are_model_only(recorded, fid):
    assert recorded[fid].model and recorded[fid].source == "principle (this notebook)"


def test_the_headline_counts_no_figure_another_notebook_judges(recorded):
    """The UltraSPARC III and III Cu TLB designs (reach-us3cu-4m) are judged in 03 (us3cu), from the
    same sentence of the document: 00 counts nothing of its own."""
    from dataclasses import asdict

    rec = {"notebook": "00_basics.ipynb", "status": "ok", "findings": [asdict(f) for f in recorded.values()]}
    assert [f["id"] for f in counted([rec])[0]["findings"]] == []
