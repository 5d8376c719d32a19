"""Your machine's TLB (notebook 07): the latency probe's curves and knees (pagesim.probe) beside the
closest presets' reach and beside pagesim's simulation of the same pointer chase, and the real
page faults of the probe's mappings beside the simulated ones."""

from __future__ import annotations

import numpy as np

from ..probe import HUGE, PAGE, ProbeResult, l2_reach_4k, preset_reach, thp_direction
from ..units import format_size


def hardware_counters() -> str:
    """Whether perf can count dTLB misses here (often not in a virtual machine), in one line."""
    import shutil
    import subprocess

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
    import pandas as pd

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
    import pandas as pd

    from ..probe import cache_sizes

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


def simulated_chase(res: ProbeResult, preset: str | None = None, seed: int = 0):
    """pagesim's walks per load for the probe's page-stride chase on ``preset`` (default: the
    closest), 4K and 2M pages, at every measured size that is a power of two. The chase visits the same random cycle of one
    line per 4 KiB page; it is repeated until at least 2**17 loads (and twice at least), and the
    first, cold traversal is included in the count."""
    import pandas as pd

    from ..layout import Layout
    from ..simulate import simulate

    name = preset or res.presets[0]
    rng = np.random.default_rng(seed)
    rows = []
    start = 1 << 40
    for size in sorted(res.medians.loc[res.medians["stride"] == "page", "size"].unique()):
        if int(size) & (int(size) - 1):
            continue
        n = int(size) // PAGE
        order = np.arange(n, dtype=np.int64)[rng.permutation(n)] * PAGE + rng.integers(0, PAGE // 64, n) * 64
        reps = max(2, -(-(1 << 17) // n))
        addrs = (start + np.tile(order, reps)).astype(np.uint64)
        for page, p in (("4K", PAGE), ("2M", HUGE)):
            span = -(-int(size) // HUGE) * HUGE
            ds = simulate(name, addresses=addrs, layout=Layout.single(span, p, start=start, name="[ probe ]"), specialize=False)
            walks = int(ds["walks"].values.sum())  # numpy's sum, as in probe._simulated_faults
            rows.append({"size": int(size), "working set MiB": int(size) / 2**20, "page": page, "preset": name, "walks per load": walks / addrs.size})
    return pd.DataFrame(rows)


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


__all__ = ["curves", "fault_table", "knee_table", "located", "simulated_chase", "first_walks", "reach_marks", "thp_direction", "l2_reach_4k"]
