"""Run a real program on this machine with transparent huge pages off and on, interleaved and
repeated, and report what changed: the time ratio with its spread, minor faults, and the most
AnonHugePages the program reached.

- **THP off**: the child is started with ``PR_SET_THP_DISABLE`` set (``prctl``), which it and its
  own children keep (across ``execve``): the kernel gives it no transparent huge page, whatever
  ``madvise`` it or its libraries call (numpy advises huge pages for large arrays).
- The child is started with ``posix_spawn`` (in its own process group, its stdin /dev/null), so
  no Python runs in it before the program: its page faults are the program's own. Not being the
  terminal's foreground, a program that opens the terminal itself (``/dev/tty``) to read from it is
  stopped there by the kernel (SIGTTIN) until Ctrl-C: measure a program that needs no terminal.
- **THP on**: glibc's ``glibc.malloc.hugetlb=1`` tunable (glibc 2.35+) in ``GLIBC_TUNABLES``, so
  malloc advises huge pages for the memory it maps; with the system's THP mode ``always`` every
  anonymous mapping may get them, with ``madvise`` only what is advised (by malloc or the program).
- Runs alternate off, on, off, on, ... (``repeat`` pairs) so that a change in the machine's load
  falls on both; the ratio is each pair's time off / time on (above 1: THP faster), reported as
  the median of the pairs in which the program succeeded both times, with their minimum and
  maximum. A run that fails (another exit status than 0, or a signal) is reported, its pair left
  out of the ratio, and ``pagesim measure`` exits with status 1.
- Minor and major faults come from the child's resource usage (``wait4``); AnonHugePages from its
  ``/proc/PID/smaps_rollup`` while it runs: first after ``poll`` seconds, then as often as reading
  it takes no more than ``READ_SHARE`` (2%) of the time (each reading walks the program's page
  tables on another core, tens of milliseconds for a GiB of 4 KiB pages; read every 20 ms, it
  slowed such a program markedly). Its own mappings only: a program that starts others is
  measured in its first process only; a program that ends within a few readings may use huge
  pages unseen, and the report says so.

Ctrl-C stops the child (its whole process group: SIGINT, then SIGKILL after 2 s, or at once on a
second Ctrl-C) and reports the pairs completed so far; so do SIGTERM and SIGHUP (``timeout``, a
closed terminal), which would otherwise end pagesim and leave the program running. What a run
leaves running (a process the program started, in its group or not: a daemon) is stopped when the
run ends, or on Ctrl-C, and the report names it; it is found in the program's process group, or by
a mark in its environment, as the program runs with ``PAGESIM_TREE`` set to a random value. A
process that both leaves the group (``setsid``) and clears or rewrites its environment cannot be
found so, and is left running.
"""

from __future__ import annotations

import ctypes
import os
import select
import signal
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field

from ..core import procs
from ..core.units import format_size
from .linux import thp_mode

PR_SET_THP_DISABLE = 41  # linux/prctl.h
PR_GET_THP_DISABLE = 42
TUNABLE = "glibc.malloc.hugetlb=1"
#: the most of a run's time that reading its AnonHugePages may take (each reading walks its page
#: tables, on another core: on a machine with few cores, time taken from the program)
READ_SHARE = 0.02
#: runs shorter than this (seconds) are said to be too short to compare
SHORT = 0.1


@dataclass(frozen=True)
class Run:
    """One run of the program."""

    thp: bool
    seconds: float
    minor_faults: int
    major_faults: int
    anon_huge_peak: int  # bytes of AnonHugePages, the most seen while it ran
    returncode: int
    readings: int = 0  # how many times AnonHugePages was read while it ran
    left: tuple = ()  # the names of the processes it left running when it ended (stopped then)


