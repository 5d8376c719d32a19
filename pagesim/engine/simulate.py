"""simulate(): one machine, one layout, one workload -> an xarray.Dataset of counters and costs."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # xarray is imported when a Dataset is built: it is most of pagesim's import time
    import xarray as xr

import bisect
import dataclasses
import json

import numpy as np

from ..core.check import check_bool, check_int, check_number, check_seed, warn
from ..core.units import format_bytes, format_size, parse_page_size
from ..model.layout import DEFAULT_BASE, Layout, Region
from ..model.machines import REPLACEMENTS, Machine
from ..model.machines import machine as get_machine
from ..sources.workloads import WORKLOADS, Addresses, Workload
from ..sources.workloads import workload as make_workload
from ..system.memory import PhysicalMemory
from ..system.paging import granted, huge_page_for, resolve
from ..system.pressure import run as run_pressure
from . import stages as E
from .nested import PIPELINE_CHUNK, NestedStage, untimed_error
from .stages import resolve_programmable

MAX_CHUNK = 1 << 24


def place(
    w: Workload, page_size: int, base: int = DEFAULT_BASE, gap: int = 1 << 30, fault_around: int = 1, policy: str = "base", base_page: int | None = None
) -> Layout:
    """Lay a workload's arrays out one after another from ``base``, each rounded out to the page
    size (a THP/MPSS region only to ``base_page``, as mmap rounds a length: its partial huge page
    is base pages) and starting on a ``gap``-aligned boundary (at least the page size)."""
    align = max(gap, page_size)
    regions, at = [], base - base % align
    for name, length in w.spans():
        r = Region.covering(at, length, base_page if base_page and policy in ("thp", "mpss") else page_size, name, fault_around=fault_around)
        if policy != "base":
            r = Region(r.start, r.length, page_size, r.name, r.mode, r.fault_around, policy)
        regions.append(r)
        at = -(-(r.end + 1) // align) * align
    return Layout(tuple(regions))


STRUCTURE_KEYWORDS = ("replacement", "ways", "entries", "sets", "latency", "sizes", "max_entry")
MACHINE_KEYWORDS = ("page_sizes", "base_page", "va_bits", "context_switch", "walker", "structures", "slb", "costs", "pwc", "level_bits", "host")


def check_not_machine_keywords(params: dict, workload, m: Machine, caller: str = "simulate()") -> None:
    """A keyword that belongs to a machine (or one of its TLBs) given to simulate(), sweep() or
    simulate_processes(): an error that says where it goes and how to make such machines (on
    ``m``), before the workload refuses it as one of its own."""
    takes = set()
    if isinstance(workload, str) and workload in WORKLOADS:
        takes = {f.name for f in dataclasses.fields(WORKLOADS[workload])}
    for k in params:
        if k in takes:
            continue
        if k in STRUCTURE_KEYWORDS:
            first = next((st for st in m.structures if st.serves("data")), m.structures[0] if m.structures else None)
            example = (
                f"m = pagesim.machine({m.name!r}); [m.replace_structure({first.name!r}, f'{m.name} {k}={{v}}', {k}=v) for v in ...]"
                if first is not None
                else f"Machine.replace_structure(name, new_name, {k}=v)"
            )
            raise ValueError(
                f"{k}={params[k]!r} is not a parameter of {caller} or of the workload: it belongs to each TLB of the machine. "
                f"Make machines with it and pass them as machine= (in a sweep, as the 'machine' axis), each with its own name, e.g. {example}"
                + (f" (policies: {', '.join(REPLACEMENTS)})" if k == "replacement" else "")
            )
        if k in MACHINE_KEYWORDS:
            raise ValueError(
                f"{k}= is not a parameter of {caller} or of the workload: it belongs to the machine. Make machines with it and pass "
                f"them as machine= (in a sweep, as the 'machine' axis), e.g. pagesim.machine({m.name!r}).derive('{m.name} {k}=...', {k}=...)"
            )


def check_covered(w: Addresses, m, top: int, page_size: int):
    """Name the first address of ``w`` a covering that ends at ``top`` (``Layout.covering_addresses``
    gives it before making any region) cannot hold on machine ``m``: one beyond its virtual address
    space, or one in the last block below 2**63 (covering blocks are at least 2 MiB, and regions
    end below 2**63). Only on that error does it pass over the addresses."""
    va = 1 << min(m.va_bits, 63)
    if top <= va and top < 1 << 63:
        return
    block = max(2 << 20, page_size)
    limit = min(va, (1 << 63) - block)
    i = int((w.addresses >= np.uint64(limit)).argmax())
    v = int(w.addresses[i])
    if limit == va:
        raise ValueError(f"addresses[{i}]={v:#x} is beyond the virtual address space of machine {m.name!r} ({m.va_bits}-bit: addresses below {va:#x})")
    raise ValueError(
        f"addresses[{i}]={v:#x} lies in the last {format_bytes(block)} below 2**63: without layout= the addresses are covered by "
        f"whole {format_bytes(block)} blocks, and regions end below 2**63; give a layout= whose regions end below 2**63"
    )


def simulate(
    machine,
    workload=None,
    *,
    page_size=None,
    layout: Layout | None = None,
    addresses=None,
    kinds=None,
    seed: int = 0,
    chunk_size: int = 1 << 20,
    work_cycles: float | None = None,
    progress: bool = False,
    specialize="auto",
    fault_around: int = 1,
    policy: str = "base",
    memory=None,
    compaction: bool = False,
    ram=None,
    _chunk_hook=None,
    **workload_params,
) -> xr.Dataset:
    """Simulate address translation for ``workload`` on ``machine``.

    machine: a preset name ('skylake', 'power6', ...) or a :class:`Machine`.
    workload: a :class:`Workload`, or a name ('random', 'stream', 'md', ...) with its parameters
        as keywords (``working_set='1G', accesses=10**6``); or pass ``addresses`` (any integer
        array; ``kinds``: 0 data, 1 instruction) instead.
    page_size: the page size every region uses (default: the machine's base page). Ignored when
        ``layout`` is given, which fixes each region's page size (e.g. a 4M heap, 8K elsewhere).
    seed: every random choice comes from it; the same inputs give the same Dataset.
    work_cycles: non-translation cycles per access for the cost model (default: the workload's).
    fault_around: pages one fault maps in the generated layout (16 with 4K pages: POWER's 64 KiB
        emulation mode). With ``layout``, each Region says its own.
    policy: how the OS backs the generated layout's regions: 'base', 'thp', 'mpss', 'hugetlb'
        (see pagesim.system.paging). With a policy other than 'base', ``page_size`` is the huge page asked
        for (default: the machine's, ``pagesim.system.paging.default_huge_page``: 2M on x86-64). With
        ``layout``, each Region says its own.
    memory: a PhysicalMemory. Given, the OS stage decides fault by fault what backs each region
        (huge pages or the fallback to base pages) and the translation stage runs on that backing;
        without it every request is granted. ``compaction``: a THP/MPSS request that finds no free
        block may migrate movable pages.
    ram: a :class:`pagesim.system.pressure.Ram` (a RAM limit with clock or LRU reclaim). Given, the
        accesses are replayed against it and the Dataset gains minor and major faults, swap-outs,
        reclaim scans and the peak resident memory; swapping is charged as its own cost component.
    specialize: run a copy of the kernel compiled for the shape of this machine's data chain (ways,
        replacement, power-of-two sets; same results, 2-4x faster than the generic kernel; the first
        compile of a new shape takes 3-6 s of CPU, then it is cached on disk). Needs every
        access to be a data access to one page size (and, with host regions, TLB entries of one
        size: each region's guest page no larger than its host page, or one host page for all).
        "auto" (the default) uses it then if the chain has a preset's shape (``pagesim warm``
        compiles those) or the run has at least ``pagesim.engine.stages.SPECIALIZE_MIN_ACCESSES``
        (100,000) accesses; the choice depends on the call's inputs only, never on what ran
        before. False: the generic kernel. On a virtualised machine the nested replay is chosen
        the same way, for its host caches' and guest levels' geometry (any page sizes and accesses).
    chunk_size: the most accesses run at once (a chunk holds 8 bytes an access, and on a
        virtualised machine 24 bytes a walk of walk log). A virtualised run of more than one chunk
        (chunks of at most 262,144 accesses then), called from the main thread of a process that
        may use two cores or more, replays each chunk's walks through the host's caches on a
        second thread while the next chunk is translated (``pagesim.engine.nested.pipelined``;
        the environment variable ``PAGESIM_PIPELINE=0`` turns it off); the counts are the same.

    Returns an ``xarray.Dataset`` with counters by structure, side and page size, and the costs.
    """
    m = get_machine(machine)
    seed = check_seed(seed)
    chunk_size = check_int("chunk_size", chunk_size, 1, MAX_CHUNK)
    wc_given = None if work_cycles is None else check_number("work_cycles", work_cycles, 0)
    if not (isinstance(specialize, bool) or (isinstance(specialize, str) and specialize == "auto")):
        raise ValueError(f"specialize={specialize!r} is not allowed: use True, False or 'auto'")
    for flag, v in (("progress", progress), ("compaction", compaction)):
        check_bool(flag, v)
    check_not_machine_keywords(workload_params, workload, m)
    if addresses is not None:
        if workload_params and workload is None:
            names = ", ".join(repr(k) for k in sorted(workload_params))
            raise TypeError(f"simulate() got unexpected keyword argument(s) {names}: with addresses= there is no workload to take them")
        if workload is not None:
            raise ValueError("give either addresses or a workload, not both")
        w = Addresses(addresses=addresses, kinds=kinds)
    elif kinds is not None:
        raise ValueError(
            f"kinds= is not allowed with workload={workload!r}: kinds (0 data, 1 instruction) go with addresses=; "
            "a generated workload or a trace makes its own accesses and their kinds"
        )
    elif workload is None:
        raise ValueError("simulate needs a workload (a Workload or a name such as 'random') or addresses=")
    else:
        w = make_workload(workload, **workload_params)
    if layout is None:
        if policy != "base":  # page_size is the huge page the policy asks for
            page_size = huge_page_for(m, policy, page_size)
        p = m.check_page_size(page_size if page_size is not None else m.base_page)
        if isinstance(w, Addresses):
            layout = Layout.covering_addresses(w.addresses, p, range_error=w.range_error, check_top=lambda top: check_covered(w, m, top, p))
        elif hasattr(w, "covering_layout"):  # a trace file (pagesim.sources.traces)
            layout = w.covering_layout(p, machine=m)
        else:
            layout = place(w, p, fault_around=fault_around, policy=policy, base_page=m.base_page)
        if (isinstance(w, Addresses) or hasattr(w, "covering_layout")) and (fault_around != 1 or policy != "base"):
            # the covering regions take the fault-around and OS policy asked for, as generated layouts do
            layout = Layout(tuple(Region(r.start, r.length, r.page_size, r.name, r.mode, fault_around, policy) for r in layout.regions))
        if (isinstance(w, Addresses) or hasattr(w, "covering_layout")) and m.host is not None and m.host.regions:
            # the covering regions cut where a host region starts or ends (a region lies inside one or outside all)
            bounds = sorted({b for lo, hi, _ in m.host.regions for b in (lo, hi)})

            def inside(r):  # the bounds strictly inside region r
                return bounds[bisect.bisect_right(bounds, r.start) : bisect.bisect_left(bounds, r.end)]

            what = "the addresses" if isinstance(w, Addresses) else w.label
            for r in (r for r in layout.regions if r.fault_around > 1):  # a cut is a mapping's edge: fault-around's window stops at it
                cut = [b for b in inside(r) if b % (r.page_size * r.fault_around)]
                if cut:
                    raise ValueError(
                        f"host_regions: a host region's bound {min(cut):#x} falls inside the region [{r.start:#x}, {r.end:#x}) pagesim laid {what} out in, "
                        f"which is cut there, and fault_around={r.fault_around} would stop at the cut as at a mapping's edge, changing the "
                        f"guest's faults: give host regions whose bounds are multiples of {format_size(r.page_size * r.fault_around)} "
                        f"(the fault-around window), or a layout"
                    )
            layout = layout.split_at(bounds)
            uncut = sorted(b for r in layout.regions for b in inside(r))
            if uncut:
                raise ValueError(
                    f"host_regions: pagesim lays {what} out in {format_size(p)} pages, and a host region's bound {uncut[0]:#x} falls "
                    f"inside one: give a page_size that divides every host region's start and end, or a layout"
                )
    else:
        if not isinstance(layout, Layout):
            raise TypeError(f"layout must be a pagesim Layout, got {type(layout).__name__}")
        if isinstance(w, Workload) and not isinstance(w, Addresses) and len(layout.regions) < len(w.spans()):
            raise ValueError(f"layout has {len(layout.regions)} regions but workload {w.label} needs {len(w.spans())} ({[n for n, _ in w.spans()]})")
        if page_size is not None:
            raise ValueError("give page_size or layout, not both: a layout fixes each region's page size")
        if fault_around != 1 or policy != "base":
            raise ValueError("give fault_around/policy or layout, not both: each Region of a layout has its own")
    layout.check_machine(m)
    if not isinstance(w, Addresses):
        for (name, length), r in zip(w.spans(), layout.regions):
            if length > r.length:
                raise ValueError(f"region {r.name!r} is {r.length} bytes but workload array {name!r} needs {length}")
    bases = [r.start for r in layout.regions]  # addresses follow the layout asked for
    requested = layout
    backing = None
    if isinstance(w, Addresses) and (memory is not None or ram is not None):
        w.check_range()  # the OS stages read the addresses before the translation kernel does
    if memory is not None:
        import copy

        if not isinstance(memory, PhysicalMemory):
            raise TypeError(f"memory must be a pagesim PhysicalMemory, got {type(memory).__name__}")
        layout, backing, _ = resolve(layout, w.chunks(bases, int(chunk_size), seed), copy.deepcopy(memory), m.base_page, compaction)
        layout.check_machine(m)
    else:
        layout = granted(layout, m.base_page)  # partial huge pages of THP/MPSS regions are base pages
    pressure = None
    if ram is not None:
        pressure = run_pressure(layout, w.chunks(bases, int(chunk_size), seed), ram)
    m_eff, programmed = resolve_programmable(m, layout)
    # _chunk_hook (pagesim.engine.timing): called after each chunk with (addresses, kinds, cfg, st); the
    # kernel then logs every walk with its access index, and the hook empties the log. The log holds
    # one chunk's walks: a chunk is at most chunk_size accesses and never more than the workload has
    # (a 24 MiB log zeroed for a 1,000-access run took 4 ms); run_chunks checks every chunk fits.
    nested = NestedStage(m_eff, specialize, w.n_accesses, int(chunk_size)) if m_eff.host is not None else None
    if nested is not None and _chunk_hook is not None:
        raise untimed_error(m)
    mapped = sum(r.length for r in layout.regions) if nested is not None else 0
    if nested is not None and mapped > m_eff.host.guest_ram:
        warn(
            f"machine {m.name!r}: the layout maps {format_size(mapped)}, more than guest_ram={format_size(m_eff.host.guest_ram)}: guest pages "
            "share guest-physical frames (a real guest would page), so the host's caches see fewer distinct pages; give virtualised(guest_ram=...) "
            "at least the footprint"
        )
    hook = nested if nested is not None else _chunk_hook
    chunk = int(chunk_size)
    if nested is not None and nested.pipeline:  # shorter chunks leave less of the run not overlapped
        chunk = min(chunk, PIPELINE_CHUNK)
    log = min(chunk, max(1, int(w.n_accesses))) if hook is not None else 0
    cfg, st, cnt, structs, pwcs = E.kernel_inputs(m_eff, layout, seed, log_walks=log)
    run_chunk = E.choose_kernel(specialize, cfg, w)
    E.run_chunks(
        w.chunks(bases, chunk, seed),
        run_chunk,
        cfg,
        st,
        cnt,
        layout,
        total=w.n_accesses,
        desc=f"{m.name} {w.label}",
        progress=progress,
        chunk_hook=hook,
        chunk_size=log,
        range_error=w.range_error if isinstance(w, Addresses) else None,
    )
    dv, coords = E.dataset_parts(m_eff, layout, cfg, cnt, st, structs, pwcs)
    attrs = E.provenance(
        m,
        programmed,
        w,
        layout,
        seed,
        workload_params=json.dumps({k: (v if isinstance(v, (int, float, str)) else str(v)) for k, v in w.params().items()}),
        requested_layout=E.layout_json(requested),
        backing=json.dumps(backing) if backing is not None else "every request granted (no PhysicalMemory given)",
        page_size_requested=parse_page_size(page_size) if page_size is not None else 0,
    )
    if nested is not None:
        nested.add_to(dv, coords, attrs)
    dv["pages_migrated"] = ((), int(backing["pages_migrated"]) if backing else 0, {"units": "pages", "long_name": "pages moved by compaction"})
    if pressure is not None:
        meaning = {
            "minor_faults": ("faults", "faults on pages never resident before (zero-fill) under the RAM limit"),
            "major_faults": ("faults", "faults that read a swapped-out page back (swap-ins)"),
            "swap_outs": ("pages", "pages evicted to swap to make room"),
            "reclaim_scans": ("pages", "pages the clock hand examined"),
            "resident_peak": ("bytes", "most memory the program held at once"),
            "resident_end": ("bytes", "memory the program held at the end"),
        }
        for k, (u, ln) in meaning.items():
            dv[k] = ((), pressure[k], {"units": u, "long_name": ln})
        attrs["ram"] = json.dumps(
            {"limit": ram.limit, "kernel": ram.kernel, "reclaim": ram.reclaim, "swap_in_cycles": ram.swap_in_cycles, "swap_out_cycles": ram.swap_out_cycles}
        )
    else:
        attrs["ram"] = "no RAM limit (ram=None)"
    wc = float(w.work_cycles) if wc_given is None else wc_given
    return E.finish_dataset(dv, coords, attrs, m_eff, wc, ram)
