"""The process that runs one submission's cells for :func:`pagesim.teaching.grading.grade`.

It is started by a small supervising process (never by the grading process itself), in a fresh
folder holding a copy of the notebook only. It runs every code cell in an IPython shell (magics
work; errors in a cell are ignored, as otter does) with otter's ``Notebook`` replaced by a stand-in
that checks nothing, then writes the values of the names the tests read, as plain data, to a JSON
file. It never sees the tests: the grading process scores those values after this process is gone.

Progress goes to a file of JSON lines: ``{"cell": N}`` before the notebook's N-th cell (counting
every cell, 1-based) runs, ``{"error": "..."}`` if the notebook could not be run at all, and
``{"done": true}`` once the answers are written. It stops before the next cell when its
supervisor is gone, so the last cell recorded is the one that was running then.
"""

from __future__ import annotations

import json
import numbers
import os
import signal
import sys
import types

MAX_STR = 10_000  # characters of a str answer kept (a student id is far shorter)


def encode(value) -> dict:
    """A value as what the tests' checks look at: its kind and, for a number, float(value).

    ``pagesim.teaching.exercises.correct`` and ``plausible`` tell None, Ellipsis, bools, str, bytes and
    ints apart and read everything else through ``float()``; an int keeps every digit."""
    if value is None:
        return {"t": "none"}
    if value is Ellipsis:
        return {"t": "ellipsis"}
    if isinstance(value, bool) or (type(value).__module__ == "numpy" and type(value).__name__ in ("bool", "bool_")):
        return {"t": "bool", "v": bool(value)}
    if isinstance(value, str):
        return {"t": "str", "v": str(value)} if len(value) <= MAX_STR else {"t": "object", "type": "str (too long)"}
    if isinstance(value, (bytes, bytearray)):
        return {"t": "bytes", "v": bytes(value[:MAX_STR]).hex()}
    try:
        if getattr(value, "ndim", 0) != 0:  # an array (of one element too): not a number
            return {"t": "object", "type": type(value).__name__[:100]}
        if hasattr(value, "item") and not isinstance(value, (int, float)):  # a 0-d array or xarray value: its number
            item = value.item()
            if isinstance(item, (bool, int, float)):
                return encode(item)
        if isinstance(value, numbers.Integral):
            return {"t": "int", "v": str(int(value))}
        return {"t": "number", "v": repr(float(value))}
    except BaseException as e:  # noqa: BLE001 - any object a student made (its __float__ may even raise SystemExit): not a number
        return {"t": "object", "type": type(value).__name__[:100], "why": type(e).__name__[:100]}


def _encode_any(value) -> dict:
    """:func:`encode`, and an unreadable object for whatever an answer's methods raise there."""
    try:
        return encode(value)
    except BaseException:  # noqa: BLE001 - a student's object (isinstance can call its __class__)
        return {"t": "object", "type": "unreadable"}


class _NoGrader:
    """Stands in for ``otter.Notebook`` while a submission runs: every check does nothing."""

    def __init__(self, *args, **kwargs):
        pass

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return lambda *args, **kwargs: None


PACKAGE_MAGICS = ("pip", "conda", "mamba", "micromamba", "uv")  # magics that install packages: disabled here


def _no_install(magic: str):
    def run(line="", cell=None):
        print(f"%{magic} does nothing while the notebook is graded")

    return run


def _parent_gone(parent: int) -> bool:
    """Whether the supervisor has been killed: no longer this process's parent, or (read in /proc,
    where there is one, since a killed process takes a moment to exit) exiting or with a signal
    pending, which it would be after a cell that sent it one."""
    if os.getppid() != parent:
        return True
    if not os.path.exists("/proc/self/stat"):
        return False
    try:
        with open(f"/proc/{parent}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        with open(f"/proc/{parent}/status") as fh:
            status = fh.read().splitlines()
    except OSError:
        return True
    if fields[0] in ("Z", "X", "x") or int(fields[6]) & 0x4:  # state; PF_EXITING in the flags
        return True
    ignore = 1 << (signal.SIGCHLD - 1)
    return any(line.startswith(("SigPnd:", "ShdPnd:")) and int(line.split()[1], 16) & ~ignore for line in status)


def _write(path, record) -> None:
    """Append one record. Never blocks and never follows a link: after the notebook's cells have
    run, the file may be a FIFO or a link the notebook put in its place (the grader then says so)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except OSError:
        return
    try:
        os.write(fd, (json.dumps(record) + "\n").encode())
    except OSError:
        pass
    finally:
        os.close(fd)


def main(argv=None) -> int:
    progress, answers, names, notebook = sys.argv[1:] if argv is None else argv
    try:
        names = json.loads(names)
        with open(notebook, encoding="utf-8") as fh:
            cells = json.load(fh)["cells"]
        from IPython.core.interactiveshell import InteractiveShell  # deferred: IPython, only in a notebook
        from traitlets.config import Config  # deferred: traitlets, only in a notebook

        cfg = Config()
        cfg.HistoryManager.enabled = False
        shell = InteractiveShell.instance(config=cfg)
        for magic in PACKAGE_MAGICS:  # a submission installs nothing into the grader's environment
            shell.register_magic_function(_no_install(magic), magic_kind="line_cell", magic_name=magic)
    except Exception as e:  # noqa: BLE001 - reported to the grading process in one line
        _write(progress, {"error": f"{type(e).__name__}: {e}"})
        return 1
    otter = types.ModuleType("otter")
    otter.Notebook = _NoGrader
    sys.modules["otter"] = otter
    parent = os.getppid()
    for i, cell in enumerate(cells, 1):
        if cell.get("cell_type") != "code":
            continue
        if _parent_gone(parent):  # the previous cell may have killed it: stop, so the progress names that cell
            os._exit(1)
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        _write(progress, {"cell": i})
        shell.run_cell(source, store_history=False)
    _write(progress, {"cell": None})
    ns = shell.user_ns
    values = {n: _encode_any(ns[n]) for n in names if n in ns}
    tmp = answers + ".part"
    with open(tmp, "w") as fh:
        json.dump(values, fh)
    os.replace(tmp, answers)
    _write(progress, {"done": True})
    return 0


if __name__ == "__main__":
    sys.exit(main())
