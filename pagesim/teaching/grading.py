"""The instructor's two commands: build the assignments with otter-grader, grade a folder.

``build(out)`` runs ``otter assign`` on every master notebook in ``exercises/masters/`` and writes
``out/NAME/student/NAME.ipynb`` (what students get) and ``out/NAME/autograder/`` (the solutions
notebook, whose metadata holds the tests, and otter's autograder zip). ``grade(submissions,
build_dir)`` grades every submitted notebook and writes one CSV row per submission, as it goes.

How a submission is graded (:func:`grade_isolated`), in two steps:

1. Its cells run in a process of their own: a new session and process group, started through a
   small supervising process (so the grading process is not the notebook's parent), in a fresh
   temporary folder ``pagesim-grade-*`` holding a copy of the notebook only, with no environment
   variable naming the build folder. otter's ``Notebook`` is a stand-in that checks nothing there:
   no test is read or run while the student's code runs. At the end that process writes the values
   of the names the tests read (the answers and ``STUDENT_ID``) as plain data: kind and number.
2. After that process group is killed (whatever it left running goes with it) and the folder
   removed, the grading process runs otter's own test files (the autograder notebook's public and
   hidden tests, :class:`otter.test_files.OKTestFile`) on those values: no object of the
   submission's is loaded in the grading process. The tests are chosen by the assignment name in
   the notebook's metadata, which must be one of the build's assignments (a path there would run
   the tests of a notebook the student chose, here). The files the two processes share (progress,
   answers) are read with limits, since the notebook can write to them too.

A submission that runs longer than ``timeout`` seconds, exits (``os._exit``), kills its parent or
dies is a row with one line saying so and the cell it was in; the batch goes on. :func:`scan` reads
each notebook's code and flags shell commands, files outside its folder, signals to processes and
code built at run time. None of this is a sandbox: the student's code runs as the grader's user and
can read or change whatever that user can (the build folder and pagesim's own files included, if
it looks for them), kill the grader by its process id, or start processes in a session of their
own that outlive the grading. What it cannot do is find the tests in its folder or its
environment, or patch the checks from inside its own process (changing the build's files on disk,
which it can, is another matter). Grading untrusted work where that matters is for ``otter grade``, which runs each
submission in a Docker container (exercises/README.md).

``grade_in_process`` executes a notebook's code in this process and scores it with the same test
files: quicker (no process per notebook), for trusted notebooks only (``--in-process``).
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import csv
import io
import json
import logging
import math
import os
import re
import shutil
import signal
import stat as st
import subprocess
import sys
import tempfile
import threading
import time
import unicodedata
import warnings
import zipfile
from pathlib import Path

from .exercises import PLACEHOLDER_ID, WRONG, assignment_key, seed_of
from .grade_child import PACKAGE_MAGICS, encode

REPO = Path(__file__).resolve().parents[2]
MASTERS = REPO / "exercises" / "masters"
SAMPLES = REPO / "exercises" / "samples"  # where `pagesim exercises samples` writes by default
ASSIGNMENT_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")  # an assignment's folder in the build, never a path
STUDENT_ID_RE = re.compile(r"""^STUDENT_ID\s*=\s*(?P<v>"[^"\n]*"|'[^'\n]*'|\d+)""", re.M)


def default_build() -> Path:
    """Where ``pagesim exercises build`` writes and ``grade`` and ``samples`` read by default: the
    checkout's ``build/exercises``, whatever the current folder."""
    return REPO / "build" / "exercises"


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
    from otter.assign import main as assign  # deferred: otter-grader is optional (the exercises extra)

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


def package_tree(dest: Path) -> Path:
    """pagesim as it installs, for the autograder zip: a wheel built from this repository (pip,
    no dependencies), its ``pagesim/`` folder unpacked into ``dest``. The masters list it in
    otter's ``autograder_files``: otter puts it in the zip's ``files/`` and, before each
    submission runs, copies it beside the notebook, so ``import pagesim`` finds this version
    (pagesim is not on PyPI). Its dependencies are the masters' ``requirements``."""
    wheels = dest / "wheel"
    wheels.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(wheels), str(REPO)]
    # with this environment's setuptools when it can build wheels, else in pip's own build
    # environment (which downloads setuptools)
    r = subprocess.run(cmd[:4] + ["--no-build-isolation"] + cmd[4:], capture_output=True, text=True)
    if r.returncode != 0:
        r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"could not build pagesim's wheel from {REPO}: {' '.join(r.stderr.split())[-1500:]}")
    (wheel,) = wheels.glob("pagesim-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(dest, [n for n in zf.namelist() if n.startswith("pagesim/")])
    shutil.rmtree(wheels)
    return dest / "pagesim"


def build(out, masters_dir=None, only=None, check: bool = True, quiet: bool = False) -> dict[str, Path]:
    """Run ``otter assign`` on each master into ``out/NAME``; return NAME -> that folder.

    Each master is assigned from a staging folder that holds it and pagesim's package (built from
    this repository, :func:`package_tree`), which the autograder zip ships. ``check`` lets otter run
    the solutions against their own tests (it fails if one fails). A folder being rebuilt is
    replaced only after otter succeeds.
    """
    out = Path(out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    built = {}
    todo = [p.resolve() for p in masters(masters_dir, only)]
    stage = Path(tempfile.mkdtemp(prefix=".stage-", dir=out))
    try:
        package_tree(stage)
        for m in todo:
            staged = stage / m.name
            shutil.copyfile(m, staged)
            tmp = Path(tempfile.mkdtemp(prefix=f".{m.stem}-", dir=out))
            try:
                _assign(staged, tmp / m.stem, check)
                dest = out / m.stem
                if dest.exists():
                    shutil.rmtree(dest)
                (tmp / m.stem).rename(dest)
                (dest / "manual.json").write_text(json.dumps(_manual_of_master(m)))
                built[m.stem] = dest
                if not quiet:
                    print(f"built {m.stem}: {dest / 'student' / (m.stem + '.ipynb')} and {dest / 'autograder'}")
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return built


def _read_nb(path):
    """A submission as nbformat reads it, without nbformat's warning for cells that have no ids
    (notebooks saved by older Jupyter versions), which is no reason to fail or to say anything."""
    import nbformat  # deferred: only running notebooks needs nbformat

    _check_shape(path)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Cell is missing an id field")
        return nbformat.read(str(path), as_version=4)


def _check_shape(path) -> None:
    """A clear error for JSON that is not a notebook's shape (an object whose "cells" is a list of
    objects), which nbformat reports in terms of its own code ('list' object has no attribute 'get')."""
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (ValueError, UnicodeDecodeError):
        return  # not JSON: nbformat says so
    kind = {list: "a list", str: "a string", int: "a number", float: "a number", bool: "true or false", type(None): "null"}
    if not isinstance(data, dict):
        raise ValueError(f'its JSON is {kind.get(type(data), type(data).__name__)}, not a notebook (an object with "cells")')
    cells = data.get("cells")
    if "cells" in data and not isinstance(cells, list):
        raise ValueError(f'its "cells" is {kind.get(type(cells), type(cells).__name__)}, not a list of cells')
    if isinstance(cells, list):
        for i, c in enumerate(cells, 1):
            if not isinstance(c, dict):
                raise ValueError(f"its cell {i} is {kind.get(type(c), type(c).__name__)}, not a cell (an object with a cell_type and a source)")


def assignment_of(notebook, label=None) -> str:
    """The otter assignment name stored in a notebook's metadata (student and autograder versions);
    errors name the submission as ``label`` (default: the notebook's path)."""

    shown = str(label if label is not None else notebook)
    try:
        nb = _read_nb(notebook)
    except Exception as e:  # noqa: BLE001 - a submission can be any file
        raise ValueError(f"submission {shown!r} is not a readable notebook: {e}") from None
    otter = nb.metadata.get("otter")
    name = otter.get("assignment_name") if isinstance(otter, dict) else None
    if not name:
        raise ValueError(f"submission {shown!r} has no otter assignment name in its metadata (is it a student notebook from `pagesim exercises build`?)")
    if not isinstance(name, str) or not ASSIGNMENT_RE.fullmatch(name):
        raise ValueError(
            f"submission {shown!r}: its otter assignment name {_clean(repr(name))[:80]} is not an assignment's name "
            "(letters, digits, '_' and '-', as `pagesim exercises build` writes them)"
        )
    return name


def student_of(notebook) -> str:
    """The STUDENT_ID a notebook's code sets (its last assignment, the value it holds once the cells
    have run in order) as text, or '' when none."""

    value, _ = _student_value(notebook)
    return "" if isinstance(value, _Unread) else str(value)


class _Unread:
    """A STUDENT_ID assignment whose value the reading cannot tell (not a constant expression)."""

    def __init__(self, why: str):
        self.why = why

    def __repr__(self):
        return f"<unread: {self.why}>"


_ARITH = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.FloorDiv: lambda a, b: a // b,
    ast.Mod: lambda a, b: a % b,
}


def _constant(node):
    """The value of a constant expression: a literal, or + - * // % ** and unary - + on numbers
    (and + on strings), with small operands; ValueError for anything else."""
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        pass
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _constant(node.operand)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return -v if isinstance(node.op, ast.USub) else +v
    elif isinstance(node, ast.BinOp):
        a, b = _constant(node.left), _constant(node.right)
        nums = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (a, b))
        if nums and all(abs(x) < 1 << 64 for x in (a, b)):
            if isinstance(node.op, ast.Pow) and abs(b) <= 64:
                return a**b
            if type(node.op) in _ARITH and not (isinstance(node.op, (ast.FloorDiv, ast.Mod)) and b == 0):
                return _ARITH[type(node.op)](a, b)
        if isinstance(node.op, ast.Add) and isinstance(a, str) and isinstance(b, str):
            return a + b
    raise ValueError("not a constant expression")


