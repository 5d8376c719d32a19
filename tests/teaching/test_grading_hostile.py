"""`pagesim exercises grade` against hostile submissions: each runs in its own process group and
temporary folder, is stopped by --timeout, cannot end the batch, is flagged for shell commands and
outside files, and fails in one line.

The submissions are the committed sample solution of the quickest assignment (05, no simulation)
with one hostile cell inserted as its 4th cell. One build and two batches through the real command
(six gradings in all, one of them the 5 s timeout) serve every test that grades.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

pytest.importorskip("otter", reason="otter-grader is not installed (pip install -e '.[exercises]')")

from pagesim.teaching import grading  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
NAME = "05_shared_page_tables"
SOLUTION = REPO / "exercises" / "samples" / NAME / "solution.ipynb"
CELLS = len(nbformat.read(str(SOLUTION), as_version=4).cells) + 1  # with the hostile cell


def _hostile(path: Path, code: str) -> Path:
    nb = nbformat.read(str(SOLUTION), as_version=4)
    nb.cells.insert(3, nbformat.v4.new_code_cell(code))
    nbformat.write(nb, str(path))
    return path


def _grade_cli(sub: Path, build: Path, tmpdir: Path, *extra) -> tuple[subprocess.CompletedProcess, dict[str, dict]]:
    """The instructor's command with a private TMPDIR; the CSV's rows by file stem."""
    tmpdir.mkdir()
    env = dict(os.environ, TMPDIR=str(tmpdir))
    out = sub.parent / f"{sub.name}-grades.csv"
    r = subprocess.run(
        [sys.executable, "-m", "pagesim", "exercises", "grade", str(sub), "--build", str(build), "--csv", str(out), *extra],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
    )
    rows = {}
    if out.exists():
        with open(out, newline="") as fh:
            rows = {Path(r["file"]).stem: r for r in csv.DictReader(fh)}
    return r, rows


@pytest.fixture(scope="module")
def build(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("hostile-build")
    grading.build(out, only=["05"], check=False, quiet=True)
    return out


@pytest.fixture(scope="module")
def batch(build, tmp_path_factory):
    """One batch: the solution, and notebooks that run a shell command, kill their parent, call
    os._exit(3), and write what they can see (folder, environment) to a file outside."""
    base = tmp_path_factory.mktemp("hostile")
    sub = base / "subs"
    sub.mkdir()
    probe = base / "probe.json"
    (sub / "solution.ipynb").write_bytes(SOLUTION.read_bytes())
    _hostile(sub / "system.ipynb", 'import os\nos.system("ls -la > listing.txt")')
    _hostile(sub / "killparent.ipynb", "import os\nos.kill(os.getppid(), 9)")
    _hostile(sub / "exit3.ipynb", "import os\nos._exit(3)")
    _hostile(sub / "swap.ipynb", 'globals()["STUDENT_ID"] = "friend@example.edu"')
    _hostile(sub / "exit0.ipynb", "import os\nos._exit(0)")
    _hostile(sub / "pip.ipynb", f"%pip --log {base / 'piplog.txt'} --version")
    exits = nbformat.read(str(SOLUTION), as_version=4)
    exits.cells.append(nbformat.v4.new_code_cell("class Exits:\n    def __float__(self):\n        raise SystemExit(3)\n\nq1_leaf_2m = Exits()"))
    nbformat.write(exits, str(sub / "floatexit.ipynb"))
    fifo = nbformat.read(str(SOLUTION), as_version=4)
    fifo.cells.append(nbformat.v4.new_code_cell("import os, sys\nfor p in sys.argv[1:3]:\n    os.remove(p)\n    os.mkfifo(p)"))
    nbformat.write(fifo, str(sub / "fifo.ipynb"))
    unset = nbformat.read(str(SOLUTION), as_version=4)
    unset.cells.append(nbformat.v4.new_code_cell("del STUDENT_ID"))
    nbformat.write(unset, str(sub / "unset.ipynb"))
    _hostile(
        sub / "probe.ipynb",
        "import json, os\n"
        "top = os.path.dirname(os.getcwd())\n"
        f"with open({str(probe)!r}, 'w') as fh:\n"
        "    json.dump({'cwd': os.getcwd(), 'files': [os.path.join(d, f) for d, _, fs in os.walk(top) for f in fs], 'env': dict(os.environ)}, fh)",
    )
    r, rows = _grade_cli(sub, build, base / "tmp", "--timeout", "300")
    return {"run": r, "rows": rows, "probe": json.loads(probe.read_text()) if probe.exists() else None, "tmp": base / "tmp", "build": build, "base": base}


def test_the_batch_survives_and_the_csv_is_complete(batch):
    r, rows = batch["run"], batch["rows"]
    assert r.returncode == 0, r.stderr[-2000:]
    assert set(rows) == {"solution", "system", "killparent", "exit3", "probe", "swap", "unset", "fifo", "exit0", "pip", "floatexit"}
    assert rows["fifo"]["error"] == "the notebook removed the grader's progress file or put something that is not a file in its place", rows["fifo"]
    for k in ("solution", "system", "probe"):  # graded as usual, after and before the hostile ones
        assert rows[k]["error"] == "" and float(rows[k]["total"]) == float(rows[k]["max"]) == 6, rows[k]
    assert rows["solution"]["flags"] == ""


def test_a_shell_command_is_flagged(batch):
    row = batch["rows"]["system"]
    assert "runs shell commands" in row["flags"] and "os.system (cell 4)" in row["flags"]
    assert f"system.ipynb: FLAGGED: {row['flags']}" in batch["run"].stderr.splitlines()
    assert "touches files outside its folder: " in batch["rows"]["probe"]["flags"]


def test_a_notebook_that_kills_its_parent_is_one_line(batch):
    row = batch["rows"]["killparent"]
    assert row["total"] == ""
    assert row["error"] == (
        f"the process supervising the notebook was killed by SIGKILL in cell 4 of {CELLS} (a notebook that kills its parent process does this)"
    )
    assert f"killparent.ipynb: NOT GRADED: {row['error']}" in batch["run"].stderr.splitlines()
    assert "os.kill (cell 4)" in row["flags"]


def test_os_exit_is_one_line(batch):
    row = batch["rows"]["exit3"]
    assert row["error"] == f"the notebook's process exited with code 3 in cell 4 of {CELLS}"
    assert f"exit3.ipynb: NOT GRADED: {row['error']}" in batch["run"].stderr.splitlines()
    assert "Traceback" not in batch["run"].stderr


def test_os_exit_0_is_not_called_an_exit_code_alone(batch):
    """os._exit(0) was reported as "exited with code 0", which reads like success."""
    row = batch["rows"]["exit0"]
    assert row["error"] == (
        f"the notebook's process ended in cell 4 of {CELLS} before its answers were written "
        "(exit code 0: a cell ended it, as os._exit(0) or posix._exit(0) does)"
    ), row
    assert "ends its own process: os._exit (cell 4)" in row["flags"]


def test_pip_does_not_run_while_grading(batch):
    """A %pip cell ran the grader's own pip during grading, unflagged: it is flagged and does nothing."""
    row = batch["rows"]["pip"]
    assert "installs packages (not run while graded): %pip (cell 4)" in row["flags"], row
    assert row["error"] == "" and float(row["total"]) == 6, row
    assert not (batch["base"] / "piplog.txt").exists(), "pip ran while the notebook was graded"


