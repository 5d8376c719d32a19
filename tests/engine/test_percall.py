"""The lean per-call path (pagesim.engine.stages: machine parts computed once per Machine, pandas
indexes reused, page counts without temporaries; pagesim.model.layout: trace layouts without checking
every block region again) gives what the plain way gives: the Dataset variables derived from the
raw counters against a plain-Python formulation on the same counters, trace layouts against
Regions checked one by one, and calls that share cached parts stay independent."""

import json

import numpy as np
import pytest
import xarray as xr
from hypothesis import given
from hypothesis import strategies as st

import pagesim
from pagesim import Layout, Region
from pagesim._kernels import specialize as S
from pagesim.core.units import format_size
from pagesim.engine import stages as E
from pagesim.engine import xrdata as X
from pagesim.engine.simulate import place
from pagesim.engine.stages import resolve_programmable


def plain_parts(m, layout, cfg, cnt, st, structs, pwcs):
    """The counters' variables and coordinates the plain way: loops over chain positions and
    regions, one comparison per page state, labels by counting."""
    res = cnt.resolved
    nk, L = res.shape[1], res.shape[2] - 1
    hits, misses = cnt.hits.copy(), cnt.misses.copy()
    for k in range(2):
        for z in range(nk):
            for j in range(L):
                s = int(cfg.chain[k, z, j])
                if s < 0:
                    break
                hits[s, z] += res[k, z, j]
                misses[s, z] += res[k, z, j + 1 :].sum()
    sizes = list(m.page_sizes)
    nt = len(structs)
    touched, by_size, untouched, mapped = [], [0] * len(sizes), [0] * len(sizes), [0] * len(sizes)
    # a kernel without fault-around marks a touched page only by its bit in st.mapped
    states = st.page_state if cfg.any_fa[0] else [(int(st.mapped[g >> 6]) >> (g & 63)) & 1 for g in range(st.page_state.shape[0])]
    states = np.asarray(states)
    off = 0
    for r in layout.regions:
        part = states[off : off + r.pages]
        touched.append(int((part == 1).sum()))
        by_size[sizes.index(r.page_size)] += touched[-1]
        untouched[sizes.index(r.page_size)] += int((part == 2).sum())
        mapped[sizes.index(r.page_size)] += r.pages
        off += r.pages
    names = [r.name or f"region {i}" for i, r in enumerate(layout.regions)]
    labels = [n if names.count(n) == 1 else f"{n} ({format_size(r.page_size)})" for n, r in zip(names, layout.regions)]
    seen = {}
    for i, n in enumerate(labels):
        if labels.count(n) > 1:
            seen[n] = seen.get(n, 0) + 1
            labels[i] = f"{n} #{seen[n]}"
    return {
        "accesses": res.sum(axis=2),
        "hits": hits[:nt],
        "misses": misses[:nt],
        "walks": res[:, :, L],
        "pages_touched": np.array(by_size),
        "prefaulted_untouched": np.array(untouched),
        "prefault_waste": np.array(untouched) * np.array(sizes),
        "pages_mapped": np.array(mapped),
        "region_pages_touched": np.array(touched),
        "region": labels,
        "structure": [s.name for s in structs],
        "page": [format_size(p) for p in sizes],
        "latency": [s.latency for s in structs],
        "pwc": [p.name for p in pwcs],
    }


def run_raw(m, layout, addrs, kinds=None, seed=0):
    """The kernel run as simulate() runs it, returning its raw inputs and counters."""
    m, _ = resolve_programmable(m, layout)
    cfg, st, cnt, structs, pwcs = E.kernel_inputs(m, layout, seed)
    E.run_chunks([(addrs, kinds)], S.generic(cfg), cfg, st, cnt, layout)
    return m, cfg, st, cnt, structs, pwcs


def thp_layout(m):
    """A THP region the OS splits (base-page head and tail around huge pages, all named 'heap')
    beside a fault-around region: repeated names and prefaulted pages."""
    from pagesim.system.paging import granted

    huge = [p for p in m.page_sizes if p > m.base_page][0]
    b = m.base_page
    heap = Region((1 << 40) - 3 * b, 3 * huge + 6 * b, huge, "heap", policy="thp")
    fa = Region((1 << 40) + (1 << 34), 4096 * b, b, "fa", fault_around=16)
    return granted(Layout((heap, fa)), b)


