"""Physical memory: a buddy allocator over base frames, fragmentation scenarios, a hugetlb pool,
and what the OS actually gives a region (huge pages, or the fallback to base pages).

Allocation policy (modelling assumption, deterministic): an order-k request takes the
lowest-addressed free block of the smallest order >= k and splits it, keeping the upper halves
free; a freed block merges with its buddy while the buddy is free. With full merging, an order-k
request succeeds exactly when some 2**k-frame aligned block is entirely free (the property
tests/system/test_memory.py checks against a brute-force scan).

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

from ..core.check import check_choice, check_fraction, check_int, check_seed
from ..core.units import format_size, log2, parse_page_size, parse_size

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
        self._reset_compaction()
        self._rebuild_free_lists()

    def _reset_compaction(self):
        """Compaction's scanners back at the ends of memory (see :meth:`compact`)."""
        self._migrate_pfn = 0  # the migrate scanner has passed every frame below this
        self._free_pfn = self.nframes  # the free scanner has passed every frame from this up
        self._scanners_met = False

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
        if p < self.frame:
            allowed = f"{format_size(self.frame)}..{format_size(self.max_block)}"
            raise ValueError(f"page_size={format_size(p)} is smaller than this memory's frames ({format_size(self.frame)}): allowed {allowed}")
        if p > self.max_block:
            raise ValueError(
                f"page_size={format_size(p)} exceeds the allocator's max_block={format_size(self.max_block)}, its largest block: "
                f"make PhysicalMemory('{format_size(self.ram)}', frame='{format_size(self.frame)}', max_block='{format_size(p)}')"
            )
        return log2(p // self.frame)

    def alloc(self, order: int, owner: int = USED) -> int | None:
        """Start frame of a newly allocated 2**order-frame block, or None if there is none."""
        order = check_int("order", order, 0, self.max_order, f" (blocks of 2**order frames, at most max_block={format_size(self.max_block)})")
        if isinstance(owner, bool) or owner not in (PINNED, MOVABLE, USED):
            raise ValueError(f"owner={owner!r} is not a frame state a block can be given: PINNED ({PINNED}), MOVABLE ({MOVABLE}) or USED ({USED})")
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
        """Give back the 2**order-frame block at frame ``start``: a block :meth:`alloc` handed out
        (or background pages), every frame of it in use. Anything else would hand a frame out
        twice, so it is refused."""
        order = check_int("order", order, 0, self.max_order, f" (blocks of 2**order frames, at most max_block={format_size(self.max_block)})")
        size = 1 << order
        start = check_int("start", start, 0, self.nframes - size, f" (the first frame of a block of {size} frames in {self.nframes} frames)")
        if start % size:
            raise ValueError(f"start={start} is not the start of a block of 2**{order} frames: it must be a multiple of {size}")
        if (self.state[start : start + size] == FREE).any():
            first = start + int(np.flatnonzero(self.state[start : start + size] == FREE)[0])
            raise ValueError(f"free(start={start}, order={order}): frame {first} is already free (a block is freed once, with the order it was allocated with)")
        self.state[start : start + size] = FREE
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
        m._reset_compaction()
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

    def compact(self, order: int) -> int | None:
        """Free one aligned 2**order block by migrating its movable pages, as Linux's compaction
        (mm/compaction.c) does. Returns the number of pages migrated, or None if compaction cannot
        free a block.

        Modelled on Linux: two scanners cross one zone (here all of memory). The migrate scanner
        walks up from the zone's start looking for pages to move out; the free scanner walks down
        from the zone's end collecting free frames to move them to; both keep their positions from
        one compaction to the next (the zone's cached migrate and free positions), and compaction
        ends when they meet (COMPACT_COMPLETE). A block the migrate scanner has passed is never a
        destination and a frame the free scanner has passed is never a source, so no page moves
        twice: every page migrated is one a freed block held before compaction began. As in direct
        compaction, an aligned block of the requested order that holds a page that cannot move
        (pinned or in use) is skipped whole.

        Modelling assumptions: a block's pages move only when all of them fit in the free frames
        between the block's end and the free scanner (Linux migrates in batches and may move some
        pages of a block it then cannot finish; the model moves none); the free scanner takes the
        highest free frames first; once the scanners have met, no further block is freed (Linux
        resets the positions and, after deferring compaction, may start a new pass, which the
        model does not); the free scanner does not revisit frames freed above it later.
        """
        order = check_int("order", order, 0, self.max_order)
        if self._scanners_met:
            return None
        size = 1 << order
        first = -(-self._migrate_pfn // size)
        for b in range(first, self.nframes // size):
            lo, hi = b * size, (b + 1) * size
            if hi > self._free_pfn:
                break
            blk = self.state[lo:hi]
            if ((blk == PINNED) | (blk == USED)).any():
                self._migrate_pfn = hi
                continue
            moving = np.flatnonzero(blk == MOVABLE)
            if moving.size == 0:
                continue  # already free: nothing to compact, and the caller's allocation finds it
            dst = np.flatnonzero(self.state[hi : self._free_pfn] == FREE)
            if dst.size < moving.size:
                break  # the free scanner reaches this block before its pages fit: the scanners meet
            dst = dst[dst.size - moving.size :] + hi
            self.state[dst] = MOVABLE
            self.state[lo + moving] = FREE
            self._migrate_pfn = hi
            self._free_pfn = int(dst[0])
            self._rebuild_free_lists()
            self.migrated += int(moving.size)
            return int(moving.size)
        self._scanners_met = True
        return None

    def describe(self) -> str:
        used = {name: int(np.count_nonzero(self.state == v)) for name, v in (("free", FREE), ("pinned", PINNED), ("movable", MOVABLE), ("in use", USED))}
        parts = ", ".join(f"{k} {format_size(v * self.frame)}" for k, v in used.items() if v)
        largest = self.largest_free_block()
        return f"{format_size(self.ram)} in {format_size(self.frame)} frames: {parts}; largest free block {format_size(largest) if largest else 'none'}"
