"""Several processes on one core: context switches (flush or tagged), shared page tables, and the
data-cache model of walk references, against the plain reference models."""

import numpy as np
import pytest
from helpers import dataset_counters
from hypothesis import given, settings
from hypothesis import strategies as st
from twins.reference import reference_simulate
from twins.strategies import cases

import pagesim
from pagesim import Layout, Region
from pagesim.engine.processes import DataCache, simulate_processes
from pagesim.engine.stages import resolve_programmable


def interleave(traces, quantum, stride, flushed_names):
    """The driver's schedule written out: round robin, ``quantum`` accesses a turn; a switch to
    another process flushes ``flushed_names`` before its first access."""
    pos = [0] * len(traces)
    live = list(range(len(traces)))
    out, flush_at, current, switches = [], {}, None, 0
    while live:
        for i in list(live):
            if pos[i] >= len(traces[i]):
                live.remove(i)
                continue
            if current is not None and current != i:
                switches += 1
                if flushed_names:
                    flush_at[len(out)] = flushed_names
            current = i
            out += [int(a) + i * stride for a in traces[i][pos[i] : pos[i] + quantum]]
            pos[i] += quantum
    return out, flush_at, switches


def flushed(m, switch):
    names = [s.name for s in m.structures]
    pwcs = [p.name for p in m.walker.pwc] if m.walker.kind == "radix" else []
    slb = ["SLB"] if m.slb is not None else []
    if switch == "flush":
        return names + slb + pwcs
    if switch == "flush-erat":
        last = max((s.level for s in m.structures), default=0)
        return [s.name for s in m.structures if s.level < last] + slb
    return []


class PlainCache:
    def __init__(self, caches):
        self.levels = [(c.sets, c.ways, [[] for _ in range(c.sets)]) for c in caches]
        self.hits = [0] * len(caches)
        self.misses = [0] * len(caches)

    def access(self, line):
        for j, (sets, ways, s) in enumerate(self.levels):
            lst = s[line % sets]
            if line in lst:
                lst.remove(line)
                lst.insert(0, line)
                self.hits[j] += 1
                return
            self.misses[j] += 1
            lst.insert(0, line)
            del lst[ways:]


