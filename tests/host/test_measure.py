"""pagesim measure: a real program with transparent huge pages off and on, on this machine."""

import os
import select
import signal
import subprocess
import sys
import time

import pytest

from pagesim.host import measure as M
from pagesim.host.linux import thp_mode

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl and /proc are Linux's")

# touches 64 MiB of a numpy array (numpy advises huge pages for large arrays), holds it half a
# second (AnonHugePages is read while a program runs, at most 2% of its time), then exits
PROGRAM = [sys.executable, "-c", "import time, numpy as np; a = np.zeros(64 << 20, np.uint8); a[::4096] = 1; time.sleep(0.5); print(int(a.sum()))"]


def test_thp_off_gets_no_huge_page_and_on_gets_them_where_the_kernel_gives_them():
    res = M.measure(PROGRAM, repeat=1)
    assert [r.thp for r in res.runs] == [False, True] and len(res.pairs()) == 1
    off, on = res.runs
    assert off.returncode == on.returncode == 0
    assert off.anon_huge_peak == 0  # PR_SET_THP_DISABLE: none, whatever numpy advises
    assert off.minor_faults >= (64 << 20) // 4096  # one fault per 4 KiB page touched, at least
    if thp_mode() in ("always", "madvise"):
        assert on.anon_huge_peak >= 2 << 20
        assert on.minor_faults < off.minor_faults
    assert res.ratios()[0] > 0
    text = res.summary()
    assert "time off / on" in text and "THP off" in text and "AnonHugePages up to 0" in text


def _interruptible():
    """In the child before exec: Ctrl-C as a terminal gives it. Tests started as a background job
    (``make test &`` from a script) inherit SIGINT ignored, and Python then keeps ignoring it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def test_ctrl_c_stops_the_program_and_reports_what_ran(tmp_path):
    """SIGINT while the program runs: pagesim stops its whole process group, says so, exits 130."""
    marker = "31.4159"  # a sleep no one else runs
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    p = subprocess.Popen(
        [sys.executable, "-m", "pagesim", "measure", "--repeat", "5", "--", "sleep", marker],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=_interruptible,
    )
    deadline = time.time() + 30
    while time.time() < deadline and not _running(marker):
        time.sleep(0.1)
    assert _running(marker), "the program never started"
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=20)
    assert p.returncode == 130, (out, err)
    assert "no complete pair of runs (interrupted)" in out and "pagesim: interrupted" in err
    time.sleep(0.5)
    assert not _running(marker), "the program outlived pagesim"


def _running(marker: str) -> bool:
    """Whether a ``sleep`` with ``marker`` among its arguments is alive."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                args = f.read().split(b"\0")
        except OSError:
            continue
        if args[:1] == [b"sleep"] and marker.encode() in args:
            return True
    return False


def test_a_missing_program_is_one_line():
    r = subprocess.run([sys.executable, "-m", "pagesim", "measure"], capture_output=True, text=True)
    assert r.returncode == 2 and "give the program to run after --" in r.stderr


def _plain_faults(command) -> int:
    """Minor faults of ``command`` started as subprocess starts it without a preexec function."""
    p = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    return os.wait4(p.pid, 0)[2].ru_minflt


def test_faults_are_the_programs_own():
    """The child is started without running Python in it (a forked Python child set up before exec
    took several hundred faults of its own, more with THP off, and they counted as the program's)."""
    cmd = ["/bin/true"] if os.path.exists("/bin/true") else ["true"]
    base = min(_plain_faults(cmd) for _ in range(3))
    for thp in (False, True):
        got = min(M.run_once(cmd, thp).minor_faults for _ in range(3))
        assert abs(got - base) <= 25, (thp, got, base)


def test_a_failing_program_gives_no_ratio_and_fails(tmp_path):
    r = subprocess.run([sys.executable, "-m", "pagesim", "measure", "--quiet", "--repeat", "2", "--", "sh", "-c", "exit 3"], capture_output=True, text=True)
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert "failed (exit status 3" in r.stdout and "in 4 of 4 runs: no pair ran without a failure, so no ratio" in r.stdout
    assert "time off / on" not in r.stdout and "the program failed in every run (above)" in r.stderr


