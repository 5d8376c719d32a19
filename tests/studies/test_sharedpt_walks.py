"""Notebook 05's page walks as the message's counter counts them: the TLB misses' walks, which
sharing the tables cannot change, plus the walks of the minor faults it saves (the faulting walk is
a TLB miss's; the retried access walks again). The faults of the measured window depend on how long
the processes ran before it (``warmup``), checked by hand and against the simulator."""

import numpy as np
import pytest

from pagesim.engine.processes import simulate_processes
from pagesim.studies import sharedpt as S

# --------------------------------------------------------------------------- faults by hand


def test_two_processes_four_pages_each_by_hand():
    """Each process touches pages 0-3 once: private tables, 4 faults each (8); shared tables, the
    first toucher of each page faults (4)."""
    assert S.first_touch_faults([[0, 1, 2, 3], [3, 2, 1, 0]]) == (8, 4)
    # touching a page again faults no more; the order of the accesses changes nothing
    assert S.first_touch_faults([[0, 0, 1, 1, 2, 3], [0, 1, 2, 3, 3]]) == (8, 4)
    # different pages: sharing saves nothing
    assert S.first_touch_faults([[0, 1], [2, 3]]) == (4, 4)


def test_pages_touched_before_the_window_fault_no_more():
    """Process 0 touched page 0 before the window, process 1 nothing: private, 3 + 4 = 7 faults;
    shared, page 0 is already in the shared table: pages 1, 2, 3 fault once (3)."""
    assert S.first_touch_faults([[0, 1, 2, 3], [0, 1, 2, 3]], before=[[0], []]) == (7, 3)
    # everything touched before by one process: with shared tables nobody faults, privately the other does
    assert S.first_touch_faults([[0, 1, 2, 3], [0, 1, 2, 3]], before=[[0, 1, 2, 3], []], pages=4) == (4, 0)
    with pytest.raises(ValueError, match="page numbers"):
        S.first_touch_faults([[0, 5]], pages=4)
    with pytest.raises(ValueError, match="processes"):
        S.first_touch_faults([[0], [1]], before=[[0]])


def test_counted_walks_by_hand():
    """8 TLB misses' walks on each side; 8 pool faults privately, 4 shared, and 2 text faults
    privately, 1 shared: one more walk for each fault (the retried access), on its own side;
    with kernel walks, those of the handler for every fault of either side."""
    a = {"ITLB walks": 8, "DTLB walks": 8, "ITLB faults": 2, "DTLB faults": 8}
    b = {"ITLB walks": 8, "DTLB walks": 8, "ITLB faults": 1, "DTLB faults": 4}
    assert S.counted_walks(a) == (10, 16) and S.counted_walks(b) == (9, 12)
    assert S.counted_walks(a, kernel=(1, 2)) == (10 + 10, 16 + 20)
    assert S.counted_walks({"ITLB walks": 5, "DTLB walks": 7}) == (5, 7)  # no faults counted: the walks alone


def test_two_processes_four_pages_each_through_the_simulator():
    """The same case run by pagesim on the Xeon model: each of the 8 accesses is a process's first
    touch of a page, so a TLB miss and a walk with private or shared tables (8 walks); the
    simulator's faults are 8 and 4, as counted by hand; the counted walks are 8 + 8 = 16 and
    8 + 4 = 12 (-25%)."""
    layout = S.database_layout(pool=4 * 4096, text=4096)
    addrs = [np.array([S.POOL_START + 4096 * j for j in order], dtype=np.uint64) for order in ((0, 1, 2, 3), (3, 2, 1, 0))]
    kinds = [np.zeros(4, dtype=np.uint8)] * 2
    rows = []
    for shared in (False, True):
        ds = simulate_processes(
            S.xeon_paxville(), addresses=addrs, kinds=kinds, layout=layout, processes=2, quantum=4, shared=("text", "pool"), shared_tables=shared, caches=()
        )
        walks, faults = int(ds["walks"].sel(side="data").sum()), int(ds["faults"].sum())
        rows.append({"ITLB walks": int(ds["walks"].sel(side="instr").sum()), "DTLB walks": walks, "ITLB faults": 0, "DTLB faults": faults})
    assert [r["DTLB walks"] for r in rows] == [8, 8] and [r["DTLB faults"] for r in rows] == [8, 4]
    assert S.first_touch_faults([(a - S.POOL_START) >> 12 for a in addrs]) == (8, 4)
    (_, p), (_, s) = S.counted_walks(rows[0]), S.counted_walks(rows[1])
    assert (p, s) == (16, 12) and S.change(p, s) == -25.0


