"""Page-table memory, and the shared-page-tables figures from stated parameters."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pagesim.system.pagetables import TWICHELL_8GB, Mapping, database_mappings, page_table_bytes, process_tables, shared_page_table_table

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30


def test_tables_by_hand():
    # 1 GiB of 4K pages: 512 PTE tables, 1 PMD table, 1 PUD, 1 PGD
    assert process_tables([Mapping("a", GiB)])[0] == [1, 1, 1, 512]
    # the same with 2M pages: no PTE tables
    assert process_tables([Mapping("a", GiB, "2M")])[0] == [1, 1, 1, 0]
    # 3 MiB of 4K pages: 2 PTE tables (each maps 2 MiB)
    assert process_tables([Mapping("a", 3 * MiB)])[0] == [1, 1, 1, 2]


def test_sharing_counts_leaf_tables_once():
    maps = [Mapping("pool", GiB, shared=True), Mapping("priv", 2 * MiB)]
    private = page_table_bytes(10, maps)
    shared = page_table_bytes(10, maps, shared_tables=True)
    assert private["total"] == 10 * (1 + 1 + 2 + 513) * 4 * KiB
    assert shared["total"] == (10 * (1 + 1 + 2 + 1) + 512) * 4 * KiB


def test_leaf_at_level_one_and_at_the_top():
    # two shared mappings of 1G pages: their entries lie in one PUD, shared; each process keeps its PGD
    maps = [Mapping("a", GiB, "1G", shared=True), Mapping("b", GiB, "1G", shared=True)]
    assert process_tables(maps) == ([1, 1, 0, 0], [0, 1, 0, 0])
    r = page_table_bytes(10, maps, shared_tables=True)
    assert r["by_level"] == [10 * 4 * KiB, 4 * KiB, 0, 0]
    assert r["total"] == 11 * 4 * KiB and r["per_process"] == 4 * KiB
    assert page_table_bytes(10, maps)["total"] == 20 * 4 * KiB
    # a private mapping in the same PUD: the PUD holds private memory's pointers too, so it is not shared
    mixed = maps + [Mapping("c", 2 * MiB)]
    assert process_tables(mixed) == ([1, 1, 1, 1], [0, 0, 0, 0])
    assert page_table_bytes(10, mixed, shared_tables=True)["total"] == 10 * 4 * 4 * KiB
    # two levels of 10 bits: a 4M page is an entry of the page directory, no page table below it
    assert page_table_bytes(1, [Mapping("a", 4 * MiB, "4M")], level_bits=(10, 10))["by_level"] == [4 * KiB, 0]
    assert page_table_bytes(1, [Mapping("a", 4 * MiB, "4M"), Mapping("b", 4 * MiB)], level_bits=(10, 10))["by_level"] == [4 * KiB, 4 * KiB]
    # 1025 4M pages do not fit in the 4 GiB such a table translates
    with pytest.raises(ValueError, match=r"mappings need 4100M of address space .* more than the 4G level_bits=\(10, 10\)"):
        page_table_bytes(1, [Mapping("a", 4100 * MiB, "4M")], level_bits=(10, 10))


def test_shared_page_tables_figures_reproduced():
    # 004_b9bff536459e6bfe.txt: 1.65 GB -> 51 MB (small pages); 53 MB -> 37 MB (huge pages)
    t = shared_page_table_table(**TWICHELL_8GB).set_index(["pool_pages", "page_tables"])["bytes"]
    assert round(t["4K", "private"] / GiB, 2) == 1.65
    assert round(t["4K", "shared"] / MiB) == 51
    assert round(t["2M", "private"] / MiB) == 53
    assert round(t["2M", "shared"] / MiB) == 37
    # "freeing up 20% of the system's memory" (8 GB)
    assert round((t["4K", "private"] - t["4K", "shared"]) / (8 * GiB), 2) == 0.20


def test_errors():
    with pytest.raises(ValueError, match="not a leaf"):
        process_tables([Mapping("a", MiB, "64K")])
    with pytest.raises(ValueError, match="processes=0"):
        page_table_bytes(0, database_mappings(GiB, MiB, MiB))
    with pytest.raises(ValueError, match="size must be positive"):
        Mapping("a", 0)


@pytest.mark.parametrize(
    "args, kwargs, exc, match",
    [
        ((1, "x"), {}, TypeError, r"mappings must be a list or tuple of pagesim.system.pagetables.Mapping, got str 'x'"),
        ((1, Mapping("a", MiB)), {}, TypeError, r"mappings must be a list or tuple .*got Mapping"),
        ((1, None), {}, TypeError, r"mappings must be .*got NoneType None"),
        ((1, []), {}, ValueError, r"mappings=\[\] is empty"),
        ((1, [Mapping("a", MiB), ("b", MiB)]), {}, TypeError, r"mappings\[1\] must be a pagesim.system.pagetables.Mapping, got tuple \('b', 1048576\)"),
        ((1, [Mapping("a", MiB)]), {"level_bits": 9}, TypeError, r"level_bits must be a list or tuple of ints.*got int 9"),
        ((1, [Mapping("a", MiB)]), {"level_bits": ()}, ValueError, r"level_bits=\(\) has 0 levels: allowed 1..8"),
        ((1, [Mapping("a", MiB)]), {"level_bits": (9, 0, 9)}, ValueError, r"level_bits\[1\]=0 is out of range: allowed 1..24"),
        ((1, [Mapping("a", MiB)]), {"level_bits": (9, 9.0)}, TypeError, r"level_bits\[1\] must be an int, got float 9.0"),
        ((1, [Mapping("a", MiB)]), {"level_bits": (24, 24, 24)}, ValueError, r"translate 84 address bits: allowed at most 64"),
        ((1, [Mapping("a", MiB)]), {"base_shift": 3}, ValueError, r"base_shift=3 is out of range: allowed 10..34"),
        ((1, [Mapping("a", MiB)]), {"base_shift": "12"}, TypeError, r"base_shift must be an int, got str '12'"),
        ((1, [Mapping("a", MiB)]), {"table_bytes": 0}, ValueError, r"table_bytes=0 is out of range"),
        ((1, [Mapping("a", MiB)]), {"entry_bytes": 8192}, ValueError, r"entry_bytes=8192 is out of range: allowed 1..4096 \(at most table_bytes=4096\)"),
        ((1, [Mapping("a", MiB)]), {"levels": 4}, TypeError, r"unknown keyword levels=4: allowed level_bits, base_shift, entry_bytes, table_bytes"),
        ((1, [Mapping("a", MiB)]), {"shared_tables": 1}, TypeError, r"shared_tables must be True or False, got int 1"),
    ],
)
def test_bad_arguments_named(args, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        page_table_bytes(*args, **kwargs)


def test_process_tables_checks_its_arguments():
    with pytest.raises(TypeError, match="mappings must be a list or tuple"):
        process_tables("x")
    with pytest.raises(ValueError, match=r"level_bits\[0\]=-1 is out of range"):
        process_tables([Mapping("a", MiB)], level_bits=(-1, 9))


def brute_force_tables(nproc, mappings, bits, base, shared_tables):
    """Every table page a set of processes needs, found by mapping every page at an explicit address.

    Layout as process_tables states it: from address 0, in order, each mapping starting at the first
    address past the previous one that is a multiple of its page size and of the span one level-2
    table covers (2**(base + sum(bits[2:]))). A table is shared (one for all processes) when
    shared_tables is on, it is below the top, and every entry it holds is a leaf entry of a shared
    mapping; otherwise each process has its own. None when the mappings do not fit in the address
    space the table translates."""
    n = len(bits)
    entry_shift = [base + sum(bits[lv + 1 :]) for lv in range(n)]  # bytes one entry at each level maps
    align = 1 << (base + sum(bits[2:]))
    entries = {}  # (level, table index) -> set of (is leaf entry, mapping shared)
    at = 0
    for m in mappings:
        leaf = next(lv for lv in range(n) if (1 << entry_shift[lv]) == m.page_size)
        a = max(align, m.page_size)
        start = (at + a - 1) // a * a
        npages = (m.size + m.page_size - 1) // m.page_size
        for k in range(npages):
            addr = start + k * m.page_size
            for lvl in range(leaf + 1):
                key = (lvl, addr >> (entry_shift[lvl] + bits[lvl]))
                entries.setdefault(key, set()).add((lvl == leaf, m.shared))
        at = start + npages * m.page_size
    if at > 1 << (base + sum(bits)):
        return None
    tables = set()
    for pid in range(nproc):
        tables.add((pid, 0, 0))  # every process has its top-level table
        for (lvl, idx), kinds in entries.items():
            shareable = lvl > 0 and kinds == {(True, True)}
            tables.add(("shared" if shared_tables and shareable else pid, lvl, idx))
    by_level = [0] * n
    for _, lvl, _ in tables:
        by_level[lvl] += 1
    return by_level


@st.composite
def radix_and_mappings(draw):
    """Small radix tables (2..5 levels of 1..3 index bits) and 1..6 mappings with page sizes that are
    leaves of them, sizes of up to 40 pages, each shared or not."""
    n = draw(st.integers(2, 5))
    bits = tuple(draw(st.lists(st.integers(1, 3), min_size=n, max_size=n)))
    base = draw(st.sampled_from([10, 12]))
    leaf_sizes = [1 << (base + sum(bits[lv + 1 :])) for lv in range(n)]
    maps = []
    for i in range(draw(st.integers(1, 6))):
        page = draw(st.sampled_from(leaf_sizes))
        size = draw(st.integers(1, 40 * page))
        maps.append(Mapping(f"m{i}", size, page, shared=draw(st.booleans())))
    return bits, base, maps


@given(radix_and_mappings(), st.integers(1, 3), st.booleans())
def test_page_table_bytes_match_brute_force(radix, nproc, shared_tables):
    bits, base, mappings = radix
    want = brute_force_tables(nproc, mappings, bits, base, shared_tables)
    if want is None:
        with pytest.raises(ValueError, match="more than the .* translate"):
            page_table_bytes(nproc, mappings, shared_tables=shared_tables, level_bits=bits, base_shift=base, table_bytes=64)
        return
    got = page_table_bytes(nproc, mappings, shared_tables=shared_tables, level_bits=bits, base_shift=base, table_bytes=64)
    assert got["by_level"] == [64 * c for c in want]
    assert got["total"] == 64 * sum(want)
    # n processes need n * private + shared tables, so two need one process's private tables more than one
    private = sum(brute_force_tables(2, mappings, bits, base, shared_tables)) - sum(brute_force_tables(1, mappings, bits, base, shared_tables))
    assert got["per_process"] == 64 * private
