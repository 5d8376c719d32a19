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

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # xarray is imported when a Dataset is built: it is most of pagesim's import time
    import xarray as xr



def add_costs(ds: xr.Dataset, m, work_cycles: float, ram=None) -> xr.Dataset:
    import xarray as xr

    c = m.costs
    lat = ds["latency"]
    tlb_mask = ds["structure"] != "SLB" if m.slb is not None else xr.ones_like(lat, dtype=bool)
    hit_cycles = (ds["hits"] * lat).where(tlb_mask, 0).sum("structure")
    walk_cycles = (ds["walks"] * c.walk_base_cycles + ds["walk_refs"] * c.walk_ref_cycles).sum("side")
    slb_cycles = ds["misses"].sel(structure="SLB") * c.slb_miss_cycles if m.slb is not None else xr.zeros_like(hit_cycles)
    fault_cycles = ds["faults"] * c.fault_cycles + (ds["faults"] + ds["prefaulted"]) * (ds["page_size"] // 1024) * c.zero_cycles_per_kib
    migrate = float(ds["pages_migrated"]) * c.migrate_cycles_per_page if "pages_migrated" in ds else 0.0
    fault_cycles = fault_cycles + xr.where(ds["page_size"] == ds["page_size"].max(), migrate, 0.0)  # compaction, charged once
    swap = float(ds["major_faults"]) * ram.swap_in_cycles + float(ds["swap_outs"]) * ram.swap_out_cycles if ram is not None and "major_faults" in ds else 0.0
    swap_cycles = xr.where(ds["page_size"] == ds["page_size"].max(), swap, 0.0)
    accesses = ds["accesses"].sum("side")
    work = accesses * work_cycles
    comp = xr.concat(
        [work.astype(float), hit_cycles.astype(float), walk_cycles.astype(float), slb_cycles.astype(float), fault_cycles.astype(float), swap_cycles.astype(float)],
        dim=xr.DataArray(["work", "tlb_hit_latency", "walk", "slb_miss", "fault", "swap"], dims="component", name="component"),
    )
    ds = ds.assign(cycles=comp.transpose("component", "page_size"))
    ds["cycles"].attrs = {"units": "cycles", "long_name": "modelled cycles by component and page size"}
    total = float(comp.sum())
    trans = float(comp.sel(component=["tlb_hit_latency", "walk", "slb_miss"]).sum())
    faults = float(comp.sel(component="fault").sum())
    ds["total_cycles"] = ((), total, {"units": "cycles"})
    ds["translation_share"] = ((), trans / total if total else 0.0, {"units": "1", "long_name": "share of modelled time in TLB-miss handling (trapstat %tim)"})
    ds["fault_share"] = ((), faults / total if total else 0.0, {"units": "1", "long_name": "share of modelled time in page faults"})
    ds["swap_share"] = ((), swap / total if total else 0.0, {"units": "1", "long_name": "share of modelled time swapping (major faults and swap-outs)"})
    ds.attrs["work_cycles_per_access"] = float(work_cycles)
    ds.attrs["costs"] = str({k: getattr(c, k) for k in ("walk_ref_cycles", "walk_base_cycles", "slb_miss_cycles", "fault_cycles", "zero_cycles_per_kib")})
    return ds


def miss_count(ds: xr.Dataset, structure: str | None = None) -> int:
    """Misses of one structure (all page sizes), or walks when ``structure`` is None."""
    if structure is None:
        return int(ds["walks"].sum())
    return int(ds["misses"].sel(structure=structure).sum())


def summary(ds: xr.Dataset) -> str:
    """A readable summary of one simulation."""
    lines = [f"machine {ds.attrs['machine']} ({ds.attrs['machine_title']}), workload {ds.attrs['workload_label']}, seed {ds.attrs['seed']}"]
    acc = ds["accesses"].sum("side")
    used = [i for i in range(ds.sizes["page_size"]) if int(acc[i]) or int(ds["pages_mapped"][i])]
    lines.append(f"accesses {int(acc.sum()):,}")
    lines.append(f"{'structure':<20} {'page':>5} {'hits':>14} {'misses':>14} {'miss rate':>10}")
    for s in ds["structure"].values:
        for i in used:
            h = int(ds["hits"].sel(structure=s)[i])
            mi = int(ds["misses"].sel(structure=s)[i])
            if h + mi:
                lines.append(f"{s:<20} {ds['page'].values[i]:>5} {h:>14,} {mi:>14,} {mi / (h + mi):>10.4%}")
    for i in used:
        p = ds["page"].values[i]
        lines.append(
            f"page {p:>5}: walks {int(ds['walks'][:, i].sum()):,}, walk refs {int(ds['walk_refs'][:, i].sum()):,}, "
            f"faults {int(ds['faults'][i]):,}, pages touched {int(ds['pages_touched'][i]):,} of {int(ds['pages_mapped'][i]):,} mapped"
        )
    if "pwc_hits" in ds:
        for pwc in ds["pwc"].values:
            h = int(ds["pwc_hits"].sel(pwc=pwc).sum())
            mi = int(ds["pwc_misses"].sel(pwc=pwc).sum())
            if h + mi:
                lines.append(f"page-walk cache {pwc}: hits {h:,}, misses {mi:,}")
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
