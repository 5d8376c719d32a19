"""``trapstat -t`` / ``trapstat -T`` style tables from a simulation (Solaris, UltraSPARC).

Solaris counts a TLB miss as a trap (``itlb-miss``/``dtlb-miss``) and a miss in the TSB, which then
walks the tables in software, as ``itsb-miss``/``dtsb-miss`` (002_7166aff63bc805c7.txt). From a
simulation on a TSB walker: tlb-miss = walks; tsb-miss = TSB probes that missed; %tim = the modelled
cycles of that handling over all modelled cycles: a tlb-miss costs ``walk_base_cycles`` plus one
TSB reference, a tsb-miss ``sw_walk_refs`` more references (the machine's ``costs``: modelling
assumptions), over the steady-state cycles (work and translation; first-touch faults left out). Every access is
user mode here: the kernel rows of the document have no counterpart.
Counts are totals over the run, not per second.
"""

from __future__ import annotations

from ..core.check import check_result
from ..core.units import format_size
from ..model.machines import machine as get_machine

EVENTS = ("itlb-miss", "itsb-miss", "dtlb-miss", "dtsb-miss")


def trapstat(ds, machine=None, sizes=None):
    """A tidy DataFrame like ``pagesim.sources.datasets.load('mpss_trapstat')``: cpu, mode, page_size,
    event, count, pct_time (one 'all' row per page size and a 'ttl' line)."""
    import pandas as pd  # deferred: pandas is slow to import; only tables need it

    if hasattr(ds, "data_vars") and "walks" in ds.variables and "tsb_misses" not in ds.variables:
        raise ValueError(f"trapstat needs a result of a TSB walker (UltraSPARC); ds is a result of machine {ds.attrs.get('machine', '?')!r}, which has no TSB")
    check_result(
        "trapstat",
        ds,
        () if machine else ("machine",),
        {"cycles": ("component", "page_size"), "walks": ("side", "page_size"), "tsb_misses": ("side", "page_size"), "total_cycles": ()},
        whole=("side", "cycles"),
    )
    m = get_machine(machine or ds.attrs["machine"])
    if m.walker.kind != "tsb":
        raise ValueError(f"trapstat needs a TSB walker (UltraSPARC); machine {m.name!r} has a {m.walker.kind} walker")
    c = m.costs
    # trapstat samples a running program (1-second intervals): the one-off first-touch faults
    # (and swapping) of a short simulated run are left out of the time base
    total = float(ds["cycles"].sel(component=["work", "tlb_hit_latency", "walk", "slb_miss"]).sum())
    pages = [format_size(int(p)) for p in ds["page_size"].values]
    keep = sizes or pages
    rows = []
    for z, page in enumerate(pages):
        if page not in keep:
            continue
        counts = {}
        times = {}
        for side, pre in (("instr", "i"), ("data", "d")):
            walks = int(ds["walks"].sel(side=side)[z])
            tmiss = int(ds["tsb_misses"].sel(side=side)[z])
            counts[f"{pre}tlb-miss"] = walks
            counts[f"{pre}tsb-miss"] = tmiss
            times[f"{pre}tlb-miss"] = walks * (c.walk_base_cycles + c.walk_ref_cycles)
            times[f"{pre}tsb-miss"] = tmiss * m.walker.sw_walk_refs * c.walk_ref_cycles
        for ev in EVENTS:
            rows.append(
                {"cpu": "0", "mode": "u", "page_size": page.lower(), "event": ev, "count": counts[ev], "pct_time": 100 * times[ev] / total if total else 0.0}
            )
        rows.append(
            {"cpu": "0", "mode": "u", "page_size": page.lower(), "event": "all", "count": None, "pct_time": 100 * sum(times.values()) / total if total else 0.0}
        )
    df = pd.DataFrame(rows)
    tot = df[df.event != "all"].groupby("event", sort=False).agg(count=("count", "sum"), pct_time=("pct_time", "sum")).reset_index()
    tot = tot.assign(cpu="ttl", mode="", page_size="")
    allrow = pd.DataFrame([{"cpu": "ttl", "mode": "", "page_size": "", "event": "all", "count": None, "pct_time": float(tot["pct_time"].sum())}])
    return pd.concat([df, tot[df.columns], allrow], ignore_index=True)


def render(df) -> str:
    """The table as trapstat -T prints it."""
    head = "cpu m size| itlb-miss %tim itsb-miss %tim | dtlb-miss %tim dtsb-miss %tim |%tim"
    lines = [head, "----------+-------------------------------+-------------------------------+----"]
    for (cpu, mode, size), g in df.groupby(["cpu", "mode", "page_size"], sort=False):
        v = g.set_index("event")
        cells = [f"{int(v.loc[e, 'count']):>9} {v.loc[e, 'pct_time']:>4.1f}" for e in EVENTS]
        label = f"{cpu:>3} {mode} {size:>4}" if cpu != "ttl" else "      ttl "
        if cpu == "ttl":
            lines.append("==========+===============================+===============================+====")
        lines.append(f"{label}|{cells[0]} {cells[1]} |{cells[2]} {cells[3]} |{v.loc['all', 'pct_time']:>4.1f}")
    return "\n".join(lines)
