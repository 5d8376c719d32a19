"""Notebook 02 as a lesson: the tlb-sets answer says what a small LRU simulation of the set does, and
every figure of the notebook gives one number for the solver's set-up (64 planes of 1040 KiB)."""

from __future__ import annotations

import re

import pytest

from pagesim.core.units import parse_size
from pagesim.model.machines import machine
from pagesim.studies import cscs as S
from pagesim.teaching import teach

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


# ------------------------------------------------------------------ one number for the solver's set-up
def test_the_solver_set_up_is_one_run_in_every_figure():
    """The bar chart, the plane-size sweep and the map build the solver's 64 planes of PLANE bytes the
    same way, in both modes; the sweep includes PLANE itself."""
    from pagesim.studies import cscs as S

    for quick in (True, False):
        wl, kw, work = S.solver_case(64, S.PLANE, quick)
        assert (wl, kw) == S.kernel_cases(quick)["strided solver (64 planes)"]
        assert work == S.KERNEL_WORK[S.KERNEL_OF["strided solver (64 planes)"]][0]
        assert S.PLANE in S.plane_size_values(quick)
        assert (64, S.PLANE) in S.map_cells(quick)


def test_the_figures_give_one_number_for_the_solver():
    """64 planes of 1040 KiB: the bar chart of section 2, the sweep's point at 1040 KiB and the map's
    cell are one figure under one model (they were +41.6%, about +720% and 721)."""
    from pagesim.studies import cscs as S

    mlp = S.fitted_mlp(quick=True)
    k = S.timed_kernels(S.timed_pairs(quick=True), mlp).set_index("kernel")["small_page_change_pct"]
    bar = k["strided solver (64 planes)"]
    sweep = S.plane_sizes(mlp, quick=True, progress=False).table.set_index("plane KiB")["small_page_change_pct"]
    cell = S.locality_map(mlp, quick=True, progress=False).set_index(["planes in use", "plane KiB"])["small_page_change_pct"]
    assert sweep[S.PLANE >> 10] == bar
    assert cell[(64, S.PLANE >> 10)] == bar
    assert 0 < bar < 100  # small pages better, by the timing model's tens of per cent


def test_the_notebook_uses_the_timing_model_only():
    """No figure of notebook 02 comes from the plain cost model (no data caches)."""
    import nbformat

    from pagesim.validation.notebooks import notebooks_dir

    nb = nbformat.read(notebooks_dir() / "02_opteron_cscs.ipynb", as_version=4)
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    for plain in ("small_page_change(", "solver_plane_sizes(", "strong_scaling("):
        assert plain not in code, plain


def test_the_choices_figure_shades_the_findings_bands(quick_findings):
    from pagesim.studies import cscs as S

    found = quick_findings("02_opteron_cscs")
    for fid, limits in S.choice_limits().items():
        want = found[fid]["limits"]
        assert (limits is None and want is None) or tuple(limits) == tuple(want), fid


def test_dgemm_is_swept_over_its_choices_and_its_sign_is_no_evidence(quick_findings):
    """DGEMM's figure rests on an assumed matrix order, tile, work per access and overlap: each is
    re-run from half to twice its value; the sign never turns, so only the size is evidence, and it
    is outside the band (HPL restates it: no stronger)."""
    found = quick_findings("02_opteron_cscs")
    f = found["hpcc-DGEMM"]
    assert f["verdict"] == "contradicted" and f["sign_fixed"] and "the sign is no evidence" in f["why"]
    assert found["hpcc-HPL"]["verdict"] == "contradicted" and found["hpcc-HPL"]["sign_fixed"]
    fft = found["hpcc-fft"]  # its sign is fixed too, and over walk overlap 1..2 it falls on both sides of -10%
    assert fft["sign_fixed"] and fft["verdict"] == "not reproduced" and "both sides of the document's figure" in " ".join(fft["robustness"])
    swept = " ".join(f["robustness"] or [])
    assert "matrix order (n) 512..2048 (chosen 1024)" in swept and "tile (rows) 32..128 (chosen 64)" in swept
    alone = f["robustness"][:10]  # one choice at a time; then the re-priced ones at once, and walks overlapping as data misses do
    assert len(alone) == len(S.choice_names("DGEMM")) == 10 and all("sign" in t for t in alone)
    assert len(f["robustness"]) == 12 and "(128 corners)" in f["robustness"][10] and "walk_mlp = mlp" in f["robustness"][11]