@dataclass
class Measurement:
    """Every run, in the order they ran, and what the machine offered."""

    command: list
    runs: list = field(default_factory=list)
    thp_mode: str | None = None
    interrupted: bool = False
    poll: float = 0.02  # seconds between two readings of AnonHugePages

    def pairs(self) -> list[tuple[Run, Run]]:
        """(off, on) pairs, in order (a run left alone by an interruption is dropped)."""
        off = [r for r in self.runs if not r.thp]
        on = [r for r in self.runs if r.thp]
        return list(zip(off, on))

    def good_pairs(self) -> list[tuple[Run, Run]]:
        """The pairs in which the program exited with status 0 both times."""
        return [(a, b) for a, b in self.pairs() if a.returncode == 0 and b.returncode == 0]

    @property
    def failed(self) -> list[Run]:
        """The runs in which the program exited with another status than 0 (or was killed)."""
        return [r for r in self.runs if r.returncode != 0]

    def ratios(self) -> list[float]:
        """Each pair's time with THP off / time with THP on (above 1: THP faster), over the pairs
        in which the program succeeded both times."""
        return [a.seconds / b.seconds for a, b in self.good_pairs() if b.seconds > 0]

    def summary(self) -> str:
        lines = [f"pagesim measure: {' '.join(map(str, self.command))}"]
        lines.append(f"  THP mode here: {self.thp_mode or 'none (not Linux, or no THP)'}; off = prctl(PR_SET_THP_DISABLE), on = GLIBC_TUNABLES={TUNABLE}")
        lines.append(f"  AnonHugePages: the program's first process only (not what it starts), read while it runs, at most {READ_SHARE:.0%} of its time")
        pairs = self.pairs()
        if not pairs:
            return "\n".join(lines + ["  no complete pair of runs" + (" (interrupted)" if self.interrupted else "")])
        good = self.good_pairs()
        if good and len(good) < len(pairs):
            lines.append(f"  the {len(good)} pair{'s' if len(good) > 1 else ''} in which the program succeeded both times:")
        elif not good:
            lines.append("  every pair had a failed run; its runs, failed ones included:")
        for label, thp in (("THP off", False), ("THP on ", True)):
            rs = [r for p in (good or pairs) for r in p if r.thp == thp]
            t = [r.seconds for r in rs]
            faults = statistics.median([r.minor_faults for r in rs])
            huge = max(r.anon_huge_peak for r in rs)
            reads = min(r.readings for r in rs)
            if huge:
                seen = f"AnonHugePages up to {format_size(huge)}"
            elif reads == 0:
                seen = (
                    f"AnonHugePages not seen (not read in a run: first after {self.poll:g} s, then no more than {READ_SHARE:.0%} "
                    f"of the time; it ran {statistics.median(t):.3f} s)"
                )
            else:
                seen = "AnonHugePages up to 0"
            lines.append(f"  {label}: {statistics.median(t):.3f} s median ({min(t):.3f}..{max(t):.3f}), minor faults {faults:,.0f}, {seen}")
        rat = self.ratios()
        short = statistics.median(r.seconds for p in (good or pairs) for r in p)
        if short < SHORT:
            lines.append(
                f"  the runs are short ({short:.3f} s median, under {SHORT:g} s): starting the program and this machine's noise weigh "
                "in the ratio as much as its memory; time a longer run"
            )
        if rat:
            lines.append(
                f"  time off / on: {statistics.median(rat):.3f} median of {len(rat)} pair{'s' if len(rat) > 1 else ''} "
                f"({min(rat):.3f}..{max(rat):.3f}; above 1: THP faster)" + (" (interrupted: the pairs run so far)" if self.interrupted else "")
            )
        left = [r for r in self.runs if r.left]
        if left:
            names = ", ".join(sorted({n for r in left for n in r.left}))
            lines.append(
                f"  the program left processes running after {len(left)} of {len(self.runs)} runs ({names}): stopped then, "
                "as they would have run during the next runs"
            )
        bad = self.failed
        if bad:
            codes = ", ".join(map(str, sorted({r.returncode for r in bad})))
            lines.append(
                f"  the program failed (exit status {codes}; a negative status is the signal that ended it) in {len(bad)} of {len(self.runs)} runs: "
                + ("the pairs with a failed run are left out of the ratio" if rat else "no pair ran without a failure, so no ratio")
            )
        return "\n".join(lines)


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def _spawn(command: list, env: dict, thp: bool, output) -> int:
    """Start ``command`` (searched on PATH) in its own process group, Ctrl-C not held back in it,
    and return its pid. With THP off, PR_SET_THP_DISABLE is set on this process for the moment of
    the spawn: glibc's posix_spawn starts the child in this process's memory (CLONE_VFORK) and
    returns once it has exec'd, and the flag is copied into the new program's memory at exec; a
    child forked from Python and set up there would add its own page faults (several hundred) to
    the program's."""
    null = None
    # stdin from /dev/null: in a process group of its own the program is not the terminal's
    # foreground, and a read from the terminal would stop it (SIGTTIN) for good
    actions = [(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0)]
    if output is subprocess.DEVNULL:
        null = os.open(os.devnull, os.O_RDWR)
        actions += [(os.POSIX_SPAWN_DUP2, null, 1), (os.POSIX_SPAWN_DUP2, null, 2)]
    elif output is not None:
        fd = output if isinstance(output, int) else output.fileno()
        actions += [(os.POSIX_SPAWN_DUP2, fd, 1), (os.POSIX_SPAWN_DUP2, fd, 2)]
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, []) - {signal.SIGINT}
    libc = _libc()
    want = 0 if thp else 1  # THP on: cleared too, as pagesim may itself run with it set (inherited)
    was = libc.prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0)
    if was < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"prctl(PR_GET_THP_DISABLE) failed: {os.strerror(err)}")
    try:
        if was != want and libc.prctl(PR_SET_THP_DISABLE, want, 0, 0, 0) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"prctl(PR_SET_THP_DISABLE, {want}) failed: {os.strerror(err)}")
        return os.posix_spawnp(command[0], command, env, file_actions=actions, setpgroup=0, setsigmask=mask)
    finally:
        if was != want:
            libc.prctl(PR_SET_THP_DISABLE, was, 0, 0, 0)
        if null is not None:
            os.close(null)


