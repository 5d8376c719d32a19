"""Recording a real program's trace with valgrind lackey (pagesim.sources.record, `pagesim trace record`)."""

import gzip
import os
import re
import socket
import subprocess
import sys

import pytest

from pagesim.sources import record as R
from pagesim.sources.traces import read_trace

needs_valgrind = pytest.mark.skipif(R.why_not() is not None, reason=str(R.why_not()))


def _cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "pagesim", *args], capture_output=True, text=True, cwd=cwd)


def _lackey_lines(path):
    """Access lines counted here, independently of both the recorder and the reader."""
    with gzip.open(path, "rt") as f:
        return sum(1 for ln in f if len(ln) > 2 and ln[0] in " I" and ln[1] in " LSM" and ln[:2] != "  " and "," in ln)


@needs_valgrind
def test_cli_record_ls_round_trip(tmp_path):
    r = _cli("trace", "record", "--", "ls", "-l", cwd=tmp_path)  # exactly the command of the issue
    assert r.returncode == 0, r.stderr
    out = tmp_path / "ls-lackey.txt.gz"  # the default name: <program>-lackey.txt.gz in the current folder
    assert out.is_file() and not (tmp_path / "ls-lackey.txt.gz.part").exists()
    tr = read_trace(out)
    lines = _lackey_lines(out)
    assert tr.accesses == lines == R.count_lines(out) > 10_000
    assert f"{lines:,} accesses" in r.stdout  # the recorder's own count, printed
    assert tr.instr_accesses > 0
    # pagesim simulate --trace reads what was written
    s = _cli("simulate", "--machine", "skylake", "--trace", str(out), "--page-size", "4K", "--quiet")
    assert s.returncode == 0, s.stderr
    assert f"accesses {tr.accesses:,}" in s.stdout


@needs_valgrind
def test_data_only_and_limit(tmp_path):
    rec = R.record(["ls", "/"], out=tmp_path / "d.txt.gz", data_only=True, limit=5000, program_output=subprocess.DEVNULL)
    assert rec.truncated and rec.accesses == 5000 and rec.instr == 0
    assert rec.loads + rec.stores + rec.modifies == 5000
    tr = read_trace(rec.path)
    assert tr.accesses == 5000 == _lackey_lines(rec.path) and tr.instr_accesses == 0
    with gzip.open(rec.path, "rt") as f:
        head = [next(f) for _ in range(2)]
    assert head[0].startswith("==pagesim==") and "ls /" in head[0] and "data accesses only" in head[1]


@needs_valgrind
def test_plain_output_and_default_name(tmp_path):
    rec = R.record(["true"], out=tmp_path / "t.txt", program_output=subprocess.DEVNULL)
    assert not rec.truncated and rec.exit_status == 0
    assert read_trace(rec.path).accesses == rec.accesses == R.count_lines(rec.path)
    assert R.default_output(["/usr/bin/sort", "x"]) == "sort-lackey.txt.gz"
    assert "MB uncompressed" in str(rec)  # a plain-text trace is not called compressed


