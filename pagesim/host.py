"""Your machine: real page-fault counts from the running Linux kernel, beside the simulation's.

``compare_faults`` maps an anonymous region, with or without ``MADV_HUGEPAGE``, touches it
sequentially (one write per 4 KiB page) or at random offsets, and reads the minor-fault count from
``getrusage`` (of the touching thread, RUSAGE_THREAD, so other threads of a Jupyter kernel do not
count) before and after the touch. It simulates the same region and the same touches with
pagesim and returns both counts. With transparent huge pages a fault in a 2 MiB-aligned range maps
a whole 2 MiB page, so the region is aligned to 2 MiB (the mapping is over-allocated by 2 MiB and
the aligned part used).
"""
from __future__ import annotations

import ctypes
import mmap
import os
import resource
import sys
from dataclasses import dataclass

import numpy as np

from .units import format_size, parse_size

THP_PATH = "/sys/kernel/mm/transparent_hugepage/enabled"
BASE_PAGE = 4096
HUGE = 2 << 20


@dataclass(frozen=True)
class FaultComparison:
    size: int
    thp: bool
    pattern: str
    touches: int
    real_faults: int
    simulated_faults: int
    page_size: int
    thp_mode: str
    huge_pages_mapped: int | None

    @property
    def equal(self) -> bool:
        return self.real_faults == self.simulated_faults

    def __str__(self):
        kind = "THP (MADV_HUGEPAGE)" if self.thp else "4 KiB pages (MADV_NOHUGEPAGE)"
        return (
            f"{format_size(self.size)} {self.pattern} touch, {kind}: real minor faults {self.real_faults:,}, "
            f"simulated {self.simulated_faults:,} ({'equal' if self.equal else 'DIFFERENT'})"
        )


def thp_mode() -> str | None:
    """'always', 'madvise' or 'never' on Linux with transparent huge pages; None where there are none."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        text = open(THP_PATH).read()
    except OSError:
        return None
    for word in text.split():
        if word.startswith("["):
            return word.strip("[]")
    return None


def why_not(thp: bool) -> str | None:
    """None if the comparison can run here; otherwise the reason it cannot."""
    if not sys.platform.startswith("linux"):
        return f"real fault counts need Linux; this is {sys.platform}"
    if os.sysconf("SC_PAGE_SIZE") != BASE_PAGE:
        return f"this kernel's base page is {os.sysconf('SC_PAGE_SIZE')} bytes; the comparison is written for 4 KiB"
    if thp:
        mode = thp_mode()
        if mode is None:
            return "transparent huge pages are not available on this kernel"
        if mode == "never":
            return f"transparent huge pages are disabled ({THP_PATH} says 'never')"
        if not hasattr(mmap, "MADV_HUGEPAGE"):
            return "this Python's mmap module has no MADV_HUGEPAGE"
    return None


def _anon_huge_kib(start: int, end: int) -> int | None:
    """AnonHugePages of the mapping holding [start, end), from /proc/self/smaps."""
    try:
        lines = open("/proc/self/smaps").read().splitlines()
    except OSError:
        return None
    inside = False
    for ln in lines:
        head = ln.split()[0] if ln else ""
        if "-" in head and all(c in "0123456789abcdef-" for c in head):
            lo, hi = (int(x, 16) for x in head.split("-"))
            inside = lo <= start and end <= hi
        elif inside and ln.startswith("AnonHugePages:"):
            return int(ln.split()[1])
    return None


def compare_faults(size="64M", thp: bool = False, pattern: str = "sequential", touches: int = 4096, seed: int = 0) -> FaultComparison:
    """Touch a fresh anonymous mapping of ``size`` for real and in the simulator; return both fault counts.

    pattern: 'sequential' writes one byte in every 4 KiB page in order; 'random' writes ``touches``
    random bytes. Raises RuntimeError with the reason where the comparison cannot run.
    """
    n = parse_size(size, "size")
    if n <= 0 or n % HUGE:
        raise ValueError(f"size={size!r} must be a positive multiple of 2 MiB, so THP and 4 KiB runs map the same region")
    if n > (4 << 30):
        raise ValueError(f"size={format_size(n)} is larger than the 4 GiB this comparison allows (it is really touched)")
    if pattern not in ("sequential", "random"):
        raise ValueError(f"pattern={pattern!r} is not allowed: use 'sequential' or 'random'")
    reason = why_not(thp)
    if reason:
        raise RuntimeError(reason)
    from .layout import Layout
    from .simulate import simulate

    mm = mmap.mmap(-1, n + HUGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    try:
        base = ctypes.addressof(ctypes.c_char.from_buffer(mm))
        off = (-base) % HUGE
        mm.madvise(mmap.MADV_HUGEPAGE if thp else getattr(mmap, "MADV_NOHUGEPAGE", mmap.MADV_NORMAL), 0, n + HUGE)
        arr = np.frombuffer(mm, dtype=np.uint8)
        if pattern == "sequential":
            offsets = np.arange(0, n, BASE_PAGE, dtype=np.int64)
        else:
            offsets = np.random.default_rng(seed).integers(0, n, touches, dtype=np.int64)
        idx = offsets + off
        target = arr[off : off + n : BASE_PAGE] if pattern == "sequential" else arr
        who = getattr(resource, "RUSAGE_THREAD", resource.RUSAGE_SELF)  # this thread only, where Linux offers it
        resource.getrusage(who)  # every object the touch needs exists before the first reading
        r0 = resource.getrusage(who).ru_minflt
        if pattern == "sequential":
            target[:] = 1
        else:
            target[idx] = 1
        r1 = resource.getrusage(who).ru_minflt
        huge_kib = _anon_huge_kib(base + off, base + off + n) if thp else 0
        del arr, target
    finally:
        try:
            mm.close()
        except BufferError:  # a view outlived the mapping: close it when collected
            pass
    page = HUGE if thp else BASE_PAGE
    start = 1 << 40
    lay = Layout.single(n, page, start=start, name="[ anon ]")
    ds = simulate("zen4", addresses=(start + offsets).astype(np.uint64), layout=lay, seed=seed, specialize=False)
    return FaultComparison(
        size=n, thp=thp, pattern=pattern, touches=int(offsets.size), real_faults=int(r1 - r0),
        simulated_faults=int(ds["faults"].sum()), page_size=page, thp_mode=thp_mode() or "none",
        huge_pages_mapped=None if huge_kib is None else huge_kib // 2048,
    )
