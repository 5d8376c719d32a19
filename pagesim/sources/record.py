"""Record a real program's memory trace with valgrind's lackey tool, streamed into a gzip file.

    pagesim trace record [-o OUT] [--force] [--data-only] [--limit N] -- CMD [ARG ...]

valgrind runs ``CMD`` under lackey (``--tool=lackey --trace-mem=yes``) and writes one line per
access (``I  addr,size``, `` L addr,size``, `` S addr,size``, `` M addr,size``) to a pipe; this
module reads the pipe line by line and writes the lines to ``OUT`` through gzip, so the trace is
never held in memory and never written uncompressed. valgrind's own ``==pid==`` message lines are
kept (the trace readers skip them), and two ``==pagesim==`` lines at the top say how the trace was
recorded. The file is written to a temporary file of its own in ``OUT``'s folder (a hidden name,
``.OUT.<random>.part``) and put in place when complete: an interrupted or failed recording (a full
disk) leaves nothing behind, and no other file is touched. An existing ``OUT`` is refused unless
``--force`` (``force=True``), and then replaced only once the new trace is complete; without
``--force``, an ``OUT`` that appears while the program runs is kept and the recording refused. An
``OUT`` that exists and is not a regular file (a symbolic link, a device, a fifo, a socket, a
folder) is refused, with or without ``--force``.

``data_only`` drops instruction fetches (``I`` lines), about three quarters of a lackey trace;
``limit`` stops the program after that many accesses (the trace is then the run's first ``limit``
accesses, and says so). Only the process valgrind starts is traced: not the programs it runs
(valgrind's default ``--trace-children=no``: a shell script's children are not), and not the
processes it forks (``--child-silent-after-fork=yes``: a forked child, still under valgrind, would
write its accesses into the same trace, interleaved). The recording ends when that process does,
even if a child it forked runs on. Ctrl-C, SIGTERM, SIGHUP and ``limit`` stop the program and
every process it started: those below it, and those that left the tree (a daemon, a ``(cmd &)``),
found by a mark in their environment: the program runs with ``PAGESIM_TREE`` set to a random value
(a process that leaves the tree and clears or rewrites its environment is not found, and runs on).

lackey runs the program on valgrind's JIT, perhaps 50-100 times slower than natively, and a
compressed trace takes about 0.6-2.5 bytes per access (instruction fetches compress best, random
data addresses worst).
"""

from __future__ import annotations

import contextlib
import datetime
import errno
import fcntl
import gzip
import os
import select
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from ..core import procs
from ..core.check import check_int
from ..core.files import new_file_mode, probe_folder

KINDS = {b"I ": "instr", b" L": "loads", b" S": "stores", b" M": "modifies"}
INSTALL_HINT = "Debian/Ubuntu: apt-get install valgrind; Fedora: dnf install valgrind; macOS: not supported by current valgrind"


@dataclass(frozen=True)
class Recording:
    """What :func:`record` wrote."""

    path: str
    command: tuple
    accesses: int
    instr: int
    loads: int
    stores: int
    modifies: int
    data_only: bool
    truncated: bool
    exit_status: int
    seconds: float
    bytes: int

    def __str__(self):
        what = "data accesses" if self.data_only else "accesses"
        kinds = ([] if self.data_only else [f"{self.instr:,} instruction fetches"]) + [
            f"{self.loads:,} loads",
            f"{self.stores:,} stores",
            f"{self.modifies:,} modifies",
        ]
        if self.truncated:
            tail = f"; stopped after --limit {self.accesses:,}"
        elif self.exit_status < 0:
            tail = f"; the program was killed by {_signal_name(-self.exit_status)}"
        else:
            tail = f"; the program exited with status {self.exit_status}"
        packed = "compressed" if str(self.path).endswith(".gz") else "uncompressed"
        return f"{self.path}: {self.accesses:,} {what} ({', '.join(kinds)}), {self.bytes / 1e6:.2f} MB {packed}, recorded in {self.seconds:.1f} s{tail}"


def _signal_name(n: int) -> str:
    try:
        return signal.Signals(n).name
    except ValueError:
        return f"signal {n}"


class TraceExists(FileExistsError):
    """:func:`record`'s ``out`` exists and ``force`` is false; ``path`` is the file."""

    def __init__(self, path):
        super().__init__(f"out={str(path)!r} exists: pass force=True to replace it")
        self.path = str(path)


