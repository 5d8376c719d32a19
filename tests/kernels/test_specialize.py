"""Specialised kernels (geometry compiled in as constants) against the reference model.

Each case compiles one specialised copy (seconds, then cached on disk), so the cases are chosen to
cover every branch the constants remove: each replacement mode (order-word LRU and FIFO, hash table
and recency list LRU and FIFO above 16 ways, random), modulo set indexing, entries covering part of a page, chains of
1 to 4 structures, each walker kind, and regions with and without fault-around.
"""

import numpy as np
import pytest
from helpers import dataset_counters
from twins.reference import reference_simulate

import pagesim
from pagesim import Layout, Machine, PageWalkCache, Region, Structure, Walker
from pagesim._kernels import translate as K
from pagesim.engine import stages as E

K4, K64, M2 = 4096, 65536, 2 << 20

CASES = {
    "lru-2level-radix-pwc": (
        [Structure("L1", 1, "data", 16, 4, (K4,)), Structure("L2", 2, "unified", 96, 12, (K4,))],
        Walker("radix", level_bits=(9, 9, 9, 9), pwc=(PageWalkCache("pde", 3, 4, 2), PageWalkCache("pml4", 1, 2, 2))),
        K4,
    ),
    "fifo-random-wide-4level-vhpt": (
        [
            Structure("A", 1, "data", 6, 2, (K4,), "fifo"),
            Structure("B", 2, "data", 10, 5, (K4,), "random"),
            Structure("C", 3, "data", 20, 20, (K4,), "lru"),
            Structure("D", 4, "data", 24, 24, (K4,), "fifo"),
        ],
        Walker("vhpt"),
        K4,
    ),
    "max-entry-hashed-slb": (
        [Structure("ERAT", 1, "data", 8, 8, (K64,), max_entry=K4), Structure("TLB", 2, "unified", 12, 3, (K64,))],
        Walker("hashed", hpt_ptegs=2),
        K64,
    ),
    "tsb-16way": ([Structure("T", 1, "data", 32, 16, (K64,))], Walker("tsb", tsb_entries=8), K64),
    "no-structure": ([], Walker("radix", level_bits=(9, 9, 9, 9)), M2),
}


@pytest.mark.parametrize("name", list(CASES))
def test_specialised_matches_reference(name):
    structs, walker, page = CASES[name]
    sizes = tuple(sorted({K4, page} if walker.kind != "radix" else {K4, M2}))
    slb = Structure("SLB", 1, "unified", 2, 2, (sizes[0],)) if walker.kind == "hashed" else None
    m = Machine(name=name, title=name, page_sizes=sizes, base_page=sizes[0], structures=tuple(structs), walker=walker, slb=slb)
    fa = 4 if name in ("tsb-16way", "fifo-random-wide-4level-vhpt") else 1  # both settings of any_fa
    regions = (Region(1 << 34, 40 * page, page, "a"), Region((1 << 34) + (1 << 30), 24 * page, page, "b", fault_around=fa))
    layout = Layout(regions)
    rng = np.random.default_rng(11)
    addrs, prev = [], regions[0].start
    for _ in range(6000):
        u = rng.random()
        if u < 0.3:
            a = prev
        else:
            r = regions[int(rng.integers(2))]
            a = r.start + int(rng.integers(r.length))
        addrs.append(a)
        prev = a
    addrs = np.array(addrs, dtype=np.uint64)
    got, touched = dataset_counters(pagesim.simulate(m, addresses=addrs, layout=layout, seed=9, specialize=True, chunk_size=1000))
    generic, _ = dataset_counters(pagesim.simulate(m, addresses=addrs, layout=layout, seed=9, specialize=False))
    want, ref_touched = reference_simulate(m, layout, [int(a) for a in addrs], None, 9)
    assert got == want
    assert generic == want
    assert touched == ref_touched