@needs_valgrind
@pytest.mark.parametrize("sig", ["SIGTERM", "SIGHUP"])
def test_terminated_recording_leaves_nothing(tmp_path, sig):
    """SIGTERM (timeout, kill) and SIGHUP (a closed terminal) left OUT.part behind; they are cleaned
    up as Ctrl-C is."""
    import signal
    import time

    out = tmp_path / "t.gz"
    p = subprocess.Popen(
        [sys.executable, "-m", "pagesim", "trace", "record", "-o", str(out), "--quiet-program", "--", sys.executable, "-c", "import time; time.sleep(60)"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.time() + 60
    while not list(tmp_path.glob(".t.gz.*.part")) and time.time() < deadline:
        time.sleep(0.2)
    assert list(tmp_path.glob(".t.gz.*.part")), "the recording never started"
    p.send_signal(getattr(signal, sig))
    p.communicate(timeout=60)
    assert p.returncode != 0
    assert list(tmp_path.iterdir()) == []


@needs_valgrind
def test_second_interrupt_during_cleanup_leaves_nothing(tmp_path, monkeypatch):
    """A second Ctrl-C a few milliseconds after the first (while valgrind was being stopped) once
    left the .part file behind; the cleanup starts again instead. Both interrupts are raised in
    place of the signals: the first while the trace is written, the second from the cleanup's
    first stop of valgrind."""
    out = tmp_path / "t.txt.gz"
    real_kill = R.subprocess.Popen.kill
    kills = []

    def kill_once_interrupted(self):
        kills.append(1)
        if len(kills) == 1:
            raise KeyboardInterrupt
        real_kill(self)

    def interrupted(vg):
        raise KeyboardInterrupt

    monkeypatch.setattr(R.subprocess.Popen, "kill", kill_once_interrupted)
    monkeypatch.setattr(R, "_valgrind_version", interrupted)
    with pytest.raises(KeyboardInterrupt):
        R.record([sys.executable, "-c", "import time; time.sleep(60)"], out=out, program_output=subprocess.DEVNULL)
    assert len(kills) == 2
    assert list(tmp_path.iterdir()) == []


@needs_valgrind
def test_command_not_found_leaves_nothing(tmp_path):
    out = tmp_path / "x.txt.gz"
    with pytest.raises(RuntimeError, match="recorded no accesses of 'no-such-program-here'"):
        R.record(["no-such-program-here"], out=out, program_output=subprocess.DEVNULL)
    assert list(tmp_path.iterdir()) == []


def test_missing_valgrind_is_one_clear_line(monkeypatch, tmp_path):
    monkeypatch.setattr(R.shutil, "which", lambda name: None)
    with pytest.raises(RuntimeError, match="valgrind is not installed .*apt-get install valgrind.*shipped trace"):
        R.record(["ls"], out=tmp_path / "x.gz")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "kw,msg",
    [
        (dict(command=[]), "command is empty"),
        (dict(command=["--"]), "command is empty"),
        (dict(command="ls -l"), "command must be a list of strings"),
        (dict(command=["ls"], limit=0), r"limit=0 is out of range: allowed 1\.\. \(a number of accesses, or None for the whole run\)"),
        (dict(command=["ls"], limit=2.5), "limit must be an int, got float 2.5"),
    ],
)
def test_bad_arguments(kw, msg):
    with pytest.raises((ValueError, TypeError), match=msg):
        R.record(**kw)


def test_bad_output_folder(tmp_path):
    if R.why_not():
        pytest.skip(R.why_not())
    with pytest.raises(ValueError, match="the folder .* does not exist"):
        R.record(["ls"], out=tmp_path / "nope" / "x.gz")
    with pytest.raises(ValueError, match="is a folder"):
        R.record(["ls"], out=tmp_path)


@pytest.mark.parametrize(
    "args,msg",
    [
        (("trace", "record", "--"), "command is empty"),
        (("trace", "record", "--limit", "many", "--", "ls"), "--limit 'many' must be a whole number"),
        (("trace", "record", "--limit", "0", "--", "ls"), "--limit 0 is out of range"),
        (("probe", "--repeats", "0"), "--repeats 0 is out of range"),
        (("probe", "--max-size", "9G"), "max_size=9G is out of range"),
        (("probe", "--per-octave", "x"), "--per-octave 'x' must be a whole number"),
    ],
)
def test_cli_errors_are_one_line_exit_2(args, msg):
    r = _cli(*args)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr and msg in r.stderr, r.stderr


def test_an_existing_trace_is_kept_unless_force(tmp_path):
    """`pagesim trace record -o EXISTING` refuses in one line naming the file and --force (was:
    overwritten without a word); with --force the file is replaced by the new trace."""
    old = tmp_path / "t.txt.gz"
    old.write_bytes(b"an earlier trace")
    r = _cli("trace", "record", "-o", str(old), "--quiet-program", "--", "true")
    assert r.returncode == 2 and r.stderr == f"pagesim: error: {old} exists: give --force to replace it, or -o another file\n", r.stderr
    assert old.read_bytes() == b"an earlier trace" and sorted(tmp_path.iterdir()) == [old]
    with pytest.raises(FileExistsError, match="exists: pass force=True to replace it"):
        R.record(["true"], out=old)
    assert old.read_bytes() == b"an earlier trace"
    if R.why_not():
        return
    r = _cli("trace", "record", "-o", str(old), "--force", "--quiet-program", "--", "true")
    assert r.returncode == 0, r.stderr
    assert R.count_lines(old) > 0 and sorted(tmp_path.iterdir()) == [old]


@needs_valgrind
def test_a_full_disk_leaves_nothing_and_names_the_file(tmp_path, monkeypatch):
    """The trace cannot be written (disk full): no part of it is left, and the error names the
    file (was: [Errno 28] alone)."""
    import builtins
    import errno

    class Full:
        def __init__(self, f):
            self.f = f

        def write(self, data):
            self.f.write(bytes(data)[:10])
            raise OSError(errno.ENOSPC, "No space left on device")

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

        def __getattr__(self, name):
            return getattr(self.f, name)

    real = builtins.open

    def full_disk_open(file, mode="r", *a, **kw):
        f = real(file, mode, *a, **kw)
        return Full(f) if "w" in mode else f

    monkeypatch.setattr(R, "open", full_disk_open, raising=False)
    out = tmp_path / "t.txt"
    with pytest.raises(OSError) as e:
        R.record([sys.executable, "-c", "pass"], out=out, program_output=subprocess.DEVNULL)
    assert list(tmp_path.iterdir()) == []
    assert e.value.errno == errno.ENOSPC
    tmp = rf"{re.escape(str(tmp_path))}/\.t\.txt\.\w+\.part"  # the temporary file, hidden, beside out
    assert re.search(rf"cannot write the trace {re.escape(str(out))} \(writing {tmp}\): No space left on device", str(e.value))


@needs_valgrind
def test_a_file_named_like_the_temporary_one_is_not_touched(tmp_path):
    """The trace is written to a temporary file of its own (hidden, unique), never to OUT.part:
    a user's file of that name is kept as it was (was: silently replaced, then renamed away)."""
    mine = tmp_path / "mine.txt.gz.part"
    mine.write_bytes(b"the user's own file")
    r = _cli("trace", "record", "-o", str(tmp_path / "mine.txt.gz"), "--quiet-program", "--", "true")
    assert r.returncode == 0, r.stderr
    assert mine.read_bytes() == b"the user's own file"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.txt.gz", "mine.txt.gz.part"]
    assert R.count_lines(tmp_path / "mine.txt.gz") > 0


@needs_valgrind
def test_an_output_that_appears_while_recording_is_kept_unless_force(tmp_path):
    """Without force, the trace is put in place only if OUT still does not exist at the end (a
    hard link, which fails when the name exists): a file another process made meanwhile (here the
    traced program itself, as a concurrent recording to the same OUT would) is kept, the
    recording refused and its temporary file removed. With force it is replaced, and the counts
    and size reported are those of the file on disk."""
    out = tmp_path / "t.txt.gz"
    command = ["sh", "-c", f"echo theirs > '{out}'"]
    with pytest.raises(R.TraceExists, match="exists: pass force=True to replace it"):
        R.record(command, out=out, program_output=subprocess.DEVNULL)
    assert out.read_bytes() == b"theirs\n" and sorted(tmp_path.iterdir()) == [out]
    r = _cli("trace", "record", "-o", str(out), "--quiet-program", "--", *command)
    assert r.returncode == 2 and r.stderr == f"pagesim: error: {out} exists: give --force to replace it, or -o another file\n", r.stderr
    assert out.read_bytes() == b"theirs\n" and sorted(tmp_path.iterdir()) == [out]
    out.unlink()
    rec = R.record(command, out=out, program_output=subprocess.DEVNULL, force=True)
    assert sorted(tmp_path.iterdir()) == [out]
    assert rec.bytes == out.stat().st_size and rec.accesses == R.count_lines(out) > 0
    assert oct(out.stat().st_mode & 0o777) == oct(0o666 & ~_umask())  # the permissions of any new file, not mkstemp's 0600


def _umask():
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _fifo(path):
    os.mkfifo(path)


def _symlink(path):
    target = path.with_name("target.txt.gz")
    target.write_bytes(b"the link's target")
    path.symlink_to(target.name)


def _socket(path):
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(path))
    s.close()


