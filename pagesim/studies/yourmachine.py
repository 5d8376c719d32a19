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

    return pd.DataFrame([{"curve": k.curve, "flat up to": format_size(k.start), "risen by": format_size(k.end),
                          "ns before": round(k.before_ns, 1), "ns after": round(k.after_ns, 1), "rise": round(k.rise, 2),
                          "what lies there": k.meaning} for k in res.knees])


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
            rows.append({"size": int(size), "working set MiB": int(size) / 2**20, "page": page, "preset": name,
                         "walks per load": int(ds["walks"].sum()) / addrs.size})
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


__all__ = ["curves", "fault_table", "knee_table", "simulated_chase", "first_walks", "reach_marks", "thp_direction", "l2_reach_4k"]
