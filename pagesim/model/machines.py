"""Machines: immutable descriptions of one processor's address-translation hardware.

A :class:`Machine` lists the page sizes the processor supports, its TLB structures (level,
entries, ways, the page sizes each holds, replacement, latency), its page-table organisation
(:class:`Walker`: radix with page-walk caches, POWER hashed page table, SPARC TSB with software
refill, Itanium VHPT) and the cost model's parameters (:class:`Costs`). Presets are read from
``pagesim/data/machines.toml``; every figure there carries its source and every modelling
assumption is named in ``assumed``.

>>> import pagesim
>>> k8 = pagesim.machine("opteron-k8")
>>> k8.reach("4K", structure="L2 DTLB 4K")
2097152
>>> more = k8.add_structure(name="L2 DTLB 2M", level=2, side="data", entries=512, ways=4, sizes=["2M"])
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
import importlib.resources
from dataclasses import dataclass, field

from .._kernels import policies
from .._kernels.translate import MAX_CHAIN  # the kernel's limit, defined once there
from ..core.check import check_choice, check_int, warn
from ..core.units import format_size, is_power_of_two, log2, parse_address, parse_page_size, parse_size

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib

SIDES = ("data", "instr", "unified")
ACCESS_SIDES = ("data", "instr")  # what an access (or a reach) asks for


def _check_replacement(n: str, replacement, ways: int) -> None:
    """A replacement policy pagesim has, for a set of ``ways`` it allows."""
    check_choice(f"{n} replacement", replacement, REPLACEMENTS)
    why = policies.BY_NAME[replacement].allows(ways)
    if why:
        raise ValueError(f"{n}: replacement={replacement!r} with ways={ways}: {why}")


REPLACEMENTS = policies.NAMES  # one module each in pagesim/_kernels/policies
WALKERS = ("radix", "hashed", "tsb", "vhpt")
MAX_ENTRIES = 1 << 20  # a structure of more than a million entries is not a TLB
MAX_WAYS = 1024  # a lookup compares every way; the widest preset structure has 256 (POWER8's secondary D-ERAT)
MAX_LEVEL = 8
MAX_PAGE_SIZES = 15  # kernels pack the page-size index into 4 bits of a tag


def _sizes(name: str, values) -> tuple[int, ...]:
    if isinstance(values, (str, int)):
        values = [values]
    if isinstance(values, dict) or not hasattr(values, "__iter__"):
        raise TypeError(f"{name} must be page sizes (a list such as ['4K', '2M']), got {type(values).__name__} {values!r}")
    out = tuple(sorted({parse_page_size(v, name) for v in values}))
    return out


@dataclass(frozen=True)
class Structure:
    """One TLB-like structure: a set-associative cache whose lines are page translations.

    ``ways == entries`` is fully associative. ``sizes`` are the page sizes an entry can map;
    ``max_entry`` (optional) caps how much of a larger page one entry covers (Itanium 2's L1
    DTLB holds larger pages as 4K pieces). ``latency`` is the extra cycles charged when a lookup
    is satisfied here. ``programmable`` marks a structure whose page size is chosen per process
    (UltraSPARC III Cu's second 512-entry dTLB): it holds nothing until programmed.
    """

    name: str
    level: int
    side: str
    entries: int
    ways: int
    sizes: tuple[int, ...]
    replacement: str = "lru"
    latency: int = 0
    max_entry: int | None = None
    programmable: bool = False
    source: str = ""
    confidence: str = ""
    assumed: tuple[str, ...] = ()

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"structure name must be a non-empty string, got {self.name!r}")
        n = f"structure {self.name!r}"
        object.__setattr__(self, "level", check_int(f"{n} level", self.level, 1, MAX_LEVEL))
        check_choice(f"{n} side", self.side, SIDES)
        object.__setattr__(self, "entries", check_int(f"{n} entries", self.entries, 1, MAX_ENTRIES, " (a TLB larger than 2**20 entries is not modelled)"))
        object.__setattr__(self, "ways", check_int(f"{n} ways", self.ways, 1, MAX_WAYS, " (wider structures are searched way by way, too slowly to simulate)"))
        if self.entries % self.ways:
            raise ValueError(
                f"{n}: entries={self.entries} is not divisible by ways={self.ways}; entries must be sets x ways (ways == entries for fully associative)"
            )
        object.__setattr__(self, "sizes", _sizes(f"{n} sizes", self.sizes))
        if not self.sizes:
            raise ValueError(f"{n} sizes is empty: a structure must hold at least one page size")
        _check_replacement(n, self.replacement, self.ways)
        object.__setattr__(self, "latency", check_int(f"{n} latency", self.latency, 0, 100_000, " cycles"))
        if self.max_entry is not None:
            object.__setattr__(self, "max_entry", parse_page_size(self.max_entry, f"{n} max_entry"))
        object.__setattr__(self, "assumed", tuple(self.assumed))

    @property
    def sets(self) -> int:
        return self.entries // self.ways

    @property
    def fully_associative(self) -> bool:
        return self.ways == self.entries

    def holds(self, page_size: int) -> bool:
        return (not self.programmable) and page_size in self.sizes

    def entry_size(self, page_size: int) -> int:
        """Bytes one entry covers for a page of ``page_size``."""
        return page_size if self.max_entry is None else min(page_size, self.max_entry)

    def serves(self, kind: str) -> bool:
        return self.side == "unified" or self.side == kind

    def organisation(self) -> str:
        """Associativity and replacement, e.g. "4-way LRU", "fully assoc. PLRU"."""
        return ("fully assoc." if self.fully_associative else f"{self.ways}-way") + f" {self.replacement.upper()}"


@dataclass(frozen=True)
class PageWalkCache:
    """A paging-structure cache: it holds upper-level entries and lets a walk skip ``skip`` levels."""

    name: str
    skip: int
    entries: int
    ways: int
    replacement: str = "lru"
    source: str = ""
    assumed: tuple[str, ...] = ()

    def organisation(self) -> str:
        """Associativity and replacement, e.g. "8-way LRU"."""
        return ("fully assoc." if self.ways >= self.entries else f"{self.ways}-way") + f" {self.replacement.upper()}"

    def __post_init__(self):
        n = f"page-walk cache {self.name!r}"
        object.__setattr__(self, "skip", check_int(f"{n} skip", self.skip, 1, 6, " levels"))
        object.__setattr__(self, "entries", check_int(f"{n} entries", self.entries, 1, MAX_ENTRIES))
        object.__setattr__(self, "ways", check_int(f"{n} ways", self.ways, 1, MAX_WAYS, " (wider structures are searched way by way, too slowly to simulate)"))
        if self.entries % self.ways:
            raise ValueError(f"{n}: entries={self.entries} is not divisible by ways={self.ways}")
        _check_replacement(n, self.replacement, self.ways)
        object.__setattr__(self, "assumed", tuple(self.assumed))


MAX_REACH = 63  # a radix table's reach in bits: every address pagesim takes is below 2**63


@dataclass(frozen=True)
class Walker:
    """The page-table organisation a TLB miss consults.

    - ``radix``: levels of ``level_bits`` index bits (top level first) above a ``base_shift``-bit
      offset; a page of size 2**s is a leaf ``j`` levels up when s = base_shift + the sum of the
      lowest ``j`` level widths, and its walk takes (levels - j) references, fewer when a
      page-walk cache (``pwc``) hits. 1 to 6 levels of 1 to 20 bits, ``base_shift`` 10 to 20,
      reaching at most 63 bits in all.
    - ``hashed``: POWER hashed page table of ``hpt_ptegs`` groups of 8 entries; 1 reference when
      the entry sits in its primary group, 2 in its secondary group, 2 when it is not in the table
      (first touch, or evicted: then inserted, ``walks.hpt_insert``).
    - ``tsb``: SPARC software refill: trap, probe a direct-mapped TSB of ``tsb_entries`` per page
      size (1 reference), on a TSB miss walk the tables in software (``sw_walk_refs`` more).
    - ``vhpt``: Itanium short-format VHPT: 1 reference.

    ``walkers``: how many walks the hardware runs at once (1: one after the other). The translation
    counters do not depend on it; a cost model of independent accesses may overlap their walks up to
    it (:func:`pagesim.host.here.predict`).
    """

    kind: str
    level_bits: tuple[int, ...] = ()
    base_shift: int = 12
    pwc: tuple[PageWalkCache, ...] = ()
    tsb_entries: int = 0
    sw_walk_refs: int = 3
    hpt_ptegs: int = 0
    walkers: int = 1
    source: str = ""
    assumed: tuple[str, ...] = ()

    def __post_init__(self):
        check_choice("walker kind", self.kind, WALKERS)
        object.__setattr__(self, "walkers", check_int(f"{self.kind} walker walkers", self.walkers, 1, 64, " concurrent walks"))
        for name in ("level_bits", "pwc"):
            v = getattr(self, name)
            if isinstance(v, (str, bytes, dict)) or not hasattr(v, "__iter__"):
                raise TypeError(f"{self.kind} walker {name} must be a sequence, got {type(v).__name__} {v!r}")
        object.__setattr__(self, "level_bits", tuple(self.level_bits))
        for p in self.pwc:
            if not isinstance(p, (PageWalkCache, dict)):
                raise TypeError(f"{self.kind} walker pwc entries must be PageWalkCache objects (or dicts of their fields), got {type(p).__name__} {p!r}")
        object.__setattr__(self, "pwc", tuple(p if isinstance(p, PageWalkCache) else PageWalkCache(**p) for p in self.pwc))
        object.__setattr__(self, "assumed", tuple(self.assumed))
        if self.kind == "radix":
            if not 1 <= len(self.level_bits) <= 6:
                raise ValueError(f"radix walker level_bits={self.level_bits!r}: give 1 to 6 levels")
            object.__setattr__(self, "level_bits", tuple(check_int("radix walker level_bits entry", b, 1, 20) for b in self.level_bits))
            object.__setattr__(self, "base_shift", check_int("radix walker base_shift", self.base_shift, 10, 20))
            reach = self.base_shift + sum(self.level_bits)
            if reach > MAX_REACH:
                raise ValueError(
                    f"radix walker base_shift={self.base_shift} + level_bits={self.level_bits!r} reach {reach} bits: "
                    f"at most {MAX_REACH} (addresses are below 2**63)"
                )
            for p in self.pwc:
                if p.skip >= len(self.level_bits):
                    raise ValueError(f"page-walk cache {p.name!r} skip={p.skip} must be below the number of levels ({len(self.level_bits)})")
            skips = [p.skip for p in self.pwc]
            if len(set(skips)) != len(skips):
                raise ValueError(f"radix walker: two page-walk caches skip the same number of levels: {skips}")
        elif self.pwc:
            raise ValueError(f"page-walk caches apply to radix walkers only, not kind={self.kind!r}")
        if self.kind == "tsb":
            object.__setattr__(self, "tsb_entries", check_int("tsb walker tsb_entries", self.tsb_entries, 1, 1 << 24))
            if not is_power_of_two(self.tsb_entries):
                raise ValueError(f"tsb walker tsb_entries={self.tsb_entries} must be a power of two (the TSB is indexed by page-number bits)")
            object.__setattr__(self, "sw_walk_refs", check_int("tsb walker sw_walk_refs", self.sw_walk_refs, 1, 8))
        if self.kind == "hashed":
            object.__setattr__(self, "hpt_ptegs", check_int("hashed walker hpt_ptegs", self.hpt_ptegs, 1, 1 << 26))
            if not is_power_of_two(self.hpt_ptegs):
                raise ValueError(f"hashed walker hpt_ptegs={self.hpt_ptegs} must be a power of two")

    def leaf_refs(self, page_size: int) -> int:
        """References of a walk for a page of ``page_size`` with no page-walk-cache hit."""
        page_size = parse_page_size(page_size)
        if self.kind == "radix":
            s = log2(page_size)
            acc = self.base_shift
            n = len(self.level_bits)
            for j in range(n):
                if s == acc:
                    return n - j
                acc += self.level_bits[n - 1 - j]
            allowed = ", ".join(format_size(1 << x) for x in self.radix_leaf_shifts())
            raise ValueError(f"page_size={format_size(page_size)} is not a leaf of this radix table: allowed {allowed}")
        if self.kind == "hashed":
            return 1
        if self.kind == "tsb":
            return 1
        return 1

    def radix_leaf_shifts(self) -> list[int]:
        out, acc = [], self.base_shift
        for b in reversed(self.level_bits):
            out.append(acc)
            acc += b
        return out

    def pwc_shift(self, skip: int) -> int:
        """VA bits above the levels a page-walk cache entry lets a walk skip."""
        return self.base_shift + sum(self.level_bits[skip:])


@dataclass(frozen=True)
class Costs:
    """Cycles the cost model charges. All are modelling assumptions unless ``source`` says otherwise."""

    walk_ref_cycles: int = 30
    walk_base_cycles: int = 0
    slb_miss_cycles: int = 100
    fault_cycles: int = 2000
    zero_cycles_per_kib: int = 100
    migrate_cycles_per_page: int = 3000
    source: str = ""
    assumed: tuple[str, ...] = ("walk_ref_cycles", "walk_base_cycles", "slb_miss_cycles", "fault_cycles", "zero_cycles_per_kib", "migrate_cycles_per_page")

    def __post_init__(self):
        for f in ("walk_ref_cycles", "walk_base_cycles", "slb_miss_cycles", "fault_cycles", "zero_cycles_per_kib", "migrate_cycles_per_page"):
            object.__setattr__(self, f, check_int(f"costs {f}", getattr(self, f), 0, 10_000_000, " cycles"))
        object.__setattr__(self, "assumed", tuple(self.assumed))


def host_region_triples(regions) -> list:
    """Host regions as given ((start, end, host page) triples, or {(start, end): host page}) as a
    list of triples, or an error naming the form."""
    form = "host_regions must be (start, end, host page) triples or {(start, end): host page}"
    if isinstance(regions, dict):
        bad = [k for k in regions if not (isinstance(k, (tuple, list)) and len(k) == 2)]
        if bad:
            raise ValueError(f"{form}; got the key(s) {bad!r}")
        return [(k[0], k[1], v) for k, v in regions.items()]
    if isinstance(regions, (str, bytes)):
        raise TypeError(f"{form}, got {regions!r}")
    try:
        items = list(regions)
    except TypeError:
        raise TypeError(f"{form}, got {type(regions).__name__} {regions!r}") from None
    for r in items:
        if not isinstance(r, (tuple, list)) or len(r) != 3:
            raise ValueError(f"{form}; each is (start, end, host page), got {r!r}")
    return [tuple(r) for r in items]


def guest_ram_bytes(value, walker: "Walker", least: int, why: str, name: str = "guest_ram", note: str = "") -> int:
    """``value`` as the guest's memory in bytes: a power of two from ``least`` (``why``: what sets
    it) to the host table's reach (``walker``) and at most 1 PiB, or an error naming ``name`` (and
    ``note``, as ' (the default)')."""
    ram = parse_size(value, name)
    reach = walker.base_shift + sum(walker.level_bits)
    high = min(1 << 50, 1 << reach)
    if high < least:
        raise ValueError(
            f"host_walker: its table reaches {format_size(high)} of guest-physical memory, less than {format_size(least)} ({why}): "
            "give a host walker with more levels"
        )
    if not is_power_of_two(ram) or not least <= ram <= high:
        top = f"the host table's {reach}-bit reach" if reach < 50 else "the most pagesim models"
        raise ValueError(f"{name}={value!r}{note}: give a power of two from {format_size(least)} ({why}) to {format_size(high)} ({top})")
    return ram


def check_host_walker(walker) -> None:
    """A host's table is radix: anything else (another kind of Walker, a dict, a name) is refused."""
    if not isinstance(walker, Walker) or walker.kind != "radix":
        raise ValueError(f"host walker must be a radix Walker (the host's table over guest-physical addresses), got {walker!r}")


