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
    "SPECjbb2005": dict(
        name="hot_cold",
        full=dict(size="2560M", hot="4M", hot_fraction=0.5, accesses=1_500_000),
        quick=dict(size="2560M", hot="4M", hot_fraction=0.5, accesses=300_000),
    ),
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
            rows.append(
                {
                    "workload": label,
                    "page": page,
                    "accesses": int(ds["accesses"].sum()),
                    "derat_misses": int(ds["misses"].sel(structure=structure).sum()),
                    "faults": int(ds["faults"].sum()),
                    # steady state: work and translation, not the one-off first-touch faults
                    # that a short simulated run would over-weight
                    "cycles": float(ds["cycles"].sel(component=["work", "tlb_hit_latency", "walk", "slb_miss"]).sum()),
                    "translation_share": float(ds["translation_share"]),
                }
            )
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
        out.append(
            {
                "workload": wl,
                "derat_reduction_pct": 100 * (m4 - m64) / m4,
                # throughput improvement: (rate64 - rate4) / rate4, with rate = 1 / cycles
                "throughput_improvement_pct": 100 * (c4 / c64 - 1),
            }
        )
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
        rows.append(
            {
                "touches": n,
                "faults (4K)": int(plain["faults"].sum()),
                "faults (emulation)": int(ds["faults"].sum()),
                "prefaulted": int(ds["prefaulted"].sum()),
                "never touched": int(ds["prefaulted_untouched"].sum()),
                "wasted KiB": int(ds["prefault_waste"].sum()) // 1024,
            }
        )
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


# -------------------------------------------------------------------------------- timed runs
# What 000_1774b52266f446e5.txt states that sets the work per memory access, and what follows from
# it. The document gives no absolute IPC, Gflops or bandwidth (only the changes it measured), so work
# per access comes from each system's stated configuration and the core's issue width:
#
#   Measurement Systems table: Power 575 4.7 GHz, 32 cores, 128 GB, 32 MB L3 per chip; JS22 4.0 GHz,
#     4 cores, 32 GB, no L3. The clock turns the memory latency into cycles and the L3 column decides
#     whether page-table lines can be caught there: each system has its own data-cache hierarchy in
#     pagesim/data/caches.toml ('power6' and 'power6-js22').
#   (2) Linpack key parameters: SMT enabled on the Power 575, disabled on the JS22.
#   (3) SPECjbb2005: "16 JVMs on the IBM Power 575 with SMT being enabled"; for the JS22 the document
#     does not say, so the JS22 runs single-threaded, as its Linpack run (an assumption).
#
# The core (IBM Redbook REDP-4405 draft, 2009, ch. 2 'POWER6 processor': "In order dispatch of five
# operations (single thread), seven operations (Simultaneous Multithreading) to nine execution units:
# Two load or store operations, Two fixed-point ..., Two floating-point operations, One branch"):
#   * every access the trace holds is a load or a store, and the core issues two per cycle: one
#     thread alone spends at least 1/2 cycle per access, two SMT threads sharing the core 1 cycle each
#     (L1 hits included; what misses L1 is the timing model's data_stall);
#   * Linpack's trace (blocked DGEMM) holds (1 + 2b)/b accesses per multiply-add, b the tile: with two
#     floating-point operations per cycle the multiply-adds need 1/(2 x (1 + 2b)/b) < 1/2 cycle per
#     access, so the load/store units, not the FPUs, set the work: 1/2 (JS22) or 1 (Power 575, SMT);
#   * SPECjbb's trace holds its heap references only; the instructions between them are not stated, so
#     it takes the same load/store bound (an ASSUMPTION: it is the least work a reference can carry; the
#     notebook shows how little the result moves with it, because data stalls dominate);
#   * in-order dispatch: a thread stalls on its own data miss, so misses do not overlap (mlp = 1).
SYSTEMS = {
    "Power 575": dict(clock_ghz=4.7, cores=32, memory_gb=128, l3_mb=32, hierarchy="power6"),
    "JS22": dict(clock_ghz=4.0, cores=4, memory_gb=32, l3_mb=0, hierarchy="power6-js22"),
}
SMT = {("Linpack", "Power 575"): True, ("Linpack", "JS22"): False, ("SPECjbb2005", "Power 575"): True, ("SPECjbb2005", "JS22"): False}
LOAD_STORE_PER_CYCLE = 2  # per core (REDP-4405, above)
FP_PER_CYCLE = 2  # fused multiply-adds per core per cycle (REDP-4405, above)
MLP = 1.0  # in-order core (REDP-4405, above)