def _student_value(notebook) -> tuple[object, int]:
    """The STUDENT_ID a notebook's last assignment sets (the value it holds once the cells have run
    in order), as Python reads it (a quoted id is a str,
    a bare number an int seed, ``2**40`` its value), and how many assignments set it. The cells are
    read with ``ast`` (after IPython's magics are transformed): ``STUDENT_ID = ...``,
    ``STUDENT_ID: str = ...``, several statements on a line, parentheses, a constant expression.
    A value the reading cannot tell is an :class:`_Unread` saying why; ('', 0) when no cell sets it."""
    from IPython.core.inputtransformer2 import TransformerManager  # deferred: IPython, only in a notebook

    nb = _read_nb(notebook)
    tm = TransformerManager()
    found = []
    for i, c in enumerate(nb.cells, 1):
        if c.cell_type != "code" or "STUDENT_ID" not in c.source:
            continue
        try:
            tree = ast.parse(tm.transform_cell(c.source))
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            found.append(_Unread(f"cell {i} does not parse"))
            continue
        trees = [tree]
        for code in dict.fromkeys(_magic_code(tree)):  # %time STUDENT_ID = ...: the Python a magic runs
            with contextlib.suppress(SyntaxError, ValueError, MemoryError, RecursionError):
                trees.append(ast.parse(code))
        sets = []
        for node in (n for t in trees for n in ast.walk(t)):
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "STUDENT_ID" for t in node.targets):
                sets.append((node, node.value))
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr)) and isinstance(node.target, ast.Name) and node.target.id == "STUDENT_ID":
                if isinstance(node, ast.AnnAssign) and node.value is None:
                    continue  # an annotation alone sets nothing
                sets.append((node, None if isinstance(node, ast.AugAssign) else node.value))
            elif isinstance(node, (ast.Assign, ast.For, ast.With)) and any(
                isinstance(n, ast.Name) and n.id == "STUDENT_ID" and isinstance(n.ctx, ast.Store) for t in _targets(node) for n in ast.walk(t)
            ):
                sets.append((node, None))  # unpacking, a loop variable: no single value
        for _node, value in sorted(sets, key=lambda nv: (nv[0].lineno, nv[0].col_offset)):
            try:
                if value is None:
                    raise ValueError
                found.append(_constant(value))
            except (ValueError, TypeError, OverflowError, MemoryError, RecursionError):
                what = f"`{_clean(' '.join(ast.unparse(value).split()))[:40]}`" if value is not None else "a value"
                found.append(_Unread(f"cell {i} sets it to {what}, not a constant"))
    if not found:
        return "", 0
    return found[-1], len(found)


def _targets(node) -> list:
    if isinstance(node, ast.Assign):
        return [t for t in node.targets if not isinstance(t, ast.Name)]
    if isinstance(node, ast.For):
        return [node.target]
    return [item.optional_vars for item in node.items if item.optional_vars is not None]


def _saved_seeds(notebook) -> list[int]:
    """The seeds the notebook's saved outputs show (``your seed: N``, printed by its sheet cell when
    it was last run), in order."""
    nb = _read_nb(notebook)
    seeds = []
    for c in nb.cells:
        if c.cell_type != "code":
            continue
        for o in c.get("outputs", []):
            text = o.get("text", "") if o.get("output_type") == "stream" else (o.get("data", {}) or {}).get("text/plain", "")
            text = "".join(text) if isinstance(text, list) else str(text)
            seeds += [int(m) for m in re.findall(r"^your seed: (\d{1,10})\s*$", text, re.M)]
    return seeds


DEFAULT_TIMEOUT = 900.0  # seconds per submission (--timeout): a notebook that loops forever fails alone

# The supervising process: the parent of the process that runs the notebook's cells (so a notebook
# that kills its parent kills this one, not the grading process). It records how that process
# ended. It imports nothing of pagesim's, so it starts in milliseconds.
_SUPERVISOR = """\
import json, os, subprocess, sys
p = subprocess.Popen(sys.argv[2:])
rc = p.wait()
# never blocks: the notebook may have put a FIFO in the file's place
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0), 0o600)
os.write(fd, (json.dumps({"exit": rc}) + "\\n").encode())
"""
_RUNNER = "import sys; from pagesim.teaching.grade_child import main; sys.exit(main())"


