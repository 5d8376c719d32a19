"""The cost model: cycles from counters. Every parameter is the machine's ``Costs`` (modelling
assumptions unless a source is given) or a structure's ``latency``.

  translation = sum over structures of hits x latency        (an L1 hit costs nothing extra)
              + walks x walk_base_cycles                       (trap / walker start)
              + walk references x walk_ref_cycles
              + SLB misses x slb_miss_cycles
  faults      = faults x fault_cycles + pages mapped (faulting and prefaulted) x page KiB x zero_cycles_per_kib
              + pages migrated by compaction x migrate_cycles_per_page
  swap        = major faults x swap_in_cycles + swap-outs x swap_out_cycles (with a Ram limit;
                charged once, on the largest page size's column like compaction)
  work        = accesses x work_cycles                          (everything else the program does)
  translation_share = translation / (work + translation + faults + swap): what ``trapstat -t`` reports
  as %tim for TLB-miss handling.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import numpy as np

from ..core.check import check_result

if TYPE_CHECKING:  # xarray is imported when a Dataset is built: it is most of pagesim's import time
    import xarray as xr


# The cost components, in the order of the ``component`` coordinate. Each is a function of the raw
# counters (a mapping of numpy arrays, see ``cost_variables``), the machine, the work cycles per
# access and the Ram (or None); it returns float cycles by page size. A new component is one
# function and one entry here (and in TRANSLATION if it is part of TLB-miss handling).
def _work(v, m, work_cycles, ram):
    return v["accesses"].sum(axis=0) * work_cycles


def _tlb_hit_latency(v, m, work_cycles, ram):
    cyc = v["hits"] * v["latency"][:, None]
    if m.slb is not None:
        cyc = np.where((v["structure"] != "SLB")[:, None], cyc, 0)
    return cyc.sum(axis=0)


def _walk(v, m, work_cycles, ram):
    c = m.costs
    return (v["walks"] * c.walk_base_cycles + v["walk_refs"] * c.walk_ref_cycles).sum(axis=0)


def _slb_miss(v, m, work_cycles, ram):
    if m.slb is None:
        return np.zeros(v["page_size"].shape[0])
    return v["misses"][list(v["structure"]).index("SLB")] * m.costs.slb_miss_cycles


def _largest(v, value):
    """``value`` on the largest page size's column (charged once), 0.0 elsewhere."""
    ps = v["page_size"]
    if value == 0.0 and not np.signbit(value):  # nothing to charge: what np.where gives, without the comparison
        return np.zeros(ps.shape[0])
    return np.where(ps == ps.max(), value, 0.0)


