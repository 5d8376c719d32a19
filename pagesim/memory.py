"""Physical memory: a buddy allocator over base frames, fragmentation scenarios, a hugetlb pool,
and what the OS actually gives a region (huge pages, or the fallback to base pages).

Allocation policy (modelling assumption, deterministic): an order-k request takes the
lowest-addressed free block of the smallest order >= k and splits it, keeping the upper halves
free; a freed block merges with its buddy while the buddy is free. With full merging, an order-k
request succeeds exactly when some 2**k-frame aligned block is entirely free (the property
tests/test_memory.py checks against a brute-force scan).

Scenarios (``fragment``): a stated fraction of memory is held by pinned base pages, either
'scattered' uniformly at random over memory (the POWER8 study's stressed environment: a
background thread holding 95% of memory with normal pages, 003_e083a135b5a1afda.txt §VI), or
'caged': kernel pages confined to one contiguous range at the bottom of memory (Solaris's kernel
cage, ``kernel_cage_enable``, 002_7166aff63bc805c7.txt). ``movable`` pages may be migrated by
compaction; pinned ones may not.
"""

from __future__ import annotations

import copy
import heapq

import numpy as np

from ._check import check_choice, check_fraction, check_int, check_seed
from .units import format_size, log2, parse_page_size, parse_size

MAX_FRAMES = 1 << 24  # 64 GiB of 4 KiB frames: the frame-state array takes one byte a frame
FREE, PINNED, MOVABLE, USED = 0, 1, 2, 3


class OutOfMemory(ValueError):
    """Raised when a request cannot be met (a hugetlb reservation, or base pages with memory full)."""


