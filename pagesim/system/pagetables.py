"""Page-table memory: radix page-table pages per level and per process, private or shared.

A process maps a list of :class:`Mapping`s into a radix table of ``len(level_bits)`` levels (level
0 the top, whose entries each cover the largest span). Where the mappings lie decides which tables
they touch; the layout is a modelling assumption, stated in :func:`process_tables`. Real placement
can only add tables.

Shared page tables (the linux-mm patch of 2006, 004_b9bff536459e6bfe.txt): processes that map
the same shared region share its leaf-level tables, which are then counted once; every upper level
stays private. With huge pages the leaf level is the one holding the huge-page entries (PMD on
x86-64, or PUD for 1 GiB pages), and that is what is shared.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.check import check_bool, check_int
from ..core.units import format_size, parse_page_size, parse_size

X86_64 = dict(level_bits=(9, 9, 9, 9), base_shift=12, entry_bytes=8, table_bytes=4096)


@dataclass(frozen=True)
class Mapping:
    name: str
    size: int
    page_size: int = 4096
    shared: bool = False

    def __post_init__(self):
        object.__setattr__(self, "size", parse_size(self.size, f"mapping {self.name!r} size"))
        object.__setattr__(self, "page_size", parse_page_size(self.page_size, f"mapping {self.name!r} page_size"))
        if self.size <= 0:
            raise ValueError(f"mapping {self.name!r} size must be positive")


def _check_radix(level_bits, base_shift) -> tuple[tuple[int, ...], int]:
    if isinstance(level_bits, (str, bytes)) or not isinstance(level_bits, (list, tuple)):
        raise TypeError(
            f"level_bits must be a list or tuple of ints (index bits per level, top first, e.g. (9, 9, 9, 9)), got {type(level_bits).__name__} {level_bits!r}"
        )
    if not 1 <= len(level_bits) <= 8:
        raise ValueError(f"level_bits={level_bits!r} has {len(level_bits)} levels: allowed 1..8")
    bits = tuple(check_int(f"level_bits[{i}]", b, 1, 24) for i, b in enumerate(level_bits))
    base_shift = check_int("base_shift", base_shift, 10, 34, " (log2 of the base page size: 1 KiB..16 GiB)")
    if base_shift + sum(bits) > 64:
        raise ValueError(f"level_bits={level_bits!r} with base_shift={base_shift} translate {base_shift + sum(bits)} address bits: allowed at most 64")
    return bits, base_shift


def _check_mappings(mappings) -> list[Mapping]:
    if isinstance(mappings, (str, bytes, Mapping)) or not isinstance(mappings, (list, tuple)):
        raise TypeError(f"mappings must be a list or tuple of pagesim.system.pagetables.Mapping, got {type(mappings).__name__} {mappings!r}")
    if not mappings:
        raise ValueError("mappings=[] is empty: give at least one pagesim.system.pagetables.Mapping")
    for i, m in enumerate(mappings):
        if not isinstance(m, Mapping):
            raise TypeError(f"mappings[{i}] must be a pagesim.system.pagetables.Mapping, got {type(m).__name__} {m!r}")
    return list(mappings)


def _spans(level_bits, base_shift):
    """Bytes one table at each level covers, leaf level last: x86-64 -> 512G*512, 512G, 1G, 2M."""
    out, acc = [], base_shift
    for b in reversed(level_bits):
        acc += b
        out.append(1 << acc)
    return list(reversed(out))


def _leaf_level(m: Mapping, level_bits, base_shift) -> int:
    """The level whose entries map pages of ``m.page_size`` (x86-64: 3 for 4K, 2 for 2M, 1 for 1G)."""
    spans = _spans(level_bits, base_shift)
    for i in range(len(level_bits)):
        if spans[i] >> level_bits[i] == m.page_size:
            return i
    leaves = ", ".join(format_size(s >> b) for s, b in zip(spans, level_bits) if 1024 <= s >> b <= 16 << 30)
    raise ValueError(f"mapping {m.name!r}: page_size={format_size(m.page_size)} is not a leaf of this radix table (leaf page sizes: {leaves})")


def layout(mappings, level_bits=X86_64["level_bits"], base_shift=X86_64["base_shift"]) -> list[tuple[int, int]]:
    """Where each mapping lies: [(start, end)] in bytes, end exclusive (see :func:`process_tables`)."""
    level_bits, base_shift = _check_radix(level_bits, base_shift)
    mappings = _check_mappings(mappings)
    align = 1 << (base_shift + sum(level_bits[2:]))
    out, at = [], 0
    for m in mappings:
        a = max(align, m.page_size)
        start = -(-at // a) * a
        end = start + -(-m.size // m.page_size) * m.page_size
        out.append((start, end))
        at = end
    space = 1 << (base_shift + sum(level_bits))
    if at > space:
        raise ValueError(
            f"mappings need {format_size(at)} of address space laid out this way, more than the {format_size(space)} "
            f"level_bits={level_bits!r} with base_shift={base_shift} translate: give fewer or smaller mappings or more level_bits"
        )
    return out


def process_tables(mappings, level_bits=X86_64["level_bits"], base_shift=X86_64["base_shift"]) -> tuple[list[int], list[int]]:
    """Tables per level (top first) one process needs: (all tables, the tables shared among processes).

    Layout (modelling assumption): the mappings lie one after another from address 0, in the order
    given. Each starts at the first address after the previous one's end that is a multiple of both
    its page size and the span one level-2 table covers, 2**(base_shift + sum(level_bits[2:]))
    (1 GiB on x86-64; with two levels that is the base page, so mappings pack). A mapping of
    ``size`` bytes takes ceil(size / page_size) pages. So a mapping never shares a table at level 2
    or below with another, while level-1 and top-level tables hold entries of every mapping in their
    span. A mapping whose pages are entries at level ``j`` touches tables at levels 0..j only.

    Sharing (modelling rule): a table is shared when every entry it holds is a leaf entry of a
    shared mapping, that is, every mapping with entries in it is shared and has its pages at that
    table's level. A table that also maps private memory, or that points to lower-level tables, is
    private: one per process. The top-level table is always one per process. The second list
    counts, per level, the tables that would be shared; :func:`page_table_bytes` shares them when
    asked.
    """
    level_bits, base_shift = _check_radix(level_bits, base_shift)
    mappings = _check_mappings(mappings)
    n = len(level_bits)
    spans = _spans(level_bits, base_shift)
    leaves = [_leaf_level(m, level_bits, base_shift) for m in mappings]
    where = layout(mappings, level_bits, base_shift)
    tables = [0] * n
    shared = [0] * n
    tables[0] = 1
    for lvl in range(1, n):
        shift = spans[lvl].bit_length() - 1
        cur, cur_shared = None, False  # the table the previous mapping ended in, and whether all it holds is shareable
        for m, leaf, (start, end) in zip(mappings, leaves, where):
            if leaf < lvl:
                continue
            ok = m.shared and leaf == lvl
            lo, hi = start >> shift, (end - 1) >> shift
            if lo == cur:
                cur_shared = cur_shared and ok
                if hi == lo:
                    continue
                lo += 1
            if cur is not None:
                tables[lvl] += 1
                shared[lvl] += cur_shared
            inner = hi - lo  # tables lo..hi-1 lie wholly inside this mapping
            tables[lvl] += inner
            shared[lvl] += inner if ok else 0
            cur, cur_shared = hi, ok
        if cur is not None:
            tables[lvl] += 1
            shared[lvl] += cur_shared
    return tables, shared


def page_table_bytes(processes: int, mappings, shared_tables: bool = False, **radix) -> dict:
    """Page-table bytes of ``processes`` processes that each map ``mappings``.

    ``radix`` overrides the x86-64 defaults: ``level_bits`` (index bits per level, top first),
    ``base_shift`` (log2 of the base page size), ``table_bytes`` (bytes of one table at any level)
    and ``entry_bytes``. Tables and layout as :func:`process_tables` models them.

    Returns {'total': bytes, 'by_level': [bytes per level, top first], 'per_process': bytes of one
    process's private tables}. With ``shared_tables``, the tables :func:`process_tables` finds
    shareable (those holding only leaf entries of shared mappings) are counted once for all
    processes instead of once per process.
    """
    processes = check_int("processes", processes, 1, 1 << 20)
    shared_tables = check_bool("shared_tables", shared_tables)
    unknown = sorted(set(radix) - set(X86_64))
    if unknown:
        raise TypeError(f"page_table_bytes got unknown keyword {unknown[0]}={radix[unknown[0]]!r}: allowed {', '.join(X86_64)}")
    cfg = {**X86_64, **radix}
    tb = check_int("table_bytes", cfg["table_bytes"], 1, 1 << 40)
    check_int("entry_bytes", cfg["entry_bytes"], 1, tb, f" (at most table_bytes={tb})")
    tables, shared = process_tables(mappings, cfg["level_bits"], cfg["base_shift"])
    if shared_tables:
        private = [t - s for t, s in zip(tables, shared)]
        by_level = [(processes * p + s) * tb for p, s in zip(private, shared)]
    else:
        private = tables
        by_level = [processes * t * tb for t in tables]
    return {"total": sum(by_level), "by_level": by_level, "per_process": sum(private) * tb}


def hpt_bytes(machine) -> int:
    """Size of a POWER hashed page table: PTEGs x 8 entries x 16 bytes."""
    w = machine.walker
    if w.kind != "hashed":
        raise ValueError(f"machine {machine.name!r} has a {w.kind} walker, not a hashed page table")
    return w.hpt_ptegs * 8 * 16


# Parameters that reproduce the shared-page-tables figures for the 4-way x86-64 system with 8 GB
# (004_b9bff536459e6bfe.txt): page-table memory 1.65 GB -> 51 MB with the buffer pool in small
# pages, 53 MB -> 37 MB with it in huge pages. The document does not give these parameters; they
# are a modelling choice, one of several combinations that reproduce all four figures (GB and MB
# read as GiB and MiB). "private" is the private address span each process maps (page tables
# cover it); not all of it need be resident.
TWICHELL_8GB = {"processes": 160, "buffer_pool": 5248 << 20, "shared_text": 40 << 20, "private": 110 << 20}


def database_mappings(buffer_pool, shared_text, private, huge_pool: bool = False) -> list[Mapping]:
    """One database process's mappings: the shared buffer pool (small or 2 MiB pages), other shared
    small-page mappings (executable text, libraries), and private memory."""
    return [
        Mapping("buffer pool", buffer_pool, (2 << 20) if huge_pool else 4096, shared=True),
        Mapping("shared text and libraries", shared_text, 4096, shared=True),
        Mapping("private", private, 4096, shared=False),
    ]


def shared_page_table_table(processes, buffer_pool, shared_text, private):
    """A tidy DataFrame: page-table bytes for each pool page size, private versus shared tables."""
    import pandas as pd  # deferred: pandas is slow to import; only tables need it

    rows = []
    for huge in (False, True):
        maps = database_mappings(buffer_pool, shared_text, private, huge)
        for shared in (False, True):
            r = page_table_bytes(processes, maps, shared_tables=shared)
            rows.append(
                {
                    "pool_pages": "2M" if huge else "4K",
                    "page_tables": "shared" if shared else "private",
                    "bytes": r["total"],
                    "MiB": r["total"] / (1 << 20),
                    **{f"level{i}_bytes": b for i, b in enumerate(r["by_level"])},
                }
            )
    return pd.DataFrame(rows)
