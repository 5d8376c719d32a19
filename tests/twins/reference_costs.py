"""The cost model written the plain way, on xarray DataArrays (the formulas of pagesim/model/costs.py's
docstring, one xarray operation each). pagesim.model.costs computes the same in numpy on raw counters;
tests/model/test_costs.py requires identical Datasets."""

import xarray as xr


def reference_add_costs(ds, m, work_cycles, ram=None):
    c = m.costs
    lat = ds["latency"]
    tlb_mask = ds["structure"] != "SLB" if m.slb is not None else xr.ones_like(lat, dtype=bool)
    hit_cycles = (ds["hits"] * lat).where(tlb_mask, 0).sum("structure")
    walk_cycles = (ds["walks"] * c.walk_base_cycles + ds["walk_refs"] * c.walk_ref_cycles).sum("side")
    slb_cycles = ds["misses"].sel(structure="SLB") * c.slb_miss_cycles if m.slb is not None else xr.zeros_like(hit_cycles)
    fault_cycles = ds["faults"] * c.fault_cycles + (ds["faults"] + ds["prefaulted"]) * (ds["page_size"] // 1024) * c.zero_cycles_per_kib
    largest = ds["page_size"] == ds["page_size"].max()
    migrate = float(ds["pages_migrated"]) * c.migrate_cycles_per_page if "pages_migrated" in ds else 0.0
    fault_cycles = fault_cycles + xr.where(largest, migrate, 0.0)
    swap = float(ds["major_faults"]) * ram.swap_in_cycles + float(ds["swap_outs"]) * ram.swap_out_cycles if ram is not None and "major_faults" in ds else 0.0
    swap_cycles = xr.where(largest, swap, 0.0)
    work = ds["accesses"].sum("side") * work_cycles
    parts = [work, hit_cycles, walk_cycles, slb_cycles, fault_cycles, swap_cycles]
    comp = xr.concat(
        [p.astype(float) for p in parts],
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
