"""Notebook 00 in a real browser, as a student who gets things wrong: a prediction written as a word
gives one line and the cell's other answers still show; an address beyond the UltraSPARC's 44-bit
space typed into the explorer is cut to its low bits, said in one line, and the table stays.
Runs with `pytest -m browser` beside tests/test_browser.py, whose server and browser it uses."""

from __future__ import annotations

import re
import time

import nbformat
import pytest
from test_browser import REPO, TRACEBACK, NotebookPage, _labelled, assert_ran_clean, browser, chromium, lab, quick_copy  # noqa: F401

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
        nbp.open(len(nb.cells))
        nbp.run_all()
        cells = nbp.code_cells()
        assert_ran_clean(nbp, nb, cells)
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
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (out() == before or "ultrasparc-iii," not in out()):
            time.sleep(0.25)
        addr = _labelled(cell, "input", r"^\s*address")
        addr.fill("0x7f123456789a")
        addr.press("Enter")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and "low 44 bits" not in out():
            time.sleep(0.25)
        text = out()
        assert "low 44 bits" in text and not TRACEBACK.search(text), text
        assert re.search(r"ultrasparc-iii, \d+K pages, address 0xf123456789a", text), text
        assert cell.locator(".widget-output table").count() == 1, text
    finally:
        nbp.close()
