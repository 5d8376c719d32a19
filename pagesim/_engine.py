"""The engine ``simulate`` and ``simulate_processes`` share: kernel inputs from a machine and a
layout, the kernel choice, the chunk loop (progress bar, addresses outside every region), the
Dataset of counters and costs built once, and the provenance attributes. The public functions
resolve their inputs and call these stages."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import numpy as np

from . import __version__
from ._kernels import translate as K
from .costs import cost_inputs, cost_variables
from .layout import Layout
from .machines import Machine
from .units import format_size, is_power_of_two, log2
from .workloads import Addresses

if TYPE_CHECKING:
    import xarray as xr

KINDS = ("data", "instr")


def replacement_mode(policy: str, ways: int) -> int:
    if policy == "random":
        return K.RANDOM_FILL
    if ways <= 16:
        return K.ORDER_LRU if policy == "lru" else K.ORDER_FIFO
    return K.LIST_LRU if policy == "lru" else K.LIST_FIFO


LIST_MODES = (K.LIST_LRU, K.LIST_FIFO)


def initial_order(ways: int, mode: int) -> int:
    """A set's order word with way 0 at the least-recent end, so empty ways fill in order 0, 1, 2...:
    packed nibbles (ORDER_*) or the recency list's head (way 0) and tail (the last way) (LIST_*)."""
    if mode in LIST_MODES:
        return (ways - 1) << 32
    if mode not in (K.ORDER_LRU, K.ORDER_FIFO):
        return 0
    return sum((ways - 1 - r) << (4 * r) for r in range(ways))


def initial_links(sets: int, ways: int, pways: int) -> np.ndarray:
    """A LIST_* structure's recency lists as the kernel keeps them, (previous way, next way) per
    slot, each set's list running 0, 1, ..., ways - 1 (padding slots -1)."""
    w = np.arange(pways, dtype=np.int64)
    one = np.full((pways, 2), -1, dtype=np.int64)
    one[:ways, 0] = w[:ways] - 1
    one[: ways - 1, 1] = w[1:ways]
    return np.tile(one.reshape(-1), sets)


WALK = {"radix": K.RADIX, "hashed": K.HASHED, "tsb": K.TSB, "vhpt": K.VHPT}