def test_auto_choice_does_not_depend_on_what_ran_before():
    """specialize='auto' picks the kernel from the call's inputs alone, the same before and after
    other kernels were loaded: a preset's chain shape gets its specialised copy at any length; any
    other shape the generic kernel below SPECIALIZE_MIN_ACCESSES and the specialised copy from
    there; instruction accesses and specialize=False the generic kernel."""
    from pagesim._kernels import specialize as S
    from pagesim.engine import stages as E
    from pagesim.sources.workloads import Addresses

    a = (np.arange(2000, dtype=np.uint64) * np.uint64(4096)) + np.uint64(1 << 40)
    layout = Layout.covering_addresses(a, 4096)
    small, large = Addresses(addresses=a[:10]), Addresses(addresses=a)
    big = type("Big", (), {"n_accesses": E.SPECIALIZE_MIN_ACCESSES})()

    m = pagesim.machine("skylake")
    cfg = E.kernel_inputs(m, layout, 0)[0]
    first = E.choose_kernel("auto", cfg, small)
    pagesim.simulate(m, addresses=a, layout=layout, specialize=False)  # loads the generic kernel
    assert E.choose_kernel("auto", cfg, large) is first
    assert E.choose_kernel("auto", cfg, small) is first
    assert first is S.kernel(S.chain_shape(cfg, int(cfg.reg_size[0])))
    generic = E.choose_kernel(False, cfg, small)
    assert generic is not first and generic is S.generic(cfg)
    assert E.choose_kernel("auto", cfg, Addresses(addresses=a, kinds=(np.arange(2000) % 2).astype(np.uint8))) is generic
    assert E.choose_kernel("auto", cfg, Addresses(addresses=a, kinds=np.zeros(2000, dtype=np.uint8))) is first  # all data

    odd = Machine(  # a 3-way L1 and a 7-way L2: no preset has this shape
        name="odd", title="odd", page_sizes=(K4,), base_page=K4,
        structures=(Structure("L1", 1, "data", 12, 3, (K4,)), Structure("L2", 2, "data", 70, 7, (K4,))),
        walker=Walker("radix", level_bits=(9, 9, 9, 9)),
    )  # fmt: skip
    cfg = E.kernel_inputs(odd, layout, 0)[0]
    shape = S.chain_shape(cfg, int(cfg.reg_size[0]))
    assert shape not in E.preset_shapes()
    assert E.choose_kernel("auto", cfg, small) is S.generic(cfg)
    pagesim.simulate(odd, addresses=a, layout=layout, specialize=True)  # loads the specialised copy
    assert E.choose_kernel("auto", cfg, small) is S.generic(cfg)
    assert E.choose_kernel("auto", cfg, big) is S.kernel(shape)


def test_generated_sources_hold_only_the_paths_used():
    """Each generated kernel keeps its own walker and drops the others, fault-around and the walk
    log unless asked for (the generic kernel with every path took 11-16 s to compile)."""
    from pagesim._kernels import rules as K
    from pagesim._kernels import writer

    radix = writer.generic(K.RADIX, False, False)
    assert "hpt_insert(" not in radix and "tsb_hits[k, z]" not in radix and "reg_fa[lo]" not in radix and "wlog[q]" not in radix
    assert "radix_refs[z]" in radix and "mapped[np.uint64(gid >> 6)] = word | bit" in radix
    hashed = writer.generic(K.HASHED, True, True)
    assert "hpt_insert(gid, " in hashed and "radix_refs[z]" not in hashed and "reg_fa[lo]" in hashed and "wlog[q]" in hashed
    tsb = writer.generic(K.TSB, False, False)
    assert "tsb_hits[k, z]" in tsb and "hpt_insert(" not in tsb
    vhpt = writer.generic(K.VHPT, False, False)
    assert "radix_refs[z]" not in vhpt and "hpt_insert(" not in vhpt and "tsb_hits[k, z]" not in vhpt
    for src in (radix, hashed, tsb, vhpt):
        compile(src, "<generated>", "exec")  # every variant is valid Python


def test_machines_differing_in_entries_share_one_specialised_copy():
    """A specialised copy is compiled for a chain's shape (ways, replacement, power-of-two sets,
    slot starts), not its set counts: a machine with another page size or other entries in the
    chain's last structure reuses it, with its own counts."""
    from pagesim._kernels import specialize as S
    from pagesim.engine import stages as E

    def mach(l1, l2):
        return Machine(
            name=f"m{l1}-{l2}",
            title="t",
            page_sizes=(K4, M2),
            base_page=K4,
            structures=(Structure("L1", 1, "data", l1, 4, (K4, M2)), Structure("L2", 2, "unified", l2, 8, (K4, M2))),
            walker=Walker("radix", level_bits=(9, 9, 9, 9)),
        )

    shapes = set()
    for l1, l2, page in ((16, 64, K4), (16, 512, K4), (16, 1024, M2)):  # the L2 is last: its entries are read at run time
        m = mach(l1, l2)
        layout = Layout.single(1 << 24, page, start=1 << 36)
        cfg = E.kernel_inputs(m, layout, 0)[0]
        shapes.add(S.chain_shape(cfg, int(cfg.reg_size[0])))
        a = (np.random.default_rng(l1).integers(0, 1 << 24, 3000, dtype=np.uint64) + np.uint64(1 << 36)) & ~np.uint64(7)
        got, _ = dataset_counters(pagesim.simulate(m, addresses=a, layout=layout, seed=1, specialize=True))
        want, _ = reference_simulate(m, layout, [int(x) for x in a], None, 1)
        assert got == want
    assert len(shapes) == 1


