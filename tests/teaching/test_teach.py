"""The teaching helpers (pagesim.teaching.teach), the study parameters the notebooks' "Try this" lines use, the
plot labels, and what every notebook must offer a student: a first cell saying what it does, how long
it runs and to use Run All; prediction cells; validation cells without stray outputs."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import nbformat
import numpy as np
import pytest

import pagesim
from pagesim.studies import basics as B
from pagesim.teaching import teach

NB = Path(__file__).resolve().parents[2] / "notebooks"


# ------------------------------------------------------------------------------------------ check_answer
@pytest.mark.parametrize(
    "question, given, answer",
    [
        ("offset-bits", dict(page="2M"), 21),
        ("offset-bits", dict(page="16K"), 14),
        ("page-number", dict(address=0x7F00ABC, page="4K"), 0x7F00),
        ("walk-levels", dict(machine="skylake", page="4K"), 4),
        ("walk-levels", dict(machine="skylake", page="2M"), 3),
        ("walk-levels", dict(machine="skylake", page="1G"), 2),
        ("walk-levels", dict(machine="power8", page="64K"), 1),
        ("reach", dict(machine="skylake", page="4K"), 1536 * 4096),
        ("reach", dict(machine="opteron-k8", page="2M"), 16 << 20),
        ("reach", dict(machine="power5+", page="4K", structure="TLB"), 8 << 20),
        ("faults", dict(size="64K", page="4K"), 16),
        ("faults", dict(size="16M", page="64K"), 256),
        ("faults", dict(size="16M", page="16M"), 1),
        ("faults", dict(size="5K", page="4K"), 2),
        # 1 MiB planes: page numbers step by 256, all 0 mod 128; 1040 KiB: by 260 = 4 mod 128, 32 sets
        ("tlb-sets", dict(machine="opteron-k8", page="4K", stride="1M", count=64, structure="L2 DTLB 4K"), 1),
        ("tlb-sets", dict(machine="opteron-k8", page="4K", stride="1040K", count=64, structure="L2 DTLB 4K"), 32),
        ("ratio", dict(big="64K", small="4K"), 16),
        ("pte-bytes", dict(region="1G", page="4K", processes=2), 2 * (1 << 18) * 8),
        ("pte-bytes", dict(region="1G", page="2M", processes=1), 512 * 8),
        ("tsb-slot", dict(address=0x400000 + 0x123456, page="8K", entries=32768), ((0x400000 + 0x123456) >> 13) & 32767),
    ],
)
def test_answers_by_hand(question, given, answer):
    r = teach.check_answer(question, None, **given)
    assert r.answer == answer
    assert r.right is None
    assert teach.check_answer(question, answer, **given).right is True
    assert teach.check_answer(question, answer + 1, **given).right is False


def test_unused_share_and_tolerances():
    r = teach.check_answer("unused-share", 95.3, file="3K", page="64K")
    assert r.answer == pytest.approx(100 * 61 / 64) and r.right
    assert teach.check_answer("unused-share", 25, file="3K", page="4K").right
    assert not teach.check_answer("unused-share", 90, file="3K", page="64K").right


def test_sizes_accepted_as_text_and_the_answer_folded_until_predicted():
    assert teach.check_answer("reach", "6M", machine="skylake", page="4K").right
    assert not teach.check_answer("reach", "8M", machine="skylake", page="4K").right
    blank = teach.check_answer("reach", None, machine="skylake", page="4K")
    assert "<details>" in blank._repr_html_() and "6M" not in repr(blank)
    said = teach.check_answer("reach", "8M", machine="skylake", page="4K")
    assert "6M" in repr(said) and "not quite" in repr(said) and "<details>" not in said._repr_html_()


def test_bad_questions_and_guesses_are_named():
    with pytest.raises(ValueError, match="question='nope'"):
        teach.check_answer("nope", 1)
    # a malformed guess is the student's: one line, no error (tests/validation/test_lesson_00.py); wrong inputs are the notebook's
    assert "True" in teach.check_answer("faults", True, size="64K", page="4K").problem
    with pytest.raises(TypeError, match="check_answer\\('faults'"):
        teach.check_answer("faults", 1, size="64K")
    with pytest.raises(ValueError, match="page_size=4K is not supported"):
        teach.check_answer("walk-levels", 1, machine="apple-m1", page="4K")


# ------------------------------------------------------------------------------------- the explorer
@pytest.mark.parametrize(
    "text, value",
    [("0x7f00", 0x7F00), ("0X7F_00", 0x7F00), ("32512", 32512), ("0", 0), (" 1_000 ", 1000), (42, 42)] + [("2M+4K", 0x201000), ("4KiB", 4096)],
)
def test_parse_address(text, value):
    assert teach.parse_address(text) == value


@pytest.mark.parametrize(
    "text, match",
    [
        ("0700", "leading 0"),
        ("7f00", "looks hexadecimal"),
        ("0x7g", "hexadecimal digits"),
        ("0x", "hexadecimal digits"),
        ("abc!", "not an address"),
        (-1, "not negative"),
        ("-0x10", "not negative"),
        ("\u00b2", "not an address"),  # a superscript two: a digit to str.isdigit, not to int()
        ("\u0663", "not an address"),  # an Arabic-Indic three
        ("9" * 5000, "too long for an address"),
        ("0b101", "binary and octal are not read"),
        ("1e3", "or like a number with an exponent"),
        ("_100", "an underscore goes between two digits"),
        ("1__000", "an underscore goes between two digits"),
        ("0x_7f", "an underscore goes between two digits"),
    ],
)
def test_parse_address_refuses_what_could_be_misread(text, match):
    with pytest.raises(ValueError, match=match):
        teach.parse_address(text)


@pytest.mark.parametrize(
    "name, names",
    [
        ("skylake", ["PML4", "PDPT", "PD", "PT"]),
        ("opteron-k8", ["PML4", "PDPT", "PD", "PT"]),
        ("neoverse-n1", ["level 0 table", "level 1 table", "level 2 table", "level 3 table"]),
        ("apple-m1", ["level 1 table", "level 2 table", "level 3 table"]),  # 16K granule, 47-bit VA: the walk starts at level 1
    ],
)
def test_walk_levels_carry_their_architectures_names(name, names):
    """x86-64's levels are PML4..PT; Arm's are the Arm ARM's levels 0-3 (the leaf is level 3), in
    translate, in nested_walk (guest and host tables alike) and in the diagram's bit fields."""
    from pagesim.teaching import diagrams
    from pagesim.teaching.explain import nested_walk, translate

    m = pagesim.machine(name)
    a = 0x7F0000001000 if m.va_bits > 47 else 0x3F0000001000
    t = translate(m, a)
    walk = t[t.step.str.startswith("walk level")]["what"].tolist()
    assert [w.split(":")[0] for w in walk] == names
    nw = nested_walk(m.virtualised(m.base_page), a)
    host = nw[nw.step.str.startswith("host level")]["what"].str.replace(" (leaf: the host-physical page)", "")
    guest = nw[nw.step.str.startswith("guest level")]["what"].str.replace(" (leaf)", "")
    assert set(host) <= set(names) and list(guest) == [f"read the guest's {n} entry" for n in names]
    assert [f["name"] for f in diagrams.walk_steps(m, a)["fields"] if f["role"] == "index"] == [f"{n} index" for n in names]