@pytest.mark.parametrize(
    "make,what",
    [(_symlink, "a symbolic link to 'target.txt.gz'"), (_fifo, r"a fifo \(named pipe\)"), (_socket, "a socket")],
)
@pytest.mark.parametrize("force", [False, True])
def test_an_output_that_is_not_a_regular_file_is_refused(tmp_path, make, what, force):
    """-o naming a symbolic link, a fifo, a socket (or a device: /dev/null) is refused in one
    line naming the path and what it is, with --force too (was: --force replaced the link or the
    device node itself with a regular file)."""
    out = tmp_path / "t.txt.gz"
    make(out)
    before = sorted((p.name, os.lstat(p).st_mode) for p in tmp_path.iterdir())
    r = _cli("trace", "record", "-o", str(out), *(["--force"] if force else []), "--quiet-program", "--", "true")
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert re.fullmatch(rf"pagesim: error: {re.escape(str(out))} is {what}, not a regular file: .*\n", r.stderr), r.stderr
    with pytest.raises(ValueError, match=rf"{re.escape(str(out))} is {what}, not a regular file"):
        R.record(["true"], out=out, force=force)
    assert sorted((p.name, os.lstat(p).st_mode) for p in tmp_path.iterdir()) == before
    if make is _symlink:
        assert (tmp_path / "target.txt.gz").read_bytes() == b"the link's target"


