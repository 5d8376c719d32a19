"""Layout: the address space as regions (start, length, page size), like ``pmap -sx``.

A heap can use 4 MiB pages while everything else uses 8 KiB (Solaris MPSS); a 16 MiB buffer can be
one 16 MiB hugetlb page. Regions never overlap, and each starts and ends on its page size, except
a THP or MPSS region: it asks for huge pages but starts and ends on the machine's base page (a
3 MiB ``MADV_HUGEPAGE`` mapping), and the OS stage (``pagesim.system.paging``) backs its partial huge
pages with base pages.
"""

from __future__ import annotations

import bisect
import json
from dataclasses import dataclass

import numpy as np

from .._kernels.regions import distinct_blocks
from ..core.check import check_choice, check_int, check_result
from ..core.units import format_size, parse_address, parse_page_size, parse_size

MAX_PAGES = 1 << 28  # simulated pages across all regions: the page-state arrays take one byte each
# regions of a layout made to cover addresses (a trace, addresses=): each costs about a kilobyte
# through a run (the Region, the engine's arrays, the result's records); sparse addresses need one
# region per block they touch, so this bounds that memory (about 256 MiB)
MAX_REGIONS = 1 << 18
POLICIES = ("base", "thp", "mpss", "hugetlb")  # how the OS backs a region (see pagesim.system.paging)
DEFAULT_BASE = 1 << 40  # where generated workloads place their first array (1 TiB, aligned to 1 GiB)


def _beyond_range(n: str, start: int, end: int) -> ValueError:
    """The error for a region that does not end below 2**63 (``n`` names it)."""
    return ValueError(
        f"{n} start={start:#x} ends at {end:#x}: pagesim simulates regions that end below 2**63 = {1 << 63:#x} "
        f"(its kernels hold addresses as signed 64-bit integers), whatever the machine's va_bits"
    )


