"""Each notebook reads as a lesson: short cells, findings recorded by the study in a line or three,
the "document vs simulation" table in a closing appendix, a "what you learned" summary tied to the
figures, no file-name hashes or plumbing in the prose, and every glossary term linked at its first
use to the glossary."""

import re

import nbformat
import pytest

from pagesim.validation.notebooks import list_notebooks, notebooks_dir

NOTEBOOKS = list_notebooks()
GLOSSARY = notebooks_dir() / "glossary.ipynb"
MAX_LINES = 10
# Acronyms whose first use in a notebook's prose must link to the glossary
ACRONYMS = ("TLB", "ERAT", "SLB", "VSID", "HPT", "PTEG", "TSB", "STLB", "PML4", "PWC", "THP", "MPSS", "MLP")
HASHED = re.compile(r"\b\d{3}_[0-9a-f]{16}\.txt\b")
PLUMBING = re.compile(r"\bCI\b|papermill|peak memory|result_path|PAGESIM_", re.I)
RECORDERS = re.compile(r"\bF\.(measured|arithmetic|direction|not_reproduced|contradicted|exact|calibrated|robust|holds_for)\(")
LINK = re.compile(r"\[([^\]]*)\]\(([^)\s]*)\)")


def split(path):
    """The cells before the appendix, and the appendix (from the heading "## Appendix")."""
    nb = nbformat.read(path, as_version=4)
    for i, c in enumerate(nb.cells):
        if c.cell_type == "markdown" and c.source.lstrip().startswith("## Appendix"):
            return nb.cells[:i], nb.cells[i:]
    raise AssertionError(f"{path.name}: no markdown cell starting '## Appendix'")


def anchor(heading: str) -> str:
    """The id JupyterLab gives a heading: its text with spaces as hyphens."""
    return heading.strip().replace(" ", "-")


def glossary_anchors() -> set[str]:
    nb = nbformat.read(GLOSSARY, as_version=4)
    return {anchor(line.lstrip("#")) for c in nb.cells if c.cell_type == "markdown" for line in c.source.splitlines() if line.startswith("#")}


def prose(cell) -> str:
    """A markdown cell's text without code spans, fenced code or headings."""
    text = re.sub(r"```.*?```", "", cell.source, flags=re.S)
    text = re.sub(r"`[^`]*`", "", text)
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_cells_are_short_before_the_appendix(path):
    body, _ = split(path)
    long = [(i, len(c.source.splitlines())) for i, c in enumerate(body) if len(c.source.splitlines()) > MAX_LINES]
    assert not long, f"{path.name}: cells over {MAX_LINES} lines before the appendix (cell, lines): {long}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_findings_are_recorded_by_the_study(path):
    body, appendix = split(path)
    for i, c in enumerate(body):
        if c.cell_type == "code":
            assert not RECORDERS.search(c.source), f"{path.name} cell {i}: findings are computed in the study, not the notebook"
    code = "\n".join(c.source for c in appendix if c.cell_type == "code")
    assert "F.table(" in code and "F.save(result_path)" in code
    assert HASHED.search("\n".join(c.source for c in appendix if c.cell_type == "markdown")) or path.stem.startswith(("00", "06", "07")), (
        f"{path.name}: the appendix cites the document by its file name"
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_what_you_learned(path):
    body, _ = split(path)
    cells = [c for c in body if c.cell_type == "markdown" and c.source.lstrip().startswith("## What you learned")]
    assert len(cells) == 1, f"{path.name}: one '## What you learned' cell before the appendix"
    points = [line for line in cells[0].source.splitlines() if re.match(r"\s*(- |\* |\d+\. )", line)]
    assert 3 <= len(points) <= 5, f"{path.name}: 3-5 points, found {len(points)}"
    for p in points:
        assert re.search(r"section \d|figure|plot|chart|map|table", p, re.I), f"{path.name}: a point not tied to a figure: {p!r}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_prose_has_no_file_hashes_or_plumbing(path):
    body, _ = split(path)
    for i, c in enumerate(body):
        if c.cell_type == "markdown":
            assert not HASHED.search(c.source), f"{path.name} cell {i}: name the document by its title, not its file name"
            m = PLUMBING.search(c.source)
            assert not m, f"{path.name} cell {i}: plumbing in the lesson's text: {m.group(0)!r}"


def test_glossary_links_resolve():
    anchors = glossary_anchors()
    assert set(ACRONYMS) <= anchors, f"glossary lacks {sorted(set(ACRONYMS) - anchors)}"
    for path in [*NOTEBOOKS, notebooks_dir() / "START_HERE.ipynb"]:
        nb = nbformat.read(path, as_version=4)
        for c in nb.cells:
            if c.cell_type != "markdown":
                continue
            for _, target in LINK.findall(c.source):
                if target.startswith("glossary.ipynb"):
                    frag = target.partition("#")[2]
                    assert not frag or frag in anchors, f"{path.name}: link to a glossary term that is not there: {target}"
    start = "\n".join(c.source for c in nbformat.read(notebooks_dir() / "START_HERE.ipynb", as_version=4).cells)
    assert "(glossary.ipynb" in start


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_first_use_of_each_term_links_to_the_glossary(path):
    body, _ = split(path)
    text = "\n".join(prose(c) for c in body if c.cell_type == "markdown")
    for term in ACRONYMS:
        m = re.search(rf"(?<![A-Za-z]){term}(?![A-Za-z])", text)
        if not m:
            continue
        linked = any(k.start() <= m.start() < k.end() and k.group(2).startswith("glossary.ipynb#") for k in LINK.finditer(text))
        assert linked, f"{path.name}: the first use of {term} is not a link to the glossary: ...{text[max(0, m.start() - 60) : m.end() + 20]!r}"
