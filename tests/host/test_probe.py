"""The latency probe (pagesim.host.probe): the kernel on hand-made cycles, knee finding on made-up curves,
and a small real run checked for its shape and direction, never for absolute times."""

import numpy as np
import pandas as pd
import pytest

from pagesim._kernels.chase import chase
from pagesim.host import probe as P
from pagesim.host.linux import why_not


def test_chase_kernel_follows_the_cycle():
    buf = np.array([2, 0, 3, 1], dtype=np.int64)  # 0 -> 2 -> 3 -> 1 -> 0
    assert [int(chase(buf, 0, k)) for k in range(6)] == [0, 2, 3, 1, 0, 2]


def test_cycle_is_one_cycle_over_every_element():
    rng = np.random.default_rng(3)
    for stride, size in (("page", 64 << 10), ("line", 16 << 10)):
        order, succ = P._cycle(size, stride, rng)
        n = size // (4096 if stride == "page" else 64)
        assert order.size == n == np.unique(order).size
        buf = np.full(size // 8, -1, dtype=np.int64)
        buf[order] = succ
        i, seen = int(order[0]), set()
        for _ in range(n):
            seen.add(i)
            i = int(buf[i])
        assert i == int(order[0]) and len(seen) == n  # back at the start after exactly n loads
        if stride == "page":
            assert np.array_equal(np.sort(order) // 512, np.arange(n))  # one element in every page


def test_probe_sizes():
    assert P.probe_sizes("16K", "64K") == [16384, 24576, 32768, 45056, 65536]
    assert P.probe_sizes("16K", "1G")[-1] == 1 << 30 and len(P.probe_sizes("16K", "1G")) == 33
    assert P.probe_sizes("1M", "1M", per_octave=4) == [1 << 20]
    with pytest.raises(ValueError, match="min_size=8K is out of range"):
        P.probe_sizes("8K", "1M")
    with pytest.raises(ValueError, match="max_size=8G is out of range"):
        P.probe_sizes("16K", "8G")
    with pytest.raises(ValueError, match="per_octave=0"):
        P.probe_sizes("16K", "1M", per_octave=0)


def test_find_knees_on_made_up_curves():
    sizes = [1 << k for k in range(14, 24)]
    flat_step = [2, 2, 2, 2, 6, 6, 6, 6, 6, 6]
    (k,) = P.find_knees(sizes, flat_step)
    assert (k.start, k.end, k.rise) == (sizes[3], sizes[4], 3.0)
    gradual = [2, 2, 2, 3, 4, 4.4, 4.4, 4.4, 4.4, 4.4]  # rises over three steps: one knee
    (k,) = P.find_knees(sizes, gradual)
    assert (k.start, k.end) == (sizes[2], sizes[5])
    spike = [2, 2, 2, 5, 2, 2, 2, 2, 2, 2]  # one high point the next size does not keep: noise
    assert P.find_knees(sizes, spike) == []
    two = [2, 2, 5, 5, 5, 5, 20, 20, 20, 20]
    assert [(k.start, k.end) for k in P.find_knees(sizes, two)] == [(sizes[1], sizes[2]), (sizes[5], sizes[6])]
    assert P.find_knees(sizes, [2] * 10) == []
    with pytest.raises(ValueError, match="sizes must increase"):
        P.find_knees(sizes[::-1], flat_step)
    with pytest.raises(ValueError, match="positive and finite"):
        P.find_knees(sizes, [2] * 9 + [float("nan")])


def _fake(ns4, nst, sizes):
    rows = [{"size": s, "page": "4K", "stride": "page", "median_ns": a, "q1_ns": a, "q3_ns": a, "min_ns": a, "loads": 1} for s, a in zip(sizes, ns4)]
    rows += [{"size": s, "page": "THP", "stride": "page", "median_ns": b, "q1_ns": b, "q3_ns": b, "min_ns": b, "loads": 1} for s, b in zip(sizes, nst)]
    return P.ProbeResult(runs=None, medians=pd.DataFrame(rows), faults=pd.DataFrame(), presets=["skylake"])


def test_thp_direction_rule():
    sizes = [4 << 20, 8 << 20, 16 << 20, 32 << 20, 64 << 20]  # skylake's 4K STLB reach is 6M
    ok = P.thp_direction(_fake([5, 9, 20, 30, 60], [5, 7, 21, 20, 30], sizes))
    assert ok["holds"] and ok["reach"] == 6 << 20 and len(ok["pairs"]) == 4 and ok["sizes_holding"] == 3
    bad = P.thp_direction(_fake([5, 9, 20, 30, 60], [5, 12, 25, 35, 70], sizes))
    assert bad["holds"] is False and bad["ratio"] < 1
    none = P.thp_direction(_fake([5], [5], [1 << 20]))
    assert none["holds"] is None and "no measured size beyond" in none["why"]
    r = _fake([5], [5], [1 << 20])
    r.thp = "transparent huge pages are disabled"
    assert P.thp_direction(r)["holds"] is None


@pytest.fixture(scope="module")
def small_run():
    if why_not(False):
        pytest.skip(why_not(False))
    return P.measure(min_size="16K", max_size="64M", per_octave=2, repeats=5, line_max="4M", quick=True, seed=1, presets=["golden-cove", "skylake"])


def test_probe_shape(small_run):
    r = small_run
    m = r.medians
    assert np.isfinite(m["median_ns"]).all() and (m["median_ns"] > 0).all()
    assert (m["q1_ns"] <= m["median_ns"]).all() and (m["median_ns"] <= m["q3_ns"]).all()
    for _key, g in m.groupby(["page", "stride"]):
        assert g["size"].is_monotonic_increasing and g["size"].is_unique
    four = r.curve("4K", "page")
    assert four.index.min() == 16 << 10 and four.index.max() == 64 << 20
    assert r.curve("THP" if r.thp is None else "4K", "line").index.max() <= 4 << 20
    # a working set far beyond every TLB and cache is slower than one that fits in the L1 cache
    assert four.iloc[-1] > 2 * four.iloc[0], four.to_dict()
    lo, hi = four.index.min(), four.index.max()
    for k in r.knees:
        assert lo <= k.start < k.end <= hi and k.after_ns > k.before_ns and k.meaning
    text = P.table(r)
    assert "working set" in text and "knees" in text and "closest presets" in text


def test_probe_faults_equal_simulated(small_run):
    f = small_run.faults
    four = f[f["page"] == "4K"]
    assert (four["real_faults"] == four["simulated_faults"]).all(), four
    assert (four["simulated_faults"] == four["size"] // 4096).all()
    thp = f[f["page"] == "THP"]
    granted = thp[thp["huge_pages"] == thp["huge_pages_expected"]]
    assert (granted["real_faults"] == granted["simulated_faults"]).all(), granted


def test_thp_no_slower_beyond_the_4k_l2_reach(small_run):
    """The direction check on measured data: beyond the 4K L2 TLB reach, THP's median latency is no
    higher than 4K's (median over the sizes beyond of the 4K/THP ratio), reported with its numbers."""
    d = P.thp_direction(small_run)
    if d["holds"] is None:
        pytest.skip(d["why"])
    detail = ", ".join(f"{s >> 20}M: 4K {a:.1f} ns, THP {b:.1f} ns" for s, a, b in d["pairs"])
    assert d["holds"], f"median 4K/THP {d['ratio']:.2f} beyond {d['reach'] >> 20}M ({d['source']}): {detail}"


def test_measure_errors():
    with pytest.raises(ValueError, match="repeats=0"):
        P.measure(repeats=0)
    with pytest.raises(ValueError, match="seed=-1"):
        P.measure(seed=-1)
    with pytest.raises(ValueError, match="not a preset"):
        P.measure(presets=["pentium"])
    with pytest.raises(ValueError, match=r"line_max=0 is out of range: allowed 16K"):
        P.measure(line_max=0)  # once accepted, running the whole probe


def test_hypervisor_names_what_says_so(tmp_path):
    """The CPU flag, Xen's sysfs file and a DMI vendor each name a virtual machine; none, bare metal."""
    from pagesim.host.probe import hypervisor

    bare = "processor\t: 0\nflags\t\t: fpu vme sse2 avx2\n"
    assert hypervisor(bare, str(tmp_path)) is None
    assert hypervisor(bare.replace("avx2", "avx2 hypervisor"), str(tmp_path)) == "the 'hypervisor' CPU flag is set"
    (tmp_path / "hypervisor").mkdir()
    (tmp_path / "hypervisor" / "type").write_text("xen\n")
    dmi = tmp_path / "class" / "dmi" / "id"
    dmi.mkdir(parents=True)
    (dmi / "sys_vendor").write_text("QEMU\n")
    (dmi / "product_name").write_text("Standard PC (Q35 + ICH9, 2009)\n")
    assert hypervisor(bare, str(tmp_path)) == "/sys/hypervisor/type says xen; the firmware's sys_vendor is 'QEMU'"