@dataclass(frozen=True)
class Host:
    """The hypervisor's side of a virtualised machine: nested (two-dimensional) paging.

    The guest's page tables map guest-virtual to guest-physical addresses; the host's radix table
    (``walker``, over guest-physical addresses) maps guest-physical to host-physical ones in pages of
    ``page_size``. A TLB entry caches guest-virtual to host-physical at the smaller of the guest's
    and the host's page (:meth:`Machine.virtualised` caps every structure's entries at the host
    page). A TLB miss walks the guest's table, and each guest table entry it reads is at a
    guest-physical address the host translates first; so is the data's guest-physical address at
    the end: without walk caches, 4 guest levels and 4 host levels make 4 x (4 + 1) + 4 = 24
    references. A translation of a guest-physical address looks up the nested TLB (``nested_tlb``
    entries, ``nested_tlb_ways`` ways, LRU; 0 entries: none), then walks the host's table, whose
    page-walk caches (the walker's ``pwc``, keyed by guest-physical address) skip levels as the
    guest's do.

    Where a guest's pages and page tables sit in guest-physical memory (``guest_ram`` bytes, a power
    of two within the host table's reach) is a modelling assumption: each guest page and each 4 KiB table page at a pseudo-random
    frame (``pagesim.engine.nested``), as an OS's allocator hands them out after a while.

    ``regions``: parts of the guest's address space whose memory the host backs with other pages
    than ``page_size``, as (start, end, host page) of guest-virtual addresses, sorted and disjoint
    (a host that found huge pages for some of the guest's memory and not the rest). A TLB entry
    for an access there covers the smaller of the guest's page and that region's host page, and
    the host translates the data's guest-physical address with that page's levels. Each host page
    size's memory is a range of guest-physical memory of its own (``guest_ram`` bytes, above the
    ranges before it), where its pages sit pseudo-randomly as the others do; the guest's page
    tables stay in memory backed by ``page_size`` pages (both modelling assumptions). A layout
    region of a run must lie inside one of these regions or outside all of them.
    """

    page_size: int = 4096
    walker: Walker = field(default_factory=lambda: Walker("radix", level_bits=(9, 9, 9, 9)))
    nested_tlb: int = 0
    nested_tlb_ways: int = 1
    guest_ram: int = 16 << 30
    source: str = ""
    assumed: tuple[str, ...] = ("walker", "nested_tlb", "nested_tlb_ways", "guest_ram")
    regions: tuple = ()

    def __post_init__(self):
        check_host_walker(self.walker)
        object.__setattr__(self, "page_size", parse_page_size(self.page_size, "host page_size"))
        try:  # the host table must have the page as a leaf
            self.walker.leaf_refs(self.page_size)
        except ValueError as e:
            raise ValueError(f"host page {format_size(self.page_size)} (host_page) is not a leaf of the host's table (host_walker): {e}") from None
        for p in self.walker.pwc:
            if p.replacement != "lru":
                raise ValueError(f"host page-walk cache {p.name!r}: replacement={p.replacement!r}; the host's caches are modelled with LRU only")
        object.__setattr__(self, "nested_tlb", check_int("host nested_tlb", self.nested_tlb, 0, MAX_ENTRIES, " entries (0: no nested TLB)"))
        object.__setattr__(self, "nested_tlb_ways", check_int("host nested_tlb_ways", self.nested_tlb_ways, 1, 64))
        if self.nested_tlb % self.nested_tlb_ways:
            raise ValueError(f"host nested_tlb={self.nested_tlb} is not divisible by nested_tlb_ways={self.nested_tlb_ways}")
        least = max(self.page_size, 2 << 20)
        ram = guest_ram_bytes(self.guest_ram, self.walker, least, "the host page" if least > 2 << 20 else "the least modelled", "host guest_ram")
        object.__setattr__(self, "guest_ram", ram)
        object.__setattr__(self, "assumed", tuple(self.assumed))
        object.__setattr__(self, "regions", self._check_regions(self.regions))

    def _check_regions(self, regions) -> tuple:
        """``regions`` as sorted (start, end, page size) int triples, adjacent ones on the same page
        merged and those on the default page left out (they back memory as the default does), or a
        clear error."""
        out = []
        for a, b, p in host_region_triples(regions):
            p = parse_page_size(p, "host_regions page size")
            try:
                self.walker.leaf_refs(p)
            except ValueError as e:
                raise ValueError(f"host_regions page size={format_size(p)} is not a page of the host's table: {e}") from None
            a, b = parse_address(a, "host_regions start"), parse_address(b, "host_regions end")
            if a > (1 << 63) - 1 or b > 1 << 63:
                raise ValueError(f"host_regions: [{a:#x}, {b:#x}) is beyond the 2**63 bytes of address space pagesim simulates")
            if b <= a or a % p or b % p:
                raise ValueError(
                    f"host_regions: [{a:#x}, {b:#x}) must be a non-empty range starting and ending at multiples of its host page ({format_size(p)})"
                )
            out.append((a, b, p))
        out.sort()
        merged: list = []
        for a, b, p in out:
            if merged and merged[-1][1] > a:
                c, d, _ = merged[-1]
                raise ValueError(f"host_regions: [{c:#x}, {d:#x}) and [{a:#x}, {b:#x}) overlap; host regions must be disjoint")
            if merged and merged[-1][1] == a and merged[-1][2] == p:
                merged[-1] = (merged[-1][0], b, p)
            else:
                merged.append((a, b, p))
        big = [format_size(p) for *_, p in merged if p > self.guest_ram]
        if big:
            raise ValueError(f"host_regions: host pages of {', '.join(big)} are larger than guest_ram={format_size(self.guest_ram)}")
        sizes = {p for *_, p in merged} | {self.page_size}
        if len(sizes) > 3:
            raise ValueError("host_regions: at most three host page sizes in all, the default page among them")
        # each host page size's memory is a guest_ram range of its own: all of them within the host table's reach
        reach = self.walker.base_shift + sum(self.walker.level_bits)
        if len(sizes) > 1 and len(sizes) * self.guest_ram > 1 << reach:
            raise ValueError(
                f"host_regions: {len(sizes)} host page sizes of guest_ram={format_size(self.guest_ram)} each take "
                f"{format_size(len(sizes) * self.guest_ram)} of guest-physical memory, beyond the host table's {reach}-bit reach: "
                f"give guest_ram at most {format_size(1 << (reach - (len(sizes) - 1).bit_length()))}"
            )
        return tuple(r for r in merged if r[2] != self.page_size)  # one on the default page is no region: dropped

    @property
    def page_sizes(self) -> tuple[int, ...]:
        """The host page sizes backing guest memory: ``page_size`` first, then the regions' others
        in increasing order (the order of their guest-physical ranges)."""
        return (self.page_size,) + tuple(sorted({p for *_, p in self.regions} - {self.page_size}))

    def page_for(self, start: int, end: int, what: str = "the range") -> int:
        """The host page backing guest-virtual [start, end) (``what``, for the error): a region's,
        or ``page_size``; an error when the range is partly inside a region."""
        regions = self.regions  # sorted and disjoint: the last starting at or below start, and the next
        i = bisect.bisect_right(regions, (start, float("inf"), 0)) - 1
        for a, b, p in regions[max(i, 0) : i + 2]:
            if a <= start and end <= b:
                return p
            if start < b and a < end:
                raise ValueError(
                    f"host_regions: {what} [{start:#x}, {end:#x}) overlaps the host region [{a:#x}, {b:#x}) without lying inside it; "
                    "it must lie inside one host region or outside all of them"
                )
        return self.page_size

    def describe(self) -> str:
        w = self.walker
        text = f"host: {format_size(self.page_size)} pages, radix {len(w.level_bits)} levels ({'/'.join(map(str, w.level_bits))} bits)"
        if self.regions:
            text += " (" + ", ".join(f"[{a:#x}, {b:#x}) in {format_size(p)} pages" for a, b, p in self.regions) + ")"
            text += (
                f"; the TLBs above as the largest host page leaves them: a guest page on a smaller host page takes entries of the "
                f"smaller of the two (outside the regions, at most {format_size(self.page_size)})"
            )
        if w.pwc:
            text += "; page-walk caches: " + ", ".join(f"{p.name} {p.entries} entries ({p.organisation()})" for p in w.pwc)
        text += f"; nested TLB: {f'{self.nested_tlb} entries, {self.nested_tlb_ways}-way LRU' if self.nested_tlb else 'none'}"
        return text + f"; guest RAM {format_size(self.guest_ram)}"