def plain_lines(m, layout, log, stride, shared, nproc, line=64):
    """Table pages numbered in sorted (owner, level, table index) order, as the module states."""
    bits = list(m.walker.level_bits)
    refs_out = []
    for a, refs, z in log:
        i, local = divmod(a, stride)
        r = next(r for r in layout.regions if r.start <= local < r.end)
        leaf = m.walker.leaf_refs(m.page_sizes[z]) - 1
        for lvl in range(leaf - refs + 1, leaf + 1):
            shift = m.walker.base_shift + sum(bits[lvl + 1 :])
            owner = nproc if (r.name in shared and lvl == leaf) else i
            refs_out.append(((owner, lvl, local >> (shift + bits[lvl])), (local >> shift) & ((1 << bits[lvl]) - 1)))
    tables = sorted({t for t, _ in refs_out})
    num = {t: k for k, t in enumerate(tables)}
    tb = 8 << max(bits)
    return [(num[t] * tb + e * 8) // line for t, e in refs_out], len(tables)


@given(cases(), st.integers(1, 3), st.sampled_from([1, 5, 50]), st.sampled_from(["flush", "flush-erat", "tagged"]), st.booleans())
def test_processes_match_reference(case, n, quantum, switch, share):
    m, layout, addrs, kinds, seed = case
    m, _ = resolve_programmable(m, layout)
    if any(r.fault_around != 1 for r in layout.regions):
        layout = Layout(tuple(Region(r.start, r.length, r.page_size, r.name) for r in layout.regions))
    rng = np.random.default_rng(seed)
    traces = [addrs if i == 0 else rng.permutation(addrs) for i in range(n)]
    ks = None if kinds is None else [kinds] * n
    radix = m.walker.kind == "radix"
    caches = (DataCache("a", 512, 2), DataCache("b", 2048, 4)) if radix else ()
    shared = (layout.regions[0].name,) if share else ()
    ds = simulate_processes(
        m, addresses=traces, kinds=ks, layout=layout, processes=n, quantum=quantum, switch=switch, seed=seed, caches=caches, shared=shared, shared_tables=share
    )
    stride = int(ds.attrs["asid_stride"])
    trace, flush_at, switches = interleave(traces, quantum, stride, flushed(m, switch))
    combined = Layout(tuple(Region(r.start + i * stride, r.length, r.page_size, f"p{i}:{r.name}") for i in range(n) for r in layout.regions))
    log = []
    want, touched = reference_simulate(m, combined, trace, None if kinds is None else _kinds(traces, ks, quantum), seed, flush_at, log)
    got, got_touched = dataset_counters(ds)
    if share:  # shared tables: a shared page faults once, not once per process
        saved = int(ds["faults_saved_by_sharing"])
        z = list(m.page_sizes).index(layout.regions[0].page_size)
        got[("faults", z)] = got.get(("faults", z), 0) + saved
        got = {k: v for k, v in got.items() if v}
    assert got == want
    assert int(ds["context_switches"]) == switches
    if radix:
        lines, tables = plain_lines(m, layout, log, stride, shared, n)
        pc = PlainCache(caches)
        for ln in lines:
            pc.access(ln)
        assert ds["walk_cache_hits"].values.tolist() == pc.hits
        assert ds["walk_cache_misses"].values.tolist() == pc.misses
        assert int(ds["pt_lines"]) == len(set(lines)) and int(ds["pt_tables"]) == tables


@settings(max_examples=min(settings().max_examples, 40))  # long traces: each example costs ~10x a plain one
@given(cases(wide=True), st.integers(2, 3), st.sampled_from([5, 50, 400]), st.sampled_from(["flush", "flush-erat"]))
def test_processes_flush_wide_structures(case, n, quantum, switch):
    """Flushing structures of more than 16 ways empties their hash tables and resets their recency
    lists (an entry left behind would hit, a list left as it was would pick another victim)."""
    test_processes_match_reference.hypothesis.inner_test(case, n, quantum, switch, False)


def _kinds(traces, ks, quantum):
    """Kinds in the interleaved order."""
    pos = [0] * len(traces)
    live = list(range(len(traces)))
    out = []
    while live:
        for i in list(live):
            if pos[i] >= len(traces[i]):
                live.remove(i)
                continue
            out += [int(k) for k in ks[i][pos[i] : pos[i] + quantum]]
            pos[i] += quantum
    return out


def test_tagged_tlb_keeps_entries_across_switches():
    # two processes, 2 MiB each: together 1024 pages, inside Skylake's 1536-entry STLB
    kw = dict(working_set="2M", accesses=100_000, processes=2, quantum=1000, caches=())
    tagged = simulate_processes("skylake", "random", switch="tagged", **kw)
    flush = simulate_processes("skylake", "random", switch="flush", **kw)
    assert int(tagged["context_switches"]) == int(flush["context_switches"]) == 199
    assert int(tagged["walks"].sum()) == 1024  # only the first touch of each page walks
    assert int(flush["walks"].sum()) > 50 * int(tagged["walks"].sum())


def test_shared_tables_touch_fewer_lines_and_miss_less():
    kw = dict(working_set="64M", accesses=30_000, processes=8, quantum=2000, shared=("table",))
    priv = simulate_processes("skylake", "random", **kw)
    shr = simulate_processes("skylake", "random", shared_tables=True, **kw)
    assert int(priv["walks"].sum()) == int(shr["walks"].sum())  # TLB entries stay per process
    assert int(shr["pt_lines"]) < int(priv["pt_lines"]) / 4
    assert int(shr["walk_cache_misses"].sel(cache="L2")) < int(priv["walk_cache_misses"].sel(cache="L2"))
    assert int(shr["faults"].sum()) < int(priv["faults"].sum())
    assert int(priv["faults_per_process"].sum()) == int(priv["faults"].sum())


def test_machine_says_what_a_switch_does():
    assert pagesim.machine("opteron-k8").context_switch == "flush"
    assert pagesim.machine("power6").context_switch == "flush-erat"
    assert pagesim.machine("skylake").context_switch == "tagged"
    assert "context_switch" in pagesim.machine("skylake").assumptions
    assert "context_switch" not in pagesim.machine("power6").assumptions


def test_power8_flushes_both_its_data_erats():
    # POWER8's secondary D-ERAT is EA-tagged like the primary: a switch empties it, the TLB survives
    kw = dict(processes=2, quantum=5000, working_set="8M", accesses=50_000, caches=(), seed=1)
    runs = {sw: simulate_processes("power8", "random", switch=sw, **kw) for sw in ("flush", "flush-erat", "tagged")}
    default = simulate_processes("power8", "random", **kw)
    miss = {k: int(v["misses"].sel(structure="secondary D-ERAT").sum()) for k, v in runs.items()}
    assert int(default["misses"].sel(structure="secondary D-ERAT").sum()) == miss["flush-erat"] == miss["flush"]
    assert miss["tagged"] < miss["flush-erat"] / 5
    tlb = {k: int(v["misses"].sel(structure="TLB").sum()) for k, v in runs.items()}
    assert tlb["flush-erat"] == tlb["tagged"] < tlb["flush"]


def test_bad_process_input():
    with pytest.raises(ValueError, match=r"processes=0 is out of range: allowed 1\.\.1024"):
        simulate_processes("skylake", "random", processes=0)
    with pytest.raises(ValueError, match="switch='never' is not allowed"):
        simulate_processes("skylake", "random", switch="never")
    with pytest.raises(ValueError, match="shared='heap' names no region"):
        simulate_processes("skylake", "random", shared="heap")
    with pytest.raises(ValueError, match="quantum=0"):
        simulate_processes("skylake", "random", quantum=0)
    with pytest.raises(ValueError, match="hashed walker: pass caches=()"):
        simulate_processes("power6", "random")
    with pytest.raises(ValueError, match="context_switch='sometimes' is not allowed"):
        pagesim.machine("skylake").derive(context_switch="sometimes")
    with pytest.raises(ValueError, match="cache 'x' ways=0 is out of range: allowed 1..64"):
        DataCache("x", "32K", 0)
    with pytest.raises(ValueError, match="cache 'x' line=48 is not allowed: use one of 16, 32, 64, 128, 256"):
        DataCache("x", "32K", 4, 48)
    with pytest.raises(TypeError, match="quantum must be an int, got str '9'"):
        simulate_processes("skylake", "random", quantum="9")


@given(rows=st.lists(st.tuples(st.integers(0, 9), st.integers(0, 4), st.integers(0, 40)), min_size=1, max_size=300), wide=st.sampled_from([0, 20, 40, 56]))
def test_table_ids_number_rows_as_np_unique_over_rows(rows, wide):
    """_walk_lines numbers page-table pages as np.unique(rows, axis=0) did (the row sort it replaced),
    on the packed-key path and, with table numbers too wide to pack, on the lexsort path."""
    from pagesim.engine.processes import _table_ids

    a = np.array(rows, dtype=np.int64)
    a[:, 2] <<= wide
    uniq, inv = np.unique(a, axis=0, return_inverse=True)
    got, count = _table_ids(a[:, 0], a[:, 1], a[:, 2])
    assert count == uniq.shape[0]
    assert np.array_equal(got, inv.reshape(-1))


@given(cases(), st.integers(1, 3), st.sampled_from([1, 5, 50]), st.booleans())
def test_data_lines_match_reference(case, n, quantum, share):
    """data_lines=True: each access's walk references, then its own line, through the same caches,
    against PlainCache fed the reference's walks and accesses in program order."""
    m, layout, addrs, kinds, seed = case
    if m.walker.kind != "radix":
        return
    m, _ = resolve_programmable(m, layout)
    if any(r.fault_around != 1 for r in layout.regions):
        layout = Layout(tuple(Region(r.start, r.length, r.page_size, r.name) for r in layout.regions))
    rng = np.random.default_rng(seed)
    traces = [addrs if i == 0 else rng.permutation(addrs) for i in range(n)]
    ks = None if kinds is None else [kinds] * n
    caches = (DataCache("a", 512, 2), DataCache("b", 2048, 4))
    shared = (layout.regions[0].name,) if share else ()
    ds = simulate_processes(
        m,
        addresses=traces,
        kinds=ks,
        layout=layout,
        processes=n,
        quantum=quantum,
        switch="flush",
        seed=seed,
        caches=caches,
        shared=shared,
        shared_tables=share,
        data_lines=True,
    )
    stride = int(ds.attrs["asid_stride"])
    trace, flush_at, _ = interleave(traces, quantum, stride, flushed(m, "flush"))
    kk = None if kinds is None else _kinds(traces, ks, quantum)
    combined = Layout(tuple(Region(r.start + i * stride, r.length, r.page_size, f"p{i}:{r.name}") for i in range(n) for r in layout.regions))
    log, at = [], []
    reference_simulate(m, combined, trace, kk, seed, flush_at, log, at)
    lines, _ = plain_lines(m, layout, log, stride, shared, n)
    per_walk = [refs for _, refs, _ in log]
    walk_lines, k = {}, 0
    for t, r in zip(at, per_walk):
        walk_lines.setdefault(t, []).extend(lines[k : k + r])
        k += r
    pc_walk, pc_data = PlainCache(caches), PlainCache(caches)
    state = PlainCache(caches)  # one cache; hits and misses counted apart by what was looked up
    for t, a in enumerate(trace):
        for ln in walk_lines.get(t, []):
            before = (state.hits[:], state.misses[:])
            state.access(ln)
            pc_walk.hits = [h + s - b for h, s, b in zip(pc_walk.hits, state.hits, before[0])]
            pc_walk.misses = [h + s - b for h, s, b in zip(pc_walk.misses, state.misses, before[1])]
        if kk is not None and kk[t] != 0:
            continue
        i, local = divmod(a, stride)
        r = next(r for r in layout.regions if r.start <= local < r.end)
        phys = local if r.name in shared else a
        before = (state.hits[:], state.misses[:])
        state.access((1 << 40) + phys // 64)
        pc_data.hits = [h + s - b for h, s, b in zip(pc_data.hits, state.hits, before[0])]
        pc_data.misses = [h + s - b for h, s, b in zip(pc_data.misses, state.misses, before[1])]
    assert ds["walk_cache_hits"].values.tolist() == pc_walk.hits
    assert ds["walk_cache_misses"].values.tolist() == pc_walk.misses
    assert ds["data_cache_hits"].values.tolist() == pc_data.hits
    assert ds["data_cache_misses"].values.tolist() == pc_data.misses


def test_data_lines_needs_caches():
    with pytest.raises(ValueError, match="data_lines=True needs caches"):
        simulate_processes("opteron-k8", "random", working_set="1M", accesses=100, processes=2, caches=(), data_lines=True)
    with pytest.raises(TypeError, match="data_lines must be True or False"):
        simulate_processes("opteron-k8", "random", working_set="1M", accesses=100, processes=2, data_lines=1)


def test_faults_per_process_count_faults_with_fault_around_and_shared_tables():
    """faults_per_process counts each process's fault events, not the pages it mapped: with
    fault-around a fault maps several pages (1 fault, 3 prefaulted,
    was counted as 4). Each equals the faults of that process run alone; with shared tables the
    sum exceeds faults by faults_saved_by_sharing."""
    lay = Layout((Region(1 << 36, 64 * 4096, 4096, "a", fault_around=4),))
    rng = np.random.default_rng(5)
    addrs = [(1 << 36) + rng.integers(0, 64 * 4096, 300).astype(np.uint64) for _ in range(3)]
    ds = simulate_processes("skylake", addresses=addrs, layout=lay, processes=3, quantum=7, caches=())
    alone = [int(pagesim.simulate("skylake", addresses=a, layout=lay)["faults"].sum()) for a in addrs]
    assert ds["faults_per_process"].values.tolist() == alone
    assert int(ds["faults_per_process"].sum()) == int(ds["faults"].sum()) and int(ds["prefaulted"].sum()) > 0
    one = np.array([1 << 36], dtype=np.uint64)
    assert simulate_processes("skylake", addresses=[one, one], layout=lay, processes=2, quantum=1, caches=())["faults_per_process"].values.tolist() == [1, 1]
    kw = dict(working_set="8M", accesses=5_000, processes=3, quantum=500, shared=("table",), caches=())
    shr = simulate_processes("skylake", "random", shared_tables=True, **kw)
    assert int(shr["faults_per_process"].sum()) - int(shr["faults_saved_by_sharing"]) == int(shr["faults"].sum())


@pytest.mark.parametrize("name", ["specialize", "progress", "chunk_size"])
def test_simulate_options_it_does_not_take_are_named(name):
    """simulate()'s own options given to simulate_processes: a TypeError that says why, not the
    workload's "has no parameter" (with specialize=True)."""
    with pytest.raises(TypeError, match=rf"simulate_processes\(\) has no {name}= option: it always runs the generic kernel"):
        simulate_processes("skylake", "random", working_set="8M", accesses=1000, caches=(), **{name: True})
