"""The engine ``simulate`` and ``simulate_processes`` share: kernel inputs from a machine and a
layout, the kernel choice, the chunk loop (progress bar, addresses outside every region), the
Dataset of counters and costs built once, and the provenance attributes. The public functions
resolve their inputs and call these stages."""

from __future__ import annotations

import json
import threading
from collections import Counter
from typing import TYPE_CHECKING

import numpy as np

from .._kernels import policies, rules
from .._kernels import specialize as S
from .._kernels import translate as K
from .._kernels.sets import HASH_FACTOR
from ..core.progress import bar as progress_bar
from ..core.units import format_size, is_power_of_two, log2
from ..core.version import __version__
from ..model.costs import cost_inputs, cost_variables
from ..model.layout import Layout
from ..model.machines import Machine, machine, machines
from ..sources.workloads import Addresses
from .xrdata import build_dataset

if TYPE_CHECKING:
    import xarray as xr

KINDS = ("data", "instr")


PROGRAM_THRESHOLD = 8  # "when there are 8 or more pages using the larger page-size" (002_7166aff63bc805c7.txt)


def resolve_programmable(m: Machine, layout: Layout) -> tuple[Machine, dict]:
    """Program each programmable structure to the large size with the most mapped pages, when it has
    at least 8 (the Solaris rule for UltraSPARC III Cu); otherwise leave it unused."""
    programmed = {}
    by_size = None
    for s in m.structures:
        if not s.programmable:
            continue
        if by_size is None:
            by_size = layout.pages_by_size()
        cands = [(by_size.get(p, 0), p) for p in s.sizes]
        pages, p = max(cands)
        if pages >= PROGRAM_THRESHOLD:
            m = m.program(s.name, p)
            programmed[s.name] = p
    return m, programmed


def replacement_mode(policy: str, ways: int) -> int:
    """The kernels' mode of a set of ``ways`` under ``policy``: its scanned mode, or above 16 ways
    its ring-kept one if it has one (``pagesim._kernels.policies``)."""
    p = policies.BY_NAME[policy]
    return p.WIDE if p.WIDE is not None and ways > 16 else p.MODE


LIST_MODES = (K.LIST_LRU, K.LIST_FIFO, K.DIRECT_LRU, K.DIRECT_FIFO)  # sets kept as rings of ways
DIRECT = {K.LIST_LRU: K.DIRECT_LRU, K.LIST_FIFO: K.DIRECT_FIFO}
DIRECT_MAX = 1 << 24  # granules a DIRECT_* structure may index (int16 each: 32 MiB); more, and it keeps its hash table


def initial_order(ways: int, mode: int) -> int:
    """A set's order word with way 0 at the least-recent end, so empty ways fill in order 0, 1, 2...:
    packed nibbles (ORDER_*) or the ring's head, way 0 (LIST_*, DIRECT_*)."""
    if mode in LIST_MODES:
        return 0
    if mode not in (K.ORDER_LRU, K.ORDER_FIFO):
        return 0
    return sum((ways - 1 - r) << (4 * r) for r in range(ways))


def initial_links(sets: int, ways: int, pways: int) -> np.ndarray:
    """A LIST_* or DIRECT_* structure's recency rings as the kernel keeps them, (previous way, next
    way) per slot, each set's ring running 0, 1, ..., ways - 1 and back to 0 (padding slots -1)."""
    w = np.arange(ways, dtype=np.int64)
    one = np.full((pways, 2), -1, dtype=np.int64)
    one[:ways, 0] = (w - 1) % ways
    one[:ways, 1] = (w + 1) % ways
    return np.tile(one.reshape(-1), sets)


def granule_offsets(regions, shifts) -> tuple[np.ndarray, int]:
    """Number the granules (of ``2**h`` bytes) a structure's entries can hold in this layout:
    ``shifts[r]`` is its tag shift in region r, None where it is never looked up. Returns per region
    the offset that turns a key (``address >> h``) into its number, and how many numbers there are.
    A granule two regions share (the SLB's 256 MiB segments) gets one number: regions are sorted
    and disjoint, so it can only be the last of one region and the first of the next."""
    off = np.zeros(len(regions), dtype=np.int64)
    n = 0
    prev = None  # (shift, last key, its number) of the last region looked up
    for r, (reg, h) in enumerate(zip(regions, shifts)):
        if h is None:
            continue
        first, last = reg.start >> h, (reg.end - 1) >> h
        base = prev[2] if prev is not None and prev[0] == h and prev[1] == first else n
        off[r] = base - first
        prev = (h, last, base + last - first)
        n = prev[2] + 1
    return off, n


def initial_stamps(sets: int, ways: int, pways: int) -> np.ndarray:
    """A STAMP_LRU structure's links: per set, way w's stamp at slot w (-ways + w: empty ways are
    the oldest, lowest first; padding the largest int64, never the oldest), the rest unused."""
    one = np.full(2 * pways, -1, dtype=np.int64)
    one[:pways] = np.iinfo(np.int64).max
    one[:ways] = np.arange(ways, dtype=np.int64) - ways
    return np.tile(one, sets)


