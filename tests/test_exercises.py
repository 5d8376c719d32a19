"""exercises/: otter-grader assignments, per-student variants, grading.

The assignments are built once per session (otter assign, into a temporary folder, never beside
this tests/ folder: otter-grader issue 931) and graded in-process with otter's own test files
(``pagesim.grading.grade_in_process``); one test runs the real ``otter run`` on a sample.
"""
from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

pytest.importorskip("otter", reason="otter-grader is not installed (pip install -e '.[exercises]')")

from pagesim import exercises, grading  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
MASTERS = REPO / "exercises" / "masters"
NAMES = sorted(p.stem for p in MASTERS.glob("*.ipynb"))


@pytest.fixture(scope="session")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("exercises-build")
    return grading.build(out, check=False, quiet=True)


@pytest.fixture(scope="session")
def samples(built, tmp_path_factory):
    out = tmp_path_factory.mktemp("exercises-samples")
    build_dir = next(iter(built.values())).parent
    return grading.samples(build_dir, out)


def _grade(nb, built, name):
    return grading.grade_in_process(nb, built[name] / "autograder" / f"{name}.ipynb")


def test_every_notebook_has_an_assignment():
    have = {n[:2] for n in NAMES}
    assert set(exercises.ASSIGNMENTS) == have


def test_masters_are_what_make_masters_writes(tmp_path):
    sys.path.insert(0, str(REPO / "exercises"))
    try:
        import make_masters
    finally:
        sys.path.pop(0)
    for p in make_masters.write(tmp_path):
        got = nbformat.read(str(MASTERS / p.name), as_version=4)
        want = nbformat.read(str(p), as_version=4)
        assert [(c.cell_type, c.source) for c in got.cells] == [(c.cell_type, c.source) for c in want.cells], \
            f"exercises/masters/{p.name} differs from exercises/make_masters.py: rerun it"


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
                    lhs, rhs = (x.strip() for x in line.rsplit("# SOLUTION", 1)[0].split("=", 1))
                    assert f"{lhs} = {rhs}" not in code, f"{name}: solution line {line!r} in the student version"
                    assigned = re.findall(rf"^{re.escape(lhs)} = (.*)$", code, re.M)
                    assert assigned and all(a.strip() == "..." for a in assigned), (name, lhs, assigned)
                    stripped += 1
    assert stripped >= 4
    # the student version still runs its checks: one grader.check per autograded question
    nb = nbformat.read(str(built[name] / "student" / f"{name}.ipynb"), as_version=4)
    checks = [c for c in nb.cells if c.cell_type == "code" and c.source.startswith("grader.check(")]
    assert len(checks) == len(nb.metadata["otter"]["tests"])


def test_committed_samples_grade_as_documented(built, tmp_path):
    """exercises/samples/ (the README's example) grades to full, zero and partial marks."""
    committed = REPO / "exercises" / "samples"
    build_dir = next(iter(built.values())).parent
    rows = grading.grade(committed, build_dir, out_csv=tmp_path / "g.csv", in_process=True, quiet=True)
    assert {r["assignment"] for r in rows} == set(NAMES)
    for r in rows:
        kind = Path(r["file"]).stem
        if kind == "solution":
            assert r["total"] == r["max"] > 0, r
        elif kind == "blank":
            assert r["total"] == 0, r
        else:
            assert 0 < r["total"] < r["max"], r
    with open(tmp_path / "g.csv") as fh:
        got = list(csv.DictReader(fh))
    assert len(got) == 3 * len(NAMES) and {"q1", "total", "max", "seed"} <= set(got[0])


def test_otter_run_grades_a_sample(built, samples, tmp_path):
    """The instructor's command, end to end, as the README runs it (otter run, no Docker)."""
    name = NAMES[0]
    sub = tmp_path / "subs"
    sub.mkdir()
    (sub / "wrong.ipynb").write_bytes(samples[name][2].read_bytes())
    out = tmp_path / "grades.csv"
    build_dir = next(iter(built.values())).parent
    r = subprocess.run([sys.executable, "-m", "pagesim", "exercises", "grade", str(sub), "--build", str(build_dir),
                        "--csv", str(out)], capture_output=True, text=True)
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
        assert x.answers() == y.answers()
    for q in a[0].names:
        params = {json.dumps(s.params(q), sort_keys=True, default=str) for s in a}
        assert len(params) >= 4, f"{key} {q}: only {len(params)} variants among 24 students"
    answers = [s.answers() for s in a]
    for var in answers[0]:
        values = {str(ans[var]) for ans in answers}
        assert len(values) >= 2, f"{key} {var}: every student has the same answer {values}"
    # two students do not share a whole answer sheet
    sheets = {json.dumps(ans, sort_keys=True, default=str) for ans in answers}
    assert len(sheets) == len(ids)


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
    """Q1's indices are the ones pagesim.explain.translate prints (the check a student runs)."""
    from pagesim.explain import translate

    for sid in range(12):
        sheet = exercises.Sheet("00", sid)
        p, ans = sheet.params("q1"), sheet.answers()
        t = translate(p["machine"], p["address"])
        walk = t[t.step.str.startswith("walk level")]["value"].tolist()
        idx = [int(v.split()[1]) for v in walk]
        assert (idx[0], idx[-1]) == (ans["q1_top"], ans["q1_leaf"])
