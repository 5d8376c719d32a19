"""Notebook 00 in a real browser, as a student who gets things wrong: a prediction written as a word
gives one line and the cell's other answers still show; an address beyond the UltraSPARC's 44-bit
space typed into the explorer is cut to its low bits, said in one line, and the table stays.
Runs with `pytest -m browser` beside tests/validation/test_browser.py, whose server and browser it uses."""

from __future__ import annotations

import re
import time

import nbformat
import pytest
from test_browser import REPO, TRACEBACK, WIDGET_TIMEOUT_S, NotebookPage, _labelled, browser, chromium, lab, quick_copy  # noqa: F401

pytestmark = pytest.mark.browser


@pytest.fixture
def shots(tmp_path):
    return tmp_path


def test_a_student_who_gets_things_wrong(lab, browser, shots):  # noqa: F811
    name = "00_basics_wrong.ipynb"
    dest = lab.root / name
    nb = quick_copy(REPO / "notebooks" / "00_basics.ipynb", dest, quick=True)
    predict = next(c for c in nb.cells if c.cell_type == "code" and "offset_bits_huge = None" in c.source)
    predict.source = predict.source.replace("offset_bits_huge = None", 'offset_bits_huge = "twenty-one"').replace(
        "walk_reads_base = None", "walk_reads_base = 4"
    )
    nbformat.write(nb, dest)
    nbp = NotebookPage(lab, browser, name, shots)
    try:
        cells = nbp.run_clean(nb)
        code = [c for c in nb.cells if c.cell_type == "code"]
        shown = cells[code.index(predict)]["text"]
        assert shown.count("Predict:") == 3 and not TRACEBACK.search(shown), shown
        assert len([line for line in shown.splitlines() if "not a whole number" in line]) == 1, shown
        assert "your prediction 4: right" in shown, shown

        widget = next(i for i, c in enumerate(cells) if c["widgets"])
        cell = nbp.page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell").nth(widget)
        out = lambda: cell.locator(".jp-Cell-outputArea").inner_text()  # noqa: E731
        before = out()
        _labelled(cell, "select", r"^\s*machine").select_option("ultrasparc-iii")
        deadline = time.monotonic() + WIDGET_TIMEOUT_S
        while time.monotonic() < deadline and (out() == before or "ultrasparc-iii," not in out() or "translating..." in out()):
            time.sleep(0.25)
        assert "ultrasparc-iii," in out(), f"the explorer did not translate for ultrasparc-iii within {WIDGET_TIMEOUT_S} s:\n{out()}"
        addr = _labelled(cell, "input", r"^\s*address")
        # another address beyond the 44-bit space: the explorer cuts it and says so
        addr.fill("0x7f0000abc123")
        addr.press("Enter")
        deadline = time.monotonic() + WIDGET_TIMEOUT_S
        while time.monotonic() < deadline and ("address 0xf0000abc123" not in out() or "translating..." in out()):
            time.sleep(0.25)
        text = out()
        assert "0x7f0000abc123 is beyond" in text and "low 44 bits" in text and not TRACEBACK.search(text), text
        assert re.search(r"ultrasparc-iii, \d+K pages, address 0xf0000abc123", text), text
        assert cell.locator(".widget-output table").count() == 1, text

        # the explorer draws the walk beside its table
        def drawn() -> int:
            return cell.locator(".widget-output img").evaluate_all("els => els.filter(e => e.complete && e.naturalWidth > 0).length")

        deadline = time.monotonic() + WIDGET_TIMEOUT_S  # the table shows first, the picture after it
        while time.monotonic() < deadline and not drawn():
            time.sleep(0.25)
        assert drawn() >= 1, f"the explorer shows no walk picture {nbp.where()}"
        # the TLB step by step: a slider with Prev/Next over one picture per step
        steps = next(i for i, c in enumerate(code) if "diagrams.tlb_steps(" in c.source)
        tlb = nbp.page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell").nth(steps)
        assert tlb.locator(".widget-slider, .jupyter-widgets input[type=range], .slider-container").count() >= 1, f"no slider {nbp.where()}"
        assert tlb.locator("button", has_text=re.compile("Next", re.I)).count() == 1, f"no Next button {nbp.where()}"
        before = tlb.locator(".jp-OutputArea").inner_text()
        tlb.locator("button", has_text=re.compile("Next", re.I)).click()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and tlb.locator(".jp-OutputArea").inner_text() == before:
            time.sleep(0.25)
        assert tlb.locator(".jp-OutputArea").inner_text() != before, f"Next did not move the TLB view {nbp.where()}"
    finally:
        nbp.close()


def test_the_glossary_renders_with_its_terms(lab, browser, shots):  # noqa: F811
    """The glossary opens as a notebook whose headings carry the anchors the lessons link to."""
    name = "glossary.ipynb"
    nb = quick_copy(REPO / "notebooks" / name, lab.root / name)
    nbp = NotebookPage(lab, browser, name, shots)
    try:
        nbp.open(len(nb.cells))
        page = nbp.page
        # JupyterLab 4 keeps a heading's anchor in data-jupyter-id (older versions: id)
        for term in ("TLB", "PWC", "page-fault", "THP"):
            panel = ".jp-NotebookPanel:not(.lm-mod-hidden)"
            heading = page.locator(f"{panel} :is(h1, h2, h3)[data-jupyter-id='{term}'], {panel} :is(h1, h2, h3)[id='{term}']")
            assert heading.count() >= 1, f"no heading anchored {term} {nbp.where()}"
            assert heading.first.inner_text().strip().replace(" ", "-") == term
    finally:
        nbp.close()
