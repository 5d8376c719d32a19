"""Notebooks 01 and 02's section 7: the document's figures each kernel is set beside, and the checks."""

import pandas as pd
import pytest

from pagesim.host.here import Result
from pagesim.studies import measuredhere as MH


def test_document_figures_are_the_large_pages_gains_from_the_datasets():
    d1 = MH.document_figures("01")
    assert d1["STREAM triad"][1:] == (6.3, 56.9) and d1["DGEMM"][1:] == (11.3, 14.4)
    d2 = MH.document_figures("02")
    assert d2["STREAM triad"][1] == pytest.approx(100 / 99 * 100 - 100) and d2["STREAM triad"][2] == pytest.approx(100 / 98 * 100 - 100)
    assert d2["RandomAccess"][1] == pytest.approx(100 / 60 * 100 - 100) and d2["RandomAccess"][2] is None  # "over 40% worse"
    assert d2["strided solver"][1:] == (None, None)
    lo, hi = d2["MD"][1:]
    assert lo == pytest.approx((7.78 / 10.35 - 1) * 100) and hi == pytest.approx((0.17 / 0.20 - 1) * 100)
    assert set(d2) == set(MH.NOTEBOOK_KERNELS["02"]) and set(d1) == set(MH.NOTEBOOK_KERNELS["01"])


@pytest.mark.parametrize("kw, match", [(dict(notebook="03"), "notebook"), (dict(notebook="01", repeats=0), "repeats")])
def test_bad_arguments_name_the_parameter(kw, match):
    with pytest.raises(ValueError, match=match):
        MH.run(**kw)


def test_a_kernel_the_document_did_not_measure_is_said_so():
    row = {"kernel": "RandomAccess", "buffers": "32M", "accesses a run": 1, "4K ns/access": 2.0, "THP ns/access": 1.0, "THP backed": 1.0}
    row |= {"measured gain %": 100.0, "measured q1..q3 %": "+90.0..+110.0", "predicted gain % (bare metal)": 80.0, "prediction error (points)": -20.0}
    res = Result(pd.DataFrame([row]), {}, ["bare metal"], "skylake", None, 2e9, "assumed", None)
    t = MH.table(res, "01")
    assert t.loc["RandomAccess", "document"] == "not a kernel of this document"
    assert t.loc["RandomAccess", "prediction error, bare metal (points)"] == -20.0


def test_the_error_column_names_the_model_it_judges():
    """In a virtual machine two models predict; the error is the first model's (the virtual
    machine's), and the header says so."""
    row = {"kernel": "DGEMM", "buffers": "8M", "accesses a run": 1, "4K ns/access": 2.0, "THP ns/access": 1.0, "THP backed": 1.0}
    row |= {"measured gain %": 10.0, "measured q1..q3 %": "+9.0..+11.0", "predicted gain % (bare metal)": 4.0}
    row |= {"predicted gain % (VM, host 4K pages)": 13.0, "prediction error (points)": 3.0}
    res = Result(pd.DataFrame([row]), {}, ["VM, host 4K pages", "bare metal"], "skylake", "kvm", 2e9, "assumed", None)
    t = MH.table(res, "01")
    assert MH.error_column(res) == "prediction error, VM, host 4K pages (points)"
    assert list(t.columns).count(MH.error_column(res)) == 1 and not any(c == "prediction error (points)" for c in t.columns)
    assert t.loc["DGEMM", MH.error_column(res)] == 3.0


@pytest.mark.parametrize(
    "preset, walkers", [("skylake", "2 page walkers"), ("zen4", "6 page walkers, an assumption"), ("opteron-k8", "1 page walker, an assumption")]
)
def test_describe_says_walks_overlap_up_to_the_walkers(preset, walkers):
    """The prediction divides the walk cycles by the preset's walkers (pagesim.host.here.predict):
    the text says so, with the walkers and whether they are assumed."""
    res = Result(pd.DataFrame(), {}, ["bare metal"], preset, None, 2e9, "assumed", None)
    text = MH.describe(res)
    assert f"walks overlapped up to the preset's {walkers} (machine(name).walker.walkers)" in text
    assert "charged in full" not in text and "walk after walk" not in text
