"""Preset figures and teaching text checked against their sources.

Each test names the source it follows: datasets/architecture (a copy of the project's reference
table and notes) or one of the five documents.
"""

import csv
import re
from pathlib import Path

import numpy as np
import pytest

import pagesim
from pagesim import Layout
from pagesim.model.layout import DEFAULT_BASE
from pagesim.teaching.explain import translate

ROOT = Path(__file__).resolve().parents[2]
GIB, MIB = 1 << 30, 1 << 20

# preset -> how its rows of datasets/architecture/tlb_reference.csv begin
ARCH = {
    "power5+": "POWER5+",
    "power6": "POWER6",
    "power8": "POWER8",
    "opteron-k8": "Opteron K8",
    "zen4": "Zen 4 (",
    "ultrasparc-ii": "UltraSPARC II (",
    "ultrasparc-iii": "UltraSPARC III (",
    "ultrasparc-iii-cu": "UltraSPARC III Cu",
    "ultrasparc-t1": "UltraSPARC T1",
    "itanium2": "Itanium 2",
    "skylake": "Skylake",
    "golden-cove": "Golden Cove",
    "neoverse-n1": "Neoverse N1",
    "apple-m1": "M1 Firestorm",
}


def _reference_rows():
    with open(ROOT / "datasets" / "architecture" / "tlb_reference.csv", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_every_preset_year_is_the_reference_tables():
    rows = _reference_rows()
    assert set(ARCH) == set(pagesim.machines())
    for name, arch in ARCH.items():
        years = {int(r["year"]) for r in rows if r["arch"].startswith(arch)}
        assert years == {pagesim.machine(name).year}, (name, years)
    assert pagesim.machine("apple-m1").year == 2020  # M1 Firestorm rows: 2020


# how the text names a preset when it gives its year ("a 2020 Apple M1")
NAMED = {
    "Apple M1": "apple-m1",
    "POWER5+": "power5+",
    "POWER6": "power6",
    "POWER8": "power8",
    "Golden Cove": "golden-cove",
    "Skylake": "skylake",
    "Zen 4": "zen4",
    "Neoverse N1": "neoverse-n1",
    "Itanium 2": "itanium2",
}


def test_years_in_the_text_are_the_presets():
    files = [*(ROOT / "notebooks").glob("*.ipynb"), ROOT / "README.md", *(ROOT / "docs").glob("*.md")]
    files += [*(ROOT / "pagesim").rglob("*.py"), *(ROOT / "exercises").rglob("*.md")]
    seen = 0
    for f in files:
        text = f.read_text(encoding="utf-8")
        for label, name in NAMED.items():
            for year in re.findall(rf"\b((?:19|20)\d\d) {re.escape(label)}(?![\w+])", text):
                seen += 1
                assert int(year) == pagesim.machine(name).year, f"{f.name}: '{year} {label}', preset year {pagesim.machine(name).year}"
    assert seen >= 2  # notebook 00 names the POWER5+ and the M1 with their years


def test_golden_cove_stlb_arrays_are_not_merged():
    # CPUID leaf 0x18 (datasets/architecture/NOTES.md §2.6): two 1024-entry 8-way arrays, part A
    # 4K/2M/4M and part B 4K/1G. 4K pages use both (2048 entries); 2M pages only A, 1G only B.
    m = pagesim.machine("golden-cove")
    assert m.reach("4K") == 2048 * 4096 == 8 * MIB
    assert m.reach("2M") == 1024 * 2 * MIB == 2 * GIB
    assert m.reach("1G") == 1024 * GIB
    for p, entries in (("4K", 2048), ("2M", 1024), ("1G", 1024)):
        level2 = [s for s in m.chain("data", pagesim.parse_size(p)) if s.level == 2]
        assert [s.entries for s in level2] == [entries]
        assert [s.entries for s in m.chain("instr", pagesim.parse_size(p)) if s.level == 2] == [entries]


def test_ultrasparc_iii_cu_reach_counts_t512_1_when_programmed():
    # 002_7166aff63bc805c7.txt, Things to watch out for: the 750 MHz III has "one large 512-entry TLB
    # that ... supports only 8Kbyte entries"; from 900 MHz a second 512-entry TLB is programmed for
    # the large size. Unprogrammed, both reach 16 x 4M through T16; programmed, III Cu reaches 512 x 4M.
    us3, cu = pagesim.machine("ultrasparc-iii"), pagesim.machine("ultrasparc-iii-cu")
    assert us3.reach("4M") == cu.reach("4M") == 16 * 4 * MIB
    assert cu.reach("4M", programmed=True) == 512 * 4 * MIB
    assert us3.reach("4M", programmed=True) == 16 * 4 * MIB
    assert cu.reach("8K", programmed=True) == cu.reach("8K") == 512 * 8192  # T512_1 cannot hold 8K
    t = pagesim.reach_table(["ultrasparc-iii", "ultrasparc-iii-cu"]).set_index(["machine", "side", "page"])
    a, b = t.loc[("ultrasparc-iii", "data", "4M")], t.loc[("ultrasparc-iii-cu", "data", "4M")]
    assert a["reach_bytes"] != b["reach_bytes"]
    assert b["reach_bytes"] == 2 * GIB and b["reach_unprogrammed_bytes"] == 64 * MIB
    assert b["programmed"] == "dTLB T512_1" and b["reach_label"] == "2G (T512_1 programmed)"
    assert a["programmed"] == "" and a["reach_label"] == "64M"
    # the instruction side has no programmable structure
    assert t.loc[("ultrasparc-iii-cu", "instr", "4M"), "programmed"] == ""


def test_explain_calls_the_short_format_vhpt_linear_not_hashed():
    # datasets/architecture/NOTES.md §1.5: short format = per-region linear table of 8-byte entries;
    # the hashed table of 32-byte entries is the long format
    walk = translate("itanium2", 0x12_3456_789A, "16K").query("step == 'walk'")["what"].str.cat(sep=" ")
    assert "linear" in walk and "8-byte" in walk and "hashed entry" not in walk
    hashed = translate("power8", 0x7F12_3456_789A, "64K")
    assert (hashed["step"] == "hash").sum() == 2


def test_power_slb_uses_256m_segments_everywhere_and_says_so():
    # The model's simplification (see the presets' SLB source): generated workloads start at
    # DEFAULT_BASE = 1 TiB, where 1 TiB segments exist (NOTES.md §1.2), yet pagesim keys the SLB by
    # 256 MiB segments: ten 256 MiB segments touched once each give ten SLB misses, not one.
    assert DEFAULT_BASE == 1 << 40
    for name in ("power5+", "power6", "power8"):
        m = pagesim.machine(name)
        assert "SLB.segment_size" in m.assumptions
        assert "DEFAULT_BASE = 1 TiB" in m.slb.source and "1T segments are not modelled" in m.describe()
    lay = Layout.single(2560 * MIB, "64K", start=DEFAULT_BASE)
    addrs = np.array([DEFAULT_BASE + i * (256 * MIB) for i in range(10)], dtype=np.uint64)
    ds = pagesim.simulate("power6", addresses=addrs, layout=lay)
    assert int(ds["misses"].sel(structure="SLB").sum()) == 10


def test_opteron_k8_has_no_page_walk_cache_from_a_later_family():
    # datasets/architecture/NOTES.md §1.1 and §5 give only Family 16h's 16-entry PDC; nothing for K8
    m = pagesim.machine("opteron-k8")
    assert m.walker.pwc == ()
    assert "walker.pwc" in m.assumptions and "Family 16h" in m.walker.source


def test_mpss_after_table_misses_fall_where_the_document_and_model_say():
    # 002_7166aff63bc805c7.txt, trapstat -T after ppgsz -o heap=4M: 221 user dTLB misses on 8k, 0 on 4m
    from pagesim.sources import datasets as D
    from pagesim.studies import mpss as S

    doc = D.load("mpss_trapstat")
    T = doc[doc.output == "-T"]
    after = S.user_dtlb_misses(T[T.run == "after"])
    assert after["8k"] == 221 and after["4m"] == 0
    assert S.user_dtlb_misses(T[T.run == "before"])["8k"] == 2170236
    # the simulated program touches only its heap: nothing on 8k after; on 4m, the first touch of
    # each of the heap's 128 MiB / 4 MiB = 32 pages (T512_1 holds all 32)
    ba = S.trapstat_before_after(accesses=20_000, seed=0)
    b, a = S.user_dtlb_misses(ba["before"][1]), S.user_dtlb_misses(ba["after"][1])
    assert a == {"8k": 0, "64k": 0, "512k": 0, "4m": S.HEAP // (4 * MIB)} == {"8k": 0, "64k": 0, "512k": 0, "4m": 32}
    assert b["8k"] == sum(b.values()) > 100 * 32
    with pytest.raises(ValueError, match="one trapstat -T table"):
        S.user_dtlb_misses(T)


def test_sweep_over_machines_with_and_without_page_walk_caches():
    # Exposed when the K8 preset lost its page-walk cache: a sweep whose first machine has
    # page-walk caches and a later one has none, over two page sizes, failed in xarray's concat
    # ("'pwc' not present in all datasets and coords='different'"). Itanium 2 (VHPT) had none before.
    for pair, sizes in ((["skylake", "opteron-k8"], ["4K", "2M"]), (["skylake", "itanium2"], ["4K", "1G"])):
        ds = pagesim.sweep({"machine": pair, "page_size": sizes}, workload="random", working_set="64M", accesses=3000, progress=False)
        for name in pair:
            for p in sizes:
                one = pagesim.simulate(name, "random", working_set="64M", accesses=3000, page_size=p)
                assert int(ds["walks"].sel(machine=name, page_size=pagesim.parse_size(p)).sum()) == int(one["walks"].sum())
        assert int(ds["pwc_hits"].sel(machine=pair[1]).sum()) == 0 < int(ds["pwc_hits"].sel(machine="skylake").sum())


def test_describe_names_each_structures_replacement():
    """A machine's description shows how each TLB and page-walk cache replaces, not only its shape."""
    m = pagesim.machine("skylake").replace_structure("L1 DTLB 4K", replacement="plru")
    text = m.describe()
    assert "64 entries, 4-way PLRU" in text and "1536 entries, 12-way LRU" in text
    assert "PDE cache 32 entries (8-way LRU)" in text


def test_describe_gives_an_entrys_largest_cover_after_the_page_sizes():
    """A structure whose entries cover less than its largest page (a virtualised machine's, N1's L1
    DTLB) reads: its page sizes, then how much an entry covers, each once."""
    line = next(x for x in pagesim.machine("skylake").virtualised("4K").describe().splitlines() if "L1 DTLB 4K" in x)
    assert line.endswith("4K/2M/1G (an entry covers at most 4K), +0 cycles"), line
    assert "at most 4K 4K" not in line
    line = next(x for x in pagesim.machine("neoverse-n1").describe().splitlines() if "L1 DTLB" in x)
    assert "4K/2M/1G (an entry covers at most 512M)" in line, line
    line = next(x for x in pagesim.machine("skylake").describe().splitlines() if "STLB " in x)
    assert "covers" not in line and "4K/2M, +9 cycles" in line, line


def test_walkers_come_from_the_references_or_are_labelled():
    # datasets/architecture/NOTES.md §1.1, Walk concurrency: Skylake 2, Golden Cove 4, Zen 3 6 (Zen 4
    # unsourced: 6 as Zen 3, an assumption); §2.4: POWER8 up to 4
    got = {n: pagesim.machine(n).walker.walkers for n in ("skylake", "golden-cove", "zen4", "power8", "opteron-k8")}
    assert got == {"skylake": 2, "golden-cove": 4, "zen4": 6, "power8": 4, "opteron-k8": 1}
    for name in pagesim.machines():  # sourced, or labelled: zen4's 6 and every default of 1
        m = pagesim.machine(name)
        assert ("walker.walkers" in m.assumptions) == (name not in ("skylake", "golden-cove", "power8")), name
    with pytest.raises(ValueError, match="walkers=0"):
        pagesim.Walker("radix", level_bits=(9, 9), walkers=0)
