"""Shared page tables for a database (004_b9bff536459e6bfe.txt): page-table memory from stated
parameters, what the freed memory buys, walks and cache misses with sharing."""

from __future__ import annotations

from ..pagetables import TWICHELL_8GB, shared_page_table_table
from ..processes import DataCache, simulate_processes

GIB = 1 << 30
# The machine of the message is not named: "a 4-way x86-64 configuration with 8 GB of memory", whose
# counters include "Front-side bus traffic", analysed with help from two Intel engineers ("Kshitij Doshi
# and Ken Chen from Intel"), which points to an Intel Xeon of 2006, not an Opteron. pagesim has no
# preset for it and datasets/architecture gives no TLB or cache figures for it, so walks_and_misses
# uses a STAND-IN (a modelling choice): the opteron-k8 preset (x86-64 four-level tables; TLBs flushed
# on a context switch) and the Opteron's caches as 001_ec4ce787d7978bc9.txt (section 3) gives them:
# "64 kilobytes of primary data cache and 1 Megabyte of unified secondary cache"; the associativities
# are modelling assumptions. Its TLB and cache sizes are the Opteron's, not those of the document's
# machine: the direction of an effect carries over, its size need not.
OPTERON_CACHES = (DataCache("L1D", "64K", 2), DataCache("L2", "1M", 16))


def xeon_caches():
    """The data caches of the Intel Xeon 7000 that the timing model's 'xeon-7000' hierarchy describes
    (pagesim/data/caches.toml, with its sources: 16 KiB 8-way L1D, 2 MiB 8-way L2, 64-byte lines), the
    family the message's machine most likely belongs to. The TLBs stay the opteron-k8 stand-in's."""
    from ..timing import hierarchy

    return tuple(DataCache(c.name, c.size, c.ways, c.line) for c in hierarchy("xeon-7000").levels)


def page_table_memory(params=TWICHELL_8GB):
    t = shared_page_table_table(**params)
    return t[["pool_pages", "page_tables", "bytes", "MiB"]]


def freed_share(params=TWICHELL_8GB, ram=8 * GIB) -> float:
    t = shared_page_table_table(**params).set_index(["pool_pages", "page_tables"])["bytes"]
    return (t["4K", "private"] - t["4K", "shared"]) / ram


def buffer_pool_io(pool: float, freed: float, database_sizes):
    """A stated model of what the freed memory buys: transactions read pages uniformly from a
    database of size D; a read misses the buffer pool with probability 1 - pool / D, and each miss is
    a disk I/O. Returns the I/O reduction when the pool grows by ``freed``, for each D."""
    import pandas as pd

    rows = []
    for d in database_sizes:
        before = max(0.0, 1 - pool / d)
        after = max(0.0, 1 - (pool + freed) / d)
        rows.append(
            {
                "database GiB": d / GIB,
                "miss ratio before": before,
                "miss ratio after": after,
                "disk I/O reduction %": 100 * (1 - after / before) if before else 0.0,
            }
        )
    return pd.DataFrame(rows)


def walks_and_misses(
    processes=8, accesses=60_000, quantum=2_000, working_set="512M", seed=0, machine="opteron-k8", page_size=None, caches=OPTERON_CACHES, data_lines=False
):
    """N database processes time-sliced on one core, reading one shared buffer pool at random:
    private versus shared leaf page tables, on the stand-in machine and caches described above.
    ``page_size='2M'`` puts the pool in huge pages (the leaf tables shared are then the PMD pages)."""
    import pandas as pd

    rows = []
    for shared in (False, True):
        ds = simulate_processes(
            machine,
            "random",
            working_set=working_set,
            accesses=accesses,
            processes=processes,
            quantum=quantum,
            shared=("table",),
            shared_tables=shared,
            caches=caches,
            seed=seed,
            page_size=page_size,
            data_lines=data_lines,
        )
        extra = {}
        if data_lines:  # every miss of the workload, as the message's counters count them: walks' and data's
            for c in ("L1D", "L2"):
                extra[f"{c} misses (data)"] = int(ds["data_cache_misses"].sel(cache=c))
                extra[f"{c} misses (all)"] = int(ds["data_cache_misses"].sel(cache=c)) + int(ds["walk_cache_misses"].sel(cache=c))
        rows.append(
            {
                "page tables": "shared" if shared else "private",
                "walks": int(ds["walks"].sum()),
                "walk references": int(ds["walk_refs"].sum()),
                "page-table lines touched": int(ds["pt_lines"]),
                "page-table pages touched": int(ds["pt_tables"]),
                "L1D misses (walks)": int(ds["walk_cache_misses"].sel(cache="L1D")),
                "L2 misses (walks)": int(ds["walk_cache_misses"].sel(cache="L2")),
                "page faults": int(ds["faults"].sum()),
                # work and translation, the one-off first-touch faults left out (a running database)
                "steady cycles": float(ds["cycles"].sel(component=["work", "tlb_hit_latency", "walk", "slb_miss"]).sum()),
                **extra,
            }
        )
    return pd.DataFrame(rows)
