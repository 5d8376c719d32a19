"""Agreement with the running Linux kernel: real minor faults (getrusage) equal simulated faults,
for regions that are whole 2 MiB pages and regions that are not (a base-page tail or head)."""

import pytest

from pagesim.host.linux import compare_faults, why_not

# (size, offset past a 2 MiB boundary, sequential faults with 4K pages, with THP)
CASES = [
    ("32M", 0, 8192, 16),
    ("3M", 0, 768, 257),  # 1 x 2M + 256 x 4K
    ("5M", 0, 1280, 258),
    ("17M", 0, 4352, 264),
    ("1M", 0, 256, 256),  # no whole 2M range: all 4K
    ("2M+4K", 0, 513, 2),
    ("4M", "1M", 1024, 513),  # 1M head, one 2M page, 1M tail
    ("6M", "2044K", 1536, 514),  # 1-page head, two 2M pages, 511-page tail
]


@pytest.mark.parametrize("pattern", ["sequential", "random"])
@pytest.mark.parametrize("thp", [False, True], ids=["4K", "THP"])
@pytest.mark.parametrize("size,offset,seq_4k,seq_thp", CASES, ids=[f"{c[0]}@{c[1]}" for c in CASES])
def test_real_faults_equal_simulated(size, offset, seq_4k, seq_thp, thp, pattern):
    reason = why_not(thp, partial=(size, offset) != ("32M", 0))
    if reason:
        pytest.skip(reason)
    r = compare_faults(size, thp=thp, pattern=pattern, touches=2000, seed=5, offset=offset)
    if thp and r.huge_pages_mapped is not None and r.huge_pages_mapped < r.simulated_huge_pages:
        pytest.skip(f"the kernel mapped {r.huge_pages_mapped} of {r.simulated_huge_pages} huge pages (no free 2 MiB blocks now): not a THP run")
    assert r.real_faults == r.simulated_faults, str(r)
    if pattern == "sequential":
        assert r.simulated_faults == (seq_thp if thp else seq_4k)


def test_bad_requests():
    with pytest.raises(ValueError, match=r"size='3000' must be a positive multiple of 4K"):
        compare_faults("3000")
    with pytest.raises(ValueError, match="larger than the 4 GiB"):
        compare_faults("8G")
    with pytest.raises(ValueError, match="pattern='zigzag'"):
        compare_faults("2M", pattern="zigzag")
    for off in ("1K", "2M"):
        with pytest.raises(ValueError, match=rf"offset='{off}' must be a multiple of 4K below 2M"):
            compare_faults("2M", offset=off)
    for kw, match in (
        (dict(touches=0), "touches=0"),
        (dict(touches=-1), "touches=-1"),
        (dict(touches=10**9), "touches=1000000000"),
        (dict(touches=2.5), "touches must be an int"),
        (dict(thp="yes"), "thp must be True or False"),
        (dict(seed="x"), "seed must be an int"),
    ):
        with pytest.raises((TypeError, ValueError), match=match):
            compare_faults("2M", pattern="random", **kw)


def test_cli_host_takes_sizes_that_are_not_whole_huge_pages(capsys):
    from pagesim.cli import main

    # no whole 2M range in either region, so the THP runs need no free 2 MiB block to agree
    code = main(["host", "--size", "1M", "--size", "2M+4K", "--offset", "1M"])
    out = capsys.readouterr().out
    assert code == 0, out
    runs = 4 * sum(why_not(thp, partial=True) is None for thp in (False, True))
    assert out.count("(equal)") == runs
    if why_not(True, partial=True) is None:
        assert "2052K starting 1M past a 2M boundary sequential touch, THP (MADV_HUGEPAGE): real minor faults 513, simulated 513" in out
    assert main(["host", "--size", "3000"]) == 2
    assert "size='3000' must be a positive multiple of 4K" in capsys.readouterr().err


