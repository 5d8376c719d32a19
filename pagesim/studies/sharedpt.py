"""Shared page tables for a database (004_b9bff536459e6bfe.txt): page-table memory from stated
parameters, what the freed memory buys, walks and cache misses with sharing."""

from __future__ import annotations

import functools

import numpy as np

from ..core.units import parse_page_size, parse_size
from ..engine.processes import DataCache, simulate_processes
from ..engine.timing import hierarchy
from ..model.layout import Layout, Region
from ..model.machines import Machine, Structure, Walker
from ..system.pagetables import TWICHELL_8GB, shared_page_table_table
from ..teaching import plotting
from ..teaching.teach import Reveal
from .sensitivity import Holds, holding_range

GIB = 1 << 30
# The machine of the message is not named: "a 4-way x86-64 configuration with 8 GB of memory", whose
# counters include "Front-side bus traffic", analysed with help from two Intel engineers ("Kshitij Doshi
# and Ken Chen from Intel"), which points to an Intel Xeon of 2006, not an Opteron. The notebook runs
# the section's walks and misses on xeon_paxville() (below: a Xeon 7000's TLBs and caches from its
# CPUID) with xeon_caches(). walks_and_misses' defaults are a STAND-IN (a modelling choice) for other
# uses: the opteron-k8 preset (x86-64 four-level tables; TLBs flushed on a context switch) and the
# Opteron's caches as 001_ec4ce787d7978bc9.txt (section 3) gives them: "64 kilobytes of primary data
# cache and 1 Megabyte of unified secondary cache" (the associativities are modelling assumptions).
OPTERON_CACHES = (DataCache("L1D", "64K", 2), DataCache("L2", "1M", 16))


def xeon_caches():
    """The data caches of the Intel Xeon 7000 that the timing model's 'xeon-7000' hierarchy describes
    (pagesim/data/caches.toml, with its sources: 16 KiB 8-way L1D, 2 MiB 8-way L2, 64-byte lines), the
    family the message's machine most likely belongs to; its TLBs are :func:`xeon_paxville`'s."""
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
    import pandas as pd  # deferred: pandas is slow to import; only tables need it

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
    import pandas as pd  # deferred: pandas is slow to import; only tables need it

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


# --------------------------------------------------------------------------------------------------
# Section 3 of notebook 05: database processes on the Xeon of 2006, private versus shared tables.

PAXVILLE_CPUID = "InstLatx64/InstLatx64@ddff8a9: GenuineIntel/GenuineIntel0000F48_P4_Paxville_CPUID.txt"
DESCRIPTORS = "pytorch/cpuinfo@0fbcdfd: src/x86/cache/descriptor.c (the Intel ISA reference and Application Note 485 wording)"
PAGE_WALK_EVENT = (
    "NetBurst event page_walk_type, 'Page walks that the page miss handler (PMH) performs', masks DTMISS 'Page walk for a data "
    "TLB miss (load or store)' and ITMISS 'Page walk for an instruction TLB miss' (libpfm4 lib/events/intel_netburst_events.h, "
    "as held in icl-utk-edu/papi@4b7d9b2)"
)


def xeon_paxville():
    """The translation hardware of an Intel Xeon 7000 (Paxville MP, NetBurst, 2005), the family the
    message's "4-way x86-64 configuration" with a "Front-side bus" most likely belongs to. CPUID
    leaf 2 of a Paxville part (``PAXVILLE_CPUID``) returns the descriptors 50h (instruction TLB:
    4 KiB and 2/4 MiB pages, fully associative, 64 entries), 5Bh (data TLB: 4 KiB and 4 MiB pages,
    fully associative, 64 entries), 60h (16 KiB 8-way L1D) and 7Ch (1 MiB 8-way L2 on that 2.66 GHz
    part); the meanings are Intel's (``DESCRIPTORS``). No second-level TLB. CPUID.1:ECX is 000064BD:
    bit 17 (PCID) is clear, so a context switch (a CR3 load) empties the TLBs.

    Modelling assumptions, named in ``assumed``: the data TLB's large-page entries hold the 2 MiB
    pages of long mode (the descriptor names 4 MiB, the legacy large page); no paging-structure
    cache (none is documented for NetBurst; one would be emptied by the same CR3 load, so it could
    not carry entries from one process to the next); one hardware thread per core (Hyper-Threading
    left out); the cost-model figures are unused here (section 3 prices walks through the caches)."""
    src = f"CPUID leaf 2 of {PAXVILLE_CPUID}; descriptor meanings: {DESCRIPTORS}"
    return Machine(
        name="xeon-paxville",
        title="Intel Xeon 7000 (Paxville MP, NetBurst)",
        vendor="Intel",
        year=2005,
        page_sizes=("4K", "2M"),
        base_page="4K",
        va_bits=48,
        context_switch="flush",
        context_switch_source=f"CPUID.1:ECX=000064BD in {PAXVILLE_CPUID}: bit 17 (PCID) clear; a CR3 load empties the TLBs",
        structures=(
            Structure("DTLB", 1, "data", 64, 64, ("4K", "2M"), source=f"descriptor 5Bh: {src}", confidence="high", assumed=("sizes",)),
            Structure("ITLB", 1, "instr", 64, 64, ("4K", "2M"), source=f"descriptor 50h: {src}", confidence="high"),
        ),
        walker=Walker(
            "radix",
            level_bits=(9, 9, 9, 9),
            base_shift=12,
            source="x86-64 4-level radix: 512 8-byte entries per 4 KiB table (Linux pgtable_64_types.h PTRS_PER_*=512). "
            "MODELLING ASSUMPTION: no paging-structure cache (none documented for NetBurst)",
            assumed=("pwc",),
        ),
        notes="One hardware thread per core (Hyper-Threading left out: a modelling assumption). The DTLB's large-page entries "
        "are taken to hold 2 MiB pages (descriptor 5Bh names 4 MiB, the legacy large page).",
    )


#: The modelling choices of section 3 (full mode). None is stated in the message; each is a stated
#: assumption, and the notebook re-runs each over x0.5..x2.
#:   processes    database processes time-sliced on one core (the message's 160 processes spread
#:                over the machine's CPUs, not all runnable at once)
#:   quantum      translated accesses a process makes before the next is switched in (the message
#:                gives no context-switch rate: 2000 accesses, each mostly a memory access of a few
#:                hundred cycles, is a switch every few hundred microseconds)
#:   pool         the part of the buffer pool the processes read, uniformly at random (the
#:                database's own locality is not stated); far less than the 5.1 GiB pool, to keep
#:                the run short; both cases share it, so the ratio of private to shared leaf
#:                tables (one copy per process) is the message's
#:   text         the hot part of the shared database text fetched from, uniformly at random
#:   fetch_share  the share of translated accesses that are instruction fetches (the rest are
#:                buffer-pool reads)
#:   accesses     translated accesses per process (the run's length: a short run counts more of
#:                the cold misses that fill the caches with each process's page-table lines)
#:   work_cycles  cycles of everything else between two translated accesses (other instructions,
#:                L1 hits), for the modelled time only
#:   mlp          how many data misses overlap (1: none), for the modelled time only
#:   warmup       how long each process has run before the measured window, in pool sweeps: the
#:                pool reads it made before, divided by the pool's 4 KiB pages (same mix of
#:                fetches and reads). It sets the minor faults in the window, nothing else. The
#:                message reports the rates of a running benchmark (throughput, disk I/Os per
#:                transaction, the context-switch rate) and states no window: 8 sweeps is the
#:                steady-state reading (a process has touched all but e^-8 = 0.03% of the pool
#:                it reads at random); 0 would be a window from the processes' start
#:   kernel_itlb  the fault handler's walks of a counter that counts kernel mode too (see
#:   kernel_dtlb  :data:`COUNTER_MODES`): walks the handler makes for its code (ITLB) and its data
#:                (DTLB) in one fault whose kernel TLB entries the user's accesses have evicted
#:                since the previous fault (:func:`handler_evictions`). Linux on x86-64 maps the
#:                kernel's text and its direct map of memory with 2 MiB pages; a minor fault of a
#:                shared-memory page (do_page_fault, handle_mm_fault, the shmem page-cache lookup,
#:                the page-table write) touches the vma and the mm, the page-table page, the page
#:                cache's tree and the page's struct page: taken as 4 distinct 2 MiB data pages
#:                and 1 code page, modelling assumptions
DATABASE = {
    "processes": 8,
    "quantum": 2_000,
    "pool": 512 << 20,
    "text": 1 << 20,
    "fetch_share": 0.25,
    "accesses": 60_000,
    "work_cycles": 200.0,
    "mlp": 1.0,
    "warmup": 8.0,
    "kernel_itlb": 1.0,
    "kernel_dtlb": 4.0,
}
DATABASE_QUICK = {**DATABASE, "processes": 4, "pool": 256 << 20, "accesses": 15_000}

TEXT_START = 4 << 20
POOL_START = 1 << 30


def database_layout(pool=DATABASE["pool"], text=DATABASE["text"], pool_pages="4K"):
    """One database process's mappings: its hot text (4 KiB pages) and the buffer pool (``pool_pages``)."""
    pool, text = parse_size(pool, "pool"), parse_size(text, "text")
    p = parse_page_size(pool_pages, "pool_pages")
    if pool % p or text % 4096 or TEXT_START + text > POOL_START:
        raise ValueError(f"pool={pool} must be a multiple of the pool page size {p} and text={text} a multiple of 4 KiB below {POOL_START - TEXT_START} bytes")
    return Layout((Region(TEXT_START, text, 4096, "text"), Region(POOL_START, pool, p, "pool")))


