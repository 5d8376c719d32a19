"""Notebook 02 as a lesson: the tlb-sets answer says what a small LRU simulation of the set does, and
every figure of the notebook gives one number for the solver's set-up (64 planes of 1040 KiB)."""

from __future__ import annotations

import re

import pytest

from pagesim import teach
from pagesim.machines import machine
from pagesim.units import parse_size

L2 = dict(machine="opteron-k8", page="4K", structure="L2 DTLB 4K")


def lru_misses(stride: int, count: int, sets: int, ways: int, sweeps: int = 3) -> tuple[int, int]:
    """Misses of a sweep over ``count`` pages ``stride`` bytes apart, repeated, in a ``sets`` x ``ways``
    LRU structure of 4 KiB entries: (misses of the first sweep, misses of each later sweep)."""
    content: dict[int, list[int]] = {}
    misses = []
    for _ in range(sweeps):
        n = 0
        for i in range(count):
            page = i * stride // 4096
            s = content.setdefault(page % sets, [])
            if page in s:
                s.remove(page)
            else:
                n += 1
                if len(s) == ways:
                    s.pop(0)
            s.append(page)
        misses.append(n)
    assert len(set(misses[1:])) == 1
    return misses[0], misses[1]


@pytest.mark.parametrize(
    "stride, count",
    [("1040K", 64), ("1M", 64), ("1028K", 64), ("2080K", 64), ("1536K", 64), ("6K", 64), ("1032K", 300), ("1040K", 300)],
)
def test_tlb_sets_answer_says_what_the_set_does(stride, count):
    st = machine("opteron-k8").structure("L2 DTLB 4K")
    r = teach.check_answer("tlb-sets", None, stride=stride, count=count, **L2)
    first, again = lru_misses(parse_size(stride), count, st.sets, st.ways)
    pages = len({i * parse_size(stride) // 4096 for i in range(count)})
    how = r.reveal()
    assert f"land in {r.answer} distinct set" in how
    if again == 0:
        assert "every revisit hits" in how and "miss" not in how
    elif again == first == pages:
        assert "misses on every revisit" in how and "others hit" not in how
    else:
        m = re.search(r"(\d+) of the (\d+) pages sit in sets holding more than", how)
        assert m and int(m.group(1)) == again and int(m.group(2)) == pages, how
        assert "the others hit" in how


def test_tlb_sets_1040k_planes_fit_and_1m_planes_thrash():
    fit = teach.check_answer("tlb-sets", 32, stride="1040K", count=64, **L2)
    assert fit.right and "2 per set" in fit.how and "4 ways" in fit.how
    assert "every access misses" not in fit.how and "misses" not in fit.how
    thrash = teach.check_answer("tlb-sets", 1, stride="1M", count=64, **L2)
    assert thrash.right and "64 per set" in thrash.how and "misses on every revisit" in thrash.how