@dataclass(frozen=True)
class Region:
    start: int
    length: int
    page_size: int
    name: str = ""
    mode: str = "rw---"
    #: pages one fault maps: the aligned group of this many pages around the faulting one (Linux
    #: fault-around; POWER's 64 KiB emulation mode maps 16 contiguous 4 KiB pages per fault)
    fault_around: int = 1
    #: how the OS backs the region: 'base', 'thp', 'mpss' (a huge page of ``page_size`` for each
    #: aligned huge-page range wholly inside the region, when the allocator has one; base pages
    #: elsewhere) or 'hugetlb' (pool). See pagesim.system.paging.
    policy: str = "base"

    def __post_init__(self):
        n = f"region {self.name!r}" if self.name else "region"
        fa = check_int(f"{n} fault_around", self.fault_around, 1, 1 << 16, " pages")
        if fa & (fa - 1):
            raise ValueError(f"{n} fault_around={fa!r} must be a power of two from 1 to 65536 pages")
        object.__setattr__(self, "fault_around", fa)
        check_choice(f"{n} policy", self.policy, POLICIES)
        if not (isinstance(self.mode, str) and len(self.mode) == 5 and all(c in (f, "-") for c, f in zip(self.mode, "rwxsR"))):
            raise ValueError(f"{n} mode={self.mode!r} is not a mode as pmap -x shows it: five characters, r w x s R or - in that order (e.g. 'rw---', 'r-x--')")
        object.__setattr__(self, "start", parse_address(self.start, f"{n} start"))
        object.__setattr__(self, "length", parse_size(self.length, f"{n} length"))
        object.__setattr__(self, "page_size", parse_page_size(self.page_size, f"{n} page_size"))
        if self.length <= 0:
            raise ValueError(f"{n} length={self.length} must be positive")
        if self.start + self.length >= 1 << 63:
            raise _beyond_range(n, self.start, self.start + self.length)
        if self.policy != "base" and self.fault_around != 1:
            raise ValueError(
                f"{n} fault_around={self.fault_around} with policy={self.policy!r}: fault-around applies to policy='base' regions only; use fault_around=1"
            )
        if self.policy in ("thp", "mpss"):
            return  # starts and ends on the base page: Layout.check_machine checks it against the machine
        if self.start % self.page_size:
            raise ValueError(f"{n} start={self.start:#x} is not aligned to its page size {format_size(self.page_size)}")
        if self.length % self.page_size:
            raise ValueError(
                f"{n} length={self.length} is not a multiple of its page size {format_size(self.page_size)}; use Region.covering() to round it out"
            )

    @classmethod
    def _checked_already(cls, start: int, length: int, page_size: int, name: str, mode: str = "rw---", fault_around: int = 1, policy: str = "base") -> "Region":
        """A Region from values its caller has already checked as ``__post_init__`` would (ints,
        page size, alignment, policy), without checking them again: a layout covering a trace can
        have hundreds of regions, and the checks cost ~5 us each."""
        if start + length >= 1 << 63:
            raise _beyond_range(f"region {name!r}", start, start + length)
        r = object.__new__(cls)
        r.__dict__.update(start=start, length=length, page_size=page_size, name=name, mode=mode, fault_around=fault_around, policy=policy)
        return r

    @property
    def end(self) -> int:
        return self.start + self.length

    @property
    def pages(self) -> int:
        """Pages of ``page_size`` the region spans (a partial huge page of a THP region counts as one)."""
        return -(-self.length // self.page_size)

    @classmethod
    def covering(cls, start, length, page_size, name: str = "", mode: str = "rw---", fault_around: int = 1) -> "Region":
        """The smallest page-aligned region holding [start, start+length), as mmap rounds a request."""
        p = parse_page_size(page_size)
        s = parse_address(start, "start")
        e = s + parse_size(length, "length")
        s0 = s - s % p
        e0 = -(-e // p) * p
        return cls(s0, e0 - s0, p, name, mode, fault_around)


@dataclass(frozen=True)
class Layout:
    regions: tuple[Region, ...]

    def __post_init__(self):
        regs = tuple(self.regions)
        for r in regs:
            if not isinstance(r, Region):
                raise TypeError(f"Layout regions must be Region objects, got {type(r).__name__}")
        if not regs:
            raise ValueError("a Layout needs at least one region")
        regs = tuple(sorted(regs, key=lambda r: r.start))
        for a, b in zip(regs, regs[1:]):
            if b.start < a.end:
                raise ValueError(f"regions overlap: {a.name or 'region'} [{a.start:#x}, {a.end:#x}) and {b.name or 'region'} [{b.start:#x}, {b.end:#x})")
        _check_total(sum(r.pages for r in regs))
        object.__setattr__(self, "regions", regs)

    def split_at(self, bounds) -> "Layout":
        """This layout with each region cut at the addresses of ``bounds`` strictly inside it that
        are multiples of its page size (the pieces keep its name, the later ones with ``@start``)."""
        cuts = sorted({int(b) for b in bounds})
        out = []
        for r in self.regions:
            within = cuts[bisect.bisect_right(cuts, r.start) : bisect.bisect_left(cuts, r.end)]
            at = [b for b in within if b % r.page_size == 0]
            if not at:
                out.append(r)
                continue
            for i, (s, e) in enumerate(zip([r.start] + at, at + [r.end])):
                out.append(Region(s, e - s, r.page_size, r.name if i == 0 else f"{r.name} @{s:#x}", r.mode, r.fault_around, r.policy))
        return Layout(tuple(out))

    @classmethod
    def single(cls, length, page_size, start=DEFAULT_BASE, name: str = "[ anon ]", fault_around: int = 1) -> "Layout":
        return cls((Region.covering(start, length, page_size, name, fault_around=fault_around),))

    @classmethod
    def covering_addresses(cls, addresses, page_size, granule="2M", name: str = "[ trace ]", range_error=None, check_top=None) -> "Layout":
        """Regions covering every address in ``addresses``: granule-aligned blocks, merged when
        adjacent. An address of 2**63 or above (negative, for a signed dtype) raises a ValueError
        naming the first one; ``range_error(i)`` makes it (``Addresses.range_error``). Before any
        region is made, ``check_top(end)`` is given where the covering would end (a machine's
        check that names the first address it cannot hold: ``engine.simulate.check_covered``)."""
        p = parse_page_size(page_size)
        g = max(parse_page_size(granule, "granule"), p)
        a = np.asarray(addresses)
        if a.size == 0:
            raise ValueError("addresses is empty: nothing to lay out")
        signed = a.dtype.kind == "i"
        if a.dtype.kind in "iu" and a.dtype.itemsize == 8:
            a = a.reshape(-1).view(np.uint64)  # no copy (negative int64 wrap, as a conversion would)
        else:
            a = a.reshape(-1).astype(np.uint64)

        shift = g.bit_length() - 1
        b = distinct_blocks(a, shift)  # sorted, distinct
        if int(b[-1]) >= (1 << 63) >> shift:  # an address of 2**63 or above: found by the blocks, no pass of its own
            i = int((a.view(np.int64) < 0).argmax())
            if range_error is not None:
                raise range_error(i)
            v = int(a[i])
            raise ValueError(f"addresses[{i}]={v - (1 << 64) if signed else hex(v)} is out of range: pagesim simulates addresses from 0 to 2**63 - 1")
        if check_top is not None:
            check_top((int(b[-1]) + 1) << shift)
        return cls.covering_blocks(b, g, p, "addresses", name)

    @classmethod
    def covering_blocks(cls, blocks, block_size: int, page_size: int, what: str, name: str = "[ trace ]") -> "Layout":
        """Regions over the sorted, distinct block numbers ``blocks`` (uint64, each ``block_size``
        bytes, a multiple of ``page_size``), adjacent blocks merged. A footprint of more than
        MAX_PAGES pages, or blocks apart in more than MAX_REGIONS places, is refused before any
        region is made: the error names ``what`` was laid out, its footprint and the limit."""
        b, g, p = blocks, block_size, page_size
        pages = int(b.size) * (g // p)
        desc = f"{what}: its footprint is {b.size:,} distinct {format_size(g)} blocks ({_bytes(int(b.size) * g)})"
        if pages > MAX_PAGES:
            raise ValueError(
                f"{desc}, {pages:,} pages of {format_size(p)}; pagesim simulates at most {MAX_PAGES:,} pages (one byte of state each): use a larger page size"
            )
        cut = np.flatnonzero(np.diff(b) != 1) + 1  # where a run of adjacent blocks ends
        if cut.size + 1 > MAX_REGIONS:
            raise ValueError(
                f"{desc} in {cut.size + 1:,} places apart from one another: its layout would need {cut.size + 1:,} regions; "
                f"pagesim lays out at most {MAX_REGIONS:,} regions to cover addresses (each costs about a kilobyte): "
                "a larger page size joins blocks into fewer regions"
            )
        first = b[np.concatenate(([0], cut))]
        last = b[np.concatenate((cut - 1, [b.shape[0] - 1]))]
        return cls._from_runs(first.tolist(), (last - first + np.uint64(1)).tolist(), g, p, name, ordered=True)

    @classmethod
    def from_blocks(cls, blocks, block_size: int, page_size: int, name: str = "[ trace ]") -> "Layout":
        """Regions over the sorted block numbers ``blocks`` (each ``block_size`` bytes), adjacent
        blocks merged into one region of ``page_size`` pages."""
        blocks = [int(b) for b in blocks]
        starts, counts, run_start, prev = [], [], blocks[0], blocks[0]
        for b in blocks[1:] + [None]:
            if b is not None and b == prev + 1:
                prev = b
                continue
            starts.append(run_start)
            counts.append(prev - run_start + 1)
            if b is not None:
                run_start = prev = b
        return cls._from_runs(starts, counts, block_size, page_size, name)

    @classmethod
    def _from_runs(cls, starts, counts, block_size, page_size, name: str, ordered: bool = False) -> "Layout":
        """Region i covers blocks ``starts[i]`` to ``starts[i] + counts[i] - 1`` (Python ints).
        ``ordered``: the runs are known sorted, apart and not adjacent (covering_addresses)."""
        # the first region is checked in full; the others differ only in start and length, both
        # multiples of block_size: when that is a multiple of the page size they pass the same checks
        first = Region(starts[0] * block_size, counts[0] * block_size, page_size, f"{name} 0")
        p = first.page_size
        trusted = type(block_size) is int and block_size > 0 and block_size % p == 0 and min(starts) >= 0 and min(counts) > 0
        make = Region._checked_already if trusted else Region
        regions = (first,) + tuple(make(s * block_size, n * block_size, p, f"{name} {i}") for i, (s, n) in enumerate(zip(starts[1:], counts[1:]), 1))
        if not (ordered and trusted):
            return cls(regions)
        _check_total(sum(counts) * (block_size // p))
        layout = object.__new__(cls)
        object.__setattr__(layout, "regions", regions)
        return layout

    def check_machine(self, machine) -> None:
        limit = 1 << min(machine.va_bits, 63)
        base = machine.base_page
        sizes_ok = set()  # page sizes already checked (the check depends on the size alone)
        regs = self.regions
        end = regs[-1].end  # regions are sorted and never overlap: the last one ends highest
        if end <= limit and all(r.policy == "base" for r in regs):
            for r in regs:  # then only a page size can be wrong: name the first region that has it
                if r.page_size not in sizes_ok:
                    machine.check_page_size(r.page_size, f"region {r.name!r} page_size")
                    sizes_ok.add(r.page_size)
            return
        for r in regs:
            if r.page_size not in sizes_ok:
                machine.check_page_size(r.page_size, f"region {r.name!r} page_size")
                sizes_ok.add(r.page_size)
            if r.policy != "base" and r.page_size <= base:
                larger = ", ".join(format_size(p) for p in machine.page_sizes if p > base) or "none on this machine"
                raise ValueError(
                    f"region {r.name!r} page_size={format_size(r.page_size)} with policy={r.policy!r}: a {r.policy} region's "
                    f"page_size is the huge page it asks for, larger than the base page {format_size(base)} "
                    f"of machine {machine.name!r}; allowed: {larger} (or policy='base' for base pages)"
                )
            if r.policy in ("thp", "mpss") and (r.start % base or r.length % base):
                raise ValueError(
                    f"region {r.name!r} [{r.start:#x}, {r.end:#x}) with policy={r.policy!r} does not start and end on "
                    f"the base page {format_size(base)} of machine {machine.name!r}"
                )
            if r.end > limit:
                raise ValueError(
                    f"region {r.name!r} ends at {r.end:#x}, beyond the {min(machine.va_bits, 63)}-bit virtual address space "
                    f"of machine {machine.name!r} (addresses must be below {limit:#x})"
                )

    @property
    def total_pages(self) -> int:
        return sum(r.pages for r in self.regions)

    def pages_by_size(self) -> dict[int, int]:
        out: dict[int, int] = {}
        for r in self.regions:
            out[r.page_size] = out.get(r.page_size, 0) + r.pages
        return out

    def pmap(self, rss_pages=None, title: str = "pagesim") -> str:
        """A ``pmap -sx``-like table. ``rss_pages`` (optional) gives touched pages per region."""
        lines = [f"{title}", " Address          Kbytes        RSS   Pgsz Mode   Mapped File"]
        tk = tr = 0
        for i, r in enumerate(self.regions):
            kb = r.length // 1024
            rss = kb if rss_pages is None else int(rss_pages[i]) * r.page_size // 1024
            tk += kb
            tr += rss
            lines.append(f" {r.start:016X} {kb:>9} {rss:>10} {format_size(r.page_size):>6} {r.mode:<6} {r.name}")
        lines.append(" ---------------- --------- ----------")
        lines.append(f" total Kb         {tk:>9} {tr:>10}")
        return "\n".join(lines)

    @classmethod
    def from_records(cls, records) -> "Layout":
        return cls(tuple(Region(**r) for r in records))

    def to_records(self) -> list[dict]:
        return [
            {"name": r.name, "start": r.start, "length": r.length, "page_size": r.page_size, "mode": r.mode, "fault_around": r.fault_around, "policy": r.policy}
            for r in self.regions
        ]


def _bytes(n: int) -> str:
    """``n`` bytes in the largest binary unit that keeps it at 1 or more: '1.89 TiB'."""
    for unit, shift in (("EiB", 60), ("PiB", 50), ("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >> shift:
            return f"{n / (1 << shift):.3g} {unit}"
    return f"{n} B"


def _check_total(total: int) -> None:
    if total > MAX_PAGES:
        raise ValueError(
            f"layout maps {total} pages; pagesim simulates at most {MAX_PAGES} pages (2**28, one byte of state each): "
            "use a larger page size or a smaller working set"
        )


def pmap(ds, title: str | None = None) -> str:
    """The ``pmap -sx`` view of a simulate() result: the backing actually given, with RSS."""
    check_result("pmap", ds, ("layout", "machine", "workload_label"), {"region_pages_touched": ("region",)})
    lay = Layout.from_records(json.loads(ds.attrs["layout"]))
    rss = ds["region_pages_touched"].values
    if len(rss) != len(lay.regions):
        raise ValueError(f"pmap: ds has {len(rss)} of its layout's {len(lay.regions)} regions (a result cut along 'region'): pass the whole result")
    return lay.pmap(rss_pages=rss, title=title or f"{ds.attrs['machine']}: {ds.attrs['workload_label']} (simulated)")