def kernel_inputs(m: Machine, layout: Layout, seed: int, log_walks: int = 0):
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
    mode = np.array([replacement_mode(s.replacement, s.ways) for s in structs] + [replacement_mode(p.replacement, p.ways) for p in pwcs], dtype=np.int64)
    mask = np.array([x - 1 if is_power_of_two(int(x)) else -1 for x in sets], dtype=np.int64)
    pways = (ways + 3) // 4 * 4
    base = np.zeros(ns, dtype=np.int64)
    base[1:] = np.cumsum(sets * pways)[:-1]
    obase = np.zeros(ns, dtype=np.int64)
    obase[1:] = np.cumsum(sets)[:-1]
    order = np.concatenate(
        [np.zeros(1, dtype=np.uint64)] + [np.full(int(n), initial_order(int(w), int(md)), dtype=np.uint64) for n, w, md in zip(sets, ways, mode)]
    )[1:].copy()
    if order.size == 0:
        order = np.zeros(1, dtype=np.uint64)
    # LIST_* structures (more than 16 ways): recency lists 0, 1, 2, ... and an empty hash table each
    nslots = int((sets * pways).sum())
    listed = np.isin(mode, LIST_MODES)
    links = np.full(2 * nslots if listed.any() else 1, -1, dtype=np.int64)
    set_hash = np.zeros(max(1, int(sets.sum())), dtype=np.int64)
    hsize = 0
    for s in np.flatnonzero(listed):
        links[2 * base[s] : 2 * (base[s] + sets[s] * pways[s])] = initial_links(int(sets[s]), int(ways[s]), int(pways[s]))
        set_hash[obase[s] : obase[s] + sets[s]] = hsize
        hsize += 2 * K.HASH_FACTOR * int(sets[s] * ways[s])
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
    regs = layout.regions
    reg_pages = np.array([r.pages for r in regs], dtype=np.int64)
    reg_base = np.zeros(len(regs), dtype=np.int64)
    reg_base[1:] = np.cumsum(reg_pages)[:-1]
    w = m.walker
    radix_refs = np.array([w.leaf_refs(p) if w.kind == "radix" else 1 for p in sizes], dtype=np.int64)
    one = lambda v: np.array([v], dtype=np.int64)  # noqa: E731
    cfg = K.Config(
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
        reg_start=np.array([r.start for r in regs], dtype=np.int64),
        reg_end=np.array([r.end for r in regs], dtype=np.int64),
        reg_size=np.array([zidx[r.page_size] for r in regs], dtype=np.int64),
        reg_base=reg_base,
        reg_fa=np.array([r.fault_around for r in regs], dtype=np.int64),
        page_shift=np.array([log2(p) for p in sizes], dtype=np.int64),
        walk_kind=one(WALK[w.kind]),
        radix_refs=radix_refs,
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
        tags=np.full(max(1, nslots), -1, dtype=np.int64),
        links=links,
        order=order,
        htab=np.full(max(1, hsize), -1, dtype=np.int64),
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


def choose_kernel(specialize, cfg, w):
    """The ``run_chunk`` for this run, chosen from the call's inputs alone (never from what the
    process ran before). Every kernel is generated from ``translate.py`` with only the paths the
    run can take (its walker, fault-around or not, the walk log or not):

    - ``'auto'`` and ``True``: data accesses and one page size in the layout (every generated
      workload, most traces) get the copy with the chain's geometry as constants; anything else
      (``'auto'`` only) gets the generic kernel for its features;
    - ``False``: the generic kernel for its features (geometry read at run time).
    """
    from ._kernels import specialize as S

    log = bool(cfg.log_walks[0])
    zs = set(cfg.reg_size.tolist())
    data_only = not ((isinstance(w, Addresses) and w.kinds is not None) or getattr(w, "has_kinds", False))
    if specialize is False or len(zs) != 1 or not data_only:
        if specialize is True:
            raise ValueError("specialize=True needs data accesses only and one page size in the layout")
        return S.generic(cfg, log)
    shape = S.chain_shape(cfg, zs.pop(), log)
    if shape is None:
        return S.generic(cfg, log)
    return S.kernel(shape)


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
    chunks, run_chunk, cfg, st, cnt, layout: Layout, total: int | None = None, desc: str = "", progress: bool = False, chunk_hook=None, chunk_size: int = 0
) -> int:
    """Every (addresses, kinds) chunk through ``run_chunk``, then the pending fast-path hits
    attributed. ``chunk_hook`` (pagesim.timing) is called after each chunk with (addresses, kinds,
    cfg, st); the kernel then logs every walk with its access index and the hook empties the log.
    A ValueError names the first address outside every region and its index. Returns
    the number of accesses run."""
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=total, desc=desc, unit="acc", unit_scale=True, leave=False)
    done = 0
    for addrs, kk in chunks:
        a, ka = kernel_arrays(addrs, kk)
        if chunk_hook is not None and a.shape[0] > chunk_size:  # the walk log holds chunk_size walks
            raise RuntimeError(f"internal error: a chunk of {a.shape[0]} accesses exceeds chunk_size={chunk_size}")
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
        if chunk_hook is not None:
            chunk_hook(a, ka, cfg, st)
        done += a.shape[0]
        if bar is not None:
            bar.update(a.shape[0])
    K.finish(st, cnt)
    if bar is not None:
        bar.close()
    return done


