"""Your machine: real page-fault counts from the running Linux kernel, beside the simulation's.

``compare_faults`` maps an anonymous region, with or without ``MADV_HUGEPAGE``, touches it
sequentially (one write per 4 KiB page) or at random offsets, and reads the minor-fault count from
``getrusage`` (of the touching thread, RUSAGE_THREAD, so other threads of a Jupyter kernel do not
count) before and after the touch. It simulates the same region and the same touches with
pagesim and returns both counts. With transparent huge pages a fault maps a whole 2 MiB page only
in a 2 MiB-aligned range lying wholly inside the mapping; the rest is 4 KiB pages. So the region
starts ``offset`` bytes past a 2 MiB boundary (the mapping is over-allocated and the part wanted
used), and ``MADV_HUGEPAGE`` is given for the region alone: the kernel splits the mapping there,
so the region's edges are the edges of its VMA, as they are for an mmap of that size.
"""

from __future__ import annotations

import ctypes
import mmap
import os
import resource
import sys
from dataclasses import dataclass

import numpy as np

from .._kernels.chase import scatter_counted
from ..core.check import check_bool, check_choice, check_int, check_seed
from ..core.units import format_size, parse_size
from ..engine.simulate import simulate
from ..model.layout import Layout, Region

THP_PATH = "/sys/kernel/mm/transparent_hugepage/enabled"
BASE_PAGE = 4096
MAX_TOUCHES = 1 << 24  # random writes of compare_faults: their offsets and the simulation's addresses are held in memory
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
    #: where the region starts past a 2 MiB boundary, in bytes
    offset: int = 0
    #: 2 MiB pages the simulation maps (whole aligned 2 MiB ranges of the region that were touched)
    simulated_huge_pages: int = 0

    @property
    def equal(self) -> bool:
        return self.real_faults == self.simulated_faults

    def __str__(self):
        kind = "THP (MADV_HUGEPAGE)" if self.thp else "4 KiB pages (MADV_NOHUGEPAGE)"
        where = f" starting {format_size(self.offset)} past a 2M boundary" if self.offset else ""
        huge = ""
        if self.thp:
            real = "?" if self.huge_pages_mapped is None else f"{self.huge_pages_mapped}"
            huge = f"; 2M pages: kernel {real}, simulated {self.simulated_huge_pages}"
        return (
            f"{format_size(self.size)}{where} {self.pattern} touch, {kind}: real minor faults {self.real_faults:,}, "
            f"simulated {self.simulated_faults:,} ({'equal' if self.equal else 'DIFFERENT'}){huge}"
        )


class _Rusage(ctypes.Structure):
    """``struct rusage`` (getrusage(2)): two timevals, then fourteen longs."""

    _fields_ = [("ru_utime", ctypes.c_long * 2), ("ru_stime", ctypes.c_long * 2)] + [
        (name, ctypes.c_long)
        for name in ("maxrss", "ixrss", "idrss", "isrss", "minflt", "majflt", "nswap", "inblock", "oublock", "msgsnd", "msgrcv", "nsignals", "nvcsw", "nivcsw")
    ]


_LONG = np.dtype(f"i{ctypes.sizeof(ctypes.c_long)}")
_MINFLT = _Rusage.minflt.offset // _LONG.itemsize  # ru_minflt's index in a buffer of longs
_WHO = getattr(resource, "RUSAGE_THREAD", resource.RUSAGE_SELF)  # the touching thread only, where Linux offers it
_INTS = tuple(np.dtype(f"{k}{n}") for k in "iu" for n in (1, 2, 4, 8))  # native order: what the kernel indexes with
_NUMBERS = _INTS + (np.dtype("f4"), np.dtype("f8"))  # and what it writes


