"""64 KB pages on POWER (000_1774b52266f446e5.txt): coverage, data-ERAT misses, faults, prefaulting,
prefetch restarts at page boundaries with several streams at once per core, internal fragmentation;
the speed-ups of both systems under the timing model, and the modelling choices they rest on, each
re-run at half and twice its value."""

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
# The document (Memory Bandwidth) states the mechanism: the hardware prefetches "based on page
# boundary", so a new page restarts the stream's detection, and "there will be 16 times fewer
# prefetches initiated" with 64 KB pages. The model below turns the restarts counted in the simulated
# triad into bandwidth. Its parameters, none fitted to a figure of the document:
#   line        128 bytes: POWER6 cache lines (pagesim/data/caches.toml, 'power6', sourced there)
#   latency_ns  100 ns: the memory latency of both systems' hierarchies in pagesim/data/caches.toml
#               (470 cycles at 4.7 GHz, 400 cycles at 4.0 GHz), itself a MODELLING ASSUMPTION there
#   ramp_lines  2: demand misses before a stream is confirmed and prefetching starts (MODELLING
#               ASSUMPTION: a miss, then a second to the next line)
#   peak_gbs    8 GB/s: the bandwidth one core's streams share once prefetching runs (MODELLING
#               ASSUMPTION; the document gives no absolute bandwidth, only the change)
PREFETCH = dict(line=128, ramp_lines=2, latency_ns=100.0, peak_gbs=8.0)

# How many streams one core runs at once, from the document's STREAM runs ((1) STREAM, key parameters
# table: SMT disabled on the Power 575, enabled on the JS22, each OpenMP thread bound to one logical
# processor) and the triad's own arrays (two read, one written; that the written array's stream also
# restarts at every page is a MODELLING ASSUMPTION).
STREAM_SMT = {"Power 575": False, "JS22": True}


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


def stream_bandwidth(page_size, bytes_streamed: int, restarts: int, streams: int = 1, **params) -> float:
    """Modelled bandwidth (GB/s) of one core streaming ``bytes_streamed`` with ``restarts`` prefetch
    restarts, ``streams`` streams running at once on the core (``page_size`` is carried for the
    caller's table; the restarts already count its pages).

    Every line takes its slot on the core's path to memory, tau = line / peak. A restart adds the
    start-up of ``ramp_lines`` demand misses, each a memory latency instead of a slot:
    ramp_lines x (latency - tau). While one stream restarts, the others' lines already requested keep
    arriving: to run at peak in steady state the core keeps latency / tau lines in flight (Little's
    law), shared by its streams, so the other ``streams - 1`` hold (streams - 1) / streams of them,
    which fill (streams - 1) / streams x latency of the gap. The restart's exposed time is what is left:

        time = lines x tau + restarts x max(0, ramp_lines x (latency - tau) - (streams - 1) / streams x latency)

    One stream alone (``streams=1``) hides nothing; more streams hide more of each restart, so a
    larger page saves less."""
    q = {**PREFETCH, **params}
    for k in ("line", "latency_ns", "peak_gbs"):
        if not q[k] > 0:
            raise ValueError(f"{k}={q[k]!r} must be positive")
    if q["ramp_lines"] < 0:
        raise ValueError(f"ramp_lines={q['ramp_lines']!r} must be >= 0")
    if int(streams) != streams or streams < 1:
        raise ValueError(f"streams={streams!r} must be a whole number >= 1")
    tau = q["line"] / q["peak_gbs"]  # ns per line: bytes / (GB/s)
    lines = bytes_streamed / q["line"]
    exposed = max(0.0, q["ramp_lines"] * (q["latency_ns"] - tau) - (streams - 1) / streams * q["latency_ns"])
    ns = lines * tau + restarts * exposed
    return bytes_streamed / ns


def stream_counts(quick: bool = False) -> dict:
    """What the simulated triad gives the bandwidth model: bytes streamed, arrays (streams per
    thread) and prefetch restarts with 4 KiB and 64 KiB pages."""
    w = workload("stream", **WORKLOADS["STREAM"]["quick" if quick else "full"])
    return {"bytes": sum(n for _, n in w.spans()), "arrays": len(w.spans()), "restarts": {page: page_restarts(w, page) for page in ("4K", "64K")}}