def test_an_answer_that_exits_when_read_costs_only_that_answer(batch):
    """An answer whose __float__ raised SystemExit(3) ended the notebook's process after its last
    cell ("exited with code 3"): the answer is unreadable, the others are graded."""
    row = batch["rows"]["floatexit"]
    assert float(row["total"]) == 5 and float(row["q1"]) == 1, row
    # once scored 0 with nothing in the error column
    assert row["error"] == "answer q1_leaf_2m (a Exits) could not be read as a number: reading it raised SystemExit; it scores 0", row


def test_grade_finds_the_checkouts_build_from_any_folder(tmp_path, monkeypatch):
    """`pagesim exercises grade` resolved its default --build against the current folder: run
    elsewhere, it said the assignments were not built although they were."""
    from pagesim.cli import main

    seen = {}
    monkeypatch.setattr(grading, "grade", lambda sub, build, **k: seen.update(build=Path(build)) or [])
    monkeypatch.setattr(grading, "samples", lambda build, out, **k: seen.update(samples=(Path(build), Path(out))) or {})
    monkeypatch.chdir(tmp_path)
    assert main(["exercises", "grade", str(tmp_path)]) == 0
    assert seen["build"] == REPO / "build" / "exercises"
    assert main(["exercises", "samples"]) == 0
    assert seen["samples"] == (REPO / "build" / "exercises", REPO / "exercises" / "samples")