def region_classes(mp, m: Machine, layout: Layout) -> list[int]:
    """Each layout region's page class (``MachineParts.classes``): its page size's, or on a
    virtualised machine with host regions its (page size, host page) pair's."""
    host = m.host
    if host is None or not host.regions:
        return [mp.zidx[r.page_size] for r in layout.regions]
    return [mp.cidx[(r.page_size, host.page_for(r.start, r.end, f"layout region {r.name!r}"))] for r in layout.regions]


def direct_modes(mp, layout: Layout, zs: list[int]):
    """Which LIST_* structures (more than 16 ways, in a chain or the SLB) index their entries
    directly in this layout (DIRECT_*; an LRU SLB STAMP_LRU): those whose granules number at most
    DIRECT_MAX (``zs``: each region's page class). Returns their modes, idx_off (a key plus its
    region's offset is the granule's slot in ``pos``: each direct structure's numbers start where the previous one's end,
    so a lookup reads no start of its own), the size of ``pos`` and the STAMP_LRU structure or -1."""
    cfg = mp.config
    mode, tag_shift, chain = cfg["st_mode"], cfg["tag_shift"], cfg["chain"]
    regs = layout.regions
    idx_off = np.zeros((max(1, mp.ns), len(regs)), dtype=np.int64)
    new_mode = mode.copy()
    size = 0
    for s in mp.wide:
        shifts = [int(tag_shift[s, z]) if s == mp.slb or (chain[:, z, :] == s).any() else None for z in zs]
        off, n = granule_offsets(regs, shifts)
        if not 0 < n <= DIRECT_MAX:
            continue  # too many granules: it keeps its hash table (none: it is never looked up)
        new_mode[s] = K.STAMP_LRU if s == mp.slb and mode[s] == K.LIST_LRU else DIRECT[int(mode[s])]
        idx_off[s] = off + size
        size += n
    return new_mode, idx_off, size, mp.slb if mp.slb >= 0 and new_mode[mp.slb] == K.STAMP_LRU else -1


WALK = rules.WALKERS