def test_an_existing_trace_file_is_refused_before_anything_runs(tmp_path):
    out = tmp_path / "t.txt.gz"
    out.write_bytes(b"x")
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "pagesim", "measure", "--record", str(out), "--", "sleep", "5"], capture_output=True, text=True)
    assert r.returncode == 2 and f"{out} exists: give --force to replace it, or --record another file" in r.stderr
    assert "pair 1" not in r.stderr and time.perf_counter() - t < 20  # the program never ran (six runs of 5 s)


def _script(tmp_path, body: str) -> subprocess.CompletedProcess:
    """Run ``body`` in a Python of its own (a KeyboardInterrupt there does not reach pytest)."""
    f = tmp_path / "s.py"
    f.write_text(body)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    return subprocess.run([sys.executable, str(f)], capture_output=True, text=True, env=env, timeout=60, preexec_fn=_interruptible)


def test_thp_on_is_on_even_when_pagesim_runs_with_thp_disabled(tmp_path):
    out = tmp_path / "status"
    r = _script(
        tmp_path,
        "import ctypes\nfrom pagesim.host import measure as M\n"
        "assert ctypes.CDLL(None).prctl(41, 1, 0, 0, 0) == 0\n"  # inherited from a parent, say
        f"f = open({str(out)!r}, 'w')\n"
        "for thp in (False, True):\n"
        "    M.run_once(['grep', 'THP_enabled', '/proc/self/status'], thp, output=f)\n"
        "f.close()\n"
        "print(ctypes.CDLL(None).prctl(42, 0, 0, 0, 0))\n",
    )
    assert r.returncode == 0, r.stderr
    assert out.read_text().split() == ["THP_enabled:", "0", "THP_enabled:", "1"] and r.stdout.strip() == "1"  # its own flag kept


def test_ctrl_c_while_the_program_starts_stops_it(tmp_path):
    marker = "27.1828"
    r = _script(
        tmp_path,
        "import os, signal\nfrom pagesim.host import measure as M\n"
        "real = os.posix_spawnp\n"
        "def spawn(*a, **k):\n"
        "    pid = real(*a, **k)\n"
        "    os.kill(os.getpid(), signal.SIGINT)  # held while the child starts\n"
        "    return pid\n"
        "os.posix_spawnp = spawn\n"
        f"res = M.measure(['sleep', {marker!r}], repeat=1)\n"
        "print(res.interrupted, len(res.runs))\n",
    )
    assert r.returncode == 0 and r.stdout.split() == ["True", "0"], (r.stdout, r.stderr)
    time.sleep(0.5)
    assert not _running(marker), "the program outlived pagesim"


