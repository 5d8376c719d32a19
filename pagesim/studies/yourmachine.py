"""Your machine's TLB (notebook 07): the latency probe's curves and knees (pagesim.host.probe) beside the
closest presets' reach and beside pagesim's simulation of the same pointer chase, and the real
page faults of the probe's mappings beside the simulated ones."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np

from ..core.check import check_choice, check_number
from ..core.units import format_size
from ..engine.simulate import simulate
from ..host.here import TRANSLATION, cpu_hz
from ..host.linux import thp_mode, whole_huge
from ..host.probe import HUGE, PAGE, ProbeResult, cache_sizes, l2_reach_4k, preset_reach, thp_direction
from ..model.layout import Layout
from ..model.machines import machine as get_machine
from ..teaching import plotting


def hardware_counters() -> str:
    """Whether perf can count dTLB misses here (often not in a virtual machine), in one line."""
    perf = shutil.which("perf")
    if perf is None:
        return "perf is not installed: no hardware counters to compare with"
    try:
        r = subprocess.run([perf, "stat", "-x,", "-e", "dTLB-load-misses", "true"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as e:
        return f"perf could not run: {e}"
    text = (r.stderr or "").strip().splitlines()
    line = next((t for t in text if "dTLB-load-misses" in t), text[-1] if text else "")
    if "<not supported>" in line or "<not counted>" in line or r.returncode != 0:
        return f"perf cannot count dTLB-load-misses here ({line[:120] or 'exit status ' + str(r.returncode)}): latency is all there is"
    return f"perf counts dTLB-load-misses here ({line[:80]}): a real counter could back the probe"


def curves(res: ProbeResult):
    """Tidy medians for plotting: size (MiB), curve label, median and quartiles (ns)."""
    m = res.medians.copy()
    m["curve"] = m["page"] + " pages, " + m["stride"] + " stride"
    m["working set MiB"] = m["size"] / 2**20
    return m


def fault_table(res: ProbeResult):
    """Real minor faults of each page-stride mapping beside pagesim's, and the huge pages the kernel gave."""
    f = res.faults.copy()
    f["working set"] = [format_size(int(s)) for s in f["size"]]
    f["equal"] = f["real_faults"] == f["simulated_faults"]
    return f[["working set", "size", "page", "real_faults", "simulated_faults", "equal", "huge_pages", "huge_pages_expected"]]


def knee_table(res: ProbeResult):
    import pandas as pd  # deferred: pandas is slow to import; only tables need it

    return pd.DataFrame(
        [
            {
                "curve": k.curve,
                "flat up to": format_size(k.start),
                "risen by": format_size(k.end),
                "ns before": round(k.before_ns, 1),
                "ns after": round(k.after_ns, 1),
                "rise": round(k.rise, 2),
                "what lies there": k.meaning,
            }
            for k in res.knees
        ]
    )


def _knee_near(res: ProbeResult, curve: str, sizes) -> object:
    """The knee of ``curve`` whose transition (start/sqrt(2) .. end) holds one of ``sizes``, or None."""
    for k in res.knees:
        if k.curve == curve and any(k.start / 2**0.5 <= c <= k.end for c in sizes):
            return k
    return None


