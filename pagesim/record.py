"""Record a real program's memory trace with valgrind's lackey tool, streamed into a gzip file.

    pagesim trace record [-o OUT] [--force] [--data-only] [--limit N] -- CMD [ARG ...]

valgrind runs ``CMD`` under lackey (``--tool=lackey --trace-mem=yes``) and writes one line per
access (``I  addr,size``, `` L addr,size``, `` S addr,size``, `` M addr,size``) to a pipe; this
module reads the pipe line by line and writes the lines to ``OUT`` through gzip, so the trace is
never held in memory and never written uncompressed. valgrind's own ``==pid==`` message lines are
kept (the trace readers skip them), and two ``==pagesim==`` lines at the top say how the trace was
recorded. The file is written as ``OUT.part`` and renamed when complete: an interrupted or failed
recording (a full disk) leaves nothing behind. An existing ``OUT`` is refused unless ``--force``
(``force=True``), and then replaced only once the new trace is complete.

``data_only`` drops instruction fetches (``I`` lines), about three quarters of a lackey trace;
``limit`` stops the program after that many accesses (the trace is then the run's first ``limit``
accesses, and says so). Only the process valgrind starts is traced (valgrind's default
``--trace-children=no``): a shell script's children are not.

lackey runs the program on valgrind's JIT, perhaps 50-100 times slower than natively, and a
compressed trace takes about 0.6-2.5 bytes per access (instruction fetches compress best, random
data addresses worst).
"""

from __future__ import annotations

import datetime
import gzip
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from ._check import check_int

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
        tail = f"; stopped after --limit {self.accesses:,}" if self.truncated else f"; the program exited with status {self.exit_status}"
        packed = "compressed" if str(self.path).endswith(".gz") else "uncompressed"
        return f"{self.path}: {self.accesses:,} {what} ({', '.join(kinds)}), {self.bytes / 1e6:.2f} MB {packed}, recorded in {self.seconds:.1f} s{tail}"


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


def _term_to_interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def record(command, out=None, data_only: bool = False, limit: int | None = None, program_output=None, force: bool = False) -> Recording:
    """Run ``command`` (a list of strings) under valgrind lackey and write its memory trace to
    ``out`` (gzip-compressed when the name ends in .gz; default ``<program>-lackey.txt.gz``).

    data_only: drop instruction fetches. limit: stop after this many (written) accesses.
    program_output: where the program's stdout and stderr go (None: this process's; or
    ``subprocess.DEVNULL``). force: replace ``out`` if it exists (else :class:`TraceExists`, before
    anything runs; the old file is replaced only once the new trace is complete). Raises
    RuntimeError when valgrind is missing or records nothing, and an OSError naming the file when
    the trace cannot be written (a full disk); no part of the trace is left behind.
    """
    if isinstance(command, (str, bytes)) or not hasattr(command, "__iter__"):
        raise TypeError(f"command must be a list of strings such as ['ls', '-l'], got {command!r}")
    command = [str(c) for c in command]
    if command[:1] == ["--"]:
        command = command[1:]
    if not command or not command[0]:
        raise ValueError("command is empty: name the program to trace, e.g. pagesim trace record -- ls -l")
    if limit is not None:
        limit = check_int("limit", limit, 1, None, " (a number of accesses, or None for the whole run)")
    out = Path(out if out is not None else default_output(command))
    if out.is_dir():
        raise ValueError(f"out={str(out)!r} is a folder: give a file name such as {out / default_output(command)}")
    if not out.parent.is_dir():
        raise ValueError(f"out={str(out)!r}: the folder {str(out.parent)!r} does not exist")
    if not force and (out.exists() or out.is_symlink()):
        raise TraceExists(out)
    reason = why_not()
    if reason:
        raise RuntimeError(reason)
    vg = valgrind()
    part = out.with_name(out.name + ".part")
    counts = dict.fromkeys(KINDS.values(), 0)
    written = 0
    truncated = False
    t0 = time.perf_counter()
    rfd, wfd = os.pipe()
    try:
        proc = subprocess.Popen(
            [vg, "--tool=lackey", "--trace-mem=yes", f"--log-fd={wfd}", *command], pass_fds=(wfd,), stdout=program_output, stderr=program_output
        )
    except OSError as e:
        os.close(rfd)
        os.close(wfd)
        raise RuntimeError(f"cannot start valgrind ({vg}): {e}") from None
    os.close(wfd)
    status = None
    # SIGTERM (timeout, kill) is turned into KeyboardInterrupt while recording, so the cleanup below
    # removes the half-written .part file as it does for Ctrl-C (only the main thread may set it).
    old_term = None
    if threading.current_thread() is threading.main_thread():
        old_term = signal.signal(signal.SIGTERM, _term_to_interrupt)
    try:
        raw = open(part, "wb")
        sink = gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=6, mtime=0) if out.suffix == ".gz" else raw
        with raw, sink, os.fdopen(rfd, "rb", buffering=1 << 20) as pipe:
            when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
            sink.write(f"==pagesim== {when}: {_valgrind_version(vg)} --tool=lackey --trace-mem=yes, command: {' '.join(command)}\n".encode())
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
                block = pipe.read(1 << 20)
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
                    proc.kill()  # valgrind runs the program in its own process: this stops both
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
    except BaseException as e:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        part.unlink(missing_ok=True)
        if old_term is not None:
            signal.signal(signal.SIGTERM, old_term)
            old_term = None
        if isinstance(e, OSError):
            raise OSError(e.errno, f"cannot write the trace {out} (writing {part}): {e.strerror or e}") from e
        raise
    if old_term is not None:
        signal.signal(signal.SIGTERM, old_term)
    if written == 0:
        part.unlink(missing_ok=True)
        raise RuntimeError(
            f"valgrind recorded no {'data ' if data_only else ''}accesses of {' '.join(command)!r} "
            f"(exit status {status}): is the command right? (valgrind's message is above)"
        )
    try:
        part.replace(out)
    except OSError as e:
        part.unlink(missing_ok=True)
        raise OSError(e.errno, f"cannot write the trace {out} (renaming {part.name} into place): {e.strerror or e}") from e
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
        bytes=out.stat().st_size,
    )


def count_lines(path) -> int:
    """Access lines in a lackey file (I, L, S, M; valgrind's and pagesim's ``==`` lines not counted),
    counted independently of :mod:`pagesim.traces`."""
    p = Path(path)
    opener = gzip.open if p.suffix == ".gz" else open
    n = 0
    with opener(p, "rb") as f:
        for line in f:
            n += line[:2] in KINDS
    return n


if __name__ == "__main__":  # python -m pagesim.record CMD ...
    print(record(sys.argv[1:]))
