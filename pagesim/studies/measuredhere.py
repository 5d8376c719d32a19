"""The documents' kernels run on the machine that runs the notebook (``pagesim.host.here``), beside
pagesim's prediction for this machine and the document's figure: the last section of notebooks 01
and 02.

Every figure is a gain of the large pages over 4 KiB pages in run time, t(4 KiB) / t(large) - 1, in
percent: a document's throughput improvement of x% with large pages is a gain of x%; a document's
"small pages x% worse" (throughput) is a gain of 1 / (1 - x/100) - 1; NAMD's table of run times
gives t(small) / t(large) - 1 row by row. The documents' large pages are 64 KB (POWER6) and 2 MB
(the Opteron); this machine's are THP's 2 MiB, so the document's column is what the document
measured, not what this machine should show.

A measurement here is a check of this machine, never evidence about a document: nothing here is
recorded among a notebook's findings, and nothing fails on a measured figure.
"""

from __future__ import annotations

from ..host import here
from ..host.linux import why_not_both
from ..model.machines import machine
from ..sources import datasets as D

#: the kernels each notebook runs here, by the names of ``pagesim.host.here.kernels``
NOTEBOOK_KERNELS = {
    "01": ("STREAM triad", "DGEMM"),
    "02": ("STREAM triad", "RandomAccess", "DGEMM", "strided solver", "MD"),
}


def _worse(x: float) -> float:
    """A throughput x% worse with small pages, as the large pages' gain in run time (%)."""
    return (1 / (1 - x / 100) - 1) * 100


def document_figures(notebook: str) -> dict:
    """{kernel: (text, low %, high %)}: the document's figure for each kernel of ``notebook`` that
    it measured (low/high None where it gives no number), as a gain of its large pages."""
    if notebook == "01":
        r = D.load("power64k_results")
        out = {}
        for kernel, wl, metric in (("STREAM triad", "STREAM", "GB/sec"), ("DGEMM", "Linpack", "Gflops")):
            rows = r[(r["workload"] == wl) & (r["metric"] == metric)]
            text = "; ".join(f"{s} +{p:g}%" for s, p in zip(rows["system"], rows["percent"]))
            out[kernel] = (f"{wl} {metric}, 64 KB pages: {text} (results, section 4)", float(rows["percent"].min()), float(rows["percent"].max()))
        return out
    if notebook == "02":
        h = D.load("cscs_hpcc").set_index("benchmark")
        out = {}
        for kernel, bench in (("STREAM triad", "Stream"), ("RandomAccess", "Single node Random Access"), ("DGEMM", "DGEMM")):
            row = h.loc[bench]
            lo = _worse(float(row["percent_low"]))
            hi = None if row["bound"] == "over" else _worse(float(row["percent_high"]))
            out[kernel] = (f"HPC Challenge {bench}: small pages {row['small_page_change']} (table 2)", lo, hi)
        out["strided solver"] = ("small pages better, no figure (section 5)", None, None)
        namd = D.load("cscs_namd")
        gains = (namd["small"] / namd["large"] - 1) * 100
        text = f"NAMD, 2 MB pages' run time change over 4-256 processors (table 4): {gains.max():+.0f}..{gains.min():+.0f}%"
        out["MD"] = (text, float(gains.min()), float(gains.max()))
        return out
    raise ValueError(f"notebook={notebook!r}: the kernels run here are 01's and 02's")


def run(notebook: str, quick: bool = False, seed: int = 0, repeats: int | None = None):
    """Time ``notebook``'s kernels here and predict them (:func:`pagesim.host.here.run`); None, with
    the reason printed, where they cannot run on this machine."""
    names = NOTEBOOK_KERNELS.get(notebook)
    if names is None:
        raise ValueError(f"notebook={notebook!r}: the kernels run here are 01's and 02's")
    reason = why_not_both()
    if reason:
        print(f"The kernels are not timed here: {reason}")
        return None
    return here.run(names, quick=quick, repeats=(3 if quick else 7) if repeats is None else repeats, seed=seed, progress=print)


