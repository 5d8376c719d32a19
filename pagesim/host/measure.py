"""Run a real program on this machine with transparent huge pages off and on, interleaved and
repeated, and report what changed: the time ratio with its spread, minor faults, and the most
AnonHugePages the program reached.

- **THP off**: the child is started with ``prctl(PR_SET_THP_DISABLE, 1)``, which it and its own
  children inherit (across ``execve``): the kernel gives it no transparent huge page, whatever
  ``madvise`` it or its libraries call (numpy advises huge pages for large arrays).
- **THP on**: glibc's ``glibc.malloc.hugetlb=1`` tunable (glibc 2.35+) in ``GLIBC_TUNABLES``, so
  malloc advises huge pages for the memory it maps; with the system's THP mode ``always`` every
  anonymous mapping may get them, with ``madvise`` only what is advised (by malloc or the program).
- Runs alternate off, on, off, on, ... (``repeat`` pairs) so that a change in the machine's load
  falls on both; the ratio is each pair's time off / time on (above 1: THP faster), reported as
  the median of the pairs with their minimum and maximum.
- Minor and major faults come from the child's resource usage (``wait4``); AnonHugePages from its
  ``/proc/PID/smaps_rollup``, read every ``poll`` seconds while it runs (its own mappings: a
  program that starts others is measured in its first process only).

Ctrl-C stops the child (its whole process group) and reports the pairs completed so far.
"""

from __future__ import annotations

import ctypes
import os
import signal
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field

from ..core.units import format_size
from .linux import thp_mode

PR_SET_THP_DISABLE = 41  # linux/prctl.h
TUNABLE = "glibc.malloc.hugetlb=1"


@dataclass(frozen=True)
class Run:
    """One run of the program."""

    thp: bool
    seconds: float
    minor_faults: int
    major_faults: int
    anon_huge_peak: int  # bytes of AnonHugePages, the most seen while it ran
    returncode: int


@dataclass
class Measurement:
    """Every run, in the order they ran, and what the machine offered."""

    command: list
    runs: list = field(default_factory=list)
    thp_mode: str | None = None
    interrupted: bool = False

    def pairs(self) -> list[tuple[Run, Run]]:
        """(off, on) pairs, in order (a run left alone by an interruption is dropped)."""
        off = [r for r in self.runs if not r.thp]
        on = [r for r in self.runs if r.thp]
        return list(zip(off, on))

    def ratios(self) -> list[float]:
        """Each pair's time with THP off / time with THP on (above 1: THP faster)."""
        return [a.seconds / b.seconds for a, b in self.pairs() if b.seconds > 0]

    def summary(self) -> str:
        lines = [f"pagesim measure: {' '.join(map(str, self.command))}"]
        lines.append(f"  THP mode here: {self.thp_mode or 'none (not Linux, or no THP)'}; off = prctl(PR_SET_THP_DISABLE), on = GLIBC_TUNABLES={TUNABLE}")
        pairs = self.pairs()
        if not pairs:
            return "\n".join(lines + ["  no complete pair of runs" + (" (interrupted)" if self.interrupted else "")])
        for label, thp in (("THP off", False), ("THP on ", True)):
            rs = [r for p in pairs for r in p if r.thp == thp]
            t = [r.seconds for r in rs]
            faults = statistics.median([r.minor_faults for r in rs])
            huge = max(r.anon_huge_peak for r in rs)
            lines.append(
                f"  {label}: {statistics.median(t):.3f} s median ({min(t):.3f}..{max(t):.3f}), minor faults {faults:,.0f}, "
                f"AnonHugePages up to {format_size(huge) if huge else '0'}"
            )
        rat = self.ratios()
        lines.append(
            f"  time off / on: {statistics.median(rat):.3f} median of {len(rat)} pairs ({min(rat):.3f}..{max(rat):.3f}; above 1: THP faster)"
            + (" (interrupted: the pairs run so far)" if self.interrupted else "")
        )
        bad = sorted({r.returncode for r in self.runs if r.returncode != 0})
        if bad:
            lines.append(f"  the program exited with status {', '.join(map(str, bad))} in some runs: its times may not compare")
        return "\n".join(lines)


def _disable_thp() -> None:
    """In the child before exec: no transparent huge pages for it and its children; its own
    process group, so Ctrl-C reaches pagesim alone and pagesim stops the whole group."""
    _own_group()
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) != 0:
        os._exit(126)


def _own_group() -> None:
    """In the child before exec: its own process group, and Ctrl-C no longer held back (pagesim
    holds it while it starts the child)."""
    os.setpgrp()
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


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
    """Run ``command`` once with THP off or on; ``output``: where its stdout and stderr go."""
    env = dict(os.environ)
    if thp:
        old = env.get("GLIBC_TUNABLES", "")
        env["GLIBC_TUNABLES"] = f"{old}:{TUNABLE}" if old else TUNABLE
    t0 = time.perf_counter()
    # Ctrl-C is held back while the child starts, so that it arrives below, where the child is stopped
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        p = subprocess.Popen(command, env=env, preexec_fn=_own_group if thp else _disable_thp, stdout=output, stderr=output)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
    peak = 0
    try:
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            peak = max(peak, _anon_huge(p.pid))
            time.sleep(poll)
    except BaseException:  # Ctrl-C (or anything else): the child's whole group goes too
        _stop(p)
        raise
    seconds = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    return Run(thp, seconds, ru.ru_minflt, ru.ru_majflt, peak, p.returncode)


def _stop(p: subprocess.Popen) -> None:
    for sig in (signal.SIGINT, signal.SIGKILL):
        try:
            os.killpg(p.pid, sig)
        except (ProcessLookupError, PermissionError):
            return
        try:
            p.wait(timeout=2)
            return
        except subprocess.TimeoutExpired:
            continue


def measure(command: list, repeat: int = 3, poll: float = 0.02, output=subprocess.DEVNULL, progress=None) -> Measurement:
    """``repeat`` pairs of runs of ``command`` (a list: the program and its arguments), THP off
    then on, interleaved. ``progress(i, run)`` is called after each run. A KeyboardInterrupt
    stops the running child and returns what ran, with ``interrupted`` set."""
    if not sys.platform.startswith("linux"):
        raise OSError(f"pagesim measure needs Linux (prctl and /proc); this is {sys.platform}")
    if not command:
        raise ValueError("give the program to run after --: pagesim measure -- CMD [ARG ...]")
    res = Measurement(list(command), thp_mode=thp_mode())
    try:
        for i in range(repeat):
            for thp in (False, True):
                r = run_once(list(command), thp, poll, output)
                res.runs.append(r)
                if progress is not None:
                    progress(i, r)
    except KeyboardInterrupt:
        res.interrupted = True
    return res
