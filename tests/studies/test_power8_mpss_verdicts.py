"""Verdicts of notebooks 00, 03, 04, 06 and 07 say what each check is: a count fixed by the inputs is
arithmetic, an exact count carries the range of the assumption it holds over, a model that ran and
disagrees is contradicted with its ratio, and checks on this machine are counted apart."""

import json

import numpy as np
import pytest

from pagesim.studies import mpss as M
from pagesim.studies import power8 as S
from pagesim.validation.notebooks import notebooks_dir


@pytest.fixture(scope="module")
def run(quick_findings):
    """The findings of a notebook run in quick mode, by id (each notebook runs once per session)."""
    return quick_findings


# ----------------------------------------------------------------------------- the studies


def test_kernel_instructions_keep_the_fault_path_apart_from_zeroing():
    mx = S.matrix()
    ki = S.kernel_instructions(mx).set_index(["environment", "page kind"])
    per_64k = (64 << 10) // 128 * 10 / 8 + S.CLEAR_CALL  # clear_page: 8 dcbz, add, bdnz per 8 lines of 128 bytes
    assert per_64k == 640 + S.CLEAR_CALL
    for env in ("ideal", "pressure"):
        for kind in ("normal", "hugepage", "THP"):
            assert ki.loc[(env, kind), "zeroing"] == 256 * per_64k  # 16 MiB zeroed whatever the page size
    assert ki.loc[("ideal", "normal"), "fault path"] == 256 * S.FAULT_PATH
    assert ki.loc[("ideal", "THP"), "kernel instructions"] == ki.loc[("ideal", "hugepage"), "kernel instructions"] == S.FAULT_PATH + 256 * per_64k
    moved = int(ki.loc[("pressure", "THP"), "pages migrated"])
    assert moved > 0 and ki.loc[("pressure", "THP"), "copying"] == moved * 512 * S.COPY_PER_LINE
    assert ki.loc[("pressure", "hugepage"), "copying"] == 0  # the reserved pool never compacts
    # a different assumption moves only the per-fault part
    assert S.kernel_instructions(mx, fault_path=4000).set_index(["environment", "page kind"]).loc[("ideal", "normal"), "fault path"] == 256 * 4000


def test_thp_under_pressure_keeps_one_fault_only_while_compaction_can_succeed():
    sw = S.thp_pressure_sweep(held=(0.5, 0.95, 0.995), movable=(0.9, 1.0))
    by = sw.set_index(["swept", "held", "movable"])["THP faults"]
    assert by[("movable", 0.95, 0.9)] == 256  # unmovable background pages: the request falls back
    assert by[("movable", 0.95, 1.0)] == 1
    cage = sw[sw.swept == "placement"].iloc[0]
    assert cage["THP faults"] == 1 and cage["pages migrated"] == 0 and cage["THP / 64K cycles"] < 1
    assert sw[(sw.swept == "held") & (sw.held == 0.95)]["THP / 64K cycles"].iloc[0] > 1  # compaction costs THP more than 64K's faults
    text = S.thp_pressure_holds(sw)
    assert "at 0.9 the THP request falls back" in text and "at 0.995 not even 256 64K pages fit" in text