def test_translations_take_the_addresses_a_student_types():
    """translate and nested_walk read hexadecimal text as the explorer does (was: parse_size, which
    refused '0x7f0000001000' as 'not a size'); a layout region's start too."""
    from pagesim.teaching.explain import nested_walk, translate

    assert translate("skylake", "0x7f0000001000").title == translate("skylake", 0x7F0000001000).title
    vm = pagesim.machine("skylake").virtualised("4K")
    assert nested_walk(vm, "0x7f00_0000_1000").refs.iloc[-1] == nested_walk(vm, 0x7F0000001000).refs.iloc[-1] == 24
    assert pagesim.Region.covering("0x1800", "4K", "4K").start == 0x1000
    with pytest.raises(ValueError, match="start='0x1g'"):
        pagesim.Region.covering("0x1g", "4K", "4K")
    # a region made directly, and a host region, read addresses the same way
    assert pagesim.Region("0x1000", "4K", "4K").start == 0x1000
    vm = pagesim.machine("skylake").virtualised("4K", host_regions=[("0x1000_0000_0000", "0x1000_0020_0000", "2M")])
    assert vm.host.regions == ((1 << 44, (1 << 44) + (2 << 20), 2 << 20),)
    with pytest.raises(TypeError, match=r"address=array\(\[4096\]\) \(ndarray\): give one integer"):
        teach.parse_address(np.array([4096]))
    with pytest.raises(TypeError, match=r"address=True \(bool\)"):
        teach.parse_address(True)


