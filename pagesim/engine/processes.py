"""Several processes time-sliced on one core, each with its own address space and page tables.

``simulate_processes`` runs ``processes`` copies of a workload (each with its own seed) round
robin, ``quantum`` accesses at a time, on one core. Every process sees the same virtual layout;
regions named in ``shared`` are the same memory in every process (a database buffer pool).

Address spaces. TLB entries of different processes never match: each process's addresses are
moved into their own slice of the virtual address space, a multiple of every structure's sets x
entry span above the process's own addresses, so an entry's set is the one its own address gives
(as with an address-space ID) and only the tag differs. What a switch does follows the machine's
``context_switch`` ('flush': every TLB and page-walk cache emptied, as x86 without PCID;
'flush-erat': every structure in front of the last level and the SLB, as POWER's EA-tagged
ERATs in front of its TLB; 'tagged': nothing),
or the ``switch`` argument. Modelling simplification: the TSB and the hashed page table are one
table for all processes.

Page-table memory and the data cache (radix walkers). Every walk is logged with the number of
page-table references it made (after page-walk-cache hits); the references are the entries of the
lowest levels, leaf last. Each process has its own tables; with ``shared_tables`` the leaf-level
tables of shared regions are one set for all processes (the 2006 linux-mm patch,
004_b9bff536459e6bfe.txt). Table pages are placed one after another in physical memory in the
order (owner, level, index) (a modelling assumption; any placement gives the same distinct-line
count). The referenced entries' cache lines go through ``caches``, a small model of the data
caches the walker loads through (default 32 KiB 8-way L1 and 1 MiB 16-way L2 with 64-byte lines,
modelling assumptions), fed only page-table references: the program's own data is not modelled.
With shared tables a page another process has already mapped does not fault again.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from math import gcd
from typing import TYPE_CHECKING

import numpy as np

from .._kernels import dcache as D
from .._kernels import specialize as S
from .._kernels import translate as K
from .._kernels.sets import HASH_FACTOR
from ..core.check import check_choice, check_int, check_seed
from ..core.units import format_size, parse_size
from ..model.layout import Layout, Region
from ..model.machines import CONTEXT_SWITCH
from ..model.machines import machine as get_machine
from ..sources.workloads import Addresses
from ..sources.workloads import workload as make_workload
from ..system.paging import granted
from . import stages as E
from .simulate import check_not_machine_keywords, place
from .stages import resolve_programmable

if TYPE_CHECKING:
    import xarray as xr

MAX_PROCESSES = 1024
ENTRY_BYTES = 8  # bytes per page-table entry (x86-64, Arm, POWER9 radix)


@dataclass(frozen=True)
class DataCache:
    """One level of the data-cache model: ``size`` bytes, ``ways``-way, ``line``-byte lines."""

    name: str
    size: int
    ways: int
    line: int = 64

    def __post_init__(self):
        object.__setattr__(self, "size", parse_size(self.size, f"cache {self.name!r} size"))
        object.__setattr__(self, "line", check_int(f"cache {self.name!r} line", self.line, 16, 256, " bytes"))
        check_choice(f"cache {self.name!r} line", self.line, (16, 32, 64, 128, 256))
        object.__setattr__(self, "ways", check_int(f"cache {self.name!r} ways", self.ways, 1, 64))
        if not 0 < self.size <= 1 << 30 or self.size % (self.line * self.ways):
            raise ValueError(f"cache {self.name!r} size={self.size} must be a positive multiple of line x ways ({self.line * self.ways} bytes), at most 1 GiB")

    @property
    def sets(self) -> int:
        return self.size // (self.line * self.ways)


DEFAULT_CACHES = (DataCache("L1D", "32K", 8), DataCache("L2", "1M", 16))


def _lcm(a: int, b: int) -> int:
    return a // gcd(a, b) * b


def asid_stride(cfg, layout: Layout, va_bits: int, n: int) -> int:
    """The distance between processes' address-space slices: above every local address, and a
    multiple of every structure's (sets << tag shift) so a slice moves no entry to another set."""
    span = 1 << max(1, (max(r.end for r in layout.regions) - 1).bit_length())
    mult = 1
    for s in range(cfg.st_sets.shape[0]):
        for z in range(cfg.tag_shift.shape[1]):
            mult = _lcm(mult, int(cfg.st_sets[s]) << int(cfg.tag_shift[s, z]))
    stride = _lcm(span, mult)
    if n * stride > (1 << va_bits):
        raise ValueError(
            f"processes={n}: {n} address-space slices of {format_size(stride)} do not fit in {va_bits} virtual-address bits; "
            "use fewer processes or a smaller layout"
        )
    return stride