def error_column(res) -> str:
    """The header of :func:`table`'s error column, naming the model it judges: the first of
    ``res.models`` (the virtual machine's when a hypervisor was detected, else bare metal)."""
    return f"prediction error, {res.models[0]} (points)"


def table(res, notebook: str):
    """One row per kernel: the gain measured here (median, quartiles, how much of the THP buffers
    the kernel backed with huge pages), each model's prediction, the error of the prediction of the
    model the run is judged by (its header names it: :func:`error_column`) and the document's figure."""
    doc = document_figures(notebook)
    t = res.table.set_index("kernel")
    out = t[["buffers", "THP backed", "measured gain %", "measured q1..q3 %"]].copy()
    out["THP backed"] = out["THP backed"].map(lambda v: "unknown" if v is None else f"{v:.0%}")
    for model in res.models:
        out[f"predicted, {model} (%)"] = t[f"predicted gain % ({model})"]
    out[error_column(res)] = t["prediction error (points)"]
    out["document"] = [doc[k][0] if k in doc else "not a kernel of this document" for k in t.index]
    out = out.rename(columns={"measured gain %": "measured here (%)", "measured q1..q3 %": "quartiles (%)"})
    for c in out.columns:
        if out[c].dtype.kind == "f":
            out[c] = out[c].round(1)
    return out


def describe(res) -> str:
    """What the prediction assumed, in a sentence or two, from the run."""
    m = f"{res.preset}" + (f", virtualised on 4 KiB host pages (a hypervisor was detected: {res.vm})" if res.vm else " on bare metal")
    pm = machine(res.preset)
    n = pm.walker.walkers
    walkers = f"{n} page walker{'s' if n > 1 else ''}" + (", an assumption" if "walker.walkers" in pm.assumptions else "")
    return (
        f"Predicted for {m}, at {res.hz / 1e9:.2f} GHz ({res.hz_source}), with the preset's cycles per walk reference "
        f"(machine(name).costs, mostly assumed) and walks overlapped up to the preset's {walkers} (machine(name).walker.walkers): "
        "the walk cycles are divided by the walkers, as none of these kernels is a chain of dependent loads; the processor's "
        "other limits on overlap (reorder buffer, miss buffers) are not modelled. "
        "A host's page size cannot be seen from inside a virtual machine: 4 KiB is an assumption (notebook 07 fits which "
        "explains this machine)."
    )


def plot(res, notebook: str):
    """Bars: the gain measured here (with its quartiles) and each model's prediction, by kernel; the
    document's range as a grey band where it gives one (a one-sided bound, "over 40%", drawn to twice
    the bound, as notebook 02 reads it)."""
    import matplotlib.pyplot as plt  # deferred: matplotlib is slow to import; only figures need it
    import numpy as np

    t = res.table.set_index("kernel")
    doc = document_figures(notebook)
    x = np.arange(len(t))
    _, ax = plt.subplots(figsize=(8, 3.6))
    width = 0.8 / (1 + len(res.models))
    q = [tuple(float(v) for v in s.split("..")) for s in t["measured q1..q3 %"]]
    med = t["measured gain %"].to_numpy()
    err = np.array([[m - lo for m, (lo, _) in zip(med, q)], [hi - m for m, (_, hi) in zip(med, q)]]).clip(min=0)
    ax.bar(x, med, width, yerr=err, color="0.2", label="measured here (median, quartiles)")
    for i, model in enumerate(res.models, start=1):
        ax.bar(x + i * width, t[f"predicted gain % ({model})"], width, label=f"predicted: {model}")
    labelled = False
    for i, k in enumerate(t.index):
        _, lo, hi = doc.get(k, ("", None, None))
        if lo is not None:
            top = hi if hi is not None else lo * 2
            ax.fill_between([i - width / 2, i + len(res.models) * width + width / 2], lo, top, color="0.85", zorder=0, label=None if labelled else "document")
            labelled = True
    ax.axhline(0, color="grey", lw=0.8)
    ax.set_xticks(x + width * len(res.models) / 2, list(t.index))
    ax.set_ylabel("THP's gain over 4 KiB pages (%)")
    ax.set_title("The kernels here: measured, predicted, and the document (grey)")
    ax.legend(fontsize=8)
    plt.tight_layout()
    return ax
