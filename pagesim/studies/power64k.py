"""64 KB pages on POWER (000_1774b52266f446e5.txt): coverage, data-ERAT misses, faults, prefaulting,
prefetch restarts at page boundaries, internal fragmentation."""
from __future__ import annotations

import numpy as np

from ..machines import machine
from ..machines import machine as get_machine
from ..simulate import place, simulate
from ..units import parse_size
from ..workloads import workload

# Workloads on the POWER6 data-ERAT model. Sizes are ours (the document's runs use 22 GB and
# 2.9 GB of STREAM arrays and N = 59,000..105,400 for HPL); quick mode shrinks them.
#   STREAM       the triad over three arrays laid out back to back, as one static array block
#   Linpack-like blocked matrix multiply (DGEMM tiles), n x n doubles, 64 x 64 tiles
#   SPECjbb-like random references over a 2560 MiB Java heap (the document's -Xmx2560m), half
#                of them into a 4 MiB live set (MODELLING ASSUMPTION: the hot fraction sets the
#                size of the reduction; the document gives no access profile)
WORKLOADS = {
    "STREAM": dict(name="stream", full=dict(n=2_000_000), quick=dict(n=300_000)),
    "Linpack": dict(name="blocked_matrix", full=dict(n=2048, block=64, max_accesses=12_000_000), quick=dict(n=1024, block=64, max_accesses=3_000_000)),
    "SPECjbb2005": dict(name="hot_cold", full=dict(size="2560M", hot="4M", hot_fraction=0.5, accesses=1_500_000),
                        quick=dict(size="2560M", hot="4M", hot_fraction=0.5, accesses=300_000)),
}


def coverage() -> dict:
    """The coverage arithmetic, computed from the POWER5+ preset's TLB."""
    m = machine("power5+")
    entries = m.structure("TLB").entries
    r4 = m.reach("4K", structure="TLB")
    r64 = m.reach("64K", structure="TLB")
    return {
        "entries": entries,
        "reach_4k_mib": r4 / 2**20,
        "share_16g_pct": 100 * r4 / (16 << 30),
        "share_1g_pct": 100 * r4 / (1 << 30),
        "ratio_64k_4k": r64 // r4,
    }


def erat_runs(quick: bool = False, seed: int = 0, machine="power6", structure: str = "D-ERAT"):
    """Each workload with 4 KiB and 64 KiB pages on ``machine`` (POWER6 by default; a preset name or a
    derived Machine, e.g. ``pagesim.machine("power6").replace_structure("D-ERAT", entries=256)``):
    misses of ``structure``, faults, modelled cycles."""
    import pandas as pd

    m = get_machine(machine)
    m.structure(structure)  # a machine without it fails here, naming the structures it has
    rows = []
    for label, spec in WORKLOADS.items():
        w = workload(spec["name"], **spec["quick" if quick else "full"])
        for page in ("4K", "64K"):
            p = parse_size(page)
            lay = place(w, p, gap=p)  # arrays back to back, as one program's data
            ds = simulate(m, w, layout=lay, seed=seed)
            rows.append({"workload": label, "page": page, "accesses": int(ds["accesses"].sum()),
                         "derat_misses": int(ds["misses"].sel(structure=structure).sum()),
                         "faults": int(ds["faults"].sum()),
                         # steady state: work and translation, not the one-off first-touch faults
                         # that a short simulated run would over-weight
                         "cycles": float(ds["cycles"].sel(component=["work", "tlb_hit_latency", "walk", "slb_miss"]).sum()),
                         "translation_share": float(ds["translation_share"])})
    df = pd.DataFrame(rows)
    return df


def erat_summary(runs):
    """Per workload: the document's reduction and improvement formulas applied to the simulation."""
    import pandas as pd

    out = []
    for wl, g in runs.groupby("workload", sort=False):
        a = g.set_index("page")
        m4, m64 = a.loc["4K", "derat_misses"], a.loc["64K", "derat_misses"]
        c4, c64 = a.loc["4K", "cycles"], a.loc["64K", "cycles"]
        out.append({"workload": wl, "derat_reduction_pct": 100 * (m4 - m64) / m4,
                    # throughput improvement: (rate64 - rate4) / rate4, with rate = 1 / cycles
                    "throughput_improvement_pct": 100 * (c4 / c64 - 1)})
    return pd.DataFrame(out)


