"""workloads.Heap: another workload's arrays one after another in one region, as a heap holds them."""

import json

import numpy as np
import pytest

import pagesim
from pagesim.engine.simulate import place
from pagesim.sources.workloads import HEAP_ALIGN, Addresses, Heap, workload

CASES = [
    ("stream", dict(n=1000)),
    ("stream", dict(n=1001)),
    ("stencil_rk", dict(nx=9, ny=8, nz=7, fields=2, radius=2)),
    ("blocked_matrix", dict(n=16, block=8)),
    ("ffte", dict(size=1 << 14, blocks=1)),
    ("random", dict(size="1M", accesses=3000)),
]


@pytest.mark.parametrize("name,kw", CASES)
@pytest.mark.parametrize("align", [1, 16, 4096])
def test_a_heap_gives_the_workloads_addresses_with_its_arrays_back_to_back(name, kw, align):
    inner = workload(name, **kw)
    h = workload("heap", of=name, parameters=json.dumps(kw), align=align)
    spans = inner.spans()
    # each array at the next multiple of align after the one before, none overlapping
    at = 0
    for (_, n), off in zip(spans, h.offsets):
        assert off == -(-at // align) * align
        at = off + n
    assert h.spans() == [("heap", at)]
    assert h.n_accesses == inner.n_accesses
    base = (1 << 30) + 4096
    got = np.concatenate([a for a, _ in h.chunks([base], chunk=777, seed=3)])
    want = np.concatenate([a for a, _ in inner.chunks([base + o for o in h.offsets], chunk=1 << 20, seed=3)])
    assert np.array_equal(got, want)
    assert got.size == inner.n_accesses
    assert ((got >= base) & (got < base + at)).all()


def test_a_heap_runs_under_simulate_with_either_page_size_and_records_its_workload():
    kw = dict(nx=12, ny=12, nz=12, fields=5, radius=2, accesses=20_000)
    h = Heap(of="stencil_rk", parameters=json.dumps(kw))
    for p in ("4K", "2M"):
        ds = pagesim.simulate("opteron-k8", h, page_size=p)
        assert int(ds["accesses"].sum()) == h.n_accesses
        assert ds.attrs["workload"] == "heap"
        again = workload(ds.attrs["workload"], **json.loads(ds.attrs["workload_params"]))
        assert again == h


def test_arrays_of_one_size_share_no_l2_tlb_sets_in_a_heap():
    """Ten arrays of 93^3 doubles (a stencil's fields and registers): laid out as separate regions on
    1 GiB boundaries the same point of every array falls in one set of the K8's 4-way L2 TLB, and an
    L1 miss walks; in a heap the L2 TLB holds them."""
    kw = dict(nx=93, ny=93, nz=93, fields=5, radius=2, accesses=300_000)
    apart = pagesim.simulate("opteron-k8", workload("stencil_rk", **kw), page_size="4K")
    heap = pagesim.simulate("opteron-k8", Heap(of="stencil_rk", parameters=json.dumps(kw)), page_size="4K")
    n = int(heap["accesses"].sum())
    assert int(apart["walks"].sum()) > 0.1 * n
    assert int(heap["walks"].sum()) < 0.01 * n


def test_the_heap_takes_the_workloads_work_per_access():
    h = Heap(of="stream", parameters=json.dumps({"n": 100, "work_cycles": 2.5}))
    assert h.work_cycles == 2.5
    assert Heap(of="stream", parameters='{"n": 100}', work_cycles=3.0).work_cycles == 3.0
    with pytest.raises(ValueError, match=r"work_cycles=3.0 and the parameters' work_cycles=2.5 differ"):
        Heap(of="stream", parameters=json.dumps({"n": 100, "work_cycles": 2.5}), work_cycles=3.0)
    # an explicit 1.0 (the default of every other workload) is given, not assumed
    with pytest.raises(ValueError, match=r"work_cycles=1.0 and the parameters' work_cycles=2.5 differ"):
        Heap(of="stream", parameters=json.dumps({"n": 100, "work_cycles": 2.5}), work_cycles=1.0)
    assert Heap(of="stream", parameters=json.dumps({"n": 100, "work_cycles": 2.5}), work_cycles=2.5).work_cycles == 2.5
    assert Heap(of="stream", parameters='{"n": 100}').work_cycles == 1.0 == Heap(of="stream", parameters='{"n": 100}', work_cycles=1.0).work_cycles
    assert Heap(of="stream", parameters='{"n": 100}') == Heap(of="stream", parameters='{"n": 100}', work_cycles=1.0)
    with pytest.raises(ValueError, match="work_cycles"):
        Heap(of="stream", parameters='{"n": 100}', work_cycles=-2)


@pytest.mark.parametrize(
    "kw,match",
    [
        (dict(of="heap"), r"of='heap' is not a workload a heap can hold: choose one of .*stream"),
        (dict(of="addresses"), r"of='addresses' is not a workload a heap can hold"),
        (dict(of="quicksort"), r"of='quicksort' is not a workload a heap can hold"),
        (dict(parameters="[1, 2]"), r"parameters='\[1, 2\]' must be a JSON object"),
        (dict(parameters="{n: 1}"), r"parameters='\{n: 1\}' is not JSON"),
        (dict(parameters='{"size": 1}'), r"parameters='\{\"size\": 1\}' of heap\(of='stream'\): workload 'stream' has no parameter\(s\) \['size'\]"),
        (dict(parameters='{"name": "random"}'), r"'name' is not a parameter of 'stream' \(the heap's of= names the workload\)"),
        (dict(parameters='{"n": 100, "work_cycles": -1}'), r"of heap\(of='stream'\): work_cycles=-1 is out of range"),
        (dict(parameters='{"n": 100, "work_cycles": NaN}'), r"work_cycles=nan must be a finite number"),
        (dict(parameters='{"n": 0}'), r"of heap\(of='stream'\): n=0 is out of range"),
        (dict(align=24), r"align=24 must be a power of two"),
        (dict(align=0), r"align"),
    ],
)
def test_a_bad_heap_is_refused_by_name(kw, match):
    with pytest.raises(ValueError, match=match):
        workload("heap", **kw)


def test_the_default_alignment_is_mallocs():
    assert Heap().align == HEAP_ALIGN == 16
    assert place(Heap(), 4096).regions[0].name == "heap"


@pytest.mark.parametrize("name", ["stencil_rk", "hpl_update", "stencil", "random"])
def test_a_heap_holds_any_workload_with_its_own_parameters(name):
    """The parameters are the workload's own fields: accesses=0 (a whole run, where a workload allows
    it) is passed to the workload as it is."""
    kw = {"stencil_rk": dict(nx=8, ny=8, nz=8, accesses=0), "hpl_update": dict(lda=64, nb=8, mc=16, nc=8, accesses=0)}.get(name, {})
    inner = workload(name, **kw) if "accesses" not in kw else type(workload(name))(**kw)
    h = workload("heap", of=name, parameters=json.dumps(inner.params()))
    assert h.inner == inner and h.n_accesses == inner.n_accesses


def test_accesses_for_a_heap_is_refused_by_name():
    with pytest.raises(ValueError, match=r"workload 'heap' takes no accesses=: its length comes from its own parameters"):
        workload("heap", of="stream", parameters='{"n": 100}', accesses=100)


@pytest.mark.parametrize(
    "kw,match",
    [
        (dict(parameters={"n": 5}), r"parameters must be a JSON string .* got dict \{'n': 5\} \(json.dumps it\)"),
        (dict(parameters='{"n": 1000, "work_cycles": null}'), r"of heap\(of='stream'\): work_cycles must be a number, got NoneType"),
        (dict(parameters='{"n": 1000, "work_cycles": [1]}'), r"work_cycles must be a number, got list"),
        (dict(parameters='{"n": "big"}'), r"of heap\(of='stream'\): n must be an int, got str"),
    ],
)
def test_a_heap_of_the_wrong_types_is_refused_by_name(kw, match):
    with pytest.raises(TypeError, match=match):
        workload("heap", **kw)


def test_one_set_of_parameters_is_one_heap():
    a = workload("heap", of="stream", parameters='{"n": 10, "work_cycles": 2}')
    b = workload("heap", of="stream", parameters='{"work_cycles":2,"n":10}')
    assert a == b and hash(a) == hash(b) and a.parameters == b.parameters


@pytest.mark.parametrize(
    "bases,chunk,seed,err,match",
    [
        ((), 16, 0, ValueError, r"bases=\(\) must give a base address for each span of heap: 1 \(heap\)"),
        ((0,), 0, 0, ValueError, r"chunk=0 is out of range: allowed 1.."),
        ((-4096,), 16, 0, ValueError, r"bases\[0\]=-4096 is out of range"),
        (((1 << 64) - 8,), 16, 0, ValueError, r"bases\[0\]=.* is out of range"),
        ((1 << 63,), 16, 0, ValueError, r"bases\[0\]=9223372036854775808 is out of range"),  # the kernels' addresses are signed
        ({0: 0}, 16, 0, ValueError, r"must give a base address for each span"),
        ((0,), 16, 1 << 63, ValueError, r"seed=9223372036854775808 is out of range"),
        (("0",), 16, 0, TypeError, r"bases\[0\] must be an int"),
        ((0,), 16, -1, ValueError, r"seed=-1 is out of range"),
    ],
)
def test_bad_chunks_arguments_are_refused_before_a_generator_runs(bases, chunk, seed, err, match):
    """chunk=0 looped for ever, and a base no address fits after reached the generator."""
    with pytest.raises(err, match=match):
        next(workload("heap", of="stream", parameters='{"n": 100}').chunks(bases, chunk, seed))


def test_a_workloads_own_chunks_check_their_arguments_too():
    w = workload("stream", n=100)
    with pytest.raises(ValueError, match=r"must give a base address for each span of stream: 3 \(a, b, c\)"):
        next(w.chunks((0,)))
    with pytest.raises(ValueError, match="chunk=0"):
        next(w.chunks((0, 1 << 30, 2 << 30), 0))
    with pytest.raises(ValueError, match="chunk=0"):
        next(Addresses(addresses=np.arange(0, 64, 8, dtype=np.uint64)).chunks((), 0))


def test_every_workload_checks_its_work_per_access():
    for name in ("stream", "random", "md", "blocked_matrix", "stencil_rk"):
        with pytest.raises(ValueError, match="work_cycles=-0.5 is out of range"):
            workload(name, work_cycles=-0.5)
        with pytest.raises(TypeError, match="work_cycles must be a number"):
            workload(name, work_cycles="2")


def test_a_heap_refuses_a_parameter_given_twice_and_quotes_what_was_typed():
    with pytest.raises(ValueError, match=r"gives 'n' more than once"):
        workload("heap", of="stream", parameters='{"n": 64, "n": 128}')
    with pytest.raises(TypeError, match=r"parameters='\{\"n\": 1e400\}'"):
        workload("heap", of="stream", parameters='{"n": 1e400}')


def test_parameters_the_workload_holds_alike_make_one_heap():
    a = workload("heap", of="stream", parameters='{"n": 64.0, "passes": 2}')
    b = workload("heap", of="stream", parameters='{"passes": 2, "n": 64}')
    assert a == b and a.parameters == '{"n": 64, "passes": 2}'


def test_one_work_per_access_is_one_heap_however_it_is_given():
    import dataclasses

    a = Heap(of="stream", parameters='{"n": 1000, "work_cycles": 2}')
    b = Heap(of="stream", parameters='{"work_cycles": 2.0, "n": 1000}', work_cycles=2.0)
    c = Heap(of="stream", parameters='{"n": 1000}', work_cycles=2)
    assert a == b == c and hash(a) == hash(b) == hash(c) and a.parameters == '{"n": 1000}'
    assert a.work_cycles == a.inner.work_cycles == c.inner.work_cycles == 2.0
    assert Heap(of="stream", parameters='{"n": 1000}') == Heap(of="stream", parameters='{"n": 1000, "work_cycles": 1.0}')
    r = dataclasses.replace(a, parameters='{"n": 500}')
    assert r.work_cycles == r.inner.work_cycles == 2.0 and r.inner.n == 500
    with pytest.raises(ValueError, match=r"work_cycles=2.0 and the parameters' work_cycles=5 differ"):
        dataclasses.replace(a, parameters='{"n": 1000, "work_cycles": 5}')