def test_fit_address():
    assert teach.fit_address(0x7F12_3456_789A, "skylake") == (0x7F12_3456_789A, "")
    a, note = teach.fit_address(0x7F12_3456_789A, "ultrasparc-iii")
    assert a == 0x7F12_3456_789A & ((1 << 44) - 1) and "44-bit" in note


def test_explorer_offers_each_machines_pages_and_fits_the_address():
    pytest.importorskip("ipywidgets")
    e = teach.TranslationExplorer("skylake", 0x7F12_3456_789A)
    assert e.result is not None and e.message == ""
    e.machine.value = "apple-m1"  # its pages are 16K and 32M: before, every choice of 4K/64K/2M failed
    assert list(e.page.options) == ["16K", "32M"] and e.page.value == "16K"
    assert e.result is not None and e.message == ""
    for page in e.page.options:
        e.page.value = page
        assert e.result is not None, e.message
    e.machine.value = "ultrasparc-iii"
    e.page.value = "64K"  # the default address lies beyond its 44-bit space: it is cut to fit, and said so
    assert e.result is not None
    assert int(e.address.value, 16) < 1 << 44
    e.address.value = "0x7f00"  # hexadecimal is read as hexadecimal
    assert e.result is not None and e.result.iloc[0]["value"] == f"{0x7F00 >> 16:#x}" and e.message == ""
    e.address.value = "0700"  # refused in one line; the last table stays, titled with what it translates
    assert "leading 0" in e.message and e.result is not None and e.result.title.endswith("address 0x7f00")


# ---------------------------------------------------------------------------------- studies and plots
def test_reach_pivot_sorts_page_sizes_by_bytes():
    data = pagesim.reach_table()
    data = data[data.side == "data"]
    cols = list(B.reach_pivot(data).columns)
    assert cols == sorted(cols, key=pagesim.parse_size)
    assert cols.index("16K") < cols.index("1G") < cols.index("16G")


def test_default_pages():
    assert B.default_pages("skylake") == ["4K", "2M"]
    assert B.default_pages("apple-m1") == ["16K", "32M"]
    assert B.default_pages("ultrasparc-iii") == ["8K", "4M"]
    assert B.default_pages("power8") == ["64K", "16M"]


def test_walks_on_a_derived_machine():
    half = pagesim.machine("skylake").replace_structure("STLB", entries=768)
    w = B.walks_vs_working_set(half, sizes=["4M"], accesses=20_000, progress=False)
    full = B.walks_vs_working_set("skylake", sizes=["4M"], accesses=20_000, progress=False)
    four = lambda d: float(d[d.page == "4K"]["walks per access"].iloc[0])  # noqa: E731
    assert four(w) > four(full)  # 4 MiB fits in 1536 x 4K = 6M, not in 768 x 4K = 3M