def ipc_improvement(runs):
    """Per workload, the document's IPC improvement applied to the simulation: (IPC with 64 KiB -
    IPC with 4 KiB) / IPC with 4 KiB, with IPC = accesses / modelled cycles. pagesim counts accesses,
    not instructions; with the same instructions per access in both runs (the same program), the
    modelled IPC changes exactly as modelled throughput does."""
    import pandas as pd

    out = []
    for wl, g in runs.groupby("workload", sort=False):
        a = g.set_index("page")
        ipc4, ipc64 = a.loc["4K", "accesses"] / a.loc["4K", "cycles"], a.loc["64K", "accesses"] / a.loc["64K", "cycles"]
        out.append({"workload": wl, "ipc_improvement_pct": 100 * (ipc64 - ipc4) / ipc4})
    return pd.DataFrame(out)


def farthest(values, lo: float, hi: float) -> float:
    """Of several simulated figures, the one farthest from the middle of the band lo..hi (a finding
    over several figures is only as good as its worst one)."""
    mid = (lo + hi) / 2
    return max(values, key=lambda v: abs(v - mid))


def faults_per_64k() -> dict:
    """Faults to touch 64 KiB: 4 KiB pages, 64 KiB pages, and 4 KiB pages in 64 KiB emulation mode."""
    out = {}
    for label, kw in (("4K", dict(page_size="4K")), ("64K", dict(page_size="64K")), ("4K, 64K emulation", dict(page_size="4K", fault_around=16))):
        ds = simulate("power6", "touch", size="64K", pattern="memset", **kw)
        out[label] = {"faults": int(ds["faults"].sum()), "prefaulted": int(ds["prefaulted"].sum())}
    return out


def prefault_waste(size="16M", touches=(16, 64, 256, 1024, 4096), seed: int = 1):
    """Random touches of a region in 64 KiB emulation mode: faults, pages prefaulted, prefaulted
    pages never touched, and the memory they hold."""
    import pandas as pd

    rows = []
    for n in touches:
        ds = simulate("power6", "touch", size=size, pattern="random", accesses=n, page_size="4K", fault_around=16, seed=seed)
        plain = simulate("power6", "touch", size=size, pattern="random", accesses=n, page_size="4K", seed=seed)
        rows.append({"touches": n, "faults (4K)": int(plain["faults"].sum()), "faults (emulation)": int(ds["faults"].sum()),
                     "prefaulted": int(ds["prefaulted"].sum()), "never touched": int(ds["prefaulted_untouched"].sum()),
                     "wasted KiB": int(ds["prefault_waste"].sum()) // 1024})
    return pd.DataFrame(rows)


# -------------------------------------------------------------------------------- prefetch
# MODELLING ASSUMPTIONS for the prefetch model (none is from the document): 128-byte lines, a
# stream detected after `ramp_lines` demand misses at `latency_ns` each, then lines arrive at
# `peak_gbs`. The document states the mechanism: prefetch "based on page boundary", so a new
# page restarts detection and "there will be 16 times fewer prefetches initiated" with 64 KB.
PREFETCH = dict(line=128, ramp_lines=2, latency_ns=100.0, peak_gbs=8.0)


def page_restarts(w, page_size: int, chunk: int = 1 << 20) -> int:
    """Prefetch restarts in a workload's trace: per array (region), each access to a different page
    than that array's previous access starts a new prefetch stream."""
    p = parse_size(page_size)
    lay = place(w, p, gap=p)
    starts = np.array([r.start for r in lay.regions], dtype=np.uint64)
    last = np.full(len(starts), -1, dtype=np.int64)
    restarts = 0
    shift = np.uint64(p.bit_length() - 1)
    for a, _ in w.chunks([r.start for r in lay.regions], chunk, 0):
        reg = np.searchsorted(starts, a, side="right") - 1
        pages = (a >> shift).astype(np.int64)
        for r in range(len(starts)):
            pr = pages[reg == r]
            if pr.size == 0:
                continue
            restarts += int(pr[0] != last[r]) + int(np.count_nonzero(pr[1:] != pr[:-1]))
            last[r] = pr[-1]
    return restarts


def stream_bandwidth(page_size, bytes_streamed: int, restarts: int, **params) -> float:
    """Modelled bandwidth (GB/s) for streaming ``bytes_streamed`` with ``restarts`` prefetch restarts."""
    q = {**PREFETCH, **params}
    lines = bytes_streamed / q["line"]
    ramp = restarts * q["ramp_lines"]
    seconds = ramp * q["latency_ns"] * 1e-9 + (lines - ramp) * q["line"] / (q["peak_gbs"] * 1e9)
    return bytes_streamed / seconds / 1e9


def prefetch_table(quick: bool = False):
    import pandas as pd

    w = workload("stream", **WORKLOADS["STREAM"]["quick" if quick else "full"])
    nbytes = sum(n for _, n in w.spans())
    rows = []
    for page in ("4K", "64K"):
        r = page_restarts(w, page)
        rows.append({"page": page, "prefetch restarts": r, "modelled GB/s": stream_bandwidth(page, nbytes, r)})
    return pd.DataFrame(rows)