# What a context switch does to the TLBs (pagesim.engine.processes):
#   flush         every TLB structure and page-walk cache is emptied (x86 without PCID)
#   flush-erat    every structure in front of the last level (POWER's EA-tagged ERATs, primary and
#                 secondary) and the SLB are emptied; the last level (the TLB) holds
#                 address-space-qualified entries and survives
#   tagged        entries carry an address-space ID (PCID, ASID, SPARC context, Itanium region
#                 ID) and survive; nothing is flushed
CONTEXT_SWITCH = ("flush", "flush-erat", "tagged")


@dataclass(frozen=True)
class Machine:
    """One processor's translation hardware. Immutable: derive variants with
    :meth:`replace_structure`, :meth:`add_structure`, :meth:`remove_structure`, :meth:`derive`."""

    name: str
    title: str
    page_sizes: tuple[int, ...]
    base_page: int
    structures: tuple[Structure, ...]
    walker: Walker
    va_bits: int = 48
    vendor: str = ""
    year: int = 0
    slb: Structure | None = None
    costs: Costs = field(default_factory=Costs)
    notes: str = ""
    derived_from: str = ""
    changes: tuple[str, ...] = ()
    context_switch: str = "flush"
    context_switch_source: str = ""
    host: Host | None = None
    #: the source saying the processor had no nested paging (hardware translation of a guest's
    #: addresses: AMD's NPT, Intel's EPT, Arm's stage 2), so that :meth:`virtualised` warns; empty
    #: where no reference says so (the references state nested paging for no other preset)
    no_nested_paging: str = ""

    def __post_init__(self):
        if not isinstance(self.walker, Walker):
            raise TypeError(
                f"machine {self.name!r} walker must be a pagesim Walker such as Walker('radix', level_bits=(9, 9, 9, 9)), "
                f"got {type(self.walker).__name__} {self.walker!r}"
            )
        check_choice(f"machine {self.name!r} context_switch", self.context_switch, CONTEXT_SWITCH)
        object.__setattr__(self, "page_sizes", _sizes(f"machine {self.name!r} page_sizes", self.page_sizes))
        if not self.page_sizes:
            raise ValueError(f"machine {self.name!r} page_sizes is empty")
        if len(self.page_sizes) > MAX_PAGE_SIZES:
            raise ValueError(f"machine {self.name!r} has {len(self.page_sizes)} page sizes; at most {MAX_PAGE_SIZES} are modelled")
        object.__setattr__(self, "base_page", parse_page_size(self.base_page, f"machine {self.name!r} base_page"))
        if self.base_page not in self.page_sizes:
            raise ValueError(
                f"machine {self.name!r} base_page={format_size(self.base_page)} is not among its page sizes ({', '.join(map(format_size, self.page_sizes))})"
            )
        object.__setattr__(self, "va_bits", check_int(f"machine {self.name!r} va_bits", self.va_bits, 32, 64))
        if isinstance(self.structures, (str, bytes, dict)) or not hasattr(self.structures, "__iter__"):
            raise TypeError(f"machine {self.name!r} structures must be a sequence of Structure, got {type(self.structures).__name__} {self.structures!r}")
        for s in self.structures:
            if not isinstance(s, (Structure, dict)):
                raise TypeError(f"machine {self.name!r} structures entries must be Structure objects (or dicts of their fields), got {type(s).__name__} {s!r}")
        if not isinstance(self.costs, Costs):
            raise TypeError(f"machine {self.name!r} costs must be a pagesim Costs, got {type(self.costs).__name__} {self.costs!r}")
        structs = tuple(s if isinstance(s, Structure) else Structure(**s) for s in self.structures)
        object.__setattr__(self, "structures", structs)
        names = [s.name for s in structs]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ValueError(f"machine {self.name!r}: structure names must be unique, repeated: {sorted(dup)}")
        for s in structs:
            bad = [format_size(p) for p in s.sizes if p not in self.page_sizes]
            if bad:
                raise ValueError(
                    f"structure {s.name!r} holds {', '.join(bad)}, which machine {self.name!r} lacks: "
                    f"its page sizes are {', '.join(map(format_size, self.page_sizes))}"
                )
        self._check_one_per_level(structs)
        if self.walker.kind == "radix":
            for p in self.page_sizes:
                self.walker.leaf_refs(p)
        if self.slb is not None and not isinstance(self.slb, Structure):
            object.__setattr__(self, "slb", Structure(level=1, side="unified", sizes=(self.base_page,), **self.slb))
        if self.host is not None:
            if not isinstance(self.host, Host):
                raise TypeError(f"machine {self.name!r} host must be a pagesim Host, got {type(self.host).__name__} {self.host!r}")
            if self.walker.kind != "radix":
                raise ValueError(f"machine {self.name!r}: nested paging is modelled for radix guests (x86-64, Arm), not a {self.walker.kind} walker")
            if self.host.guest_ram < max(self.page_sizes):
                raise ValueError(
                    f"machine {self.name!r}: host guest_ram={format_size(self.host.guest_ram)} is smaller than "
                    f"its largest page ({format_size(max(self.page_sizes))})"
                )
            hp = max(self.host.page_sizes)
            for st in structs:
                big = [format_size(p) for p in st.sizes if st.entry_size(p) > hp]
                if big:
                    raise ValueError(
                        f"machine {self.name!r}: structure {st.name!r} caches {', '.join(big)} entries, larger than the host's "
                        f"largest page ({format_size(hp)}); a TLB entry covers at most the smaller of the guest's and the host's "
                        "page (Machine.virtualised caps them)"
                    )
            top = 1 << min(self.va_bits, 63)
            beyond = [f"[{a:#x}, {b:#x})" for a, b, _ in self.host.regions if b > top]
            if beyond:
                raise ValueError(f"machine {self.name!r}: host_regions {', '.join(beyond)} reach beyond its {min(self.va_bits, 63)}-bit address space")
            bad = [format_size(p) for p in self.host.page_sizes if p not in self.page_sizes]
            if bad and self.host.regions:
                raise ValueError(
                    f"machine {self.name!r}: with host_regions, every host page size must be among its page sizes "
                    f"({', '.join(map(format_size, self.page_sizes))}); not {', '.join(bad)}"
                )

    def _check_one_per_level(self, structs):
        for kind in ("data", "instr"):
            seen: dict[tuple[int, int], str] = {}
            for s in structs:
                if not s.serves(kind):
                    continue
                for p in s.sizes:
                    if not s.holds(p):
                        continue
                    key = (s.level, p)
                    if key in seen:
                        raise ValueError(
                            f"structures {seen[key]!r} and {s.name!r} both hold {format_size(p)} pages at level {s.level} "
                            f"for {kind} accesses; pagesim looks up one structure per level and page size"
                        )
                    seen[key] = s.name
            for p in self.page_sizes:
                n = sum(1 for s in structs if s.serves(kind) and s.holds(p))
                if n > MAX_CHAIN:
                    raise ValueError(
                        f"machine {self.name!r}: {kind} accesses to {format_size(p)} pages would look up {n} structures in turn; "
                        f"pagesim allows at most {MAX_CHAIN}"
                    )

    # ----------------------------------------------------------------------- lookups
    def structure(self, name: str) -> Structure:
        for s in self.structures:
            if s.name == name:
                return s
        raise ValueError(f"machine {self.name!r} has no structure {name!r}: it has {', '.join(repr(s.name) for s in self.structures)}")

    def check_page_size(self, page_size, name: str = "page_size") -> int:
        p = parse_page_size(page_size, name)
        if p not in self.page_sizes:
            raise ValueError(f"{name}={format_size(p)} is not supported by machine {self.name!r}: allowed {', '.join(map(format_size, self.page_sizes))}")
        return p

    def chain(self, kind: str, page_size: int) -> list[Structure]:
        """Structures a ``kind`` ('data' or 'instr') access to a page of ``page_size`` looks up, in order."""
        check_choice("kind", kind, ACCESS_SIDES)
        return sorted((s for s in self.structures if s.serves(kind) and s.holds(page_size)), key=lambda s: s.level)

    def reach(self, page_size, side: str = "data", structure: str | None = None, programmed: bool = False, host_page=None) -> int:
        """Bytes mapped without a miss. With ``structure``: that structure's entries x entry size.
        Without: the largest level's reach for ``side`` (the levels are filled together, so their
        contents overlap; the documents quote the largest level, e.g. 2048 x 4K = 8 MiB).

        A programmable structure (UltraSPARC III Cu's T512_1) holds nothing until it is programmed,
        so by default it adds no reach. With ``programmed=True`` each programmable structure that can
        hold ``page_size`` is first programmed to it (:meth:`programmed_for`): the reach when the OS
        programs it, as Solaris does once 8 or more pages of one large size are mapped.

        On a virtualised machine with host regions, ``host_page`` says which host page backs the
        pages (default: the host's default page): their entries cover the smaller of the two."""
        p = self.check_page_size(page_size)
        check_choice("side", side, ACCESS_SIDES)
        if host_page is not None and (self.host is None or not self.host.regions):
            raise ValueError(f"reach: host_page={host_page!r} applies to a virtualised machine with host_regions; {self.name!r} has none")
        if self.host is not None and self.host.regions:
            hp = self.host.page_size if host_page is None else parse_page_size(host_page, "host_page")
            if hp not in self.host.page_sizes:
                raise ValueError(f"reach: host_page={format_size(hp)} is not one of the host's pages ({', '.join(map(format_size, self.host.page_sizes))})")
            p = min(p, hp)  # the entries such a page takes
        if programmed:
            return self.programmed_for(p, side)[0].reach(p, side, structure)
        if structure is not None:
            s = self.structure(structure)
            return s.entries * s.entry_size(p) if p in s.sizes else 0
        by_level: dict[int, int] = {}
        for s in self.chain(side, p):
            by_level[s.level] = by_level.get(s.level, 0) + s.entries * s.entry_size(p)
        return max(by_level.values(), default=0)

    def programmed_for(self, page_size, side: str = "data") -> tuple["Machine", list[str]]:
        """This machine with every programmable structure that serves ``side`` and can hold
        ``page_size`` programmed to it, and the names of those structures."""
        p = self.check_page_size(page_size)
        check_choice("side", side, ACCESS_SIDES)
        m, names = self, []
        for s in self.structures:
            if s.programmable and s.serves(side) and p in s.sizes:
                m = m.program(s.name, p)
                names.append(s.name)
        return m, names

    @property
    def assumptions(self) -> list[str]:
        """Every modelling assumption in this machine, one line each."""
        out = [f"{s.name}.{a}" for s in self.structures for a in s.assumed]
        out += [f"walker.{a}" for a in self.walker.assumed]
        out += [f"walker.{p.name}.{a}" for p in self.walker.pwc for a in p.assumed]
        out += [f"costs.{a}" for a in self.costs.assumed]
        if self.slb is not None:
            out += [f"{self.slb.name}.{a}" for a in self.slb.assumed]
        if not self.context_switch_source:
            out.append("context_switch")
        out += [f"what-if: {c}" for c in self.changes]
        return out

    # ----------------------------------------------------------------------- variants
    def _variant(self, structures, change: str, name: str | None = None, **kw) -> "Machine":
        return dataclasses.replace(
            self,
            name=name or self.name + "*",
            structures=tuple(structures),
            derived_from=self.derived_from or self.name,
            changes=self.changes + (change,),
            **kw,
        )

    def replace_structure(self, name: str, new_name: str | None = None, **changes) -> "Machine":
        """A copy with structure ``name`` changed, e.g. ``replace_structure("L2 DTLB 4K", entries=1024)``.
        The copy is named ``new_name`` (default: this name with a '*')."""
        old = self.structure(name)
        fields = {f.name for f in dataclasses.fields(Structure)}
        bad = sorted(set(changes) - fields)
        if bad:
            raise ValueError(f"replace_structure: unknown field(s) {bad}; allowed {sorted(fields)}")
        new = dataclasses.replace(old, **changes)
        assumed = tuple(sorted(set(old.assumed) | set(changes)))
        new = dataclasses.replace(new, assumed=assumed, source=(old.source + " | what-if: " + ", ".join(f"{k}={v}" for k, v in changes.items())))
        desc = f"{name}: " + ", ".join(f"{k}={v!r}" for k, v in changes.items())
        return self._variant([new if s.name == name else s for s in self.structures], desc, new_name)

    def add_structure(self, new_name: str | None = None, **fields) -> "Machine":
        """A copy with one more structure, e.g. the 2M L2 DTLB the CSCS paper asks AMD for.
        The copy is named ``new_name`` (default: this name with a '*')."""
        fields.setdefault("source", "what-if structure (not real hardware)")
        fields.setdefault("assumed", ("entries", "ways", "latency"))
        s = Structure(**fields)
        return self._variant(
            list(self.structures) + [s], f"added {s.name} ({s.entries} entries, {s.organisation()}, {'/'.join(map(format_size, s.sizes))})", new_name
        )

    def remove_structure(self, name: str, new_name: str | None = None) -> "Machine":
        self.structure(name)
        return self._variant([s for s in self.structures if s.name != name], f"removed {name}", new_name)

    def program(self, name: str, page_size) -> "Machine":
        """Program a per-process programmable structure (UltraSPARC III Cu T512_1) to one page size."""
        s = self.structure(name)
        if not s.programmable:
            raise ValueError(f"structure {name!r} of machine {self.name!r} is not programmable")
        p = parse_page_size(page_size)
        if p not in s.sizes:
            raise ValueError(f"structure {name!r} can be programmed to {', '.join(map(format_size, s.sizes))}, not {format_size(p)}")
        others = []
        for o in self.structures:
            if o is s:
                others.append(dataclasses.replace(s, sizes=(p,), programmable=False))
            elif o.level == s.level and p in o.sizes and not o.programmable and (o.serves("data") and s.serves("data")):
                rest = tuple(x for x in o.sizes if x != p)
                if rest:
                    others.append(dataclasses.replace(o, sizes=rest))
                # a structure left with no size is dropped from lookups of that size only
                else:
                    others.append(dataclasses.replace(o, programmable=True))
            else:
                others.append(o)
        return dataclasses.replace(self, structures=tuple(others), changes=self.changes + (f"{name} programmed to {format_size(p)}",))

    def virtualised(
        self,
        host_page="4K",
        *,
        nested_tlb: int = 0,
        nested_tlb_ways: int = 4,
        host_walker: Walker | None = None,
        guest_ram=None,
        host_regions=(),
        name: str | None = None,
    ) -> "Machine":
        """This machine running as a guest under nested paging, with the host backing guest memory in
        ``host_page`` pages (4K, 2M or 1G on x86-64), and the parts of the guest's address space in
        ``host_regions`` ((start, end, host page) triples, or {(start, end): host page}) in theirs.
        See :class:`Host`.

        The TLBs: an entry covers at most the host page, and a guest page larger than it is cached
        as host-page entries in the structures that hold host-page-sized entries (a structure that
        held only the larger pages is left out: nothing would fill it). The host's table and its
        page-walk caches are, unless ``host_walker`` says otherwise, shaped like the guest's: a
        modelling assumption (no preset's documents give EPT's or NPT's walk caches).
        ``nested_tlb``: entries of a cache of guest-physical translations (AMD's nested TLB; 0:
        none), ``nested_tlb_ways`` ways; ``guest_ram``: the guest's memory, over which its pages
        and page tables are spread (None: 16G)."""
        if self.host is not None:
            raise ValueError(f"machine {self.name!r} is virtualised already")
        if self.walker.kind != "radix":
            raise ValueError(f"virtualised: nested paging is modelled for radix guests (x86-64, Arm); machine {self.name!r} has a {self.walker.kind} walker")
        default = self.check_page_size(host_page, "host_page")
        if host_walker is None:
            lru = tuple(dataclasses.replace(p, replacement="lru") for p in self.walker.pwc)  # the host's caches: LRU
            host_walker = Walker("radix", level_bits=self.walker.level_bits, base_shift=self.walker.base_shift, pwc=lru)
        check_host_walker(host_walker)  # before the reach checks below, which read a radix table's levels
        host_regions = host_region_triples(host_regions)  # once: an iterator given is read here, not again by Host
        for *_, q in host_regions:
            try:
                self.check_page_size(q, "host_regions page size")
            except ValueError as e:
                sizes = ", ".join(map(format_size, self.page_sizes))
                raise ValueError(f"{e}" if sizes in str(e) else f"{e}; machine {self.name!r} has {sizes}") from None
        if name is not None and not isinstance(name, str):
            raise TypeError(f"name must be a str (or None: the machine's name with -vm-<host page>), got {type(name).__name__} {name!r}")
        if name is not None and not name.strip():
            raise ValueError(f"name={name!r} is empty: give a name, or None for the machine's name with -vm-<host page>")
        check_int("nested_tlb_ways", nested_tlb_ways, 1, 64, " (ways of the nested TLB)")  # with no nested TLB too
        ways = nested_tlb_ways if nested_tlb else 1
        given = "" if guest_ram is not None else " (the default)"
        guest_ram = "16G" if guest_ram is None else guest_ram
        try:  # a host page that is no leaf of the host's table is the first error (Host names it)
            leaf = isinstance(host_walker, Walker) and host_walker.leaf_refs(default) > 0
        except ValueError:
            leaf = False
        if leaf:  # the guest's memory holds its largest page: Host alone knows only the host's
            big = max(self.page_sizes)
            least = max(big, default, 2 << 20, *(parse_page_size(q, "host_regions page size") for *_, q in host_regions))
            why = f"the largest page of machine {self.name!r}" if least == big else "the largest host page"
            guest_ram_bytes(guest_ram, host_walker, least, why, "guest_ram", given)
        host = Host(default, host_walker, nested_tlb, ways, guest_ram, source="virtualised(): modelling assumptions", regions=host_regions)
        # the structures as the largest host page leaves them: a region on smaller host pages looks
        # up the chain of its smaller entries (pagesim.engine.stages)
        hp = max(host.page_sizes)
        large = tuple(p for p in self.page_sizes if p > hp)
        structs = []
        for st in self.structures:
            small = tuple(p for p in st.sizes if p <= hp)
            if hp in st.sizes and large:
                cap = hp if st.max_entry is None else min(st.max_entry, hp)
                structs.append(dataclasses.replace(st, sizes=tuple(sorted(set(st.sizes) | set(large))), max_entry=cap))
            elif small:
                cap = st.max_entry if st.max_entry is None or st.max_entry <= hp else hp
                structs.append(dataclasses.replace(st, sizes=small, max_entry=cap))
        if self.no_nested_paging:
            warn(
                f"machine {self.name!r}: its processor had no nested paging ({self.no_nested_paging}); "
                "virtualised() models the hardware two-dimensional walk it lacked: a what-if, not that processor"
            )
        label = f"virtualised, host {format_size(default)} pages" + (f", nested TLB {nested_tlb}" if nested_tlb else "")
        if host.regions:
            label += ", " + ", ".join(f"[{a:#x}, {b:#x}) on {format_size(p)}" for a, b, p in host.regions)
        return dataclasses.replace(
            self,
            name=name or f"{self.name}-vm-{format_size(default)}" + "".join(f"+{format_size(p)}" for p in host.page_sizes[1:]),
            title=f"{self.title} ({label})",
            structures=tuple(structs),
            host=host,
            derived_from=self.derived_from or self.name,
            changes=self.changes + (label,),
        )

    def derive(self, name: str | None = None, **changes) -> "Machine":
        """A copy with machine-level fields changed (``va_bits``, ``costs``, ``walker``...)."""
        fields = {f.name for f in dataclasses.fields(Machine)}
        bad = sorted(set(changes) - fields)
        if bad:
            raise ValueError(f"derive: unknown field(s) {bad}; allowed {sorted(fields)}")
        if "costs" in changes and isinstance(changes["costs"], dict):
            changes["costs"] = dataclasses.replace(self.costs, **changes["costs"])
        desc = ", ".join(f"{k}={v!r}" for k, v in changes.items() if k not in ("name", "title"))
        return dataclasses.replace(
            self,
            name=name or self.name + "*",
            derived_from=self.derived_from or self.name,
            changes=self.changes + ((desc,) if desc else ()),
            **changes,
        )

    def describe(self, sources: bool = False) -> str:
        lines = [f"{self.name}: {self.title} ({self.vendor}, {self.year})"]
        lines.append(f"  page sizes {', '.join(map(format_size, self.page_sizes))}; base page {format_size(self.base_page)}; VA {self.va_bits} bits")
        for s in sorted(self.structures, key=lambda s: (s.level, s.side, s.name)):
            mark = " [programmable]" if s.programmable else ""
            ent = f"{s.entries} entries, {s.organisation()}"
            cover = f" (an entry covers at most {format_size(s.max_entry)})" if s.max_entry else ""
            lines.append(f"  L{s.level} {s.side:<7} {s.name:<18} {ent:<36} {'/'.join(map(format_size, s.sizes))}{cover}{mark}, +{s.latency} cycles")
            if sources:
                lines.append(f"      source: {s.source}")
                if s.assumed:
                    lines.append(f"      modelling assumption: {', '.join(s.assumed)}")
        w = self.walker
        if w.kind == "radix":
            wd = f"radix, {len(w.level_bits)} levels ({'/'.join(map(str, w.level_bits))} bits over a {w.base_shift}-bit offset)"
            if w.pwc:
                wd += "; page-walk caches: " + ", ".join(f"{p.name} {p.entries} entries ({p.organisation()})" for p in w.pwc)
        elif w.kind == "hashed":
            wd = f"hashed page table, {w.hpt_ptegs} PTEGs x 8 entries"
        elif w.kind == "tsb":
            wd = f"software refill through a {w.tsb_entries}-entry TSB per page size, then {w.sw_walk_refs}-load table walk"
        else:
            wd = "short-format VHPT walker"
        lines.append(f"  walker: {wd}; {w.walkers} walk{'s' if w.walkers > 1 else ''} at a time")
        if sources:
            lines.append(f"      source: {w.source}")
            for p in w.pwc:
                lines.append(f"      {p.name}: {p.source}")
        if self.slb is not None:
            lines.append(
                f"  SLB {self.slb.entries} entries (256M segments at every address; 1T segments are not modelled)"
                + (f"; source: {self.slb.source}" if sources else "")
            )
        if self.host is not None:
            lines.append("  " + self.host.describe())
        cs = {
            "flush": "flushes every TLB and walk cache",
            "flush-erat": "flushes every structure in front of the last level (the ERATs) and the SLB",
            "tagged": "keeps address-space-tagged entries",
        }[self.context_switch]
        lines.append(
            f"  context switch: {cs}"
            + ((f"; source: {self.context_switch_source}" if self.context_switch_source else " (modelling assumption)") if sources else "")
        )
        if sources:
            if self.no_nested_paging:
                lines.append(f"  nested paging: none ({self.no_nested_paging})")
            lines.append(f"  notes: {self.notes}")
            lines.append("  modelling assumptions: " + "; ".join(self.assumptions))
        return "\n".join(lines)


