"""Page-table memory: radix page-table pages per level and per process, private or shared.

A process maps a list of :class:`Mapping`s. Each mapping starts on a boundary of the span one
upper-level table covers (1 GiB on x86-64: a modelling assumption; real placement can only add
tables), so a mapping of ``size`` bytes with leaf entries at level ``j`` needs
ceil(size / span_j) leaf tables and ceil(size / span_i) tables at each level i above, with the top
level one table per process.

Shared page tables (the linux-mm patch of 2006, 004_b9bff536459e6bfe.txt): processes that map
the same shared region share its leaf-level tables, which are then counted once; every upper level
stays private. With huge pages the leaf level is the one holding the huge-page entries (PMD on
x86-64), and that is what is shared.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._check import check_int
from .units import format_size, parse_page_size, parse_size

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
    raise ValueError(f"mapping {m.name!r}: page_size={format_size(m.page_size)} is not a leaf of this radix table")


def process_tables(mappings, level_bits=X86_64["level_bits"], base_shift=X86_64["base_shift"]) -> tuple[list[int], list[int]]:
    """Tables per level (top first) one process needs: (all tables, the leaf tables of shared mappings).

    Layout (modelling assumption): the mappings lie one after another, each starting on a boundary
    of the span a level-2 table covers (1 GiB on x86-64). So levels 2 and below are counted per
    mapping, ceil(size / span); level 1 over the whole area; the top level is one table.
    """
    n = len(level_bits)
    spans = _spans(level_bits, base_shift)
    tables = [0] * n
    shared_leaf = [0] * n
    tables[0] = 1
    area = 0
    for m in mappings:
        leaf = _leaf_level(m, level_bits, base_shift)
        for i in range(2, leaf + 1):
            c = -(-m.size // spans[i])
            tables[i] += c
            if m.shared and i == leaf:
                shared_leaf[i] += c
        if leaf == 1 and m.shared:
            shared_leaf[1] += -(-m.size // spans[1])
        area += -(-m.size // spans[2]) * spans[2] if n > 2 else m.size
    if n > 1:
        tables[1] = max(tables[1], -(-area // spans[1]))
    return tables, shared_leaf


def page_table_bytes(processes: int, mappings, shared_tables: bool = False, **radix) -> dict:
    """Page-table bytes of ``processes`` processes that each map ``mappings``.

    Returns {'total': bytes, 'by_level': [bytes per level, top first], 'per_process': bytes of one
    process's private tables}. With ``shared_tables``, the leaf-level tables of shared mappings are
    counted once for all processes instead of once per process.
    """
    processes = check_int("processes", processes, 1, 1 << 20)
    cfg = {**X86_64, **radix}
    tables, shared_leaf = process_tables(mappings, cfg["level_bits"], cfg["base_shift"])
    tb = cfg["table_bytes"]
    if shared_tables:
        private = [t - s for t, s in zip(tables, shared_leaf)]
        by_level = [(processes * p + s) * tb for p, s in zip(private, shared_leaf)]
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
    import pandas as pd

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
