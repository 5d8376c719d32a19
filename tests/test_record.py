"""Recording a real program's trace with valgrind lackey (pagesim.record, `pagesim trace record`)."""

import gzip
import subprocess
import sys

import pytest

from pagesim import record as R
from pagesim.traces import read_trace

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
def test_terminated_recording_leaves_nothing(tmp_path):
    """SIGTERM (timeout, kill) once left OUT.part behind; it is cleaned up as Ctrl-C is."""
    import signal
    import time

    out = tmp_path / "t.gz"
    p = subprocess.Popen(
        [sys.executable, "-m", "pagesim", "trace", "record", "-o", str(out), "--quiet-program", "--", sys.executable, "-c", "import time; time.sleep(60)"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.time() + 60
    while not (tmp_path / "t.gz.part").exists() and time.time() < deadline:
        time.sleep(0.2)
    assert (tmp_path / "t.gz.part").exists(), "the recording never started"
    p.send_signal(signal.SIGTERM)
    p.communicate(timeout=60)
    assert p.returncode != 0
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
    assert e.value.errno == errno.ENOSPC and f"cannot write the trace {out} (writing {out}.part): No space left on device" in str(e.value)
