"""Notebook 05's walk-count mechanisms, checked by hand: the faults of a window in the order the core
runs it (private tables: every process faults on its own first touch; shared tables: only the first
toucher of a page), and the fault handler's own walks, counted when the user's accesses have evicted
its kernel TLB entries since the previous fault."""

import numpy as np
import pytest

from pagesim.studies import sharedpt as S

P = S.POOL_START
T = S.TEXT_START


def _reads(pages):
    return np.array([P + 4096 * p for p in pages], dtype=np.uint64), np.zeros(len(pages), dtype=np.uint8)


def test_sharing_removes_the_second_process_faults():
    """Two processes read pages 0-3; process 0 runs first (quantum 4): with shared tables only its
    four first touches fault, the second process finds every entry written."""
    (a0, k0), (a1, k1) = _reads([0, 1, 2, 3]), _reads([3, 2, 1, 0])
    for shared, want in ((False, [1, 1, 1, 1, 1, 1, 1, 1]), (True, [1, 1, 1, 1, 0, 0, 0, 0])):
        order, side, page, proc, fault = S.fault_events([a0, a1], [k0, k1], 4, shared=shared)
        assert list(proc) == [0, 0, 0, 0, 1, 1, 1, 1] and list(fault.astype(int)) == want
    # the run order: chunk by chunk, process by process
    order, side, page, proc, fault = S.fault_events([a0, a1], [k0, k1], 2)
    assert list(proc) == [0, 0, 1, 1, 0, 0, 1, 1] and list(page) == [0, 1, 3, 2, 2, 3, 1, 0]
    # shared, in that order: 0, 1 (process 0), 3, 2 (process 1) fault; nothing after
    assert list(S.fault_events([a0, a1], [k0, k1], 2, shared=True)[4].astype(int)) == [1, 1, 1, 1, 0, 0, 0, 0]


def test_pages_touched_before_do_not_fault():
    (a0, k0), (a1, k1) = _reads([0, 1, 2, 3]), _reads([0, 1, 2, 3])
    text = np.zeros((2, 1), dtype=bool)
    pool = np.zeros((2, 4), dtype=bool)
    pool[0, 0] = True  # process 0 touched page 0 before the window
    f_priv = S.fault_events([a0, a1], [k0, k1], 4, before=(text, pool))[4]
    f_shared = S.fault_events([a0, a1], [k0, k1], 4, before=(text, pool), shared=True)[4]
    assert f_priv.sum() == 7 and f_shared.sum() == 3


def test_text_faults_are_on_the_fetch_side():
    a = np.array([T, P, T + 4096, T], dtype=np.uint64)
    k = np.array([1, 0, 1, 1], dtype=np.uint8)
    order, side, page, proc, fault = S.fault_events([a, a.copy()], [k, k.copy()], 4, shared=True)
    assert list(fault[side == 1].astype(int)) == [1, 1, 0, 0, 0, 0] and fault[side == 0].sum() == 1


def test_handler_entries_evicted_only_after_a_tlb_full_of_other_pages():
    """Faults on pages 1000 and 1001 with 70 distinct pages read between them (already touched
    before the window): the handler's DTLB entries are gone (two evictions, the first fault counts
    as one). With 30 pages between, they are still there (one). The faulting page counts too (its
    retried access comes after the handler): 63 pages between fill the 64 entries, 62 do not."""
    for between, want in ((70, 2), (30, 1), (63, 2), (62, 1)):
        pages = [1000] + list(range(between)) + [1001]
        a, k = _reads(pages)
        pool = np.zeros((1, 1002), dtype=bool)
        pool[0, :between] = True
        n, it, dt = S.handler_evictions([a], [k], len(pages), before=(np.zeros((1, 1), dtype=bool), pool))
        assert (n, dt) == (2, want), between
        assert it == 1  # no fetch between the faults: the handler's code entry stays


def test_a_context_switch_frees_the_slots_it_empties():
    """70 distinct pages between two faults, but split by a context switch into 35 and 35: the flush
    empties the user's entries, so neither stretch fills the 64-entry TLB and the handler's (global)
    entries survive."""
    p0 = [1000] + list(range(35))  # process 0, quantum 36
    p1 = list(range(100, 135)) + [1001]  # process 1
    (a0, k0), (a1, k1) = _reads(p0), _reads(p1)
    pool = np.zeros((2, 1002), dtype=bool)
    pool[:, :135] = True
    n, it, dt = S.handler_evictions([a0, a1], [k0, k1], 36, before=(np.zeros((2, 1), dtype=bool), pool))
    assert (n, dt) == (2, 1)
    n, it, dt = S.handler_evictions([a0, a1], [k0, k1], 36, before=(np.zeros((2, 1), dtype=bool), pool), entries=30)
    assert dt == 2