def _fault(v, m, work_cycles, ram):
    c = m.costs
    ps = v["page_size"]
    cyc = v["faults"] * c.fault_cycles + (v["faults"] + v["prefaulted"]) * (ps // 1024) * c.zero_cycles_per_kib
    migrate = float(v["pages_migrated"]) * c.migrate_cycles_per_page if v.get("pages_migrated") is not None else 0.0
    return cyc + _largest(v, migrate)  # compaction, charged once


def _swap_total(v, ram) -> float:
    if ram is None or v.get("major_faults") is None:
        return 0.0
    return float(v["major_faults"]) * ram.swap_in_cycles + float(v["swap_outs"]) * ram.swap_out_cycles


def _swap(v, m, work_cycles, ram):
    return _largest(v, _swap_total(v, ram))


COMPONENTS = [
    ("work", _work),
    ("tlb_hit_latency", _tlb_hit_latency),
    ("walk", _walk),
    ("slb_miss", _slb_miss),
    ("fault", _fault),
    ("swap", _swap),
]
TRANSLATION = ("tlb_hit_latency", "walk", "slb_miss")  # TLB-miss handling (translation_share)
FAULTS = ("fault",)
SWAP = ("swap",)
COUNTERS = ("accesses", "hits", "misses", "walks", "walk_refs", "faults", "prefaulted", "pages_migrated", "major_faults", "swap_outs")


def cost_variables(v, m, work_cycles: float, ram=None) -> tuple[dict, dict, dict]:
    """The cost model on raw counters, in numpy. ``v`` maps counter names (COUNTERS, plus
    ``latency`` and ``structure`` by structure and ``page_size``) to arrays; an optional counter
    may be missing or None. Returns (data variables, coordinates, attrs) to put in the Dataset:
    ``cycles`` by component and page size, ``total_cycles`` and the shares."""
    names = [n for n, _ in COMPONENTS]
    cyc = np.empty((len(COMPONENTS), v["page_size"].shape[0]))  # float64, as each row is cast
    for i, (_, f) in enumerate(COMPONENTS):
        cyc[i] = f(v, m, work_cycles, ram)
    total = float(cyc.sum())
    trans = float(cyc[[names.index(n) for n in TRANSLATION]].sum())
    faults = float(cyc[[names.index(n) for n in FAULTS]].sum())
    swap = _swap_total(v, ram)

    def share(x):
        return x / total if total else 0.0

    dv = {
        "cycles": (("component", "page_size"), cyc, {"units": "cycles", "long_name": "modelled cycles by component and page size"}),
        "total_cycles": ((), total, {"units": "cycles"}),
        "translation_share": ((), share(trans), {"units": "1", "long_name": "share of modelled time in TLB-miss handling (trapstat %tim)"}),
        "fault_share": ((), share(faults), {"units": "1", "long_name": "share of modelled time in page faults"}),
        "swap_share": ((), share(swap), {"units": "1", "long_name": "share of modelled time swapping (major faults and swap-outs)"}),
    }
    c = m.costs
    attrs = {
        "work_cycles_per_access": float(work_cycles),
        "costs": str({k: getattr(c, k) for k in ("walk_ref_cycles", "walk_base_cycles", "slb_miss_cycles", "fault_cycles", "zero_cycles_per_kib")}),
    }
    return dv, {"component": ("component", np.array(names))}, attrs


def cost_inputs(dv: dict, coords: dict) -> dict:
    """The counters ``cost_variables`` reads, from data variables and coordinates given as
    xarray.Dataset takes them ((dims, values[, attrs]) tuples)."""
    v = {k: np.asarray(dv[k][1]) for k in COUNTERS if k in dv}
    for k in ("latency", "structure", "page_size"):
        v[k] = np.asarray(coords[k][1])
    return v


def add_costs(ds: xr.Dataset, m, work_cycles: float, ram=None) -> xr.Dataset:
    """``ds`` with the cost model's variables added (see ``cost_variables``)."""
    v = {k: ds[k].values for k in COUNTERS if k in ds}
    v["latency"] = ds["latency"].values
    v["structure"] = ds["structure"].values
    v["page_size"] = ds["page_size"].values
    dv, coords, attrs = cost_variables(v, m, work_cycles, ram)
    ds = ds.assign_coords(coords).assign(dv)
    ds.attrs.update(attrs)
    return ds


def miss_count(ds: xr.Dataset, structure: str | None = None) -> int:
    """Misses of one structure (all page sizes), or walks when ``structure`` is None."""
    if structure is None:
        return int(ds["walks"].sum())
    return int(ds["misses"].sel(structure=structure).sum())


#: the dimensions of the variables only some results have, which :func:`summary` reads when present
OPTIONAL_DIMS = {
    "pwc_hits": ("pwc", "page_size"),
    "pwc_misses": ("pwc", "page_size"),
    "host_walk_refs": ("side", "page_size"),
    "nested_tlb_hits": ("page_size",),
    "nested_tlb_misses": ("page_size",),
    "host_pwc_hits": ("host_pwc", "page_size"),
    "host_pwc_misses": ("host_pwc", "page_size"),
    "tsb_hits": ("side", "page_size"),
    "tsb_misses": ("side", "page_size"),
    "hpt_secondary": ("page_size",),
}


def summary(ds: xr.Dataset) -> str:
    """A readable summary of one simulation."""
    by_page = ("page_size",)
    check_result(
        "summary",
        ds,
        ("machine", "machine_title", "workload_label", "seed"),
        {
            "accesses": ("side", "page_size"),
            "walks": ("side", "page_size"),
            "walk_refs": ("side", "page_size"),
            "hits": ("structure", "page_size"),
            "misses": ("structure", "page_size"),
            **dict.fromkeys(("page", "pages_mapped", "faults", "pages_touched"), by_page),
            **dict.fromkeys(("total_cycles", "translation_share", "fault_share"), ()),
            "cycles": ("component", "page_size"),
            **{k: dims for k, dims in OPTIONAL_DIMS.items() if k in getattr(ds, "variables", ())},
        },
        whole=("side", "cycles"),
    )
    lines = [f"machine {ds.attrs['machine']} ({ds.attrs['machine_title']}), workload {ds.attrs['workload_label']}, seed {ds.attrs['seed']}"]
    acc = ds["accesses"].sum("side")
    used = [i for i in range(ds.sizes["page_size"]) if int(acc[i]) or int(ds["pages_mapped"][i])]
    lines.append(f"accesses {int(acc.sum()):,}")
    lines.append(f"{'structure':<20} {'page':>5} {'hits':>14} {'misses':>14} {'miss rate':>10}")
    for s in ds["structure"].values:
        for i in used:
            h = int(ds["hits"].isel(page_size=i).sel(structure=s))
            mi = int(ds["misses"].isel(page_size=i).sel(structure=s))
            if h + mi:
                lines.append(f"{s:<20} {ds['page'].values[i]:>5} {h:>14,} {mi:>14,} {mi / (h + mi):>10.4%}")
    for i in used:
        p = ds["page"].values[i]
        lines.append(
            f"page {p:>5}: walks {int(ds['walks'].isel(page_size=i).sum()):,}, walk refs {int(ds['walk_refs'].isel(page_size=i).sum()):,}, "
            f"faults {int(ds['faults'][i]):,}, pages touched {int(ds['pages_touched'][i]):,} of {int(ds['pages_mapped'][i]):,} mapped"
        )
    if "pwc_hits" in ds:
        for pwc in ds["pwc"].values:
            h = int(ds["pwc_hits"].sel(pwc=pwc).sum())
            mi = int(ds["pwc_misses"].sel(pwc=pwc).sum())
            if h + mi:
                lines.append(f"page-walk cache {pwc}: hits {h:,}, misses {mi:,}")
    if "host_walk_refs" in ds:  # a virtualised machine: the host's side of the nested walks
        lines.append(
            f"host ({json.loads(ds.attrs['host'])['page_size']} pages): page-table references {int(ds['host_walk_refs'].sum()):,} "
            f"of the walk refs above (the guest's {int(ds['walk_refs'].sum() - ds['host_walk_refs'].sum()):,})"
        )
        if "nested_tlb_hits" in ds:
            lines.append(f"nested TLB: hits {int(ds['nested_tlb_hits'].sum()):,}, misses {int(ds['nested_tlb_misses'].sum()):,}")
        if "host_pwc_hits" in ds:
            for pwc in ds["host_pwc"].values:
                h, mi = int(ds["host_pwc_hits"].sel(host_pwc=pwc).sum()), int(ds["host_pwc_misses"].sel(host_pwc=pwc).sum())
                if h + mi:
                    lines.append(f"host page-walk cache {pwc}: hits {h:,}, misses {mi:,}")
    if "tsb_misses" in ds:
        lines.append(f"TSB: hits {int(ds['tsb_hits'].sum()):,}, misses {int(ds['tsb_misses'].sum()):,}")
    if "hpt_secondary" in ds:
        lines.append(f"hashed page table: secondary-group walks {int(ds['hpt_secondary'].sum()):,}, evictions {int(ds['hpt_evictions'])}")
    if "major_faults" in ds:
        lines.append(
            f"RAM limit: minor faults {int(ds['minor_faults']):,}, major faults (swap-ins) {int(ds['major_faults']):,}, "
            f"swap-outs {int(ds['swap_outs']):,}, peak resident {int(ds['resident_peak']) / 2**20:,.1f} MiB, "
            f"swapping {float(ds['swap_share']):.1%} of modelled time"
        )
    lines.append(
        f"modelled cycles {float(ds['total_cycles']):,.0f}: translation {float(ds['translation_share']):.1%}, "
        f"faults {float(ds['fault_share']):.1%} (cost parameters are modelling assumptions)"
    )
    return "\n".join(lines)