# --------------------------------------------------------------------------- presets
def _from_toml(d: dict) -> Machine:
    d = dict(d)
    structs = []
    # a replacement policy no source gives is the default (LRU) and a modelling assumption
    unsourced = lambda e: ("replacement",) if "replacement" not in e else ()  # noqa: E731
    for s in d.pop("structure"):
        s = dict(s)
        s["assumed"] = tuple(s.get("assumed", ())) + unsourced(s)
        structs.append(Structure(**s))
    w = dict(d.pop("walker"))
    w["pwc"] = tuple(PageWalkCache(**{**p, "assumed": tuple(p.get("assumed", ())) + unsourced(p)}) for p in w.pop("pwc", []))
    if "walkers" not in w:  # no source gives the concurrent walks: one, a modelling assumption
        w["assumed"] = tuple(w.get("assumed", ())) + ("walkers",)
    walker = Walker(**w)
    slb = d.pop("slb", None)
    if slb is not None:
        slb = Structure(level=1, side="unified", sizes=tuple(d["page_sizes"]), **{**slb, "assumed": tuple(slb.get("assumed", ())) + unsourced(slb)})
    c = dict(d.pop("costs", {}))
    costs_assumed = set(c.pop("assumed", ()))
    base = Costs()
    costs_assumed |= {f for f in base.assumed if f not in c}
    costs = Costs(**c, assumed=tuple(sorted(costs_assumed)))
    return Machine(structures=tuple(structs), walker=walker, slb=slb, costs=costs, **d)