SMALL = {"processes": 3, "quantum": 500, "pool": 16 << 20, "text": 256 << 10, "accesses": 4000}


@pytest.mark.parametrize("warmup", [0.0, 1.0])
def test_the_ordered_faults_are_the_window_faults(warmup):
    """Ordering the window's accesses changes no fault count: the ordered model gives the counts of
    the order-free one, on each side, with private and shared tables."""
    p = {**S.DATABASE, **SMALL}
    addrs, kinds = S.database_streams(p["processes"], p["accesses"], p["pool"], p["text"], p["fetch_share"], 1)
    old = S._warm_masks(p["processes"], warmup, p["pool"], p["text"], p["fetch_share"], "4K", 1)
    wf = S.window_faults("4K", seed=1, **{**SMALL, "warmup": warmup})
    for shared, kind in ((False, "private"), (True, "shared")):
        _, side, _, _, fault = S.fault_events(addrs, kinds, p["quantum"], "4K", old, shared)
        assert (int(fault[side == 1].sum()), int(fault[side == 0].sum())) == (wf[kind]["ITLB"], wf[kind]["DTLB"])


def test_handler_walks_scale_with_the_assumed_walks_and_vanish_for_a_user_mode_counter():
    t = S.database_run("4K", seed=1, warmup=2.0, **SMALL).set_index("page tables")
    z = S.database_run("4K", seed=1, warmup=2.0, kernel_itlb=0.0, kernel_dtlb=0.0, **SMALL).set_index("page tables")
    d = S.database_run("4K", seed=1, warmup=2.0, kernel_itlb=2.0, kernel_dtlb=8.0, **SMALL).set_index("page tables")
    for side in ("private", "shared"):
        assert d.loc[side, "DTLB handler walks"] == 2 * t.loc[side, "DTLB handler walks"]
        assert z.loc[side, "DTLB handler walks"] == 0 and z.loc[side, "ITLB handler walks"] == 0
        # a user-mode counter: the TLB misses' walks and one retry per fault
        r = z.loc[side]
        assert r["DTLB walks counted"] == r["DTLB walks"] + r["DTLB faults"]
        assert t.loc[side, "DTLB walks counted"] >= r["DTLB walks counted"]
    assert t.loc["private", "DTLB faults"] > t.loc["shared", "DTLB faults"]


def test_the_handler_walks_are_named_choices_swept_down_to_zero():
    for k in ("kernel_itlb", "kernel_dtlb"):
        assert k in S.DATABASE and S.CHOICES[k][0] in S.WALK_CHOICES
        v = S.DATABASE[k]
        assert S.around(v, k) == (0.0, v / 2, v, 2 * v)
    assert S.COUNTER_MODES == "user and kernel" and S.TLB_ENTRIES == S.xeon_paxville().structures[0].entries


def test_the_data_misses_alone_leave_out_the_walks_references():
    """The retired-load reading of the cache counters: the data reads' misses only (L1D: those served
    by L2 or memory; L2: those served by memory), whatever the walks' references do."""
    import pandas as pd

    base = {"ITLB walks": 1, "DTLB walks": 1, "accesses": 10, "modelled cycles": 1.0, "walk refs L1D": 0, "walk refs L2": 0, "walk refs memory": 0}
    a = {**base, "page tables": "private", "L1D misses (all)": 300, "L2 misses (all)": 250, "data L2": 20, "data memory": 80}
    b = {**base, "page tables": "shared", "L1D misses (all)": 150, "L2 misses (all)": 100, "data L2": 10, "data memory": 80}
    e = S.sharing_effects(pd.DataFrame([a, b]))
    assert e["L1D data misses"] == pytest.approx(-10) and e["L2 data misses"] == 0
    assert e["L1D misses"] == pytest.approx(-50) and e["L2 misses"] == pytest.approx(-60)
    assert "1stL_cache_load_miss_retired" in S.retired_load_reading(e) and "-10.00%" in S.retired_load_reading(e)
