"""Page-table memory, and the shared-page-tables figures from stated parameters."""
import pytest

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