def prefetch_table(quick: bool = False, streams: int = 1, counts: dict | None = None, **params):
    """Restarts and modelled bandwidth with 4 KiB and 64 KiB pages, ``streams`` streams at once on
    the core (1: one stream alone, nothing hidden)."""
    import pandas as pd

    c = stream_counts(quick) if counts is None else counts
    return pd.DataFrame(
        [{"page": page, "prefetch restarts": r, "modelled GB/s": stream_bandwidth(page, c["bytes"], r, streams, **params)} for page, r in c["restarts"].items()]
    )


def stream_gain(counts: dict, streams: int, **params) -> float:
    """Bandwidth gain of 64 KiB pages over 4 KiB, in %, with ``streams`` streams at once."""
    bw = {page: stream_bandwidth(page, counts["bytes"], r, streams, **params) for page, r in counts["restarts"].items()}
    return 100 * (bw["64K"] / bw["4K"] - 1)


def stream_systems(counts: dict, **params):
    """Per system of the document's STREAM runs: threads per core (SMT), streams at once per core
    (the triad's arrays x threads) and the modelled gain of 64 KiB pages."""
    import pandas as pd

    rows = []
    for system, smt in STREAM_SMT.items():
        threads = 2 if smt else 1
        k = counts["arrays"] * threads
        rows.append({"system": system, "SMT": smt, "threads per core": threads, "streams per core": k, "gain %": stream_gain(counts, k, **params)})
    return pd.DataFrame(rows).set_index("system")


#: the prefetch model's parameters swept x0.5..x2 (every one is an assumption): {name: PREFETCH key}
STREAM_CHOICES = {"prefetch ramp lines": "ramp_lines", "memory latency ns": "latency_ns", "core bandwidth GB/s": "peak_gbs"}


def stream_sweep(counts: dict, choice: str, factors=(0.5, 1, 2)) -> dict:
    """{value: {system: gain %}} with one parameter of the prefetch model (``STREAM_CHOICES``) at
    ``factors`` x its value in ``PREFETCH``."""
    key = STREAM_CHOICES[choice]
    out = {}
    for f in factors:
        v = PREFETCH[key] * f
        out[v] = stream_systems(counts, **{key: v})["gain %"].to_dict()
    return out


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


def _workload(label: str, quick: bool, params: dict | None = None):
    spec = WORKLOADS[label]
    return workload(spec["name"], **{**spec["quick" if quick else "full"], **(params or {})})


def timed_datasets(quick: bool = False, seed: int = 0, benchmarks=("Linpack", "SPECjbb2005"), machine="power6", params=None) -> dict:
    """Each benchmark on each system with 4 KiB and 64 KiB pages under the timing model
    (``pagesim.timing``): walks and data accesses through that system's caches, work per access from
    :func:`work_cycles`. ``params``: {benchmark: {workload keyword: value}} over ``WORKLOADS``;
    ``machine``: the POWER6 preset or a derived Machine. Returns {(benchmark, system, page): Dataset}."""
    from ..timing import simulate_timed

    out = {}
    for label in benchmarks:
        w = _workload(label, quick, (params or {}).get(label))
        for system, sysp in SYSTEMS.items():
            wc = work_cycles(label, system)
            for page in ("4K", "64K"):
                p = parse_size(page)
                out[label, system, page] = simulate_timed(
                    machine, w, layout=place(w, p, gap=p), hierarchy=sysp["hierarchy"], work_cycles=wc["work_cycles"], mlp=wc["mlp"], seed=seed
                )
    return out


COMPONENTS = ("work", "data_stall", "tlb_hit_latency", "walk", "slb_miss")


def timed_frame(datasets: dict, work: float = 1.0, memory: float = 1.0, caches: float = 1.0):
    """The runs of :func:`timed_datasets` as a table, priced with ``work`` x the derived work cycles
    per access, ``memory`` x the hierarchy's memory latency and ``caches`` x its cache latencies (no
    counter changes with a price: ``pagesim.timing.cycles_by_component`` re-prices without simulating).
    Cycles are steady state: first-touch faults left out, as in erat_runs."""
    import pandas as pd

    from ..timing import cycles_by_component

    rows = []
    for (label, system, page), ds in datasets.items():
        lat = ds["cache_latency"].values.astype(float)
        lat = np.append(lat[:-1] * caches, lat[-1] * memory)
        wc = work * work_cycles(label, system)["work_cycles"]
        c = cycles_by_component(ds, work_cycles=wc, latencies=lat)
        row = {
            "workload": label,
            "system": system,
            "page": page,
            "accesses": int(ds["accesses"].sum()),
            "derat_misses": int(ds["misses"].sel(structure="D-ERAT").sum()),
            "work_cycles": wc,
        }
        for comp in COMPONENTS:
            row[comp] = float(c[comp].sum())
        row["cycles"] = sum(row[k] for k in COMPONENTS)
        rows.append(row)
    return pd.DataFrame(rows)


