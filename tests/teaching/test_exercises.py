"""exercises/: otter-grader assignments, per-student variants, grading.

The assignments are built once per session (otter assign, into a temporary folder, never beside
this tests/ folder: otter-grader issue 931) and graded in-process with otter's own test files
(``pagesim.teaching.grading.grade_in_process``); one test runs the instructor's command on a sample (each
submission in a process of its own, ``pagesim.teaching.grading.grade_isolated``), and
tests/teaching/test_grading_hostile.py grades hostile submissions that way.
"""

from __future__ import annotations

import csv
import json
import math
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

pytest.importorskip("otter", reason="otter-grader is not installed (pip install -e '.[exercises]')")

from pagesim.teaching import exercises, grading  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
MASTERS = REPO / "exercises" / "masters"
NAMES = sorted(p.stem for p in MASTERS.glob("*.ipynb"))


@pytest.fixture(scope="session")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("exercises-build")
    return grading.build(out, check=False, quiet=True)


SAMPLES = REPO / "exercises" / "samples"


@pytest.fixture(scope="session")
def samples():
    """The committed sample submissions (test_samples_are_what_the_command_writes keeps them current)."""
    return {n: [SAMPLES / n / f"{k}.ipynb" for k in ("solution", "blank", "wrong")] for n in NAMES}


def _grade(nb, built, name):
    return grading.grade_in_process(nb, built[name] / "autograder" / f"{name}.ipynb")


def test_every_notebook_has_an_assignment():
    have = {n[:2] for n in NAMES}
    assert {"00", "01", "02", "03", "04", "05"} <= have, f"assignments for notebooks 00-05, found {NAMES}"
    assert set(exercises.ASSIGNMENTS) == have


def test_masters_are_what_make_masters_writes(tmp_path):
    sys.path.insert(0, str(REPO / "exercises"))
    try:
        import make_masters
    finally:
        sys.path.pop(0)
    for p in make_masters.write(tmp_path, tmp_path / "rubrics"):
        got = nbformat.read(str(MASTERS / p.name), as_version=4)
        want = nbformat.read(str(p), as_version=4)
        assert [(c.cell_type, c.source) for c in got.cells] == [(c.cell_type, c.source) for c in want.cells], (
            f"exercises/masters/{p.name} differs from exercises/make_masters.py: rerun it"
        )
        rubric = REPO / "exercises" / "rubrics" / f"{p.stem}.md"
        assert rubric.read_text() == (tmp_path / "rubrics" / f"{p.stem}.md").read_text(), f"{rubric} differs from make_masters.py: rerun it"
        assert "## q" in rubric.read_text() and "**Rubric" in rubric.read_text()
    # the autograder installs pagesim's own dependencies (pagesim itself ships in the zip)
    import tomllib

    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    cfg = nbformat.read(str(MASTERS / f"{NAMES[0]}.ipynb"), as_version=4).cells[0].source
    assert all(json.dumps(d) in cfg for d in deps) and "autograder_files:\n  - pagesim" in cfg


@pytest.mark.parametrize("name", NAMES)
def test_question_counts(name, built):
    nb = nbformat.read(str(MASTERS / f"{name}.ipynb"), as_version=4)
    qs = [c for c in nb.cells if c.cell_type == "raw" and c.source.startswith("# BEGIN QUESTION")]
    manual = [c for c in qs if "manual: true" in c.source]
    assert 4 <= len(qs) <= 8, f"{name}: {len(qs)} questions"
    assert manual, f"{name}: no manually graded (figure interpretation) question"
    assert len(qs) - len(manual) >= 3, f"{name}: too few autograded questions"


@pytest.mark.parametrize("name", NAMES)
def test_solution_full_blank_zero_wrong_partial(name, built, samples):
    sol, blank, wrong = samples[name]
    s = _grade(sol, built, name)
    assert s and all(got == full > 0 for got, full in s.values()), f"{name} solution: {s}"
    b = _grade(blank, built, name)
    assert set(b) == set(s) and all(got == 0 for got, _ in b.values()), f"{name} blank: {b}"
    w = _grade(wrong, built, name)
    total, full = sum(v[0] for v in w.values()), sum(v[1] for v in w.values())
    assert 0 < total < full, f"{name} wrong: {w}"
    # the misconception costs exactly the questions that hold the misconceived answers
    hit = {q for q, (got, mx) in w.items() if got < mx}
    key = name[:2]
    want = {re.match(r"(q\d+)_", var).group(1) for var in exercises.WRONG[key]}
    assert hit == want, f"{name}: lost points on {sorted(hit)}, expected {sorted(want)}"


@pytest.mark.parametrize("name", NAMES)
def test_student_version_has_no_solutions(name, built):
    student = (built[name] / "student" / f"{name}.ipynb").read_text()
    master = nbformat.read(str(MASTERS / f"{name}.ipynb"), as_version=4)
    assert "# SOLUTION" not in student and "BEGIN SOLUTION" not in student
    assert "Model answer" not in student and "Rubric" not in student
    assert "correct(" not in student, "hidden tests leaked into the student version"
    code = "\n".join(c.source for c in nbformat.reads(student, as_version=4).cells if c.cell_type == "code")
    stripped = 0
    for c in master.cells:
        if c.cell_type == "code":
            for line in c.source.splitlines():
                if line.rstrip().endswith("# SOLUTION"):
                    stmt = line.rsplit("# SOLUTION", 1)[0].strip()
                    if not re.match(r"^[A-Za-z_]\w* = ", stmt):  # an import or a call: gone entirely
                        assert stmt not in code, f"{name}: solution line {line!r} in the student version"
                        continue
                    lhs, rhs = (x.strip() for x in stmt.split("=", 1))
                    assert f"{lhs} = {rhs}" not in code, f"{name}: solution line {line!r} in the student version"
                    assigned = re.findall(rf"^{re.escape(lhs)} = (.*)$", code, re.M)
                    assert assigned and all(a.strip() == "..." for a in assigned), (name, lhs, assigned)
                    stripped += 1
    assert stripped >= 4
    # the student version still runs its checks: one grader.check per autograded question
    nb = nbformat.read(str(built[name] / "student" / f"{name}.ipynb"), as_version=4)
    checks = [c for c in nb.cells if c.cell_type == "code" and c.source.startswith("grader.check(")]
    assert len(checks) == len(nb.metadata["otter"]["tests"])


