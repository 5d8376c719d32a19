"""The site: staged from the executed notebooks without running them again, every link checked
(a page of the book, or the repository's file on GitHub, or an error), and built by Jupyter Book
with every Sphinx warning an error."""

import json
import shutil
from pathlib import Path

import pytest

from pagesim.validation import site as S
from pagesim.validation.report import notebooks_dir

SRC = notebooks_dir()


# a PNG of one white pixel
PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4//8/AwAI/AL+hc2rNAAAAABJRU5ErkJggg=="


def _run_folder(tmp_path: Path, break_link: str | None = None, figures: tuple = ()) -> Path:
    """A folder as `pagesim notebooks --out` leaves it, with the committed notebooks standing in
    for executed ones (the site takes outputs as it finds them). ``figures``: the output metadata
    of images (the same pixel each time) put in 01's first code cells, one a cell."""
    out = tmp_path / "run"
    (out / "notebooks").mkdir(parents=True)
    for p in sorted(SRC.glob("[0-9][0-9]_*.ipynb")):
        nb = json.loads(p.read_text())
        if break_link and p.name == "00_basics.ipynb":
            nb["cells"][0]["source"].append(f"\n\nSee [this]({break_link}).\n")
        if figures and p.name == "01_power_64k.ipynb":
            cells = [c for c in nb["cells"] if c["cell_type"] == "code"]
            for cell, meta in zip(cells, figures):
                cell["outputs"] = [{"output_type": "display_data", "data": {"image/png": PIXEL, "text/plain": ["<Figure>"]}, "metadata": meta}]
        (out / "notebooks" / p.name).write_text(json.dumps(nb))
    (out / "report.md").write_text("# pagesim validation report\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n[the design](docs/design.md)\n")
    return out


def test_stage_keeps_links_between_pages_and_points_others_at_github(tmp_path):
    book = S.stage(_run_folder(tmp_path))
    toc = (book / "_toc.yml").read_text()
    assert toc.startswith("format: jb-book\nroot: notebooks/START_HERE\n") and "- file: report" in toc and "- file: api" in toc
    nb = json.loads((book / "notebooks" / "07_your_machine.ipynb").read_text())
    text = "".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    assert "(glossary.ipynb#THP)" in text  # a page of the book: kept
    assert f"({S.REPOSITORY}/blob/{S.BRANCH}/docs/nested.md)" in text  # a file of the repository
    report = (book / "report.md").read_text()
    assert f"{S.REPOSITORY}/blob/{S.BRANCH}/docs/design.md" in report and "mybinder.org/v2/gh/pagesim/pagesim/main" in report
    assert "### `pagesim.simulate`" in (book / "api.md").read_text()
    config = json.loads((book / "_config.yml").read_text())
    assert config["execute"]["execute_notebooks"] == "off" and config["launch_buttons"]["binderhub_url"] == S.BINDER


def test_a_link_to_nothing_is_named_before_building(tmp_path):
    with pytest.raises(S.SiteError, match=r"00_basics.ipynb, cell 0: a link to 'no_such_page.ipynb', which does not exist"):
        S.stage(_run_folder(tmp_path, break_link="no_such_page.ipynb"))
    with pytest.raises(S.SiteError, match=r"a link to '../.git/config', a file git does not track"):
        S.stage(_run_folder(tmp_path / "b", break_link="../.git/config"))
    out = _run_folder(tmp_path / "c")
    (out / "report.md").write_text('# r\n\n<img src="figs/missing.png">\n')
    with pytest.raises(S.SiteError, match=r"report.md: a link to 'figs/missing.png', which does not exist"):
        S.stage(out)
    (out / "report.md").write_text("# r\n\nWrite a link as `[x](not/a/file)`, and\n\n```\n[y](nor/this)\n```\n[percent](docs/traces%2Emd)\n")
    assert f"[percent]({S.REPOSITORY}/blob/{S.BRANCH}/docs/traces.md)" in (S.stage(out) / "report.md").read_text()


def test_a_run_that_is_not_complete_builds_no_site(tmp_path):
    out = _run_folder(tmp_path)
    (out / "notebooks" / "03_solaris_mpss.ipynb").unlink()
    with pytest.raises(S.SiteError, match="no executed copy of 03_solaris_mpss.ipynb"):
        S.stage(out)
    assert (S.stage(out, partial=True) / "notebooks" / "03_solaris_mpss.ipynb").is_file()


def test_an_image_without_alt_text_is_named_before_building(tmp_path):
    with pytest.raises(S.SiteError, match=r"01_power_64k.ipynb, cell \d+: an image with no alt text: a matplotlib figure gets"):
        S.stage(_run_folder(tmp_path, figures=({},)))
    book = S.stage(_run_folder(tmp_path / "b", figures=({"image/png": {"alt": "A chart: one pixel."}}, {"image/png": {"alt": "Another."}})))
    assert json.loads((book / S.ALT_FILE).read_text())["notebooks/01_power_64k"] == ["A chart: one pixel.", "Another."]


def test_slugs_are_jupyterlabs():
    assert S.jupyter_slug(" set associative ") == "set-associative" and S.jupyter_slug("TLB") == "TLB"


@pytest.fixture(scope="module")
def jupyter_book():
    pytest.importorskip("jupyter_book", reason="the site extra (jupyter-book) is not installed")


def test_the_site_builds_and_a_broken_anchor_fails_it(tmp_path, jupyter_book):
    out = _run_folder(tmp_path, figures=({"image/png": {"alt": "A chart: one pixel."}}, {"image/png": {"alt": "The same pixel, told apart."}}))
    index = S.build(out)
    html = index.parent
    assert (html / "notebooks" / "07_your_machine.html").is_file() and (html / "report.html").is_file()
    assert "<table" in (html / "report.html").read_text()
    page = (html / "notebooks" / "01_power_64k.html").read_text()
    # each image's own alt text (set by the book's own extension), though the two are the same file
    assert 'alt="A chart: one pixel."' in page and 'alt="The same pixel, told apart."' in page
    assert "mybinder.org/v2/gh/pagesim/pagesim/main?urlpath=lab/tree/notebooks/01_power_64k.ipynb" in page
    bad = _run_folder(tmp_path / "bad", break_link="glossary.ipynb#No-such-term")
    with pytest.raises(S.SiteError, match="the site did not build:(.|\\n)*No-such-term"):
        S.build(bad)
    shutil.rmtree(out)