def test_multi_size_thp_stops_a_partial_comparison(tmp_path, monkeypatch):
    # a kernel that may back the tail with 64K folios: pagesim's count would not be the kernel's
    import pagesim.host.linux as H

    (tmp_path / "enabled").write_text("always [madvise] never\n")
    for d, mode in (("hugepages-64kB", "always inherit madvise [never]"), ("hugepages-2048kB", "always [inherit] madvise never")):
        (tmp_path / d).mkdir()
        (tmp_path / d / "enabled").write_text(mode + "\n")
    monkeypatch.setattr(H, "THP_PATH", str(tmp_path / "enabled"))
    if H.why_not(True) is not None:
        pytest.skip(H.why_not(True))
    assert H.smaller_thp_sizes() == [] and H.why_not(True, partial=True) is None
    (tmp_path / "hugepages-64kB" / "enabled").write_text("always [inherit] madvise never\n")
    assert H.smaller_thp_sizes() == [64 << 10]
    assert H.why_not(True) is None  # whole 2 MiB pages only: the small sizes play no part
    assert "multi-size THP is enabled for 64K" in H.why_not(True, partial=True)
    with pytest.raises(RuntimeError, match="multi-size THP is enabled for 64K"):
        H.compare_faults("3M", thp=True)


def test_cli_host_checks_every_size_before_it_runs_any(capsys, monkeypatch):
    """`--size 3M --size 1K` ran every 3M comparison, then failed on 1K: every value is checked first."""
    import pagesim.host.linux as H
    from pagesim.cli import main

    monkeypatch.setattr(H, "compare_faults", lambda *a, **k: pytest.fail("a comparison ran before every size was checked"))
    assert main(["host", "--size", "3M", "--size", "1K"]) == 2
    captured = capsys.readouterr()
    assert "size='1K' must be a positive multiple of 4K" in captured.err and captured.out == ""


def test_touch_faults_counts_the_buffers_pages_alone():
    if why_not(False):
        pytest.skip(why_not(False))
    import mmap
    import threading

    import numpy as np

    from pagesim.host.linux import touch_faults

    stop, churn = threading.Event(), []

    def allocate():  # another thread of the process making and dropping objects all the while
        while not stop.is_set():
            churn.append([object() for _ in range(1000)])
            del churn[:-4]

    t = threading.Thread(target=allocate)
    t.start()
    try:
        for pages in (1, 3, 64, 1000):
            mm = mmap.mmap(-1, pages * 4096)
            words = np.frombuffer(mm, dtype=np.int64)
            idx = np.arange(pages, dtype=np.int64) * 512 + 7
            vals = np.arange(pages, dtype=np.int64) + 11
            assert touch_faults(words, idx, vals) == pages  # one first touch per page
            assert touch_faults(words, idx, vals) == 0  # the pages are there now
            assert np.array_equal(words[idx], vals) and int(np.count_nonzero(words)) == pages
            del words
            mm.close()
    finally:
        stop.set()
        t.join()
    buf = np.zeros(4, np.int64)
    one = np.array([1], np.int64)
    for args, err, msg in (
        ((buf, np.array([4], np.int64), one), ValueError, r"idx holds 4, outside buf's indices 0..3"),
        ((buf, np.array([-1], np.int64), one), ValueError, r"idx holds -1, outside buf's indices 0..3"),
        ((np.zeros((2, 4), np.int64), one - 1, one), ValueError, r"buf must be a 1-D numpy array, got one of shape \(2, 4\)"),
        ((buf, np.array([0, 1]), one), ValueError, "vals has 1 values for 2 indices in idx"),
        (([0, 0], one - 1, one), TypeError, "buf must be a 1-D numpy array, got list"),
        ((buf, np.array([0.0]), one), TypeError, "idx has dtype <f8: it must hold native-order integers"),
        ((buf, one - 1, np.array(["a"])), TypeError, "vals has dtype <U1: it must be buf's"),
        ((buf, one - 1, np.array([1.5])), TypeError, r"vals has dtype <f8: it must be buf's \(<i8\)"),
        ((np.zeros(4, np.float16), one - 1, np.zeros(1, np.float16)), TypeError, "buf has dtype <f2: it must hold native-order"),
        ((np.zeros(4, ">f8"), one - 1, np.zeros(1, ">f8")), TypeError, "buf has dtype >f8"),
        ((buf, np.array([0], ">i8"), one), TypeError, "idx has dtype >i8: it must hold native-order integers"),
        ((np.ma.array(buf), one - 1, one), TypeError, "buf must be a 1-D numpy array, got MaskedArray"),
    ):
        with pytest.raises(err, match=msg):
            touch_faults(*args)
    frozen = np.zeros(4, np.int64)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="buf is read-only"):
        touch_faults(frozen, one - 1, one)
    # values on pages nothing has touched yet: read before the count, so only buf's page counts
    mm = mmap.mmap(-1, 4096)
    words = np.frombuffer(mm, dtype=np.int64)
    assert touch_faults(words, np.zeros(300_000, np.int64), np.zeros(300_000, np.int64)) == 1
    del words
    mm.close()