def work_cycles(benchmark: str, system: str) -> dict:
    """Work cycles per simulated access of ``benchmark`` on ``system``, derived as the comment above
    says; returns the value and the arithmetic, for the notebook to show."""
    if (benchmark, system) not in SMT:
        raise ValueError(f"benchmark={benchmark!r}, system={system!r}: use one of {sorted(SMT)}")
    threads = 2 if SMT[benchmark, system] else 1
    lsu = threads / LOAD_STORE_PER_CYCLE
    text = f"{threads} thread(s) / {LOAD_STORE_PER_CYCLE} loads or stores per cycle = {lsu:g}"
    if benchmark == "Linpack":
        b = WORKLOADS["Linpack"]["full"]["block"]
        per_fma = (1 + 2 * b) / b
        fpu = threads / (FP_PER_CYCLE * per_fma)
        text += f"; FPUs: {threads} / ({FP_PER_CYCLE} x {per_fma:.3f} accesses per multiply-add) = {fpu:.3f}, so the load/store bound holds"
        lsu = max(lsu, fpu)
    return {"benchmark": benchmark, "system": system, "smt": threads == 2, "work_cycles": lsu, "mlp": MLP, "derivation": text}


def timed_runs(quick: bool = False, seed: int = 0, benchmarks=("Linpack", "SPECjbb2005"), hot_fraction=None):
    """Each benchmark on each system with 4 KiB and 64 KiB pages under the timing model
    (``pagesim.timing``): walks and data accesses through that system's caches, work per access from
    :func:`work_cycles`. Cycles are steady state (first-touch faults left out, as in erat_runs)."""
    import pandas as pd

    from ..timing import simulate_timed

    rows = []
    for label in benchmarks:
        spec = WORKLOADS[label]
        params = dict(spec["quick" if quick else "full"])
        if hot_fraction is not None and label == "SPECjbb2005":
            params["hot_fraction"] = float(hot_fraction)
        w = workload(spec["name"], **params)
        for system, sysp in SYSTEMS.items():
            wc = work_cycles(label, system)
            for page in ("4K", "64K"):
                p = parse_size(page)
                ds = simulate_timed(
                    "power6", w, layout=place(w, p, gap=p), hierarchy=sysp["hierarchy"], work_cycles=wc["work_cycles"], mlp=wc["mlp"], seed=seed
                )
                c = ds["cycles"]
                row = {
                    "workload": label,
                    "system": system,
                    "page": page,
                    "accesses": int(ds["accesses"].sum()),
                    "derat_misses": int(ds["misses"].sel(structure="D-ERAT").sum()),
                    "work_cycles": wc["work_cycles"],
                }
                for comp in ("work", "data_stall", "tlb_hit_latency", "walk", "slb_miss"):
                    row[comp] = float(c.sel(component=comp).sum())
                row["cycles"] = sum(row[k] for k in ("work", "data_stall", "tlb_hit_latency", "walk", "slb_miss"))
                rows.append(row)
    return pd.DataFrame(rows)


def timed_summary(runs):
    """Per benchmark and system: throughput improvement of 64 KiB pages, (rate64 - rate4) / rate4,
    and the share of the 4 KiB run's cycles spent walking."""
    import pandas as pd

    out = []
    for (wl, system), g in runs.groupby(["workload", "system"], sort=False):
        a = g.set_index("page")
        out.append(
            {
                "workload": wl,
                "system": system,
                "throughput_improvement_pct": 100 * (a.loc["4K", "cycles"] / a.loc["64K", "cycles"] - 1),
                "walk share 4K %": 100 * a.loc["4K", "walk"] / a.loc["4K", "cycles"],
                "data stall share 4K %": 100 * a.loc["4K", "data_stall"] / a.loc["4K", "cycles"],
            }
        )
    return pd.DataFrame(out)


def recost_work(runs, work: float):
    """The timed runs re-costed with ``work`` cycles per access (work changes no counter and no
    stall: cycles move by (work - work_cycles) x accesses)."""
    r = runs.copy()
    r["cycles"] = r["cycles"] + (float(work) - r["work_cycles"]) * r["accesses"]
    r["work"] = float(work) * r["accesses"]
    r["work_cycles"] = float(work)
    return r