def test_power8_held_limit_and_parameters():
    from pagesim.studies import power8 as S

    with pytest.raises(ValueError, match="held=0.999"):
        S.memories(held=0.999)
    mx = S.matrix(held=0.99)
    thp = mx[(mx.environment == "pressure") & (mx["page kind"] == "THP")]
    assert (thp["page faults"] == 1).all() and (thp["pages migrated"] > 0).all()
    # notebook 04's "Try this": the structures cut to 8 and 16 entries
    tc = S.tlb_capacity_sweep(entries=(8, 16)).set_index(["entries", "access"])
    for n in (8, 16):
        assert tc.loc[(n, "random"), "dTLB misses"] == tc.loc[(n, "memset"), "dTLB misses"] == 256
        assert tc.loc[(n, S.REVISIT), "dTLB misses"] > 3000
    assert S.thp_without_compaction(held=0.99)["page faults"] == 256


def test_erat_runs_names_a_missing_structure():
    from pagesim.studies import power64k as S

    with pytest.raises(ValueError, match="no structure 'D-ERAT'"):
        S.erat_runs(quick=True, machine="skylake")


def test_trapstat_after_other_page():
    from pagesim.studies import mpss as S

    t = S.trapstat_before_after(accesses=5_000, after="64K")["after"][1]
    assert S.user_dtlb_misses(t)["64k"] > 0 and S.user_dtlb_misses(t)["4m"] == 0


def test_heatmap_labels_are_true_values_under_clipped_colours():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    from pagesim.teaching import plotting

    pivot = pd.DataFrame({"64": [749.8, -20.0]}, index=pd.Index([4, 8], name="planes in use"))
    pivot.columns.name = "plane KiB"
    ax = plotting.heatmap(pivot, clip=(-100, 300))
    texts = [t.get_text() for t in ax.texts]
    assert "750" in texts and "300" not in texts
    assert ax.get_xlabel() == "plane size (KiB)"
    plt.close("all")


def test_bar_axis_labels_are_readable():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    from pagesim.teaching import plotting

    df = pd.DataFrame({"kernel": ["a", "b"], "small_page_change_pct": [10.0, -5.0]})
    ax = plotting.bars(df, x="small_page_change_pct", y="kernel", ylabel="")
    assert ax.get_xlabel() == plotting.LABELS["small_page_change_pct"]
    ax = plotting.lines(df.assign(x=[1, 2]), x="x", y="small_page_change_pct", hline=(3.0, "document"))
    assert "document" in [t.get_text() for t in ax.get_legend().get_texts()]
    plt.close("all")


# ------------------------------------------------------------------------------------- the notebooks
NOTEBOOKS = sorted(NB.glob("[0-9][0-9]_*.ipynb"))
# notebooks whose validation cells this change gathered (01, 02 and 05 are rearranged on another branch)
GATHERED = {"00_basics.ipynb", "03_solaris_mpss.ipynb", "04_power8_mmap.ipynb", "06_your_program.ipynb", "07_your_machine.ipynb"}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_first_cell_says_what_how_long_and_run_all(path):
    first = nbformat.read(path, as_version=4).cells[0]
    assert first.cell_type == "markdown"
    assert "Run All" in first.source and "How long" in first.source and "quick" in first.source
    assert re.search(r"full mode .* \d+(\.\d)? (s|min) .*quick mode .* \d+(\.\d)? (s|min)", first.source, re.S), "measured times for both modes"


@pytest.mark.parametrize("path", [p for p in NOTEBOOKS if p.name[:2] <= "05"], ids=lambda p: p.name)
def test_predictions_before_results(path):
    cells = nbformat.read(path, as_version=4).cells
    assert any("teach.check_answer(" in c.source and "= None" in c.source for c in cells if c.cell_type == "code")