def _anon_huge(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for ln in f:
                if ln.startswith("AnonHugePages:"):
                    return int(ln.split()[1]) << 10
    except OSError:
        pass
    return 0


def run_once(command: list, thp: bool, poll: float = 0.02, output=subprocess.DEVNULL) -> Run:
    """Run ``command`` once with THP off or on; ``output``: where its stdout and stderr go. What the
    program left running when it ended (a process it started, in its group or not) is stopped then,
    and named in ``left``: it would run during the next runs."""
    env, token = procs.marked_env()
    if thp:
        old = env.get("GLIBC_TUNABLES", "")
        env["GLIBC_TUNABLES"] = f"{old}:{TUNABLE}" if old else TUNABLE
    t0 = time.perf_counter()
    # Ctrl-C is noted, not raised, while the child starts, so that it arrives below, where the child
    # is stopped (a signal mask would hold it in this thread only: another thread would take it)
    held = _Deferred()
    try:
        pid = _spawn(command, env, thp, output)
    except BaseException:
        held.close()
        raise
    peak = readings = 0
    fd = None
    try:
        held.close()
        if held.got:
            raise KeyboardInterrupt
        # a pidfd turns readable when the child ends: the wait between readings of AnonHugePages ends
        # then, so the time is the program's to well under a millisecond, not to the next reading
        fd = os.pidfd_open(pid) if hasattr(os, "pidfd_open") else None
        due = time.perf_counter() + poll
        while True:
            done, status, ru = os.wait4(pid, os.WNOHANG)
            if done:
                break
            now = time.perf_counter()
            if now >= due:
                # reading smaps_rollup walks the program's page tables (tens of milliseconds for a GiB
                # of 4 KiB pages) on another core: the next reading waits long enough that reading
                # takes at most READ_SHARE of the time
                peak = max(peak, _anon_huge(pid))
                readings += 1
                took = time.perf_counter() - now
                due = now + max(poll, took / READ_SHARE)
            wait = max(0.0, due - time.perf_counter())
            if fd is None:
                time.sleep(min(wait, poll))
            else:
                select.select([fd], [], [], wait)
    except BaseException:  # Ctrl-C (or anything else): the child's whole group goes too
        _stop_surely(pid)
        _stop_marked(token)
        raise
    finally:
        if fd is not None:
            os.close(fd)
    seconds = time.perf_counter() - t0
    left = _stop_marked(token, group=pid)
    return Run(thp, seconds, ru.ru_minflt, ru.ru_majflt, peak, os.waitstatus_to_exitcode(status), readings, tuple(left))


def _stop_marked(token: str, group: int | None = None) -> list[str]:
    """Stop the processes that carry the run's mark (what the program started, wherever it went),
    and those left in the program's process group ``group`` (its pid, the program reaped: a process
    that cleared its environment); their names. A Ctrl-C meanwhile starts it again and is raised
    once they are stopped."""
    interrupted = False
    while True:
        try:
            left = procs.stop(lambda now: procs.carrying(token, now) + (procs.in_group(group, now) if group else []))
            break
        except KeyboardInterrupt:
            interrupted = True
    if interrupted:
        raise KeyboardInterrupt
    return left


class _Deferred:
    """While open, Ctrl-C (SIGINT), and SIGTERM and SIGHUP where :func:`measure` turns them into
    Ctrl-C, are noted in ``got`` instead of raising KeyboardInterrupt; in the main thread only (the
    only one Python raises it in), elsewhere it does nothing."""

    def __init__(self):
        self.got = False
        self.old = {}
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, *ENDING):
                h = signal.getsignal(sig)
                if h is _ended or (sig == signal.SIGINT and h is not signal.SIG_IGN):
                    self.old[sig] = signal.signal(sig, self._note)

    def _note(self, signum, frame) -> None:
        self.got = True

    def close(self) -> None:
        for sig, h in self.old.items():
            signal.signal(sig, h)
        self.old = {}