def test_page_sizes_differing_in_sets_share_one_specialised_copy():
    """A one-page-size run places each chain position where the largest structure at that position
    starts (MachineParts.placed): an L1 of 4K pages and a smaller L1 of 2M pages in front of one
    shared L2 give one shape, and each page size keeps its own counts. Skylake's and Zen 4's 4K
    and 2M chains share so."""
    from pagesim._kernels import specialize as S
    from pagesim.engine import stages as E

    m = Machine(
        name="split-l1",
        title="t",
        page_sizes=(K4, M2),
        base_page=K4,
        structures=(
            Structure("L1 4K", 1, "data", 64, 4, (K4,)),
            Structure("L1 2M", 1, "data", 32, 4, (M2,)),
            Structure("L2", 2, "unified", 96, 6, (K4, M2)),
        ),
        walker=Walker("radix", level_bits=(9, 9, 9, 9), pwc=(PageWalkCache("pde", 3, 4, 2),)),
    )
    shapes = set()
    for page, span in ((K4, 1 << 22), (M2, 1 << 30)):
        layout = Layout.single(span, page, start=1 << 36)
        cfg = E.kernel_inputs(m, layout, 0)[0]
        shapes.add(S.chain_shape(cfg, int(cfg.reg_size[0])))
        a = (np.random.default_rng(page).integers(0, span, 4000, dtype=np.uint64) + np.uint64(1 << 36)) & ~np.uint64(7)
        for chunk in (777, 1 << 20):
            got, _ = dataset_counters(pagesim.simulate(m, addresses=a, layout=layout, seed=1, specialize=True, chunk_size=chunk))
            want, _ = reference_simulate(m, layout, [int(x) for x in a], None, 1)
            assert got == want
    assert len(shapes) == 1
    for name in ("skylake", "zen4"):
        p = pagesim.machine(name)
        one = set()
        for page in (K4, M2):
            layout = Layout.single(1 << 30, page, start=1 << 40)
            cfg = E.kernel_inputs(p, layout, 0)[0]
            one.add(S.chain_shape(cfg, int(cfg.reg_size[0])))
        assert len(one) == 1, name


def test_specialised_wide_structures_match_reference():
    """Structures of more than 16 ways in every place a specialised copy calls a lookup: a chain of
    a 3-set 20-way LRU (modulo set index), a 72-way FIFO and a 2-set 64-way LRU, over more pages than
    any holds (so each evicts), and a 32-way page-walk cache."""
    m = Machine(
        name="wide",
        title="wide",
        page_sizes=(K4, M2),
        base_page=K4,
        structures=(
            Structure("W1", 1, "data", 60, 20, (K4,)),
            Structure("W2", 2, "data", 72, 72, (K4,), "fifo"),
            Structure("W3", 3, "data", 128, 64, (K4,)),
        ),
        walker=Walker("radix", level_bits=(9, 9, 9, 9), pwc=(PageWalkCache("pde", 3, 32, 32),)),
    )
    layout = Layout((Region(1 << 34, 700 * K4, K4, "a"), Region((1 << 34) + (1 << 31), 300 * K4, K4, "b")))
    rng = np.random.default_rng(3)
    hot = rng.integers(0, 1000, 90)  # a working set near the structures' sizes: hits and evictions
    addrs = []
    for _ in range(8000):
        page = int(hot[rng.integers(90)]) if rng.random() < 0.7 else int(rng.integers(1000))
        r, p = (layout.regions[0], page) if page < 700 else (layout.regions[1], page - 700)
        addrs.append(r.start + p * K4 + int(rng.integers(K4)))
    addrs = np.array(addrs, dtype=np.uint64)
    got, touched = dataset_counters(pagesim.simulate(m, addresses=addrs, layout=layout, seed=2, specialize=True, chunk_size=1500))
    generic, _ = dataset_counters(pagesim.simulate(m, addresses=addrs, layout=layout, seed=2, specialize=False))
    want, ref_touched = reference_simulate(m, layout, [int(a) for a in addrs], None, 2)
    assert got == want
    assert generic == want
    assert touched == ref_touched
    for name, entries in (("W1", 60), ("W2", 72), ("W3", 128)):  # each hits, and misses more often than it has entries: it evicts
        assert got[("hits", name, 0)] > 0 and got[("misses", name, 0)] > entries
    assert got[("pwc_hits", "pde", 0)] > 0 and got[("pwc_misses", "pde", 0)] > 0  # 2 MiB per entry: it fills, it does not evict


