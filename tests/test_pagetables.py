"""Page-table memory, and the shared-page-tables figures from stated parameters."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pagesim.pagetables import TWICHELL_8GB, Mapping, database_mappings, page_table_bytes, process_tables, shared_page_table_table

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


def brute_force_tables(nproc, mappings, bits, base, shared_tables):
    """Every table page a set of processes needs, found by mapping every page: mappings laid out one
    after another from address 0, each on a level-2-span boundary (the module's stated placement)."""
    n = len(bits)
    shifts = [base + sum(bits[lv + 1 :]) for lv in range(n)]  # entry shift at each level
    span2 = 1 << (shifts[2] + bits[2]) if n > 2 else 1
    tables = set()
    at = 0
    for m in mappings:
        leaf = next(lv for lv in range(n) if (1 << shifts[lv]) == m.page_size)
        for pid in range(nproc):
            for a in range(at, at + m.size, m.page_size):
                for lvl in range(leaf + 1):
                    owner = "shared" if (shared_tables and m.shared and lvl == leaf) else pid
                    tables.add((owner, lvl, a >> (shifts[lvl] + bits[lvl])))
        at += -(-m.size // span2) * span2
    by_level = [0] * n
    for _, lvl, _ in tables:
        by_level[lvl] += 1
    return by_level


@given(st.lists(st.tuples(st.integers(1, 40), st.sampled_from([4 * KiB, 32 * KiB]), st.booleans()), min_size=1, max_size=5), st.integers(1, 3), st.booleans())
def test_page_table_bytes_match_brute_force(maps, nproc, shared_tables):
    bits, base = (3, 3, 3, 3), 12  # small tables (8 entries) so every page can be enumerated
    mappings = [Mapping(f"m{i}", k * p, p, shared=s) for i, (k, p, s) in enumerate(maps)]
    want = brute_force_tables(nproc, mappings, bits, base, shared_tables)
    got = page_table_bytes(nproc, mappings, shared_tables=shared_tables, level_bits=bits, base_shift=base, table_bytes=64)
    assert got["by_level"] == [64 * c for c in want]