# --------------------------------------------------------------------------- the database model


SMALL = {"processes": 3, "quantum": 500, "pool": 16 << 20, "text": 256 << 10, "accesses": 4000}


@pytest.mark.parametrize("pool_pages", ["4K", "2M"])
def test_window_faults_from_the_start_are_the_simulators(pool_pages):
    """With no warm-up the window's faults by side add up to the faults the simulator counted from
    the processes' start, with private and with shared tables."""
    t = S.database_run(pool_pages, seed=2, warmup=0.0, **SMALL).set_index("page tables")
    for side in ("private", "shared"):
        r = t.loc[side]
        assert r["ITLB faults"] + r["DTLB faults"] == r["page faults"], side
        assert (r["ITLB walks counted"], r["DTLB walks counted"]) == S.counted_walks(r)
    assert t.loc["shared", "DTLB faults"] < t.loc["private", "DTLB faults"]
    assert t.loc["shared", "ITLB faults"] == (256 << 10) >> 12  # every hot-text page, faulted once for all
    e = S.sharing_effects(t.reset_index())
    assert e["ITLB walks"] == 0 and e["DTLB walks"] == 0  # the TLB misses' walks do not move
    assert e["DTLB walks counted"] < 0 and e["ITLB walks counted"] < 0  # the faults' walks do


def test_a_long_warm_up_leaves_no_faults_in_the_window():
    """After 16 pool sweeps every process has touched its pages (e^-16 of the pool is left): the
    counted walks are the TLB misses' walks, unchanged by sharing; the faults fall as the warm-up
    grows."""
    t = S.database_run("4K", seed=2, warmup=16.0, **SMALL).set_index("page tables")
    assert (t["ITLB faults"] == 0).all() and (t["DTLB faults"] == 0).all()
    e = S.sharing_effects(t.reset_index())
    assert e["ITLB walks counted"] == 0 and e["DTLB walks counted"] == 0
    c = S.warmup_curve({**S.DATABASE, **SMALL}, "4K", seed=2, warmups=(0.0, 1.0, 4.0))
    assert list(c["DTLB faults private"]) == sorted(c["DTLB faults private"], reverse=True)
    assert c["DTLB faults private"].iloc[0] > c["DTLB faults private"].iloc[-1]
    assert S.walk_figures(c, 0.0)["DTLB"] < 0
    with pytest.raises(ValueError, match="warmup"):
        S.database_run("4K", warmup=-1.0, **SMALL)


def test_warm_up_draws_are_seeded_and_the_same_for_either_page_size():
    t4, p4 = S.warmup_pages(2, 1.0, 8 << 20, 256 << 10, 0.25, "4K", seed=3)
    t2, p2 = S.warmup_pages(2, 1.0, 8 << 20, 256 << 10, 0.25, "2M", seed=3)
    assert len(p4[0]) == (8 << 20) >> 12 and len(t4[0]) == round(len(p4[0]) * 0.25 / 0.75)
    assert np.array_equal(p4[0] >> 9, p2[0]) and np.array_equal(t4[1], t2[1])
    assert not np.array_equal(p4[0], p4[1])
    assert S.warmup_pages(2, 0.0, 8 << 20, 256 << 10, 0.25)[1][0].size == 0


def test_the_warm_up_is_a_named_choice():
    assert "warmup" in S.DATABASE and "warmup" in S.CHOICES and S.CHOICES["warmup"][0] in S.WALK_CHOICES
    assert set(S.SIM_CHOICES) < set(S.WALK_CHOICES)


# --------------------------------------------------------------------------- the notebook's findings


@pytest.fixture(scope="module")
def findings(quick_findings):
    return quick_findings("05_shared_page_tables")


@pytest.mark.parametrize("fid", ["walks", "walks-huge"])
def test_walk_findings_count_the_faults_and_sweep_the_warm_up(findings, fid):
    f = findings[fid]
    assert f["verdict"] == "contradicted" and f["figures"] == 2
    assert "minor faults" in f["why"] and "warm-up" in f["why"] and "No warm-up puts both rows in their bands" in f["why"]
    assert S.CHOICES["warmup"][0] in f["swept"] and set(S.SIM_CHOICES) <= set(f["swept"])
    assert "row in its band" in f["sensitivity"]