class GradingError(RuntimeError):
    """Why a submission was not graded, in one line."""


def check_timeout(timeout) -> float:
    """``timeout`` (seconds, a number or its text) as a positive finite float, or a clear error."""
    try:
        t = float(timeout)
    except (TypeError, ValueError):
        t = float("nan")
    if isinstance(timeout, bool) or not math.isfinite(t) or t <= 0:
        raise ValueError(f"timeout={timeout!r} is not allowed: give a positive number of seconds per submission (default {DEFAULT_TIMEOUT:g})")
    return t


def _names_read_by(tests) -> set[str]:
    """The global names the tests' code reads (the answers and STUDENT_ID), not the ones it binds."""
    read, bound = set(), set()
    for tf in tests.values():
        for case in tf.test_cases:
            code = "\n".join(line[4:] for line in case.body.splitlines() if line.startswith((">>> ", "... ")))
            try:
                tree = ast.parse(code)
            except SyntaxError:
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.Name):
                    (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
                elif isinstance(node, ast.alias):
                    bound.add((node.asname or node.name).split(".")[0])
    return read - bound - set(dir(builtins))


class _Unreadable:
    """An answer that was not a number, a bool, a str or None (float() of it fails, as it did);
    ``why``: what reading it raised, when it raised something."""

    def __init__(self, kind: str, why: str | None = None):
        self.kind, self.why = kind, why

    def __repr__(self):
        return f"<a {self.kind} answer>"


def _decode(record):
    t = record.get("t") if isinstance(record, dict) else None
    v = record.get("v") if isinstance(record, dict) else None
    try:
        if t == "none":
            return None
        if t == "ellipsis":
            return ...
        if t == "bool" and isinstance(v, bool):
            return v
        if t == "str" and isinstance(v, str):
            return v
        if t == "bytes" and isinstance(v, str):
            return bytes.fromhex(v)
        if t == "int" and isinstance(v, str):
            return int(v)
        if t == "number" and isinstance(v, str):
            return float(v)
    except (ValueError, OverflowError):
        pass
    why = record.get("why") if isinstance(record, dict) else None
    return _Unreadable(str(record.get("type", t)) if isinstance(record, dict) else "malformed", why if isinstance(why, str) else None)


def _signal_name(n: int) -> str:
    try:
        return signal.Signals(n).name
    except ValueError:
        return f"signal {n}"


def _child_env(tmp: Path, work: Path, hidden: list[str]) -> dict[str, str]:
    """This process's environment without any variable naming the build folder (where the tests
    are), with the submission's folder as PWD and private temporary and IPython folders."""
    env = {k: v for k, v in os.environ.items() if not any(h in v for h in hidden)}
    env.pop("OLDPWD", None)
    env.update(PWD=str(work), TMPDIR=str(tmp / "tmp"), TEMP=str(tmp / "tmp"), TMP=str(tmp / "tmp"), IPYTHONDIR=str(tmp / "ipython"), MPLBACKEND="Agg")
    return env


def _wait_unreaped(proc: subprocess.Popen, timeout: float) -> bool:
    """Wait up to ``timeout`` s for ``proc`` to exit, leaving it unreaped (a zombie keeps its pid,
    so its process group id cannot be reused before the group is killed). True when it exited."""
    deadline = time.monotonic() + timeout
    pause = 0.01
    while True:
        try:
            if os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                return True
        except ChildProcessError:
            return True
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        time.sleep(min(pause, left))
        pause = min(pause * 2, 0.1)


def _kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL every process still in the submission's process group, then reap the supervisor."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


PROGRESS_LIMIT = 1 << 20  # bytes of the progress file read; the child writes a few bytes a cell
ANSWERS_LIMIT = 4 << 20  # bytes of the answers file read


def _read_shared(path: Path, limit: int) -> bytes | None:
    """Up to ``limit + 1`` bytes of a file the notebook's process could have replaced: opened
    without following a link and without blocking (a FIFO put in its place would wait forever for a
    writer), and read only when it is a regular file. None when it is missing or not a regular file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        if not st.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(fd, "rb") as fh:
            fd = -1
            return fh.read(limit + 1)
    finally:
        if fd >= 0:
            os.close(fd)


def _read_progress(path: Path) -> dict:
    """What the child recorded. The notebook runs as the same user and can write to the file too:
    an ``error`` record counts only before the first cell (the child writes one only then), and a
    file larger than any child writes is reported as written into, not read whole."""
    state = {"cell": None, "after": False, "exit": None, "done": False, "error": None, "oversized": False, "replaced": False}
    data = _read_shared(path, PROGRESS_LIMIT)
    if data is None:
        state["replaced"] = True  # the child creates it before the first cell
        return state
    if len(data) > PROGRESS_LIMIT:
        state["oversized"] = True
        return state
    started = False
    for line in data.decode("utf-8", errors="replace").splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict):
            if "cell" in rec and (rec["cell"] is None or isinstance(rec["cell"], int)):
                state["cell"] = rec["cell"]
                state["after"] = rec["cell"] is None
                started = True
            if isinstance(rec.get("exit"), int):
                state["exit"] = rec["exit"]
            if rec.get("done") is True:
                state["done"] = True
            if isinstance(rec.get("error"), str) and not started:
                state["error"] = _clean(" ".join(rec["error"].split())[:200])
    return state


def grade_isolated(submission, autograder_notebook, timeout=DEFAULT_TIMEOUT, graded: dict | None = None) -> dict[str, tuple[float, float]]:
    """Run a submission's cells in a process of its own, then score its answers with the
    autograder notebook's tests in this process: question -> (score, max).

    The cells run in a new session (its own process group) under a supervising process, in a
    fresh temporary folder holding a copy of the notebook only, with no environment variable
    naming the build folder. When the cells are done (or after ``timeout`` seconds, or when
    that process or its supervisor dies) the whole group is killed and the folder removed. Then
    the values of the names the tests read are scored here, as plain data: no object of the
    submission's is ever loaded in this process. Raises :class:`GradingError` (one line) when the
    submission could not be graded."""

    timeout = check_timeout(timeout)
    ag = Path(autograder_notebook).resolve()
    tests = _tests_of(ag)
    names = sorted(_names_read_by(tests) | {"STUDENT_ID"})
    ncells = len(_read_nb(submission).cells)
    hidden = sorted({str(ag.parent.parent.parent), str(ag.parent)})
    tmp = Path(tempfile.mkdtemp(prefix="pagesim-grade-"))
    proc = None
    try:
        work, progress, answers = tmp / "submission", tmp / "progress.jsonl", tmp / "answers.json"
        for d in (work, tmp / "tmp", tmp / "ipython"):
            d.mkdir()
        copy = work / Path(submission).name
        shutil.copyfile(submission, copy)
        cmd = [sys.executable, "-c", _SUPERVISOR, str(progress), sys.executable, "-c", _RUNNER, str(progress), str(answers), json.dumps(names), str(copy)]
        proc = subprocess.Popen(
            cmd,
            cwd=work,
            env=_child_env(tmp, work, hidden),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        finished = _wait_unreaped(proc, timeout)
        _kill_group(proc)  # what the notebook left running goes with it
        rc, proc = proc.returncode, None
        state = _read_progress(progress)
        if state["oversized"]:
            raise GradingError(f"the notebook wrote into the grader's progress file (more than {PROGRESS_LIMIT} bytes; the grader writes a few a cell)")
        cell = state["cell"]
        where = f"in cell {cell} of {ncells}" if cell else ("after its last cell" if state["after"] else "before its first cell")
        if state["replaced"]:  # the supervisor may have stopped on it too (a FIFO, a folder)
            raise GradingError("the notebook removed the grader's progress file or put something that is not a file in its place")
        if not finished:
            raise GradingError(f"did not finish in {timeout:g} s (the --timeout): its process group was killed {where}")
        if state["error"]:
            raise GradingError(f"could not run the notebook: {state['error']}")
        if rc != 0:
            how = f"killed by {_signal_name(-rc)}" if rc < 0 else f"ended with code {rc}"
            raise GradingError(f"the process supervising the notebook was {how} {where} (a notebook that kills its parent process does this)")
        code = state["exit"]
        if code is None:
            raise GradingError(f"the notebook's process ended without a status {where}")
        if code < 0:
            raise GradingError(f"the notebook's process was killed by {_signal_name(-code)} {where}")
        if code > 0:
            raise GradingError(f"the notebook's process exited with code {code} {where}")
        if not state["done"]:
            raise GradingError(
                f"the notebook's process ended {where} before its answers were written (exit code 0: a cell ended it, as os._exit(0) or posix._exit(0) does)"
            )
        try:
            raw = _read_shared(answers, ANSWERS_LIMIT)
            if raw is None:
                raise GradingError("the notebook's answers file is missing or was replaced by something that is not a file")
            if len(raw) > ANSWERS_LIMIT:
                raise GradingError(f"the notebook wrote into the grader's answers file (more than the {ANSWERS_LIMIT} bytes that are read)")
            values = {n: _decode(v) for n, v in json.loads(raw.decode("utf-8", errors="replace")).items() if n in names}
        except (OSError, ValueError, AttributeError) as e:
            raise GradingError(f"the notebook's answers could not be read: {type(e).__name__}: {' '.join(str(e).split())[:120]}") from None
    finally:
        if proc is not None:  # interrupted (Ctrl-C) or failed while the notebook ran
            _kill_group(proc)
        shutil.rmtree(tmp, ignore_errors=True)
    if graded is not None:  # the values the tests were given (STUDENT_ID: whose questions were graded)
        graded.update(values)
    env = {"__name__": "__main__", **values}
    out = {}
    for q, tf in tests.items():
        tf.run(env)
        out[q] = (float(tf.score), float(tf.possible))
    return out


# What flags a submission (a static reading of its code cells; see scan).
_SHELL_MODULES = {"subprocess", "pty", "pexpect", "ctypes", "commands", "sh", "plumbum", "multiprocessing", "pip", "conda", "mamba"}
_SHELL_FUNCS = {"os.system", "os.popen", "os.fork", "os.forkpty", "os.posix_spawn", "os.posix_spawnp", "os.startfile", "concurrent.futures.ProcessPoolExecutor"}
_SHELL_PREFIXES = ("os.exec", "os.spawn", "posix.exec", "posix.spawn")
_SHELL_MAGICS = {"system", "sx", "bash", "sh", "script", "perl", "ruby", "python", "python2", "python3", "pypy", "run", "writefile"}
_EXIT_FUNCS = {"os._exit", "os.abort"}
_SIGNAL_FUNCS = {"os.kill", "os.killpg", "signal.pthread_kill", "signal.raise_signal", "os.setsid", "os.setpgid", "os.setpgrp"}
_FILE_FUNCS = {"os.chdir", "os.fchdir", "os.chroot", "os.path.expanduser", "os.path.expandvars", "pathlib.Path.home", "pathlib.Path.cwd"}
_DYNAMIC = {"eval", "exec", "compile", "__import__", "importlib", "builtins", "runpy"}
# os's functions are posix's (nt's on Windows) under another name: `import posix; posix._exit(0)`
for _funcs in (_SHELL_FUNCS, _EXIT_FUNCS, _SIGNAL_FUNCS, _FILE_FUNCS):
    _funcs |= {f"{mod}.{f[3:]}" for f in list(_funcs) if f.startswith("os.") and not f.startswith("os.path.") for mod in ("posix", "nt")}


def _outside_path(s: str) -> bool:
    """A path outside the notebook's folder: absolute, from a home folder, or through '..'."""
    s = s.strip()
    if s.startswith("~") or (len(s) > 1 and s[0] == "/" and s[1] not in " /"):
        return True
    return ".." in s.replace("\\", "/").split("/") and ("/" in s or "\\" in s or s == "..")


def _dotted(node, aliases) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(aliases.get(node.id, node.id))
    return ".".join(reversed(parts))


_PYTHON_MAGICS = {"capture", "time", "timeit", "prun", "debug"}  # magics that run the Python they are given


def _magic_code(tree) -> list[str]:
    """The Python source that the cell's magics of _PYTHON_MAGICS run (as IPython writes them:
    ``get_ipython().run_cell_magic('capture', line, body)``, ``run_line_magic('time', code)``),
    for the scan to read as well."""
    out = []
    for node in ast.walk(tree):
        f = node.func if isinstance(node, ast.Call) else None
        if not (isinstance(f, ast.Attribute) and f.attr in ("run_cell_magic", "run_line_magic") and node.args):
            continue
        args = [a.value if isinstance(a, ast.Constant) and isinstance(a.value, str) else None for a in node.args]
        if args[0] not in _PYTHON_MAGICS:
            continue
        for text in args[1:]:
            if text:
                words = text.split()
                while words and words[0].startswith("-"):  # options: -n1, -r 3, -o ...
                    opt = words.pop(0)
                    if opt in ("-n", "-r", "-p", "-s", "-T", "-D", "-l") and words:
                        words.pop(0)
                out += [text, " ".join(words)]
    return out


def scan(notebook) -> list[str]:
    """What a static reading of a notebook's code cells finds that grading should not see: shell
    commands or other programs run (``os.system``, ``subprocess``, ``os.exec*``, ``pty``, ``!cmd``,
    ``%%bash`` ...), files outside its folder (absolute, ``~`` or ``..`` paths, ``os.chdir``,
    ``__file__``), signals to processes (``os.kill``), code built at run time (``eval``,
    ``exec``, ``__import__``), which such a reading cannot see into, package installs (``%pip``,
    ``%conda``, ``%mamba``, ``import pip``: these magics do nothing while a submission is graded)
    and ending its own process (``os._exit``, ``os.abort``). Each finding names the cell
    (counting every cell, 1-based). A reading of the code, not a sandbox: code can hide from it."""
    from IPython.core.inputtransformer2 import TransformerManager  # deferred: IPython, only in a notebook

    nb = _read_nb(notebook)
    tm = TransformerManager()
    trees = []
    unread = []
    todo = [(i, c.source, 0) for i, c in enumerate(nb.cells, 1) if c.cell_type == "code"]
    while todo:
        i, src, depth = todo.pop(0)
        try:
            tree = ast.parse(tm.transform_cell(src if isinstance(src, str) else ""))
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            # not read, so not checked: such a cell may still run (an earlier cell's
            # `from __future__ import ...` changes how IPython parses the later ones). A magic's
            # text that does not parse (its options) is not the cell: the magic's code is tried too
            if depth == 0 and f"cell {i}" not in unread:
                unread.append(f"cell {i}")
            continue
        trees.append((i, tree))
        if depth < 5:  # the Python that %%capture, %time, %%timeit ... run is read as the cell's own
            todo += [(i, code, depth + 1) for code in _magic_code(tree)]
    aliases = {}
    for _, tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for a in node.names:
                    aliases[a.asname or a.name] = f"{node.module}.{a.name}"
    kinds = (
        "runs shell commands or programs",
        "installs packages (not run while graded)",
        "ends its own process",
        "touches files outside its folder",
        "signals processes or leaves its process group",
        "runs code built at run time",
    )
    found = {k: [] for k in kinds}

    def add(kind, what, cell):
        item = f"{what} (cell {cell})"
        if item not in found[kind]:
            found[kind].append(item)

    for i, tree in trees:
        inner = {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}  # f-string parts: its start is read
        for node in ast.walk(tree):
            if id(node) in inner:
                continue
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                f = node.func
                if isinstance(f.value, ast.Call) and isinstance(f.value.func, ast.Name) and f.value.func.id == "get_ipython":
                    if f.attr in ("system", "getoutput"):
                        cmd = node.args[0].value if node.args and isinstance(node.args[0], ast.Constant) else "..."
                        add("runs shell commands or programs", f"!{str(cmd)[:40]}", i)
                    elif f.attr in ("run_cell_magic", "run_line_magic") and node.args and isinstance(node.args[0], ast.Constant):
                        magic = str(node.args[0].value)
                        if magic in _SHELL_MAGICS:
                            add("runs shell commands or programs", ("%%" if f.attr == "run_cell_magic" else "%") + magic, i)
                        elif magic in PACKAGE_MAGICS:
                            add("installs packages (not run while graded)", ("%%" if f.attr == "run_cell_magic" else "%") + magic, i)
                        elif magic in _PYTHON_MAGICS and not all(isinstance(a, ast.Constant) for a in node.args):
                            add("runs code built at run time", f"%{magic} of a value", i)
                    elif f.attr in ("run_cell", "run_cell_magic", "run_line_magic", "ex", "ev", "run_code", "safe_execfile", "safe_run_module"):
                        add("runs code built at run time", f"get_ipython().{f.attr}", i)
                    continue
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                mods = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                for m in mods:
                    top = m.split(".")[0]
                    if top in ("pip", "conda", "mamba"):
                        add("installs packages (not run while graded)", f"import {m}", i)
                    elif top in _SHELL_MODULES:
                        add("runs shell commands or programs", f"import {m}", i)
                    elif top in _DYNAMIC:
                        add("runs code built at run time", f"import {m}", i)
                if isinstance(node, ast.ImportFrom):
                    for a in node.names:
                        name = f"{node.module}.{a.name}"
                        if name in _SHELL_FUNCS or name.startswith(_SHELL_PREFIXES):
                            add("runs shell commands or programs", name, i)
                        elif name in _SIGNAL_FUNCS:
                            add("signals processes or leaves its process group", name, i)
                        elif name in _EXIT_FUNCS:
                            add("ends its own process", name, i)
                continue
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and _outside_path(node.value):
                add("touches files outside its folder", repr(node.value[:40]), i)
            elif isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
                if _outside_path(str(node.values[0].value)):
                    add("touches files outside its folder", f"f{str(node.values[0].value)[:40]!r}", i)
            elif isinstance(node, ast.Name) and node.id == "__file__":
                add("touches files outside its folder", "__file__", i)
            elif isinstance(node, ast.Attribute) and node.attr in ("__file__", "__path__", "parent", "parents"):
                add("touches files outside its folder", f".{node.attr}", i)
            elif isinstance(node, ast.Name) and node.id in _DYNAMIC and isinstance(node.ctx, ast.Load):
                add("runs code built at run time", node.id, i)
            if isinstance(node, (ast.Attribute, ast.Name)) and isinstance(getattr(node, "ctx", None), ast.Load):
                name = _dotted(node, aliases)
                if name is None:
                    continue
                if name.split(".")[0] in ("pip", "conda", "mamba") and isinstance(node, ast.Attribute):
                    add("installs packages (not run while graded)", name, i)
                elif name in _SHELL_FUNCS or name.startswith(_SHELL_PREFIXES) or name.split(".")[0] in _SHELL_MODULES and isinstance(node, ast.Attribute):
                    add("runs shell commands or programs", name, i)
                elif name in _EXIT_FUNCS:
                    add("ends its own process", name, i)
                elif name in _SIGNAL_FUNCS:
                    add("signals processes or leaves its process group", name, i)
                elif name in _FILE_FUNCS or name.endswith(".home"):
                    add("touches files outside its folder", name, i)
    out = [f"{kind}: {', '.join(items)}" for kind, items in found.items() if items]
    if unread:
        out.append(f"cells this reading could not parse, so did not check: {', '.join(unread)}")
    return out


def _tests_of(autograder_notebook):
    import nbformat  # deferred: only running notebooks needs nbformat
    from otter.test_files import OKTestFile  # deferred: otter-grader is optional (the exercises extra)

    nb = nbformat.read(str(autograder_notebook), as_version=4)
    specs = nb.metadata["otter"]["tests"]
    return {q: OKTestFile.from_spec(s, path=str(autograder_notebook)) for q, s in specs.items()}


def grade_in_process(submission, autograder_notebook, graded: dict | None = None) -> dict[str, tuple[float, float]]:
    """Execute a notebook's code cells here (errors in a cell are ignored, as otter does), then
    score it with the autograder notebook's tests: question -> (score, max).

    For trusted notebooks only (the samples, the tests): the code runs in this process, so a
    submission can change what is graded after it (patch pagesim, loop forever, exit). Grade
    students' work with :func:`grade_isolated` (the default of :func:`grade`)."""
    from IPython.display import display  # deferred: IPython, only in a notebook

    nb = _read_nb(submission)
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
            if graded is not None and "STUDENT_ID" in env:  # the id the tests see, read as grade_isolated reads it
                graded["STUDENT_ID"] = _decode(encode(env["STUDENT_ID"]))
            out = {}
            for q, tf in tests.items():
                tf.run(env)
                out[q] = (float(tf.score), float(tf.possible))
        finally:
            os.chdir(cwd)
    return out


class _Csv:
    """The grades CSV, rewritten whole after each row (a temporary file in the same folder, then
    an atomic rename): after any row it is complete and valid."""

    def __init__(self, path: Path, cols: list[str]):
        self.path, self.cols, self.rows = path, cols, []
        folder = path.parent
        if not folder.is_dir():
            raise ValueError(f"csv={str(path)!r}: its folder {str(folder)!r} does not exist (create it, or give another --csv)")
        if path.is_dir():
            raise ValueError(f"csv={str(path)!r} is a folder: give a file name such as {str(path / 'grades.csv')!r}")
        if path.exists() and not path.is_file() or path.is_symlink() and not path.is_file():
            raise ValueError(f"csv={str(path)!r} exists and is not a regular file: give a file name such as {str(folder / 'grades.csv')!r}")
        if path.suffix.lower() == ".ipynb":
            raise ValueError(f"csv={str(path)!r} names a notebook: give a file name such as {str(path.with_suffix('.csv'))!r}")
        try:
            fd, probe = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=folder)
            os.close(fd)
            os.unlink(probe)
        except OSError as e:
            raise ValueError(f"csv={str(path)!r}: cannot write in its folder {str(folder)!r} ({e.strerror}): give another --csv") from None

    def add(self, row: dict) -> None:
        self.rows.append(row)
        _check_ids(self.rows)
        fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".part", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", newline="") as fh:
                w = csv.DictWriter(fh, fieldnames=self.cols, restval="", extrasaction="ignore")
                w.writeheader()
                w.writerows({k: _csv_cell(v) for k, v in r.items()} for r in self.rows)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