def database_streams(processes, accesses, pool, text, fetch_share, seed=0):
    """Each process's translated accesses and their kinds (1 instruction fetch, 0 data read): a share
    ``fetch_share`` of fetches from a random 64-byte line of the hot text, the rest 8-byte reads of a
    random place in the buffer pool. Process i draws from ``default_rng((seed, i))``."""
    if not 0 <= fetch_share <= 1:
        raise ValueError(f"fetch_share={fetch_share} must lie in 0..1")
    addrs, kinds = [], []
    for i in range(int(processes)):
        rng = np.random.default_rng((int(seed), i))
        fetch = rng.random(int(accesses)) < fetch_share
        a = np.where(fetch, TEXT_START + 64 * rng.integers(0, text // 64, int(accesses)), POOL_START + 8 * rng.integers(0, pool // 8, int(accesses)))
        addrs.append(a.astype(np.uint64))
        kinds.append(fetch.astype(np.uint8))
    return addrs, kinds


SIM_KEYS = ("processes", "quantum", "pool", "text", "fetch_share", "accesses")


@functools.lru_cache(maxsize=256)
def _database_run(processes, quantum, pool, text, fetch_share, accesses, pool_pages, seed, shared):

    caches = xeon_caches()
    layout = database_layout(pool, text, pool_pages)
    addrs, kinds = database_streams(processes, accesses, pool, text, fetch_share, seed)
    ds = simulate_processes(
        xeon_paxville(),
        addresses=addrs,
        kinds=kinds,
        layout=layout,
        processes=processes,
        quantum=quantum,
        shared=("text", "pool"),
        shared_tables=shared,
        caches=caches,
        data_lines=True,
        seed=seed,
    )
    wh, wm = ds["walk_cache_hits"].values, ds["walk_cache_misses"].values
    dh, dm = ds["data_cache_hits"].values, ds["data_cache_misses"].values
    return {
        "page tables": "shared" if shared else "private",
        "ITLB walks": int(ds["walks"].sel(side="instr").sum()),
        "DTLB walks": int(ds["walks"].sel(side="data").sum()),
        "walk references": int(ds["walk_refs"].sum()),
        "walk refs L1D": int(wh[0]),
        "walk refs L2": int(wh[1]),
        "walk refs memory": int(wm[1]),
        "data reads": int(dh[0] + dm[0]),
        "data L1D": int(dh[0]),
        "data L2": int(dh[1]),
        "data memory": int(dm[1]),
        "L1D misses (all)": int(wm[0] + dm[0]),
        "L2 misses (all)": int(wm[1] + dm[1]),
        "accesses": int(ds["accesses"].sum()),
        "page-table lines touched": int(ds["pt_lines"]),
        "page faults": int(ds["faults"].sum()),
        "context switches": int(ds["context_switches"]),
    }


def database_run(pool_pages="4K", seed=0, **params):
    """Private and shared page tables for the database model (``DATABASE`` with ``params`` changed),
    on :func:`xeon_paxville` with the Xeon 7000's data caches (:func:`xeon_caches`): a DataFrame of
    two rows with the walks by side, where each walk reference and data read was served, all
    L1D and L2 misses, and the modelled time (:func:`modelled_cycles`). ``ITLB walks`` and
    ``DTLB walks`` are the TLB misses' walks; ``ITLB faults`` and ``DTLB faults`` the minor faults
    in the measured window after a warm-up of ``warmup`` pool sweeps (:func:`window_faults`);
    ``ITLB walks counted`` and ``DTLB walks counted`` add the walks those faults make
    (:func:`counted_walks`): each fault's retried access, and the fault handler's own walks
    (``ITLB handler walks``, ``DTLB handler walks``: ``kernel_itlb`` and ``kernel_dtlb`` for each
    fault whose kernel TLB entries were evicted, :func:`handler_evictions`); ``fault cycles``
    prices the faults (:data:`FAULT_CYCLES`)."""
    import pandas as pd  # deferred: pandas is slow to import; only tables need it

    p = {**DATABASE, **params}
    bad = sorted(set(p) - set(DATABASE))
    if bad:
        raise TypeError(f"unknown database parameter(s) {bad}: the parameters are {sorted(DATABASE)}")

    p["pool"], p["text"] = parse_size(p["pool"], "pool"), parse_size(p["text"], "text")
    database_layout(p["pool"], p["text"], pool_pages)  # the sizes checked before any run
    if not p["warmup"] >= 0:
        raise ValueError(f"warmup={p['warmup']} must be 0 or more pool sweeps")
    sim = tuple(p[k] for k in SIM_KEYS)
    faults = _window_faults(p["processes"], p["pool"], p["text"], p["fetch_share"], p["accesses"], str(pool_pages), int(seed), float(p["warmup"]))
    rows = [dict(_database_run(*sim, str(pool_pages), int(seed), shared)) for shared in (False, True)]
    ev = _handler_evictions(p["processes"], p["quantum"], p["pool"], p["text"], p["fetch_share"], p["accesses"], str(pool_pages), int(seed), float(p["warmup"]))
    for j, r in enumerate(rows):
        r["ITLB faults"], r["DTLB faults"] = faults[j]
        if COUNTER_MODES == "user and kernel":
            r["ITLB handler walks"] = p["kernel_itlb"] * ev[j][0]
            r["DTLB handler walks"] = p["kernel_dtlb"] * ev[j][1]
        r["ITLB walks counted"], r["DTLB walks counted"] = counted_walks(r)
        r["modelled cycles"] = modelled_cycles(r, p["work_cycles"], p["mlp"])
        r["fault cycles"] = (r["ITLB faults"] + r["DTLB faults"]) * FAULT_CYCLES
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------------------
# Minor faults in the measured window, and the walks they make.
#
# A process maps the shared text and the buffer pool; a page it touches for the first time is in the
# page cache or the shared memory segment already, but not in its page tables: a minor fault. With
# private tables every process faults on each page once; with shared leaf tables the entry one
# process's fault wrote is every process's, so only the first toucher faults. On x86 the faulting
# access misses the TLB and walks (the walk finds the entry not present: it is a TLB miss's walk,
# one of those the simulation counts), the kernel's handler fills the entry, and the access is
# retried: it misses the TLB again (x86 keeps no not-present entry) and walks again.

#: walks a fault adds to the TLB misses' walks: the retried access's walk
RETRY_WALKS = 1
#: cycles the kernel spends in one minor fault: pagesim's default cost-model figure
#: (``pagesim.model.machines.Costs.fault_cycles``, a modelling assumption; used here only to show how much
#: of the time the faults of a window would take)
FAULT_CYCLES = 2000


def first_touch_faults(window, before=None, pages=None) -> tuple[int, int]:
    """Minor faults of the pages each process touches in a window: ``window`` holds one array of
    page numbers per process, ``before`` (optional) one array per process of the pages it touched
    before the window, ``pages`` the number of pages (default: the largest number + 1). Private
    tables: a process faults on each page it touches in the window that it had not touched before.
    Shared tables: a page faults once, in whichever process touches it first, unless some process
    touched it before. Returns (private, shared); the order of the accesses changes neither count."""
    arrays = [np.asarray(w, dtype=np.int64) for w in window] + [np.asarray(x, dtype=np.int64) for x in before or ()]
    if before is not None and len(before) != len(window):
        raise ValueError(f"before has {len(before)} arrays for {len(window)} processes")
    if pages is None:
        pages = 1 + max((int(x.max()) for x in arrays if x.size), default=-1)
    if any(x.size and (x.min() < 0 or x.max() >= pages) for x in arrays):
        raise ValueError(f"page numbers must lie in 0..{pages - 1}")
    old = None if before is None else _masks(before, pages)
    return _faults(_masks(window, pages), old)


def _masks(page_arrays, pages) -> np.ndarray:
    """One row per process: True for each page its array names."""
    m = np.zeros((len(page_arrays), int(pages)), dtype=bool)
    for i, a in enumerate(page_arrays):
        m[i, np.asarray(a, dtype=np.int64)] = True
    return m


def _faults(window, before=None) -> tuple[int, int]:
    """:func:`first_touch_faults` on page masks (processes x pages)."""
    if before is None:
        return int(window.sum()), int(window.any(axis=0).sum())
    return int((window & ~before).sum()), int((window.any(axis=0) & ~before.any(axis=0)).sum())


def warmup_pages(processes, warmup, pool, text, fetch_share, pool_pages="4K", seed=0):
    """The pages each process touched before the measured window: ``warmup`` pool sweeps of the
    same mix as the window (``warmup x pool / 4 KiB`` pool reads, and the fetches that go with
    them), drawn uniformly from their own generator (``default_rng((seed, i, 1))``; the same draws
    for either pool page size). Returns two lists of page-number arrays (text pages, pool pages of
    size ``pool_pages``)."""
    shift = parse_page_size(pool_pages, "pool_pages").bit_length() - 1
    if warmup and not fetch_share < 1:
        raise ValueError("a warm-up in pool sweeps needs pool reads: fetch_share must be below 1")
    reads = int(round(warmup * pool / 4096))
    fetches = int(round(reads * fetch_share / (1 - fetch_share))) if reads else 0
    text_pages, pool_ids = [], []
    for i in range(int(processes)):
        rng = np.random.default_rng((int(seed), i, 1))
        text_pages.append(rng.integers(0, text >> 12, fetches))
        pool_ids.append(rng.integers(0, pool >> 12, reads) >> (shift - 12))
    return text_pages, pool_ids


@functools.lru_cache(maxsize=64)
def _warm_masks(processes, warmup, pool, text, fetch_share, pool_pages, seed):

    shift = parse_page_size(pool_pages, "pool_pages").bit_length() - 1
    t, q = warmup_pages(processes, warmup, pool, text, fetch_share, pool_pages, seed)
    return _masks(t, text >> 12), _masks(q, pool >> shift)


@functools.lru_cache(maxsize=256)
def _window_faults(processes, pool, text, fetch_share, accesses, pool_pages, seed, warmup):
    """((ITLB faults, DTLB faults) with private tables, (the same) with shared tables) in the
    window that :func:`database_streams` gives, after :func:`warmup_pages`."""
    shift = parse_page_size(pool_pages, "pool_pages").bit_length() - 1
    addrs, kinds = database_streams(processes, accesses, pool, text, fetch_share, seed)
    win_text = _masks([(a[k == 1] - TEXT_START) >> 12 for a, k in zip(addrs, kinds)], text >> 12)
    win_pool = _masks([(a[k == 0] - POOL_START) >> shift for a, k in zip(addrs, kinds)], pool >> shift)
    old_text, old_pool = _warm_masks(processes, warmup, pool, text, fetch_share, pool_pages, seed)
    it, dt = _faults(win_text, old_text), _faults(win_pool, old_pool)
    return (it[0], dt[0]), (it[1], dt[1])


def window_faults(pool_pages="4K", seed=0, **params) -> dict:
    """The minor faults of the database model's measured window (``DATABASE`` with ``params``):
    {'private' | 'shared': {'ITLB': text faults, 'DTLB': pool faults}}."""
    p = {**DATABASE, **params}

    pool, text = parse_size(p["pool"], "pool"), parse_size(p["text"], "text")
    a, b = _window_faults(p["processes"], pool, text, p["fetch_share"], p["accesses"], str(pool_pages), int(seed), float(p["warmup"]))
    return {"private": {"ITLB": a[0], "DTLB": a[1]}, "shared": {"ITLB": b[0], "DTLB": b[1]}}


#: which modes the message's counters counted. The message does not say; the profiler of the day,
#: OProfile, counts an event in kernel and in user mode unless told otherwise ("By default, kernel
#: mode and user mode information is gathered for each event", Red Hat Enterprise Linux 4 System
#: Administration Guide, section 40.2.3, https://access.redhat.com/documentation/en-us/
#: red_hat_enterprise_linux/4/html/system_administration_guide/configuring_oprofile-separating_kernel_and_user_space_profiles).
#: A modelling assumption: both modes ('user' would leave the fault handler's walks out)
COUNTER_MODES = "user and kernel"
#: entries of each TLB of :func:`xeon_paxville` (descriptors 50h and 5Bh: 64, fully associative)
TLB_ENTRIES = 64


def fault_events(addrs, kinds, quantum, pool_pages="4K", before=None, shared=False):
    """The minor faults of a window in the order the core runs it: ``addrs`` and ``kinds`` one array
    per process (:func:`database_streams`), run round robin ``quantum`` accesses at a time as
    :func:`pagesim.engine.processes.simulate_processes` runs them; ``before`` (optional) the pages each
    process touched before the window, as (text page masks, pool page masks) (processes x pages,
    :func:`_warm_masks`). Private tables: a process faults at its first touch of each page it did
    not touch before. Shared tables: a page faults at its first touch by any process, unless some
    process touched it before. Returns (order, side, page, proc, fault): the accesses in run order
    (indices into the concatenated streams), their side (1 fetch, 0 read), page number, process,
    and whether each faults."""
    shift = parse_page_size(pool_pages, "pool_pages").bit_length() - 1
    q = int(quantum)
    proc = np.concatenate([np.full(len(a), i, dtype=np.int64) for i, a in enumerate(addrs)])
    j = np.concatenate([np.arange(len(a), dtype=np.int64) for a in addrs])
    side = np.concatenate([np.asarray(k, dtype=np.int64) for k in kinds])
    a = np.concatenate([np.asarray(x, dtype=np.uint64).astype(np.int64) for x in addrs])
    page = np.where(side == 1, (a - TEXT_START) >> 12, (a - POOL_START) >> shift)
    order = np.lexsort((j, proc, j // q))  # chunk by chunk, process by process, in program order
    side, page, proc = side[order], page[order], proc[order]
    fault = np.zeros(len(order), dtype=bool)
    for s in (0, 1):
        idx = np.flatnonzero(side == s)
        owner = proc[idx] if not shared else np.zeros(len(idx), dtype=np.int64)
        width = int(page[idx].max()) + 1 if len(idx) else 1
        key = owner * width + page[idx]
        _, first = np.unique(key, return_index=True)
        new = np.zeros(len(idx), dtype=bool)
        new[first] = True
        if before is not None:
            old = before[1 - s]  # (text masks, pool masks): side 1 is the text
            seen = old[proc[idx], page[idx]] if not shared else old.any(axis=0)[page[idx]]
            new &= ~seen
        fault[idx[new]] = True
    return order, side, page, proc, fault


def handler_evictions(addrs, kinds, quantum, pool_pages="4K", before=None, shared=False, entries=TLB_ENTRIES) -> tuple[int, int, int]:
    """The faults whose handler finds its kernel TLB entries evicted, on each side: the handler's
    entries (global, so a context switch keeps them) were last used at the previous fault on the
    core; an entry of a fully associative LRU TLB of ``entries`` entries is gone once that many
    distinct other pages were used on its side since. Counted only between two TLB flushes (the
    user's entries a context switch empties free their slots): evicted when some stretch between
    the previous fault and this one, within one quantum, used at least ``entries`` distinct user
    pages on that side (fetches: the ITLB; reads: the DTLB). The first fault of the window counts
    as evicted. The handler's own other entries are left out of the count (a modelling
    simplification). Returns (faults, ITLB evictions, DTLB evictions)."""
    order, side, page, proc, fault = fault_events(addrs, kinds, quantum, pool_pages, before, shared)
    pos = np.flatnonzero(fault)
    if not len(pos):
        return 0, 0, 0
    j = np.concatenate([np.arange(len(a), dtype=np.int64) for a in addrs])[order]
    chunk = (j // int(quantum)) * len(addrs) + proc  # one quantum of one process between two flushes
    starts = np.flatnonzero(np.r_[True, chunk[1:] != chunk[:-1]])
    bounds = np.union1d(starts, pos)
    seg = np.searchsorted(bounds, np.arange(len(order)), side="right") - 1
    out = []
    for s in (1, 0):
        idx = np.flatnonzero(side == s)
        width = int(page[idx].max()) + 1 if len(idx) else 1
        key = np.unique(seg[idx] * width + page[idx])  # distinct (stretch, page) pairs
        distinct = np.bincount(key // width, minlength=len(bounds))
        big = np.r_[0, np.cumsum(distinct >= entries)]  # big[x]: stretches before x with >= entries pages
        fs = np.searchsorted(bounds, pos)  # the stretch each fault starts
        ev = np.ones(len(pos), dtype=bool)
        ev[1:] = big[fs[1:]] - big[fs[:-1]] > 0
        out.append(int(ev.sum()))
    return int(len(pos)), out[0], out[1]


@functools.lru_cache(maxsize=256)
def _handler_evictions(processes, quantum, pool, text, fetch_share, accesses, pool_pages, seed, warmup):
    """((ITLB evictions, DTLB evictions) private, (the same) shared) of the database model's window."""
    addrs, kinds = database_streams(processes, accesses, pool, text, fetch_share, seed)
    old = _warm_masks(processes, warmup, pool, text, fetch_share, pool_pages, seed)
    res = []
    for shared in (False, True):
        _, it, dt = handler_evictions(addrs, kinds, quantum, pool_pages, old, shared)
        res.append((it, dt))
    return tuple(res)


def counted_walks(row, retry=RETRY_WALKS, kernel=(0, 0)) -> tuple[int, int]:
    """The walks a ``page_walk_type`` counter would count (ITLB, DTLB): the TLB misses' walks (a
    faulting access's first walk is one of them), ``retry`` more for each fault's retried access
    on its own side (text faults: ITLB; buffer-pool faults: DTLB), and ``kernel`` = (ITLB, DTLB)
    walks of the fault handler's own per fault of either side, for a counter that counts kernel
    mode too, and the row's own ``ITLB handler walks`` and ``DTLB handler walks`` where
    :func:`database_run` counted them (:func:`handler_evictions`)."""
    f = row.get("ITLB faults", 0) + row.get("DTLB faults", 0)
    it = row["ITLB walks"] + retry * row.get("ITLB faults", 0) + kernel[0] * f + row.get("ITLB handler walks", 0)
    dt = row["DTLB walks"] + retry * row.get("DTLB faults", 0) + kernel[1] * f + row.get("DTLB handler walks", 0)
    return int(round(it)), int(round(dt))


def modelled_cycles(row, work_cycles, mlp=1.0, latencies=None):
    """The modelled time of a run: ``work_cycles`` per translated access, each walk reference at the
    load-to-use latency of the level that served it (a walk's references depend on each other, so
    they do not overlap), and each data read served beyond L1 at the extra latency of its level,
    divided by ``mlp``. Latencies: the 'xeon-7000' hierarchy's (L1D 4, L2 20, memory 390 cycles;
    pagesim/data/caches.toml, the memory latency a modelling assumption there)."""
    if mlp < 1:
        raise ValueError(f"mlp={mlp} must be 1 or more")
    l1, l2, mem = latencies or xeon_latencies()
    stall = (row["data L2"] * (l2 - l1) + row["data memory"] * (mem - l1)) / mlp
    return row["accesses"] * work_cycles + walk_cycles(row, (l1, l2, mem)) + stall


def xeon_latencies() -> tuple[float, float, float]:
    """Load-to-use cycles of the 'xeon-7000' hierarchy: L1D, L2, memory."""
    return tuple(float(x) for x in hierarchy("xeon-7000").latencies)


def walk_cycles(row, latencies=None) -> float:
    """The cycles of a run's walks: each reference at the latency of the level that served it."""
    l1, l2, mem = latencies or xeon_latencies()
    return row["walk refs L1D"] * l1 + row["walk refs L2"] * l2 + row["walk refs memory"] * mem


def change(private, shared) -> float:
    """Percent change from private to shared tables (negative: fewer with sharing)."""
    return 100.0 * (shared / private - 1.0) if private else 0.0


def sharing_effects(t) -> dict:
    """What sharing changes in a :func:`database_run` table, in percent: the TLB misses' walks by
    side, the walks a counter counts (:func:`counted_walks`: with the faults' walks), all L1D and L2
    misses as the message counts them, the walk references served from memory, and the throughput
    (the inverse of the modelled time, which leaves the faults out); and, to show what the faults
    of the window would cost, the private run's share of time in faults and the throughput with
    the faults priced (:data:`FAULT_CYCLES` each)."""
    w = t.set_index("page tables")
    a, b = w.loc["private"], w.loc["shared"]
    ca, cb = counted_walks(a), counted_walks(b)
    fa, fb = a.get("fault cycles", 0.0), b.get("fault cycles", 0.0)
    return {
        "ITLB walks": change(a["ITLB walks"], b["ITLB walks"]),
        "DTLB walks": change(a["DTLB walks"], b["DTLB walks"]),
        "ITLB walks counted": change(ca[0], cb[0]),
        "DTLB walks counted": change(ca[1], cb[1]),
        "L1D misses": change(a["L1D misses (all)"], b["L1D misses (all)"]),
        "L2 misses": change(a["L2 misses (all)"], b["L2 misses (all)"]),
        "L1D data misses": change(a["data L2"] + a["data memory"], b["data L2"] + b["data memory"]),
        "L2 data misses": change(a["data memory"], b["data memory"]),
        "walk refs from memory": change(a["walk refs memory"], b["walk refs memory"]),
        "walk cycles": change(walk_cycles(a), walk_cycles(b)),
        "throughput": 100.0 * (a["modelled cycles"] / b["modelled cycles"] - 1.0),
        "fault time share": 100.0 * fa / (a["modelled cycles"] + fa),
        "throughput with faults": 100.0 * ((a["modelled cycles"] + fa) / (b["modelled cycles"] + fb) - 1.0),
    }


#: the warm-ups (pool sweeps) :func:`warmup_curve` runs: from the processes' start to a long run
WARMUPS = (0.0, 0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0)


def warmup_curve(base, pool_pages="4K", seed=0, warmups=WARMUPS):
    """The walks a counter counts, with private and shared tables, as the warm-up before the
    measured window grows (``base`` with ``warmup`` changed; the simulated window is the same
    run): one row per warm-up with the faults by side and table kind, the change of the counted
    walks by side, and what the faults would cost (:func:`sharing_effects`)."""
    import pandas as pd  # deferred: pandas is slow to import; only tables need it

    rows = []
    for w in warmups:
        t = database_run(pool_pages, seed, **{**base, "warmup": float(w)}).set_index("page tables")
        e = sharing_effects(t.reset_index())
        rows.append(
            {
                "warm-up (pool sweeps)": float(w),
                "ITLB faults private": int(t.loc["private", "ITLB faults"]),
                "ITLB faults shared": int(t.loc["shared", "ITLB faults"]),
                "DTLB faults private": int(t.loc["private", "DTLB faults"]),
                "DTLB faults shared": int(t.loc["shared", "DTLB faults"]),
                "ITLB walks counted %": round(float(e["ITLB walks counted"]), 2),
                "DTLB walks counted %": round(float(e["DTLB walks counted"]), 2),
                "fault time share %": round(float(e["fault time share"]), 2),
                "throughput with faults %": round(float(e["throughput with faults"]), 2),
            }
        )
    return pd.DataFrame(rows)


def in_band(curve, column, band) -> list[float]:
    """The warm-ups of a :func:`warmup_curve` at which ``column`` lies inside ``band`` (lo, hi)."""
    lo, hi = sorted(band)
    return [float(w) for w, v in zip(curve["warm-up (pool sweeps)"], curve[column]) if lo <= v <= hi]


def walk_figures(curve, warmup) -> dict:
    """The counted walks' change by side at one warm-up of a :func:`warmup_curve`, to 0.1 point
    (the message gives whole percents): {'ITLB': %, 'DTLB': %}."""
    r = curve.set_index("warm-up (pool sweeps)").loc[float(warmup)]
    return {side: round(float(r[f"{side} walks counted %"]), 1) + 0.0 for side in ("ITLB", "DTLB")}


def walks_holds(curve, document) -> str:
    """Where each row of ``document`` ({'ITLB': %, 'DTLB': %}, bands +-50%) lies in its band over
    the warm-ups of ``curve`` (:func:`warmup_curve`), as a finding's "holds for" text."""
    parts = []
    for k, v in document.items():
        held = in_band(curve, f"{k} walks counted %", (1.5 * v, 0.5 * v))
        parts.append(f"{k} row in its band at warm-ups of {', '.join(f'{x:g}' for x in held)} pool sweeps" if held else f"{k} row in its band at no warm-up")
    return "; ".join(parts) + f" (warm-ups run: {', '.join(f'{x:g}' for x in curve['warm-up (pool sweeps)'])} pool sweeps)"


def walks_why(t, curve, document, base, pool_pages="4K") -> str:
    """Why the counted walks of :func:`database_run` (``t``, run with the choices ``base``) land
    where they do, with the numbers of ``curve`` (:func:`warmup_curve`) and the bands of
    ``document`` ({'ITLB': %, 'DTLB': %}, each +-50%)."""
    w = t.set_index("page tables")
    c = curve.set_index("warm-up (pool sweeps)")
    cols = ("ITLB walks", "DTLB walks", "ITLB faults", "DTLB faults")
    a, b = ({k: int(w.loc[side, k]) for k in cols} for side in ("private", "shared"))
    ha, hb = ((float(w.loc[side].get("ITLB handler walks", 0)), float(w.loc[side].get("DTLB handler walks", 0))) for side in ("private", "shared"))
    warmup = float(base["warmup"])
    text_pages = int(base["text"]) >> 12
    at = walk_figures(curve, warmup)
    start = walk_figures(curve, 0.0)
    bands = {k: (1.5 * v, 0.5 * v) for k, v in document.items()}
    held = {k: in_band(curve, f"{k} walks counted %", bands[k]) for k in document}

    def sweeps(v):
        return f"{v:g}"

    text = (
        "the message says only 'processor performance counters' on a '4-way x86-64'; the model assumes an Intel Xeon of the day (an "
        f"inference from its thanks to Intel's staff) and that the counter is {PAGE_WALK_EVENT}: one walk per TLB miss, a faulting "
        "access's walk among them. "
        f"The TLB misses do not depend on who owns the tables (every context switch empties the TLBs, no PCID): ITLB "
        f"{a['ITLB walks']} -> {b['ITLB walks']}, DTLB {a['DTLB walks']} -> {b['DTLB walks']} walks. What sharing saves is minor "
        "faults: a page one process has mapped is in every process's shared leaf table, and each fault adds a walk (its "
        f"retried access) on its side. The message states no measurement window and reports the rates of a running "
        f"benchmark: the chosen warm-up before the window is {sweeps(warmup)} pool sweeps (a process has touched all but "
        f"e^-{sweeps(warmup)} of the pool), after which the window holds ITLB {a['ITLB faults']} -> {b['ITLB faults']} and "
        f"DTLB {a['DTLB faults']} -> {b['DTLB faults']} faults: the counted walks change ITLB {at['ITLB']:+.1f}%, DTLB "
        f"{at['DTLB']:+.1f}% (to 0.1 point; {abs(at['ITLB'] / document['ITLB']):.2f} and {abs(at['DTLB'] / document['DTLB']):.2f} "
        f"times the message's drops). With the window at the processes' start they change ITLB {start['ITLB']:+.1f}%, DTLB "
        f"{start['DTLB']:+.1f}%. "
        f"The counter is taken to count kernel mode too (OProfile's default; the message does not say): the fault handler's own "
        f"walks, {base['kernel_itlb']:g} ITLB and {base['kernel_dtlb']:g} DTLB walks (assumed) for each fault whose kernel TLB "
        f"entries the user's accesses evicted since the previous fault, are {ha[0]:g} and {ha[1]:g} private, {hb[0]:g} and "
        f"{hb[1]:g} shared in the window; near the processes' start faults come so close together that the handler finds "
        "its entries still there, and sharing, which spaces the faults out, can even add handler walks. "
    )
    if held["DTLB"]:
        sub = c.loc[held["DTLB"]]
        text += (
            f"The DTLB row is in its band only at warm-ups of {', '.join(sweeps(v) for v in held['DTLB'])} pool sweeps (of "
            f"{', '.join(sweeps(v) for v in c.index)} run), where the faults would take {sub['fault time share %'].min():.0f}-"
            f"{sub['fault time share %'].max():.0f}% of the private run's modelled time at {FAULT_CYCLES} cycles each "
            f"(an assumed cost) and sharing would raise the modelled throughput by {sub['throughput with faults %'].min():.0f}-"
            f"{sub['throughput with faults %'].max():.0f}%, against the message's 9% from sharing alone: its own throughput "
            "figure leaves no room for that many faults. "
        )
    else:
        text += (
            f"The DTLB row is in its band at no warm-up run ({', '.join(sweeps(v) for v in c.index)} pool sweeps; at most "
            f"{-c['DTLB walks counted %'].min():.1f}% fewer walks)"
            + (": a 2 MiB page faults once per process, 512 times fewer faults than 4 KiB pages. " if pool_pages == "2M" else ". ")
        )
    if held["ITLB"]:
        text += f"The ITLB row is in its band at warm-ups of {', '.join(sweeps(v) for v in held['ITLB'])} pool sweeps. "
    else:
        text += (
            f"The ITLB row is in its band at no warm-up run (at most {-c['ITLB walks counted %'].min():.1f}% fewer walks, from "
            f"the start): the hot text is {text_pages} pages, which each process has faulted in early in its run, while "
            "its TLB misses go on at every context switch. "
        )
    both = sorted(set(held["ITLB"]) & set(held["DTLB"]))
    text += (
        "No warm-up puts both rows in their bands. "
        if not both
        else f"Both rows are in their bands at warm-ups of {', '.join(sweeps(v) for v in both)} pool sweeps. "
    )
    text += (
        "Fewer context switches (fewer TLB flushes) cannot lower these counts: the message's 'similar reduction in the context "
        "switch rate' comes with the enlarged buffer pools (fewer disk I/Os), while the message gives these counts after its "
        "experiment of sharing alone, with the same pools and so the same I/Os per transaction. "
        "Left out: writes (a process's first store to a page also sets the dirty bit of its own entry, again once per "
        "process and page), page reclaim unmapping pages under memory pressure (not stated), speculative walks, Hyper-Threading"
    )
    return text


#: x0.5, x1 and x2 of a chosen value (mlp cannot go below 1: 1, 1.5, 2; the fault handler's walks
#: also at 0, the counter of user mode only)
def around(value, name=""):
    if name == "mlp":
        return (1.0, 1.5, 2.0)
    if name.startswith("kernel_"):  # 0 too: a counter of user mode only
        return (0.0, value / 2, value, 2 * value)
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return (int(value) // 2, int(value), 2 * int(value))
    return (value / 2, value, 2 * value)


def sweep_effects(base, pool_pages="4K", seed=0, choices=None):
    """For each modelling choice of ``base`` (default: every key of ``DATABASE``), the sharing effects
    at x0.5, x1 and x2 of its value (mlp: 1, 1.5, 2), the others kept: {choice: {value: effects}}.
    The pricing choices (work_cycles, mlp) re-price the same runs."""
    out = {}
    for name in choices or list(DATABASE):
        out[name] = {}
        for v in around(base[name], name):
            out[name][v] = sharing_effects(database_run(pool_pages, seed, **{**base, name: v}))
    return out


#: each modelling choice of ``DATABASE``: its name in the findings, and the unit it is shown in
CHOICES = {
    "processes": ("processes per core", 1),
    "quantum": ("accesses per context switch", 1),
    "pool": ("buffer pool read (MiB)", 1 << 20),
    "text": ("hot text (MiB)", 1 << 20),
    "fetch_share": ("instruction-fetch share", 1),
    "accesses": ("accesses per process", 1),
    "work_cycles": ("work cycles per access", 1),
    "mlp": ("data-miss overlap (mlp)", 1),
    "warmup": ("warm-up before the window (pool sweeps)", 1),
    "kernel_itlb": ("fault handler's ITLB walks per evicted fault", 1),
    "kernel_dtlb": ("fault handler's DTLB walks per evicted fault", 1),
}
#: the choices a simulated count rests on; the modelled time also rests on PRICE_CHOICES
SIM_CHOICES = tuple(CHOICES[k][0] for k in SIM_KEYS)
PRICE_CHOICES = (CHOICES["work_cycles"][0], CHOICES["mlp"][0])
#: the walks a counter counts rest also on how long the processes ran before the window
WALK_CHOICES = SIM_CHOICES + (CHOICES["warmup"][0], CHOICES["kernel_itlb"][0], CHOICES["kernel_dtlb"][0])


def choice_value(key, value) -> float:
    """A choice's value in the unit its name gives (the pool and the text in MiB)."""
    v = value / CHOICES[key][1]
    return int(v) if float(v).is_integer() and key != "fetch_share" else float(v)


def robust_runs(swept, key, metric, digits=3):
    """{value: figure} of one swept choice (``sweep_effects(...)[key]``) for ``metric``, or for a
    tuple of metrics {value: {metric: figure}} (a finding about several rows); values in the
    choice's unit, figures to ``digits`` decimals (the walks: 1, as :func:`walk_figures`)."""
    if isinstance(metric, (tuple, list)):
        return {choice_value(key, v): {m.split()[0]: round(float(e[m]), digits) + 0.0 for m in metric} for v, e in swept[key].items()}
    return {choice_value(key, v): round(float(e[metric]), digits) + 0.0 for v, e in swept[key].items()}


def sweep_table(swept):
    """A tidy DataFrame of :func:`sweep_effects`: one row per choice and value."""
    import pandas as pd  # deferred: pandas is slow to import; only tables need it

    rows = []
    for key, runs in swept.items():
        for v, e in runs.items():
            rows.append({"choice": CHOICES[key][0], "value": choice_value(key, v), **{k: round(float(x), 2) for k, x in e.items()}})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------------------
# The findings of notebook 05, section by section, and the figures it draws. Each ``record_*``
# records the findings of one section of the notebook in ``F`` (a ``pagesim.studies.findings.Findings``)
# and returns the verdicts it recorded. ``doc`` is the dataset ``shared_pt_figures``: the figures of
# 004_b9bff536459e6bfe.txt (the message body).

#: the configuration of the message that the notebook models
CONFIG_8GB = "x86-64 4-way 8 GB"
#: the message's cache-miss figures (its "L1 and L2 cache misses") by the cache they are compared with
CACHES = {"L1D": "L1 cache misses reduction", "L2": "L2 cache misses reduction"}
#: what the rows named L1D stand for
L1_READ = "the message says 'L1', read here as the L1 data cache (the rows' L1D, the model's data cache)"


#: the other reading of the message's "L1 and L2 cache misses": NetBurst's replay-event metrics of
#: retired loads, which count the program's loads and not the page walker's reads
RETIRED_LOAD_MISSES = (
    "NetBurst's retired-load metrics 1stL_cache_load_miss_retired and 2ndL_cache_load_miss_retired (replay_event; "
    "Linux's perf counts NetBurst's L1D and last-level read misses with them: arch/x86/events/intel/p4.c, p4_hw_cache_event_ids)"
)


def retired_load_reading(eff) -> str:
    """The note on the other reading of the message's cache-miss counts (:data:`RETIRED_LOAD_MISSES`):
    the data misses alone, from :func:`sharing_effects`."""
    return (
        f"Read as {RETIRED_LOAD_MISSES}, the counts hold the program's loads only, and sharing changes them only "
        f"through the page-table lines that crowd the data out: L1D {eff['L1D data misses']:+.2f}%, L2 {eff['L2 data misses']:+.2f}% "
        "(uniform reads of a pool far larger than the L2 miss whatever else it holds). The message does not say which events it used"
    )


def document_figures(doc):
    """The message's figures for the 8 GB setup: value by (pool pages 'small' | 'huge', metric)."""
    return doc[doc.configuration == CONFIG_8GB].set_index(["pool_pages", "metric"])["value_low"]


def walk_document(doc, pages) -> dict:
    """The message's page-walk figures as changes in percent: {'ITLB': -27.0, 'DTLB': -26.0} for 'small'."""
    d8 = document_figures(doc)
    return {m.split()[0]: -float(v) for m, v in d8[pages].items() if "page walks" in m}


def other_configurations(doc):
    """The message's figures of the configurations the notebook does not model (64 GB x86-64, ppc64)."""
    return doc[doc.configuration != CONFIG_8GB]


def _recorded(F, since):
    """The findings recorded in ``F`` after the first ``since``: id, what, document, simulation, verdict."""
    import pandas as pd  # deferred: pandas is slow to import; only tables need it

    rows = [{"id": f.id, "finding": f.finding, "document": f.document, "simulation": f.simulation, "verdict": f.label} for f in F.items[since:]]
    return pd.DataFrame(rows).set_index("id")


def record_page_tables(F, pt, doc):
    """Section 1: the four page-table sizes (calibrated) and the 20% freed (arithmetic)."""
    n = len(F.items)
    t = pt.set_index(["pool_pages", "page_tables"])["MiB"]
    d8 = document_figures(doc)
    # TWICHELL_8GB's four free parameters (processes, pool, shared text, private span) were chosen to
    # give these four figures: they are calibrated, not reproduced.
    why = "the four parameters of TWICHELL_8GB were fitted to these four figures"
    a, b = d8["small", "page-table memory without sharing"], d8["small", "page-table memory with sharing"]
    F.calibrated(
        "pt-small-private",
        "small pages, private tables (GB)",
        "message body",
        a,
        round(t["4K", "private"] / 1024, 3),
        parameter="TWICHELL_8GB",
        why=why,
        figures=1,
    )
    F.calibrated(
        "pt-small-shared", "small pages, shared tables (MB)", "message body", b, round(t["4K", "shared"], 1), parameter="TWICHELL_8GB", why=why, figures=1
    )
    a, b = d8["huge", "page-table memory without sharing"], d8["huge", "page-table memory with sharing"]
    F.calibrated(
        "pt-huge-private", "huge pages, private tables (MB)", "message body", a, round(t["2M", "private"], 1), parameter="TWICHELL_8GB", why=why, figures=1
    )
    F.calibrated(
        "pt-huge-shared", "huge pages, shared tables (MB)", "message body", b, round(t["2M", "shared"], 1), parameter="TWICHELL_8GB", why=why, figures=1
    )
    fr = freed_share()
    wf = d8["small", "share of system memory freed"]
    F.arithmetic(
        "freed-20",
        "memory freed by sharing (% of 8 GB)",
        "message body",
        wf,
        round(100 * fr, 1),
        round(100 * fr) == wf,
        why="(1.65 GB - 51 MB) / 8 GB from the fitted figures above; the message's 20% is this arithmetic on its own two figures, not a separate measurement",
    )
    return _recorded(F, n)


def freed_bytes(params=TWICHELL_8GB, ram=8 * GIB) -> float:
    """The bytes sharing frees with small pages (:func:`freed_share` of ``ram``)."""
    return freed_share(params, ram) * ram


#: the database sizes (GiB) section 2's table shows
IO_DATABASES_GIB = (8, 10, 12, 16, 24, 32, 64)


def io_sizes(doc, pool=TWICHELL_8GB["buffer_pool"], freed=None):
    """The database sizes at which :func:`buffer_pool_io` lies within 5 points of the message's disk-I/O
    figure, and within 0.05 points of it (:func:`database_sizes`): (near, exact)."""
    freed = freed_bytes() if freed is None else freed
    io_doc = document_figures(doc)["small", "disk I/Os per transaction reduction"]
    return database_sizes(pool, freed, (io_doc - 5, io_doc + 5)), database_sizes(pool, freed, (io_doc - 0.05, io_doc + 0.05))


def io_answer(database_gib, pool=TWICHELL_8GB["buffer_pool"], freed=None) -> float:
    """The uniform model's disk-I/O reduction (%) for one database size in GiB."""
    freed = freed_bytes() if freed is None else freed
    return float(buffer_pool_io(pool, freed, [database_gib * GIB])["disk I/O reduction %"].iloc[0])


def predict_io(guess, database_gib, pool=TWICHELL_8GB["buffer_pool"], freed=None):
    """Section 2's prediction: the uniform model's disk-I/O reduction (%) for a database of
    ``database_gib`` GiB, revealed like ``pagesim.teaching.teach.check_answer``."""
    freed = freed_bytes() if freed is None else freed
    d = float(database_gib)
    before, after = 1 - pool / (d * GIB), 1 - (pool + freed) / (d * GIB)
    how = (
        f"miss ratio before 1 - {pool / GIB:.2f}/{d:g} = {before:.3f}, after 1 - {(pool + freed) / GIB:.2f}/{d:g} = {after:.3f}; "
        f"1 - {after:.3f}/{before:.3f} = {100 * (1 - after / before):.1f}% fewer disk I/Os"
    )
    q = f"The {pool / GIB:.2f} GiB pool grows by {freed / GIB:.2f} GiB; reads fall uniformly on a {d:g} GiB database: by how many percent do disk I/Os fall?"
    return Reveal(question=q, guess=guess, answer=io_answer(d, pool, freed), kind="percent", how=how)


def predict_walks(guess, t):
    """Section 3's prediction: the change (%) of the DTLB walks (one per TLB miss) from private to shared
    tables in one :func:`database_run` (``t``), revealed like ``pagesim.teaching.teach.check_answer``."""
    w = t.set_index("page tables")
    a, b = int(w.loc["private", "DTLB walks"]), int(w.loc["shared", "DTLB walks"])
    how = (
        f"every context switch empties the TLBs (no PCID), so each process misses the TLB on the same accesses whatever "
        f"the tables: {a:,} DTLB walks with private tables, {b:,} with shared ones"
    )
    q = "With shared page tables instead of private ones, by how many percent do the DTLB walks change?"
    return Reveal(question=q, guess=guess, answer=change(a, b), kind="percent", how=how)


def record_io(F, io, sizes, exact, doc, pool=TWICHELL_8GB["buffer_pool"], freed=None):
    """Section 2: the disk I/O figure and the context switches (not reproduced), with the database sizes
    (``sizes``, ``exact`` from :func:`io_sizes`) that would give the message's figure."""
    n = len(F.items)
    freed = freed_bytes() if freed is None else freed
    io_doc = document_figures(doc)["small", "disk I/Os per transaction reduction"]
    F.not_reproduced(
        "io",
        "enlarging the pool with the freed memory cuts disk I/Os",
        "message body",
        f"{io_doc:g}% fewer I/Os per transaction",
        f"{io['disk I/O reduction %'].min():.0f}% to {io['disk I/O reduction %'].max():.0f}% for D of "
        f"{io['database GiB'].min():.0f} to {io['database GiB'].max():.0f} GiB",
        why="the thread does not state the database size, and the uniform model's reduction spans the whole range above as the size "
        "varies: any figure in it could be matched by choosing the size",
        figures=1,
    )
    F.not_reproduced(
        "context-switches",
        "the I/O reduction brings a similar reduction in the context switch rate",
        "message body",
        "a similar reduction (about 23%)",
        "not simulated",
        figures=1,
        why="nothing is run for it: a database process switches when it waits for a disk I/O, and pagesim has no disk or scheduler "
        "model (the context switches of section 3 are a stated rate, the same with and without sharing)",
    )
    F.holds_for(
        "io",
        sizes.text(
            f"I/O reduction within {io_doc:g}% +-5 points; {io_doc:g}% itself at {exact.range_text()} GiB; "
            f"the buffer pool is {pool / GIB:.2f} GiB and the freed memory {freed / GIB:.2f} GiB"
        ),
    )
    print("io: the document's figure for", F.get("io").sensitivity)
    return _recorded(F, n)


def record_sharing(F, wm, eff, doc):
    """Section 3: the page-table lines, the cache misses, the faults (small pages) and the bus traffic."""
    n = len(F.items)
    w = wm.set_index("page tables")
    d8 = document_figures(doc)
    F.arithmetic(
        "lines",
        "fewer page-table cache lines with sharing ('fewer pagetable entries crowding the caches')",
        "message body",
        "smaller pagetable footprint",
        f"{w.loc['private', 'page-table lines touched']} -> {w.loc['shared', 'page-table lines touched']}",
        w.loc["shared", "page-table lines touched"] < w.loc["private", "page-table lines touched"],
        figures=0,
        why="the message gives no figure for the footprint; with shared tables every process reads the one set of leaf tables, so fewer "
        "distinct page-table lines follows from the model's set-up: it could not have come out otherwise (an illustration, not evidence)",
    )
    F.measured(
        "miss",
        "L1 and L2 cache misses fall with sharing, by 5% (all misses: data and page-table lines)",
        "message body (small pages)",
        {c: -d8["small", m] for c, m in CACHES.items()},
        {c: round(eff[f"{c} misses"], 3) for c in CACHES},
        rel=0.5,
        unit="%",
        choices=SIM_CHOICES,
        why="band: each cache's figure +-50% (a stated default); one sentence of the message gives both, so both must hold; "
        f"{L1_READ}. "
        f"The walks' references served from memory fall "
        f"{-eff['walk refs from memory']:.0f}%; every buffer-pool read is uniform, so it misses L1D and L2 whatever the tables do, "
        "and the database's own locality (hot index and row pages, its code), which sets the share of the misses the walks take, "
        "is not stated. " + retired_load_reading(eff),
    )
    F.arithmetic(
        "faults",
        "a page mapped by one process does not fault in another",
        "(model)",
        "fewer faults (not stated)",
        f"{w.loc['private', 'page faults']} -> {w.loc['shared', 'page faults']}",
        w.loc["shared", "page faults"] < w.loc["private", "page faults"],
        figures=0,
        why="fixed by the set-up, not evidence: shared page tables map a page for every process that shares them, so a page one "
        "process faulted in is mapped in the others; counted by the simulation from the processes' start (section 3b counts "
        "those of the measured window); the message gives no fault counts",
        model=True,
    )
    for pages in ("small", "huge"):
        F.not_reproduced(
            f"fsb-{pages}",
            f"front-side bus traffic falls with sharing ({pages} pages)",
            "message body",
            f"about -{d8[pages, 'front-side bus traffic reduction']:g}%",
            "not simulated",
            figures=1,
            why="pagesim has no bus model: bus traffic also holds write-backs, prefetches, the L2's two-line sector fetches and the "
            "other processors' transactions, none modelled (the model's L2 misses, reads only, are in the L2 rows of miss and miss-huge)",
        )
    return _recorded(F, n)


def record_walks(F, curve, wm, base, doc, pages="small"):
    """Section 3b (``pages='small'``) or 5 (``'huge'``): the page walks as the message's counter counts
    them, at the chosen warm-up of ``curve`` (:func:`warmup_curve`), and the warm-ups where each row
    would hold."""
    n = len(F.items)
    document = walk_document(doc, pages)
    fid, what, source = {
        "small": ("walks", "ITLB and DTLB page walks fall by 27% and 26%", "message body"),
        "huge": ("walks-huge", "hugepages: ITLB and DTLB page walks fall by 28% and 10%", "message body (hugepages)"),
    }[pages]
    wk = walk_figures(curve, base["warmup"])
    F.measured(
        fid, what, source, document, wk, rel=0.5, unit="%", choices=WALK_CHOICES, why=walks_why(wm, curve, document, base, "4K" if pages == "small" else "2M")
    )
    F.holds_for(fid, walks_holds(curve, document))
    print(wk, F.get(fid).sensitivity)
    return _recorded(F, n)


def record_other(F, other):
    """Section 4: the figures of the configurations not modelled (not reproduced)."""
    import pandas as pd  # deferred: pandas is slow to import; only tables need it

    n = len(F.items)
    for i, r in other.iterrows():
        doc_text = f"{r.relation} {r.value_low:g}" + (f"-{r.value_high:g}" if pd.notna(r.value_high) else "") + r.unit
        F.not_reproduced(
            f"other-{i}",
            f"{r.configuration}, {r.pool_pages} pages: {r.metric}",
            "message body",
            doc_text,
            "not simulated",
            why="throughput of a full database system (its disk I/O, its scheduler, a machine not modelled): nothing is run for it",
            figures=1,
        )
    return _recorded(F, n)


def record_hugepages_and_throughput(F, wm2, eff, eff2, curve2, base, doc):
    """Section 5: :func:`record_hugepages`, then :func:`record_throughput`."""
    n = len(F.items)
    record_hugepages(F, wm2, eff2, curve2, base, doc)
    record_throughput(F, eff, eff2, base, doc)
    return _recorded(F, n)


def record_hugepages(F, wm2, eff2, curve2, base, doc):
    """Section 5, hugepages: the cache misses and the page walks with the buffer pool in 2 MiB pages."""
    n = len(F.items)
    d8 = document_figures(doc)
    F.measured(
        "miss-huge",
        "hugepages: L1 and L2 cache misses fall by 2% and 6.5% with sharing (all misses: data and page-table lines)",
        "message body (hugepages)",
        {c: -d8["huge", m] for c, m in CACHES.items()},
        {c: round(eff2[f"{c} misses"], 3) for c in CACHES},
        rel=0.5,
        unit="%",
        choices=SIM_CHOICES,
        why="band: each cache's figure +-50% (a stated default); one sentence gives both, so both must hold, and the document's L2 "
        f"falls more than its L1; {L1_READ}. With 2 MiB pages a walk reads three entries, the upper two mostly "
        f"cached, so the uniform reads' data misses set the count (walk references served from memory {eff2['walk refs from memory']:+.0f}%; "
        "the database's own locality is not stated). " + retired_load_reading(eff2),
    )
    record_walks(F, curve2, wm2, base, doc, "huge")
    return _recorded(F, n)


def record_throughput(F, eff, eff2, base, doc):
    """Section 5, throughput: sharing alone (priced from the runs of sections 3 and 5), and the figures
    with the buffer pools enlarged (not reproduced)."""
    n = len(F.items)
    d8 = document_figures(doc)
    price = f"{base['work_cycles']:g} work cycles per access, no overlap of misses (mlp {base['mlp']:g})"
    F.measured(
        "throughput-9",
        "sharing alone (buffer pools not enlarged): transaction throughput up 9%",
        "message body",
        d8["small", "transaction throughput increase (buffer pools not enlarged)"],
        round(eff["throughput"], 3),
        rel=0.5,
        unit="%",
        choices=SIM_CHOICES + PRICE_CHOICES,
        sign_fixed=True,
        why=f"band: the document's figure +-50% (a stated default). The modelled time of section 3's runs ({price}): the walks' references "
        f"served from memory fall {-eff['walk refs from memory']:.0f}%. The work per transaction and the database's locality, which set "
        "the walks' share of the time, are not stated: the sweeps below show how far the figure moves with them. In the model "
        "sharing only removes page-table lines and faults, so the throughput cannot fall: the sign is the model's set-up, and "
        f"only the size is evidence ({eff['throughput'] / d8['small', 'transaction throughput increase (buffer pools not enlarged)']:.2f}x the message's)",
    )
    F.measured(
        "throughput-huge",
        "buffer pools in hugepages: sharing raises transaction throughput 3%",
        "message body (hugepages)",
        d8["huge", "transaction throughput increase"],
        round(eff2["throughput"], 3),
        rel=0.5,
        unit="%",
        choices=SIM_CHOICES + PRICE_CHOICES,
        why=f"band: the document's figure +-50% (a stated default). The modelled time of the hugepage runs ({price}): with 2 MiB pages "
        "the pool's walks read three entries, mostly cached with or without sharing, so sharing saves little of the time; the "
        "message's 3% (with walks down 28% and 10%) must come from what the model leaves out (the kernel, locality)",
    )
    F.not_reproduced(
        "throughput-27",
        "sharing with the freed memory given to the buffer pools: transaction throughput up 27%",
        "message body",
        f"+{d8['small', 'transaction throughput increase (buffer pools enlarged)']:g}%",
        "not simulated",
        figures=1,
        why="nothing is run for it: the 27% combines the enlarged buffer pools (disk I/Os per transaction -23%, fewer context switches) "
        "with fewer TLB and cache misses, and pagesim has no transaction, disk or scheduler model; the database size that sets "
        "the I/O part is not stated (section 2)",
    )
    gap = d8["small", "throughput gap to hugepages without sharing (small pages with sharing and enlarged pools)"]
    F.not_reproduced(
        "vs-hugepages",
        "small pages with sharing (pools enlarged) within 3% of hugepages without sharing",
        "message body",
        f"within {gap:g}%",
        "not simulated",
        figures=1,
        why="nothing is run for it: it compares the enlarged-pool throughput (throughput-27, disk I/O included) with hugepages without sharing",
    )
    return _recorded(F, n)


#: the findings swept over the modelling choices: (id, pool pages, the effect(s) compared, the choices
#: swept beyond SIM_KEYS)
WALKS = ("ITLB walks counted", "DTLB walks counted")
ROBUST = (
    ("walks", "4K", WALKS, ("warmup", "kernel_itlb", "kernel_dtlb")),
    ("walks-huge", "2M", WALKS, ("warmup", "kernel_itlb", "kernel_dtlb")),
    ("miss", "4K", ("L1D misses", "L2 misses"), ()),
    ("miss-huge", "2M", ("L1D misses", "L2 misses"), ()),
    ("throughput-9", "4K", "throughput", ("work_cycles", "mlp")),
    ("throughput-huge", "2M", "throughput", ("work_cycles", "mlp")),
)


def paired_runs(base, pool_pages="4K", seed=0, metric="throughput") -> dict:
    """``metric`` with each re-simulated choice (:data:`SIM_KEYS`) at either end of its sweep, one at
    a time, and the pricing choices (work cycles, mlp) at either end of theirs with it: 2 x 4 corners
    a choice (fewer where a sweep's ends coincide, as at 0), {corner: figure}. ``base`` as
    :func:`database_run` takes it (``DATABASE`` with it changed). The pricing re-prices the
    sweeps' runs (:func:`sweep_effects` with the same ``base`` and ``seed`` has simulated them);
    every re-simulated choice moved at once is not run (2**6 runs of the database)."""
    base = {**DATABASE, **base}
    base["pool"], base["text"] = parse_size(base["pool"], "pool"), parse_size(base["text"], "text")

    def ends(key):
        return sorted({min(around(base[key], key)), max(around(base[key], key))})

    runs = {}
    for key in SIM_KEYS:
        for v in ends(key):
            for w in ends("work_cycles"):
                for m in ends("mlp"):
                    try:
                        e = sharing_effects(database_run(pool_pages, seed, **{**base, key: v, "work_cycles": w, "mlp": m}))
                    except ValueError as err:
                        raise ValueError(f"paired_runs: {key}={v} (an end of its sweep around {base[key]}): {err}") from err
                    if metric not in e:
                        raise ValueError(f"paired_runs: metric={metric!r} is not a sharing effect: choose one of {', '.join(map(repr, e))}")
                    name = f"{CHOICES[key][0]} {choice_value(key, v):g}, work cycles {w:g}, mlp {m:g}"
                    runs[name] = round(float(e[metric]), 3) + 0.0
    return runs


def record_robust(F, swept, base, seed=0):
    """The sweeps of each modelling choice at x0.5 and x2 (``swept``: {'4K' | '2M': :func:`sweep_effects`}
    with ``base`` and ``seed``) recorded with the findings they test, and for the throughput each
    re-simulated choice at either end with the pricing choices at either end (:func:`paired_runs`);
    returns each finding's verdict after its sweeps."""
    ids = []
    for fid, pp, metric, extra in ROBUST:
        for key in list(SIM_KEYS) + list(extra):
            name = CHOICES[key][0]
            if key == "mlp":
                F.robust(fid, name, base[key], robust_runs(swept[pp], key, metric), span=(1, 2), why="misses cannot overlap less than not at all (mlp 1)")
            else:
                F.robust(fid, name, choice_value(key, base[key]), robust_runs(swept[pp], key, metric, 1 if metric == WALKS else 3))
        if metric == "throughput":
            F.together(fid, "one re-simulated choice at a time with the pricing choices (work cycles, mlp)", paired_runs(base, pp, seed, metric))
        ids.append(fid)
    import pandas as pd  # deferred: pandas is slow to import; only tables need it

    return pd.DataFrame([{"id": f, "verdict": F.get(f).label} for f in ids]).set_index("id")


# --------------------------------------------------------------------------------------------------
# The figures of notebook 05.

#: what each figure of the database model says it comes from
DATABASE_MODEL = "database model on the Xeon 7000, simulated"


def plot_io(sizes, doc):
    """Section 2: the uniform buffer-pool model's disk-I/O reduction against the database size, with the
    message's figure and the sizes that give it (``sizes`` from :func:`io_sizes`)."""
    io_doc = document_figures(doc)["small", "disk I/Os per transaction reduction"]
    ax = plotting.sweep(
        sizes.table,
        "database",
        "disk I/O reduction %",
        band=[(io_doc - 5, io_doc + 5, "document +-5 points"), (io_doc, io_doc, f"document ({io_doc:g}%)")],
        intervals=sizes.intervals,
        holds="holds",
        title="Disk I/O reduction from the freed page-table memory vs database size (uniform buffer-pool model)",
        xlabel="database size D (GiB)",
        ylabel="disk I/Os per transaction (% fewer)",
    )
    return ax


def plot_sharing(t, doc, pages="small"):
    """Sections 3 and 5: what sharing changes in one :func:`database_run` (``t``): the TLB misses' walks
    by side, where the walks' references were served, and all L1D and L2 misses (% change) beside the
    message's figures."""
    import matplotlib.pyplot as plt  # deferred: matplotlib is slow to import; only figures need it

    plotting.theme()
    w = t.set_index("page tables")
    fig, ax = plt.subplots(1, 3, figsize=(14, 4), gridspec_kw={"width_ratios": [1, 1, 1.1]}, layout="constrained")
    kinds, x = list(w.index), np.arange(len(w.index))
    for j, side in enumerate(("ITLB walks", "DTLB walks")):
        bars = ax[0].bar(x + (j - 0.5) * 0.38, w[side], 0.38, label=side)
        ax[0].bar_label(bars, fmt="%d", fontsize=8)
    ax[0].set(xticks=x, xticklabels=kinds, ylabel="walks (TLB misses)", title="The TLB misses' walks")
    ax[0].legend(fontsize=8, loc="lower center")
    bottom = np.zeros(len(kinds))
    for level, colour in (("L1D", "tab:green"), ("L2", "tab:orange"), ("memory", "tab:red")):
        v = w[f"walk refs {level}"].to_numpy(dtype=float)
        ax[1].bar(x, v, 0.6, bottom=bottom, label=f"from {level}", color=colour)
        bottom += v
    ax[1].set(xticks=x, xticklabels=kinds, ylabel="walk references", title="Where the walks' references are served")
    ax[1].legend(fontsize=8, loc="lower center")
    d8 = document_figures(doc)
    eff = sharing_effects(t)
    model = [eff[f"{c} misses"] for c in CACHES]
    message = [-d8[pages, m] for m in CACHES.values()]
    y = np.arange(len(CACHES))
    for b in (ax[2].barh(y + 0.2, model, 0.4, label="model"), ax[2].barh(y - 0.2, message, 0.4, label="message", color="0.6")):
        ax[2].bar_label(b, fmt="%.1f%%", fontsize=8, padding=2)
    ax[2].axvline(0, color="0.3", lw=0.8)
    ax[2].set(yticks=y, yticklabels=[f"{c}\nmisses" for c in CACHES], xlabel="% change with sharing", title="All cache misses (data and walks)")
    ax[2].margins(x=0.25)
    ax[2].legend(fontsize=8)
    page = "4 KiB" if pages == "small" else "2 MiB"
    fig.suptitle(f"Private vs shared page tables, buffer pool in {page} pages ({DATABASE_MODEL})")
    return fig


def plot_warmup(curve, doc, pages, warmup):
    """Sections 3b and 5: the walks a counter counts (shared against private tables) over the warm-up
    before the measured window (``curve`` from :func:`warmup_curve`), with the message's figures +-50%."""
    document = walk_document(doc, pages)
    page = "small pages" if pages == "small" else "buffer pool in 2 MiB pages"
    ax = plotting.sweep(
        curve,
        "warm-up (pool sweeps)",
        ["ITLB walks counted %", "DTLB walks counted %"],
        band=[(1.5 * v, 0.5 * v, f"{k} document {v:g}% +-50%") for k, v in document.items()],
        mark=warmup,
        mark_label="chosen warm-up",
        title=f"Walks a counter counts, shared against private tables ({page})\n({DATABASE_MODEL})",
        xlabel="warm-up before the measured window (pool sweeps)",
        ylabel="page walks (% change)",
    )
    lo, hi = ax.get_ylim()  # the message's bands in view even where the model stays far from them
    ax.set_ylim(min(lo, 1.6 * min(document.values())), max(hi, 1.0))
    return ax


def plot_other(other):
    """Section 4: the message's throughput figures for the configurations not modelled (a range as a bar
    with its span, an upper bound hatched)."""
    import matplotlib.pyplot as plt  # deferred: matplotlib is slow to import; only figures need it

    plotting.theme()
    fig, ax = plt.subplots(figsize=(8, 0.5 + 0.55 * len(other)))
    labels = []
    for k, (_, r) in enumerate(other.iterrows()):
        bound = r.relation in ("<=", "<")
        ax.barh(k, r.value_low, 0.6, color="0.75" if bound else "tab:blue", hatch="//" if bound else None, edgecolor="0.4")
        if r.relation == "range":
            ax.plot([r.value_low, r.value_high], [k, k], color="tab:blue", lw=6, solid_capstyle="butt", alpha=0.5)
        text = f"{r.value_low:g}-{r.value_high:g}%" if r.relation == "range" else (f"at most {r.value_low:g}%" if bound else f"{r.value_low:g}%")
        ax.text(max(r.value_low, r.value_high if r.relation == "range" else 0) + 1, k, text, va="center", fontsize=8)
        labels.append(f"{r.configuration}, {r.pool_pages} pages:\n{r.metric.replace(' (small pages with sharing)', '')}")
    ax.set(yticks=range(len(other)), yticklabels=labels, xlabel="% (the message's figure)")
    ax.tick_params(axis="y", labelsize=8)
    ax.invert_yaxis()
    ax.set_title("The message's other configurations (not simulated)")
    return fig


def plot_throughput(eff, eff2, doc):
    """Section 5: the throughput sharing alone brings, modelled (the time of the runs of sections 3 and 5,
    priced) beside the message's figures and their +-50% bands."""
    import matplotlib.pyplot as plt  # deferred: matplotlib is slow to import; only figures need it

    plotting.theme()
    d8 = document_figures(doc)
    message = [d8["small", "transaction throughput increase (buffer pools not enlarged)"], d8["huge", "transaction throughput increase"]]
    model = [eff["throughput"], eff2["throughput"]]
    fig, ax = plt.subplots(figsize=(7, 3.8), layout="constrained")
    x = np.arange(2)
    for k, m in enumerate(message):
        ax.add_patch(plt.Rectangle((k - 0.45, 0.5 * m), 0.9, m, color="tab:green", alpha=0.15, label="message +-50%" if k == 0 else None))
    b1 = ax.bar(x - 0.18, message, 0.34, color="0.6", label="message")
    b2 = ax.bar(x + 0.18, model, 0.34, label="model (modelled time)")
    for b in (b1, b2):
        ax.bar_label(b, fmt="%.1f%%", fontsize=8)
    ax.set(xticks=x, xticklabels=["4 KiB pages", "buffer pool in 2 MiB pages"], ylabel="throughput gain (%)")
    ax.set_title(f"Throughput gain of sharing alone, buffer pools not enlarged\n({DATABASE_MODEL}, priced)")
    ax.legend(fontsize=8)
    return fig


#: the panels of :func:`plot_robust`: (finding id, pool pages, effect, the finding's row or None)
ROBUST_PANELS = (
    ("walks", "4K", "DTLB walks counted", "DTLB"),
    ("miss", "4K", "L2 misses", "L2"),
    ("throughput-9", "4K", "throughput", None),
    ("walks-huge", "2M", "DTLB walks counted", "DTLB"),
    ("miss-huge", "2M", "L2 misses", "L2"),
    ("throughput-huge", "2M", "throughput", None),
)


def plot_robust(F, swept, base):
    """The sweeps of each modelling choice (``swept``: {'4K' | '2M': :func:`sweep_effects`}) for the DTLB
    walks, the L2 misses and the throughput: each choice at x0.5, x1 and x2 (mlp: 1, 1.5, 2) against the
    band of the finding recorded in ``F``. The fault handler's walks at 0 (a counter of user mode only)
    are in the findings' notes, not drawn on the logarithmic axis."""
    import matplotlib.pyplot as plt  # deferred: matplotlib is slow to import; only figures need it

    plotting.theme()
    fig, axes = plt.subplots(2, 3, figsize=(13, 6.4), sharex=True)
    sweeps = {fid: (list(SIM_KEYS) + list(extra)) for fid, _, _, extra in ROBUST}
    handles = {}
    for ax, (fid, pp, effect, row) in zip(axes.flat, ROBUST_PANELS):
        f = F.get(fid)
        lo, hi = next((r["low"], r["high"]) for r in f.rows if r["row"] == row) if row else f.limits
        ax.axhspan(lo, hi, color="tab:green", alpha=0.15)
        for key in sweeps[fid]:
            runs = {v: r for v, r in swept[pp][key].items() if v > 0}  # the user-mode counter (0) has no place on a log axis
            factors = [v / base[key] for v in runs] if key != "mlp" else list(runs)
            (h,) = ax.plot(factors, [runs[v][effect] for v in runs], "o-", color=f"C{list(CHOICES).index(key)}", ms=4, lw=1)
            handles[CHOICES[key][0]] = h
        ax.set_xscale("log", base=2)
        ax.set_xticks([0.5, 1, 2], ["x0.5", "x1", "x2"])
        ax.set_title(f"{fid}: {effect} ({'4 KiB' if pp == '4K' else '2 MiB'} pool pages)", fontsize=10)
        ax.set_ylabel("% change with sharing", fontsize=9)
    band = plt.Rectangle((0, 0), 1, 1, color="tab:green", alpha=0.15)
    fig.legend([band, *handles.values()], ["the finding's band", *handles], loc="lower center", ncol=5, fontsize=8, bbox_to_anchor=(0.5, -0.06))
    fig.suptitle(f"Each modelling choice at x0.5 and x2 ({DATABASE_MODEL}; mlp: 1, 1.5, 2)", y=1.0)
    fig.tight_layout()
    return fig


def database_sizes(pool: float, freed: float, band, values_gib=None) -> Holds:
    """05's disk-I/O reduction (``sharedpt.buffer_pool_io``) over the database size in GiB, and the
    sizes at which it lies in ``band``."""
    if values_gib is None:
        values_gib = [7, 8, 9, 10, 11, 12, 13, 14, 16, 20, 24, 32, 48, 64]

    def one(d):
        r = buffer_pool_io(pool, freed, [d * GIB]).iloc[0].to_dict()
        del r["database GiB"]
        return r

    return holding_range(one, values_gib, band, key="disk I/O reduction %", parameter="database", unit=" GiB", resolution=0.01, fmt="{:.3g}")