@pytest.mark.parametrize("name", ["skylake", "power6", "itanium2", "power8", "zen4"])
def test_specialised_presets_match_reference(name):
    """Specialised copies of real presets: page-walk caches (skylake), a 64-entry fully associative
    SLB (power6) and wide fully associative TLBs (itanium2) with their geometry compiled in; power8
    and zen4 keep their fully associative TLBs' ring heads in locals across chunks of 777 (without
    run_chunk storing the returned heads, both fail)."""
    from pagesim.engine.stages import resolve_programmable

    m = pagesim.machine(name)
    p = m.base_page
    layout = Layout((Region(1 << 36, 4096 * p, p, "a"), Region((1 << 36) + (1 << 33), 512 * p, p, "b")))
    rng = np.random.default_rng(17)
    addrs = []
    for _ in range(5000):
        r = layout.regions[int(rng.random() < 0.2)]
        addrs.append(r.start + int(rng.integers(r.length)))
    addrs = np.array(addrs, dtype=np.uint64)
    got, touched = dataset_counters(pagesim.simulate(m, addresses=addrs, layout=layout, seed=4, specialize=True, chunk_size=777))
    m_eff, _ = resolve_programmable(m, layout)
    want, ref_touched = reference_simulate(m_eff, layout, [int(a) for a in addrs], None, 4)
    assert got == want
    assert touched == ref_touched


def test_recorded_kernels_list_renders_and_adds_to_the_presets():
    """pagesim/data/kernels.json (what `pagesim warm` compiles beyond the presets' shapes): every
    entry is a key the generator renders, none is a preset shape, none is listed twice."""
    import json
    from importlib.resources import files

    from pagesim._kernels import specialize as S
    from pagesim._kernels import writer
    from pagesim.engine.nested import preset_shapes as nested_preset_shapes

    entries = json.loads(files("pagesim").joinpath("data/kernels.json").read_text(encoding="utf-8"))
    keys = [(kind, S.key_from_json(key)) for kind, key in entries]
    assert len(set(keys)) == len(keys)
    for kind, key in keys:
        if kind == "shape":
            assert key not in E.preset_shapes()
            assert "Written by pagesim._kernels.writer for the chain shape" in writer.specialised(key)
        elif kind == "nested":
            assert key not in nested_preset_shapes()
            assert "Written by pagesim._kernels.writer: the" in writer.nested(key)
        else:
            assert kind == "generic" and len(key) == 6
            assert "the generic kernel for walker" in writer.generic(*key)
    with pytest.raises(ValueError, match="kind='other' is not a kernel kind"):
        S.by_key("other", ())


def test_loaded_kernels_are_recorded_as_keys_that_load_them_again(tmp_path, monkeypatch):
    """PAGESIM_RECORD_KERNELS: each kernel a process loads is appended as a JSON line whose key
    loads the same kernel back (how `pagesim warm --record` lists the notebooks' kernels)."""
    import json

    from pagesim._kernels import specialize as S

    log = tmp_path / "k.jsonl"
    monkeypatch.setenv("PAGESIM_RECORD_KERNELS", str(log))
    monkeypatch.setattr(S, "_by_key", {})  # as in a new process: every kernel is looked up afresh
    pagesim.simulate("skylake", "random", working_set="16M", accesses=1000)
    pagesim.simulate("skylake", "random", working_set="16M", accesses=1000, specialize=False)
    lines = [json.loads(x) for x in log.read_text(encoding="utf-8").splitlines()]
    assert sorted(kind for kind, _ in lines) == ["generic", "shape"]
    for kind, key in lines:
        assert S.by_key(kind, S.key_from_json(key)) is S._by_key[(kind, S.key_from_json(key))]
    assert S.by_key("shape", S.key_from_json(lines[0][1] if lines[0][0] == "shape" else lines[1][1])) in S._loaded.values()


