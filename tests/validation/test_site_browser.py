"""The built site in a real browser (Debian's chromium through playwright, as
tests/validation/test_browser.py drives it): a notebook page shows its figures, loaded, each with
its alt text, and the report page its verdict table. The site is built from notebook 00 executed
in quick mode, the other notebooks as committed (``site.build(..., partial=True)``). Runs with ``pytest -m browser``."""

from __future__ import annotations

import pytest
from test_browser import browser, chromium  # noqa: F401

import pagesim.validation.notebooks as N
from pagesim.validation import site as S

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def built_site(tmp_path_factory):
    pytest.importorskip("jupyter_book", reason="the site extra (jupyter-book) is not installed")
    out = tmp_path_factory.mktemp("run")
    rec = N.execute(N.notebooks_dir() / "00_basics.ipynb", out / "notebooks", quick=True)
    assert rec["status"] == "ok", rec.get("error")
    (out / "report.md").write_text("# pagesim validation report\n\n| notebook | verdict |\n|---|---|\n| 00_basics | exact |\n")
    return S.build(out, partial=True).parent


def test_the_site_shows_a_notebooks_figures_and_the_reports_table(built_site, browser):  # noqa: F811
    page = browser.new_page()
    try:
        page.goto((built_site / "notebooks" / "00_basics.html").as_uri())
        page.wait_for_load_state("load")
        sizes = page.eval_on_selector_all("img", "imgs => imgs.filter(i => i.src.includes('_images')).map(i => [i.complete, i.naturalWidth, i.alt])")
        assert sizes and all(done and width > 100 for done, width, _ in sizes), f"the figures of 00_basics did not load: {sizes}"
        # each figure's own description (a chart's, read from it, or a diagram's), not the file's name
        assert all(len(alt) > 40 and "_images" not in alt and not alt.endswith(".png") for _, _, alt in sizes), (
            f"a figure of 00_basics without its alt text: {sizes}"
        )
        assert any(alt.startswith("A chart: ") for _, _, alt in sizes) and any(alt.startswith("Page-walk diagram") for _, _, alt in sizes), sizes
        assert page.locator("a[href*='mybinder.org/v2/gh/pagesim/pagesim']").count() >= 1
        page.goto((built_site / "report.html").as_uri())
        page.wait_for_load_state("load")
        assert page.locator("table").count() >= 1 and page.locator("td", has_text="00_basics").count() == 1
        page.goto((built_site / "index.html").as_uri())  # the landing page: START_HERE
        page.wait_for_url("**/notebooks/START_HERE.html", timeout=30_000)
        assert page.locator("h1").count() >= 1
    finally:
        page.close()
