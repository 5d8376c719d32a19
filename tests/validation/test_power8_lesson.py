"""Notebook 04 as a lesson: its text says what the model found (the kernel work is contradicted, with
the model's ratio), its Predict questions each ask something of their own, and what the study shows
reads as a sentence, not a dict."""

import ast
import re

import nbformat
import pytest

from pagesim.studies import power8 as S
from pagesim.teaching import teach
from pagesim.validation.notebooks import notebooks_dir

NB = notebooks_dir() / "04_power8_mmap.ipynb"


def cells():
    return nbformat.read(NB, as_version=4).cells


def section(number: int) -> str:
    """The markdown of the notebook's section ``number`` (from its '## N.' heading to the next '## ')."""
    out, inside = [], False
    for c in cells():
        if c.cell_type != "markdown":
            continue
        if c.source.startswith("## "):
            inside = c.source.startswith(f"## {number}.")
        if inside:
            out.append(c.source)
    assert out, f"no section {number}"
    return "\n".join(out)


def test_kernel_work_text_says_contradicted_with_the_models_ratio():
    kw = S.kernel_work()
    k = kw.set_index("page kind")
    text = section(3)
    assert "contradict" in text and "arithmetic" not in text
    ratio = f"{S.kernel_work_ratio(kw):.2f}x"
    assert ratio == "1.31x" and ratio in text  # the model's ratio, as the finding gives it
    assert "8x or more" in text  # the document's
    for figure in (k.loc["normal", "total"], k.loc["hugepage", "total"], k.loc["normal", "zeroing cycles"], k.loc["normal", "per-fault cycles"]):
        assert f"{figure:,.0f}" in text, figure  # the figures the text quotes are the model's
    assert f"{S.kernel_work_ratio(kw) / 8:.2f} of it" in text


def test_instruction_count_text_gives_the_models_figures():
    mx = S.matrix()
    ki = S.kernel_instructions(mx).set_index(["environment", "page kind"])["kernel instructions"]
    text = section(4)
    normal, huge = ki[("ideal", "normal")], ki[("ideal", "hugepage")]
    assert f"{huge:,.0f}" in text and f"{normal:,.0f}" in text and f"{normal / huge:.2f}x" in text
    need = (1_600_000 - ki[("ideal", "hugepage")] + S.FAULT_PATH) / 256  # the zeroing, the same for every page size
    assert f"{need:,.0f}" in text and f"{need / S.FAULT_PATH:.1f}x the assumption" in text


def predict_questions():
    """The question texts of the notebook's check_answer calls, with every prediction left at None."""
    out = []
    for c in cells():
        if c.cell_type != "code" or "teach.check_answer(" not in c.source:
            continue
        for node in ast.walk(ast.parse(c.source)):
            if isinstance(node, ast.Call) and ast.unparse(node.func) == "teach.check_answer":
                question = ast.literal_eval(node.args[0])
                given = {k.arg: ast.literal_eval(k.value) for k in node.keywords}
                out.append(teach.check_answer(question, None, **given).question)
    return out


def test_predict_questions_are_distinct_and_say_which_pages():
    qs = predict_questions()
    assert len(qs) == 3 and len(set(qs)) == len(qs), qs
    hugetlb, thp = (q for q in qs if "16M" in q.split("with", 1)[1])
    assert "hugetlb" in hugetlb and "reserved" in hugetlb
    assert "THP" in thp and "transparent huge pages" in thp and "hugetlb" not in thp


def test_faults_question_names_the_kind_of_page_only_when_asked():
    plain = teach.check_answer("faults", None, size="64K", page="4K").question
    assert plain == "How many page faults does touching every byte of a fresh 64K region take with 4K pages?"
    r = teach.check_answer("faults", 1, size="16M", page="16M", kind="hugetlb pages")
    assert r.question.endswith("with 16M hugetlb pages?") and r.right


def test_thp_without_compaction_reads_as_a_sentence():
    from IPython.lib.pretty import pretty

    nc = S.thp_without_compaction()
    assert nc["page faults"] == 256 and isinstance(nc["backing"], dict)  # still a dict for code that reads it
    for shown in (repr(nc), pretty(nc)):
        assert not shown.lstrip().startswith("{"), shown
        assert "256 page faults" in shown and "fell back to 64K pages: 1" in shown and "16M pages granted: 0" in shown


@pytest.mark.parametrize("n", range(1, 8))
def test_sections_record_their_findings_in_one_short_cell(n):
    cs = cells()
    heads = [i for i, c in enumerate(cs) if c.cell_type == "markdown" and re.match(r"## \d\.", c.source)]
    start = next(i for i in heads if cs[i].source.startswith(f"## {n}."))
    end = next((i for i in heads if i > start), len(cs))
    records = [c for c in cs[start:end] if c.cell_type == "code" and "S.record_" in c.source]
    assert len(records) == 1 and len(records[0].source.splitlines()) <= 3