@functools.lru_cache(maxsize=1)
def _presets() -> dict[str, Machine]:
    text = importlib.resources.files("pagesim").joinpath("data/machines.toml").read_bytes()
    data = tomllib.loads(text.decode("utf-8"))
    return {m["name"]: _from_toml(m) for m in data["machine"]}


def machines() -> list[str]:
    """Names of the preset machines."""
    return list(_presets())


def machine(name) -> Machine:
    """A preset by name (case-insensitive), or ``name`` itself if it already is a Machine."""
    if isinstance(name, Machine):
        return name
    if not isinstance(name, str):
        raise TypeError(f"machine must be a preset name or a Machine, got {type(name).__name__} {name!r}")
    p = _presets()
    key = name.strip().lower()
    if key not in p:
        raise ValueError(f"machine={name!r} is not a preset: choose one of {', '.join(p)}")
    return p[key]


def reach_table(names=None):
    """A tidy DataFrame: one row per machine, side and supported page size, with TLB reach.

    ``reach_bytes`` / ``reach`` are what the hardware reaches with a programmable structure
    (UltraSPARC III Cu's T512_1) programmed to that page size; ``programmed`` names such a
    structure (empty when none applies), ``reach_unprogrammed_bytes`` is the reach with it left
    unprogrammed, and ``reach_label`` is ``reach`` marked "(T512_1 programmed)" where the two differ."""
    import pandas as pd  # deferred: pandas is slow to import; only tables need it

    names = [names] if isinstance(names, str) else names  # one machine's name
    rows = []
    for n in names or machines():
        m = machine(n)
        for side in ("data", "instr"):
            for p in m.page_sizes:
                mp, progs = m.programmed_for(p, side)
                chain = mp.chain(side, p)
                r, r0 = mp.reach(p, side), m.reach(p, side)
                text = format_size(r) if r else "0"
                rows.append(
                    {
                        "machine": m.name,
                        "side": side,
                        "page_size": p,
                        "page": format_size(p),
                        "entries": sum(s.entries for s in chain),
                        "structures": " + ".join(f"{s.name} ({s.entries}{', programmed' if s.name in progs else ''})" for s in chain)
                        or "none (every access walks)",
                        "reach_bytes": r,
                        "reach": text,
                        "programmed": ", ".join(progs),
                        "reach_unprogrammed_bytes": r0,
                        "reach_label": text + (f" ({', '.join(x.split()[-1] for x in progs)} programmed)" if progs and r != r0 else ""),
                    }
                )
    return pd.DataFrame(rows)