def _flush_structures(cfg, st, cnt, which):
    """Empty the structures ``which`` (indices into the kernel's structures and walk caches),
    after attributing the pending fast-path hits."""
    K.finish(st, cnt)
    st.memo_addr[:] = -1
    st.memo_shift[:] = 0
    for s in which:
        a = int(cfg.st_base[s])
        b = a + int(cfg.st_sets[s] * cfg.st_pways[s])
        st.tags[a:b] = -1
        if int(cfg.st_mode[s]) in E.LIST_MODES:  # its hash table empty, its recency rings 0, 1, 2, ...
            h = int(cfg.set_hash[cfg.st_obase[s]])
            st.htab[h : h + 2 * HASH_FACTOR * int(cfg.st_sets[s] * cfg.st_ways[s])] = -1
            st.links[2 * a : 2 * b] = E.initial_links(int(cfg.st_sets[s]), int(cfg.st_ways[s]), int(cfg.st_pways[s]))
        o = int(cfg.st_obase[s])
        st.order[o : o + int(cfg.st_sets[s])] = np.uint64(E.initial_order(int(cfg.st_ways[s]), int(cfg.st_mode[s])))


def simulate_processes(
    machine,
    workload=None,
    *,
    processes: int = 2,
    quantum: int = 10_000,
    switch: str | None = None,
    shared=(),
    shared_tables: bool = False,
    caches=DEFAULT_CACHES,
    page_size=None,
    layout: Layout | None = None,
    addresses=None,
    kinds=None,
    seed: int = 0,
    work_cycles: float | None = None,
    data_lines: bool = False,
    **workload_params,
) -> xr.Dataset:
    """Run ``processes`` copies of ``workload`` time-sliced on one core of ``machine``.

    workload / workload_params: as for :func:`pagesim.simulate`; process i uses seed ``seed + i``.
        Or ``addresses``: a list with one address array per process (then give ``layout``), and
        ``kinds`` a list with one kinds array per process (0 data, 1 instruction), if wanted.
    quantum: accesses a process runs before the next one is switched in.
    switch: 'flush', 'flush-erat' or 'tagged' (default: the machine's ``context_switch``).
    shared: names of regions that are the same memory in every process (e.g. ('table',)).
    shared_tables: share the leaf page tables of the shared regions.
    caches: the data-cache levels page-table references go through (radix walkers), or () for none.
    data_lines: also send each data access's line through ``caches``, in program order after the
        walk it needed (if any), so the program's own data competes with the page-table lines; adds
        ``data_cache_hits`` / ``data_cache_misses``. A line of a shared region is the same line in
        every process; a private one is each process's own.

    Returns the counters summed over processes as :func:`pagesim.simulate` does, plus
    ``context_switches``, ``faults_per_process`` and, with caches, ``walk_cache_hits`` /
    ``walk_cache_misses`` by cache level, ``pt_lines`` and ``pt_tables`` (distinct page-table cache
    lines and table pages the walks touched).
    """
    for name in ("specialize", "progress", "chunk_size"):  # simulate()'s own options, not a workload's
        if name in workload_params:
            raise TypeError(
                f"simulate_processes() has no {name}= option: it always runs the generic kernel (processes share the machine's structures), "
                "in chunks of one quantum, without a progress bar"
            )
    m = get_machine(machine)
    check_not_machine_keywords(workload_params, workload, m, "simulate_processes()")
    seed = check_seed(seed)
    n = check_int("processes", processes, 1, MAX_PROCESSES)
    quantum = check_int("quantum", quantum, 1, K_MAX_QUANTUM, " accesses")
    switch = check_choice("switch", m.context_switch if switch is None else switch, CONTEXT_SWITCH)
    caches = tuple(caches)
    for c in caches:
        if not isinstance(c, DataCache):
            raise TypeError(f"caches must hold pagesim DataCache levels, got {type(c).__name__}")
    if not isinstance(data_lines, bool):
        raise TypeError(f"data_lines must be True or False, got {data_lines!r}")
    if data_lines and not caches:
        raise ValueError("data_lines=True needs caches (the levels the data lines go through)")
    if caches and m.walker.kind != "radix":
        raise ValueError(f"the data-cache model follows radix walks; machine {m.name!r} has a {m.walker.kind} walker: pass caches=()")
    if addresses is not None:
        if workload is not None or workload_params:
            raise ValueError("give either addresses or a workload, not both")
        if layout is None:
            raise ValueError("with addresses=, give the layout every process shares")
        if isinstance(addresses, np.ndarray) and addresses.ndim == 1:
            raise ValueError(f"addresses is one array of shape {addresses.shape}: give a list of {n} arrays, one per process")
        if len(addresses) != n:
            raise ValueError(f"addresses has {len(addresses)} arrays but processes={n}")
        if kinds is not None and len(kinds) != n:
            raise ValueError(f"kinds has {len(kinds)} arrays but processes={n}")
        works = [Addresses(addresses=a, kinds=None if kinds is None else kinds[i]) for i, a in enumerate(addresses)]
        for i, w in enumerate(works):  # each process's addresses are offset by its address-space stride: checked first
            try:
                w.check_range()
            except ValueError as e:
                raise ValueError(f"process {i}: {e}") from None
    elif workload is None:
        raise ValueError("simulate_processes needs a workload (a name such as 'random') or addresses=")
    else:
        works = [make_workload(workload, **workload_params)] * n
    w0 = works[0]
    if layout is None:
        p = m.check_page_size(page_size if page_size is not None else m.base_page)
        layout = place(w0, p)
    elif not isinstance(layout, Layout):
        raise TypeError(f"layout must be a pagesim Layout, got {type(layout).__name__}")
    elif page_size is not None:
        raise ValueError("give page_size or layout, not both")
    layout.check_machine(m)
    if m.host is not None:
        raise ValueError(f"machine {m.name!r} is virtualised: simulate_processes does not model nested paging; run simulate() for each process")
    bases = [r.start for r in layout.regions]  # addresses follow the layout asked for
    layout = granted(layout, m.base_page)  # a THP/MPSS region's partial huge pages are base pages
    shared = (shared,) if isinstance(shared, str) else tuple(shared)
    names = [r.name for r in layout.regions]
    for s in shared:
        if s not in names:
            raise ValueError(f"shared={s!r} names no region of the layout: regions are {names}")
    if shared_tables and not shared:
        raise ValueError("shared_tables=True needs shared regions (shared=('name',))")
    if any(r.fault_around != 1 for r in layout.regions) and shared_tables:
        raise ValueError("shared_tables with fault-around regions is not modelled")
    m_eff, programmed = resolve_programmable(m, layout)

    # one combined layout: process i's regions moved up by i * stride
    probe, *_ = E.kernel_inputs(m_eff, layout, seed, direct=False)
    stride = asid_stride(probe, layout, m.va_bits, n)
    combined = Layout(
        tuple(Region(r.start + i * stride, r.length, r.page_size, f"p{i}:{r.name}", r.mode, r.fault_around, r.policy) for i in range(n) for r in layout.regions)
    )
    cfg, st, cnt, structs, pwcs = E.kernel_inputs(m_eff, combined, seed, log_walks=int(quantum) if caches else 0, direct=False)

    run_chunk = S.generic(cfg, bool(caches))  # processes share structures, and some run instructions: geometry read at run time
    nt = len(m_eff.structures)
    if switch == "flush":
        flushed = list(range(len(structs) + len(pwcs)))
    elif switch == "flush-erat":
        last = max((s.level for s in m_eff.structures), default=0)
        flushed = [i for i, s in enumerate(structs) if i >= nt or s.level < last]
    else:
        flushed = []

    gens = [iter(w.chunks(bases, int(quantum), seed + i)) for i, w in enumerate(works)]
    live = list(range(n))
    logs = []
    faults_pp = np.zeros(n, dtype=np.int64)
    chunks = []  # with data_lines: (process, addresses, walks logged, loads mask) per chunk, in program order
    switches = 0
    current = None
    while live:
        for i in list(live):
            try:
                addrs, kk = next(gens[i])
            except StopIteration:
                live.remove(i)
                continue
            if current is not None and current != i:
                switches += 1
                if flushed:
                    _flush_structures(cfg, st, cnt, flushed)
            current = i
            a, ka = E.kernel_arrays(addrs, kk, offset=i * stride)
            before = int(cnt.faults.sum())
            bad = run_chunk(a, ka, cfg, st, cnt)
            faults_pp[i] += int(cnt.faults.sum()) - before  # each process faults in its own copy of the regions
            if bad >= 0:
                raise ValueError(f"process {i}: address {int(a[bad]) - i * stride:#x} lies outside every region of the layout")
            if caches:
                k = int(st.wlog_n[0])
                logs.append(st.wlog[:k].copy())
                st.wlog_n[0] = 0
                if data_lines:
                    a_local = np.asarray(addrs, dtype=np.uint64).astype(np.int64)
                    chunks.append((i, a_local, k // 3, None if kk is None else np.asarray(kk) == 0))
    K.finish(st, cnt)
    dv, coords = E.dataset_parts(m_eff, combined, cfg, cnt, st, structs, pwcs)

    # faults: per process; with shared tables a shared page faults once, in whichever process first
    page_state = E.page_states(cfg, st)
    off = 0
    per_region = []
    for r in combined.regions:
        per_region.append(page_state[off : off + r.pages] != 0)
        off += r.pages
    nr = len(layout.regions)
    saved = 0
    if shared_tables:
        sizes = list(m_eff.page_sizes)
        faults = dv["faults"][1].copy()
        for j, r in enumerate(layout.regions):
            if r.name in shared:
                stack = np.array([per_region[i * nr + j] for i in range(n)])
                union = int(stack.any(axis=0).sum())
                extra = int(stack.sum()) - union
                faults[sizes.index(r.page_size)] -= extra
                saved += extra
        dv["faults"] = (("page_size",), faults, dv["faults"][2])
    dv["faults_per_process"] = (
        ("process",),
        faults_pp,
        {
            "units": "faults",
            "long_name": "first-touch faults in each process's own pages, as with private tables (with shared tables "
            "their sum exceeds faults by faults_saved_by_sharing)",
        },
    )
    dv["faults_saved_by_sharing"] = ((), saved, {"units": "faults"})
    dv["context_switches"] = ((), switches, {"units": "switches"})
    attrs = {}

    if caches:
        log = np.concatenate(logs) if logs else np.zeros(0, dtype=np.int64)
        lines, tables = _walk_lines(m_eff, layout, log, stride, shared if shared_tables else (), n, caches[0].line)
        sets = np.array([c.sets for c in caches], dtype=np.int64)
        ways = np.array([c.ways for c in caches], dtype=np.int64)
        cbase = np.zeros(len(caches), dtype=np.int64)
        cbase[1:] = np.cumsum(sets * ways)[:-1]
        tags = np.full(int((sets * ways).sum()), -1, dtype=np.int64)
        stamps = np.zeros_like(tags)
        hits = np.zeros(len(caches), dtype=np.int64)
        misses = np.zeros(len(caches), dtype=np.int64)
        if len({c.line for c in caches}) != 1:
            raise ValueError("every cache level must have the same line size")
        if data_lines:
            order, is_data = _program_order(lines, log, chunks, layout, shared, stride, caches[0].line)
            dhits = np.zeros(len(caches), dtype=np.int64)
            dmisses = np.zeros(len(caches), dtype=np.int64)
            _cache_by_class(order, is_data, sets, ways, cbase, tags, stamps, (hits, misses), (dhits, dmisses))
            dv["data_cache_hits"] = (("cache",), dhits, {"units": "accesses", "long_name": "data accesses that hit in this cache level"})
            dv["data_cache_misses"] = (("cache",), dmisses, {"units": "accesses", "long_name": "data accesses that missed this cache level"})
        else:
            _cache_by_class(lines, np.zeros(lines.size, dtype=bool), sets, ways, cbase, tags, stamps, (hits, misses), (hits, misses))
        coords["cache"] = ("cache", [c.name for c in caches])
        dv["walk_cache_hits"] = (("cache",), hits, {"units": "references", "long_name": "page-table references that hit in this cache level"})
        dv["walk_cache_misses"] = (("cache",), misses, {"units": "references", "long_name": "page-table references that missed this cache level"})
        dv["pt_lines"] = ((), int(np.unique(lines).size), {"units": "cache lines", "long_name": "distinct page-table cache lines walks touched"})
        dv["pt_tables"] = ((), tables, {"units": "table pages", "long_name": "distinct page-table pages walks touched"})
        attrs["caches"] = str([(c.name, c.size, c.ways, c.line) for c in caches])

    attrs.update(
        E.provenance(
            m,
            programmed,
            w0,
            layout,
            seed,
            processes=n,
            quantum=int(quantum),
            switch=switch,
            shared=json.dumps(list(shared)),
            shared_tables=int(bool(shared_tables)),
            asid_stride=stride,
        )
    )
    wc = float(w0.work_cycles if work_cycles is None else work_cycles)
    if wc < 0:
        raise ValueError(f"work_cycles={work_cycles} must be zero or more")
    return E.finish_dataset(dv, coords, attrs, m_eff, wc)


K_MAX_QUANTUM = 1 << 22


def walk_references(m, layout: Layout, log: np.ndarray, stride: int, shared_leaf=(), nproc: int = 1):
    """The page-table entries each logged walk read, in order: arrays (owner, level, table index,
    entry index). ``owner`` is the process, or ``nproc`` for a shared leaf table."""
    w = m.walker
    bits = list(w.level_bits)
    nl = len(bits)
    sizes = list(m.page_sizes)
    a = log[0::3]  # the log holds (address, refs * 16 + z, access index) per walk
    code = log[1::3]
    refs = code >> 4
    z = code & 15
    proc = a // stride
    local = a - proc * stride
    leaf = np.array([w.leaf_refs(p) - 1 for p in sizes], dtype=np.int64)[z]  # level index of the leaf entry
    starts = np.array([r.start for r in layout.regions], dtype=np.int64)
    ends = np.array([r.end for r in layout.regions], dtype=np.int64)
    ri = np.searchsorted(starts, local, side="right") - 1
    is_shared = np.zeros(len(layout.regions), dtype=bool)
    for j, r in enumerate(layout.regions):
        is_shared[j] = r.name in shared_leaf
    if ((ri < 0) | (local < starts[ri]) | (local >= ends[ri])).any():  # the kernel logs walks of mapped addresses only
        raise RuntimeError("internal error: a logged walk lies outside every region of the layout")
    sh = is_shared[ri]
    shifts = [w.base_shift + sum(bits[lv + 1 :]) for lv in range(nl)]
    own, lev, tab, ent = [], [], [], []
    for lvl in range(nl):
        used = (lvl <= leaf) & (lvl > leaf - refs)
        own.append(np.where(used, np.where(sh & (lvl == leaf), nproc, proc), -1))
        lev.append(np.full(a.shape, lvl))
        tab.append(local >> (shifts[lvl] + bits[lvl]))
        ent.append((local >> shifts[lvl]) & ((1 << bits[lvl]) - 1))
    # walk order: one row per walk, levels top first
    own, lev, tab, ent = (np.stack(x, axis=1).ravel() for x in (own, lev, tab, ent))
    keep = own >= 0
    return own[keep], lev[keep], tab[keep], ent[keep]


def _walk_lines(m, layout, log, stride, shared_leaf, nproc, line):
    o, lvl, t, e = walk_references(m, layout, log, stride, shared_leaf, nproc)
    if o.size == 0:
        return np.zeros(0, dtype=np.int64), 0
    inv, ntables = _table_ids(o, lvl, t)
    table_bytes = ENTRY_BYTES << max(m.walker.level_bits)
    lines = (inv * table_bytes + e * ENTRY_BYTES) // line
    return lines.astype(np.int64), ntables


def _table_ids(o, lvl, t):
    """Number the distinct (owner, level, table) triples 0, 1, 2... in lexicographic order (what
    ``np.unique`` over the stacked rows gives) and return each reference's number and the count.
    All three are non-negative; packed into one int64 key (their order kept) when their bit widths
    fit in 63 bits, which is every realistic case, so the sort is of one column, not of rows."""
    bo, bl, bt = (max(1, int(x.max()).bit_length()) for x in (o, lvl, t))
    if bo + bl + bt <= 63:
        key = (o.astype(np.int64) << (bl + bt)) | (lvl.astype(np.int64) << bt) | t.astype(np.int64)
        uniq, inv = np.unique(key, return_inverse=True)
        return inv.reshape(-1).astype(np.int64), int(uniq.size)
    order = np.lexsort((t, lvl, o))
    so, sl, stt = o[order], lvl[order], t[order]
    new = np.ones(order.size, dtype=bool)
    new[1:] = (so[1:] != so[:-1]) | (sl[1:] != sl[:-1]) | (stt[1:] != stt[:-1])
    ids = np.cumsum(new) - 1
    inv = np.empty(order.size, dtype=np.int64)
    inv[order] = ids
    return inv, int(ids[-1]) + 1


DATA_LINE_BASE = 1 << 40  # data lines are numbered from here, above every page-table line


def _program_order(pt_lines, log, chunks, layout, shared, stride, line):
    """Page-table lines (``pt_lines``, in walk order) and data lines merged in program order: each
    access's walk references (leaf last), then the access's own line. Returns the merged lines and
    a flag per line (True for data)."""
    code = log[1::3]
    refs = code >> 4
    idx = log[2::3]
    # position of each walk: its chunk's first access + its index in the chunk
    starts = np.cumsum([0] + [a.size for _, a, _, _ in chunks])[:-1]
    walk_chunk = np.repeat(np.arange(len(chunks)), [k for _, _, k, _ in chunks])
    walk_pos = starts[walk_chunk] + idx if len(chunks) else idx
    ref_pos = np.repeat(walk_pos, refs)
    # 0, 1, ..., refs - 1 for each walk: its references' places after the walk's first
    ref_sub = np.arange(ref_pos.size, dtype=np.int64) - np.repeat(np.cumsum(refs) - refs, refs)
    if ref_pos.size != pt_lines.size:  # one position per page-table reference, or the replay would misalign
        raise RuntimeError(f"internal error: {ref_pos.size} reference positions for {pt_lines.size} page-table references")
    regions = layout.regions
    rs = np.array([r.start for r in regions], dtype=np.int64)
    sh = np.array([r.name in shared for r in regions], dtype=bool)
    dl, dp = [], []
    for (i, a, _, is_load), start in zip(chunks, starts):
        ri = np.searchsorted(rs, a, side="right") - 1
        phys = np.where(sh[ri], a, a + np.int64(i * stride))  # a shared region is one memory for all processes
        keep = np.ones(a.size, dtype=bool) if is_load is None else is_load  # instruction fetches do not use the data cache
        dl.append(DATA_LINE_BASE + phys[keep] // line)
        dp.append(start + np.flatnonzero(keep))
    data = np.concatenate(dl) if dl else np.zeros(0, dtype=np.int64)
    dpos = np.concatenate(dp) if dp else np.zeros(0, dtype=np.int64)
    lines = np.concatenate([pt_lines, data])
    pos = np.concatenate([ref_pos, dpos])
    sub = np.concatenate([ref_sub, np.full(data.size, 64, dtype=np.int64)])  # the data line after its walk
    order = np.lexsort((sub, pos))
    flag = np.concatenate([np.zeros(pt_lines.size, dtype=bool), np.ones(data.size, dtype=bool)])
    return lines[order].astype(np.int64), flag[order]


def _cache_by_class(lines, is_data, sets, ways, cbase, tags, stamps, walk_counts, data_counts):
    """Run ``lines`` through the cache model (one state), counting hits and misses of page-table
    and data lines apart, in one kernel call (one call per stretch of one class took a Python loop
    over about two million stretches in notebook 05)."""
    clock = np.zeros(1, dtype=np.int64)
    if lines.size == 0:
        return
    D.cache_lines_by_class(lines, is_data, sets, ways, cbase, tags, stamps, clock, *walk_counts, *data_counts)
