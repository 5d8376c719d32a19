"""simulate(): one machine, one layout, one workload -> an xarray.Dataset of counters and costs."""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # xarray is imported when a Dataset is built: it is most of pagesim's import time
    import xarray as xr

import json

import numpy as np

from . import __version__
from ._kernels import translate as K
from ._check import check_choice, check_int, check_number, check_seed
from .costs import add_costs
from .layout import DEFAULT_BASE, Layout, Region
from .machines import Machine, machine as get_machine
from .units import format_size, is_power_of_two, log2, parse_page_size
from .workloads import Addresses, Workload, workload as make_workload

KINDS = ("data", "instr")
def _mode(policy: str, ways: int) -> int:
    if policy == "random":
        return K.RANDOM_FILL
    if ways <= 16:
        return K.ORDER_LRU if policy == "lru" else K.ORDER_FIFO
    return K.STAMP_LRU if policy == "lru" else K.STAMP_FIFO


def _initial_order(ways: int, mode: int) -> int:
    """Recency word with way 0 at the least-recent end, so empty ways fill in order 0, 1, 2..."""
    if mode not in (K.ORDER_LRU, K.ORDER_FIFO):
        return 0
    return sum((ways - 1 - r) << (4 * r) for r in range(ways))
WALK = {"radix": K.RADIX, "hashed": K.HASHED, "tsb": K.TSB, "vhpt": K.VHPT}
MAX_CHUNK = 1 << 24
PROGRAM_THRESHOLD = 8  # "when there are 8 or more pages using the larger page-size" (002_7166aff63bc805c7.txt)


def place(w: Workload, page_size: int, base: int = DEFAULT_BASE, gap: int = 1 << 30, fault_around: int = 1, policy: str = "base",
          base_page: int | None = None) -> Layout:
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


def resolve_programmable(m: Machine, layout: Layout) -> tuple[Machine, dict]:
    """Program each programmable structure to the large size with the most mapped pages, when it has
    at least 8 (the Solaris rule for UltraSPARC III Cu); otherwise leave it unused."""
    programmed = {}
    by_size = layout.pages_by_size()
    for s in m.structures:
        if not s.programmable:
            continue
        cands = [(by_size.get(p, 0), p) for p in s.sizes]
        pages, p = max(cands)
        if pages >= PROGRAM_THRESHOLD:
            m = m.program(s.name, p)
            programmed[s.name] = p
    return m, programmed