CASES = ["skylake", "power6", "ultrasparc-iii", "opteron-k8", "itanium2", "ultrasparc-iii-cu"]


@pytest.mark.parametrize("name", CASES)
def test_parts_match_plain_formulation(name):
    m = pagesim.machine(name)
    rng = np.random.default_rng(7)
    layouts = [Layout.covering_addresses(rng.integers(0, 1 << 30, 2000).astype(np.uint64), m.base_page)]
    if any(p > m.base_page for p in m.page_sizes) and m.walker.kind == "radix":
        layouts.append(thp_layout(m))
    layouts.append(place(pagesim.sources.workloads.workload("stream", n=20000), m.page_sizes[-1]))
    for lay in layouts:
        addrs = np.concatenate([r.start + rng.integers(0, r.length, 800) for r in lay.regions]).astype(np.uint64)
        kinds = rng.integers(0, 2, addrs.shape[0]).astype(np.uint8)
        m_eff, cfg, st, cnt, structs, pwcs = run_raw(m, lay, addrs, kinds)
        dv, coords = E.dataset_parts(m_eff, lay, cfg, cnt, st, structs, pwcs)
        want = plain_parts(m_eff, lay, cfg, cnt, st, structs, pwcs)
        for k, v in want.items():
            got = dv[k][1] if k in dv else coords[k][1] if k in coords else []
            assert np.asarray(got).tolist() == np.asarray(v).tolist(), (name, k)
            if k in dv:
                assert np.asarray(got).dtype == np.int64, k
        if any(r.fault_around > 1 for r in lay.regions):
            assert int(cnt.prefaulted.sum()) > 0 and int(np.sum(want["prefaulted_untouched"])) > 0  # the state-2 path ran


def test_simulate_dataset_same_as_constructor_and_reference_costs():
    """Every preset, a trace with many regions and instruction accesses: the Dataset simulate()
    builds directly equals xarray's constructor on the same parts plus the reference cost model."""
    from twins.reference_costs import reference_add_costs

    rng = np.random.default_rng(11)
    a = rng.integers(0, 1 << 32, 1500).astype(np.uint64)
    k = rng.integers(0, 2, 1500).astype(np.uint8)
    for name in pagesim.machines():
        ds = pagesim.simulate(name, addresses=a, kinds=k)
        assert ds.sizes["region"] > 10
        bare = ds.drop_vars(["cycles", "total_cycles", "translation_share", "fault_share", "swap_share", "component"])
        dv = {v: (bare[v].dims, bare[v].values, dict(bare[v].attrs)) for v in bare.data_vars}
        coords = {c: (bare[c].dims[0], bare[c].values, dict(bare[c].attrs)) for c in bare.coords}
        attrs = {x: y for x, y in ds.attrs.items() if x not in ("work_cycles_per_access", "costs")}
        want = reference_add_costs(xr.Dataset(dv, coords=coords, attrs=attrs), pagesim.machine(name), ds.attrs["work_cycles_per_access"])
        xr.testing.assert_identical(ds, want)
        assert list(ds.data_vars) == list(want.data_vars) and ds.attrs == want.attrs
        for v in ds.variables:
            assert ds[v].dtype == want[v].dtype, (name, v)


def test_calls_sharing_cached_parts_stay_independent():
    """Results do not depend on what ran before, and changing one result changes no other."""
    first = pagesim.simulate("skylake", "random", working_set="64M", accesses=3000)
    other = pagesim.simulate("power6", addresses=np.arange(0, 1 << 24, 4096, dtype=np.uint64))
    derived = pagesim.simulate(pagesim.machine("skylake").replace_structure("STLB", entries=1024, ways=8), "random", working_set="64M", accesses=3000)
    assert int(derived["entries"].sel(structure="STLB")) == 1024
    again = pagesim.simulate("skylake", "random", working_set="64M", accesses=3000)
    xr.testing.assert_identical(first, again)
    again["structure"].attrs["note"] = "mine"
    again["page_size"].attrs["units"] = "changed"
    again.attrs["machine"] = "changed"
    third = pagesim.simulate("skylake", "random", working_set="64M", accesses=3000)
    xr.testing.assert_identical(first, third)
    assert third["page_size"].attrs == {"units": "bytes"} and "note" not in third["structure"].attrs
    for c in ("page_size", "structure", "side", "region", "component"):
        with pytest.raises(ValueError):  # index values are read-only, so no result can change another's
            third[c].values[0] = third[c].values[-1]
    assert json.loads(other.attrs["layout"])[0]["start"] == 0


