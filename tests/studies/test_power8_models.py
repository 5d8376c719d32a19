"""The models behind 003's cache and kernel figures, worked by hand: what the memset issues per 128-byte
line, what a fault zeroes, the loads of the code in each counter's window, and pagesim's data-cache kernel
against the plain replay. Nothing here asserts the document's figures."""

import pytest

from pagesim.studies import power8 as S

MIB16 = 16 << 20


# ----------------------------------------------------------------------------- the program and the kernel, per line


@pytest.mark.parametrize("size", [64 << 10, 1 << 20, MIB16])
def test_memset_of_s_bytes_writes_s_over_128_lines(size):
    """glibc's POWER8 memset of a non-zero byte: one 128-byte line per loop turn, 8 stvx of 16 bytes each."""
    lines = [x for x in S._user_lines("memset", 0) if x[0] < size]
    assert len(lines) == size // 128
    assert {x[1] for x in lines} == {"store"} and {x[2] for x in lines} == {128 // 16}
    assert S.memset_instructions(size) == size // 128 * S.MEMSET_PER_LINE + S.MEMSET_OUTSIDE


@pytest.mark.parametrize("backing,faults", [(64 << 10, 256), (MIB16, 1)])
def test_each_fault_zeroes_its_whole_page_with_one_dcbz_a_line(backing, faults):
    """A fault of a 64K page zeroes 64 KiB, a fault of a 16M page 16 MiB: one dcbz per 128-byte line of the
    fault's page, whatever the program then touches (the random touch stores 256 bytes, 16 MiB are zeroed)."""
    for pattern in ("memset", "random"):
        t = S.program_trace(pattern, backing)
        dcbz = [x for x in t if x[1] == "dcbz"]
        assert all(x[3] == "kernel" and x[2] == 1 for x in dcbz)
        assert len(dcbz) * 128 == MIB16 == faults * backing
        # each page is zeroed in one run of dcbz, before the first store to it
        first_store = next(i for i, x in enumerate(t) if x[3] == "user")
        assert t[first_store - backing // 128 : first_store] == [(ln, "dcbz", 1, "kernel") for ln in range(backing // 128)]


def test_kernel_instructions_keep_the_fault_path_apart_from_zeroing():
    import pandas as pd

    mx = pd.DataFrame(
        [
            {"environment": "ideal", "access": "memset", "page kind": k, "backed by": b, "page faults": f, "pages migrated": 0}
            for k, b, f in (("normal", "64K", 256), ("hugepage", "16M", 1))
        ]
    )
    ki = S.kernel_instructions(mx, fault_path=1000, clear_call=0).set_index("page kind")
    per_64k = (64 << 10) // 128 * S.CLEAR_PER_LINE  # clear_page: 8 dcbz, add, bdnz per 8 lines = 640
    assert per_64k == 640
    assert ki.loc["normal", "zeroing"] == ki.loc["hugepage", "zeroing"] == 256 * per_64k  # 16 MiB either way
    assert ki.loc["normal", "fault path"] == 256 * 1000 and ki.loc["hugepage", "fault path"] == 1000
    assert (ki["copying"] == 0).all()


# ----------------------------------------------------------------------------- the counted window


def test_window_loads_by_hand():
    """Five turns of the enable/disable loops at 10 loads, 12 at the window's edges; the memset's call 4; the
    random touch 256 turns of 8 loop loads and 16 of rand(), and one more loop test of 2."""
    assert S.window_loads("memset") == 5 * 10 + 12 + 4 == 66
    assert S.window_loads("random") == 5 * 10 + 12 + 256 * (8 + 16) + 2 == 6208
    assert S.window_loads("memset", 2.0) == 132 and S.window_loads("random", 0.5) == 3104


@pytest.mark.parametrize("pattern", ["memset", "random"])
@pytest.mark.parametrize("counter", [1, 2])
@pytest.mark.parametrize("backing", [64 << 10, MIB16])
def test_window_trace_counts_what_window_loads_says_for_either_counter_and_every_backing(pattern, counter, backing):
    t = S.window_trace(pattern, backing, counter=counter)
    assert sum(x[2] for x in t if x[3] == "code") == S.window_loads(pattern)
    assert {x[1] for x in t if x[3] == "code"} == {"load"}
    # the program's own accesses inside the window are unchanged: stores only
    assert [x for x in t if x[3] in ("user", "kernel")] == S.program_trace(pattern, backing)


def test_perf_reads_the_window_not_the_mapping():
    """The window's loads are perf's references; the memset's 16 MiB add none."""
    got = S.replay_engine(S.window_trace("memset", 64 << 10))
    assert got[("code", "load")][0] == 66
    assert ("user", "load") not in got and got[("user", "store")][0] == MIB16 // 16


def test_kernel_zeroing_evicts_the_window_only_if_dcbz_allocates():
    """Lines warmed before the window stay while only stores and non-allocating dcbz run; if dcbz brings its
    lines in, 16 MiB of them push every window line out, and the loads after the memset miss."""
    t = S.window_trace("memset", MIB16)
    assert S.replay_engine(t)[("code", "load")][1] == 0
    after = {x[0] for x in t[max(i for i, x in enumerate(t) if x[1] == "dcbz") :] if x[3] == "code"}
    assert S.replay_engine(t, allocate=("load", "dcbz"))[("code", "load")][1] == len(after)


# ----------------------------------------------------------------------------- pagesim's cache kernel = the plain replay


def _traces():
    yield [(ln, op, 1, "user") for ln in range(3000) for op in ("load", "store")]
    yield [(ln % 700, "load", 2, "user") for ln in range(5000)] + [(ln, "dcbz", 1, "kernel") for ln in range(600)]
    for pattern in ("memset", "random"):
        for backing, moved in ((64 << 10, 0), (MIB16, 0), (MIB16, 3)):
            yield S.window_trace(pattern, backing, moved)


@pytest.mark.parametrize("allocate", [("load",), ("load", "dcbz")])
def test_replay_engine_gives_the_plain_replays_counters(allocate):
    for t in _traces():
        assert S.replay_engine(t, allocate=allocate) == S.replay(t, allocate=allocate)


def test_replay_engine_with_a_smaller_cache():
    small = S.L1D(size=4 << 10, ways=2)
    t = [(ln * 7 % 97, op, 1, "user") for ln in range(4000) for op in ("load", "store", "load")]
    assert S.replay_engine(t, small) == S.replay(t, small)