def timed_runs(quick: bool = False, seed: int = 0, benchmarks=("Linpack", "SPECjbb2005"), machine="power6", params=None):
    """:func:`timed_frame` of :func:`timed_datasets` at the chosen prices."""
    return timed_frame(timed_datasets(quick, seed, benchmarks, machine, params))


def timed_summary(runs):
    """Per benchmark and system: throughput improvement of 64 KiB pages, (rate64 - rate4) / rate4,
    the data-ERAT miss reduction, and the shares of the 4 KiB run's cycles spent walking and stalled."""
    import pandas as pd

    out = []
    for (wl, system), g in runs.groupby(["workload", "system"], sort=False):
        a = g.set_index("page")
        out.append(
            {
                "workload": wl,
                "system": system,
                "throughput_improvement_pct": 100 * (a.loc["4K", "cycles"] / a.loc["64K", "cycles"] - 1),
                "derat_reduction_pct": 100 * (a.loc["4K", "derat_misses"] - a.loc["64K", "derat_misses"]) / a.loc["4K", "derat_misses"],
                "walk share 4K %": 100 * a.loc["4K", "walk"] / a.loc["4K", "cycles"],
                "data stall share 4K %": 100 * a.loc["4K", "data_stall"] / a.loc["4K", "cycles"],
            }
        )
    return pd.DataFrame(out)


# The modelling choices the timed figures rest on, each swept x0.5..x2 of its chosen value:
#   price     re-priced from the same runs (no counter changes): the derived work per access (an
#             assumption for SPECjbb, see above), the assumed memory latency and cache latencies
#             (pagesim/data/caches.toml lists them as assumed), as factors of the chosen prices
#   machine   the POWER6 D-ERAT's entries (128: unsourced, datasets/architecture/NOTES.md 2.3)
#   workload  a keyword of one benchmark's workload in WORKLOADS (sizes are ours, the profile of
#             the SPECjbb-like heap an assumption, the number of references simulated a run length)
TIMED_CHOICES = {
    "work cycles per access (x derived)": dict(kind="price", key="work", benchmarks=("Linpack", "SPECjbb2005")),
    "memory latency (x assumed)": dict(kind="price", key="memory", benchmarks=("Linpack", "SPECjbb2005")),
    "cache latencies (x assumed)": dict(kind="price", key="caches", benchmarks=("Linpack", "SPECjbb2005")),
    "D-ERAT entries": dict(kind="machine", key="entries", benchmarks=("Linpack", "SPECjbb2005")),
    "D-ERAT ways": dict(kind="machine", key="ways", benchmarks=("Linpack", "SPECjbb2005")),
    "hashed page table PTEGs": dict(kind="walker", key="hpt_ptegs", benchmarks=("Linpack", "SPECjbb2005")),
    "Linpack matrix order n": dict(kind="workload", key="n", benchmarks=("Linpack",)),
    "Linpack tile": dict(kind="workload", key="block", benchmarks=("Linpack",)),
    "Linpack references simulated": dict(kind="workload", key="max_accesses", benchmarks=("Linpack",)),
    "SPECjbb hot fraction": dict(kind="workload", key="hot_fraction", benchmarks=("SPECjbb2005",)),
    "SPECjbb live set MiB": dict(kind="workload", key="hot", benchmarks=("SPECjbb2005",)),
    "SPECjbb references simulated": dict(kind="workload", key="accesses", benchmarks=("SPECjbb2005",)),
}