def _build(m: Machine, layout: Layout, seed: int, log_walks: int = 0):
    """Kernel inputs. ``log_walks``: the most accesses a chunk will have, to log every walk (0: no log)."""
    sizes = list(m.page_sizes)
    nk = len(sizes)
    zidx = {p: i for i, p in enumerate(sizes)}
    tlbs = list(m.structures)
    structs = tlbs + ([m.slb] if m.slb is not None else [])
    pwcs = list(m.walker.pwc) if m.walker.kind == "radix" else []
    ns = len(structs) + len(pwcs)
    sets = np.array([s.sets for s in structs] + [p.entries // p.ways for p in pwcs], dtype=np.int64)
    ways = np.array([s.ways for s in structs] + [p.ways for p in pwcs], dtype=np.int64)
    mode = np.array([_mode(s.replacement, s.ways) for s in structs] + [_mode(p.replacement, p.ways) for p in pwcs], dtype=np.int64)
    mask = np.array([x - 1 if is_power_of_two(int(x)) else -1 for x in sets], dtype=np.int64)
    pways = (ways + 3) // 4 * 4
    base = np.zeros(ns, dtype=np.int64)
    base[1:] = np.cumsum(sets * pways)[:-1]
    obase = np.zeros(ns, dtype=np.int64)
    obase[1:] = np.cumsum(sets)[:-1]
    order = np.concatenate([np.zeros(1, dtype=np.uint64)] + [np.full(int(n), _initial_order(int(w), int(md)), dtype=np.uint64) for n, w, md in zip(sets, ways, mode)])[1:].copy()
    if order.size == 0:
        order = np.zeros(1, dtype=np.uint64)
    tag_shift = np.zeros((ns, nk), dtype=np.int64)
    for i, s in enumerate(tlbs):
        for z, p in enumerate(sizes):
            tag_shift[i, z] = log2(s.entry_size(p))
    if m.slb is not None:
        tag_shift[len(tlbs), :] = K.SEGMENT_SHIFT
    for j, p in enumerate(pwcs):
        tag_shift[len(structs) + j, :] = m.walker.pwc_shift(p.skip)
    chains = {(k, z): [tlbs.index(s) for s in m.chain(kind, p)] for k, kind in enumerate(KINDS) for z, p in enumerate(sizes)}
    L = max(1, max(len(c) for c in chains.values()))
    assert L <= K.MAX_CHAIN, "Machine validation guarantees chains of at most MAX_CHAIN structures"
    chain = np.full((2, nk, L), -1, dtype=np.int64)
    for (k, z), c in chains.items():
        chain[k, z, : len(c)] = c
    # The fast path of kind k skips accesses that hit the first structure of its chain again. It
    # stays exact only while no access of the other kind touches that structure: so when a
    # structure first in any chain of one kind is anywhere in a chain of the other kind (a
    # unified L2 that is the instruction side's only TLB, Skylake's STLB for 1G code pages), every
    # slow access ends the other kind's fast path.
    firsts = [{c[0] for (kk, _), c in chains.items() if kk == k and c} for k in range(2)]
    anywhere = [{s for (kk, _), c in chains.items() if kk == k for s in c} for k in range(2)]
    shared_first = 1 if (firsts[0] & anywhere[1]) or (firsts[1] & anywhere[0]) else 0
    regs = layout.regions
    reg_pages = np.array([r.pages for r in regs], dtype=np.int64)
    reg_base = np.zeros(len(regs), dtype=np.int64)
    reg_base[1:] = np.cumsum(reg_pages)[:-1]
    w = m.walker
    radix_refs = np.array([w.leaf_refs(p) if w.kind == "radix" else 1 for p in sizes], dtype=np.int64)
    one = lambda v: np.array([v], dtype=np.int64)  # noqa: E731
    cfg = K.Config(
        st_sets=sets, st_ways=ways, st_mask=mask, st_mode=mode, st_base=base, st_pways=pways, st_obase=obase,
        tag_shift=tag_shift, chain=chain,
        reg_start=np.array([r.start for r in regs], dtype=np.int64),
        reg_end=np.array([r.end for r in regs], dtype=np.int64),
        reg_size=np.array([zidx[r.page_size] for r in regs], dtype=np.int64),
        reg_base=reg_base,
        reg_fa=np.array([r.fault_around for r in regs], dtype=np.int64),
        page_shift=np.array([log2(p) for p in sizes], dtype=np.int64),
        walk_kind=one(WALK[w.kind]), radix_refs=radix_refs,
        pwc_struct=np.arange(len(structs), ns, dtype=np.int64),
        pwc_skip=np.array([p.skip for p in pwcs], dtype=np.int64),
        slb_struct=one(len(tlbs) if m.slb is not None else -1),
        tsb_mask=one(w.tsb_entries - 1 if w.kind == "tsb" else 0),
        sw_walk_refs=one(w.sw_walk_refs),
        hpt_mask=one(w.hpt_ptegs - 1 if w.kind == "hashed" else 0),
        shared_first=one(shared_first),
        any_fa=one(1 if any(r.fault_around > 1 for r in regs) else 0),
        log_walks=one(1 if log_walks else 0),
    )
    total = int(reg_pages.sum())
    hashed = w.kind == "hashed"
    st = K.State(
        tags=np.full(max(1, int((sets * pways).sum())), -1, dtype=np.int64),
        stamps=np.zeros(int((sets * pways).sum()) if np.isin(mode, (K.STAMP_LRU, K.STAMP_FIFO)).any() else 1, dtype=np.int64),
        order=order,
        clock=np.zeros(1, dtype=np.int64),
        rng=np.array([(int(seed) * 0x9E3779B97F4A7C15 + 0x2545F4914F6CDD1D) % (1 << 64) or 1], dtype=np.uint64),
        page_state=np.zeros(total, dtype=np.uint8),
        mapped=np.zeros((total + 63) // 64, dtype=np.uint64),
        page_hpt=np.zeros(total if hashed else 1, dtype=np.uint8),
        tsb=np.full(nk * w.tsb_entries if w.kind == "tsb" else 1, -1, dtype=np.int64),
        hpt_slots=np.zeros(w.hpt_ptegs * 8 if hashed else 1, dtype=np.int64),
        hpt_rr=np.zeros(w.hpt_ptegs if hashed else 1, dtype=np.uint8),
        memo_addr=np.full(2, -1, dtype=np.int64),
        memo_shift=np.zeros(2, dtype=np.int64),
        memo_z=np.zeros(2, dtype=np.int64),
        run=np.zeros(2, dtype=np.int64),
        wlog=np.zeros(3 * log_walks if log_walks else 1, dtype=np.int64),
        wlog_n=np.zeros(1, dtype=np.int64),
    )
    cnt = K.Counters(
        resolved=np.zeros((2, nk, L + 1), dtype=np.int64),
        hits=np.zeros((ns, nk), dtype=np.int64),
        misses=np.zeros((ns, nk), dtype=np.int64),
        walk_refs=np.zeros((2, nk), dtype=np.int64),
        tsb_hits=np.zeros((2, nk), dtype=np.int64),
        tsb_misses=np.zeros((2, nk), dtype=np.int64),
        faults=np.zeros(nk, dtype=np.int64),
        prefaulted=np.zeros(nk, dtype=np.int64),
        hpt_secondary=np.zeros(nk, dtype=np.int64),
        hpt_events=np.zeros(2, dtype=np.int64),
    )
    return cfg, st, cnt, structs, pwcs


def tlb_counters(cfg, cnt):
    """Per-structure hits and misses, accesses and walks, from where each access was resolved:
    the lookup at chain position j happens exactly when positions 0..j-1 missed."""
    res = cnt.resolved
    nk, L = res.shape[1], res.shape[2] - 1
    hits = cnt.hits.copy()
    misses = cnt.misses.copy()
    for k in range(2):
        for z in range(nk):
            for j in range(L):
                s = int(cfg.chain[k, z, j])
                if s < 0:
                    break
                hits[s, z] += res[k, z, j]
                misses[s, z] += res[k, z, j + 1 :].sum()
    accesses = res.sum(axis=2)
    walks = res[:, :, L].copy()
    return hits, misses, accesses, walks


SPECIALIZE_MIN_ACCESSES = 5_000_000


def _choose_kernel(specialize, cfg, w):
    if cfg.log_walks[0]:
        return K.run_chunk  # specialised copies never log walks
    zs = set(cfg.reg_size.tolist())
    data_only = not ((isinstance(w, Addresses) and w.kinds is not None) or getattr(w, "has_kinds", False))
    if specialize is False or len(zs) != 1 or not data_only:
        if specialize is True and (len(zs) != 1 or not data_only):
            raise ValueError("specialize=True needs data accesses only and one page size in the layout")
        return K.run_chunk
    from ._kernels import specialize as S

    consts = S.chain_constants(cfg, zs.pop())
    if consts is None:
        return K.run_chunk
    if specialize is True or w.n_accesses >= SPECIALIZE_MIN_ACCESSES or S.is_loaded(consts):
        return S.kernel(consts)
    return K.run_chunk


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
        (see pagesim.paging). With a policy other than 'base', ``page_size`` is the huge page asked
        for (default: the machine's, ``pagesim.paging.default_huge_page``: 2M on x86-64). With
        ``layout``, each Region says its own.
    memory: a PhysicalMemory. Given, the OS stage decides fault by fault what backs each region
        (huge pages or the fallback to base pages) and the translation stage runs on that backing;
        without it every request is granted. ``compaction``: a THP/MPSS request that finds no free
        block may migrate movable pages.
    ram: a :class:`pagesim.pressure.Ram` (a RAM limit with clock or LRU reclaim). Given, the
        accesses are replayed against it and the Dataset gains minor and major faults, swap-outs,
        reclaim scans and the peak resident memory; swapping is charged as its own cost component.
    specialize: run a copy of the kernel compiled for this machine's geometry (same results,
        about 1.8x faster on TLB-missing traces; the first compile of a new geometry takes seconds,
        then it is cached on disk). "auto": when every access is a data access to one page size and
        there are at least SPECIALIZE_MIN_ACCESSES accesses, or a compiled copy is already loaded.

    Returns an ``xarray.Dataset`` with counters by structure, side and page size, and the costs.
    """
    m = get_machine(machine)
    seed = check_seed(seed)
    chunk_size = check_int("chunk_size", chunk_size, 1, MAX_CHUNK)
    wc_given = None if work_cycles is None else check_number("work_cycles", work_cycles, 0)
    check_choice("specialize", specialize, (True, False, "auto"))
    for flag, v in (("progress", progress), ("compaction", compaction)):
        if not isinstance(v, (bool, np.bool_)):
            raise TypeError(f"{flag} must be True or False, got {type(v).__name__} {v!r}")
    if addresses is not None:
        if workload is not None or workload_params:
            raise ValueError("give either addresses or a workload, not both")
        w = Addresses(addresses=addresses, kinds=kinds)
    elif workload is None:
        raise ValueError("simulate needs a workload (a Workload or a name such as 'random') or addresses=")
    else:
        w = make_workload(workload, **workload_params)
    if layout is None:
        if policy != "base":  # page_size is the huge page the policy asks for
            from .paging import huge_page_for

            page_size = huge_page_for(m, policy, page_size)
        p = m.check_page_size(page_size if page_size is not None else m.base_page)
        if isinstance(w, Addresses):
            layout = Layout.covering_addresses(w.addresses, p)
        elif hasattr(w, "covering_layout"):  # a trace file (pagesim.traces)
            layout = w.covering_layout(p)
        else:
            layout = place(w, p, fault_around=fault_around, policy=policy, base_page=m.base_page)
        if (isinstance(w, Addresses) or hasattr(w, "covering_layout")) and (fault_around != 1 or policy != "base"):
            # the covering regions take the fault-around and OS policy asked for, as generated layouts do
            layout = Layout(tuple(Region(r.start, r.length, r.page_size, r.name, r.mode, fault_around, policy) for r in layout.regions))
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
    if memory is not None:
        import copy

        from .memory import PhysicalMemory
        from .paging import resolve

        if not isinstance(memory, PhysicalMemory):
            raise TypeError(f"memory must be a pagesim PhysicalMemory, got {type(memory).__name__}")
        layout, backing, _ = resolve(layout, w.chunks(bases, int(chunk_size), seed), copy.deepcopy(memory), m.base_page, compaction)
        layout.check_machine(m)
    else:
        from .paging import granted

        layout = granted(layout, m.base_page)  # partial huge pages of THP/MPSS regions are base pages
    pressure = None
    if ram is not None:
        from .pressure import run as run_pressure

        pressure = run_pressure(layout, w.chunks(bases, int(chunk_size), seed), ram)
    m_eff, programmed = resolve_programmable(m, layout)
    # _chunk_hook (pagesim.timing): called after each chunk with (addresses, kinds, cfg, st); the
    # kernel then logs every walk with its access index, and the hook empties the log
    cfg, st, cnt, structs, pwcs = _build(m_eff, layout, seed, log_walks=int(chunk_size) if _chunk_hook is not None else 0)
    run_chunk = _choose_kernel(specialize, cfg, w)
    empty = np.zeros(0, dtype=np.uint8)
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=w.n_accesses, desc=f"{m.name} {w.label}", unit="acc", unit_scale=True, leave=False)
    done = 0
    for addrs, kk in w.chunks(bases, int(chunk_size), seed):
        a = np.ascontiguousarray(addrs, dtype=np.uint64).view(np.int64)
        ka = empty if kk is None else np.ascontiguousarray(kk, dtype=np.uint8)
        if _chunk_hook is not None and a.shape[0] > chunk_size:  # the walk log holds chunk_size walks
            raise RuntimeError(f"internal error: a chunk of {a.shape[0]} accesses exceeds chunk_size={chunk_size}")
        if ka.shape[0] and run_chunk is not K.run_chunk:
            raise RuntimeError("internal error: a specialised kernel was chosen for a workload with instruction accesses")
        # Addresses of 2**63 and above would be negative here and must never reach the kernel (its
        # fast-path memo uses -1 as "no entry"): address arrays are checked when made
        # (workloads.Addresses), trace files line by line as they are read (traces._iter_chunks).
        bad = run_chunk(a, ka, cfg, st, cnt)
        if bad >= 0:
            addr = int(a[bad]) & ((1 << 64) - 1)
            raise ValueError(
                f"address {addr:#x} (access {done + bad}) lies outside every region of the layout: "
                f"regions are {', '.join(f'[{r.start:#x}, {r.end:#x})' for r in layout.regions)}"
            )
        if _chunk_hook is not None:
            _chunk_hook(a, ka, cfg, st)
        done += a.shape[0]
        if bar is not None:
            bar.update(a.shape[0])
    K.finish(st, cnt)
    if bar is not None:
        bar.close()
    ds = _dataset(m_eff, layout, w, cfg, cnt, st, structs, pwcs)
    ds.attrs.update(
        {
            "machine": m.name,
            "machine_title": m.title,
            "machine_changes": json.dumps(list(m.changes)),
            "programmed": json.dumps({k: format_size(v) for k, v in programmed.items()}),
            "workload": w.name,
            "workload_label": w.label,
            "workload_params": json.dumps({k: (v if isinstance(v, (int, float, str)) else str(v)) for k, v in w.params().items()}),
            "layout": json.dumps(layout.to_records()),
            "requested_layout": json.dumps(requested.to_records()),
            "backing": json.dumps(backing) if backing is not None else "every request granted (no PhysicalMemory given)",
            "page_size_requested": parse_page_size(page_size) if page_size is not None else 0,
            "seed": seed,
            "pagesim_version": __version__,
            "assumptions": json.dumps(m.assumptions),
        }
    )
    ds["pages_migrated"] = ((), int(backing["pages_migrated"]) if backing else 0, {"units": "pages", "long_name": "pages moved by compaction"})
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
            ds[k] = ((), pressure[k], {"units": u, "long_name": ln})
        ds.attrs["ram"] = json.dumps({"limit": ram.limit, "kernel": ram.kernel, "reclaim": ram.reclaim,
                                      "swap_in_cycles": ram.swap_in_cycles, "swap_out_cycles": ram.swap_out_cycles})
    else:
        ds.attrs["ram"] = "no RAM limit (ram=None)"
    wc = float(w.work_cycles) if wc_given is None else wc_given
    return add_costs(ds, m_eff, wc, ram)


def _dataset(m, layout, w, cfg, cnt, st, structs, pwcs) -> xr.Dataset:
    import xarray as xr

    hits, misses, accesses, walks = tlb_counters(cfg, cnt)
    sizes = list(m.page_sizes)
    labels = [format_size(p) for p in sizes]
    snames = [s.name for s in structs]
    nt = len(structs)
    coords = {
        "page_size": ("page_size", np.array(sizes, dtype=np.int64), {"units": "bytes"}),
        "page": ("page_size", labels),
        "side": ("side", list(KINDS)),
        "structure": ("structure", snames),
        "level": ("structure", [s.level for s in structs]),
        "structure_side": ("structure", [s.side for s in structs]),
        "entries": ("structure", [s.entries for s in structs]),
        "latency": ("structure", [s.latency for s in structs], {"units": "cycles"}),
    }
    dv = {
        "accesses": (("side", "page_size"), accesses, {"units": "accesses", "long_name": "accesses by side and page size"}),
        "hits": (("structure", "page_size"), hits[:nt], {"units": "lookups", "long_name": "lookups that hit"}),
        "misses": (("structure", "page_size"), misses[:nt], {"units": "lookups", "long_name": "lookups that missed (and filled)"}),
        "walks": (("side", "page_size"), walks, {"units": "walks", "long_name": "page-table walks (misses in every structure)"}),
        "walk_refs": (("side", "page_size"), cnt.walk_refs.copy(), {"units": "memory references", "long_name": "page-table memory references"}),
        "faults": (("page_size",), cnt.faults.copy(), {"units": "faults", "long_name": "first-touch page faults"}),
    }
    page_state = st.page_state
    pages_by_size = np.zeros(len(sizes), dtype=np.int64)
    untouched_by_size = np.zeros(len(sizes), dtype=np.int64)
    touched_by_region = []
    off = 0
    for r in layout.regions:
        t = int(np.count_nonzero(page_state[off : off + r.pages] == 1))
        u = int(np.count_nonzero(page_state[off : off + r.pages] == 2))
        touched_by_region.append(t)
        pages_by_size[sizes.index(r.page_size)] += t
        untouched_by_size[sizes.index(r.page_size)] += u
        off += r.pages
    dv["pages_touched"] = (("page_size",), pages_by_size, {"units": "pages", "long_name": "distinct pages touched"})
    dv["prefaulted"] = (("page_size",), cnt.prefaulted.copy(), {"units": "pages", "long_name": "pages mapped by fault-around beside the faulting page"})
    dv["prefaulted_untouched"] = (("page_size",), untouched_by_size, {"units": "pages", "long_name": "prefaulted pages never touched"})
    dv["prefault_waste"] = (("page_size",), untouched_by_size * np.array(sizes, dtype=np.int64), {"units": "bytes", "long_name": "memory held by prefaulted pages never touched"})
    mapped = np.zeros(len(sizes), dtype=np.int64)
    for r in layout.regions:
        mapped[sizes.index(r.page_size)] += r.pages
    dv["pages_mapped"] = (("page_size",), mapped, {"units": "pages", "long_name": "pages the layout maps"})
    if pwcs:
        coords["pwc"] = ("pwc", [p.name for p in pwcs])
        dv["pwc_hits"] = (("pwc", "page_size"), cnt.hits[nt:].copy(), {"units": "lookups"})
        dv["pwc_misses"] = (("pwc", "page_size"), cnt.misses[nt:].copy(), {"units": "lookups"})
    if m.walker.kind == "tsb":
        dv["tsb_hits"] = (("side", "page_size"), cnt.tsb_hits.copy(), {"units": "probes"})
        dv["tsb_misses"] = (("side", "page_size"), cnt.tsb_misses.copy(), {"units": "probes"})
    if m.walker.kind == "hashed":
        dv["hpt_secondary"] = (("page_size",), cnt.hpt_secondary.copy(), {"units": "walks", "long_name": "walks resolved in the secondary PTEG"})
        dv["hpt_evictions"] = ((), int(cnt.hpt_events[0]), {"units": "entries"})
        dv["hpt_refills"] = ((), int(cnt.hpt_events[1]), {"units": "faults", "long_name": "hash faults re-inserting an evicted entry"})
    ds = xr.Dataset(dv, coords=coords)
    ds["region_pages_touched"] = (("region",), np.array(touched_by_region, dtype=np.int64), {"units": "pages"})
    ds = ds.assign_coords(region=_region_labels(layout))
    return ds


def _region_labels(layout) -> list[str]:
    """One label per region, unique: a region the OS split (a THP region's huge part and its base-page
    head or tail) keeps its name with the page size added, then a number if that still repeats."""
    names = [r.name or f"region {i}" for i, r in enumerate(layout.regions)]
    out = [n if names.count(n) == 1 else f"{n} ({format_size(r.page_size)})" for n, r in zip(names, layout.regions)]
    seen: dict[str, int] = {}
    for i, n in enumerate(out):
        if out.count(n) > 1:
            seen[n] = seen.get(n, 0) + 1
            out[i] = f"{n} #{seen[n]}"
    return out
