"""Memory pressure: a RAM limit, reclaim by clock or LRU, swap-outs, and swap-ins as major faults.

``Ram`` states the limit and the costs; ``simulate(..., ram=Ram('64M'))`` runs this stage on the
backing layout (after the OS stage has decided which page sizes back each region) and adds
``minor_faults``, ``major_faults``, ``swap_outs``, ``reclaim_scans`` and ``resident_peak`` to the
Dataset, and a ``swap`` component to the modelled cycles. The model is in
``pagesim._kernels.pressure``.

Modelling simplifications, stated: every evicted page is written to swap (anonymous memory that
was touched is treated as dirty); a huge page is evicted and swapped in whole; an evicted page's
TLB entries are not shot down in the translation stage (its counters are those of the program
without pressure), so the swap cost is added beside them rather than through them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._kernels import pressure as P
from ..core.check import check_choice, check_int
from ..core.units import format_size, log2, parse_size
from ..model.layout import Layout

RECLAIM = ("clock", "lru")
MAX_PAGES = 1 << 26  # per page: 1 byte of size, 1 of state, and 1 + 4 (clock) or 8 (LRU) of order


@dataclass(frozen=True)
class Ram:
    """A RAM limit for the program's pages.

    limit: physical memory in bytes (or '512M', '8G').
    kernel: what the kernel keeps for itself, out of ``limit`` (default 64 MiB: a modelling
        assumption); the program's pages get ``limit - kernel``.
    reclaim: 'clock' (second chance) or 'lru'.
    swap_in_cycles / swap_out_cycles: cost of one major fault / one page written to swap (default
        300,000 cycles, about 100 us at 3 GHz, a solid-state swap device: modelling assumptions).
    """

    limit: int
    kernel: int = 64 << 20
    reclaim: str = "clock"
    swap_in_cycles: int = 300_000
    swap_out_cycles: int = 300_000

    def __post_init__(self):
        object.__setattr__(self, "limit", parse_size(self.limit, "ram limit"))
        object.__setattr__(self, "kernel", parse_size(self.kernel, "ram kernel"))
        check_choice("ram reclaim", self.reclaim, RECLAIM)
        if self.limit <= self.kernel:
            raise ValueError(
                f"ram limit={format_size(self.limit)} is not above the kernel's own {format_size(self.kernel)}: "
                "nothing would be left for the program (raise the limit or lower kernel=)"
            )
        for f in ("swap_in_cycles", "swap_out_cycles"):
            v = getattr(self, f)
            object.__setattr__(self, f, check_int(f"ram {f}", v, 0, 10**9, " cycles"))

    @property
    def available(self) -> int:
        return self.limit - self.kernel


def run(layout: Layout, chunks, ram: Ram) -> dict:
    """Replay the accesses against ``ram``; returns the counters."""
    if not isinstance(ram, Ram):
        raise TypeError(f"ram must be a pagesim Ram, got {type(ram).__name__}")
    regs = layout.regions
    pages = np.array([r.pages for r in regs], dtype=np.int64)
    total = int(pages.sum())
    if total > MAX_PAGES:
        raise ValueError(f"the layout maps {total} pages; the memory-pressure model handles at most {MAX_PAGES} (2**26)")
    biggest = max(r.page_size for r in regs)
    if biggest > ram.available:
        raise ValueError(
            f"ram limit={format_size(ram.limit)} leaves {format_size(ram.available)} for the program, less than one {format_size(biggest)} page of the layout"
        )
    base = np.zeros(len(regs), dtype=np.int64)
    base[1:] = np.cumsum(pages)[:-1]
    shifts = np.array([log2(r.page_size) for r in regs], dtype=np.int64)
    page_shift = np.repeat(shifts, pages).astype(np.uint8) if total else np.zeros(1, dtype=np.uint8)
    lru = ram.reclaim == "lru"
    state = np.zeros(max(total, 1), dtype=np.uint8)
    ref = np.zeros(max(total, 1) if not lru else 1, dtype=np.uint8)
    queue = np.zeros(total + 1 if not lru else 1, dtype=np.int32)
    prev = np.full(total + 1 if lru else 1, total if lru else 0, dtype=np.int32)
    nxt = np.full(total + 1 if lru else 1, total if lru else 0, dtype=np.int32)
    c = np.zeros(9, dtype=np.int64)
    c[P.LAST] = -1
    starts = np.array([r.start for r in regs], dtype=np.int64)
    ends = np.array([r.end for r in regs], dtype=np.int64)
    cfg = P.PressureConfig(starts, ends, base, shifts, page_shift, np.array([ram.available], dtype=np.int64), np.array([int(lru)], dtype=np.int64))
    ps = P.PressureState(state, ref, queue, prev, nxt, c)
    for addrs, _ in chunks:
        a = np.ascontiguousarray(addrs, dtype=np.uint64).view(np.int64)
        bad = P.pressure_chunk(a, cfg, ps)
        if bad >= 0:
            raise ValueError(f"address {int(a[bad]) & ((1 << 64) - 1):#x} lies outside every region of the layout")
    return {
        "minor_faults": int(c[P.MINOR]),
        "major_faults": int(c[P.MAJOR]),
        "swap_outs": int(c[P.SWAP_OUT]),
        "reclaim_scans": int(c[P.SCANS]),
        "resident_peak": int(c[P.PEAK]),
        "resident_end": int(c[P.USED]),
    }