def provenance(m: Machine, programmed: dict, w, layout: Layout, seed: int, **extra) -> dict:
    """The attributes every Dataset carries: the machine (with its changes and modelling
    assumptions), what was programmed, the workload, the layout, the seed and pagesim's version;
    ``extra`` adds the caller's own."""
    return {
        "machine": m.name,
        "machine_title": m.title,
        "machine_changes": json.dumps(list(m.changes)),
        "programmed": json.dumps({k: format_size(v) for k, v in programmed.items()}),
        "workload": w.name,
        "workload_label": w.label,
        "layout": json.dumps(layout.to_records()),
        "seed": seed,
        "pagesim_version": __version__,
        "assumptions": json.dumps(m.assumptions),
        **extra,
    }


def finish_dataset(dv: dict, coords: dict, attrs: dict, m, work_cycles: float, ram=None) -> xr.Dataset:
    """The Dataset of ``dv``, ``coords`` and ``attrs`` (tuples and values as xarray.Dataset takes
    them) with the cost model's variables, built once."""
    cdv, ccoords, cattrs = cost_variables(cost_inputs(dv, coords), m, work_cycles, ram)
    return build_dataset({**dv, **cdv}, {**coords, **ccoords}, {**attrs, **cattrs})


def dataset_parts(m, layout, cfg, cnt, st, structs, pwcs) -> tuple[dict, dict]:
    """The counters' data variables and coordinates, as (dims, values, attrs) tuples."""
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
    dv["prefault_waste"] = (
        ("page_size",),
        untouched_by_size * np.array(sizes, dtype=np.int64),
        {"units": "bytes", "long_name": "memory held by prefaulted pages never touched"},
    )
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
    dv["region_pages_touched"] = (("region",), np.array(touched_by_region, dtype=np.int64), {"units": "pages"})
    coords["region"] = ("region", region_labels(layout))
    return dv, coords


def region_labels(layout) -> list[str]:
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


def build_dataset(dv: dict, coords: dict, attrs: dict):
    """``xarray.Dataset(dv, coords=coords, attrs=attrs)`` for variables given as (dims, values[,
    attrs]) tuples, built without xarray's merge and alignment (which cost ~2 ms a call, more than
    a small simulation): every variable is made once, dimension coordinates get their index
    directly. Same result as the constructor (tests/test_costs.py compares them); if this xarray
    does not offer the direct path, the constructor is used."""
    import xarray as xr

    try:
        return _direct(xr, dv, coords, attrs)
    except (AttributeError, TypeError, ImportError):  # an xarray without Dataset._construct_direct
        return xr.Dataset(dv, coords=coords, attrs=attrs)


def _direct(xr, dv, coords, attrs):
    import pandas as pd
    from xarray.core.indexes import PandasIndex

    variables, indexes, dims = {}, {}, {}
    for k, t in coords.items():
        d, vals = t[0], np.asarray(t[1])
        at = dict(t[2]) if len(t) > 2 else {}
        if k == d:  # a dimension coordinate: it gets a pandas index, as the constructor gives it
            idx = PandasIndex(pd.Index(vals), d, coord_dtype=vals.dtype)
            indexes[k] = idx
            v = idx.create_variables()[k]
            v.attrs.update(at)
        else:
            v = _variable(xr, d, vals, at)
        variables[k] = v
    for k, (d, vals, at) in dv.items():
        variables[k] = _variable(xr, d, vals, at)
    for k, v in variables.items():
        for name, size in zip(v.dims, v.shape):
            if dims.setdefault(name, size) != size:
                raise ValueError(f"internal error: variable {k!r} has {name}={size}, another has {dims[name]}")
    return xr.Dataset._construct_direct(variables, set(coords), dims, dict(attrs), indexes)


def _variable(xr, dims, vals, attrs):
    a = np.asarray(vals)
    if a.dtype.kind not in "biufU":  # anything else goes through xarray's own conversion
        return xr.Variable(dims, vals, dict(attrs))
    return xr.Variable((dims,) if isinstance(dims, str) else dims, a, dict(attrs), fastpath=True)