@given(st.lists(st.integers(0, (1 << 40) - 1), min_size=1, max_size=200), st.sampled_from(["4K", "64K", "2M"]), st.sampled_from(["2M", "16M"]))
def test_covering_addresses_same_as_regions_checked_one_by_one(addrs, page, granule):
    lay = Layout.covering_addresses(np.array(addrs, dtype=np.uint64), page, granule=granule)
    g = max(pagesim.core.units.parse_page_size(granule), pagesim.core.units.parse_page_size(page))
    blocks = sorted({a // g for a in addrs})
    runs = []
    for b in blocks:
        if runs and runs[-1][1] == b:
            runs[-1][1] = b + 1
        else:
            runs.append([b, b + 1])
    want = Layout(tuple(Region(s * g, (e - s) * g, page, f"[ trace ] {i}") for i, (s, e) in enumerate(runs)))
    assert lay == want
    assert [type(r.start) for r in lay.regions] == [int] * len(runs) and all(type(r.length) is int for r in lay.regions)
    assert Layout.from_blocks(blocks, g, page) == want


def test_from_blocks_still_checks_what_it_is_given():
    with pytest.raises(ValueError, match="start"):
        Layout.from_blocks([-3, 5], 4096, 4096)
    with pytest.raises(ValueError, match="not aligned"):
        Layout.from_blocks([1, 7], 6144, 4096)
    with pytest.raises(ValueError, match="overlap"):
        Layout.from_blocks([5, 3, 4, 5], 4096, 4096)  # not sorted: runs overlap


def test_covering_addresses_still_limits_pages():
    with pytest.raises(ValueError, match="at most"):
        Layout.covering_addresses(np.arange(0, 1 << 41, 1 << 21, dtype=np.uint64), "4K")


def test_check_machine_names_the_first_bad_region():
    m = pagesim.machine("skylake")
    lay = Layout(tuple(Region(i << 30, 1 << 21, "2M" if i != 3 else "64K", f"r{i}") for i in range(5)))
    with pytest.raises(ValueError, match=r"region 'r3' page_size=64K is not supported"):
        lay.check_machine(m)
    far = Layout((Region(0, 4096, 4096, "low"), Region(1 << 48, 4096, 4096, "high")))
    with pytest.raises(ValueError, match="region 'high' ends at .* beyond the 48-bit"):
        far.check_machine(m)
    both = Layout((Region(0, 4096, 4096, "a"), Region(1 << 48, 1 << 16, "64K", "b")))
    with pytest.raises(ValueError, match="region 'b' page_size=64K"):  # the page size is checked first, as before
        both.check_machine(m)


@given(
    st.lists(
        st.tuples(st.integers(1, 64), st.text(max_size=12), st.sampled_from(["rw---", "r-x--", "rw-s-"]), st.sampled_from([1, 16])),
        min_size=1,
        max_size=12,
    )
)
def test_layout_json_same_as_json_dumps(specs):
    regions, at = [], 1 << 30
    for pages, name, mode, fa in specs:
        regions.append(Region(at, pages * 4096, 4096, name, mode, fa))
        at += (pages + 1) * 4096
    lay = Layout(tuple(regions))
    assert E.layout_json(lay) == json.dumps(lay.to_records())
    assert E.layout_json(lay) == json.dumps(lay.to_records())  # kept: the same text again
    odd = Region._checked_already(np.int64(4096), 4096, 4096, "numpy start")  # not a Python int: json.dumps decides
    with pytest.raises(TypeError):
        E.layout_json(Layout((odd,)))


def _step_by_step(ds, steps, attrs_update):
    """What pagesim.engine.xrdata.rebuilt stands for, done the plain xarray way."""
    ds = ds.copy()
    for step in steps:
        if step[0] == "drop":
            ds = ds.drop_vars(step[1])
        elif step[0] == "var":
            ds[step[1]] = step[2]
        else:
            ds = ds.assign_coords({step[1]: step[2]})
    ds.attrs.update(attrs_update)
    return ds


@pytest.mark.parametrize("name", ["skylake", "power6"])
def test_rebuilt_same_as_step_by_step(name):
    ds = pagesim.simulate(name, "random", working_set="64M", accesses=2000)
    nk = ds.sizes["page_size"]
    steps = [
        ("coord", "cache_level", ("cache_level", ["L1", "L2", "memory"])),
        ("var", "lat", (("cache_level",), np.array([4, 12, 200]), {"units": "cycles"})),
        ("var", "faults", (("page_size",), np.arange(nk) * 3, {"units": "faults", "note": "replaced in place"})),
        ("drop", "cycles"),
        ("drop", "component"),
        ("var", "cycles", (("component", "page_size"), np.ones((2, nk)), {"units": "cycles"})),
        ("coord", "component", ("component", ["a", "b"])),
        ("var", "total_cycles", ((), 7.5, {"units": "cycles"})),
        ("var", "new_share", ((), 0.25, {})),
        ("drop", "side"),
        ("coord", "side", ("side", ["d", "i"])),  # an index coordinate replaced
    ]
    upd = {"mlp": 2.0, "seed": 9}
    got, want = X.rebuilt(ds, steps, upd), _step_by_step(ds, steps, upd)
    xr.testing.assert_identical(got, want)
    assert list(got.variables) == list(want.variables) and list(got.coords) == list(want.coords) and list(got.dims) == list(want.dims)
    assert list(got.attrs) == list(want.attrs) and repr(got) == repr(want)
    for v in want.variables:
        assert got[v].dtype == want[v].dtype, v
    assert set(got.xindexes) == set(want.xindexes)
    xr.testing.assert_identical(ds, pagesim.simulate(name, "random", working_set="64M", accesses=2000))  # ds itself unchanged
    with pytest.raises(ValueError, match="drop it first"):
        X.rebuilt(ds, [("coord", "side", ("side", ["d", "i"]))])


@pytest.mark.parametrize(
    "name,kw", [("opteron-k8", {}), ("power6", {"mlp": 3.0, "walk_mlp": 2.0}), ("skylake", {"hierarchy": "opteron-k8", "work_cycles": 2.0})]
)
def test_simulate_timed_same_as_repricing_step_by_step(name, kw):
    """simulate_timed prices in one build; timed_cycles, with the same figures, re-prices the xarray
    way: the same Dataset."""
    from pagesim.engine.timing import simulate_timed, timed_cycles

    ds = simulate_timed(name, "random", working_set="64M", accesses=3000, **kw)
    again = timed_cycles(ds)
    xr.testing.assert_identical(ds, again)
    for v in ds.variables:
        assert ds[v].dtype == again[v].dtype, v
    assert ds.attrs == again.attrs and list(ds.attrs) == list(again.attrs)


@pytest.mark.parametrize("instructions", [True, False])
@pytest.mark.parametrize("chunk", [333, 1 << 20])
def test_simulate_timed_walk_log_sized_by_the_run(tmp_path, instructions, chunk):
    """simulate_timed's walk log holds min(chunk_size, accesses) walks: a trace file (its access
    count read from the file, instruction lines dropped or kept) gives what the same accesses in
    memory give, one chunk or many."""
    from pagesim.engine.timing import simulate_timed
    from pagesim.sources.traces import read_trace

    rng = np.random.default_rng(4)
    addrs = (0x7F0000000000 + rng.integers(0, 256 << 20, 3000)).tolist()
    kinds = rng.integers(0, 2, 3000).tolist()
    p = tmp_path / "t.din"
    p.write_text("".join(f"{2 if k else a % 2} {a:x}\n" for a, k in zip(addrs, kinds)))
    tr = read_trace(p, instructions=instructions)
    lay = tr.covering_layout("4K")
    a = np.array(addrs, dtype=np.uint64)
    k = np.array(kinds, dtype=np.uint8)
    if not instructions:
        a, k = a[k == 0], None
    got = simulate_timed("opteron-k8", tr, page_size="4K", chunk_size=chunk)
    want = simulate_timed("opteron-k8", addresses=a, kinds=k, layout=lay, chunk_size=chunk)
    assert int(got["accesses"].sum()) == tr.n_accesses
    for v in ("data_level_hits", "walk_level_hits", "walks", "cycles"):
        assert got[v].values.tolist() == want[v].values.tolist(), v
