"""The instructor's two commands: build the assignments with otter-grader, grade a folder.

``build(out)`` runs ``otter assign`` on every master notebook in ``exercises/masters/`` and writes
``out/NAME/student/NAME.ipynb`` (what students get) and ``out/NAME/autograder/`` (the solutions
notebook and the autograder zip ``otter run`` reads). ``grade(submissions, build_dir)`` runs
``otter run`` (no Docker) on every submitted notebook against its assignment's autograder and
writes one CSV row per submission with each question's score.

``grade_in_process`` executes a notebook's code in this process and scores it with otter's own
test files (the autograder notebook's hidden and public tests): the same scores as ``otter run``
without a kernel per notebook, which keeps the test suite quick. ``pagesim exercises grade
--in-process`` uses it too.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MASTERS = REPO / "exercises" / "masters"
STUDENT_ID_RE = re.compile(r"""^STUDENT_ID\s*=\s*(?P<v>"[^"\n]*"|'[^'\n]*'|\d+)""", re.M)


def _otter() -> list[str]:
    exe = Path(sys.executable).with_name("otter")
    if exe.exists():
        return [str(exe)]
    if shutil.which("otter"):
        return ["otter"]
    raise RuntimeError("otter-grader is not installed: pip install 'pagesim[exercises]' (or otter-grader>=7)")


def masters(masters_dir=None, only=None) -> list[Path]:
    d = Path(masters_dir) if masters_dir else MASTERS
    if not d.is_dir():
        raise ValueError(f"masters_dir={str(d)!r} is not a folder of master notebooks")
    found = sorted(p for p in d.glob("*.ipynb") if not p.name.startswith("."))
    if only:
        want = set(only)
        found = [p for p in found if p.stem in want or p.stem[:2] in want]
        missing = want - {p.stem for p in found} - {p.stem[:2] for p in found}
        if missing:
            raise ValueError(f"assignment(s) {sorted(missing)} not found in {d}: allowed {[p.stem for p in sorted(d.glob('*.ipynb'))]}")
    if not found:
        raise ValueError(f"no master notebooks (*.ipynb) in {d}")
    return found


def _assign(master: Path, result: Path, check: bool) -> None:
    """otter assign in this process (one import of otter for all assignments), its log captured."""
    import logging

    from otter.assign import main as assign

    cwd, sink = os.getcwd(), io.StringIO()
    handler = logging.StreamHandler(sink)
    logging.getLogger("otter").addHandler(handler)
    try:
        os.chdir(result.parent)
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            assign(str(master), str(result), no_pdfs=True, no_run_tests=not check)
    except Exception as e:
        raise RuntimeError(f"otter assign failed for {master.name}: {e}\n{sink.getvalue()[-3000:]}") from e
    finally:
        os.chdir(cwd)
        logging.getLogger("otter").removeHandler(handler)