def located(res: ProbeResult):
    """The knees the issue names (L1 and L2 TLB reach, the data caches), each located on its curve
    beside what the closest presets (TLB) or Linux (caches) say: one row per structure."""
    import pandas as pd  # deferred: pandas is slow to import; only tables need it

    pr = preset_reach(res.presets)
    line_page = "THP" if res.thp is None else "4K"

    def reach(page, level):
        r = pr[(pr["page"] == page) & (pr["level"] == level)]
        return [(f"{x['preset']} {format_size(int(x['reach']))}", int(x["reach"])) for _, x in r.iterrows()]

    targets = [("L1 DTLB reach, 4K pages", "4K pages, page stride", reach("4K", 1)), ("L2 TLB reach, 4K pages", "4K pages, page stride", reach("4K", 2))]
    if res.thp is None:
        targets.append(("L1 DTLB reach, 2M pages", "THP pages, page stride", reach("2M", 1)))
    for name, size in cache_sizes():
        targets.append((name, f"{line_page} pages, line stride", [(f"Linux: {format_size(size)}", size)]))
    rows = []
    line_max = res.curve(line_page, "line").index.max() if len(res.curve(line_page, "line")) else 0
    for what, curve, cands in targets:
        if not cands:
            continue
        k = _knee_near(res, curve, [c for _, c in cands])
        beyond = curve.endswith("line stride") and min(c for _, c in cands) > line_max
        rows.append(
            {
                "structure": what,
                "curve": curve,
                "expected (closest presets or Linux)": ", ".join(n for n, _ in cands),
                "measured knee": (
                    f"{format_size(k.start)} -> {format_size(k.end)} ({k.before_ns:.1f} -> {k.after_ns:.1f} ns)"
                    if k
                    else ("beyond the sizes measured" if beyond else "no knee there")
                ),
                "start": k.start if k else None,
            }
        )
    if res.thp is None:
        k4 = _knee_near(res, "4K pages, page stride", [c for _, c in reach("4K", 1)])
        kt = _knee_near(res, "THP pages, page stride", [c for _, c in reach("4K", 1)])
        rows.append(
            {
                "structure": "THP curve at the 4K L1 DTLB reach",
                "curve": "THP pages, page stride",
                "expected (closest presets or Linux)": "no knee: 2M entries reach " + ", ".join(n for n, _ in reach("2M", 1)),
                "measured knee": (
                    f"{format_size(kt.start)} -> {format_size(kt.end)}: huge pages held as 4K TLB entries here "
                    "(a host that backs this machine with 4 KiB pages?)"
                )
                if kt and k4
                else "no knee there",
                "start": kt.start if kt else None,
            }
        )
    return pd.DataFrame(rows)