def test_kernels_built_by_many_threads_on_an_empty_cache(tmp_path, monkeypatch):
    """Threads building kernels at once on an empty cache (sweep(workers=N), a threaded Dask worker)
    take turns through the whole build (writing, importing and compiling a kernel), each kernel is
    written once, and every thread gets the same function for the same key."""
    import threading
    import time
    from concurrent.futures import ThreadPoolExecutor

    from pagesim._kernels import specialize as S

    monkeypatch.setattr(S._jit, "KERNELS_DIR", tmp_path)
    monkeypatch.setattr(S, "_by_key", {})
    monkeypatch.setattr(S, "_loaded", {})
    inside, most, rendered = [0], [0], []
    guard = threading.Lock()

    def watch(real):
        def watched(*args, **kw):
            with guard:
                inside[0] += 1
                most[0] = max(most[0], inside[0])
            time.sleep(0.02)  # widen the window two unserialised builds would overlap in
            try:
                out = real(*args, **kw)
                rendered.append(args)
                return out
            finally:
                with guard:
                    inside[0] -= 1

        return watched

    monkeypatch.setattr(S.writer, "specialised", watch(S.writer.specialised))
    monkeypatch.setattr(S.writer, "generic", watch(S.writer.generic))
    shapes = sorted(E.preset_shapes(), key=repr)[:3]
    generic = [(0, False, False, 2, False, True), (1, True, False, 2, True, False)]
    jobs = [("shape", s) for s in shapes] + [("generic", k) for k in generic]
    with ThreadPoolExecutor(8) as pool:
        got = list(pool.map(lambda job: S.by_key(*job), jobs * 4))
    assert most[0] == 1, f"{most[0]} threads wrote kernel sources at once"
    assert len(rendered) == len(jobs), f"{len(rendered)} renders for {len(jobs)} kernels"
    for i, job in enumerate(jobs):
        assert len({id(got[i + r * len(jobs)]) for r in range(4)}) == 1, f"{job}: threads got different kernels"


def example_kernel() -> str:
    """The kernel skylake runs on 4 KiB pages, as docs/kernel-skylake-4k.py shows it."""
    from pagesim._kernels import specialize as S
    from pagesim._kernels import writer
    from pagesim.engine import stages as E

    cfg = E.kernel_inputs(pagesim.machine("skylake"), Layout.single(1 << 30, 4096, start=1 << 40), 0)[0]
    return writer.specialised(S.chain_shape(cfg, 0))


def test_the_documented_example_kernel_is_the_one_written():
    """docs/kernel-skylake-4k.py is what the writer writes for skylake's 4 KiB chain. Rewrite it with
    python -c "import sys; sys.path.insert(0, 'tests'); from kernels import test_specialize as t;
    open('docs/kernel-skylake-4k.py', 'w').write(t.example_kernel())" """
    from pathlib import Path

    doc = Path(__file__).resolve().parents[2] / "docs" / "kernel-skylake-4k.py"
    assert doc.read_text(encoding="utf-8") == example_kernel(), "docs/kernel-skylake-4k.py is stale: rewrite it (see this test's docstring)"


def test_generic_keys_round_to_at_most_48_kernels():
    """Every set of features a machine can have (walker, fault-around, walk log, depth 1-4, an SLB only
    with a hashed walker, page-walk caches only with a radix one) maps to one of at most 48 generic
    kernels: the depth rounded up to 2 or 4, the rest kept."""
    import itertools

    from pagesim._kernels import rules
    from pagesim._kernels import specialize as S

    extras = {
        rules.RADIX: [(False, False), (False, True)],
        rules.HASHED: [(False, False), (True, False)],
        rules.TSB: [(False, False)],
        rules.VHPT: [(False, False)],
    }
    exact = [
        (w, fa, log, d, slb, pwc)
        for w, pairs in extras.items()
        for fa, log, d in itertools.product((False, True), (False, True), range(1, K.MAX_CHAIN + 1))
        for slb, pwc in pairs
    ]
    assert len(exact) == 96
    rounded = {S.generic_key(k) for k in exact}
    assert len(rounded) == 48
    assert S.generic_key((rules.RADIX, False, False, 1, False, False)) == (rules.RADIX, False, False, 2, False, False)
    assert S.generic_key((rules.HASHED, True, False, 3, True, False)) == (rules.HASHED, True, False, K.MAX_CHAIN, True, False)
    assert all(S.generic_key(k) == k for k in rounded)  # a rounded key is its own kernel