def test_a_device_is_named_as_such():
    """(force=True is not tried on /dev/null: a recorder that replaced it would do so as root.)"""
    from pathlib import Path

    assert R._not_a_regular_file(Path("/dev/null")) == "a character device"
    with pytest.raises(ValueError, match=r"^/dev/null is a character device, not a regular file"):
        R.record(["true"], out="/dev/null")


@needs_valgrind
def test_without_hard_links_the_name_is_still_claimed_exclusively(tmp_path, monkeypatch):
    """On a file system that refuses hard links the trace is still put in place, and a file
    that appeared meanwhile is still kept."""
    import errno

    def no_links(src, dst):
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(R.os, "link", no_links)
    out = tmp_path / "t.txt.gz"
    rec = R.record(["true"], out=out, program_output=subprocess.DEVNULL)
    assert sorted(tmp_path.iterdir()) == [out] and rec.accesses == R.count_lines(out) > 0 and rec.bytes == out.stat().st_size
    out.unlink()
    with pytest.raises(R.TraceExists):
        R.record(["sh", "-c", f"echo theirs > '{out}'"], out=out, program_output=subprocess.DEVNULL)
    assert out.read_bytes() == b"theirs\n" and sorted(tmp_path.iterdir()) == [out]


def test_a_program_killed_by_a_signal_is_said_so():
    """valgrind's status -11 was printed as "exited with status -11": the signal is named."""
    import dataclasses

    from pagesim.sources.record import Recording

    kw = dict(path="t.txt", command=("x",), accesses=5, instr=1, loads=2, stores=1, modifies=1, data_only=False, truncated=False, seconds=0.1, bytes=9)
    r = Recording(exit_status=-11, **kw)
    assert str(r).endswith("; the program was killed by SIGSEGV")
    assert str(dataclasses.replace(r, exit_status=3)).endswith("; the program exited with status 3")