class PhysicalMemory:
    """``ram`` bytes in frames of ``frame`` bytes (the machine's base page), managed by a buddy
    allocator whose largest block is ``max_block`` bytes."""

    def __init__(self, ram="8G", frame="4K", max_block="16M"):
        self.ram = parse_size(ram, "ram")
        self.frame = parse_page_size(frame, "frame")
        self.max_block = parse_page_size(max_block, "max_block")
        if self.max_block < self.frame:
            raise ValueError(f"max_block={format_size(self.max_block)} is smaller than frame={format_size(self.frame)}")
        if self.ram % self.frame or self.ram <= 0:
            raise ValueError(f"ram={ram!r} must be a positive multiple of the frame size {format_size(self.frame)}")
        self.nframes = self.ram // self.frame
        if self.nframes > MAX_FRAMES:
            raise ValueError(
                f"ram={format_size(self.ram)} in {format_size(self.frame)} frames is {self.nframes} frames; "
                f"pagesim models at most {MAX_FRAMES} (2**24): use a larger frame or less memory"
            )
        self.max_order = log2(self.max_block // self.frame)
        self.state = np.zeros(self.nframes, dtype=np.uint8)
        self._heads: dict[int, int] = {}  # start frame of a free block -> its order
        self._heaps: list[list[int]] = [[] for _ in range(self.max_order + 1)]
        self.hugetlb_pool: dict[int, list[int]] = {}  # page size -> reserved block starts
        self.migrated = 0
        self._rebuild_free_lists()

    # ------------------------------------------------------------------ free lists
    def _push(self, start: int, order: int):
        self._heads[start] = order
        heapq.heappush(self._heaps[order], start)

    def _maximal_blocks(self) -> list:
        """For each order, the ascending start frames of the largest aligned all-free blocks of that
        order (a free frame belongs to exactly one of them), computed with numpy."""
        out = [np.zeros(0, dtype=np.int64)] * (self.max_order + 1)
        free = self.state == FREE
        covered = np.zeros(self.nframes, dtype=bool)
        for order in range(self.max_order, -1, -1):
            size = 1 << order
            n = self.nframes // size
            if n == 0:
                continue
            cov = covered[: n * size].reshape(n, size)
            blocks = free[: n * size].reshape(n, size).all(axis=1) & ~cov.any(axis=1)
            out[order] = np.flatnonzero(blocks) * size
            cov[blocks] = True
        return out

    def _rebuild_free_lists(self):
        """Free lists from the frame states: the largest aligned all-free blocks. Each order's starts
        come out ascending, which is a valid heap (the very list that pushing them one by one in that
        order gives)."""
        self._heads = {}
        self._heaps = []
        for order, starts in enumerate(self._maximal_blocks()):
            starts = starts.tolist()
            self._heaps.append(starts)
            self._heads.update(dict.fromkeys(starts, order))

    def __deepcopy__(self, memo):
        """A copy sharing nothing mutable: the free lists hold only ints, so copying the containers is
        enough (the generic deepcopy visited every one of millions of entries)."""
        m = copy.copy(self)
        m.state = self.state.copy()
        m._heads = dict(self._heads)
        m._heaps = [list(h) for h in self._heaps]
        m.hugetlb_pool = {p: list(v) for p, v in self.hugetlb_pool.items()}
        memo[id(self)] = m
        return m

    def order_of(self, page_size) -> int:
        p = parse_page_size(page_size)
        if p < self.frame or p > self.max_block:
            raise ValueError(
                f"page_size={format_size(p)} cannot come from this allocator: frames are {format_size(self.frame)}, "
                f"blocks at most {format_size(self.max_block)}"
            )
        return log2(p // self.frame)

    def alloc(self, order: int, owner: int = USED) -> int | None:
        """Start frame of a newly allocated 2**order-frame block, or None if there is none."""
        for j in range(order, self.max_order + 1):
            h = self._heaps[j]
            while h and self._heads.get(h[0]) != j:
                heapq.heappop(h)  # stale entry
            if not h:
                continue
            start = heapq.heappop(h)
            del self._heads[start]
            while j > order:
                j -= 1
                self._push(start + (1 << j), j)
            self.state[start : start + (1 << order)] = owner
            return start
        return None

    def free(self, start: int, order: int):
        self.state[start : start + (1 << order)] = FREE
        while order < self.max_order:
            buddy = start ^ (1 << order)
            if self._heads.get(buddy) != order:
                break
            del self._heads[buddy]
            start = min(start, buddy)
            order += 1
        self._push(start, order)

    def free_frames(self) -> int:
        return int(np.count_nonzero(self.state == FREE))

    def largest_free_block(self) -> int:
        """Bytes of the largest free block."""
        orders = [o for o in self._heads.values()]
        return (1 << max(orders)) * self.frame if orders else 0

    def free_blocks(self, page_size) -> int:
        """How many free aligned blocks of ``page_size`` there are (what a huge-page request can get)."""
        k = self.order_of(page_size)
        return sum(1 << (o - k) for o in self._heads.values() if o >= k)

    # ------------------------------------------------------------------ scenarios
    def fragment(self, held: float, placement: str = "scattered", movable: float = 0.0, seed: int = 0) -> "PhysicalMemory":
        """A copy with ``held`` of memory taken by background base pages, ``movable`` of those
        migratable, placed 'scattered' at random or 'caged' at the bottom of memory."""
        held = check_fraction("held", held, open_high=True, what=": the share of memory background pages hold")
        movable = check_fraction("movable", movable, what=" of the held pages")
        check_choice("placement", placement, ("scattered", "caged"))
        seed = check_seed(seed)
        m = copy.deepcopy(self)
        free_idx = np.flatnonzero(m.state == FREE)
        n = int(round(held * m.nframes))
        if n > free_idx.size:
            raise OutOfMemory(f"held={held} needs {n} frames but only {free_idx.size} are free")
        rng = np.random.default_rng(seed)
        chosen = rng.choice(free_idx, size=n, replace=False) if placement == "scattered" else free_idx[:n]
        kinds = np.full(n, PINNED, dtype=np.uint8)
        kinds[rng.random(n) < movable] = MOVABLE
        m.state[chosen] = kinds
        m._rebuild_free_lists()
        return m

    def reserve_hugetlb(self, count: int, page_size) -> "PhysicalMemory":
        """A copy with ``count`` pages of ``page_size`` reserved for hugetlbfs. A reservation that
        cannot be met fails here, at reservation time, not at fault time."""
        count = check_int("count", count, 0, self.nframes, " pages")
        p = parse_page_size(page_size)
        k = self.order_of(p)
        if count * p > self.ram:
            raise OutOfMemory(f"a hugetlb pool of {count} x {format_size(p)} = {format_size(count * p)} is larger than memory ({format_size(self.ram)})")
        m = copy.deepcopy(self)
        got = []
        for _ in range(count):
            b = m.alloc(k)
            if b is None:
                raise OutOfMemory(
                    f"hugetlb reservation of {count} x {format_size(p)} failed after {len(got)}: "
                    f"no free aligned {format_size(p)} block is left (memory is fragmented)"
                )
            got.append(b)
        m.hugetlb_pool.setdefault(p, []).extend(got)
        return m

    def compact(self, order: int, cycles_per_page: int = 0) -> int | None:
        """Make one aligned 2**order block free by migrating movable pages out of it, if a block
        holds no pinned or in-use frame and the movable pages fit elsewhere. Returns the number of
        pages migrated, or None if compaction cannot help."""
        size = 1 << order
        n = self.nframes // size
        st = self.state[: n * size].reshape(n, size)
        ok = ~((st == PINNED) | (st == USED)).any(axis=1)
        total_free = self.free_frames()  # unchanged until a block is compacted (then we return)
        for b in np.flatnonzero(ok).tolist():
            moving = np.flatnonzero(st[b] == MOVABLE)
            if moving.size == 0:
                continue
            outside_free = total_free - int(np.count_nonzero(st[b] == FREE))
            if outside_free < moving.size:
                continue
            # Take the block's free frames out of circulation and move each movable page elsewhere.
            # Allocating single frames one by one from freshly rebuilt free lists takes the frames of
            # the order-0 blocks in address order, then those of the order-1 blocks, and so on (a
            # split block hands out its frames in address order, its pieces being smaller than any
            # other block left): so the destinations are the first free frames in that order.
            self.state[b * size : (b + 1) * size][st[b] == FREE] = USED
            starts = self._maximal_blocks()
            dst = np.concatenate([(s_[:, None] + np.arange(1 << o)).ravel() for o, s_ in enumerate(starts)])
            if dst.size < moving.size:  # cannot happen: the free frames were counted above
                raise RuntimeError(f"internal error: compaction found {dst.size} free frames for {moving.size} movable pages of block {b}")
            self.state[dst[: moving.size]] = MOVABLE
            self.state[b * size : (b + 1) * size] = FREE
            self._rebuild_free_lists()
            self.migrated += int(moving.size)
            return int(moving.size)
        return None

    def describe(self) -> str:
        used = {name: int(np.count_nonzero(self.state == v)) for name, v in (("free", FREE), ("pinned", PINNED), ("movable", MOVABLE), ("in use", USED))}
        parts = ", ".join(f"{k} {format_size(v * self.frame)}" for k, v in used.items() if v)
        largest = self.largest_free_block()
        return f"{format_size(self.ram)} in {format_size(self.frame)} frames: {parts}; largest free block {format_size(largest) if largest else 'none'}"