def choices_for(benchmark: str, metric: str = "throughput") -> list[str]:
    """The modelling choices of ``TIMED_CHOICES`` a figure of ``benchmark`` rests on: every one for a
    throughput (or IPC) figure, those that change a counter for the data-ERAT reduction."""
    if metric not in ("throughput", "derat"):
        raise ValueError(f"metric={metric!r}: use 'throughput' or 'derat'")
    # the data-ERAT misses move with what the ERAT holds and what the program touches, not with prices or the page table's size
    return [c for c, v in TIMED_CHOICES.items() if benchmark in v["benchmarks"] and (metric == "throughput" or v["kind"] not in ("price", "walker"))]


def chosen(choice: str, quick: bool = False) -> float:
    """The value of ``choice`` the notebook's runs use (1 for a price factor)."""
    v = TIMED_CHOICES[choice]
    if v["kind"] == "price":
        return 1.0
    if v["kind"] == "machine":
        return float(getattr(machine("power6").structure("D-ERAT"), v["key"]))
    if v["kind"] == "walker":
        return float(getattr(machine("power6").walker, v["key"]))
    (label,) = v["benchmarks"]
    x = WORKLOADS[label]["quick" if quick else "full"][v["key"]]
    return parse_size(x) / 2**20 if v["key"] == "hot" else float(x)


def timed_sweep(choice: str, base: dict, quick: bool = False, seed: int = 0, factors=None) -> dict:
    """{value: timed_summary} with ``choice`` at ``factors`` x its chosen value (default 0.5, 1, 2;
    prices cost nothing, so they take 0.5, 0.71, 1, 1.41, 2); ``base``: the :func:`timed_datasets`
    of the chosen values, reused at the chosen value and for every price."""
    v = TIMED_CHOICES[choice]
    c = chosen(choice, quick)
    if factors is None:
        factors = (0.5, 2**-0.5, 1, 2**0.5, 2) if v["kind"] == "price" else (0.5, 1, 2)
    out = {}
    for f in factors:
        x = c * f
        if v["kind"] == "price":
            out[x] = timed_summary(timed_frame(base, **{v["key"]: x}))
            continue
        if f == 1:
            ds = {k: d for k, d in base.items() if k[0] in v["benchmarks"]}
        elif v["kind"] == "machine":
            m = machine("power6").replace_structure("D-ERAT", **{v["key"]: int(round(x))})
            ds = timed_datasets(quick, seed, v["benchmarks"], machine=m)
        elif v["kind"] == "walker":
            import dataclasses

            m0 = machine("power6")
            m = dataclasses.replace(m0, name=m0.name + "*", walker=dataclasses.replace(m0.walker, **{v["key"]: int(round(x))}))
            ds = timed_datasets(quick, seed, v["benchmarks"], machine=m)
        else:
            (label,) = v["benchmarks"]
            val = f"{x:g}M" if v["key"] == "hot" else (float(x) if v["key"] == "hot_fraction" else int(round(x)))
            ds = timed_datasets(quick, seed, (label,), params={label: {v["key"]: val}})
        out[x] = timed_summary(timed_frame(ds))
    return out


def sweep_rows(sweep: dict, benchmark: str, column: str = "throughput_improvement_pct") -> dict:
    """{value: {system: figure}} of one benchmark from a :func:`timed_sweep`."""
    out = {}
    for x, t in sweep.items():
        t = t.set_index(["workload", "system"])[column]
        out[x] = {system: float(t[benchmark, system]) for system in SYSTEMS}
    return out


def sweep_table(sweeps: dict, column: str = "throughput_improvement_pct"):
    """Every timed sweep in one table: a row per (choice, value), a column per (benchmark, system)
    the choice moves."""
    import pandas as pd

    rows = []
    for choice, sweep in sweeps.items():
        for x, t in sweep.items():
            row = {"choice": choice, "value": x}
            for _, r in t.iterrows():
                row[r["workload"], r["system"]] = r[column]
            rows.append(row)
    out = pd.DataFrame(rows).set_index(["choice", "value"])
    out.columns = pd.MultiIndex.from_tuples(out.columns, names=["workload", "system"])
    return out


def versus(simulation: dict, document: dict, unit: str = "%") -> str:
    """'JS22 8.5% vs 11.3% (0.75x), ...': each row's simulated figure, the document's, and the ratio."""
    return ", ".join(f"{k} {simulation[k]:.1f}{unit} vs {document[k]:g}{unit} ({simulation[k] / document[k]:.2f}x)" for k in document)