def valgrind() -> str | None:
    """Path of the valgrind executable, or None."""
    return shutil.which("valgrind")


def why_not() -> str | None:
    """None if a trace can be recorded here; otherwise the reason it cannot."""
    if valgrind() is None:
        return f"valgrind is not installed ({INSTALL_HINT}); use a shipped trace instead (pagesim.studies.yourprogram.shipped_traces())"
    return None


def _valgrind_version(vg: str) -> str:
    try:
        return subprocess.run([vg, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "valgrind (version unknown)"


def default_output(command) -> str:
    return f"{Path(str(command[0])).name or 'program'}-lackey.txt.gz"


_KINDS_OF_FILE = (
    (stat.S_ISLNK, "a symbolic link"),
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a fifo (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
)


def _not_a_regular_file(path: Path) -> str | None:
    """What ``path`` is when it exists and is not a regular file ("a symbolic link to 'x'", "a
    character device", ...); None when it is a regular file or does not exist. A symbolic link
    is not followed."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return None
    if stat.S_ISREG(mode):
        return None
    for test, what in _KINDS_OF_FILE:
        if test(mode):
            return f"{what} to {os.readlink(path)!r}" if test is stat.S_ISLNK else what
    return "not a regular file"


def _refuse_unless_regular(out: Path) -> None:
    what = _not_a_regular_file(out)
    if what is not None:
        raise ValueError(f"{out} is {what}, not a regular file: a trace is written only to a new path or over a regular file")


def _term_to_interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


#: valgrind's options for a trace of the process it starts, its forked children silent
LACKEY = ("--tool=lackey", "--trace-mem=yes", "--child-silent-after-fork=yes")


def _next_block(pipe, proc) -> bytes:
    """The next bytes valgrind wrote to ``pipe``; b"" once it is over: at the pipe's end, or when
    valgrind has ended and the pipe holds nothing more (a child the program forked, silent, may
    keep the pipe open long after)."""
    while True:
        if select.select([pipe], [], [], 0.2)[0]:
            return pipe.read(1 << 20)
        if proc.poll() is not None and not select.select([pipe], [], [], 0)[0]:
            return b""


def _kill_tree(proc, token: str) -> None:
    """SIGKILL valgrind and what the program started: the processes below valgrind (forked, still
    under valgrind) and those that carry the recording's mark in their environment (which left the
    tree: a ``(cmd &)`` whose parent ended, a daemon). valgrind is stopped first (SIGSTOP), so that
    it forks no more while the others are found."""
    with contextlib.suppress(OSError):
        os.kill(proc.pid, signal.SIGSTOP)
    procs.stop(lambda now: [p for p in procs.descendants(proc.pid, now) + procs.carrying(token, now) if p != proc.pid])
    proc.kill()


def _discard(proc, token, fd, pipe_fds, part: Path) -> None:
    """Stop valgrind (and the program it runs), close what is still open and remove the half-written
    trace ``part``; done again from the start when a further Ctrl-C (or SIGTERM) lands meanwhile,
    each step harmless to repeat."""
    while True:
        try:
            if proc is not None and proc.poll() is None:
                _kill_tree(proc, token)
            if proc is not None:
                proc.wait()
            for f in [fd, *pipe_fds]:
                if f is not None:
                    try:
                        os.close(f)
                    except OSError:
                        pass  # closed on an earlier round
            part.unlink(missing_ok=True)
            return
        except KeyboardInterrupt:
            continue


def recording_output(command, out=None, force: bool = False, name: str = "out") -> tuple[list, Path]:
    """The command (a list of strings, a leading ``--`` dropped) and the trace file :func:`record`
    would write, checked as it checks them before anything runs: a TypeError or ValueError for a
    command or a file it cannot take, :class:`TraceExists` for a file that exists without ``force``.
    ``name``: what the errors call ``out`` (a command-line option such as ``--record``)."""
    if isinstance(command, (str, bytes)) or not hasattr(command, "__iter__"):
        raise TypeError(f"command must be a list of strings such as ['ls', '-l'], got {command!r}")
    command = [str(c) for c in command]
    if command[:1] == ["--"]:
        command = command[1:]
    if not command or not command[0]:
        raise ValueError("command is empty: name the program to trace, e.g. pagesim trace record -- ls -l")
    out = Path(out if out is not None else default_output(command))
    said = f"{name} {out}" if name.startswith("-") else f"{name}={str(out)!r}"
    if out.is_dir() and not out.is_symlink():
        raise ValueError(f"{said} is a folder: give a file name such as {out / default_output(command)}")
    if not out.parent.is_dir():
        where = f"{str(out.parent)!r} is not a folder" if out.parent.exists() else f"the folder {str(out.parent)!r} does not exist"
        raise ValueError(f"{said}: {where}")
    _refuse_unless_regular(out)
    try:
        probe_folder(out.parent)
    except OSError as e:
        raise ValueError(f"{said}: cannot write a file in {str(out.parent)!r}: {e.strerror or e}") from None
    if not force and out.exists():
        raise TraceExists(out)
    return command, out


def record(command, out=None, data_only: bool = False, limit: int | None = None, program_output=None, force: bool = False) -> Recording:
    """Run ``command`` (a list of strings) under valgrind lackey and write its memory trace to
    ``out`` (gzip-compressed when the name ends in .gz; default ``<program>-lackey.txt.gz``).

    data_only: drop instruction fetches. limit: stop after this many (written) accesses.
    program_output: where the program's stdout and stderr go (None: this process's; or
    ``subprocess.DEVNULL``). force: replace ``out`` if it exists (else :class:`TraceExists`, before
    anything runs, or at the end if ``out`` appeared meanwhile; the old file is replaced only once
    the new trace is complete). An ``out`` that exists and is not a regular file (a symbolic link,
    a device, a fifo, a socket, a folder) is refused with a ValueError, force or not. Raises
    RuntimeError when valgrind is missing or records nothing, and an OSError naming the file when
    the trace cannot be written (a full disk); no part of the trace is left behind.
    """
    command, out = recording_output(command, out, force)
    if limit is not None:
        limit = check_int("limit", limit, 1, None, " (a number of accesses, or None for the whole run)")
    reason = why_not()
    if reason:
        raise RuntimeError(reason)
    vg = valgrind()
    try:
        fd, name = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".part", dir=out.parent)
    except OSError as e:
        raise OSError(e.errno, f"cannot write the trace {out} (creating a temporary file in {out.parent}): {e.strerror or e}") from e
    part = Path(name)
    counts = dict.fromkeys(KINDS.values(), 0)
    written = 0
    truncated = False
    t0 = time.perf_counter()
    proc = status = None
    env, token = procs.marked_env()
    old_term = {}
    pipe_fds = []
    publishing = False
    try:
        # SIGTERM (timeout, kill) is turned into KeyboardInterrupt while recording, so the cleanup
        # below removes the half-written .part file as it does for Ctrl-C (only the main thread may
        # set it).
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGHUP):  # a closed terminal too
                if signal.getsignal(sig) is signal.SIG_DFL:
                    old_term[sig] = signal.signal(sig, _term_to_interrupt)
        rfd, wfd = pipe_fds = list(os.pipe())
        try:
            proc = subprocess.Popen([vg, *LACKEY, f"--log-fd={wfd}", *command], pass_fds=(wfd,), stdout=program_output, stderr=program_output, env=env)
        except OSError as e:
            raise RuntimeError(f"cannot start valgrind ({vg}): {e}") from None
        pipe_fds.remove(wfd)
        os.close(wfd)
        raw = open(fd, "wb")
        fd = None  # closed with raw
        os.fchmod(raw.fileno(), new_file_mode())
        sink = gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=6, mtime=0) if out.suffix == ".gz" else raw
        if hasattr(fcntl, "F_SETPIPE_SZ"):  # Linux: a larger pipe, fewer and larger reads
            with contextlib.suppress(OSError):
                fcntl.fcntl(rfd, fcntl.F_SETPIPE_SZ, 1 << 20)
        pipe = os.fdopen(rfd, "rb", buffering=0)
        pipe_fds.remove(rfd)  # closed with pipe
        with raw, sink, pipe:
            when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
            sink.write(f"==pagesim== {when}: {_valgrind_version(vg)} {' '.join(LACKEY)}, command: {' '.join(command)}\n".encode())
            sink.write(
                (
                    "==pagesim== data accesses only: instruction fetches dropped\n"
                    if data_only
                    else "==pagesim== every access: instruction fetches (I) and data (L, S, M)\n"
                ).encode()
            )
            keep = set(KINDS) | {b"=="}
            if data_only:
                keep.discard(b"I ")
            rest = b""
            while not truncated:
                block = _next_block(pipe, proc)
                data = rest + block if block else rest + (b"\n" if rest else b"")
                cut = data.rfind(b"\n") + 1
                rest = data[cut:]
                lines = [ln for ln in data[:cut].split(b"\n") if ln[:2] in keep]
                n_acc = sum(1 for ln in lines if ln[:2] != b"==")
                if limit is not None and written + n_acc >= limit:
                    # keep lines up to the access that reaches the limit
                    need, k = limit - written, 0
                    for i, ln in enumerate(lines):
                        k += ln[:2] != b"=="
                        if k == need:
                            lines = lines[: i + 1]
                            break
                    n_acc = need
                    truncated = True
                    _kill_tree(proc, token)  # valgrind runs the program in its own process, and what it started
                for ln in lines:
                    kind = KINDS.get(ln[:2])
                    if kind is not None:
                        counts[kind] += 1
                if lines:
                    sink.write(b"\n".join(lines) + b"\n")
                written += n_acc
                if not block:
                    break
            if truncated:
                sink.write(f"==pagesim== stopped after --limit {limit} accesses\n".encode())
        status = proc.wait()
        if written == 0:
            raise RuntimeError(
                f"valgrind recorded no {'data ' if data_only else ''}accesses of {' '.join(command)!r} "
                f"(exit status {status}): is the command right? (valgrind's message is above)"
            )
        size = part.stat().st_size
        publishing = True  # its errors name the file already
        _publish(part, out, force)
    except BaseException as e:
        _discard(proc, token, fd, pipe_fds, part)
        if isinstance(e, OSError) and not publishing:
            raise OSError(e.errno, f"cannot write the trace {out} (writing {part}): {e.strerror or e}") from e
        raise
    finally:
        for sig, h in old_term.items():
            signal.signal(sig, h)
    return Recording(
        path=str(out),
        command=tuple(command),
        accesses=written,
        instr=counts["instr"],
        loads=counts["loads"],
        stores=counts["stores"],
        modifies=counts["modifies"],
        data_only=bool(data_only),
        truncated=truncated,
        exit_status=-1 if truncated else int(status),
        seconds=time.perf_counter() - t0,
        bytes=size,
    )


_NO_HARD_LINKS = {errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK, errno.ENOSYS}


def _publish(part: Path, out: Path, force: bool) -> None:
    """Put the complete trace ``part`` in place as ``out``; ``part`` is gone afterwards, whatever
    happens. Without ``force`` a hard link makes ``out`` only if no file of that name exists (one
    that appeared while the program ran is kept: :class:`TraceExists`); with ``force`` an atomic
    rename replaces a regular file. Either way, an ``out`` that is not a regular file is refused."""
    try:
        _refuse_unless_regular(out)
        if force:
            os.replace(part, out)
            return
        try:
            os.link(part, out)
        except FileExistsError:
            raise TraceExists(out) from None
        except OSError as e:
            if e.errno not in _NO_HARD_LINKS:
                raise
            # a file system without hard links: the name is claimed by creating it exclusively
            # (which fails if it exists), then the trace is renamed over the claim
            try:
                os.close(os.open(out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            except FileExistsError:
                raise TraceExists(out) from None
            os.replace(part, out)
    except OSError as e:
        if isinstance(e, TraceExists):
            raise
        raise OSError(e.errno, f"cannot write the trace {out} (putting {part.name} in place): {e.strerror or e}") from e
    finally:
        part.unlink(missing_ok=True)


def count_lines(path) -> int:
    """Access lines in a lackey file (I, L, S, M; valgrind's and pagesim's ``==`` lines not counted),
    counted independently of :mod:`pagesim.sources.traces`."""
    p = Path(path)
    opener = gzip.open if p.suffix == ".gz" else open
    n = 0
    with opener(p, "rb") as f:
        for line in f:
            n += line[:2] in KINDS
    return n


if __name__ == "__main__":  # python -m pagesim.sources.record CMD ...
    print(record(sys.argv[1:]))
