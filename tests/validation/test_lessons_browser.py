"""The lessons in a real browser, as a student sees them: notebook 02 shows one figure for its solver
set-up (64 planes of 1040 KiB) in every chart, and an assignment answered wrongly is not called
"passed". Runs with `pytest -m browser` beside tests/validation/test_browser.py, whose server and browser it uses."""

from __future__ import annotations

import re

import nbformat
import pytest
from test_browser import REPO, NotebookPage, assert_plots_rendered, browser, chromium, lab, quick_copy  # noqa: F401

pytestmark = pytest.mark.browser

SETUP = re.compile(r"ONE SET-UP bar=(-?[\d.]+) sweep=(-?[\d.]+) map=(-?[\d.]+)")


@pytest.fixture
def shots(tmp_path):
    return tmp_path


def test_02_shows_one_figure_for_one_set_up(lab, browser, shots):  # noqa: F811
    """Run All on 02 in quick mode: no error, every chart drawn, and the solver's 64 planes of 1040 KiB
    read the same in the bar chart's table, the plane-size sweep and the map (the objects the
    student's charts are drawn from, printed by a cell added at the end); section 7 shows the kernels
    measured here beside their prediction and the document."""
    name = "02_opteron_cscs.ipynb"
    dest = lab.root / name
    nb = quick_copy(REPO / "notebooks" / name, dest, quick=True)
    probe = nbformat.v4.new_code_cell(
        "_k = k.set_index('kernel')['small_page_change_pct']['strided solver (64 planes)']\n"
        "_s = ps.table.set_index('plane KiB')['small_page_change_pct'][S.PLANE >> 10]\n"
        "_m = mp.set_index(['planes in use', 'plane KiB'])['small_page_change_pct'][(64, S.PLANE >> 10)]\n"
        "print(f'ONE SET-UP bar={_k:.3f} sweep={_s:.3f} map={_m:.3f}')"
    )
    nb.cells.append(probe)
    nbformat.write(nb, dest)
    nbp = NotebookPage(lab, browser, name, shots)
    try:
        cells = nbp.run_clean(nb)
        assert assert_plots_rendered(nbp, nb, cells) >= 5
        m = SETUP.search(cells[-1]["text"])
        assert m, f"the probe cell printed {cells[-1]['text']!r} {nbp.where()}"
        bar, sweep, cell = (float(x) for x in m.groups())
        assert bar == sweep == cell, f"one set-up, three figures: bar {bar}, sweep {sweep}, map {cell}"
        # section 7: the kernels timed on this machine, beside the prediction and the document
        code = [c for c in nb.cells if c.cell_type == "code"]
        here = cells[next(i for i, c in enumerate(code) if "MH.run(" in c.source)]["text"]
        shown = all(col in here for col in ("measured here (%)", "prediction error, ", "document", "RandomAccess"))
        assert shown or "not timed here" in here, f"section 7 shows no measured-here table: {here[:1500]} {nbp.where()}"
    finally:
        nbp.close()