def test_samples_are_what_the_command_writes(built, tmp_path):
    """exercises/samples/ equals what `pagesim exercises samples` writes from a fresh build."""
    build_dir = next(iter(built.values())).parent
    fresh = grading.samples(build_dir, tmp_path)
    assert sorted(fresh) == NAMES
    for name, paths in fresh.items():
        for p in paths:
            got = nbformat.read(str(SAMPLES / name / p.name), as_version=4)
            want = nbformat.read(str(p), as_version=4)
            assert [(c.cell_type, c.source) for c in got.cells] == [(c.cell_type, c.source) for c in want.cells], (
                f"exercises/samples/{name}/{p.name} is stale: run pagesim exercises build && pagesim exercises samples"
            )
            assert got.metadata["otter"] == want.metadata["otter"]


def test_grade_writes_the_csv(built, tmp_path):
    """`grade --in-process` over a folder: one row per notebook, a column per question, seed from the id."""
    sub = tmp_path / "subs"
    for n in NAMES[-1:]:
        (sub / n).mkdir(parents=True)
        for k in ("solution", "blank", "wrong"):
            (sub / n / f"{k}.ipynb").write_bytes((SAMPLES / n / f"{k}.ipynb").read_bytes())
    build_dir = next(iter(built.values())).parent
    rows = grading.grade(sub, build_dir, in_process=True, quiet=True)
    with open(sub / "grades.csv") as fh:
        got = list(csv.DictReader(fh))
    assert len(got) == len(rows) == 3
    assert {"file", "assignment", "student", "seed", "q1", "q2", "q3", "total", "max"} <= set(got[0])
    assert all(r["seed"] == str(exercises.seed_of(grading.SAMPLE_ID)) for r in got)
    by = {Path(r["file"]).stem: r for r in got}
    assert float(by["solution"]["total"]) == float(by["solution"]["max"]) > float(by["wrong"]["total"]) > 0
    assert float(by["blank"]["total"]) == 0