def _clean(text: str) -> str:
    """``text`` with every control, format (bidirectional overrides, zero-width marks) and lone
    surrogate character replaced by '?': what a submission puts in a row or a line is shown as
    written, never reordered, hidden or unwritable."""
    return "".join("?" if unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Zl", "Zp") else ch for ch in str(text))


def _csv_cell(v):
    """A row's value as the CSV holds it: text cleaned (:func:`_clean`), and text that a
    spreadsheet would read as a formula (starting with =, +, -, @) opened with an apostrophe."""
    if not isinstance(v, str):
        return v
    v = _clean(v)
    return "'" + v if v[:1] in ("=", "+", "-", "@") else v


def _one_line(e: BaseException) -> str:
    return _clean(" ".join(str(e).split())[:300]) or type(e).__name__


@contextlib.contextmanager
def _sigterm_as_interrupt():
    """SIGTERM raises KeyboardInterrupt while grading, so the finally clauses (kill the
    submission's processes, remove its folder) run; restored afterwards."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


def grade(
    submissions, build_dir, out_csv=None, in_process: bool = False, quiet: bool = False, timeout=DEFAULT_TIMEOUT, lms_format: str | None = None
) -> list[dict]:
    """Grade every notebook under ``submissions`` (a ``*.ipynb``, or the one in a zip that
    ``grader.export()`` wrote; any other file is a row saying why it was not graded) into ``out_csv`` (default
    ``submissions/grades.csv``): file, assignment, student, seed, one column per question, total,
    max, an empty column per written question (``q5 manual``, yours to fill, and ``manual max``),
    id (an id that is not a valid id or seed, a duplicate id within an assignment, or the placeholder id), error (why a submission was
    not graded, or something to check by hand; empty otherwise) and flags (what :func:`scan` found
    in its code). ``lms_format`` ("canvas" or "moodle") also writes the gradebook import file
    beside it (:func:`write_lms`). Each submission runs in its own process
    (:func:`grade_isolated`, at most ``timeout`` seconds), or in this one with ``in_process``
    (trusted notebooks only). The CSV is written after every row; its folder is checked first.
    Failures and flags are one line each on standard error, scores one line each on standard output."""
    sub = Path(submissions)
    if not sub.is_dir():
        raise ValueError(f"submissions={str(sub)!r} is not a folder")
    timeout = check_timeout(timeout)
    if lms_format not in (None, *LMS_FORMATS):
        raise ValueError(f"format={lms_format!r} is not allowed: {', '.join(LMS_FORMATS)} (or none)")
    build_dir = Path(build_dir).resolve()
    if not build_dir.is_dir():
        raise ValueError(f"build={str(build_dir)!r} does not exist: the assignments are not built; run `pagesim exercises build --out {build_dir}` first")
    out_path = Path(out_csv) if out_csv else sub / "grades.csv"
    files = _submission_files(sub, out_path)
    if not any(f.suffix.lower() in (".ipynb", ".zip") for f in files):
        raise ValueError(f"no notebooks (*.ipynb) or zips of one (grader.export()'s) in {sub}")
    unzipped = Path(tempfile.mkdtemp(prefix="pagesim-unzip-"))
    try:
        return _grade_files(sub, files, unzipped, build_dir, out_path, in_process, quiet, timeout, lms_format)
    finally:
        shutil.rmtree(unzipped, ignore_errors=True)


def _submission_files(sub: Path, out_csv: Path) -> list[Path]:
    """Every file under ``sub`` that is a submission: not hidden (a name starting with a dot, such
    as Jupyter's .ipynb_checkpoints) and not a CSV this command writes (the grades, the LMS files)."""
    ours = {out_csv.resolve()} | {out_csv.resolve().with_name(f"{out_csv.stem}-{f}.csv") for f in LMS_FORMATS}
    ours |= {(sub / n).resolve() for n in ("grades.csv", *(f"grades-{f}.csv" for f in LMS_FORMATS))}
    out = []
    for p in sorted(sub.rglob("*")):
        rel = p.relative_to(sub)
        if any(part.startswith(".") for part in rel.parts) or not p.is_file() or p.resolve() in ours:
            continue
        out.append(p)
    return out


ZIP_NOTEBOOK_LIMIT = 64 << 20  # bytes of a notebook read from a zip


def notebook_of_zip(path: Path, dest: Path) -> Path:
    """The notebook a submitted zip holds (what ``grader.export()`` writes: the notebook, otter's
    log, maybe a PDF), written into ``dest``; ValueError when it holds none, several, or is not a
    readable zip."""
    try:
        with zipfile.ZipFile(path) as zf:
            nbs = [
                i
                for i in zf.infolist()
                if not i.is_dir()
                and i.filename.lower().endswith(".ipynb")
                and not any(part.startswith(".") or part == "__MACOSX" for part in i.filename.replace("\\", "/").split("/"))
            ]
            if not nbs:
                raise ValueError("the zip holds no notebook (.ipynb): it should hold the one grader.export() puts in it")
            if len(nbs) > 1:
                names = ", ".join(_clean(i.filename)[:60] for i in nbs[:5]) + (" ..." if len(nbs) > 5 else "")
                raise ValueError(f"the zip holds {len(nbs)} notebooks ({names}): it should hold one, as grader.export() writes it")
            info = nbs[0]
            if info.file_size > ZIP_NOTEBOOK_LIMIT:
                raise ValueError(f"the notebook in the zip is larger than {ZIP_NOTEBOOK_LIMIT >> 20} MiB")
            with zf.open(info) as fh:
                data = fh.read(ZIP_NOTEBOOK_LIMIT + 1)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, NotImplementedError, RuntimeError) as e:
        raise ValueError(f"not a readable zip ({_one_line(e)})") from None
    if len(data) > ZIP_NOTEBOOK_LIMIT:
        raise ValueError(f"the notebook in the zip is larger than {ZIP_NOTEBOOK_LIMIT >> 20} MiB")
    name = re.sub(r"[^A-Za-z0-9._-]", "_", info.filename.replace("\\", "/").rsplit("/", 1)[-1]).lstrip(".") or "submission.ipynb"
    dest.mkdir(parents=True, exist_ok=True)
    out = dest / name
    out.write_bytes(data)
    return out


def _grade_files(sub, files, unzipped, build_dir, out_path, in_process, quiet, timeout, lms_format) -> list[dict]:
    # every submission's notebook and assignment first, so the CSV's columns are known before the first row
    found, questions, tests, manual = {}, [], {}, {}
    for k, f in enumerate(files):
        try:
            if f.suffix.lower() == ".ipynb":
                nb = f
            elif zipfile.is_zipfile(f) or f.suffix.lower() == ".zip":
                try:
                    nb = notebook_of_zip(f, unzipped / str(k))
                except ValueError as e:
                    raise ValueError(f"submission {str(f)!r}: {e}") from None
            else:
                raise ValueError(f"submission {str(f)!r} is not a notebook (.ipynb) or a zip holding one (what grader.export() writes): not graded")
            name = assignment_of(nb, label=f)
        except Exception as e:  # noqa: BLE001 - any file can be submitted: its row says why
            found[f] = e
            continue
        found[f] = (nb, name)
        ag = build_dir / name / "autograder" / f"{name}.ipynb"
        if name not in tests and ag.exists():
            tests[name] = ag
            questions += [q for q in _tests_of(ag) if q not in questions]
            manual[name] = manual_questions(build_dir / name)
    written_qs = sorted({q for m in manual.values() for q in m}, key=lambda q: (len(q), q))
    cols = ["file", "assignment", "student", "seed"] + sorted(questions, key=lambda q: (len(q), q)) + ["total", "max"]
    cols += [f"{q} manual" for q in written_qs] + (["manual max"] if written_qs else []) + ["id", "error", "flags"]
    out = _Csv(out_path, cols)
    say = (lambda *a, **k: None) if quiet else print
    with _sigterm_as_interrupt():
        for f in files:
            row = {"file": str(f.relative_to(sub)), "assignment": "", "student": "", "seed": "", "error": "", "flags": ""}
            nb = None
            try:  # one bad submission is a row with its error, never the end of the batch
                if isinstance(found[f], Exception):
                    raise found[f]
                nb, name = found[f]
                row["assignment"] = name
                if name not in tests:
                    ag = build_dir / name / "autograder" / f"{name}.ipynb"
                    raise ValueError(f"no autograder notebook {ag}: run `pagesim exercises build --out {build_dir}` first")
                row["flags"] = "; ".join(scan(nb))
                if row["flags"]:
                    say(_clean(f"{row['file']}: FLAGGED: {row['flags']}"), file=sys.stderr)
                graded = {}
                scores = grade_in_process(nb, tests[name], graded) if in_process else grade_isolated(nb, tests[name], timeout, graded)
                written, times = _student_value(nb)
            except Exception as e:  # noqa: BLE001 - any file can be submitted
                row["error"] = _one_line(e)
                if nb is not None:
                    with contextlib.suppress(Exception):
                        row["student"] = _id_text(_student_value(nb)[0])  # whose it claims to be, to tell rows apart
                out.add(row)
                say(_clean(f"{row['file']}: NOT GRADED: {row['error']}"), file=sys.stderr)
                continue
            # The id whose questions were graded is the one the tests saw at run time; the CSV
            # shows that one, and says so when the notebook's STUDENT_ID cell reads otherwise.
            row["error"] = "; ".join(_id_notes(row, graded, written, times, nb) + _answer_notes(graded))
            if row["error"]:
                say(_clean(f"{row['file']}: CHECK: {row['error']}"), file=sys.stderr)
            for q, (s, _) in scores.items():
                row[q] = s
            row["total"] = sum(s for s, _ in scores.values())
            row["max"] = sum(m for _, m in scores.values())
            if manual.get(name):
                row["manual max"] = sum(manual[name].values())
            out.add(row)
            say(_clean(f"{row['file']}: {name}, {row['total']:g} / {row['max']:g}"))
    for r in out.rows:
        if r.get("id"):
            say(_clean(f"{r['file']}: ID: {r['id']}"), file=sys.stderr)
    say(_clean(f"wrote {out.path}"))
    if lms_format:
        path, left = write_lms(out.rows, lms_format, out.path.with_name(f"{out.path.stem}-{lms_format}.csv"), manual)
        for r in left:
            say(_clean(f"{r['file']}: not in the {lms_format} file: {r['_left']}"), file=sys.stderr)
        say(_clean(f"wrote {path}"))
    return out.rows


ALLOWED_IDS = 'allowed: a non-empty id of printable characters such as "ada@example.edu", or an int seed 0 .. 2**32-1'


def _id_text(value) -> str:
    """An id as the CSV's ``student`` column and the LMS files hold it: a str without the spaces
    around it (as :func:`pagesim.teaching.exercises.seed_of` hashes it), an int in digits."""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return ""


def _answer_notes(graded: dict) -> list[str]:
    """One note per answer that reading as a number raised an exception in (its ``__float__``
    raised SystemExit, say): it scores 0, and the row says which answer and why."""
    return [
        f"answer {name} (a {_clean(v.kind)[:40]}) could not be read as a number: reading it raised {_clean(v.why)[:40]}; it scores 0"
        for name, v in sorted(graded.items())
        if name != "STUDENT_ID" and isinstance(v, _Unreadable) and v.why
    ]


def _id_notes(row: dict, graded: dict, written, times: int, nb: Path) -> list[str]:
    """Fill the row's ``student`` and ``seed`` from the id the tests saw, and say what to check by
    hand: no id, an id that is neither an id nor a seed, an id cell that reads otherwise or that
    the reading cannot tell, several assignments, and saved outputs run with another seed."""
    notes = []
    if "STUDENT_ID" not in graded:
        return ["no STUDENT_ID was set when the notebook ran: graded with no id's questions"]
    value = graded["STUDENT_ID"]
    shown = _clean(repr(value))[:60]
    try:
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            raise TypeError
        seed = seed_of(value)
    except (TypeError, ValueError):
        row.update(student=_id_text(value), _bad_id=True)
        return [f"STUDENT_ID {shown} is not a valid id or seed ({ALLOWED_IDS}): graded with no id's questions"]
    row.update(student=_id_text(value), seed=seed)
    if isinstance(written, _Unread):
        notes.append(f"could not read the id cell ({written.why}): graded as {shown}, check that this is the student's id")
    elif times == 0:
        notes.append(f"no cell of the notebook assigns STUDENT_ID: graded as {shown}, check that this is the student's id")
    elif value != written or type(value) is not type(written):
        notes.append(f"STUDENT_ID was {shown} when the notebook ran, not {_clean(repr(written))[:60]} as its STUDENT_ID cell reads: graded as {shown}")
    if times > 1:
        notes.append(f"STUDENT_ID is assigned {times} times: check by hand which id was meant")
    other = sorted({s for s in _saved_seeds(nb) if s != seed})
    if other:
        notes.append(
            f"its saved output shows 'your seed: {', '.join(map(str, other))}', not the seed graded ({seed}): it was last run with "
            "another STUDENT_ID than the one graded; check whose work it is"
        )
    return notes


def manual_questions(built: Path) -> dict[str, float]:
    """The written (manual) questions of a built assignment and their points, as its master
    declares them (``manual.json``, written by :func:`build`); {} for a build without it."""
    try:
        data = json.loads((Path(built) / "manual.json").read_text())
    except (OSError, ValueError):
        return {}
    return {str(q): float(p) for q, p in data.items()} if isinstance(data, dict) else {}


def _manual_of_master(master: Path) -> dict[str, float]:
    """``{question: points}`` of a master's questions marked ``manual: true``."""
    import nbformat  # deferred: only running notebooks needs nbformat

    out = {}
    for c in nbformat.read(str(master), as_version=4).cells:
        if c.cell_type == "raw" and c.source.startswith("# BEGIN QUESTION") and re.search(r"^manual:\s*true", c.source, re.M):
            name = re.search(r"^name:\s*(\S+)", c.source, re.M)
            pts = re.search(r"^points:\s*([0-9.]+)", c.source, re.M)
            if name:
                out[name.group(1)] = float(pts.group(1)) if pts else 0.0
    return out


def _check_ids(rows: list[dict]) -> None:
    """The ``id`` column: an id that is neither an id nor a seed, the placeholder id (the student
    never set STUDENT_ID), and an id that more than one submission of the same assignment holds
    (which one is the student's?)."""
    by = {}
    for r in rows:
        if r.get("student"):
            by.setdefault((r.get("assignment"), r["student"]), []).append(r["file"])
    for r in rows:
        notes = []
        if r.get("_bad_id"):
            notes.append(f"not a valid id or seed ({ALLOWED_IDS}): whose work this is is unknown")
        if r.get("student") == PLACEHOLDER_ID:
            notes.append(f"placeholder id {PLACEHOLDER_ID}: STUDENT_ID was never set, so whose work this is is unknown")
        others = [f for f in by.get((r.get("assignment"), r.get("student")), []) if f != r["file"]]
        if r.get("student") and others:
            notes.append(f"duplicate id: {', '.join(others[:5])}{' ...' if len(others) > 5 else ''} also {'hold' if len(others) > 1 else 'holds'} it")
        r["id"] = "; ".join(notes)


LMS_FORMATS = ("canvas", "moodle")


def write_lms(rows: list[dict], fmt: str, path: Path, manual: dict[str, dict[str, float]]) -> tuple[Path, list[dict]]:
    """A gradebook import file for Canvas or Moodle from the grades' rows: one row per student,
    one column of autograded points per assignment and an empty column per written question (fill
    them before importing, or leave them empty: both LMSs skip empty cells). Rows that cannot be
    imported are left out and returned (their ``_left`` says why): not graded, no id, an id
    that is neither an id nor a seed, the placeholder id, or an id that two submissions of one
    assignment hold.

    - ``canvas``: Canvas's gradebook CSV, whose import needs four parts: Student name, ID or SIS
      User ID (one of the three), SIS Login ID, Section, then a column per assignment; a new column
      name becomes a new assignment (Ohio State's guide to Canvas, "Import a CSV file to Carmen
      Grades", teaching.resources.osu.edu/toolsets/carmencanvas/guides/calculating-final-grades/
      import-csv-file-carmen-grades). The student's id goes in SIS Login ID, the others stay
      empty: check that your students' ids are their Canvas login ids.
    - ``moodle``: Moodle's "Import grades: CSV file" reads any header: at import you map one column
      to a user field (id, idnumber, email or username: grade/import/csv/classes/load_data.php,
      ``map_user_data_with_value``) and each grade column to a grade item or a new one. The id is
      the first column, ``Email address`` as in Moodle's own export (map it to username when your
      ids are usernames). A row whose user is not found stops Moodle's whole import, which is why
      rows without a real id are left out."""
    if fmt not in LMS_FORMATS:
        raise ValueError(f"format={fmt!r} is not allowed: {', '.join(LMS_FORMATS)}")
    names = []
    for r in rows:
        if r.get("assignment") and r["assignment"] not in names and r.get("total", "") != "":
            names.append(r["assignment"])
    grade_cols = []
    for a in names:
        grade_cols += [f"{a} autograded"] + [f"{a} {q} manual" for q in manual.get(a, {})]
    keep, left = [], []
    for r in rows:
        why = "not graded" if r.get("total", "") == "" else r["id"] if r.get("id") else "no student id" if not r.get("student") else ""
        if why:
            left.append({**r, "_left": why})
        else:
            keep.append(r)
    if fmt == "canvas":
        head = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
        lines = [head + grade_cols]
        for r in keep:
            lines.append(["", "", "", r["student"], ""] + [r["total"] if c == f"{r['assignment']} autograded" else "" for c in grade_cols])
    else:
        lines = [["Email address"] + grade_cols]
        for r in keep:
            lines.append([r["student"]] + [r["total"] if c == f"{r['assignment']} autograded" else "" for c in grade_cols])
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    with os.fdopen(fd, "w", newline="") as fh:
        csv.writer(fh).writerows([[_csv_cell(v) for v in line] for line in lines])
    os.replace(tmp, path)
    return path, left


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
    (the solutions with each classic misconception of :data:`pagesim.teaching.exercises.WRONG` in place of
    the right answer: what a student holding it would submit). Outputs are cleared."""
    import nbformat  # deferred: only running notebooks needs nbformat

    build_dir, out = Path(build_dir), Path(out)
    if not build_dir.is_dir():
        raise ValueError(f"build={str(build_dir)!r} does not exist: the assignments are not built; run `pagesim exercises build --out {build_dir}` first")
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
