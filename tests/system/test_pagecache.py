"""Internal fragmentation of small files in the page cache."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pagesim.system.pagecache import file_sizes, internal_fragmentation


def test_document_figures():
    # 000_1774b52266f446e5.txt, Internal Fragmentation: a 3KB file leaves 25% of a 4KB page and
    # 95% of a 64KB page unused
    df = internal_fragmentation(file_sizes("3K", 1), ["4K", "64K"])
    assert df.loc["4K", "unused_share"] == 0.25
    assert round(df.loc["64K", "unused_share"] * 100) == 95
    # 1K files: 16x the memory with 64K pages, 64x the bytes needed
    df = internal_fragmentation(file_sizes("1K", 1000), ["4K", "64K"], memory="64M")
    assert df.loc["64K", "bytes_used"] == 16 * df.loc["4K", "bytes_used"] == 64 * df.loc["4K", "bytes_needed"]
    assert df.loc["4K", "files_fitting"] == 1000 and df.loc["64K", "files_fitting"] == 1000
    df = internal_fragmentation(file_sizes("1K", 20000), ["4K", "64K"], memory="64M")
    assert df.loc["4K", "files_fitting"] == 16384 // 1 and df.loc["64K", "files_fitting"] == 1024


@given(st.lists(st.integers(0, 300_000), max_size=50), st.sampled_from([4096, 8192, 65536]))
def test_matches_plain_arithmetic(sizes, p):
    df = internal_fragmentation(sizes, [p])
    row = df.iloc[0]
    used = sum(math.ceil(s / p) * p for s in sizes)
    assert row["bytes_used"] == used and row["bytes_needed"] == sum(sizes) and row["wasted"] == used - sum(sizes)


def test_distributions():
    assert file_sizes({"1K": 2, "3K": 1}).tolist() == [1024, 1024, 3072]
    a = file_sizes(("lognormal", "8K", 1.0), n=1000, seed=1)
    assert a.size == 1000 and (a == file_sizes(("lognormal", "8K", 1.0), n=1000, seed=1)).all()
    assert 4096 < np.median(a) < 16384


def test_bad_input():
    with pytest.raises(ValueError, match="file size -1 is negative"):
        internal_fragmentation([-1, 5])
    with pytest.raises(ValueError, match="page_sizes entry=3000"):
        internal_fragmentation([1], [3000])
    with pytest.raises(ValueError, match="n=None: give the number of files"):
        file_sizes("3K")
    with pytest.raises(ValueError, match=r"spec\['1K'\] \(the count of files of that size\)=-2 is out of range: allowed 0\.\.134217728"):
        file_sizes({"1K": -2})