def _chase(size: int, rng) -> np.ndarray:
    """The probe's page-stride chase over ``size`` bytes from 1 TiB: a random cycle of one line per
    4 KiB page, repeated until at least 2**17 loads (and twice at least); the first, cold traversal
    counts too."""
    n = int(size) // PAGE
    order = np.arange(n, dtype=np.int64)[rng.permutation(n)] * PAGE + rng.integers(0, PAGE // 64, n) * 64
    reps = max(2, -(-(1 << 17) // n))
    return (CHASE_START + np.tile(order, reps)).astype(np.uint64)


CHASE_START = 1 << 40


def _chase_sizes(res: ProbeResult) -> list[int]:
    return [int(x) for x in sorted(res.medians.loc[res.medians["stride"] == "page", "size"].unique()) if not int(x) & (int(x) - 1)]


def simulated_chase(res: ProbeResult, preset: str | None = None, seed: int = 0):
    """pagesim's walks per load for the probe's page-stride chase on ``preset`` (default: the
    closest), 4K and 2M pages, at every measured size that is a power of two (:func:`_chase`)."""
    import pandas as pd  # deferred: pandas is slow to import; only tables need it

    name = preset or res.presets[0]
    rng = np.random.default_rng(seed)
    rows = []
    for size in _chase_sizes(res):
        addrs = _chase(size, rng)
        for page, p in (("4K", PAGE), ("2M", HUGE)):
            span = whole_huge(size)
            ds = simulate(name, addresses=addrs, layout=Layout.single(span, p, start=CHASE_START, name="[ probe ]"), specialize=False)
            walks = int(ds["walks"].values.sum())  # numpy's sum, as in probe._simulated_faults
            rows.append({"size": int(size), "working set MiB": int(size) / 2**20, "page": page, "preset": name, "walks per load": walks / addrs.size})
    return pd.DataFrame(rows)


# the machine models notebook 07 sets beside the probe: the preset on bare metal, and virtualised
# with the host backing guest memory in 4 KiB or 2 MiB pages (docs/nested.md)
MODELS = (("bare metal", None), ("VM, host 4K pages", "4K"), ("VM, host 2M pages", "2M"))


def simulated_models(res: ProbeResult, preset: str | None = None, seed: int = 0):
    """The probe's page-stride chase (:func:`_chase`) on ``preset`` under each of :data:`MODELS`,
    with 4K and 2M guest pages (the THP curve's), at every measured power-of-two size: walks,
    page-table references and translation cycles (TLB hit latencies, walks, SLB misses, at the
    preset's costs) per load."""
    import pandas as pd  # deferred: pandas is slow to import; only tables need it

    base = get_machine(preset or res.presets[0])
    rng = np.random.default_rng(seed)
    rows = []
    for size in _chase_sizes(res):
        addrs = _chase(size, rng)
        span = whole_huge(size)
        for model, host in MODELS:
            m = base if host is None else base.virtualised(host)
            for page, p in (("4K", PAGE), ("THP", HUGE)):
                ds = simulate(m, addresses=addrs, layout=Layout.single(span, p, start=CHASE_START, name="[ probe ]"), specialize=False)
                n = addrs.size
                rows.append(
                    {
                        "model": model,
                        "page": page,
                        "size": int(size),
                        "working set MiB": int(size) / 2**20,
                        "walks per load": int(ds["walks"].values.sum()) / n,
                        "refs per load": int(ds["walk_refs"].values.sum()) / n,
                        "cycles per load": float(ds["cycles"].sel(component=list(TRANSLATION)).values.sum()) / n,
                    }
                )
    return pd.DataFrame(rows)


def model_fit(res: ProbeResult, sim, by: str = "cycles per load", hz: float | None = None):
    """Which model's translation explains the measured gap between the 4K and THP page-stride curves.

    The two curves share their data-cache behaviour, so their gap d(s) = 4K(s) - THP(s) (ns per
    load, at each simulated size s) is translation. A model predicts it as t x x(s), x(s) its
    translation per load with 4K pages less with THP: ``by`` "cycles per load" (default: TLB hit
    latencies and walks at the preset's costs, so a level-1 miss that hits level 2 counts) or
    "refs per load" (page-table references only). The predicted 4K/THP ratio is
    (THP(s) + t x(s)) / THP(s), against the measured one, two ways:

    - **fitted**: t fitted per model by least squares (through zero, at least 0): one parameter
      each, so its error compares the models' shapes, not their ability to predict t;
    - **at the clock** (``by`` cycles only): t is one period of ``hz`` (default: this processor's,
      :func:`pagesim.host.here.cpu_hz`), nothing fitted: the preset's costs predict the gap.

    Per model: t, the RMS error of the ratio both ways, the number of sizes compared, the ratio at
    the largest size measured and modelled both ways, the first size where its THP chase walks on
    most loads, and which model is best each way (``best``: fitted; ``best at the clock``). A
    probe with no size in common with ``sim`` gives an empty table."""
    check_choice("by", by, ("cycles per load", "refs per load"))
    if hz is not None:
        hz = check_number("hz", hz, 1e6, 1e11)  # a processor's clock: 1 MHz to 100 GHz
    unit = "ns per cycle" if by == "cycles per load" else "ns per reference"
    clock = None
    if by == "cycles per load":
        clock = 1e9 / (cpu_hz()[0] if hz is None else hz)
    import pandas as pd  # deferred: pandas is slow to import; only tables need it

    k4, thp = res.curve("4K"), res.curve("THP")
    rows, curves = [], {}
    groups = sim.groupby("model", sort=False) if len(sim) and "model" in sim else ()
    for model, g in groups:
        refs = g.pivot(index="size", columns="page", values=by)
        sizes = [s for s in refs.index if s in k4.index and s in thp.index]
        if not sizes:
            continue
        x = np.array([refs.loc[s, "4K"] - refs.loc[s, "THP"] for s in sizes])
        d = np.array([k4[s] - thp[s] for s in sizes])
        t = max(0.0, float((x * d).sum() / (x * x).sum())) if (x * x).sum() > 0 else 0.0
        base = np.array([thp[s] for s in sizes])
        measured, predicted = (base + d) / base, (base + t * x) / base
        walks = g[(g["page"] == "THP")].set_index("size")["walks per load"]
        over = walks[walks > 0.5]
        row = {
            "model": model,
            f"t ({unit}, fitted)": round(t, 3),
            "ratio RMS error": float(np.sqrt(((predicted - measured) ** 2).mean())),
            "sizes": len(sizes),
            "largest size": format_size(sizes[-1]),
            "4K/THP measured": float(measured[-1]),
            "4K/THP model": float(predicted[-1]),
        }
        at_clock = None
        if clock is not None:
            at_clock = (base + clock * x) / base
            row["ratio RMS error at the clock"] = float(np.sqrt(((at_clock - measured) ** 2).mean()))
            row["4K/THP model at the clock"] = float(at_clock[-1])
        curves[model] = (sizes, predicted, at_clock, t)
        row["THP walks on most loads from"] = format_size(int(over.index.min())) if len(over) else "never"
        rows.append(row)
    out = pd.DataFrame(rows)
    if len(out):
        out["best"] = out["ratio RMS error"] == out["ratio RMS error"].min()
        if clock is not None:
            out["best at the clock"] = out["ratio RMS error at the clock"] == out["ratio RMS error at the clock"].min()
    out.attrs["by"] = by
    out.attrs["ns per cycle at the clock"] = clock
    # per model, what the errors were computed from: (sizes, 4K/THP fitted, 4K/THP at the clock or
    # None, the fitted t unrounded), so a plot draws exactly what the table judges
    out.attrs["curves"] = curves
    return out


def plot_models(res: ProbeResult, sim, fit):
    """The measured 4K/THP ratio of the page-stride chase against each model's, as
    :func:`model_fit` computed them: with its fitted t (dashed) and at the clock (dotted, when the
    fit was by cycles)."""
    import matplotlib.pyplot as plt  # deferred: matplotlib is slow to import; only figures need it

    k4, thp = res.curve("4K"), res.curve("THP")
    _, ax = plt.subplots(figsize=(7.5, 3.8))
    sizes = [s for s in sorted(set(sim["size"])) if s in k4.index and s in thp.index]
    ax.plot([s / 2**20 for s in sizes], [k4[s] / thp[s] for s in sizes], "ko-", ms=4, label="measured here")
    clock = fit.attrs.get("ns per cycle at the clock")
    for model, (at, fitted, at_clock, t) in fit.attrs.get("curves", {}).items():
        mib = [s / 2**20 for s in at]
        (line,) = ax.plot(mib, fitted, "--", label=f"{model} (fitted t = {t:.3g} ns)")
        if at_clock is not None:
            ax.plot(mib, at_clock, ":", color=line.get_color(), label=f"{model} (at the clock, t = {clock:.3g} ns)")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("working set (MiB)")
    ax.set_ylabel("4K / THP latency")
    ax.axhline(1, color="grey", lw=0.8)
    ax.set_title("4K / THP latency of the page-stride chase" + (": fitted (dashed), at the clock (dotted)" if clock else ": fitted (dashed)"), fontsize=10)
    ax.legend(fontsize=8)
    plt.tight_layout()
    return ax


def record_models(F, fit, preset: str, why_vm) -> None:
    """Section 4: which model explains this machine's 4K/THP gap best, fitted and at the clock, with
    each model's error and its ratio at the largest size."""
    if not len(fit):
        return
    best = fit.loc[fit["ratio RMS error"].idxmin()]
    errors = ", ".join(f"{r['model']} {r['ratio RMS error']:.3f}" for _, r in fit.iterrows())
    by_cycles = fit.attrs.get("by", "cycles per load") == "cycles per load"
    unit = "cycle" if by_cycles else "reference"
    if int(fit["sizes"].min()) < 2:  # one cost fits any one size exactly: no model can be told apart
        text = f"not told apart: {int(fit['sizes'].min())} size compared, and one fitted cost fits any one size (ratio RMS error: {errors})"
    else:
        text = f"fitted: {best['model']} (ratio RMS error: {errors})"
    if "best at the clock" in fit:
        clock = fit.loc[fit["ratio RMS error at the clock"].idxmin()]
        errors = ", ".join(f"{r['model']} {r['ratio RMS error at the clock']:.3f}" for _, r in fit.iterrows())
        largest = ", ".join(f"{r['model']} {r['4K/THP model at the clock']:.2f}" for _, r in fit.iterrows())
        text += f"; at the preset's costs and this clock, nothing fitted: {clock['model']} (ratio RMS error: {errors}; "
        text += f"4K/THP at {best['largest size']}: {largest})"
    F.shown(
        "model-fit",
        f"which model of {preset} explains the measured 4K/THP gap (fitted: one cost per {unit} each" + ("; at the clock: none fitted)" if by_cycles else ")"),
        "pointer-chase probe",
        f"4K/THP {best['4K/THP measured']:.2f} at {best['largest size']}; " + (f"a virtual machine ({why_vm})" if why_vm else "no hypervisor detected"),
        text,
        f"the cost per {unit} is fitted per model on the same curve, so its errors compare the models' shapes"
        + ("; at the clock, the preset's cycle costs (assumptions) predict the gap" if by_cycles else "")
        + "; a measurement of this machine, not document evidence",
    )


def first_walks(sim, threshold: float = 0.5) -> dict:
    """The smallest size at which the simulated chase walks on more than ``threshold`` of its loads, by page."""
    out = {}
    for page, g in sim.groupby("page"):
        over = g[g["walks per load"] > threshold]
        out[page] = int(over["size"].min()) if len(over) else None
    return out


def reach_marks(presets):
    """(label, bytes) of every data TLB level of ``presets``, for vertical lines on the plots."""
    pr = preset_reach(presets)
    return [(f"{r['preset']} L{r['level']} {r['page']}", int(r["reach"])) for _, r in pr.iterrows()]


# ------------------------------------------------------------------- the notebook's findings and figures
# Each ``record_*`` function records the findings of one section of notebooks/07_your_machine.ipynb in
# its ``Findings``; the notebook's appendix lists them. Every finding is measured on this machine.


def host_summary(cpu: str) -> str:
    """This machine in four lines: the processor, THP mode, the caches Linux reports, hardware counters."""
    return "\n".join(
        [
            cpu,
            f"transparent huge pages: {thp_mode() or 'not available'}",
            "caches Linux reports: " + (", ".join(f"{n} {format_size(s)}" for n, s in cache_sizes()) or "none"),
            hardware_counters(),
        ]
    )


def preset_table(presets):
    """The data TLB reach of ``presets`` by level and page size, the reach readable."""
    return preset_reach(presets).assign(reach=lambda d: d["reach"].map(format_size))


def plot_knees(res: ProbeResult, presets):
    """The page-stride and line-stride curves with each knee's transition shaded on its curve's colour."""
    import matplotlib.pyplot as plt  # deferred: matplotlib is slow to import; only figures need it

    cv = curves(res)
    _, ax = plt.subplots(figsize=(9, 4.5))
    plotting.latency(cv, marks=reach_marks(list(presets)[:1]) + cache_sizes(), ax=ax, title="the knees: where the median rises and stays up (shaded)")
    colors = {line.get_label(): line.get_color() for line in ax.get_lines()}
    for k in res.knees:
        ax.axvspan(k.start / 2**20, k.end / 2**20, color=colors.get(k.curve, "0.5"), alpha=0.12, lw=0)
    return ax


def record_knees(F, loc) -> None:
    """Section 2: each structure looked for, and the knee found near it (notes: nothing to check)."""
    for r in loc.itertuples():
        F.shown(
            "knee-" + r.structure.replace(",", "").replace(":", ""),  # finding ids hold no separator
            f"{r.structure}: knee of the {r.curve} curve",
            "pointer-chase probe",
            r._3,
            r._4,
            "a knee is where latency rises; the sizes beside it say what could cause it, not what did",
        )


def thp_pairs(d: dict):
    """The sizes beyond the 4K L2 TLB reach of :func:`thp_direction`: 4K and THP medians and their ratio."""
    import pandas as pd  # deferred: pandas is slow to import; only tables need it

    pairs = pd.DataFrame(d["pairs"], columns=["size", "4K ns", "THP ns"]).assign(**{"4K / THP": lambda t: t["4K ns"] / t["THP ns"]})
    pairs["working set"] = pairs["size"].map(format_size)
    return pairs


def plot_thp(d: dict):
    """The 4K/THP latency ratio at each size beyond the 4K L2 TLB reach, with the median and 1."""
    import matplotlib.pyplot as plt  # deferred: matplotlib is slow to import; only figures need it

    if d["holds"] is None:
        print("not checked:", d["why"])
        return None
    pairs = thp_pairs(d)
    _, ax = plt.subplots(figsize=(7.5, 3.6))
    ax.plot(pairs["size"] / 2**20, pairs["4K / THP"], "o-", ms=4, label="4K / THP at each size")
    ax.axhline(1, color="0.4", ls="--", lw=0.8, label="1: THP as slow as 4K")
    ax.axhline(d["ratio"], color="tab:green", lw=1, label=f"median {d['ratio']:.2f} (the check)")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("working set MiB")
    ax.set_ylabel("4K ns / THP ns")
    ax.set_title(f"page stride beyond the 4K L2 TLB reach ({format_size(d['reach'])}, {d['source']})")
    ax.legend(fontsize=8)
    return ax


def record_thp(F, d: dict) -> None:
    """Section 3: THP no slower than 4K pages beyond the 4K L2 TLB reach (the median ratio)."""
    fs = format_size
    if d["holds"] is None:
        F.not_reproduced("thp-direction", "THP no slower than 4K pages beyond the 4K L2 TLB reach", "pointer-chase probe", "-", "-", d["why"])
        return
    pairs = thp_pairs(d)
    s, f4, ft = d["worst"]
    F.check(
        "thp-direction",
        f"THP median latency no higher than 4K beyond the 4K L2 TLB reach ({d['source']}): median 4K/THP ratio >= 1",
        "pointer-chase probe",
        f"{len(pairs)} sizes from {fs(int(pairs['size'].min()))} to {fs(int(pairs['size'].max()))}",
        f"median 4K/THP {d['ratio']:.2f} (from {pairs['4K / THP'].min():.2f} to {pairs['4K / THP'].max():.2f}); "
        f"THP no slower at {d['sizes_holding']} of {len(pairs)} sizes "
        f"(closest {fs(s)}: {f4:.1f} vs {ft:.1f} ns)",
        d["holds"],
        kind="direction",
    )


def plot_chase(sim, preset: str):
    """pagesim's walks per load of the page-stride chase on ``preset``, with the preset's reach marked."""
    import matplotlib.pyplot as plt  # deferred: matplotlib is slow to import; only figures need it

    ax = plotting.lines(
        sim, x="working set MiB", y="walks per load", hue="page", logx=True, title=f"simulated: walks per load of the page-stride chase on {preset}"
    )
    plotting.mark_sizes(ax, reach_marks([preset]))
    plt.tight_layout()
    return ax


def record_chase(F, res: ProbeResult, sim, preset: str) -> None:
    """Section 4: the first size where the simulated chase walks on most loads, beside the measured knee."""
    steps = first_walks(sim)
    tlb4 = [k for k in res.knees if k.curve.startswith("4K pages, page") and "L2 TLB" in k.meaning]
    F.shown(
        "sim-step-4k",
        f"4K: first size where {preset} walks on most loads (simulated) beside the measured knee",
        "pointer-chase probe",
        ", ".join(f"{format_size(k.start)} -> {format_size(k.end)}" for k in tlb4) or "no knee named L2 TLB",
        format_size(steps["4K"]) if steps.get("4K") else "never within the sizes measured",
        "the preset is a stand-in for this processor: the agreement is shown, not required",
    )
    F.shown(
        "sim-step-2m",
        f"2M: first size where {preset} walks on most loads (simulated)",
        "pointer-chase probe",
        "-",
        format_size(steps["2M"]) if steps.get("2M") else "never within the sizes measured",
        "beside the THP curve above; a host that backs the guest with 4 KiB pages makes huge pages reach no further than 4 KiB pages",
    )


def plot_faults(ft):
    """Real minor faults (points) and simulated ones (line) of each mapping against the working set."""
    import matplotlib.pyplot as plt  # deferred: matplotlib is slow to import; only figures need it

    _, ax = plt.subplots(figsize=(7.5, 3.8))
    for page, g in ft.groupby("page"):
        g = g.sort_values("size")
        (line,) = ax.plot(g["size"] / 2**20, g["simulated_faults"].clip(lower=0.5), "-", lw=1.2, label=f"{page}: simulated")
        ax.plot(g["size"] / 2**20, g["real_faults"].clip(lower=0.5), "o", ms=5, mfc="none", color=line.get_color(), label=f"{page}: real")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("working set MiB")
    ax.set_ylabel("minor faults (a 0 drawn as 0.5)")
    ax.set_title("page faults of the probe's writes: real (circles) and simulated (lines)")
    ax.legend(fontsize=8)
    return ax


def record_faults(F, ft) -> None:
    """Section 5: real minor faults equal the simulated ones at every size (a note when the kernel
    granted fewer huge pages than asked)."""
    for page, g in ft.groupby("page"):
        granted = page == "4K" or bool((g["huge_pages"] == g["huge_pages_expected"]).all())
        what = f"{page}: real minor faults equal simulated at every size"
        got = f"equal at {int(g['equal'].sum())} of {len(g)} sizes; total real {int(g['real_faults'].sum()):,}, simulated {int(g['simulated_faults'].sum()):,}"
        if granted:
            F.check(f"faults-{page}", what, "this machine's kernel", f"{int(g['real_faults'].sum()):,} real", got, bool(g["equal"].all()))
        else:  # the check cannot be made: the simulation assumed every request granted
            F.not_reproduced(
                f"faults-{page}",
                what,
                "this machine's kernel",
                f"{int(g['real_faults'].sum()):,} real",
                got,
                f"the kernel granted {int(g['huge_pages'].sum())} of {int(g['huge_pages_expected'].sum())} huge pages (fragmented memory): "
                "the simulation assumed every request granted",
            )


__all__ = ["curves", "fault_table", "knee_table", "located", "simulated_chase", "first_walks", "reach_marks", "thp_direction", "l2_reach_4k"]