def test_the_tests_are_not_where_the_notebook_runs(batch):
    seen = batch["probe"]
    assert seen is not None, "the probe notebook did not run"
    cwd = Path(seen["cwd"])
    assert cwd.name == "submission" and cwd.parent.name.startswith("pagesim-grade-") and cwd.parent.parent == batch["tmp"]
    names = [Path(f).name for f in seen["files"]]
    assert "probe.ipynb" in names
    for f in seen["files"]:  # nothing of the autograder in the submission's whole temporary folder
        assert not f.endswith((".zip", ".py", "otter_config.json")) and NAME + ".ipynb" not in f, f
    build = str(batch["build"])
    assert not [k for k, v in seen["env"].items() if build in v], "an environment variable names the build folder"
    assert seen["env"]["PWD"] == seen["cwd"]


def test_no_temporary_folder_is_left(batch):
    assert [p.name for p in batch["tmp"].iterdir() if p.name.startswith("pagesim-grade-")] == []


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_an_endless_loop_stops_at_the_timeout_with_its_processes(build, tmp_path):
    """--timeout 5: one line naming the timeout and the cell; a background process the notebook
    started is killed with it; no temporary folder is left."""
    sub = tmp_path / "subs"
    sub.mkdir()
    pidfile = tmp_path / "child.pid"
    code = f"import subprocess\np = subprocess.Popen(['sleep', '600'])\nopen({str(pidfile)!r}, 'w').write(str(p.pid))\nwhile True:\n    pass"
    _hostile(sub / "loop.ipynb", code)
    r, rows = _grade_cli(sub, build, tmp_path / "tmp", "--timeout", "5")
    assert r.returncode == 0, r.stderr[-2000:]
    assert rows["loop"]["error"] == f"did not finish in 5 s (the --timeout): its process group was killed in cell 4 of {CELLS}"
    assert f"loop.ipynb: NOT GRADED: {rows['loop']['error']}" in r.stderr.splitlines()
    assert not _alive(int(pidfile.read_text())), "the notebook's background process outlived its grading"
    assert list((tmp_path / "tmp").iterdir()) == []


def _nb(tmp_path, *cells) -> Path:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# title")] + [nbformat.v4.new_code_cell(c) for c in cells])
    p = tmp_path / "nb.ipynb"
    nbformat.write(nb, str(p))
    return p


@pytest.mark.parametrize(
    "code, want",
    [
        ("import os\nos.system('ls')", "runs shell commands or programs: os.system (cell 3)"),
        ("import os as o\no.popen('ls')", "os.popen (cell 3)"),
        ("from os import execvp\nexecvp('ls', ['ls'])", "os.execvp (cell 3)"),
        ("import subprocess\nsubprocess.run(['ls'])", "import subprocess (cell 3)"),
        ("import pty", "import pty (cell 3)"),
        ("!ls ../..", "!ls ../.. (cell 3)"),
        ("files = !ls", "!ls (cell 3)"),
        ("%%bash\nls /", "%%bash (cell 3)"),
        ("open('/etc/passwd').read()", "touches files outside its folder: '/etc/passwd' (cell 3)"),
        ("open('../../build/x').read()", "'../../build/x' (cell 3)"),
        ("import os\nos.listdir(os.path.expanduser('~'))", "os.path.expanduser (cell 3)"),
        ("import pagesim\npagesim.__file__", "__file__ (cell 3)"),
        ("import os\nos.chdir('x')", "os.chdir (cell 3)"),
        ("import os\nos.kill(os.getppid(), 9)", "signals processes or leaves its process group: os.kill (cell 3)"),
        ("eval('1 + 1')", "runs code built at run time: eval (cell 3)"),
        ("%pip install requests", "installs packages (not run while graded): %pip (cell 3)"),
        ("%%pip\ninstall requests", "installs packages (not run while graded): %%pip (cell 3)"),
        ("%conda install numpy", "%conda (cell 3)"),
        ("%mamba install numpy", "%mamba (cell 3)"),
        ('get_ipython().run_line_magic("pip", "install x")', "installs packages (not run while graded): %pip (cell 3)"),
        ("import pip\npip.main(['install', 'x'])", "installs packages (not run while graded): import pip (cell 3), pip.main (cell 3)"),
        ("import os\nos._exit(0)", "ends its own process: os._exit (cell 3)"),
        ("from os import abort\nabort()", "ends its own process: os.abort (cell 3)"),
        ("import posix\nposix._exit(0)", "ends its own process: posix._exit (cell 3)"),
        ("from posix import system\nsystem('ls')", "runs shell commands or programs: posix.system (cell 3)"),
        (
            "from concurrent.futures import ProcessPoolExecutor\nProcessPoolExecutor().submit(print)",
            "runs shell commands or programs: concurrent.futures.ProcessPoolExecutor (cell 3)",
        ),
        ("import concurrent.futures as cf\ncf.ProcessPoolExecutor()", "runs shell commands or programs: concurrent.futures.ProcessPoolExecutor (cell 3)"),
        ("import multiprocessing\nmultiprocessing.Process(target=print).start()", "runs shell commands or programs: import multiprocessing (cell 3)"),
        ("__import__('os')", "__import__ (cell 3)"),
    ],
)
def test_scan_flags(tmp_path, code, want):
    flags = grading.scan(_nb(tmp_path, "x = 1", code))
    assert any(want in f for f in flags), flags
    assert len(flags) == len({f.split(":")[0] for f in flags})  # one entry per kind


