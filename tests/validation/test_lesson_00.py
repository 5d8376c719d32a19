"""Notebook 00 as a student meets it: forgiving Predict cells (a malformed prediction gets one line
naming the answer's form, the other answers of the cell still show, a hint waits folded before the
answer), translation tables that say which machine they translate and show each step whole, walk
levels numbered the same in the tables and in the answers, an explorer that does what its text says
with an address beyond the address space, and the reach table drawn as a map."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

import pagesim
from pagesim.studies import basics as B
from pagesim.teaching import teach
from pagesim.teaching.explain import translate

NB = Path(__file__).resolve().parents[2] / "notebooks" / "00_basics.ipynb"
ADDRESS = 0x7F12_3456_789A


# ------------------------------------------------------------------------------- malformed predictions
@pytest.mark.parametrize(
    "question, guess, given, form",
    [
        ("walk-levels", "four", dict(machine="skylake", page="4K"), "a whole number"),
        ("offset-bits", [21], dict(page="2M"), "a whole number"),
        ("reach", "six megabytes", dict(machine="skylake", page="4K"), "a size (such as '6M')"),
        ("reach", True, dict(machine="skylake", page="4K"), "a size"),
        ("page-number", "0x7g", dict(address=0x7F00ABC, page="4K"), "an integer"),
        ("unused-share", "95%", dict(file="3K", page="64K"), "without the % sign"),
        ("ratio", "16x", dict(big="64K", small="4K"), "a number"),
    ],
)
def test_a_malformed_prediction_gets_one_line_naming_the_form(question, guess, given, form):
    r = teach.check_answer(question, guess, **given)  # before: a ValueError or TypeError traceback
    assert r.right is None and not r.judged
    assert form in r.problem and repr(guess) in r.problem and "\n" not in r.problem
    text = repr(r)
    assert r.problem in text and "\n  answer:" not in text  # the answer stays folded until a real prediction
    html = r._repr_html_()
    assert "show the answer</summary>" in html and "Traceback" not in html


def test_the_other_answers_of_the_cell_still_show():
    """The first Predict cell of 00 with one malformed and two real predictions: all three render."""
    shown = [
        teach.check_answer("offset-bits", "twenty-one", page="2M"),
        teach.check_answer("walk-levels", 4, machine="skylake", page="4K"),
        teach.check_answer("walk-levels", 2, machine="skylake", page="2M"),
    ]
    texts = [repr(r) for r in shown]
    assert "not a whole number" in texts[0]
    assert "right" in texts[1] and "not quite" in texts[2] and "answer: 3" in texts[2]


def test_wrong_inputs_are_still_the_notebooks_error():
    with pytest.raises(TypeError, match="needs the input 'page'"):
        teach.check_answer("faults", "four", size="64K")


# ---------------------------------------------------------------------------------------------- hints
@pytest.mark.parametrize("question", list(teach.QUESTIONS))
def test_every_question_has_a_hint(question):
    assert question in teach.HINTS


def test_hints_are_computed_from_the_inputs_and_keep_the_answer_back():
    h = teach.hint("reach", machine="skylake", page="4K")
    assert "1536" in h and "STLB" in h and "6M" not in h and "6,291,456" not in h
    assert "3232" not in h and "L2 TLB (3072" in teach.hint("reach", machine="apple-m1", page="16K")
    w = teach.hint("walk-levels", machine="skylake", page="2M")
    assert "9/9/9/9" in w and "21 bits" in w and "level 3" not in w
    assert "hashes" in teach.hint("walk-levels", machine="power8", page="64K")
    assert "traps to software" in teach.hint("walk-levels", machine="ultrasparc-iii", page="8K")
    assert "16,384 bytes" in teach.hint("offset-bits", page="16K")
    assert "260 pages" in teach.hint("tlb-sets", machine="opteron-k8", page="4K", stride="1040K", count=64, structure="L2 DTLB 4K")
    assert repr(teach.hint("faults", size="64K", page="4K")).startswith("each page")  # shown without quotes
    with pytest.raises(ValueError, match="question='nope'"):
        teach.hint("nope")
    with pytest.raises(TypeError, match="hint\\('faults'"):
        teach.hint("faults", size="64K")


def test_the_hint_is_folded_before_the_answer_until_a_prediction():
    blank = teach.check_answer("reach", None, machine="skylake", page="4K")
    html = blank._repr_html_()
    assert html.index("a hint</summary>") < html.index("show the answer</summary>")
    assert "teach.hint('reach', machine='skylake', page='4K')" in repr(blank)
    assert "a hint" not in teach.check_answer("reach", "6M", machine="skylake", page="4K")._repr_html_()


# --------------------------------------------------------------------------------- translation tables
@pytest.mark.parametrize("machine, page", [("skylake", "4K"), ("skylake", "2M"), ("skylake", "1G"), ("apple-m1", "16K"), ("neoverse-n1", "4K")])
def test_walk_levels_are_numbered_as_in_the_answer(machine, page):
    t = translate(machine, ADDRESS, page)
    levels = [int(s.split()[-1]) for s in t.step if s.startswith("walk level")]
    r = teach.check_answer("walk-levels", None, machine=machine, page=page)
    assert levels == list(range(1, int(r.answer) + 1))  # before: 0 .. answer - 1
    leaf = t[t.what.str.contains("leaf")].step.iloc[0]
    assert leaf == f"walk level {int(r.answer)}" and f"at level {int(r.answer)}" in r.how


@pytest.mark.parametrize("machine, address, page", [("power8", ADDRESS, "64K"), ("ultrasparc-iii", 0x12_3456_789A, "8K"), ("skylake", ADDRESS, "2M")])
def test_each_table_says_which_machine_and_shows_each_step_whole(machine, address, page):
    t = translate(machine, address, page)
    assert t.title == f"{machine}, {page} pages, address {address:#x}"
    html, text = t._repr_html_(), repr(t)
    assert machine in html and text.startswith(t.title)
    for what in t.what:  # before: cut at pandas' 50 characters with "..."
        assert what.replace("'", "&#x27;") in html or what in html, what
        assert what in text
    assert translate(machine, address, page).iloc[:3].title == t.title  # a slice keeps its title


# ---------------------------------------------------------------------------------------- the explorer
def test_the_explorer_cuts_an_address_beyond_the_space_and_keeps_the_table():
    pytest.importorskip("ipywidgets")
    e = teach.TranslationExplorer("ultrasparc-iii", 0x12_3456_789A)
    e.address.value = "0x7f123456789a"  # beyond 44 bits: before, refused and the table disappeared
    fitted = 0x7F12_3456_789A & ((1 << 44) - 1)
    assert e.result is not None and e.result.title.endswith(f"address {fitted:#x}")
    assert e.address.value == f"{fitted:#x}"
    assert "low 44 bits" in e.message and "\n" not in e.message
    e.address.value = "7f00"  # not an address: one line, and the last table stays
    assert "looks hexadecimal" in e.message and "\n" not in e.message
    assert e.result is not None and e.result.title.endswith(f"address {fitted:#x}") and e.result.title in e.message


def test_the_explorers_text_says_what_it_does():
    text = "\n".join(c.source for c in nbformat.read(NB, as_version=4).cells if c.cell_type == "markdown")
    assert "is cut to its low bits" in text and "one-line note" in text and "keeps" in text


# ------------------------------------------------------------------------------------------ the reach map
def test_the_reach_table_is_a_map_with_every_page_size():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    data = pagesim.reach_table()
    data = data[data.side == "data"]
    wide = B.reach_pivot(data)
    ax = B.reach_map(data)
    assert [t.get_text() for t in ax.get_xticklabels()] == list(wide.columns)
    assert [t.get_text() for t in ax.get_yticklabels()] == list(wide.index)
    labels = [t.get_text() for t in ax.texts]
    assert labels.count("2G*") == 1 and "6M" in labels and sum(1 for v in wide.to_numpy().ravel() if v) + 1 == len(labels)
    plt.close("all")


def test_the_notebook_draws_the_reach_and_shows_no_wide_table():
    cells = [c for c in nbformat.read(NB, as_version=4).cells if c.cell_type == "code"]
    lasts = [c.source.strip().splitlines()[-1] for c in cells if c.source.strip()]
    assert not any(re.match(r"B\.reach_pivot\(", line) for line in lasts)  # before: a 16-column table
    assert any("B.reach_map(data)" in c.source for c in cells)


def test_a_diagram_can_sit_beside_the_explorer():
    cells = nbformat.read(NB, as_version=4).cells
    i = next(i for i, c in enumerate(cells) if c.cell_type == "markdown" and c.source.startswith("## 2. Walk one address"))
    explorer = next(c for c in cells[i:] if c.cell_type == "code")
    assert "TranslationExplorer" in explorer.source and len(explorer.source.splitlines()) <= 4