def test_a_second_ctrl_c_still_stops_a_program_that_ignores_the_first(tmp_path):
    marker = "16.1803"
    prog = tmp_path / "ignint.sh"
    prog.write_text(f"#!/bin/sh\ntrap '' INT\nsleep {marker}\n")
    prog.chmod(0o755)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    p = subprocess.Popen(
        [sys.executable, "-m", "pagesim", "measure", "--", str(prog)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, preexec_fn=_interruptible
    )
    deadline = time.time() + 30
    while time.time() < deadline and not _running(marker):
        time.sleep(0.1)
    assert _running(marker), "the program never started"
    p.send_signal(signal.SIGINT)
    time.sleep(0.5)
    p.send_signal(signal.SIGINT)  # within the 2 s pagesim gives the first
    p.communicate(timeout=30)
    assert p.returncode == 130
    time.sleep(0.5)
    assert not _running(marker), "the program outlived pagesim"


def test_reading_anon_huge_pages_takes_little_of_the_run(monkeypatch):
    """Each reading of smaps_rollup walks the program's page tables on another core (tens of
    milliseconds for a GiB of 4 KiB pages); read every 20 ms, it took a core from the program it
    timed and slowed it markedly. Here a reading is made to take 50 ms: over a 1.5 s run the
    readings are spaced so that they take at most READ_SHARE of it (the count, not the time, is
    checked)."""
    calls = []

    def slow(pid):
        calls.append(pid)
        time.sleep(0.05)
        return 0

    monkeypatch.setattr(M, "_anon_huge", slow)
    r = M.run_once(["sleep", "1.5"], True)
    assert r.returncode == 0 and r.readings == len(calls)
    assert 1 <= len(calls) <= 2, len(calls)  # the first after 20 ms, the next 2.5 s later at the soonest


def test_short_runs_and_unseen_huge_pages_are_said():
    runs = [M.Run(thp, 0.004, 60, 0, 0, 0, 0) for thp in (False, True, False, True)]
    text = M.Measurement(["true"], runs=runs, thp_mode="madvise").summary()
    assert "the runs are short (0.004 s median, under 0.1 s)" in text
    assert "AnonHugePages not seen (not read in a run" in text
    assert "AnonHugePages: the program's first process only (not what it starts)" in text
    long = [M.Run(thp, 2.0, 60, 0, 0, 0, 1) for thp in (False, True)]  # read once: 0 is what it saw
    text = M.Measurement(["x"], runs=long, thp_mode="madvise").summary()
    assert "the runs are short" not in text and text.count("AnonHugePages up to 0") == 2


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_and_sighup_stop_the_program_too(sig):
    """``timeout`` (SIGTERM) or a closed terminal (SIGHUP) ended pagesim and left the program
    running, in a process group of its own; they stop it as Ctrl-C does."""
    marker = f"27.18{int(sig)}"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    p = subprocess.Popen(
        [sys.executable, "-m", "pagesim", "measure", "--repeat", "5", "--", "sleep", marker], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    deadline = time.time() + 30
    while time.time() < deadline and not _running(marker):
        time.sleep(0.1)
    assert _running(marker), "the program never started"
    p.send_signal(sig)
    out, err = p.communicate(timeout=20)
    assert p.returncode == 130 and "no complete pair of runs (interrupted)" in out, (out, err)
    time.sleep(0.5)
    assert not _running(marker), "the program outlived pagesim"


def test_an_empty_program_name_and_a_bad_record_folder_are_named():
    r = subprocess.run([sys.executable, "-m", "pagesim", "measure", "--", ""], capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.strip() == "pagesim: error: give the program to run after --: pagesim measure -- CMD [ARG ...]"
    r = subprocess.run([sys.executable, "-m", "pagesim", "measure", "--record", "/no-such-folder/t.gz", "--", "true"], capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.strip() == "pagesim: error: --record /no-such-folder/t.gz: the folder '/no-such-folder' does not exist"


def test_measure_record_into_a_folder_that_takes_no_file_is_refused_before_anything_runs():
    r = subprocess.run([sys.executable, "-m", "pagesim", "measure", "--record", "/proc/self/t.txt.gz", "--", "sleep", "5"], capture_output=True, text=True)
    assert r.returncode == 2 and "pair 1" not in r.stderr
    assert r.stderr.strip() == "pagesim: error: --record /proc/self/t.txt.gz: cannot write a file in '/proc/self': No such file or directory"
    r = subprocess.run([sys.executable, "-m", "pagesim", "measure", "--record", "/dev/null/t.txt.gz", "--", "sleep", "5"], capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.strip() == "pagesim: error: --record /dev/null/t.txt.gz: '/dev/null' is not a folder"


def test_what_a_run_leaves_running_is_stopped_and_named():
    """A program that started a process and ended (in its group, or detached from it with setsid)
    left it running through the later runs and after pagesim; each is stopped when its run ends."""
    marker, detached = "33.1416", "33.2718"
    try:
        res = M.measure(["sh", "-c", f"(sleep {marker} &); setsid -f sleep {detached}"], repeat=2)
        # the two sleeps, or what was to become them when the program ended (a sh, a setsid)
        assert all(r.left and set(r.left) <= {"sleep", "sh", "setsid"} for r in res.runs), [r.left for r in res.runs]
        assert not _running(marker) and not _running(detached)
        assert "the program left processes running after 4 of 4 runs (" in res.summary()
        quiet = M.measure(["true"], repeat=1)
        assert [r.left for r in quiet.runs] == [(), ()] and "left processes" not in quiet.summary()
    finally:
        subprocess.run(["pkill", "-f", "^sleep 33\\.(1416|2718)$"])


def test_ctrl_c_stops_what_the_program_detached_too():
    """Ctrl-C stopped the program's process group, not a process it had moved out of it (setsid)."""
    marker, detached = "34.1416", "34.2718"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    p = subprocess.Popen(
        [sys.executable, "-m", "pagesim", "measure", "--", "sh", "-c", f"setsid -f sleep {detached}; sleep {marker}"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=_interruptible,
    )
    try:
        deadline = time.time() + 30
        while time.time() < deadline and not (_running(marker) and _running(detached)):
            time.sleep(0.1)
        assert _running(marker) and _running(detached), "the program never started both"
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=20)
        assert p.returncode == 130, (out, err)
        time.sleep(0.5)
        assert not _running(marker) and not _running(detached)
    finally:
        subprocess.run(["pkill", "-f", "^sleep 34\\.(1416|2718)$"])


def test_ctrl_c_between_short_runs_is_not_lost():
    """With runs of a few milliseconds most of the time is spent looking for what they left; a
    Ctrl-C landing there was swallowed, and measure ran every pair and exited 0."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    for delay in (0.0, 0.1, 0.3):
        p = subprocess.Popen(
            [sys.executable, "-m", "pagesim", "measure", "--repeat", "1000", "--", "true"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
            preexec_fn=_interruptible,
        )
        first = p.stdout.readline()  # the first run's progress line: past the start-up, runs under way
        assert first.startswith("  pair 1/1000"), first
        time.sleep(delay)
        p.send_signal(signal.SIGINT)
        out = first + p.communicate(timeout=60)[0]
        assert p.returncode == 130 and "interrupted" in out, (delay, p.returncode, out[-500:])


def test_what_is_left_in_the_program_s_group_without_the_mark_is_stopped_too():
    marker = "35.1416"
    try:
        res = M.measure(["sh", "-c", f"env -i sleep {marker} &"], repeat=1)
        assert all(r.left for r in res.runs) and not _running(marker), [r.left for r in res.runs]
    finally:
        subprocess.run(["pkill", "-f", "^sleep 35\\.1416$"])


def test_the_program_reads_no_terminal():
    """In a process group of its own the program is not the terminal's foreground: one that read
    its stdin from the terminal was stopped (SIGTTIN) and measure waited for ever. Its stdin is
    /dev/null, so ``cat`` ends at once. Run on a pseudo-terminal, as from a shell."""
    import pty

    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    pid, fd = pty.fork()
    if pid == 0:  # the child: a session of its own, the pty its terminal and it in the foreground
        os.execve(sys.executable, [sys.executable, "-m", "pagesim", "measure", "--repeat", "1", "--", "cat"], env)
    out, status, deadline = b"", None, time.time() + 60
    try:
        while status is None and time.time() < deadline:
            if select.select([fd], [], [], 0.2)[0]:
                try:
                    out += os.read(fd, 4096)
                except OSError:  # the other end closed
                    pass
            done, st = os.waitpid(pid, os.WNOHANG)
            status = st if done else None
    finally:
        if status is None:
            os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        os.close(fd)
    assert status is not None, f"measure never ended: {out.decode(errors='replace')}"
    assert os.waitstatus_to_exitcode(status) == 0 and b"time off / on" in out, out