def test_scan_finds_nothing_in_the_samples(tmp_path):
    for p in sorted((REPO / "exercises" / "samples").glob("*/*.ipynb")):
        assert grading.scan(p) == [], p
    assert grading.scan(_nb(tmp_path, "a = 10 / 2\nb = 'x/y'\nc = f'{a}/s'")) == []


def test_the_csv_folder_is_checked_before_grading(tmp_path, monkeypatch, build):
    sub = tmp_path / "subs"
    sub.mkdir()
    (sub / "a.ipynb").write_bytes(SOLUTION.read_bytes())
    monkeypatch.setattr(grading, "grade_isolated", lambda *a, **k: pytest.fail("graded before the CSV's folder was checked"))
    with pytest.raises(ValueError, match="does not exist") as e:
        grading.grade(sub, build, out_csv=tmp_path / "missing" / "grades.csv", quiet=True)
    assert str(tmp_path / "missing" / "grades.csv") in str(e.value)
    (tmp_path / "file").write_text("")
    with pytest.raises(ValueError, match=r"folder .*does not exist"):
        grading.grade(sub, build, out_csv=tmp_path / "file" / "grades.csv", quiet=True)
    with pytest.raises(ValueError, match="is a folder"):
        grading.grade(sub, build, out_csv=tmp_path, quiet=True)