@pytest.mark.parametrize("path", [p for p in NOTEBOOKS if p.name in GATHERED], ids=lambda p: p.name)
def test_no_cell_ends_in_a_bare_check(path):
    """A cell whose last statement is ``F.check(...)`` (or any F.* call) shows its return value: a stray
    ``True`` or a Finding's repr under the code."""
    for c in nbformat.read(path, as_version=4).cells:
        if c.cell_type != "code" or not c.source.strip():
            continue
        last = ast.parse(c.source).body[-1]
        bare = (
            isinstance(last, ast.Expr)
            and isinstance(last.value, ast.Call)
            and isinstance(last.value.func, ast.Attribute)
            and isinstance(last.value.func.value, ast.Name)
            and last.value.func.value.id == "F"
            and last.value.func.attr not in ("table", "save")
        )  # F.table() is the shown table; F.save returns None
        assert not bare, f"{path.name}, cell {c.get('id')}: ends in a bare F.{last.value.func.attr}(...)"


def test_start_here_lists_every_notebook():
    text = "\n".join(c.source for c in nbformat.read(NB / "START_HERE.ipynb", as_version=4).cells)
    for p in NOTEBOOKS:
        assert f"({p.name})" in text, p.name
    assert "Run All" in text
    binder = (NB.parent / "README.md").read_text()
    assert "urlpath=lab/tree/notebooks/START_HERE.ipynb" in binder


def test_numpy_numbers_and_64_bit_machines():
    """numpy integers were refused as guesses, a unit in a number gave a
    bare float() error, and a 64-bit machine was said to have a '64-bit space' an address was beyond."""

    from pagesim.teaching import teach
    from pagesim.teaching.explain import translate

    assert teach.check_answer("reach", np.int64(6291456), machine="skylake", page="4K").right is True
    with pytest.raises(ValueError, match="guess='16x' is not a number"):
        teach._as_number("16x", "ratio")
    fitted, note = teach.fit_address(2**64 - 1, "itanium2")
    assert fitted == 2**63 - 1 and "2**63" in note and "64-bit virtual address space" not in note
    with pytest.raises(ValueError, match="2\\*\\*63 or above"):
        translate("power8", 2**63)


def test_start_here_setup_check_runs(tmp_path):
    """START_HERE's setup check (its parameters cell and one simulation) runs in quick mode."""
    import papermill as pm

    out = pm.execute_notebook(str(NB / "START_HERE.ipynb"), str(tmp_path / "out.ipynb"), parameters={"quick": True}, progress_bar=False, cwd=str(NB))
    text = "".join(o.get("text", "") for c in out.cells if c.cell_type == "code" for o in c.outputs)
    assert "works here: 2,000 random accesses" in text


def test_tlb_return_question_is_computed():
    """The return-to-the-first-page question: its answer and its worked text come from the
    simulator's own run (pagesim.teaching.diagrams), so 4 pages in a 4-way set hit on return and 5 miss."""
    args = dict(machine="skylake", page="4K", stride="64K", structure="L1 DTLB 4K")
    q = teach.QUESTIONS["tlb-return"]
    assert q.answer(count=5, **args) == 6 and "evicted at step 5" in q.how(count=5, **args)
    assert q.answer(count=4, **args) == 4 and "still in its set" in q.how(count=4, **args)
    # 4 KiB steps spread the pages over 5 sets: each misses once, the return hits
    assert q.answer(count=5, **{**args, "stride": "4K"}) == 5 and "1 of the 5 pages" in q.how(count=5, **{**args, "stride": "4K"})


def test_every_question_has_a_hint_taking_its_inputs():
    """A hint takes the same inputs as its question, optional ones included."""
    import inspect

    for name, q in teach.QUESTIONS.items():
        qp = set(inspect.signature(q.answer).parameters) | {k for k, _ in q.defaults}
        hp = set(inspect.signature(teach.HINTS[name]).parameters)
        assert qp <= hp, f"{name}: the hint lacks {qp - hp}"