def _alive(marker: str) -> list[int]:
    """The processes with ``marker`` among their arguments."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if marker.encode() in f.read():
                    found.append(int(pid))
        except OSError:
            continue
    return found


@needs_valgrind
def test_a_forked_child_does_not_hold_the_recording_and_is_silenced(tmp_path):
    """A child the program forks runs on under valgrind (here until it execs sleep): it and what it
    runs kept the pipe open, so the recording waited for them to end. That the child writes nothing
    to the trace rests on valgrind's --child-silent-after-fork, which the trace's header names (what
    is checked here of it)."""
    marker = "600.3141"  # a sleep no one else runs, which outlives the program by far
    try:
        r = subprocess.run(
            [sys.executable, "-m", "pagesim", "trace", "record", "-o", str(tmp_path / "t.txt.gz"), "--quiet-program", "--", "sh", "-c", f"sleep {marker} &"],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert r.returncode == 0, r.stderr
        with gzip.open(tmp_path / "t.txt.gz", "rt") as f:
            assert "--child-silent-after-fork=yes" in f.readline()
    finally:
        for pid in _alive(marker):
            os.kill(pid, 9)


@needs_valgrind
def test_ctrl_c_stops_what_the_program_forked(tmp_path):
    """Ctrl-C stopped valgrind but left the processes the program had forked (still valgrind)."""
    import signal
    import time

    marker = "601.2718"  # a sleep no one else runs
    p = subprocess.Popen(
        [sys.executable, "-m", "pagesim", "trace", "record", "-o", str(tmp_path / "t.gz"), "--quiet-program", "--", "sh", "-c", f"sleep {marker} & sleep 602"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.time() + 120
        while len(_alive(marker)) < 3 and time.time() < deadline:  # pagesim, the program and its child
            time.sleep(0.2)
        assert len(_alive(marker)) >= 3, "the program never forked"
        p.send_signal(signal.SIGINT)
        p.communicate(timeout=60)
        assert p.returncode != 0
        time.sleep(0.5)
        assert _alive(marker) == [] and list(tmp_path.iterdir()) == []
    finally:
        for pid in _alive(marker):
            os.kill(pid, 9)


@needs_valgrind
@pytest.mark.parametrize("shape", ["sleep {} & ", "(sleep {} &); "], ids=["forked", "left-the-tree"])
def test_limit_stops_what_the_program_started(tmp_path, shape):
    """--limit stopped valgrind's own process and left a child the program had forked running, or
    one that had left the tree (a ``(cmd &)`` whose parent ended)."""
    marker = "603.1415"
    try:
        program = ["sh", "-c", shape.format(marker) + "while :; do :; done"]
        rec = R.record(program, out=tmp_path / "t.txt", limit=3_000_000, program_output=subprocess.DEVNULL)
        assert rec.truncated and rec.accesses == 3_000_000
        assert _alive(f"sleep\0{marker}") == []
    finally:
        for pid in _alive(f"sleep\0{marker}"):
            os.kill(pid, 9)


@needs_valgrind
def test_ctrl_c_stops_what_left_the_program_s_tree(tmp_path):
    """A process the program started that left its tree (a ``(cmd &)`` whose parent ended, or
    ``setsid -f``) outlived Ctrl-C: only the processes below valgrind were stopped."""
    import signal
    import time

    marker, detached, program = "611.2718", "612.2718", "613.2718"
    p = subprocess.Popen(
        [
            sys.executable,
            *("-m", "pagesim", "trace", "record", "-o", str(tmp_path / "t.gz"), "--quiet-program"),
            *("--", "sh", "-c", f"(sleep {marker} &); setsid -f sleep {detached}; sleep {program}"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.time() + 120
        while not all(_alive(f"sleep\0{m}") for m in (marker, detached, program)) and time.time() < deadline:
            time.sleep(0.2)
        assert all(_alive(f"sleep\0{m}") for m in (marker, detached, program)), "the program never started all three"
        p.send_signal(signal.SIGINT)
        p.communicate(timeout=60)
        assert p.returncode != 0
        time.sleep(0.5)
        assert [_alive(f"sleep\0{m}") for m in (marker, detached, program)] == [[], [], []] and list(tmp_path.iterdir()) == []
    finally:
        for m in (marker, detached, program):
            for pid in _alive(f"sleep\0{m}"):
                os.kill(pid, 9)