def test_each_row_is_written_as_it_is_graded(tmp_path, monkeypatch, build):
    """Interrupted at the second submission: the CSV holds the first row, complete, and no part file."""
    sub = tmp_path / "subs"
    sub.mkdir()
    for k in ("a", "b", "c"):
        (sub / f"{k}.ipynb").write_bytes(SOLUTION.read_bytes())
    calls = []

    def fake(submission, autograder_notebook, timeout, graded=None):
        calls.append(submission)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return {"q1": (2.0, 2.0), "q2": (1.0, 2.0), "q3": (0.0, 2.0)}

    monkeypatch.setattr(grading, "grade_isolated", fake)
    out = tmp_path / "grades.csv"
    with pytest.raises(KeyboardInterrupt):
        grading.grade(sub, build, out_csv=out, quiet=True)
    with open(out, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [(r["file"], r["q1"], r["q2"], r["total"], r["max"]) for r in rows] == [("a.ipynb", "2.0", "1.0", "3.0", "6.0")]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["grades.csv", "subs"]


@pytest.mark.parametrize("bad", [0, -1, "abc", "nan", "inf", True])
def test_timeout_is_checked(tmp_path, build, bad):
    with pytest.raises(ValueError, match=rf"timeout={bad!r} is not allowed"):
        grading.grade(tmp_path, build, timeout=bad)


def test_timeout_option_and_missing_build_are_one_line_errors(tmp_path, capsys):
    from pagesim.cli import main

    sub = tmp_path / "subs"
    sub.mkdir()
    (sub / "a.ipynb").write_bytes(SOLUTION.read_bytes())
    missing = "the assignments are not built; run `pagesim exercises build --out"
    for args, want in (
        (["grade", str(sub), "--build", str(tmp_path / "nobuild"), "--timeout", "soon"], "timeout='soon' is not allowed"),
        (["grade", str(sub), "--build", str(tmp_path / "nobuild")], missing),
        (["samples", "--build", str(tmp_path / "nobuild"), "--out", str(tmp_path / "out")], missing),
    ):
        assert main(["exercises", *args]) == 2
        err = capsys.readouterr().err
        assert len(err.splitlines()) == 1 and want in err and "Errno" not in err, err


def test_the_csv_names_the_id_that_was_graded(batch):
    """The questions graded are those of STUDENT_ID as the notebook left it: the row names that id
    and its seed, and says that the notebook's STUDENT_ID cell reads another."""
    from pagesim.teaching.exercises import seed_of

    row = batch["rows"]["swap"]
    assert row["student"] == "friend@example.edu" and row["seed"] == str(seed_of("friend@example.edu")), row
    assert "STUDENT_ID was 'friend@example.edu' when the notebook ran, not 'sample-student@example.edu'" in row["error"], row
    assert f"swap.ipynb: CHECK: {row['error']}" in batch["run"].stderr.splitlines()
    assert batch["rows"]["solution"]["student"] == "sample-student@example.edu"
    unset = batch["rows"]["unset"]  # graded with no id, so it is not shown as the cell's
    assert unset["student"] == unset["seed"] == "" and "no STUDENT_ID was set when the notebook ran" in unset["error"], unset


@pytest.mark.parametrize(
    "otter, why",
    [
        ({"assignment_name": "/tmp/elsewhere/evil"}, "is not an assignment's name"),
        ({"assignment_name": "../05_shared_page_tables"}, "is not an assignment's name"),
        ({"assignment_name": 5}, "is not an assignment's name"),
        ({"assignment_name": ["05"]}, "is not an assignment's name"),
        ("x", "has no otter assignment name"),
    ],
)
def test_a_submissions_metadata_names_only_an_assignment_of_the_build(tmp_path, monkeypatch, build, otter, why):
    """The assignment name chooses the tests: never a path (the tests of a notebook the student
    planted, run in the grading process), never a crash that ends the batch."""
    sub = tmp_path / "subs"
    sub.mkdir()
    nb = nbformat.read(str(SOLUTION), as_version=4)
    nb.metadata["otter"] = otter
    nbformat.write(nb, str(sub / "a_bad.ipynb"))
    (sub / "b_good.ipynb").write_bytes(SOLUTION.read_bytes())
    graded = []
    monkeypatch.setattr(grading, "grade_isolated", lambda f, ag, *a, **k: graded.append((Path(f).name, Path(ag))) or {"q1": (2.0, 2.0)})
    rows = {r["file"]: r for r in grading.grade(sub, build, quiet=True)}
    assert why in rows["a_bad.ipynb"]["error"] and "total" not in rows["a_bad.ipynb"]
    assert graded == [("b_good.ipynb", Path(build).resolve() / NAME / "autograder" / f"{NAME}.ipynb")]
    assert rows["b_good.ipynb"]["total"] == 2.0


def test_the_csv_holds_what_a_student_writes_as_text_only(tmp_path):
    """A row's text is written as text: no formula a spreadsheet would run, no character that
    cannot be written (a lone surrogate ended the batch) or that reorders or hides text."""
    out = tmp_path / "g.csv"
    c = grading._Csv(out, ["file", "student", "error"])
    c.add({"file": "a.ipynb", "student": '=HYPERLINK("http://x/","y")', "error": "+1"})
    c.add({"file": "b\ud800.ipynb", "student": "ada\ud800x\u202eevil\x00", "error": "@SUM(A1)"})
    c.add({"file": "c.ipynb", "student": "-5", "error": "plain, with a comma"})
    with open(out, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["student"] for r in rows] == ['\'=HYPERLINK("http://x/","y")', "ada?x?evil?", "'-5"]
    assert [r["error"] for r in rows] == ["'+1", "'@SUM(A1)", "plain, with a comma"]
    assert rows[1]["file"] == "b?.ipynb"
    with pytest.raises(ValueError, match="names a notebook"):
        grading._Csv(tmp_path / "solution.ipynb", ["file"])


def test_a_cell_the_scan_cannot_parse_is_flagged(tmp_path):
    """A cell that does not parse on its own may still run (an earlier cell's __future__ import
    changes how later cells parse), so it is flagged as not checked, not skipped in silence."""
    flags = grading.scan(_nb(tmp_path, "from __future__ import barry_as_FLUFL", "import os\nif 1 <> 2:\n    os.system('id')"))
    assert "cells this reading could not parse, so did not check: cell 3" in flags, flags
    deep = grading.scan(_nb(tmp_path, "x = " + "-" * 100_000 + "1"))
    assert deep == ["cells this reading could not parse, so did not check: cell 2"], deep


def test_what_the_notebook_writes_into_the_progress_file_is_not_trusted(tmp_path):
    p = tmp_path / "progress.jsonl"
    p.write_text('{"cell": 2}\n{"error": "GRADER: give it full marks"}\n{"exit": 0}\n')
    state = grading._read_progress(p)
    assert state["error"] is None and state["cell"] == 2  # an error record counts only before the first cell
    p.write_text('{"error": "ModuleNotFoundError: No module named IPython"}\n')
    assert grading._read_progress(p)["error"] == "ModuleNotFoundError: No module named IPython"
    with open(p, "w") as fh:
        fh.write("x" * (grading.PROGRESS_LIMIT + 10))
    assert grading._read_progress(p)["oversized"]


@pytest.mark.parametrize(
    "code, want",
    [
        ('%%capture\nimport subprocess\nsubprocess.run(["touch", "x"])', "import subprocess (cell 3)"),
        ('%%time\nimport os\nos.system("id")', "os.system (cell 3)"),
        ('%timeit -n1 -r1 __import__("os").system("id")', "__import__ (cell 3)"),
        ('%time open("/etc/passwd").read()', "'/etc/passwd' (cell 3)"),
        ("%%timeit import os\nos.getpid()", ""),
        ("get_ipython().run_cell(\"import os; os.system('id')\")", "get_ipython().run_cell (cell 3)"),
    ],
)
def test_scan_reads_the_python_that_magics_run(tmp_path, code, want):
    """%%capture, %time, %%timeit ... run the Python they are given: the scan reads it as the
    cell's own (it skipped it: a shell command under %%capture was not flagged)."""
    flags = grading.scan(_nb(tmp_path, "x = 1", code))
    assert any(want in f for f in flags) if want else flags == [], flags
    assert not any("could not parse" in f for f in flags), flags  # a magic's own text is not the cell


def test_shared_files_replaced_by_a_fifo_do_not_block_the_grader(tmp_path):
    """A notebook that replaced the progress or answers file by a FIFO hung the grader in open()
    for ever: the grader opens them without blocking and reads only regular files."""
    import os
    import threading

    p = tmp_path / "progress.jsonl"
    os.mkfifo(p)
    got = []
    t = threading.Thread(target=lambda: got.append((grading._read_progress(p)["cell"], grading._read_shared(p, 10))), daemon=True)
    t.start()
    t.join(10)
    assert not t.is_alive(), "reading a FIFO in place of the progress file blocked"
    assert got == [(None, None)]  # nothing read
    q = tmp_path / "answers.json"
    q.write_text("{}")
    (tmp_path / "link").symlink_to(q)
    assert grading._read_shared(q, 10) == b"{}" and grading._read_shared(tmp_path / "link", 10) is None


def test_the_id_is_read_as_python_reads_it(tmp_path):
    """A STUDENT_ID written with escapes gave a false note (the source's '\\x00' against the value's
    NUL); an id unset at the end is graded as no id, not shown as the cell's."""
    nb = nbformat.read(str(SOLUTION), as_version=4)
    for c in nb.cells:
        if c.cell_type == "code" and grading.STUDENT_ID_RE.search(c.source):
            c.source = grading.STUDENT_ID_RE.sub('STUDENT_ID = "a\\\\tb"', c.source, count=1)
            break
    p = tmp_path / "esc.ipynb"
    nbformat.write(nb, str(p))
    assert grading._student_value(p) == ("a\tb", 1)
    assert grading._clean("a\u2028b\u2029c") == "a?b?c"