def test_the_documents_loops_miss_once_a_page_and_touches_that_return_need_the_reach():
    """The document's random loop (normal_memory_analysis_random.c) stores once in each 64 KiB in
    address order, so its dTLB misses equal its faults whatever the structures hold, as memset's do
    (was: modelled as 4096 random touches, which return to pages, and its equality taught as a fact
    about capacity); random touches that return to pages keep it only while the 256 pages fit."""
    sw = S.tlb_capacity_sweep(entries=(32, 128, 256))
    t = sw.set_index(["entries", "access"])
    for n in (32, 128, 256):
        assert t.loc[(n, "random"), "dTLB misses"] == t.loc[(n, "random"), "page faults"] == 256
        assert t.loc[(n, "memset"), "dTLB misses"] == 256
    assert t.loc[(128, S.REVISIT), "dTLB misses"] > t.loc[(128, S.REVISIT), "page faults"] == 256
    assert t.loc[(256, S.REVISIT), "dTLB misses"] == 256
    assert S.tlb_capacity_holds(sw, "random").startswith("secondary D-ERAT and TLB both cut to 32, 128, 256 entries")
    assert S.tlb_capacity_holds(sw, S.REVISIT).startswith("secondary D-ERAT and TLB both cut to 256 entries")
    # the trace: one one-byte store in each 64 KiB, in order, at a random offset within it
    from pagesim.sources.workloads import workload

    a = np.concatenate([x for x, _ in workload("touch", size="16M", **S.touch("random")).chunks([1 << 32], chunk=100, seed=3)]).astype(np.int64)
    base = 1 << 32
    assert a.size == 256 and ((a - base) // (64 << 10) == np.arange(256)).all() and len(set(((a - base) % (64 << 10)).tolist())) > 200
    with pytest.raises(ValueError, match="step=24K must divide size=64K"):
        workload("touch", size="64K", pattern="per-step", step="24K")


def test_the_empty_tsb_count_holds_only_for_a_tsb_that_holds_the_heap():
    tsb = M.tsb_sweep(entries=(512, 8192, 16384), accesses=100_000)
    text = M.tsb_holds(tsb, 100_000)
    assert text.startswith("TSB entries (per page size) of 16384,")
    assert "512 entries: 79626 misses" in text and "8192 entries:" in text


# ----------------------------------------------------------------------------- the notebooks


def test_00_a_size_over_page_size_count_is_arithmetic(run):
    assert run("00_basics")["faults-64k"]["verdict"] == "arithmetic"
    # the UltraSPARC TLB designs are 03's to judge (us3cu): not counted again here
    assert run("00_basics")["reach-us3cu-4m"]["reuses"] == "03_solaris_mpss:us3cu"


def test_06_the_trace_reader_against_the_line_count_is_a_bookkeeping_check(run):
    assert run("06_your_program")["count"]["verdict"] == "arithmetic"


def test_04_counts_fixed_by_the_inputs_are_arithmetic_and_exact_ones_carry_their_range(run):
    f = run("04_power8_mmap")
    # the document gives one fault count and one dTLB count per page kind, "irrespective of continuous or random
    # access and in ideal or memory pressure environment": each counted once, the other cases say where
    for env in ("ideal", "pressure"):
        for pattern in ("memset", "random"):
            for kind in ("normal", "hugepage", "THP"):
                judged = "faults-pressure-memset-THP" if kind == "THP" else f"faults-ideal-memset-{kind}"
                g = f[f"faults-{env}-{pattern}-{kind}"]
                assert (g["figures"], g["reuses"]) == ((1, "") if judged == f"faults-{env}-{pattern}-{kind}" else (0, judged)), (env, pattern, kind)
            d = f[f"dtlb-{env}-{pattern}"]
            assert (d["figures"], d["reuses"]) == ((3, "") if (env, pattern) == ("ideal", "memset") else (0, "dtlb-ideal-memset"))
    for env in ("ideal", "pressure"):
        for pattern in ("memset", "random"):
            for kind in ("normal", "hugepage"):
                assert f[f"faults-{env}-{pattern}-{kind}"]["verdict"] == "arithmetic"
            thp = f[f"faults-{env}-{pattern}-THP"]
            if env == "ideal":
                assert thp["verdict"] == "arithmetic"
            else:
                # 1 fault only when nearly every background page can move, which the document does not state
                assert thp["verdict"] == "not reproduced" and "movable background pages" in thp["sensitivity"]
                assert "not stated" in thp["why"]
                assert thp["reuses"] == ("faults-pressure-memset-THP" if pattern == "random" else "")
        assert f[f"dtlb-{env}-memset"]["verdict"] == "arithmetic"
        # the document's random loop touches each page once, in order: fixed whatever the structures hold
        rnd = f[f"dtlb-{env}-random"]
        assert rnd["verdict"] == "arithmetic" and "cut to 32, 64, 128, 192, 256, 512 entries" in rnd["sensitivity"] and "capacity" not in rnd["why"]


def test_04_kernel_work_is_contradicted_with_its_ratio(run):
    k = run("04_power8_mmap")["kernel-work"]
    assert k["verdict"] == "contradicted" and "1.31x" in k["simulation"] and "8x" in k["why"]
    assert k["figures"] == 0  # its figures are judged by the instruction count
    huge, normal = run("04_power8_mmap")["kernel-instr-huge"], run("04_power8_mmap")["kernel-instr-normal"]
    rows = {r["row"]: r["verdict"] for r in huge["rows"]}
    # THP under pressure: 12.6x the document's 200,000 instructions with the study's scattered, movable background
    # pages, under it with them caged: the unstated placement puts it on both sides, so the row is not reproduced
    assert rows == {"hugepage, ideal": "within", "hugepage, pressure": "within", "THP, ideal": "within", "THP, pressure": "not reproduced"}
    assert huge["verdict"] == "not reproduced" and "more than ten times" in huge["why"]
    placement = next(t for t in huge["robustness"] if t.startswith("the background pages under pressure (chosen: scattered, all movable)"))
    assert "caged: " in placement and "on both sides of the document's figure" in placement
    # the document's "> 1600000" is a lower bound the model stays below: the claim fails in the model
    assert normal["verdict"] == "contradicted" and "3.98x" in normal["why"] and "below" in normal["why"] and normal["figures"] == 2


def test_04_thp_under_pressure_costlier_than_64k_rests_on_the_unstated_pressure(run):
    f = run("04_power8_mmap")["thp-pressure-cost"]
    assert f["verdict"] == "not reproduced" and "1.10x" in f["simulation"] and "perform better in all the environment" in f["document"]
    assert "not stated" in f["why"] and "with them caged THP does not compact" in f["why"] and f["sensitivity"]


def test_04_hp_below_thp_under_pressure_rests_on_the_unstated_pressure(run):
    """Under pressure hugetlb beats THP in the model only through THP's compaction of the study's scattered,
    movable pages, which the document does not describe: not reproduced, as THP's pressure fault count."""
    f = run("04_power8_mmap")["kernel-hp-thp-pressure"]
    assert f["verdict"] == "not reproduced" and "not stated" in f["why"] and f["figures"] == 0 and f["reuses"] == "kernel-instr-huge"


def test_04_hp_thp_ideal_reason_gives_the_ratio(run):
    f = run("04_power8_mmap")["kernel-hp-thp-ideal"]  # a tie by construction: the paths that differ are not modelled
    assert f["verdict"] == "not reproduced" and "not modelled" in f["why"] and "1.00x" in f["why"] and "madvise" not in f["why"]


def test_04_host_checks_are_counted_apart(run):
    host = [f for i, f in run("04_power8_mmap").items() if i.startswith("host-")]
    assert host and all(f["host"] for f in host)
    assert not any(f["host"] for i, f in run("04_power8_mmap").items() if not i.startswith("host-"))


def test_figures_of_003_and_002(run):
    assert sum(f["figures"] for f in run("04_power8_mmap").values() if not f["host"]) == 26  # 20, and 3 fault and 3 dTLB counts
    assert sum(f["figures"] for f in run("03_solaris_mpss").values()) == 12


def test_03_trapstat_tsb_range_comes_from_the_sweep(run):
    f = run("03_solaris_mpss")
    t = f["trapstat-tsb"]
    assert t["verdict"] == "arithmetic" and "fixed by an input" in t["why"]  # the assumed TSB holds every heap page
    assert t["sensitivity"].startswith("TSB entries (per page size) of 16384,") and "512 entries:" in t["sensitivity"]
    assert f["us3"]["verdict"] == "contradicted"  # 'typically not beneficial', and the model's III still gains
    # the document's 0.2% is its kernel's misses and user misses of other mappings, neither in the model; the model's own
    # share is its 4M pages' first touches, set by the run's length: not a test of the figure
    after = f["trapstat-after"]
    assert after["verdict"] == "not reproduced" and after["figures"] == 1
    assert "its kernel's dTLB misses (4271 on 8k pages, 0.1%) and user misses on 8k pages (221, 0.1%)" in after["why"]
    assert "falls with the run's length" in after["why"] and "(4M share within 0.2% +-50%, 0.1..0.3%" in after["sensitivity"]
    for fid in ("frag-fallback", "frag-relocation", "frag-movable", "frag-cage"):
        assert f[fid]["sensitivity"].startswith("held ")
        # the allocator's rules are written from the document's section: shown, not evidence for it
        assert f[fid]["verdict"] == "arithmetic" and "could not have come out otherwise" in f[fid]["why"]


@pytest.mark.parametrize("stem", ["06_your_program", "07_your_machine"])
def test_your_program_and_machine_are_host_checks(stem):
    nb = json.loads((notebooks_dir() / f"{stem}.ipynb").read_text(encoding="utf-8"))
    src = "".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
    assert f'Findings("{stem}"' in src and "host=True)" in src.split(f'Findings("{stem}"', 1)[1].split("\n", 1)[0]


def test_03_results_the_set_up_fixes_are_not_evidence(run):
    """A 64-entry TLB of every size, a text of exactly the 4M iTLB's 16 pages, a TSB that grows to hold
    every page and the document's own programming rule come back as written: arithmetic. The onset of
    the working-set gain cannot be set beside 'typically ... greater than a few hundred megabytes', which
    says which applications gain, not where a gain starts (the document's own example heap is 128 MB)."""
    f = run("03_solaris_mpss")
    for fid in ("us2", "text", "dynamic-tsb", "us3cu-two-sizes", "trapstat-8k"):
        assert f[fid]["verdict"] == "arithmetic" and "not evidence" in f[fid]["why"], fid
    assert f["working-set"]["verdict"] == "not reproduced" and "not where a gain starts" in f["working-set"]["why"]
    # 32 4M pages in the TLB miss on their first touch only: the ratio is the run's length
    assert f["trapstat-8k"]["figures"] == 3 and "the ratio is the run's length" in f["trapstat-8k"]["why"]
    assert "32 4M pages" in f["trapstat-8k"]["why"]


def test_results_the_construction_fixes_say_so_where_they_are_restated_or_predicted(run):
    """THP's migration under pressure restates a fault count that rests on an unstated assumption; the
    counterfactual Opteron's and shared page tables' fault results follow from how each is built."""
    c = run("04_power8_mmap")["thp-compaction"]
    assert c["verdict"] == "not reproduced" and c["reuses"] == "faults-pressure-memset-THP" and "not stated" in c["why"]
    for stem, fid in (("02_opteron_cscs", "counterfactual"), ("05_shared_page_tables", "faults")):
        f = run(stem)[fid]
        assert f["verdict"] == "arithmetic" and f["model"] and "not evidence" in f["why"], fid