def test_grade_command_grades_a_sample(built, samples, tmp_path):
    """The instructor's command, end to end, as the README runs it (a process per submission): the
    same scores as grading in this process."""
    name = NAMES[-1]  # the assignment without simulations: the quickest to run in a kernel
    sub = tmp_path / "subs"
    sub.mkdir()
    (sub / "wrong.ipynb").write_bytes(samples[name][2].read_bytes())
    out = tmp_path / "grades.csv"
    build_dir = next(iter(built.values())).parent
    r = subprocess.run(
        [sys.executable, "-m", "pagesim", "exercises", "grade", str(sub), "--build", str(build_dir), "--csv", str(out)], capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr[-2000:]
    row = next(csv.DictReader(open(out)))
    want = _grade(samples[name][2], built, name)
    for q, (score, _) in want.items():
        assert float(row[q]) == score, (q, row, want)


@pytest.mark.parametrize("key", sorted(exercises.ASSIGNMENTS))
def test_variants_repeat_for_a_seed_and_differ_across_seeds(key):
    ids = [f"student{i}@example.edu" for i in range(24)]
    a = [exercises.Sheet(key, s) for s in ids]
    b = [exercises.Sheet(key, s) for s in ids]
    for x, y in zip(a, b):
        assert x.seed == y.seed
        for q in x.names:
            assert x.params(q) == y.params(q) and x.question(q).text == y.question(q).text
    for q in a[0].names:
        params = {json.dumps(s.params(q), sort_keys=True, default=str) for s in a}
        assert len(params) >= 4, f"{key} {q}: only {len(params)} variants among 24 students"
    # answers (some cost a simulation): the same for a seed, different across seeds
    few = a[:8]
    answers = [s.answers() for s in few]
    assert answers == [exercises.Sheet(key, s).answers() for s in ids[:8]]
    for var in answers[0]:
        values = {str(ans[var]) for ans in answers}
        assert len(values) >= 2, f"{key} {var}: every student has the same answer {values}"
    sheets = {json.dumps(ans, sort_keys=True, default=str) for ans in answers}
    assert len(sheets) == len(few), "two students share a whole answer sheet"


def test_seed_of():
    assert exercises.seed_of("ada@example.edu") == exercises.seed_of(" ada@example.edu ")
    assert exercises.seed_of("ada@example.edu") != exercises.seed_of("bob@example.edu")
    assert exercises.seed_of(7) == 7
    with pytest.raises(ValueError, match="empty"):
        exercises.seed_of("")
    with pytest.raises(ValueError, match="out of range"):
        exercises.seed_of(-1)
    with pytest.raises(TypeError, match="bool"):
        exercises.seed_of(True)
    with pytest.raises(ValueError, match="assignment='99'"):
        exercises.Sheet("99", 1)
    with pytest.raises(ValueError, match="answer='nope'"):
        exercises.correct("00", 1, "nope", 3)


def test_correct_rejects_non_answers():
    sheet = exercises.Sheet("00", 5)
    right = sheet.answers()["q1_top"]
    assert exercises.correct("00", 5, "q1_top", right)
    assert not exercises.correct("00", 5, "q1_top", right + 1)
    for bad in (..., None, "12", float("nan")):
        assert not exercises.correct("00", 5, "q1_top", bad)


def test_00_answers_agree_with_translate():
    """Q1's indices are the ones pagesim.teaching.explain.translate prints (the check a student runs)."""
    from pagesim.teaching.explain import translate

    for sid in range(12):
        sheet = exercises.Sheet("00", sid)
        p, ans = sheet.params("q1"), sheet.answers()
        t = translate(p["machine"], p["address"])
        walk = t[t.step.str.startswith("walk level")]["value"].tolist()
        idx = [int(v.split()[1]) for v in walk]
        assert (idx[0], idx[-1]) == (ans["q1_top"], ans["q1_leaf"])


def _translate_value(t, step, what_start=""):
    rows = t[(t.step == step) & t.what.str.startswith(what_start)]["value"].tolist()
    return rows


def test_hand_answers_agree_with_pagesim():
    """The by-hand answers (closed forms in pagesim.teaching.exercises) equal what pagesim itself computes:
    faults by simulation, slots and groups by translate, leaf tables by page_table_bytes."""
    import pagesim
    from pagesim.system.pagetables import Mapping, page_table_bytes
    from pagesim.teaching.explain import translate

    for sid in range(3):
        a01 = exercises.Sheet("01", sid)
        p = a01.params("q1")
        for page, var in (("4K", "q1_faults_4k"), ("64K", "q1_faults_64k")):
            ds = pagesim.simulate("power6", "touch", size=p["size"], pattern="memset", page_size=page)
            assert int(ds["faults"].sum()) == a01.answers()[var]
        a03 = exercises.Sheet("03", sid)
        p = a03.params("q1")
        for page, var in ((8192, "q1_slot_8k"), (p["big_page"], "q1_slot_big")):
            slot = _translate_value(translate("ultrasparc-iii", p["address"], page), "TSB")[0]
            assert slot == f"slot {a03.answers()[var]}"
        a04 = exercises.Sheet("04", sid)
        p = a04.params("q3")
        t = translate("power8", p["address"], p["page_size"])
        assert _translate_value(t, "hash") == [f"primary PTEG {a04.answers()['q3_primary']}", f"secondary PTEG {a04.answers()['q3_secondary']}"]
        p = a04.params("q1")
        for page, policy, var in (("64K", "base", "q1_faults_64k"), ("16M", "hugetlb", "q1_faults_16m")):
            ds = pagesim.simulate("power8", "touch", size=p["size"], pattern="memset", page_size=page, policy=policy)
            assert int(ds["faults"].sum()) == a04.answers()[var]
        a05 = exercises.Sheet("05", sid)
        pool = a05.params("q1")["pool"]
        for page, var, level in ((4096, "q1_leaf_4k", 3), (2 << 20, "q1_leaf_2m", 2)):
            by_level = page_table_bytes(1, [Mapping("pool", pool, page, shared=True)])["by_level"]
            assert by_level[level] == a05.answers()[var]
        a02 = exercises.Sheet("02", sid)
        p = a02.params("q2")
        m = pagesim.machine("opteron-k8")
        sets = []
        for i in range(p["planes"]):
            row = _translate_value(translate(m, p["base"] + i * p["stride"], "4K"), "TLB L2")[0]
            sets.append(int(row.split()[1]))
        assert len(set(sets)) == a02.answers()["q2_sets"] and sets[1] == a02.answers()["q2_set_plane1"]


def _try_this_prompts(nb_path) -> int:
    nb = nbformat.read(str(nb_path), as_version=4)
    n = 0
    for c in nb.cells:
        if c.cell_type != "markdown":
            continue
        src = c.source
        n += src.count("**Try this:**")
        if src.lstrip().startswith("## Try this"):
            n += sum(1 for line in src.splitlines() if line.startswith("- "))
    return n


def test_every_try_this_has_an_answer():
    """exercises/instructors/try_this_answers.md (written by exercises/try_this.py) answers each notebook's prompts."""
    key = (REPO / "exercises" / "instructors" / "try_this_answers.md").read_text()
    sections = re.split(r"^## ", key, flags=re.M)[1:]
    by_nb = {s[:2]: s.count("**Try this:**") for s in sections}
    for nb in sorted((REPO / "notebooks").glob("0[0-5]_*.ipynb")):
        want = _try_this_prompts(nb)
        assert want > 0, nb.name
        assert by_nb.get(nb.name[:2], 0) >= want, f"{nb.name}: {want} prompts, {by_nb.get(nb.name[:2], 0)} answers"


def test_hidden_tests_print_nothing_for_the_placeholder_id(capsys):
    """otter's hidden tests are doctests: any output fails them. correct() for the placeholder id
    (the masters' own) must stay silent, or `otter assign` fails and a student who kept the
    placeholder scores zero with right answers."""
    sheet = exercises.Sheet("00", exercises.PLACEHOLDER_ID)
    assert "placeholder" in capsys.readouterr().out  # the student is told, in the notebook
    name, value = next(iter(sheet.answers().items()))
    assert exercises.correct("00", exercises.PLACEHOLDER_ID, name, value)
    assert capsys.readouterr().out == ""


def test_a_bad_submission_is_a_row_not_the_end_of_the_batch(built, tmp_path):
    """An unreadable file, and a notebook that assigns STUDENT_ID twice, are graded as rows with an
    error; the others are still graded and the CSV is written. A quoted number is an id (hashed), a
    bare number a seed."""
    import nbformat

    name = NAMES[-1]
    sub = tmp_path / "subs"
    sub.mkdir()
    (sub / "corrupt.ipynb").write_text("not json {")
    nb = nbformat.read(str(SAMPLES / name / "solution.ipynb"), as_version=4)
    idc = next(c for c in nb.cells if c.cell_type == "code" and grading.STUDENT_ID_RE.search(c.source))
    idc.source = grading.STUDENT_ID_RE.sub('STUDENT_ID = "42"', idc.source, count=1)
    nbformat.write(nb, str(sub / "quoted.ipynb"))
    nb.cells.append(nbformat.v4.new_code_cell('STUDENT_ID = "someone-else@example.edu"'))
    nbformat.write(nb, str(sub / "twice.ipynb"))
    build_dir = next(iter(built.values())).parent
    grading.grade(sub, build_dir, in_process=True, quiet=True)
    with open(sub / "grades.csv") as fh:
        by = {Path(r["file"]).stem: r for r in csv.DictReader(fh)}
    assert set(by) == {"corrupt", "quoted", "twice"}
    assert "not a readable notebook" in by["corrupt"]["error"] and by["corrupt"]["total"] == ""
    assert by["quoted"]["student"] == "42" and by["quoted"]["seed"] == str(exercises.seed_of("42")) != "42"
    assert by["quoted"]["error"] == ""
    assert "assigned 2 times" in by["twice"]["error"]


IDS = [f"student{i}@example.edu" for i in range(1000)]
SHARE = 0.10  # at most this share of students may hold any one answer of a question


def _simulated(key, q) -> bool:
    return callable(exercises.Sheet(key, 0).question(q)._answers)


def _scoring_counts(questions) -> list[int]:
    """For each id's question, how many of the ids' questions its answers score for: every answer
    of id i accepted by ``exercises._match`` at id j's precision (as ``correct`` grades j)."""
    import numpy as np

    answers = [q.answers for q in questions]
    names = list(answers[0])
    near = np.ones((len(answers), len(answers)), dtype=bool)  # a superset of the pairs that score, then _match decides
    for var in names:
        want = np.array([float(a[var]) for a in answers])
        prec = questions[0].precision.get(var)
        unit = np.array([exercises._unit(w, prec) if prec else 0.0 for w in want])
        near &= np.abs(want[:, None] - want[None, :]) <= 2 * unit[None, :] + 1e-9 * np.abs(want[None, :]) + 1e-9
    counts = []
    for i, a in enumerate(answers):
        js = np.flatnonzero(near[i])
        counts.append(sum(all(exercises._match(a[v], answers[j][v], questions[j].precision.get(v)) for v in names) for j in js))
    return counts


@pytest.mark.parametrize("key", sorted(exercises.ASSIGNMENTS))
def test_few_students_share_an_answer(key):
    """Over 1,000 ids, no id's answers to a question score for more than 10% of them (a question
    whose parameters collapse, such as a power-of-two stride that puts every plane in set 0, fails).
    An answer is shared when the hidden test accepts it for another id, within the question's
    precision: once only equal answers were counted, and 01 q4's 99.476 (one decimal) scored for
    16.7% of ids. A simulated question's answers are computed for the first 200 ids (each costs
    runs), its parameters, seed included, for all 1,000."""
    from collections import Counter

    for q in exercises.Sheet(key, 0).names:
        sim = _simulated(key, q)
        sheets = [exercises.Sheet(key, s, note=False) for s in IDS]
        if sim:
            params = Counter(json.dumps(s.params(q), sort_keys=True) for s in sheets)
            assert params.most_common(1)[0][1] <= SHARE * len(IDS), f"{key} {q}: {params.most_common(1)}"
            sheets = sheets[:200]
        questions = [s.question(q) for s in sheets]
        counts = _scoring_counts(questions)
        top = max(range(len(counts)), key=counts.__getitem__)
        assert counts[top] <= SHARE * len(sheets), f"{key} {q}: the answers {questions[top].answers} score for {counts[top]} of {len(sheets)} students"


def test_the_sharing_count_is_of_answers_that_score():
    """Two answers within the precision of each other are shared, though not equal."""
    q = exercises.Question("q", "", {}, {"x": 99.476}, {"x": exercises.DEC1})
    near = exercises.Question("q", "", {}, {"x": 99.43}, {"x": exercises.DEC1})
    far = exercises.Question("q", "", {}, {"x": 99.3}, {"x": exercises.DEC1})
    assert _scoring_counts([q, near, far]) == [2, 2, 1]


def _misconceived(key, sheet, pagesim) -> dict:
    """The answers each misconception of an assignment gives for a sheet: exercises.WRONG's, and
    05 q3's freed share computed from WRONG's shared tables (private // processes)."""
    ns = {f"p{q[1:]}": sheet.params(q) for q in sheet.names}
    for q in sheet.names:
        if not _simulated(key, q):
            ns.update(sheet.question(q).answers)
    if "machine" in ns["p2"]:
        ns["m2"] = pagesim.machine(ns["p2"]["machine"])
    out = {var: eval(expr, {}, ns) for var, (expr, _) in exercises.WRONG[key].items()}
    if key == "05":
        from pagesim.system.pagetables import shared_page_table_table

        p3 = ns["p3"]
        private = int(
            shared_page_table_table(**{k: v for k, v in p3.items() if k != "ram"}).set_index(["pool_pages", "page_tables"])["bytes"][("4K", "private")]
        )
        out["q3_freed_pct"] = 100 * (private - private // p3["processes"]) / p3["ram"]
    return out


@pytest.mark.parametrize("key", sorted(exercises.ASSIGNMENTS))
def test_misconceptions_never_score(key):
    """Over 1,000 ids (and three ids where it once scored), no misconception's answer scores: once
    03 q4's traps x cycles / other scored for 4.9% of ids (%tim as low as 0.25%), 05 q3's shared =
    private // processes for 1.8% (3 significant figures) and 04 q2's "every touch faults" for
    0.4% (18 touches on 18 pages)."""
    import pagesim

    for sid in IDS + ["s154@uni.edu", "s7@uni.edu", "s843@uni.edu"]:
        sheet = exercises.Sheet(key, sid, note=False)
        for var, wrong in _misconceived(key, sheet, pagesim).items():
            assert not exercises.correct(key, sid, var, wrong), f"{key} {var}: the misconception's {wrong} scores for {sid} (right {sheet.answers()[var]})"


def test_assignment_02_q5_quotes_the_namd_table():
    """Assignment 02's written question quotes NAMD's small-page gain as the document's table 4 has
    it (datasets/cscs/namd.csv): the first and last processor counts, not one figure for all."""
    import pandas as pd

    namd = pd.read_csv(REPO / "datasets" / "cscs" / "namd.csv").sort_values("processors")
    first, last = namd.iloc[0], namd.iloc[-1]
    master = nbformat.read(str(MASTERS / "02_opteron_cscs.ipynb"), as_version=4)
    q5 = next(c.source for c in master.cells if c.cell_type == "markdown" and c.source.startswith("**Q5"))
    assert f"NAMD {first.improvement_percent}% faster on {first.processors} processors, {last.improvement_percent}% on {last.processors}" in q5, q5
    assert "every processor count" not in q5
    assert first.improvement_percent - last.improvement_percent >= 10  # the gain does fall


def _run_student(nb_path, fill, tmp_path):
    """Run a built student notebook as a student would (nbclient, in a folder of its own) with
    ``fill(source) -> source`` applied to every code cell; the text of each check cell's output."""
    from nbclient import NotebookClient

    nb = nbformat.read(str(nb_path), as_version=4)
    for c in nb.cells:
        if c.cell_type == "code":
            c.source = "pass" if "grader.export" in c.source else fill(c.source)
    work = tmp_path / "student"
    work.mkdir()
    nbformat.write(nb, str(work / nb_path.name))
    NotebookClient(nb, timeout=600, allow_errors=True, resources={"metadata": {"path": str(work)}}).execute()
    out = {}
    for c in nb.cells:
        if c.cell_type == "code" and c.source.startswith("grader.check"):
            out[c.source.strip()] = "\n".join(
                o.get("data", {}).get("text/plain", "") + o.get("data", {}).get("text/html", "") + o.get("text", "") + "".join(o.get("traceback", []))
                for o in c.outputs
            )
    return out


def test_a_wrong_answer_is_never_called_passed(built, tmp_path):
    """A student answers every question wrongly but in the right form, and one answer not in it:
    grader.check and check_all say "form OK ... graded after submission" or what is wrong, never
    "passed" (the public tests check the form only)."""
    name = NAMES[-1]

    def fill(src):
        src = src.replace('STUDENT_ID = "change-me@example.edu"', 'STUDENT_ID = "wrong@example.edu"')
        src = re.sub(r"^(q1_leaf_4k) = \.\.\.", r'\1 = "a lot"', src, flags=re.M)
        return re.sub(r"^(q\d+_\w+) = \.\.\.", r"\1 = 3", src, flags=re.M)

    out = _run_student(built[name] / "student" / f"{name}.ipynb", fill, tmp_path)
    assert len(out) == len(exercises.Sheet(name, 0).names) + 1, out
    text = "\n".join(out.values())
    assert "pass" not in text.lower(), text
    assert "q1_leaf_4k should be a whole number" in out['grader.check("q1")'], out
    for q in ("q2", "q3"):
        assert "form OK" in out[f'grader.check("{q}")'] and "graded after submission" in out[f'grader.check("{q}")'], out
    assert "not in the expected form" in out["grader.check_all()"], out
    # the values are wrong: the grader gives them nothing
    assert not exercises.correct(name, "wrong@example.edu", "q2_private", 3)


def test_gradebook_flags_ids_and_writes_lms_files(built, tmp_path):
    """The grades CSV flags the placeholder id and an id two submissions hold, has an empty column
    per written question, and --format canvas|moodle writes the LMS's import columns, leaving out
    the rows it cannot import."""
    name = NAMES[-1]
    sub = tmp_path / "subs"
    sub.mkdir()
    sol = nbformat.read(str(SAMPLES / name / "solution.ipynb"), as_version=4)
    nbformat.write(sol, str(sub / "a.ipynb"))
    nbformat.write(sol, str(sub / "b.ipynb"))  # the same id again
    idc = next(c for c in sol.cells if c.cell_type == "code" and grading.STUDENT_ID_RE.search(c.source))
    for sid, f in (("ada@example.edu", "c"), (exercises.PLACEHOLDER_ID, "d")):
        idc.source = grading.STUDENT_ID_RE.sub(f'STUDENT_ID = "{sid}"', idc.source, count=1)
        nbformat.write(sol, str(sub / f"{f}.ipynb"))
    build_dir = next(iter(built.values())).parent
    for fmt in ("canvas", "moodle"):
        grading.grade(sub, build_dir, in_process=True, quiet=True, lms_format=fmt)
        by = {Path(r["file"]).stem: r for r in csv.DictReader(open(sub / "grades.csv"))}
        assert "duplicate id: b.ipynb" in by["a"]["id"] and "a.ipynb" in by["b"]["id"]
        assert "placeholder" in by["d"]["id"] and by["c"]["id"] == ""
        assert by["c"]["q4 manual"] == "" and float(by["c"]["manual max"]) == 2
        lms = list(csv.reader(open(sub / f"grades-{fmt}.csv")))
        head, rows = lms[0], lms[1:]
        assert head[-2:] == [f"{name} autograded", f"{name} q4 manual"], head
        if fmt == "canvas":
            assert head[:5] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
            assert [r[3] for r in rows] == ["ada@example.edu"]
        else:
            assert head[0] == "Email address" and [r[0] for r in rows] == ["ada@example.edu"]
        assert float(rows[0][-2]) == float(by["c"]["total"]) and rows[0][-1] == ""


def test_export_makes_the_pdf_through_html_without_latex(tmp_path, monkeypatch, capsys):
    """Without LaTeX, grader.export() makes the PDF through otter's HTML exporter and puts it in
    the zip; when that fails too it says so in one line and exports the notebook alone."""
    import otter.export

    class Otter:  # stands in for otter.Notebook (student mode)
        _grading_mode = False
        _notebook = str(tmp_path / "a.ipynb")

        def export(self, nb_path=None, export_path=None, pdf=True, **kw):
            self.got = dict(nb_path=nb_path, pdf=pdf, **kw)

    monkeypatch.setattr(exercises, "_latex_available", lambda: False)
    monkeypatch.setattr(otter.export, "export_notebook", lambda nb, **kw: str(tmp_path / "a.pdf") if kw.get("exporter_type") == "html" else None)
    nb = Otter()
    exercises.FormChecks(nb, ["q1"]).export()
    assert nb.got == {"nb_path": str(tmp_path / "a.ipynb"), "pdf": False, "files": [str(tmp_path / "a.pdf")]}
    assert "made through HTML" in capsys.readouterr().out

    def no_chromium(nb, **kw):
        raise RuntimeError("No suitable version of chromium was found")

    monkeypatch.setattr(otter.export, "export_notebook", no_chromium)
    exercises.FormChecks(nb, ["q1"]).export()
    assert nb.got["pdf"] is False and "files" not in nb.got
    out = capsys.readouterr().out
    assert out.startswith("No PDF: LaTeX is not installed and the HTML route failed (No suitable version of chromium") and out.count("\n") == 1


def test_float_answers_are_graded_at_the_precision_their_question_states():
    """A float answer once needed 1e-9 relative (1e-6 for 03's %tim, which trapstat prints to one
    decimal), and no question said how precise to be: 44.7 for 44.66 scored 0. Each float question
    says its precision, and the hidden test accepts an answer within one unit of that place."""
    for sid in range(40):
        tim = exercises.Sheet("03", sid).answers()["q4_tim_pct"]
        assert "one decimal place" in exercises.Sheet("03", sid).question("q4").text
        for ok in (round(tim, 1), math.floor(tim * 10) / 10, tim + 0.09):
            assert exercises.correct("03", sid, "q4_tim_pct", ok), (sid, tim, ok)
        for bad in (tim + 0.15, tim - 0.15, tim / 100):
            assert not exercises.correct("03", sid, "q4_tim_pct", bad), (sid, tim, bad)
        freed = exercises.Sheet("05", sid).answers()["q3_freed_pct"]
        assert "4 significant figures" in exercises.Sheet("05", sid).question("q3").text
        unit = 10 ** (math.floor(math.log10(freed)) - 3)
        assert exercises.correct("05", sid, "q3_freed_pct", float(f"{freed:.4g}")), (sid, freed)
        assert exercises.correct("05", sid, "q3_freed_pct", freed + 0.9 * unit)
        assert not exercises.correct("05", sid, "q3_freed_pct", freed + 2 * unit), (sid, freed)
    assert exercises.correct("00", 1, "q1_top", exercises.Sheet("00", 1).answers()["q1_top"])  # ints stay exact
    assert not exercises.correct("00", 1, "q1_top", exercises.Sheet("00", 1).answers()["q1_top"] + 0.5)
    for key, sheet in ((k, exercises.Sheet(k, 0)) for k in exercises.ASSIGNMENTS):
        for q in sheet.names:
            question = sheet.question(q)
            if callable(question._answers):
                continue  # a simulation: its answers' types are those of the non-simulated ones below
            for var, value in question.answers.items():
                assert isinstance(value, int) or var in question.precision, f"{key} {var}: a float answer without a stated precision"
    for key, q in (("00", "q4"), ("01", "q4"), ("02", "q3")):  # simulated float answers
        question = exercises.Sheet(key, 0).question(q)
        assert question.precision and "Give " in question.text, (key, q)


@pytest.mark.parametrize(
    "value, integral",
    [(5, True), (5.0, True), ("np.int64(5)", True), ("np.array(5)", True), ("xr.DataArray(5)", True), ("xr.DataArray(5.0)", True), (5.5, False)],
)
def test_form_and_hidden_test_agree_on_integral_numbers(value, integral):
    """ds["walks"].sum() (a 0-d xarray value, the notebooks' own hint) or 5.0 for an int answer was
    called the wrong form by grader.check while the hidden test gave full marks: both accept an
    integral number, and both refuse an array of one element and a fraction."""
    import numpy as np
    import xarray as xr

    v = eval(value, {"np": np, "xr": xr}) if isinstance(value, str) else value
    assert exercises.plausible(v, 0, None, integer=True) is integral
    right = exercises.Sheet("00", 3).answers()["q1_top"]
    shifted = v - 5 + right  # the same kind of value, holding the right answer
    assert exercises.correct("00", 3, "q1_top", shifted) is integral
    assert not exercises.plausible(np.array([5]), 0, None, integer=True) and not exercises.correct("00", 3, "q1_top", np.array([right]))
    assert not exercises.plausible(True, 0, None, integer=True) and not exercises.plausible("5", 0, None)


def _public_forms() -> dict[str, dict[str, tuple]]:
    """Each master's public checks of form: assignment -> answer -> (lo, hi, integer)."""
    pat = re.compile(r"assert plausible\((\w+), ([-\d.]+), (None|[-\d.]+), integer=(True|False)\)")
    out = {}
    for name in NAMES:
        nb = nbformat.read(str(MASTERS / f"{name}.ipynb"), as_version=4)
        found = [m for c in nb.cells if c.cell_type == "code" for m in pat.finditer(c.source)]
        out[name] = {m[1]: (float(m[2]), None if m[3] == "None" else float(m[3]), m[4] == "True") for m in found}
    return out


def test_public_forms_do_not_reveal_wrong_answers():
    """04 q2's public range (1..256) was the very bound the question asks students to predict, so
    grader.check called most wrong answers above it wrong form. Over 1,000 ids, a public check
    accepts every right answer, each assignment's classic misconception and the slips of an int
    answer (one more, twice, ten times): it rules out only what no answer of that kind can be."""
    import pagesim

    forms = _public_forms()
    for name in NAMES:
        key = name[:2]
        for sid in IDS:
            sheet = exercises.Sheet(key, sid, note=False)
            ns = {f"p{q[1:]}": sheet.params(q) for q in sheet.names}
            values = {}
            for q in sheet.names:
                if not _simulated(key, q):
                    values.update(sheet.question(q).answers)
            for var, right in list(values.items()):
                lo, hi, integer = forms[name][var]
                assert exercises.plausible(right, lo, hi, integer), f"{name} {var}: the right answer {right} fails its public check"
                if integer:
                    for slip in (right + 1, 2 * right, 10 * right):
                        why = f"{name} {var}: the public check rejects {slip} (right {right}): it tells a wrong answer"
                        assert exercises.plausible(slip, lo, hi, integer), why
            ns.update(values)
            if "p2" in ns and "machine" in ns["p2"]:
                ns["m2"] = pagesim.machine(ns["p2"]["machine"])
            for var, (expr, _) in exercises.WRONG[key].items():
                try:
                    wrong = eval(expr, {}, ns)
                except NameError:
                    continue  # needs a simulated answer
                lo, hi, integer = forms[name][var]
                assert exercises.plausible(wrong, lo, hi, integer), f"{name} {var}: the public check rejects the misconception's {wrong} for {sid}"


def test_checking_a_written_question_says_it_is_graded_by_hand():
    """grader.check("q5") on a written question gave otter's raw `ValueError: Test q5 not found`."""

    class Otter:
        def check(self, question, env):
            raise ValueError(f"Test {question} not found")

    out = repr(exercises.FormChecks(Otter(), ["q1", "q2", "q3", "q4"]).check("q5"))
    assert "'q5' has no check" in out and "graded by hand" in out and "rubric" in out and "q1, q2, q3, q4" in out, out


@pytest.mark.parametrize(
    "cell, want",
    [
        ('STUDENT_ID: str = "ann@uni.edu"', "ann@uni.edu"),
        ('STUDENT_ID = ("par@uni.edu")', "par@uni.edu"),
        ('x = 1; STUDENT_ID = "semi@uni.edu"', "semi@uni.edu"),
        ("STUDENT_ID = 2**40", 2**40),
        ("STUDENT_ID = -5", -5),
        ('%time STUDENT_ID = "t@uni.edu"', "t@uni.edu"),
        ("STUDENT_ID = input()", None),
        ("a, STUDENT_ID = 1, 2", None),
    ],
)
def test_the_id_cell_is_read_with_ast(tmp_path, cell, want):
    """The id cell was read with a regular expression: an annotated, parenthesised or second
    statement gave '' (a false "not ''" note) and 2**40 gave 2. A value that is not a constant is
    said to be unread, never guessed."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# a"), nbformat.v4.new_code_cell(cell)])
    p = tmp_path / "a.ipynb"
    nbformat.write(nb, str(p))
    value, times = grading._student_value(p)
    assert times == 1
    if want is None:
        assert isinstance(value, grading._Unread) and "cell 2 sets it to" in value.why, value
    else:
        assert value == want and type(value) is type(want), value


def _with_id(nb_path: Path, cell: str, out: Path, outputs=None) -> Path:
    nb = nbformat.read(str(nb_path), as_version=4)
    idc = next(c for c in nb.cells if c.cell_type == "code" and c.source.startswith("STUDENT_ID"))
    idc.source = cell
    if outputs is not None:
        sheet = next(c for c in nb.cells if c.cell_type == "code" and "your seed:" in c.source)
        sheet.outputs = [nbformat.v4.new_output("stream", name="stdout", text=outputs)]
    out.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(out))
    return out


def test_ids_are_normalised_and_unusable_ids_are_errors(built, tmp_path):
    """An id with spaces around it got its trimmed id's seed but escaped the duplicate check and
    was exported raw; "   ", 2**40, -5, True, 3.0 and "" were graded 0 with no error (or "no
    STUDENT_ID was set") and 2**40, -5 were exported to Moodle. An id is trimmed everywhere; an
    unusable one is an error naming it and what is allowed, and is left out of the LMS files."""
    name = NAMES[-1]
    sol = SAMPLES / name / "solution.ipynb"
    sub = tmp_path / "subs"
    _with_id(sol, 'STUDENT_ID = "alice@uni.edu"', sub / "alice.ipynb")
    _with_id(sol, 'STUDENT_ID = "alice@uni.edu "', sub / "alice2.ipynb")
    _with_id(sol, 'STUDENT_ID = "bob@uni.edu"', sub / "bob.ipynb")
    _with_id(sol, 'STUDENT_ID = "grace@uni.edu"', sub / "grace.ipynb")
    bad = {"spaces": '"   "', "big": "2**40", "neg": "-5", "bool": "True", "float": "3.0", "empty": '""'}
    # once graded under a seed of its own and exported as "?grace@uni.edu", which matches nobody
    bad.update(zwsp='"\\u200bgrace@uni.edu"', rtl='"grace\\u202e@uni.edu"', bell='"grace\\x07@uni.edu"')
    for f, v in bad.items():
        _with_id(sol, f"STUDENT_ID = {v}", sub / f"{f}.ipynb")
    build_dir = next(iter(built.values())).parent
    grading.grade(sub, build_dir, in_process=True, quiet=True, lms_format="moodle")
    by = {Path(r["file"]).stem: r for r in csv.DictReader(open(sub / "grades.csv"))}
    assert by["alice2"]["student"] == "alice@uni.edu" and by["alice2"]["seed"] == by["alice"]["seed"]
    assert "duplicate id: alice.ipynb" in by["alice2"]["id"] and "duplicate id: alice2.ipynb" in by["alice"]["id"]
    for f in bad:
        err = by[f]["error"]
        assert err.startswith("STUDENT_ID ") and "is not a valid id or seed (allowed: a non-empty id" in err and "2**32-1" in err, (f, err)
        assert "no STUDENT_ID was set" not in err and "not a valid id or seed" in by[f]["id"], (f, by[f])
        assert by[f]["seed"] == "", by[f]
    moodle = [r[0] for r in csv.reader(open(sub / "grades-moodle.csv"))][1:]
    assert moodle == ["bob@uni.edu", "grace@uni.edu"], moodle
    assert by["grace"]["id"] == "" and "printable" in by["zwsp"]["error"], (by["grace"], by["zwsp"])


def test_an_id_with_an_invisible_character_is_not_an_id():
    with pytest.raises(ValueError, match=r"U\+200B.*printable"):
        exercises.seed_of("\u200bgrace@uni.edu")
    for bad in ("grace\u202e@uni.edu", "gr\x00ace", "a\u2028b"):
        with pytest.raises(ValueError, match="printable"):
            exercises.seed_of(bad)
    assert exercises.seed_of("zoë@uni.edu") == exercises.seed_of(" zoë@uni.edu\n")


def test_a_bytes_id_is_shown_as_written(tmp_path):
    """STUDENT_ID = b"grace" was reported as "STUDENT_ID b'' is not a valid id"."""
    from pagesim.teaching.grade_child import encode

    value = grading._decode(encode(b"grace"))
    assert value == b"grace"
    row = {}
    notes = grading._id_notes(row, {"STUDENT_ID": value}, b"grace", 1, tmp_path / "unused.ipynb")
    assert notes and notes[0].startswith("STUDENT_ID b'grace' is not a valid id or seed (allowed: "), notes


def test_an_id_assigned_twice_in_a_cell_is_read_as_its_final_value(tmp_path):
    """A cell setting "a1@uni.edu" then "a2@uni.edu" was said to read 'a1@uni.edu' (its first
    assignment), so a notebook graded as a2 got a false "not 'a1@uni.edu'" note."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell('STUDENT_ID = "a1@uni.edu"\nSTUDENT_ID = "a2@uni.edu"')])
    p = tmp_path / "a.ipynb"
    nbformat.write(nb, str(p))
    assert grading._student_value(p) == ("a2@uni.edu", 2)
    notes = grading._id_notes({}, {"STUDENT_ID": "a2@uni.edu"}, *grading._student_value(p), p)
    assert notes == ["STUDENT_ID is assigned 2 times: check by hand which id was meant"], notes


def test_an_unreadable_answer_is_named_in_the_row():
    """An answer whose __float__ raised SystemExit scored 0 with nothing in the error column."""
    from pagesim.teaching.grade_child import encode

    class Exits:
        def __float__(self):
            raise SystemExit(3)

    graded = {"STUDENT_ID": "a@uni.edu", "q1_leaf_2m": grading._decode(encode(Exits())), "q1_leaf_4k": grading._decode(encode(5))}
    assert grading._answer_notes(graded) == ["answer q1_leaf_2m (a Exits) could not be read as a number: reading it raised SystemExit; it scores 0"]


def test_a_saved_output_of_another_seed_is_flagged(built, tmp_path):
    """A notebook run as one id, then given another id without being run again, was graded with
    nothing said: its saved "your seed:" output shows another seed than the one graded."""
    name = NAMES[-1]
    sol = SAMPLES / name / "solution.ipynb"
    sub = tmp_path / "subs"
    _with_id(sol, 'STUDENT_ID = "faye@uni.edu"', sub / "edited.ipynb", outputs=f"your seed: {exercises.seed_of('other@uni.edu')}\n")
    _with_id(sol, 'STUDENT_ID = "gil@uni.edu"', sub / "run.ipynb", outputs=f"your seed: {exercises.seed_of('gil@uni.edu')}\n")
    build_dir = next(iter(built.values())).parent
    grading.grade(sub, build_dir, in_process=True, quiet=True)
    by = {Path(r["file"]).stem: r for r in csv.DictReader(open(sub / "grades.csv"))}
    want = f"its saved output shows 'your seed: {exercises.seed_of('other@uni.edu')}', not the seed graded ({exercises.seed_of('faye@uni.edu')})"
    assert want in by["edited"]["error"], by["edited"]
    assert by["run"]["error"] == ""


def test_zips_and_other_files_get_rows(built, tmp_path):
    """Only *.ipynb got a row: the zip grader.export() writes (which students are told to submit)
    and any other file were left out in silence. A zip's notebook is graded; a zip with none or
    several, and any other file, is a row saying why it was not graded."""
    import zipfile

    name = NAMES[-1]
    sol = (SAMPLES / name / "solution.ipynb").read_bytes()
    sub = tmp_path / "subs"
    (sub / "bob").mkdir(parents=True)
    with zipfile.ZipFile(sub / "bob" / f"{name}_2026_01_01T00_00_00_000000.zip", "w") as zf:
        zf.writestr(f"{name}.ipynb", sol)
        zf.writestr(".OTTER_LOG", b"\x00log")
        zf.writestr("__zip_filename__", "x.zip")
    with zipfile.ZipFile(sub / "none.zip", "w") as zf:
        zf.writestr("notes.txt", "hello")
    with zipfile.ZipFile(sub / "two.zip", "w") as zf:
        zf.writestr("a.ipynb", sol)
        zf.writestr("b/b.ipynb", sol)
    (sub / "notes\x1b[31m.txt").write_text("hello")
    (sub / "broken.zip").write_bytes(b"PK\x03\x04 not really")
    (sub / ".DS_Store").write_bytes(b"\x00")
    build_dir = next(iter(built.values())).parent
    grading.grade(sub, build_dir, in_process=True, quiet=True)
    grading.grade(sub, build_dir, in_process=True, quiet=True)  # again: its own grades.csv is not a submission
    by = {r["file"]: r for r in csv.DictReader(open(sub / "grades.csv"))}
    assert set(by) == {f"bob/{name}_2026_01_01T00_00_00_000000.zip", "none.zip", "two.zip", "notes?[31m.txt", "broken.zip"}, set(by)
    graded = by[f"bob/{name}_2026_01_01T00_00_00_000000.zip"]
    assert graded["error"] == "" and float(graded["total"]) == float(graded["max"]) > 0 and graded["assignment"] == name
    assert "the zip holds no notebook (.ipynb)" in by["none.zip"]["error"] and by["none.zip"]["total"] == ""
    assert "the zip holds 2 notebooks (a.ipynb, b/b.ipynb)" in by["two.zip"]["error"]
    assert "not a readable zip" in by["broken.zip"]["error"] or "is not a notebook" in by["broken.zip"]["error"]
    assert "is not a notebook (.ipynb) or a zip holding one" in by["notes?[31m.txt"]["error"] and "\x1b" not in by["notes?[31m.txt"]["error"]


@pytest.mark.parametrize(
    "text, want",
    [
        ("[1, 2, 3]", "its JSON is a list, not a notebook"),
        ('{"cells": "nope", "metadata": {}, "nbformat": 4, "nbformat_minor": 5}', 'its "cells" is a string, not a list of cells'),
        ('{"cells": [1], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}', "its cell 1 is a number, not a cell"),
    ],
)
def test_a_notebook_of_the_wrong_shape_is_named_plainly(tmp_path, text, want):
    """A notebook whose JSON is a list was reported as "'list' object has no attribute 'get'"."""
    p = tmp_path / "a.ipynb"
    p.write_text(text)
    with pytest.raises(ValueError) as e:
        grading.assignment_of(p)
    assert want in str(e.value) and "attribute" not in str(e.value), str(e.value)


def test_an_answer_that_exits_when_read_is_an_unreadable_answer():
    """An answer whose __float__ raised SystemExit(3) ended the grading process after the last cell
    ("exited with code 3"): it is an answer that cannot be read as a number, and the others count."""
    import numpy as np
    import xarray as xr

    from pagesim.teaching.grade_child import _encode_any, encode

    class Exits:
        def __float__(self):
            raise SystemExit(3)

    assert encode(Exits()) == {"t": "object", "type": "Exits", "why": "SystemExit"}
    assert encode(np.array(5)) == {"t": "int", "v": "5"} and encode(xr.DataArray(7)) == {"t": "int", "v": "7"}
    assert encode(np.array([5]))["t"] == "object" and encode(np.array(2.5)) == {"t": "number", "v": "2.5"}

    class Odd:
        @property
        def __class__(self):
            raise SystemExit(4)

    assert _encode_any(Odd())["t"] == "object"
