"""Every document item is in the report: each row of every findings/figures dataset names, in its
``finding`` column, the id of a notebook finding that covers it, and that id is a finding of the
document's notebook in the committed baseline (``notebooks/verdicts.json``, written by
``pagesim notebooks --save-baseline`` from the findings the notebooks record).

A dataset that holds parameters rather than findings (the measured systems, the tool settings, the
architecture reference) is declared in ``datasets/catalog.toml`` with ``parameters = "<reason>"``;
only then is it skipped.
"""

import json

import pytest

import pagesim.sources.datasets as D
from pagesim.validation.report import baseline_path

BASELINE = json.loads(baseline_path().read_text(encoding="utf-8"))
NAMES = D.list()


def _ids(cell) -> list[str]:
    """A row's finding ids: one id, or several separated by ';' (a row several findings cover)."""
    if cell is None or (isinstance(cell, float) and cell != cell):
        return []
    return [x.strip() for x in str(cell).split(";") if x.strip()]


def test_every_document_names_its_notebook():
    nbs = {p.stem for p in __import__("pagesim.validation.notebooks", fromlist=["list_notebooks"]).list_notebooks()}
    for key, doc in D.catalog()["documents"].items():
        assert doc.get("notebook") in nbs, f"documents.{key}: notebook = {doc.get('notebook')!r} is not a notebook"


@pytest.mark.parametrize("name", NAMES)
def test_parameters_are_declared_with_a_reason(name):
    meta = D.info(name)
    reason = meta.get("parameters")
    if reason is None:
        return
    assert isinstance(reason, str) and len(reason.split()) >= 5, f"{name}: parameters = {reason!r} must give the reason"
    assert "finding" not in meta["columns"], f"{name} is declared parameters but has a finding column"


@pytest.mark.parametrize("mode", ["full", "quick"])
@pytest.mark.parametrize("name", NAMES)
def test_every_row_has_a_finding_in_its_notebook(name, mode):
    meta = D.info(name)
    if meta.get("parameters"):
        pytest.skip(f"parameters, not findings: {meta['parameters']}")
    notebook = meta["document_info"].get("notebook")
    assert notebook, f"{name}: its document names no notebook in the catalog"
    df = D.load(name)
    assert "finding" in df.columns, f"{name}: no 'finding' column (or declare it parameters = '<reason>' in the catalog)"
    recorded = BASELINE.get(mode, {}).get(notebook, {})
    assert recorded, f"the {mode} baseline has no findings of {notebook}"
    missing = []
    for i, row in df.iterrows():
        ids = _ids(row["finding"])
        if not ids:
            missing.append(f"row {i}: empty finding")
        missing += [f"row {i}: {x!r} is not a finding of {notebook}" for x in ids if x not in recorded]
    assert not missing, f"{name} ({mode}): " + "; ".join(missing)


def test_finding_rules_cover_parsed_rows():
    """Parsed datasets (trapstat, pmap) take their finding column from the catalog's rules, first match."""
    t = D.load("mpss_trapstat")
    assert (t["finding"].str.len() > 0).all()
    heap = D.load("mpss_pmap")
    assert set(heap[heap.mapped_file == "[ heap ]"]["finding"]) == {"pmap-heap"}
    with pytest.raises(ValueError, match="no finding rule matches"):
        D._apply_finding_rules(t.drop(columns="finding").head(1), [{"finding": "x", "where": {"run": "never"}}], "t")