class MachineParts:
    """What the kernel inputs and the Dataset take from a machine alone (not from the layout or
    the run), computed once per Machine object (``machine_parts``): a 1,000-access call spends
    more time deriving these than simulating. Every array here is only read: the kernel's
    Config shares them between calls, and the per-run state is copied from ``order``."""

    def __init__(self, m: Machine):
        sizes = list(m.page_sizes)
        self.sizes = sizes
        self.nk = len(sizes)
        self.zidx = {p: i for i, p in enumerate(sizes)}
        # The kernel's page classes (index z): one a page size, unless a virtualised machine has
        # host regions: then one a (page size, host page) pair, the default host page's first. A
        # class looks up the chain of its entries' size (the smaller of its two pages) and counts
        # as its page size (``fold``); the nested replay translates its data with its host page.
        host = m.host
        hosts = host.page_sizes if host is not None and host.regions else (None,)
        self.classes = [(p, h) for h in hosts for p in sizes]
        if len(self.classes) > 16:  # a tag holds the class in its low 4 bits (key * 16 + class)
            raise RuntimeError(f"internal error: {len(self.classes)} page classes, more than 16")
        self.cidx = {c: i for i, c in enumerate(self.classes)}
        self.class_size = np.array([self.zidx[p] for p, _ in self.classes], dtype=np.int64)
        entry = [p if h is None else min(p, h) for p, h in self.classes]  # whose chain a class looks up
        # the class each class is translated as: the first with its page size and entry size (two
        # such classes look up the same chain, tag shifts and walk; only the nested replay, which
        # reads the class a walk is logged as, tells them apart), so a layout of one guest page
        # on host pages no smaller than it is translated as one class (and can be specialised)
        first = {}
        self.translated_as = np.array([first.setdefault((p, e), c) for c, ((p, _), e) in enumerate(zip(self.classes, entry))], dtype=np.int64)
        self.nc = nk = len(self.classes)
        tlbs = list(m.structures)
        structs = tlbs + ([m.slb] if m.slb is not None else [])
        pwcs = list(m.walker.pwc) if m.walker.kind == "radix" else []
        self.structs, self.pwcs = structs, pwcs
        self.ns = ns = len(structs) + len(pwcs)
        sets = np.array([s.sets for s in structs] + [p.entries // p.ways for p in pwcs], dtype=np.int64)
        ways = np.array([s.ways for s in structs] + [p.ways for p in pwcs], dtype=np.int64)
        mode = np.array([replacement_mode(s.replacement, s.ways) for s in structs] + [replacement_mode(p.replacement, p.ways) for p in pwcs], dtype=np.int64)
        mask = np.array([x - 1 if is_power_of_two(int(x)) else -1 for x in sets], dtype=np.int64)
        pways = (ways + 3) // 4 * 4
        # Where each structure's tags (base) and recency words (obase) sit: the page-walk caches
        # first, then the SLB, then the TLBs, so the walker's and the SLB's places do not depend on
        # the TLBs' sizes (a specialised kernel compiles them in as constants, and machines that
        # differ only in their last TLB's entries still share it; specialize.chain_shape). A
        # layout of one page size places its data chain apart (``placed``).
        self._geom = (sets, ways, mode, pways, len(tlbs))
        self._placed: dict = {}
        self._front = list(range(len(structs), ns)) + list(range(len(tlbs), len(structs)))  # the caches, the SLB
        default = self._front + list(range(len(tlbs)))
        listed = np.isin(mode, LIST_MODES)
        base, obase, self.order, self.links, set_hash, self.slots, self.hsize = self._arrays([self._own(s) for s in default])
        # the wide structures (LIST_*) that a layout may let index their entries directly: the
        # chains' and the SLB (the page-walk caches are narrow, but a user's could be wide: their
        # keys skip levels of the walk, which the numbering does not follow, so they keep the table)
        self.slb = len(tlbs) if m.slb is not None else -1
        self.wide = [int(s) for s in np.flatnonzero(listed) if s < len(structs)]
        tag_shift = np.zeros((ns, nk), dtype=np.int64)
        for i, s in enumerate(tlbs):
            for z, e in enumerate(entry):
                tag_shift[i, z] = log2(s.entry_size(e))
        if m.slb is not None:
            tag_shift[len(tlbs), :] = rules.SEGMENT_SHIFT
        for j, p in enumerate(pwcs):
            tag_shift[len(structs) + j, :] = m.walker.pwc_shift(p.skip)
        chains = {(k, z): [tlbs.index(s) for s in m.chain(kind, e)] for k, kind in enumerate(KINDS) for z, e in enumerate(entry)}
        self.L = L = max(1, max(len(c) for c in chains.values()))
        if L > K.MAX_CHAIN:  # Machine validation rejects such chains; never hand one to the kernel
            raise RuntimeError(f"internal error: a chain of {L} structures, more than the kernel's MAX_CHAIN={K.MAX_CHAIN}")
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
        # tlb_counters: chain position (k, z, j) looks up structure chain[k, z, j]
        k_, z_, j_ = np.nonzero(chain >= 0)
        self.chain_pos = (k_, z_, j_, chain[k_, z_, j_] * nk + z_)
        w = m.walker
        self.w = w
        one = lambda v: np.array([v], dtype=np.int64)  # noqa: E731
        self.config = dict(
            st_sets=sets,
            st_ways=ways,
            st_mask=mask,
            st_mode=mode,
            st_base=base,
            st_pways=pways,
            st_obase=obase,
            set_hash=set_hash,
            tag_shift=tag_shift,
            chain=chain,
            page_shift=np.array([log2(p) for p, _ in self.classes], dtype=np.int64),
            walk_kind=one(WALK[w.kind]),
            radix_refs=np.array([w.leaf_refs(p) if w.kind == "radix" else 1 for p, _ in self.classes], dtype=np.int64),
            pwc_struct=np.arange(len(structs), ns, dtype=np.int64),
            pwc_skip=np.array([p.skip for p in pwcs], dtype=np.int64),
            slb_struct=one(len(tlbs) if m.slb is not None else -1),
            tsb_mask=one(w.tsb_entries - 1 if w.kind == "tsb" else 0),
            sw_walk_refs=one(w.sw_walk_refs),
            hpt_mask=one(w.hpt_ptegs - 1 if w.kind == "hashed" else 0),
            shared_first=one(shared_first),
        )
        self.no_log, self.log = one(0), one(1)
        # the Dataset's coordinates and the provenance, as dataset_parts and provenance give them
        self.page_size = np.array(sizes, dtype=np.int64)
        self.labels = [format_size(p) for p in sizes]
        self.nt = len(structs)  # TLBs and the SLB (the page-walk caches follow)
        self.structure = [s.name for s in structs]
        self.level = [s.level for s in structs]
        self.structure_side = [s.side for s in structs]
        self.entries = [s.entries for s in structs]
        self.latency = [s.latency for s in structs]
        self.changes_json = json.dumps(list(m.changes))
        self.assumptions_json = json.dumps(m.assumptions)

    def fold(self, counts: np.ndarray) -> np.ndarray:
        """``counts`` over the page classes (last axis) as counts over the page sizes (a copy)."""
        if self.nc == self.nk:
            return counts.copy()
        out = np.zeros(counts.shape[:-1] + (self.nk,), dtype=counts.dtype)
        for c, z in enumerate(self.class_size.tolist()):
            out[..., z] += counts[..., c]
        return out

    def _arrays(self, items):
        """Where each structure sits, for ``items`` in order of place: (structure, slots, sets)
        takes that room (at least the structure's own: more leaves a gap after it). Returns base,
        obase, the initial recency words, the initial rings of LIST_* structures, set_hash, the
        number of slots and the hash tables' size."""
        sets, ways, mode, pways, _ = self._geom
        base = np.zeros(len(sets), dtype=np.int64)
        obase = np.zeros(len(sets), dtype=np.int64)
        at = oat = 0
        for s, slots, nsets in items:
            if slots < sets[s] * pways[s] or nsets < sets[s]:
                raise RuntimeError(f"internal error: structure {s} placed in too little room")
            base[s], obase[s] = at, oat
            at, oat = at + slots, oat + nsets
        order = np.zeros(max(1, oat), dtype=np.uint64)
        for s in range(len(sets)):
            order[obase[s] : obase[s] + sets[s]] = initial_order(int(ways[s]), int(mode[s]))
        # LIST_* structures (more than 16 ways): recency rings 0, 1, 2, ... and an empty hash table each
        # (a layout may let them index their entries directly instead: kernel_inputs, direct_modes)
        listed = np.isin(mode, LIST_MODES)
        links = np.full(2 * at if listed.any() else 1, -1, dtype=np.int64)
        set_hash = np.zeros(max(1, oat), dtype=np.int64)
        hsize = 0
        for s in np.flatnonzero(listed):
            links[2 * base[s] : 2 * (base[s] + sets[s] * pways[s])] = initial_links(int(sets[s]), int(ways[s]), int(pways[s]))
            set_hash[obase[s] : obase[s] + sets[s]] = hsize
            hsize += 2 * HASH_FACTOR * int(sets[s] * ways[s])
        return base, obase, order, links, set_hash, max(1, at), hsize

    def _own(self, s: int) -> tuple[int, int, int]:
        sets, _, _, pways, _ = self._geom
        return (s, int(sets[s] * pways[s]), int(sets[s]))

    def placed(self, z: int):
        """The config, initial recency words and rings, and slot count of a layout whose every
        region has page size index ``z``. Such a run looks up one data chain (and the walker's
        caches and the SLB, placed as always): chain position j starts where position j - 1
        starts plus the room of the largest structure at position j - 1 in any of the machine's
        data chains, and the other TLBs follow. So every page size's chain sits at the same places,
        and a specialised kernel, which compiles the places in (specialize.chain_shape), serves
        every page size whose chain has the same ways and replacement: Skylake's 4K and 2M chains
        (an L1 of 64 or 32 entries, then the shared STLB) compile once, not twice."""
        hit = self._placed.get(z)
        if hit is None:
            sets, _, _, pways, nt = self._geom
            allc = self.config["chain"][0]
            items = [self._own(s) for s in self._front]
            chain = [int(s) for s in allc[z] if s >= 0]
            for j, s in enumerate(chain):
                col = [int(x) for x in allc[:, j] if x >= 0]
                items.append((s, max(int(sets[x] * pways[x]) for x in col), max(int(sets[x]) for x in col)))
            items += [self._own(s) for s in range(nt) if s not in chain]
            base, obase, order, links, set_hash, slots, _ = self._arrays(items)
            config = dict(self.config, st_base=base, st_obase=obase, set_hash=set_hash)
            hit = self._placed[z] = (config, order, links, slots)
        return hit


_PARTS: dict[int, tuple[Machine, MachineParts]] = {}
_PARTS_MAX = 64
_PARTS_LOCK = threading.Lock()


def machine_parts(m: Machine) -> MachineParts:
    """``MachineParts(m)``, kept for the last 64 Machine objects (keyed by identity: a Machine is
    immutable, and the entry holds it so its id is never reused while cached)."""
    hit = _PARTS.get(id(m))
    if hit is not None and hit[0] is m:
        return hit[1]
    parts = MachineParts(m)
    with _PARTS_LOCK:
        while len(_PARTS) >= _PARTS_MAX:
            del _PARTS[next(iter(_PARTS))]
        _PARTS[id(m)] = (m, parts)
    return parts


def kernel_inputs(m: Machine, layout: Layout, seed: int, log_walks: int = 0, direct: bool = True):
    """Kernel inputs. ``log_walks``: the most accesses a chunk will have, to log every walk (0: no
    log). ``direct``: let wide chain structures index their entries directly (``direct_modes``;
    simulate_processes does not: its processes' pages share the structures' entries)."""
    mp = machine_parts(m)
    nk, ns, L, w = mp.nc, mp.ns, mp.L, mp.w
    regs = layout.regions
    logged = region_classes(mp, m, layout)
    zs = [int(mp.translated_as[z]) for z in logged]
    reg_pages = np.array([r.pages for r in regs], dtype=np.int64)
    reg_base = np.zeros(len(regs), dtype=np.int64)
    reg_base[1:] = np.cumsum(reg_pages)[:-1]
    total = int(reg_pages.sum())
    if direct and len(set(zs)) == 1:  # one data chain looked up: placed apart (MachineParts.placed)
        config, order, links, slots = mp.placed(zs[0])
    else:
        config, order, links, slots = mp.config, mp.order, mp.links, mp.slots
    if direct and mp.wide:
        mode, idx_off, npos, stamped = direct_modes(mp, layout, zs)
        config = dict(config, st_mode=mode)
    else:
        idx_off, npos, stamped = np.zeros((max(1, ns), len(regs)), dtype=np.int64), 1, -1
    links = links.copy()
    if stamped >= 0:
        sb, sn, sw, spw = (int(config[f][stamped]) for f in ("st_base", "st_sets", "st_ways", "st_pways"))
        links[2 * sb : 2 * (sb + sn * spw)] = initial_stamps(sn, sw, spw)
    cfg = K.Config(
        reg_start=np.array([r.start for r in regs], dtype=np.int64),
        reg_end=np.array([r.end for r in regs], dtype=np.int64),
        reg_size=np.array(zs, dtype=np.int64),
        reg_class=np.array(logged, dtype=np.int64),
        reg_base=reg_base,
        reg_fa=np.array([r.fault_around for r in regs], dtype=np.int64),
        any_fa=mp.log if any(r.fault_around > 1 for r in regs) else mp.no_log,
        log_walks=mp.log if log_walks else mp.no_log,
        idx_off=idx_off,
        **config,
    )
    hashed = w.kind == "hashed"
    st = K.State(
        tags=np.full(slots, -1, dtype=np.int64),
        links=links,
        order=order.copy(),
        htab=np.full(max(1, mp.hsize), -1, dtype=np.int64),
        pos=np.full(max(1, npos), -1, dtype=np.int16),
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
        # only the words written are read (wlog_n counts them): np.empty, as a log of 24 MiB that
        # glibc hands out from its heap after the first run is otherwise zeroed on every call
        wlog=np.empty(3 * log_walks if log_walks else 1, dtype=np.int64),
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
    return cfg, st, cnt, mp.structs, mp.pwcs


def tlb_counters(cfg, cnt, positions=None):
    """Per-structure hits and misses, accesses and walks, from where each access was resolved:
    the lookup at chain position j happens exactly when positions 0..j-1 missed. ``positions``:
    ``MachineParts.chain_pos`` of the machine ``cfg`` was made for (else derived from cfg.chain)."""
    res = cnt.resolved
    nk, L = res.shape[1], res.shape[2] - 1
    hits = cnt.hits.copy()
    misses = cnt.misses.copy()
    if positions is None:
        k, z, j = np.nonzero(cfg.chain >= 0)  # a chain is its first entries, then -1s
        s = cfg.chain[k, z, j] * nk + z
    else:
        k, z, j, s = positions
    later = np.cumsum(res[:, :, ::-1], axis=2)[:, :, ::-1]  # later[k, z, j] = res[k, z, j:].sum()
    np.add.at(hits.reshape(-1), s, res[k, z, j])  # a structure in both sides' chains adds twice
    np.add.at(misses.reshape(-1), s, later[k, z, j + 1])
    accesses = later[:, :, 0].copy()
    walks = res[:, :, L].copy()
    return hits, misses, accesses, walks


SPECIALIZE_MIN_ACCESSES = 100_000


def choose_kernel(specialize, cfg, w):
    """The ``run_chunk`` for this run, chosen from the call's inputs alone (never from what the
    process ran before). Every kernel is written by ``_kernels/writer.py`` with only the paths the
    run can take (its walker, fault-around or not, the walk log or not):

    - the specialised copy (the chain's shape compiled in: ways, replacement, power-of-two sets)
      when every access is a data access and the layout has one page size, and ``specialize=True``,
      or the run has at least ``SPECIALIZE_MIN_ACCESSES`` accesses, or the chain has the shape of a
      preset's, without fault-around or the walk log (compiled by ``pagesim warm``; machines that
      differ from a preset only in page sizes or in the entries of the chain's last structure share it);
    - otherwise the generic kernel for its features (geometry read at run time): compiled once per
      walker, fault-around, walk log and chain depth (``specialize.generic_key``), it serves every
      machine with those, which matters for short runs on many different machines: a
      specialised copy takes 3-6 s of CPU to compile, while the generic kernel runs 100,000
      accesses in a few milliseconds.
    """
    log = bool(cfg.log_walks[0])
    zs = set(cfg.reg_size.tolist())
    data_only = not ((isinstance(w, Addresses) and w.kinds is not None and bool(np.any(w.kinds))) or getattr(w, "has_kinds", False))
    if specialize is False or len(zs) != 1 or not data_only:
        if specialize is True:
            raise ValueError(
                "specialize=True needs data accesses only and one page size in the layout (on a virtualised machine with host regions, "
                "TLB entries of one size too: each region's guest page no larger than its host page, or every region on one host page)"
            )
        return S.generic(cfg, log)
    shape = S.chain_shape(cfg, zs.pop(), log)
    if shape is None:
        if specialize is True:
            raise ValueError(f"specialize=True needs a data chain of at most {K.MAX_CHAIN} structures")
        return S.generic(cfg, log)
    if specialize is True or w.n_accesses >= SPECIALIZE_MIN_ACCESSES or shape in preset_shapes():
        return S.kernel(shape)
    return S.generic(cfg, log)


def kernel_arrays(addrs, kinds, offset: int = 0):
    """A chunk as the kernel takes it: int64 addresses (``offset`` added; uint64 viewed, never
    copied when contiguous) and uint8 kinds, or an empty kinds array for all-data."""
    a = np.ascontiguousarray(addrs, dtype=np.uint64).view(np.int64)
    if offset:
        a = a + np.int64(offset)
    ka = _EMPTY if kinds is None else np.ascontiguousarray(kinds, dtype=np.uint8)
    return a, ka


_EMPTY = np.zeros(0, dtype=np.uint8)


def run_chunks(
    chunks,
    run_chunk,
    cfg,
    st,
    cnt,
    layout: Layout,
    total: int | None = None,
    desc: str = "",
    progress: bool = False,
    chunk_hook=None,
    chunk_size: int = 0,
    range_error=None,
) -> int:
    """Every (addresses, kinds) chunk through ``run_chunk``, then the pending fast-path hits
    attributed. ``chunk_hook`` (pagesim.engine.timing, pagesim.engine.nested) is called after each
    chunk with (addresses, kinds, cfg, st); the kernel then logs every walk with its access index and
    the hook empties the log. A hook may return the state the next chunk runs with (the same arrays,
    another walk log), and its ``finish`` method, if it has one, is called when the chunks end or one
    fails.
    A ValueError names the first address outside every region and its index (made by
    ``range_error(index)`` when that address is 2**63 or above). Returns the number of accesses run."""
    bar = None
    if progress:
        bar = progress_bar(total=total, desc=desc, unit="acc", unit_scale=True, leave=False)
    done = 0
    try:
        for addrs, kk in chunks:
            a, ka = kernel_arrays(addrs, kk)
            if chunk_hook is not None and a.shape[0] > chunk_size:  # the walk log holds chunk_size walks
                raise RuntimeError(f"internal error: a chunk of {a.shape[0]} accesses exceeds chunk_size={chunk_size}")
            # Addresses of 2**63 and above are negative here: the kernel stops at the first one, as at
            # any address outside every region (trace files are also checked line by line as they
            # are read, traces._iter_chunks).
            bad = run_chunk(a, ka, cfg, st, cnt)
            if bad >= 0:
                addr = int(a[bad]) & ((1 << 64) - 1)
                if addr >= 1 << 63:
                    if range_error is not None:
                        raise range_error(done + bad)
                    raise ValueError(f"address {addr:#x} (access {done + bad}) is out of range: pagesim simulates addresses below 2**63")
                raise ValueError(
                    f"address {addr:#x} (access {done + bad}) lies outside every region of the layout: "
                    f"regions are {', '.join(f'[{r.start:#x}, {r.end:#x})' for r in layout.regions)}"
                )
            if chunk_hook is not None:
                nxt = chunk_hook(a, ka, cfg, st)
                if nxt is not None:
                    st = nxt
            done += a.shape[0]
            if bar is not None:
                bar.update(a.shape[0])
    finally:
        if chunk_hook is not None and hasattr(chunk_hook, "finish"):
            chunk_hook.finish()
    K.finish(st, cnt)
    if bar is not None:
        bar.close()
    return done


def provenance(m: Machine, programmed: dict, w, layout: Layout, seed: int, **extra) -> dict:
    """The attributes every Dataset carries: the machine (with its changes and modelling
    assumptions), what was programmed, the workload, the layout, the seed and pagesim's version;
    ``extra`` adds the caller's own."""
    mp = machine_parts(m)
    return {
        "machine": m.name,
        "machine_title": m.title,
        "machine_changes": mp.changes_json,
        "programmed": json.dumps({k: format_size(v) for k, v in programmed.items()}),
        "workload": w.name,
        "workload_label": w.label,
        "layout": layout_json(layout),
        "seed": seed,
        "pagesim_version": __version__,
        "assumptions": mp.assumptions_json,
        **extra,
    }


_LAYOUT_JSON: dict[int, tuple[Layout, str]] = {}


def layout_json(layout: Layout) -> str:
    """``json.dumps(layout.to_records())``, kept for the last 16 Layout objects (immutable; a call
    writes the requested and the granted layout, most often the same object, and a layout
    covering a trace can have hundreds of regions)."""
    hit = _LAYOUT_JSON.get(id(layout))
    if hit is not None and hit[0] is layout:
        return hit[1]
    text = _records_json(layout.regions)
    with _PARTS_LOCK:
        while len(_LAYOUT_JSON) >= 16:
            del _LAYOUT_JSON[next(iter(_LAYOUT_JSON))]
        _LAYOUT_JSON[id(layout)] = (layout, text)
    return text


def _records_json(regions) -> str:
    """``json.dumps(Layout(regions).to_records())``, written out directly (a third of the time for
    a trace's many regions): the same keys in the same order, strings escaped by json's own
    encoder, ints as json writes them. Any field of another type goes through json.dumps."""
    enc = json.encoder.encode_basestring_ascii
    if not all(
        type(r.start) is int
        and type(r.length) is int
        and type(r.page_size) is int
        and type(r.fault_around) is int
        and type(r.name) is str
        and type(r.mode) is str
        and type(r.policy) is str
        for r in regions
    ):
        return json.dumps(Layout(tuple(regions)).to_records())
    return (
        "["
        + ", ".join(
            [
                f'{{"name": {enc(r.name)}, "start": {r.start}, "length": {r.length}, "page_size": {r.page_size}, '
                f'"mode": {enc(r.mode)}, "fault_around": {r.fault_around}, "policy": {enc(r.policy)}}}'
                for r in regions
            ]
        )
        + "]"
    )


def finish_dataset(dv: dict, coords: dict, attrs: dict, m, work_cycles: float, ram=None) -> xr.Dataset:
    """The Dataset of ``dv``, ``coords`` and ``attrs`` (tuples and values as xarray.Dataset takes
    them) with the cost model's variables, built once."""
    cdv, ccoords, cattrs = cost_variables(cost_inputs(dv, coords), m, work_cycles, ram)
    return build_dataset({**dv, **cdv}, {**coords, **ccoords}, {**attrs, **cattrs})


def dataset_parts(m, layout, cfg, cnt, st, structs, pwcs) -> tuple[dict, dict]:
    """The counters' data variables and coordinates, as (dims, values, attrs) tuples."""
    mp = machine_parts(m)
    if structs != mp.structs or pwcs != mp.pwcs or not (cfg.chain is mp.config["chain"] or np.array_equal(cfg.chain, mp.config["chain"])):
        raise RuntimeError("internal error: dataset_parts got kernel inputs made for another machine")
    hits, misses, accesses, walks = (mp.fold(x) for x in tlb_counters(cfg, cnt, mp.chain_pos))
    sizes = mp.sizes
    nt = mp.nt
    coords = {
        "page_size": ("page_size", mp.page_size, {"units": "bytes"}),
        "page": ("page_size", mp.labels),
        "side": ("side", list(KINDS)),
        "structure": ("structure", mp.structure),
        "level": ("structure", mp.level),
        "structure_side": ("structure", mp.structure_side),
        "entries": ("structure", mp.entries),
        "latency": ("structure", mp.latency, {"units": "cycles"}),
    }
    dv = {
        "accesses": (("side", "page_size"), accesses, {"units": "accesses", "long_name": "accesses by side and page size"}),
        "hits": (("structure", "page_size"), hits[:nt], {"units": "lookups", "long_name": "lookups that hit"}),
        "misses": (("structure", "page_size"), misses[:nt], {"units": "lookups", "long_name": "lookups that missed (and filled)"}),
        "walks": (("side", "page_size"), walks, {"units": "walks", "long_name": "page-table walks (misses in every structure)"}),
        "walk_refs": (("side", "page_size"), mp.fold(cnt.walk_refs), {"units": "memory references", "long_name": "page-table memory references"}),
        "faults": (("page_size",), mp.fold(cnt.faults), {"units": "faults", "long_name": "first-touch page faults"}),
    }
    touched_by_region, untouched_by_region = page_counts(page_states(cfg, st), cfg.reg_base, bool(cnt.prefaulted.any()))
    reg_size = mp.class_size[cfg.reg_size]  # page-size index of each region
    pages_by_size = np.zeros(len(sizes), dtype=np.int64)
    np.add.at(pages_by_size, reg_size, touched_by_region)
    untouched_by_size = np.zeros(len(sizes), dtype=np.int64)
    np.add.at(untouched_by_size, reg_size, untouched_by_region)
    dv["pages_touched"] = (("page_size",), pages_by_size, {"units": "pages", "long_name": "distinct pages touched"})
    dv["prefaulted"] = (("page_size",), mp.fold(cnt.prefaulted), {"units": "pages", "long_name": "pages mapped by fault-around beside the faulting page"})
    dv["prefaulted_untouched"] = (("page_size",), untouched_by_size, {"units": "pages", "long_name": "prefaulted pages never touched"})
    dv["prefault_waste"] = (
        ("page_size",),
        untouched_by_size * mp.page_size,
        {"units": "bytes", "long_name": "memory held by prefaulted pages never touched"},
    )
    mapped = np.zeros(len(sizes), dtype=np.int64)
    np.add.at(mapped, reg_size, np.diff(cfg.reg_base, append=st.page_state.shape[0]))  # pages of each region
    dv["pages_mapped"] = (("page_size",), mapped, {"units": "pages", "long_name": "pages the layout maps"})
    if pwcs:
        coords["pwc"] = ("pwc", [p.name for p in pwcs])
        dv["pwc_hits"] = (("pwc", "page_size"), mp.fold(cnt.hits[nt:]), {"units": "lookups"})
        dv["pwc_misses"] = (("pwc", "page_size"), mp.fold(cnt.misses[nt:]), {"units": "lookups"})
    if m.walker.kind == "tsb":
        dv["tsb_hits"] = (("side", "page_size"), mp.fold(cnt.tsb_hits), {"units": "probes"})
        dv["tsb_misses"] = (("side", "page_size"), mp.fold(cnt.tsb_misses), {"units": "probes"})
    if m.walker.kind == "hashed":
        dv["hpt_secondary"] = (("page_size",), mp.fold(cnt.hpt_secondary), {"units": "walks", "long_name": "walks resolved in the secondary PTEG"})
        dv["hpt_evictions"] = ((), int(cnt.hpt_events[0]), {"units": "entries"})
        dv["hpt_refills"] = ((), int(cnt.hpt_events[1]), {"units": "faults", "long_name": "hash faults re-inserting an evicted entry"})
    dv["region_pages_touched"] = (("region",), touched_by_region, {"units": "pages"})
    coords["region"] = ("region", region_labels(layout))
    return dv, coords


def page_states(cfg, st):
    """Each page's state after a run: 0 unmapped, 1 touched, 2 prefaulted and not yet touched
    (uint8, one per page of the layout). Kernels with fault-around keep ``st.page_state``; without
    it a page is touched exactly when it is mapped, so the kernel only sets the page's bit in
    ``st.mapped`` (the second store cost 0.3 ns of a random access's 8) and the states are read
    from those bits here."""
    if cfg.any_fa[0]:
        return st.page_state
    bits = np.unpackbits(st.mapped.astype("<u8", copy=False).view(np.uint8), bitorder="little")
    return bits[: st.page_state.shape[0]]


def page_counts(page_state, reg_base, prefaulted: bool):
    """Pages touched (state 1) and prefaulted but never touched (state 2) in each region
    (``reg_base``: each region's first page), as int64 arrays. The states are 0 (unmapped), 1
    and 2; with ``prefaulted`` False no page was ever mapped by fault-around, so none is in state
    2 and one count of nonzero bytes per region (no temporary array) gives the touched pages."""
    bounds = reg_base.tolist() + [page_state.shape[0]]
    nz = [np.count_nonzero(page_state[a:b]) for a, b in zip(bounds, bounds[1:])]
    if prefaulted:
        untouched = [np.count_nonzero(page_state[a:b] == 2) for a, b in zip(bounds, bounds[1:])]
    else:
        untouched = [0] * len(nz)
    return np.array(nz, dtype=np.int64) - untouched, np.array(untouched, dtype=np.int64)


def region_labels(layout) -> list[str]:
    """One label per region, unique: a region the OS split (a THP region's huge part and its base-page
    head or tail) keeps its name with the page size added, then a number if that still repeats."""
    names = [r.name or f"region {i}" for i, r in enumerate(layout.regions)]
    count = Counter(names)
    out = [n if count[n] == 1 else f"{n} ({format_size(r.page_size)})" for n, r in zip(names, layout.regions)]
    count = Counter(out)  # the labels in ``out`` as it is renamed below
    seen: dict[str, int] = {}
    for i, n in enumerate(out):
        if count[n] > 1:
            seen[n] = seen.get(n, 0) + 1
            out[i] = f"{n} #{seen[n]}"
            count[n] -= 1
            count[out[i]] += 1
    return out


_PRESET_SHAPES: set = set()
_PRESET_LOCK = threading.Lock()


def preset_shapes() -> set:
    """The chain shapes of every preset at each of its page sizes, without fault-around and without
    the walk log (``pagesim warm`` compiles them; ``specialize='auto'`` uses them at any run length)."""
    if not _PRESET_SHAPES:
        with _PRESET_LOCK:
            if not _PRESET_SHAPES:
                shapes = set()
                for name in machines():
                    m = machine(name)
                    for p in m.page_sizes:
                        layout = Layout.single(1 << 30, p, start=1 << 40)
                        cfg = kernel_inputs(resolve_programmable(m, layout)[0], layout, 0)[0]
                        shape = S.chain_shape(cfg, int(cfg.reg_size[0]))
                        if shape is not None:
                            shapes.add(shape)
                _PRESET_SHAPES.update(shapes)
    return _PRESET_SHAPES
