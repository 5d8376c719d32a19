"""The processes a command started, found again to stop them: those below a process in the process
tree, those in a process group, and those whose environment carries a mark given to the command,
which a process that left the tree (a daemon, a ``(cmd &)`` whose parent ended) still carries.
Linux only (``/proc``); elsewhere nothing is found."""

from __future__ import annotations

import contextlib
import os
import secrets
import signal

#: the environment variable that marks a command's processes (a random value per command)
MARK = "PAGESIM_TREE"


def marked_env(env: dict | None = None) -> tuple[dict, str]:
    """A copy of ``env`` (default: this process's environment) with a new mark, and the mark."""
    token = secrets.token_hex(8)
    env = dict(os.environ if env is None else env)
    env[MARK] = token
    return env, token


def table() -> dict[int, tuple[int, int, str]]:
    """``{pid: (parent pid, process group, name)}`` of the live processes (zombies left out: they
    are over, their parent has only to reap them)."""
    out = {}
    if not os.path.isdir("/proc"):
        return out
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat_ = f.read()
        except OSError:
            continue
        name = stat_[stat_.index(b"(") + 1 : stat_.rindex(b")")].decode(errors="replace")
        state, ppid, pgrp = stat_[stat_.rindex(b")") + 2 :].split()[:3]  # after "pid (name) "
        if state != b"Z":
            out[int(entry)] = (int(ppid), int(pgrp), name)
    return out


def descendants(pid: int, procs: dict | None = None) -> list[int]:
    """The live processes below ``pid`` (its children, theirs, ...)."""
    procs = table() if procs is None else procs
    below, todo = [], [pid]
    while todo:
        p = todo.pop()
        kids = [c for c, (pp, _, _) in procs.items() if pp == p]
        below += kids
        todo += kids
    return below


def in_group(pgrp: int, procs: dict | None = None) -> list[int]:
    """The live processes of process group ``pgrp``."""
    procs = table() if procs is None else procs
    return [p for p, (_, g, _) in procs.items() if g == pgrp]


def carrying(token: str, procs: dict | None = None) -> list[int]:
    """The live processes whose environment (as they started) holds the mark ``token``; only this
    user's can be read, which are the only ones a command of this user can start."""
    procs = table() if procs is None else procs
    needle = f"{MARK}={token}".encode()
    found = []
    for p in procs:
        try:
            with open(f"/proc/{p}/environ", "rb") as f:
                env = f.read()
        except OSError:
            continue
        if needle in env.split(b"\0"):
            found.append(p)
    return found


def stop(find) -> list[str]:
    """SIGKILL every process ``find(procs)`` returns (given :func:`table`), each stopped first
    (SIGSTOP) so that it starts no more while the others are found, and look again until none is
    left; this process is never among them. Returns the names of the processes stopped, by pid."""
    names = {}
    me = os.getpid()
    for _ in range(100):
        procs = table()
        pids = [p for p in dict.fromkeys(find(procs)) if p != me and p in procs]
        if not pids:
            break
        for p in pids:
            names.setdefault(p, procs[p][2])
            with contextlib.suppress(OSError):
                os.kill(p, signal.SIGSTOP)
        for p in pids:
            with contextlib.suppress(OSError):
                os.kill(p, signal.SIGKILL)
    return [names[p] for p in sorted(names)]