def build(out, masters_dir=None, only=None, check: bool = True, quiet: bool = False) -> dict[str, Path]:
    """Run ``otter assign`` on each master into ``out/NAME``; return NAME -> that folder.

    ``check`` lets otter run the solutions against their own tests (it fails if one fails).
    A folder being rebuilt is replaced only after otter succeeds.
    """
    out = Path(out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    built = {}
    for m in [p.resolve() for p in masters(masters_dir, only)]:
        tmp = Path(tempfile.mkdtemp(prefix=f".{m.stem}-", dir=out))
        try:
            _assign(m, tmp / m.stem, check)
            dest = out / m.stem
            if dest.exists():
                shutil.rmtree(dest)
            (tmp / m.stem).rename(dest)
            built[m.stem] = dest
            if not quiet:
                print(f"built {m.stem}: {dest / 'student' / (m.stem + '.ipynb')} and {dest / 'autograder'}")
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return built


def assignment_of(notebook) -> str:
    """The otter assignment name stored in a notebook's metadata (student and autograder versions)."""
    import nbformat

    try:
        nb = nbformat.read(str(notebook), as_version=4)
    except Exception as e:  # noqa: BLE001 - a submission can be any file
        raise ValueError(f"submission {str(notebook)!r} is not a readable notebook: {e}") from None
    name = nb.metadata.get("otter", {}).get("assignment_name")
    if not name:
        raise ValueError(
            f"submission {str(notebook)!r} has no otter assignment name in its metadata (is it a student notebook from `pagesim exercises build`?)"
        )
    return name


def student_of(notebook) -> str:
    """The STUDENT_ID a notebook sets (its first assignment), or '' when none."""
    import nbformat

    nb = nbformat.read(str(notebook), as_version=4)
    for c in nb.cells:
        if c.cell_type == "code":
            m = STUDENT_ID_RE.search(c.source)
            if m:
                v = m.group("v")
                return v[1:-1] if v[0] in "\"'" else v
    return ""


def _student_value(notebook) -> tuple[str | int, int]:
    """The STUDENT_ID a notebook's first assignment sets, as the notebook's code has it (a quoted id
    is a str, a bare number an int seed), and how many cells assign it."""
    import nbformat

    nb = nbformat.read(str(notebook), as_version=4)
    found = [m.group("v") for c in nb.cells if c.cell_type == "code" for m in STUDENT_ID_RE.finditer(c.source)]
    if not found:
        return "", 0
    v = found[0]
    return (v[1:-1] if v[0] in "\"'" else int(v)), len(found)


def _autograder(build_dir: Path, name: str) -> Path:
    zips = sorted((build_dir / name / "autograder").glob(f"{name}-autograder_*.zip"))
    if not zips:
        raise ValueError(f"no autograder for assignment {name!r} in {build_dir / name / 'autograder'}: run `pagesim exercises build` first")
    return zips[-1]


def _scores_from_results(path: Path) -> dict[str, tuple[float, float]]:
    data = json.loads(path.read_text())
    out = {}
    for t in data.get("tests", []):
        if "score" in t and "max_score" in t:
            out[t["name"]] = (float(t["score"]), float(t["max_score"]))
    return out


OTTER_TIMEOUT = 900  # seconds per submission: a notebook that loops forever fails alone


def run_otter(submission, autograder_zip, timeout: float = OTTER_TIMEOUT) -> dict[str, tuple[float, float]]:
    """``otter run`` on one submission; question -> (score, max)."""
    with tempfile.TemporaryDirectory(prefix="pagesim-grade-") as d:
        try:
            r = subprocess.run(
                _otter() + ["run", "--no-logo", "-a", str(autograder_zip), "-o", d, str(submission)], capture_output=True, text=True, timeout=timeout
            )
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"otter run on {submission} did not finish in {timeout:g} s") from None
        res = Path(d) / "results.json"
        if r.returncode != 0 or not res.exists():
            raise RuntimeError(f"otter run failed on {submission} (exit {r.returncode}):\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
        return _scores_from_results(res)


def _tests_of(autograder_notebook):
    import nbformat
    from otter.test_files import OKTestFile

    nb = nbformat.read(str(autograder_notebook), as_version=4)
    specs = nb.metadata["otter"]["tests"]
    return {q: OKTestFile.from_spec(s, path=str(autograder_notebook)) for q, s in specs.items()}


def grade_in_process(submission, autograder_notebook) -> dict[str, tuple[float, float]]:
    """Execute a notebook's code cells here (errors in a cell are ignored, as otter does), then
    score it with the autograder notebook's tests: question -> (score, max).

    For trusted notebooks only (the samples, the tests): the code runs in this process, so a
    submission can change what is graded after it (patch pagesim, loop forever). Grade students'
    work with ``otter run`` (the default of :func:`grade`), one process per submission."""
    import nbformat
    from IPython.display import display

    nb = nbformat.read(str(submission), as_version=4)
    tests = _tests_of(autograder_notebook)
    env = {"__name__": "__main__", "display": display}
    sink = io.StringIO()
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="pagesim-grade-") as d:
        os.chdir(d)
        try:
            with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
                for c in nb.cells:
                    if c.cell_type != "code" or "otter" in c.source or "grader." in c.source:
                        continue
                    try:
                        exec(compile(c.source, "<cell>", "exec"), env)
                    except (Exception, SystemExit):  # noqa: BLE001 - a student's error (or exit) costs that question, not the grading
                        pass
            out = {}
            for q, tf in tests.items():
                tf.run(env)
                out[q] = (float(tf.score), float(tf.possible))
        finally:
            os.chdir(cwd)
    return out


