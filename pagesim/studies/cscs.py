"""Page size and TLB entries on the Opteron (001_ec4ce787d7978bc9.txt): reach, kernels where 2 MB pages
win or lose, a map over working set and locality, strong scaling, and more 2 MB entries.

The comparison is the paper's: % change with small pages = 100 (T_large - T_small) / T_small, with T
the modelled steady-state cycles (work and translation; first-touch faults are left out, as a long
run amortises them). Work per access is each workload's ``work_cycles`` (a MODELLING ASSUMPTION; MD
uses 10 cycles of arithmetic per neighbour access).
"""
from __future__ import annotations

from .._progress import steps
from ..machines import machine
from ..simulate import simulate

STEADY = ["work", "tlb_hit_latency", "walk", "slb_miss"]
MD_WORK = 10.0  # cycles of arithmetic per neighbour access (modelling assumption)
PLANE = 1040 << 10  # a plane of the solver grid: 1 MiB + 16 KiB (not a power of two: see planes())


def steady_cycles(ds) -> float:
    return float(ds["cycles"].sel(component=STEADY).sum())


def small_page_change(m, wl, seed: int = 0, **kw) -> dict:
    """Modelled cycles with 4K and 2M pages and the paper's % improvement of small pages."""
    t = {}
    walks = {}
    for p in ("4K", "2M"):
        ds = simulate(m, wl, page_size=p, seed=seed, **kw)
        t[p] = steady_cycles(ds)
        walks[p] = int(ds["walks"].sum())
    return {"T_small": t["4K"], "T_large": t["2M"], "walks_small": walks["4K"], "walks_large": walks["2M"],
            "small_page_change_pct": 100 * (t["2M"] - t["4K"]) / t["4K"], "accesses": int(ds["accesses"].sum())}


def reach() -> dict:
    k8 = machine("opteron-k8")
    d4 = sum(s.entries for s in k8.chain("data", 4096))
    i4 = sum(s.entries for s in k8.chain("instr", 4096))
    return {"entries_4k_data": d4, "entries_4k_both": d4 + i4, "reach_4k_both_mib": (d4 + i4) * 4096 / 2**20,
            "reach_4k_data_mib": d4 * 4096 / 2**20, "entries_2m_data": sum(s.entries for s in k8.chain("data", 2 << 20)),
            "reach_2m_mib": k8.reach("2M") / 2**20}


def kernels(quick: bool = False, seed: int = 0, m="opteron-k8", progress: bool | None = None):
    """The paper's application kinds: where 2 MB pages lose (strided solver, MD) and win.
    ``progress``: a progress bar (default: in full mode only)."""
    import pandas as pd

    n = 200_000 if quick else 1_000_000
    cases = {
        "strided solver (64 planes)": ("planes", dict(planes=64, plane=PLANE, accesses=n)),
        "molecular dynamics (32 MiB)": ("md", dict(atoms=(32 << 20) // 256, atom_bytes=256, work_cycles=MD_WORK) if not quick
                                        else dict(atoms=(24 << 20) // 256, atom_bytes=256, work_cycles=MD_WORK)),
        "STREAM": ("stream", dict(n=300_000 if quick else 1_000_000)),
        "DGEMM": ("blocked_matrix", dict(n=1024, block=64, max_accesses=n * 3)),
        "single-node RandomAccess (1 GiB)": ("random", dict(working_set="1G", accesses=n // 2)),
    }
    rows = []
    for label, (wl, kw) in steps(list(cases.items()), "kernels", show=not quick if progress is None else progress):
        rows.append({"kernel": label, **small_page_change(m, wl, seed=seed, **kw)})
    return pd.DataFrame(rows)


def locality_map(quick: bool = False, seed: int = 0, m="opteron-k8", progress: bool | None = None):
    """The solver sweep over (planes in use, plane size): % change with small pages."""
    import pandas as pd

    planes = [4, 16, 64, 256, 1024] if quick else [4, 8, 16, 32, 64, 128, 256, 512, 1024]
    sizes = [64 << 10, 1040 << 10] if quick else [64 << 10, 260 << 10, 1040 << 10, 4160 << 10]
    rows = []
    for pl, sz in steps([(pl, sz) for pl in planes for sz in sizes], "map", show=not quick if progress is None else progress):
        r = small_page_change(m, "planes", seed=seed, planes=pl, plane=sz, accesses=100_000 if quick else 200_000)
        rows.append({"planes in use": pl, "plane KiB": sz >> 10, "working set MiB": pl * sz / 2**20, **r})
    return pd.DataFrame(rows)


def strong_scaling(processors, total_mib: float = 960, quick: bool = False, seed: int = 0, m="opteron-k8", progress: bool | None = None):
    """MD with a fixed total problem: each process's working set is total / P."""
    import pandas as pd

    rows = []
    for p in steps(list(processors), "processor counts", show=not quick if progress is None else progress):
        ws = total_mib / p
        atoms = max(64, int(ws * 2**20) // 256)
        if quick:
            atoms = min(atoms, (24 << 20) // 256)
        r = small_page_change(m, "md", seed=seed, atoms=atoms, atom_bytes=256, work_cycles=MD_WORK)
        rows.append({"processors": p, "working set MiB": atoms * 256 / 2**20, **r})
    return pd.DataFrame(rows)


def more_2m_entries(entries: int = 512, ways: int = 4):
    """The paper's closing wish: the Opteron with an L2 TLB for 2 MB pages."""
    return machine("opteron-k8").add_structure(name="L2 DTLB 2M", level=2, side="data", entries=entries, ways=ways,
                                               sizes=["2M"], new_name=f"opteron-k8 + {entries} L2 2M entries")