def touch_faults(buf: np.ndarray, idx: np.ndarray, vals: np.ndarray) -> int:
    """Write ``buf[idx[k]] = vals[k]`` for every k and return the minor faults the touching thread
    took doing it. The counter is read by compiled code on both sides of the loop
    (``scatter_counted``), so no interpreter object is made between the readings: a fresh page of
    the interpreter's heap, the garbage collector or another thread of a Jupyter kernel cannot add
    a fault to the count. ``idx`` and ``vals`` are read once before (a page of theirs nothing has
    touched yet faults then, not in the count), so the count is that of ``buf``'s pages alone.
    ``buf``, ``idx`` and ``vals``: 1-D numpy arrays in native byte order, ``buf`` writeable and of
    integers, float32 or float64, ``vals`` of the same dtype (one value per index), ``idx`` of
    integers, every one inside ``buf``."""
    for name, a, allowed in (("buf", buf, _NUMBERS), ("idx", idx, _INTS), ("vals", vals, None)):
        if not isinstance(a, np.ndarray) or isinstance(a, np.ma.MaskedArray):
            raise TypeError(f"{name} must be a 1-D numpy array, got {type(a).__name__}")
        if a.ndim != 1:
            raise ValueError(f"{name} must be a 1-D numpy array, got one of shape {a.shape}")
        if allowed is not None and a.dtype not in allowed:
            names = "native-order integers" if name == "idx" else "native-order integers, float32 or float64"
            raise TypeError(f"{name} has dtype {a.dtype.str}: it must hold {names}")
    if vals.dtype != buf.dtype:
        raise TypeError(f"vals has dtype {vals.dtype.str}: it must be buf's ({buf.dtype.str}), so no value is converted on the way")
    if not buf.flags.writeable:
        raise ValueError("buf is read-only: the touches write into it")
    if idx.shape != vals.shape:
        raise ValueError(f"vals has {vals.size} values for {idx.size} indices in idx: one value per index")
    if idx.size:
        lo, hi = int(idx.min()), int(idx.max())
        if lo < 0 or hi >= buf.size:
            raise ValueError(f"idx holds {lo if lo < 0 else hi}, outside buf's indices 0..{buf.size - 1}")
        np.count_nonzero(vals)  # every page of vals read once before the count (idx's: by min and max)
    n = ctypes.sizeof(_Rusage) // _LONG.itemsize
    before, after = np.zeros(n, dtype=_LONG), np.zeros(n, dtype=_LONG)
    if scatter_counted(buf, idx, vals, _WHO, before, after) != 0:  # compiled code: no errno reaches ctypes
        raise OSError(f"getrusage({_WHO}) failed while counting the faults of a first touch")
    return int(after[_MINFLT] - before[_MINFLT])


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


def smaller_thp_sizes() -> list[int]:
    """Multi-size THP (Linux 6.8+): sizes below 2 MiB the kernel may use in a MADV_HUGEPAGE region
    (their ``hugepages-<size>kB/enabled`` is 'always', 'madvise', or 'inherit' with THP enabled)."""
    top = thp_mode()
    out = []
    root = os.path.dirname(THP_PATH)
    try:
        names = os.listdir(root)
    except OSError:
        return out
    for d in names:
        if not (d.startswith("hugepages-") and d.endswith("kB")):
            continue
        try:
            text = open(os.path.join(root, d, "enabled")).read()
        except OSError:
            continue
        mode = next((w.strip("[]") for w in text.split() if w.startswith("[")), "never")
        size = int(d[len("hugepages-") : -2]) << 10
        if size < HUGE and (mode in ("always", "madvise") or (mode == "inherit" and top in ("always", "madvise"))):
            out.append(size)
    return sorted(out)


def why_not(thp: bool, partial: bool = False) -> str | None:
    """None if the comparison can run here; otherwise the reason it cannot. ``partial``: the region
    has 2 MiB ranges that are not wholly inside it (a size or offset not a multiple of 2 MiB)."""
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
        small = smaller_thp_sizes() if partial else []
        if small:
            return (
                f"multi-size THP is enabled for {', '.join(map(format_size, small))}: the kernel may back the part of the "
                "region outside whole 2 MiB ranges with those, which pagesim does not model"
            )
    return None


def why_not_both() -> str | None:
    """None if 4 KiB pages and THP can both be compared here; otherwise the first reason not."""
    return why_not(False) or why_not(True)


def anon_huge_kib(start: int, end: int) -> int | None:
    """AnonHugePages of the mapping holding [start, end), from /proc/self/smaps, read only as far as
    that mapping (the kernel writes smaps as it is read: all of it, 700-800 mappings in a notebook's
    kernel, took 9 ms; a new mapping is usually among the first)."""
    try:
        with open("/proc/self/smaps") as f:
            inside = False
            for ln in f:
                head = ln.split()[0] if ln.strip() else ""
                if "-" in head and all(c in "0123456789abcdef-" for c in head):
                    lo, hi = (int(x, 16) for x in head.split("-"))
                    inside = lo <= start and end <= hi
                elif inside and ln.startswith("AnonHugePages:"):
                    return int(ln.split()[1])
    except OSError:
        return None
    return None