#: signals that would end pagesim and leave the running program behind: while :func:`measure`
#: runs they stop the program as Ctrl-C does
ENDING = (signal.SIGTERM, signal.SIGHUP)


def _ended(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def _stop(pid: int, at_once: bool = False) -> None:
    """Stop the child's process group (Ctrl-C, then SIGKILL after 2 s) and reap the child. Another
    Ctrl-C meanwhile sends SIGKILL at once (a child that ignores SIGINT would otherwise be left)."""
    held = _Deferred()
    try:
        _stop_group(pid, (lambda: True) if at_once else (lambda: held.got))
    finally:
        held.close()


def _stop_surely(pid: int) -> None:
    """:func:`_stop`, again with SIGKILL at once if a Ctrl-C lands before it holds Ctrl-C back."""
    at_once = False
    while True:
        try:
            _stop(pid, at_once)
            return
        except KeyboardInterrupt:
            at_once = True


def _stop_group(pid: int, hurry) -> None:
    """SIGINT to the child's group, SIGKILL after 2 s (at once when ``hurry()``), the child reaped,
    then SIGKILL to what is left in its group (what the program started)."""
    for sig in (signal.SIGINT, signal.SIGKILL):
        try:
            os.killpg(pid, sig)
        except (ProcessLookupError, PermissionError):
            break
        if _reaped(pid, time.monotonic() + 2, (lambda: False) if sig == signal.SIGKILL else hurry):
            break
    else:
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _reaped(pid: int, end: float, hurry) -> bool:
    """Whether the child ended (and was reaped) before ``end``, or before ``hurry()`` turned true."""
    while time.monotonic() < end and not hurry():
        try:
            if os.waitpid(pid, os.WNOHANG)[0]:
                return True
        except ChildProcessError:
            return True
        time.sleep(0.01)
    return False


def measure(command: list, repeat: int = 3, poll: float = 0.02, output=subprocess.DEVNULL, progress=None) -> Measurement:
    """``repeat`` pairs of runs of ``command`` (a list: the program and its arguments), THP off
    then on, interleaved. ``progress(i, run)`` is called after each run. A KeyboardInterrupt
    stops the running child and returns what ran, with ``interrupted`` set."""
    if not sys.platform.startswith("linux"):
        raise OSError(f"pagesim measure needs Linux (prctl and /proc); this is {sys.platform}")
    if not command or not command[0]:
        raise ValueError("give the program to run after --: pagesim measure -- CMD [ARG ...]")
    res = Measurement(list(command), thp_mode=thp_mode(), poll=poll)
    before = {}
    if threading.current_thread() is threading.main_thread():
        for sig in ENDING:  # only where the signal would end pagesim (its default action)
            if signal.getsignal(sig) is signal.SIG_DFL:
                before[sig] = signal.signal(sig, _ended)
    try:
        for i in range(repeat):
            for thp in (False, True):
                r = run_once(list(command), thp, poll, output)
                res.runs.append(r)
                if progress is not None:
                    progress(i, r)
    except KeyboardInterrupt:
        res.interrupted = True
    finally:
        for sig, h in before.items():
            signal.signal(sig, h)
    return res