def grade(submissions, build_dir, out_csv=None, in_process: bool = False, quiet: bool = False) -> list[dict]:
    """Grade every ``*.ipynb`` under ``submissions``; write ``out_csv`` (default
    ``submissions/grades.csv``): file, assignment, student, seed, one column per question, total, max,
    error (why a submission was not graded, or a flag to check by hand; empty otherwise)."""
    from .exercises import seed_of

    sub = Path(submissions)
    if not sub.is_dir():
        raise ValueError(f"submissions={str(sub)!r} is not a folder")
    build_dir = Path(build_dir).resolve()
    files = sorted(p for p in sub.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
    if not files:
        raise ValueError(f"no notebooks (*.ipynb) in {sub}")
    rows, questions = [], []
    for f in files:
        row = {"file": str(f.relative_to(sub)), "assignment": "", "student": "", "seed": "", "error": ""}
        try:  # one bad submission is a row with its error, never the end of the batch
            name = assignment_of(f)
            row["assignment"] = name
            if in_process:
                ag = build_dir / name / "autograder" / f"{name}.ipynb"
                if not ag.exists():
                    raise ValueError(f"no autograder notebook {ag}: run `pagesim exercises build` first")
                scores = grade_in_process(f, ag)
            else:
                scores = run_otter(f, _autograder(build_dir, name))
            value, times = _student_value(f)
        except Exception as e:  # noqa: BLE001 - any file can be submitted
            row["error"] = " ".join(str(e).split())[:300]
            rows.append(row)
            if not quiet:
                print(f"{row['file']}: NOT GRADED: {row['error']}")
            continue
        try:
            seed = seed_of(value)
        except (TypeError, ValueError):
            seed = ""
        row.update(student=str(value), seed=seed)
        if times > 1:  # the CSV reads the first assignment; grading used the value at run time
            row["error"] = f"STUDENT_ID is assigned {times} times: check by hand which id was graded"
        for q, (s, _) in scores.items():
            row[q] = s
            if q not in questions:
                questions.append(q)
        row["total"] = sum(s for s, _ in scores.values())
        row["max"] = sum(m for _, m in scores.values())
        rows.append(row)
        if not quiet:
            print(f"{row['file']}: {name}, {row['total']:g} / {row['max']:g}")
    out_csv = Path(out_csv) if out_csv else sub / "grades.csv"
    cols = ["file", "assignment", "student", "seed"] + sorted(questions, key=lambda q: (len(q), q)) + ["total", "max", "error"]
    tmp = out_csv.with_suffix(out_csv.suffix + ".part")
    with open(tmp, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=cols, restval="")
        w.writeheader()
        w.writerows(rows)
    tmp.replace(out_csv)
    if not quiet:
        print(f"wrote {out_csv}")
    return rows


SAMPLE_ID = "sample-student@example.edu"


def _set_student(nb, student: str):
    for c in nb.cells:
        if c.cell_type == "code" and STUDENT_ID_RE.search(c.source):
            c.source = STUDENT_ID_RE.sub(f'STUDENT_ID = "{student}"', c.source, count=1)
            return
    raise ValueError("the notebook has no STUDENT_ID cell")


def samples(build_dir, out, student: str = SAMPLE_ID, only=None) -> dict[str, list[Path]]:
    """Write three submissions per built assignment into ``out/NAME/``: ``solution.ipynb`` (the
    autograder's solutions), ``blank.ipynb`` (the student version untouched) and ``wrong.ipynb``
    (the solutions with each classic misconception of :data:`pagesim.exercises.WRONG` in place of
    the right answer: what a student holding it would submit). Outputs are cleared."""
    import nbformat

    from .exercises import WRONG, assignment_key

    build_dir, out = Path(build_dir), Path(out)
    written = {}
    names = sorted(p.name for p in build_dir.iterdir() if (p / "student").is_dir())
    if only:
        names = [n for n in names if n in only or n[:2] in only]
    if not names:
        raise ValueError(f"no built assignments in {build_dir}: run `pagesim exercises build` first")
    for name in names:
        sol = nbformat.read(str(build_dir / name / "autograder" / f"{name}.ipynb"), as_version=4)
        blank = nbformat.read(str(build_dir / name / "student" / f"{name}.ipynb"), as_version=4)
        wrong = nbformat.read(str(build_dir / name / "autograder" / f"{name}.ipynb"), as_version=4)
        for nb in (sol, blank, wrong):
            _set_student(nb, student)
            for c in nb.cells:
                if c.cell_type == "code":
                    c.outputs, c.execution_count = [], None
        for var, (expr, why) in WRONG[assignment_key(name)].items():
            pat = re.compile(rf"^{re.escape(var)}\s*=", re.M)
            for i, c in enumerate(wrong.cells):
                if c.cell_type == "code" and pat.search(c.source) and "grader" not in c.source:
                    new = nbformat.v4.new_code_cell(f"{var} = {expr}  # {why}")
                    new.id = f"wrong-{var}".replace("_", "-")
                    wrong.cells.insert(i + 1, new)
                    break
            else:
                raise ValueError(f"{name}: no cell assigns {var} (WRONG names an answer the notebook lacks)")
        d = out / name
        d.mkdir(parents=True, exist_ok=True)
        written[name] = []
        for kind, nb in (("solution", sol), ("blank", blank), ("wrong", wrong)):
            for i, c in enumerate(nb.cells):  # otter gives its own cells random ids: stable ones, so samples diff cleanly
                if not c.id.startswith("wrong-"):
                    c.id = f"cell-{i:02d}"
            p = d / f"{kind}.ipynb"
            nbformat.write(nb, str(p))
            written[name].append(p)
    return written