def whole_huge(n: int) -> int:
    """``n`` bytes rounded up to whole 2 MiB blocks."""
    return -(-int(n) // HUGE) * HUGE


def aligned_mapping(span: int, thp: bool) -> tuple[mmap.mmap, int, int]:
    """An anonymous mapping holding ``span`` bytes that start on a 2 MiB boundary, all of it advised
    MADV_HUGEPAGE (``thp``) or MADV_NOHUGEPAGE: (the mapping, the offset of the aligned part in it,
    that part's address)."""
    mm = mmap.mmap(-1, span + HUGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    base = ctypes.addressof(ctypes.c_char.from_buffer(mm))
    off = (-base) % HUGE
    mm.madvise(mmap.MADV_HUGEPAGE if thp else getattr(mmap, "MADV_NOHUGEPAGE", mmap.MADV_NORMAL), 0, span + HUGE)
    return mm, off, base + off


def close_mapping(mm: mmap.mmap) -> None:
    """Unmap ``mm``; where a view of it outlived its use, the mapping is closed when collected."""
    try:
        mm.close()
    except BufferError:
        pass


def check_region(size, offset=0) -> tuple[int, int]:
    """(size, offset) in bytes as :func:`compare_faults` takes them, or a ValueError naming the bad one."""
    n = parse_size(size, "size")
    if n <= 0 or n % BASE_PAGE:
        raise ValueError(f"size={size!r} must be a positive multiple of 4K (the base page), for example '3M' or '2M+4K'")
    if n > (4 << 30):
        raise ValueError(f"size={format_size(n)} is larger than the 4 GiB this comparison allows (it is really touched)")
    off_in = parse_size(offset, "offset")
    if off_in % BASE_PAGE or off_in >= HUGE:
        raise ValueError(f"offset={offset!r} must be a multiple of 4K below 2M: where the region starts past a 2 MiB boundary")
    return n, off_in


def compare_faults(size="64M", thp: bool = False, pattern: str = "sequential", touches: int = 4096, seed: int = 0, offset=0) -> FaultComparison:
    """Touch a fresh anonymous mapping of ``size`` for real and in the simulator; return both fault counts.

    size: a multiple of 4 KiB, up to 4 GiB ("3M", "17M", "2M+4K"); offset: where the region starts
    past a 2 MiB boundary, a multiple of 4 KiB below 2 MiB. pattern: 'sequential' writes one byte
    in every 4 KiB page in order; 'random' writes ``touches`` random bytes. Raises RuntimeError
    with the reason where the comparison cannot run.
    """
    n, off_in = check_region(size, offset)
    check_choice("pattern", pattern, ("sequential", "random"))
    thp = check_bool("thp", thp)
    seed = check_seed(seed)
    if pattern == "random":
        touches = check_int("touches", touches, 1, MAX_TOUCHES, "random writes")
    reason = why_not(thp, partial=bool(n % HUGE or off_in))
    if reason:
        raise RuntimeError(reason)

    total = n + off_in + HUGE
    mm = mmap.mmap(-1, total, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    try:
        base = ctypes.addressof(ctypes.c_char.from_buffer(mm))
        off = (-base) % HUGE + off_in
        mm.madvise(getattr(mmap, "MADV_NOHUGEPAGE", mmap.MADV_NORMAL), 0, total)
        if thp:  # the region alone: its own VMA, whose edges are the region's
            mm.madvise(mmap.MADV_HUGEPAGE, off, n)
        arr = np.frombuffer(mm, dtype=np.uint8)
        if pattern == "sequential":
            offsets = np.arange(0, n, BASE_PAGE, dtype=np.int64)
        else:
            offsets = np.random.default_rng(seed).integers(0, n, touches, dtype=np.int64)
        idx = offsets + off
        ones = np.ones(idx.size, dtype=np.uint8)
        real = touch_faults(arr, idx, ones)
        huge_kib = anon_huge_kib(base + off, base + off + n) if thp else 0
        del arr
    finally:
        close_mapping(mm)
    start = (1 << 40) + off_in  # 1 TiB: 2 MiB-aligned, so the region sits off_in past a boundary as for real
    page = HUGE if thp else BASE_PAGE
    lay = Layout((Region(start, n, page, "[ anon ]", policy="thp" if thp else "base"),))
    ds = simulate("zen4", addresses=(start + offsets).astype(np.uint64), layout=lay, seed=seed, specialize=False)
    return FaultComparison(
        size=n,
        thp=thp,
        pattern=pattern,
        touches=int(offsets.size),
        real_faults=real,
        simulated_faults=int(ds["faults"].sum()),
        page_size=page,
        thp_mode=thp_mode() or "none",
        huge_pages_mapped=None if huge_kib is None else huge_kib // 2048,
        offset=off_in,
        simulated_huge_pages=int(ds["pages_touched"].sel(page_size=HUGE)),
    )
