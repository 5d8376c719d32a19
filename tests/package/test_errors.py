"""Every bad input gets a ValueError or TypeError naming the parameter, the value and what is allowed."""

import re

import numpy as np
import pytest

import pagesim
from pagesim import Layout, Machine, Region, Structure, Walker
from pagesim.core.units import parse_size
from pagesim.engine.processes import simulate_processes


def S(**kw):
    base = dict(name="T", level=1, side="data", entries=64, ways=4, sizes=("4K",))
    base.update(kw)
    return Structure(**base)


@pytest.mark.parametrize(
    "kw,msg",
    [
        (dict(entries=60, ways=8), "entries=60 is not divisible by ways=8"),
        (dict(sizes=("3K",)), "not a power of two"),
        (dict(sizes=("5000",)), "not a power of two"),
        (dict(entries=0), "entries=0 is out of range"),
        (dict(entries=1 << 30, ways=1 << 30), "out of range"),
        (dict(side="both"), "side='both' is not allowed"),
        (dict(replacement="mru"), "replacement='mru' is not allowed"),
        (dict(level=0), "level=0 is out of range"),
        (dict(latency=-1), "latency=-1 is out of range"),
    ],
)
def test_bad_structure(kw, msg):
    with pytest.raises(ValueError, match=msg):
        S(**kw)


def test_structure_size_machine_lacks():
    with pytest.raises(ValueError, match="holds 2M, which machine 'm' lacks"):
        Machine(name="m", title="m", page_sizes=("4K",), base_page="4K", structures=(S(sizes=("2M",)),), walker=Walker("vhpt"))


def test_two_structures_same_level_and_size():
    with pytest.raises(ValueError, match="both hold 4K pages at level 1"):
        Machine(name="m", title="m", page_sizes=("4K",), base_page="4K", structures=(S(), S(name="U")), walker=Walker("vhpt"))


def test_chain_too_long():
    structs = tuple(S(name=f"L{i}", level=i) for i in range(1, 6))
    with pytest.raises(ValueError, match="at most 4"):
        Machine(name="m", title="m", page_sizes=("4K",), base_page="4K", structures=structs, walker=Walker("vhpt"))


def test_radix_page_size_not_a_leaf():
    with pytest.raises(ValueError, match="page_size=64K is not a leaf of this radix table: allowed 4K, 2M, 1G, 512G"):
        Machine(name="m", title="m", page_sizes=("4K", "64K"), base_page="4K", structures=(), walker=Walker("radix", level_bits=(9, 9, 9, 9)))


def test_page_size_machine_lacks():
    with pytest.raises(ValueError, match=r"page_size=1G is not supported by machine 'opteron-k8': allowed 4K, 2M"):
        pagesim.simulate("opteron-k8", "random", working_set="1G", page_size="1G")


def test_page_size_not_power_of_two():
    with pytest.raises(ValueError, match=r"page_size='3000' \(3000 bytes\) is not a power of two"):
        pagesim.simulate("skylake", "random", page_size="3000")


def test_unknown_machine_and_workload():
    with pytest.raises(ValueError, match="machine='pentium' is not a preset: choose one of"):
        pagesim.simulate("pentium", "random")
    with pytest.raises(ValueError, match="workload='quicksort' is not known: choose one of"):
        pagesim.simulate("skylake", "quicksort")
    with pytest.raises(ValueError, match=r"workload 'random' has no parameter\(s\) \['strid'\]"):
        pagesim.simulate("skylake", "random", strid=4)


@pytest.mark.parametrize("name", ["stencil", "stencil_rk", "hpl_update"])
def test_working_set_on_a_workload_sized_by_its_own_parameters(name):
    """A workload whose size comes from its grid or blocks refuses working_set= by name, not with a
    raw TypeError from its constructor."""
    with pytest.raises(ValueError, match=rf"workload '{name}' has no working_set: its size comes from its own parameters"):
        pagesim.sources.workloads.workload(name, working_set="1M")


def test_a_machine_keyword_given_to_simulate_or_sweep_says_where_it_goes():
    """replacement, ways, va_bits... belong to a machine or its TLBs: the error says how to make such
    machines, named apart, from the machine given; with addresses= and in simulate_processes too."""
    with pytest.raises(
        ValueError, match=r"replacement='plru' is not a parameter of simulate\(\) .*replace_structure\('L1 DTLB 4K', .*policies: lru, fifo, random, plru"
    ):
        pagesim.simulate("skylake", "random", replacement="plru")
    with pytest.raises(ValueError, match=r"replacement='lru' is not a parameter .* as the 'machine' axis"):
        pagesim.sweep({"replacement": ["lru", "plru"]}, machine="skylake", workload="random", accesses=100, progress=False)
    with pytest.raises(ValueError, match=r"ways=4 is not a parameter .*pagesim.machine\('power6'\); \[m.replace_structure\('D-ERAT'"):
        pagesim.simulate("power6", addresses=np.arange(10, dtype=np.uint64), ways=4)
    with pytest.raises(ValueError, match=r"va_bits= is not a parameter of simulate\(\) or of the workload: .*\.derive\('skylake va_bits=\.\.\.', va_bits="):
        pagesim.simulate("skylake", "random", va_bits=57)
    with pytest.raises(ValueError, match=r"sets=4 is not a parameter of simulate_processes\(\)"):
        pagesim.engine.processes.simulate_processes("skylake", "random", processes=2, sets=4)
    for k in ("base_page", "slb", "costs", "pwc", "level_bits"):
        with pytest.raises(ValueError, match=rf"{k}= is not a parameter of simulate\(\)"):
            pagesim.simulate("skylake", "random", **{k: 1})
    with pytest.raises(ValueError, match=r"workload 'random' has no parameter\(s\) \['strid'\]"):
        pagesim.simulate("skylake", "random", strid=4, accesses=10)


def test_overlapping_regions():
    with pytest.raises(ValueError, match="regions overlap"):
        Layout((Region(0, "8K", "4K", "a"), Region("4K", "8K", "4K", "b")))


def test_region_beyond_the_simulated_range_refused_where_made():
    """A region that does not end below 2**63 is refused when made, naming its start and end (it
    was refused only when a machine checked the layout, so a Layout of it could be built and kept)."""
    with pytest.raises(ValueError, match=r"region 'top' start=0x10000000000000000 ends at 0x10000000000001000: .*below 2\*\*63"):
        Region(2**64, 4096, 4096, "top")
    with pytest.raises(ValueError, match=r"region start=0x7ffffffffffff000 ends at 0x8000000000000000"):
        Region("0x7fff_ffff_ffff_f000", "4K", "4K")
    assert Region(2**63 - 8192, 4096, 4096).end == 2**63 - 4096


def test_coverings_that_would_end_at_2_63_are_named_before_a_region_is_made(tmp_path):
    """A covering layout's regions cannot end at 2**63 either, and the machine's checks run before
    any region is made: the first address beyond a 48-bit machine's space, or a trace's line in the
    last block, is named (the region's own error, naming neither, came first)."""
    with pytest.raises(ValueError, match=r"region '\[ trace \] 1' start=0x7fffffffffe00000 ends at 0x8000000000000000"):
        Layout.covering_blocks(np.array([0, (2**63 >> 21) - 1], np.uint64), 2 << 20, 4096, "x")
    with pytest.raises(ValueError, match=r"addresses\[0\]=0x4000000000000 is beyond the virtual address space of machine 'skylake'"):
        pagesim.simulate("skylake", addresses=np.array([1 << 50, 2**63 - 5], np.uint64))
    trace = tmp_path / "top.lackey"
    trace.write_text(" L 7fffffffffffffc0,8\n L 7ffffffffffff000,8\n")
    from pagesim.sources.traces import read_trace

    with pytest.raises(ValueError, match=r"top.lackey, line 1: address 0x7fffffffffffffc0 is beyond the virtual address space of machine 'skylake'"):
        pagesim.simulate("skylake", read_trace(str(trace)))
    with pytest.raises(ValueError, match=r"top.lackey, line 1: address 0x7fffffffffffffc0 lies in the last 2 MiB below 2\*\*63"):
        pagesim.simulate(pagesim.machine("skylake").derive(va_bits=64), read_trace(str(trace)))


def test_misaligned_region():
    with pytest.raises(ValueError, match=r"region 'a' start=0x1000 is not aligned to its page size 2M"):
        Region("4K", "2M", "2M", "a")


def test_region_beyond_va_width():
    lay = Layout((Region(1 << 48, "4K", "4K", "high"),))
    with pytest.raises(ValueError, match="beyond the 48-bit virtual address space of machine 'skylake'"):
        pagesim.simulate("skylake", addresses=np.array([1 << 48], dtype=np.uint64), layout=lay)


def test_address_outside_layout_names_it():
    lay = Layout.single("8K", "4K", start=1 << 32)
    with pytest.raises(ValueError, match=r"address 0x200000000 \(access 1\) lies outside every region"):
        pagesim.simulate("skylake", addresses=np.array([1 << 32, 1 << 33], dtype=np.uint64), layout=lay)


def test_absurd_sizes_name_the_limit():
    with pytest.raises(ValueError, match=r"pagesim simulates at most 268435456 pages \(2\*\*28"):
        pagesim.simulate("skylake", "random", working_set="4T", page_size="4K")
    with pytest.raises(ValueError, match=r"working_set=128T is out of range: allowed 8B..64T"):
        pagesim.workload("random", working_set="128T")
    with pytest.raises(ValueError, match=r"accesses=0 is out of range"):
        pagesim.workload("random", accesses=0)


def test_negative_and_malformed_sizes():
    with pytest.raises(ValueError, match="working_set=-5 is negative"):
        parse_size(-5, "working_set")
    with pytest.raises(ValueError, match=r"working_set='lots' is not a size"):
        parse_size("lots", "working_set")
    with pytest.raises(TypeError, match="must be a size in bytes"):
        parse_size(1.5, "working_set")


def test_bad_addresses():
    with pytest.raises(ValueError, match="addresses must be non-negative, found -4 at index 1"):
        pagesim.simulate("skylake", addresses=np.array([4096, -4]))
    with pytest.raises(TypeError, match="addresses must be integers"):
        pagesim.simulate("skylake", addresses=np.array([1.5]))
    with pytest.raises(ValueError, match=r"kinds\[0\]=2 is not allowed: kinds are 0 \(data\) or 1"):
        pagesim.simulate("skylake", addresses=np.array([4096]), kinds=np.array([2]))
    for bad in ([0.5], [np.nan], ["i"]):  # once: 0.5 and nan became data accesses, "i" a numpy UFuncTypeError
        with pytest.raises(TypeError, match="kinds must be integers 0 .data. or 1 .instruction., got dtype"):
            pagesim.simulate("skylake", addresses=np.array([4096]), kinds=bad)


@pytest.mark.parametrize("specialize", [True, False])
@pytest.mark.parametrize("signed", [True, False])
@pytest.mark.parametrize("with_layout", [True, False])
def test_address_range_found_late_without_a_pass_of_its_own(specialize, signed, with_layout):
    """Address arrays are not scanned when made: the kernel (given a layout) or the covering layout's
    blocks (no layout) find the first address of 2**63 or above, even deep in a later chunk, and
    the error names it as the scan did. With a layout, an address of 2**64 - 1 right after a
    run of fast-path hits, and one as the first access (the empty memo is -1 with shift 0)."""
    base = 1 << 40
    a = (base + (np.arange(300_000, dtype=np.uint64) * np.uint64(8)) % np.uint64(1 << 22)).astype(np.uint64)
    a[250_001] = np.uint64(2**64 - 1)
    a[250_002] = np.uint64(1 << 63)
    arr = a.view(np.int64) if signed else a
    layout = Layout((Region(base, 1 << 22, 4096),)) if with_layout else None
    msg = r"addresses must be non-negative, found -1 at index 250001" if signed else r"addresses\[250001\]=0xffffffffffffffff is out of range"
    with pytest.raises(ValueError, match=msg):
        pagesim.simulate("skylake", addresses=arr, layout=layout, specialize=specialize, chunk_size=100_000)
    first = np.array([2**64 - 1, base], dtype=np.uint64)
    with pytest.raises(ValueError, match=r"addresses\[0\]=0xffffffffffffffff is out of range"):
        pagesim.simulate("skylake", addresses=first, layout=layout, specialize=specialize)


def test_address_lists_numpy_cannot_hold_as_integers():
    """A list mixing small addresses with 2**63 or more became float64 in
    numpy and was refused as 'not integers'; numpy's signed and unsigned integers mixed, too."""
    base = 1 << 33
    layout = Layout((Region(base, 1 << 24, 4096),))
    for bad, msg in (
        ([base, 1 << 63], r"addresses\[1\]=0x8000000000000000 is out of range"),
        ([base, 2**64], r"addresses\[1\]=0x10000000000000000 is out of range"),
        ([base, -1, 2**64], r"found -1 at index 1"),
    ):
        with pytest.raises(ValueError, match=msg):
            pagesim.simulate("skylake", addresses=bad, layout=layout)
    mixed = [np.int64(base), np.uint64(base + 4096), base + (1 << 20)]  # numpy: float64; exact here
    ds = pagesim.simulate("skylake", addresses=mixed, layout=layout)
    assert int(ds["walks"].sum()) == 3 and int(ds["accesses"].sum()) == 3  # three pages, each walked once


def test_address_range_checked_before_the_os_stages_and_processes():
    """The OS stages (ram=, memory=) and simulate_processes (which offsets each process's addresses)
    read addresses before the translation kernel does: they check the range first."""
    base = 1 << 40
    a = np.array([base, 2**63 + 5], dtype=np.uint64)
    layout = Layout((Region(base, 1 << 22, 4096),))
    for kw in (dict(ram=pagesim.Ram("1G")), dict(memory=pagesim.PhysicalMemory("64M"))):
        with pytest.raises(ValueError, match=r"addresses\[1\]=0x8000000000000005 is out of range"):
            pagesim.simulate("skylake", addresses=a, layout=layout, **kw)
    with pytest.raises(ValueError, match=r"process 1: addresses must be non-negative, found -3 at index 1"):
        simulate_processes("skylake", processes=2, addresses=[np.array([base, base]), np.array([base, -3])], layout=layout)
    with pytest.raises(ValueError, match=r"addresses\[1\]=0x8000000000000005 is out of range"):
        Layout.covering_addresses(a, 4096)
    with pytest.raises(ValueError, match=r"addresses is one array of shape \(2,\): give a list of 2 arrays, one per process"):
        simulate_processes("skylake", processes=2, addresses=np.array([base, base]), layout=layout)


def test_addresses_at_or_above_2_63():
    """2**64-1 once matched the fast path's empty memo (address -1, shift 0) and counted an L1 hit
    outside every region; 2**63-1 on a 64-bit machine raised OverflowError deep in simulate."""
    layout = Layout((Region(1 << 40, 1 << 20, 4096),))
    with pytest.raises(ValueError, match=r"addresses\[0\]=0xffffffffffffffff is out of range: pagesim simulates addresses below 2\*\*63"):
        pagesim.simulate("skylake", addresses=np.array([2**64 - 1], dtype=np.uint64), layout=layout)
    with pytest.raises(ValueError, match=r"addresses\[1\]=0x8000000000000000 is out of range"):
        pagesim.simulate("skylake", addresses=np.array([1 << 40, 1 << 63], dtype=np.uint64), layout=layout)
    m64 = pagesim.machine("skylake").derive(va_bits=64)
    with pytest.raises(ValueError, match=r"addresses\[0\]=0x7fffffffffffffff lies in the last 2 MiB below 2\*\*63: without layout="):
        pagesim.simulate(m64, addresses=np.array([2**63 - 1], dtype=np.uint64))
    with pytest.raises(ValueError, match=r"lies in the last 1 GiB below 2\*\*63: without layout= the addresses are covered by whole 1 GiB blocks"):
        pagesim.simulate(m64, addresses=np.array([2**63 - (1 << 29)], dtype=np.uint64), page_size="1G")
    # these named a region the user never made, and no address
    with pytest.raises(ValueError, match=r"addresses\[1\]=0x4000000000000 is beyond the virtual address space of machine 'skylake' \(48-bit"):
        pagesim.simulate("skylake", addresses=np.array([1 << 40, 1 << 50], dtype=np.uint64))
    ds = pagesim.simulate(m64, addresses=np.array([4096, 2**63 - (3 << 20)], dtype=np.uint64))  # the block below is whole
    assert int(ds["accesses"].sum()) == 2
    ds = pagesim.simulate(m64, addresses=np.array([2**62], dtype=np.uint64))  # high but representable: fine
    assert int(ds["walks"].sum()) == 1


def test_non_finite_work_cycles():
    """NaN once gave NaN work cycles beside translation_share 0.017 (NaN skipped), inf gave 0.0."""
    for bad in (np.nan, float("inf"), -float("inf")):
        with pytest.raises(ValueError, match=r"work_cycles=.* must be a finite number"):
            pagesim.simulate("skylake", "random", working_set="4M", accesses=10, work_cycles=bad)
    with pytest.raises(TypeError, match="work_cycles must be a number, got str 'x'"):
        pagesim.simulate("skylake", "random", working_set="4M", accesses=10, work_cycles="x")
    with pytest.raises(ValueError, match=r"work_cycles=-1 is out of range: allowed 0.."):
        pagesim.simulate("skylake", "random", working_set="4M", accesses=10, work_cycles=-1)


def test_policy_applies_to_address_arrays():
    """policy= with addresses= was silently ignored: the covering regions now take it."""
    import json

    ds = pagesim.simulate("skylake", addresses=np.array([1 << 33]), policy="mpss", page_size="2M")
    assert {r["policy"] for r in json.loads(ds.attrs["requested_layout"])} == {"mpss"}


def test_unclear_errors_name_the_parameter():
    with pytest.raises(ValueError, match=r"seed=-1 is out of range: allowed 0\.\."):
        pagesim.PhysicalMemory("64M").fragment(0.5, seed=-1)
    with pytest.raises(TypeError, match=r"walker must be a pagesim Walker .* got str 'radix'"):
        pagesim.Machine(name="x", title="x", page_sizes=(4096,), base_page=4096, structures=(), walker="radix")
    with pytest.raises(TypeError, match=r"structure 'D1' sizes must be page sizes .* got NoneType None"):
        pagesim.Structure("D1", 1, "data", 2, 2, None)
    with pytest.raises(ValueError, match=r"ways=1048576 is out of range: allowed 1..1024"):
        pagesim.Structure("F", 1, "data", 1 << 20, 1 << 20, ("4K",))
    with pytest.raises(ValueError, match=r"working_set=128T is out of range: allowed 8B..64T$"):
        pagesim.workload("random", working_set="128T")
    with pytest.raises(ValueError, match=r"specialize='yes' is not allowed"):
        pagesim.simulate("skylake", "random", working_set="4M", accesses=10, specialize="yes")


def test_bad_seed_and_chunk():
    with pytest.raises(TypeError, match="seed must be an int"):
        pagesim.simulate("skylake", "random", seed="x")
    with pytest.raises(ValueError, match=r"chunk_size=0 is out of range: allowed 1\.\."):
        pagesim.simulate("skylake", "random", chunk_size=0)


def test_bad_derivations():
    k8 = pagesim.machine("opteron-k8")
    with pytest.raises(ValueError, match="has no structure 'L3'"):
        k8.replace_structure("L3", entries=4)
    with pytest.raises(ValueError, match=r"unknown field\(s\) \['entires'\]"):
        k8.replace_structure("L2 DTLB 4K", entires=4)
    with pytest.raises(ValueError, match="is not divisible by ways"):
        k8.replace_structure("L2 DTLB 4K", entries=510)


def test_more_inputs_named_after_outside_testing():
    with pytest.raises(TypeError, match=r"costs must be a pagesim Costs, got NoneType"):
        Machine(name="x", title="x", page_sizes=(4096,), base_page=4096, structures=(), walker=Walker("radix", level_bits=(9, 9, 9, 9)), costs=None)
    with pytest.raises(TypeError, match=r"structures must be a sequence of Structure, got NoneType"):
        Machine(name="x", title="x", page_sizes=(4096,), base_page=4096, structures=None, walker=Walker("radix", level_bits=(9, 9, 9, 9)))
    with pytest.raises(TypeError, match=r"level_bits must be a sequence, got NoneType"):
        Walker("radix", level_bits=None)
    with pytest.raises(TypeError, match=r"pwc entries must be PageWalkCache objects .* got int 1"):
        Walker("radix", level_bits=(9, 9), pwc=[1])
    with pytest.raises(TypeError, match=r"compaction must be True or False, got str 'yes'"):
        pagesim.simulate("skylake", "random", working_set="4M", accesses=10, compaction="yes")
    with pytest.raises(TypeError, match=r"progress must be True or False"):
        pagesim.simulate("skylake", "random", working_set="4M", accesses=10, progress="x")
    with pytest.raises(ValueError, match=r"give working_set='4M' or size='1M', not both"):
        pagesim.simulate("skylake", "random", working_set="4M", size="1M")
    with pytest.raises(ValueError, match=r"give accesses=20 or passes=3, not both"):
        pagesim.workload("sequential", accesses=20, passes=3)


def test_fractions_name_the_parameter():
    with pytest.raises(ValueError, match=r"hot_fraction=1.5 must be a fraction in \[0, 1\]"):
        pagesim.workload("hot_cold", hot_fraction=1.5)
    with pytest.raises(TypeError, match=r"hot_fraction must be a number, got str 'x'"):
        pagesim.workload("hot_cold", hot_fraction="x")
    with pytest.raises(ValueError, match=r"shuffle=nan must be a finite number"):
        pagesim.workload("md", shuffle=float("nan"))
    with pytest.raises(ValueError, match=r"movable=2 must be a fraction in \[0, 1\] of the held pages"):
        pagesim.PhysicalMemory("64M").fragment(0.5, movable=2)


def _pm():
    return pagesim.PhysicalMemory("64M", "4K", "2M")


@pytest.mark.parametrize(
    "call,exc,words",
    [
        (lambda: _pm().reserve_hugetlb(-1, "2M"), ValueError, "count=-1 is out of range: allowed 0..16384 pages"),
        (lambda: _pm().reserve_hugetlb("2", "2M"), TypeError, "count must be an int, got str '2'"),
        (lambda: _pm().fragment(0.1, "heap"), ValueError, "placement='heap' is not allowed: use one of 'scattered', 'caged'"),
        (lambda: pagesim.workload("touch", pattern="zigzag"), ValueError, "pattern='zigzag' is not allowed: use one of 'memset', 'random'"),
        (lambda: pagesim.workload("random", accesses=0), ValueError, "accesses=0 is out of range: allowed 1.."),
        (lambda: pagesim.workload("random", accesses=2.5), TypeError, "accesses must be an int, got float 2.5"),
        (lambda: pagesim.Region(1 << 30, "4M", "4K", "r", fault_around=3), ValueError, "region 'r' fault_around=3 must be a power of two"),
        (
            lambda: pagesim.Region(1 << 30, "4M", "4K", "r", fault_around=1 << 17),
            ValueError,
            "region 'r' fault_around=131072 is out of range: allowed 1..65536 pages",
        ),
        (
            lambda: pagesim.Region(1 << 30, "4M", "4K", "r", policy="thb"),
            ValueError,
            "region 'r' policy='thb' is not allowed: use one of 'base', 'thp', 'mpss', 'hugetlb'",
        ),
        (lambda: pagesim.Ram("1G", swap_in_cycles=-1), ValueError, r"ram swap_in_cycles=-1 is out of range: allowed 0..1000000000 cycles"),
        (lambda: pagesim.simulate("skylake", "random", accesses=10, progress="yes"), TypeError, "progress must be True or False, got str 'yes'"),
        (lambda: pagesim.sweep({"seed": [0]}, machine="skylake", workload="random", progress=1), TypeError, "progress must be True or False, got int 1"),
    ],
)
def test_shared_validation_helpers_name_parameter_value_and_allowed(call, exc, words):
    """The checks once written out by hand at each site now go through pagesim.core.check; each message
    still names the parameter, the value and what is allowed."""
    with pytest.raises(exc, match=re.escape(words)):
        call()


def test_no_assert_as_validation_in_library_code():
    """python -O strips asserts: library code raises instead (STYLE.md, item 3)."""
    import ast
    from pathlib import Path

    root = Path(pagesim.__file__).parent
    found = [
        f"{p.relative_to(root)}:{n.lineno}" for p in root.rglob("*.py") for n in ast.walk(ast.parse(p.read_text(encoding="utf-8"))) if isinstance(n, ast.Assert)
    ]
    assert found == []


def test_limits_defined_once():
    import importlib

    names = ("model.layout", "model.machines", "system.paging", "_kernels.translate")
    layout, machines, paging, translate = (importlib.import_module(f"pagesim.{m}") for m in names)
    assert machines.MAX_CHAIN is translate.MAX_CHAIN
    assert paging.POLICIES is layout.POLICIES


def test_a_working_set_smaller_than_one_node_names_working_set():
    with pytest.raises(ValueError, match=r"working_set=8B is too small for one node of 64B: the minimum working_set of workload 'pointer_chase' is 64B"):
        pagesim.workload("pointer_chase", working_set=8)  # was: "node=64B is out of range: allowed 8B..8B"
    with pytest.raises(ValueError, match=r"working_set=64B is too small for one node of 128B: the minimum working_set .* is 128B"):
        pagesim.simulate("skylake", "pointer_chase", working_set=64, node=128)
    with pytest.raises(ValueError, match=r"size=16B is smaller than one node of node=64B: the minimum size is 64B"):
        pagesim.workload("pointer_chase", size=16)
    assert pagesim.workload("pointer_chase", working_set=64).n_accesses == 1_000_000  # one node is enough


def test_kinds_with_a_generated_workload_is_refused():
    with pytest.raises(ValueError, match=r"kinds= is not allowed with workload='random': kinds \(0 data, 1 instruction\) go with addresses="):
        pagesim.simulate("skylake", "random", working_set="1M", accesses=10, kinds=np.ones(10, dtype=np.uint8))  # was: ignored


def test_negative_size_strings_are_named_as_negative():
    for v in ("-1M", " -4K", "-0"):
        with pytest.raises(ValueError, match=f"working_set={re.escape(repr(v))} is negative; sizes are zero or more bytes"):
            parse_size(v, "working_set")


def _cli(*args):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "pagesim", *args], capture_output=True, text=True)


def test_cli_negative_values_reach_their_checks():
    r = _cli("simulate", "--machine", "skylake", "--workload", "random", "--working-set", "-1M")
    # was: "argument --working-set: expected one argument"
    assert r.returncode == 2 and r.stderr == "pagesim: error: working_set='-1M' is negative; sizes are zero or more bytes\n", r.stderr
    r = _cli("simulate", "--machine", "skylake", "--workload", "random", "--working-set", "1M", "--accesses", "-5")
    assert r.returncode == 2 and r.stderr.startswith("pagesim: error: --accesses -5 is out of range: allowed 1.."), r.stderr


def test_cli_attaches_negative_values_to_options_that_take_one():
    import argparse

    from pagesim.cli import _attach_negative_values

    ap = argparse.ArgumentParser()
    ap.add_argument("--size")
    ap.add_argument("-o")
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    argv = ["--size", "-1M", "-o", "-2", "--quiet", "--size", "-x", "prog", "--size", "-3"]
    assert _attach_negative_values(ap, argv) == ["--size=-1M", "-o-2", "--quiet", "--size", "-x", "prog", "--size", "-3"]
    assert _attach_negative_values(ap, ["--", "--size", "-1"]) == ["--", "--size", "-1"]
    assert _attach_negative_values(ap, ["--other", "-1"]) == ["--other", "-1"]  # not an option of this parser: left as given


def test_cli_warnings_are_one_line_and_the_library_keeps_its_format():
    import warnings

    r = _cli("simulate", "--machine", "skylake", "--workload", "sequential", "--working-set", "1M", "--accesses", "10", "--quiet")
    assert r.returncode == 0, r.stderr
    assert r.stderr == (
        "pagesim: warning: workload 'sequential': accesses=10 is less than one of its passes (131,072 accesses over its working set): "
        "it runs 1 (131,072 accesses); a smaller working_set gives a shorter run\n"
    )  # was: the file, line, category, and the source line of the warnings.warn call
    from pagesim.cli import main

    before = warnings.formatwarning
    assert main(["machines", "skylake"]) == 0
    assert warnings.formatwarning is before


def test_one_pass_beyond_the_accesses_limit_is_refused_and_ignored_accesses_said():
    """A whole-pass workload over a huge working set made ~10**13 accesses although accesses=
    is limited to 2**40 (it ran for hours); touch with pattern='memset' ignored accesses= silently."""
    import warnings

    from pagesim.sources.workloads import workload

    for name, kw in (("sequential", {"working_set": "64T"}), ("touch", {"size": "64T"})):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(ValueError, match=rf"workload '{name}' makes 8,796,093,022,208 accesses .* give a smaller working_set"):
                workload(name, accesses=1000, **kw)
    with pytest.warns(UserWarning, match=r"pattern='memset' writes every 8 bytes of its size once \(8,388,608 accesses\): accesses=1,000"):
        workload("touch", size="64M", accesses=1000)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        workload("touch", size="64M")
        workload("touch", size="64M", pattern="random", accesses=1000)


def test_a_warning_points_at_the_callers_line():
    """A workload's warning raised inside simulate() pointed at pagesim/engine/simulate.py: it names the
    line that called pagesim, whichever entry point."""
    import warnings

    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        pagesim.simulate("skylake", "sequential", working_set="1M", accesses=10)
        pagesim.sources.workloads.workload("sequential", working_set="1M", accesses=10)
    assert [w.filename for w in got] == [__file__, __file__], [(w.filename, w.lineno) for w in got]


# --- the command line: integer options, subcommands, --version, --param -----------------------

INTEGER_OPTIONS = [  # (the command line before the option, the option, its range)
    (["simulate", "--machine", "skylake", "--workload", "random", "--quiet"], "--accesses", 1, 1 << 40),
    (["simulate", "--machine", "skylake", "--workload", "random", "--quiet"], "--seed", 0, (1 << 63) - 1),
    (["trace", "record", "-o", "/nonexistent-folder/t.gz"], "--limit", 1, 1 << 40),
    (["probe", "--quiet"], "--per-octave", 1, 8),
    (["probe", "--quiet"], "--repeats", 1, 101),
    (["probe", "--quiet"], "--seed", 0, (1 << 63) - 1),
]


def _run(argv, capsys):
    """``pagesim ARGV`` in this process: (exit status, stdout, stderr)."""
    from pagesim.cli import main

    try:
        rc = main(argv)
    except SystemExit as e:  # argparse: --version, --help, usage errors
        rc = e.code
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.mark.parametrize("before,option,lo,hi", INTEGER_OPTIONS)
@pytest.mark.parametrize("value", ["1e30", "nan", "inf", "", "1.5", "1e-3", "1K", "0x10", "-1"])
def test_cli_integer_options_name_option_value_and_range(before, option, lo, hi, value, capsys):
    """Every integer option of every subcommand: one line naming the option, the value and the
    range, exit 2 (was, for --accesses and simulate's --seed: the usage, then "invalid int value")."""
    argv = [*before, f"{option}={value}"]
    if before[0] == "trace":
        argv += ["--", "true"]
    rc, out, err = _run(argv, capsys)
    assert rc == 2 and out == "" and err.count("\n") == 1 and "usage" not in err, err
    shown = value if value in ("1e30", "-1") else repr(value)  # a number out of range, or not a whole number
    assert err.startswith(f"pagesim: error: {option} {shown} ") and f"{lo}..{hi}" in err, err


def test_cli_integer_options_are_all_read_by_one_check():
    """No option of any subcommand is converted by argparse's type=int (its errors print the
    usage and say only "invalid int value")."""
    import argparse

    from pagesim.cli import build_parser

    def parsers(p):
        yield p
        for a in p._actions:
            if isinstance(a, argparse._SubParsersAction):
                for sp in a.choices.values():
                    yield from parsers(sp)

    typed = [(p.prog, a.option_strings) for p in parsers(build_parser()) for a in p._actions if a.type in (int, float)]
    assert typed == []


def test_cli_whole_numbers_written_exactly_are_accepted():
    from pagesim.cli import _whole

    for text, v in (("1000", 1000), ("1_000", 1000), ("1e3", 1000), ("2.5e3", 2500), (" 7 ", 7), ("1E+2", 100), ("0", 0)):
        assert _whole("--x", text, 0, 10**6) == v
    with pytest.raises(ValueError, match=r"^--x 2e6 is out of range: allowed 0\.\.1000000$"):
        _whole("--x", "2e6", 0, 10**6)


@pytest.mark.parametrize(
    "argv,listed",
    [
        ([], "machines, simulate, demo, host, trace, measure, probe, warm, exercises, notebooks"),
        (["trace"], "record"),
        (["exercises"], "build, grade, samples"),
    ],
)
def test_cli_a_missing_subcommand_is_one_line_listing_them(argv, listed, capsys):
    """(was: the usage, then "the following arguments are required: cmd" / trace_cmd / ex_cmd)"""
    rc, out, err = _run(argv, capsys)
    prog = " ".join(["pagesim", *argv])
    assert rc == 2 and out == ""
    assert err == f"pagesim: error: {prog} needs a {'sub' if argv else ''}command: {listed} ({prog} --help says what each does)\n", err


def test_cli_version(capsys):
    """The version that names the commit (pagesim.core.version), as every result stores it."""
    rc, out, err = _run(["--version"], capsys)
    assert rc == 0 and out == f"pagesim {pagesim.__version__}\n" and err == ""


@pytest.mark.parametrize(
    "argv,sub",
    [
        (["simulate", "--machine", "skylake", "--frobnicate"], "simulate"),
        (["machines", "--frobnicate"], "machines"),
        (["exercises", "grade", "subs", "--frobnicate"], "exercises grade"),
    ],
)
def test_cli_an_unknown_option_names_its_subcommand(argv, sub, capsys):
    """(was: the top-level usage and "pagesim: error: unrecognized arguments")"""
    rc, out, err = _run(argv, capsys)
    assert rc == 2 and err.startswith(f"usage: pagesim {sub} ") and err.endswith(f"pagesim {sub}: error: unrecognized arguments: --frobnicate\n"), err


SIM = ["simulate", "--machine", "skylake", "--workload"]


@pytest.mark.parametrize(
    "argv,msg",
    [
        # an unknown parameter, for every workload (was, for strided and md: "Strided.__init__() got an unexpected keyword argument")
        *[
            ([*SIM, w, "--param", "bogus=5", "--working-set", "1M", "--accesses", "1000"], rf"workload '{w}' has no parameter\(s\) \['bogus'\]; it takes \[")
            for w in ("sequential", "strided", "planes", "stream", "random", "hot_cold", "pointer_chase", "blocked_matrix", "md", "touch")
        ],
        # a name with an option of its own (was: "simulate() got multiple values for keyword argument")
        ([*SIM, "random", "--param", "seed=5"], r"--param 'seed=5': seed has an option of its own: give --seed 5$"),
        ([*SIM, "random", "--param", "machine=zen4"], r"--param 'machine=zen4': machine has an option of its own: give --machine zen4$"),
        ([*SIM, "random", "--param", "progress=1"], r"--param 'progress=1': progress bars are set by --quiet$"),
        ([*SIM, "random", "--param", "_chunk_hook=1"], r"--param '_chunk_hook=1' must look like name=value, with a parameter's name"),
        # given both ways (was: the option won, silently)
        (
            [*SIM, "random", "--working-set", "64M", "--param", "working_set=1G"],
            r"--param 'working_set=1G': working_set has an option of its own: give --working-set 1G$",
        ),
        ([*SIM, "random", "--accesses", "1000", "--param", "accesses=7"], r"--param 'accesses=7': accesses has an option of its own: give --accesses 7$"),
        ([*SIM, "md", "--accesses", "1000", "--param", "steps=3"], r"workload 'md': give accesses=1000 or steps=3, not both \(accesses sets steps\)$"),
        ([*SIM, "random", "--param", "size=1M", "--param", "size=2M"], r"--param size is given twice \(size='1M' and 'size=2M'\): give it once$"),
    ],
)
def test_cli_param_errors_name_the_parameter(argv, msg, capsys):
    rc, out, err = _run([*argv, "--quiet"], capsys)
    assert rc == 2 and out == "" and err.count("\n") == 1 and "__init__" not in err and "keyword argument" not in err, err
    assert re.search(msg, err.removeprefix("pagesim: error: ").rstrip("\n")), err


def test_planes_takes_a_working_set():
    """working_set is the planes' whole grid (was: "Planes.__init__() got an unexpected keyword argument 'size'")."""
    w = pagesim.workload("planes", working_set="1M", accesses=1000)
    assert w.spans() == [("grid", 1 << 20)] and w.planes == 64
    assert pagesim.workload("planes", working_set="1M", planes=4).plane == 1 << 18


def test_a_radix_table_reaching_beyond_63_bits_is_refused():
    """A radix walker reaching 64 bits or more would have the kernels shift addresses by 64 or more
    (undefined in compiled code: a virtualised replay lost host translations); it is refused where
    it is made, naming the parts and the limit. A 63-bit reach, the most allowed, counts as the
    reference does, with the replay specialised and not."""
    from helpers import dataset_counters
    from twins.reference import reference_simulate

    with pytest.raises(ValueError, match=r"radix walker base_shift=12 \+ level_bits=\(16, 9, 9, 9, 9\) reach 64 bits: at most 63"):
        Walker("radix", level_bits=(16, 9, 9, 9, 9))
    with pytest.raises(ValueError, match=r"reach 92 bits: at most 63"):
        Walker("radix", level_bits=(20, 20, 20, 20))
    # numpy entries are summed as ints: six of 20 bits in int8 would wrap to a negative reach
    with pytest.raises(ValueError, match=r"radix walker base_shift=10 \+ level_bits=\(20, 20, 20, 20, 20, 20\) reach 130 bits: at most 63"):
        Walker("radix", level_bits=tuple(np.int8(20) for _ in range(6)), base_shift=10)
    assert type(Walker("radix", level_bits=np.array([9, 9], dtype=np.int8)).level_bits[0]) is int
    w = Walker("radix", level_bits=(15, 9, 9, 9, 9), pwc=(pagesim.PageWalkCache("p", 4, 4, 4), pagesim.PageWalkCache("q", 1, 2, 2)))
    m = Machine("g63", "a 63-bit reach", (4096,), 4096, (Structure("T", 1, "data", 8, 2, (4096,)),), w)
    lay = Layout((Region(1 << 33, 1 << 20, 4096, "r"),))
    addrs = ((1 << 33) + np.random.default_rng(2).integers(0, 1 << 20, 1500)).astype(np.uint64)
    for vm in (m, m.virtualised("4K", guest_ram="1G", host_walker=w)):
        want, _ = reference_simulate(vm, lay, [int(a) for a in addrs])
        for spec in (True, False):
            got, _ = dataset_counters(pagesim.simulate(vm, addresses=addrs, layout=lay, specialize=spec))
            assert got == want, (vm.name, spec)


def test_reach_names_a_side_it_does_not_know():
    m = pagesim.machine("ultrasparc-iii")
    assert m.reach("8K", side="instr") < m.reach("8K", side="data")
    for bad in ("foo", "instruction", None, 5):
        with pytest.raises(ValueError, match=re.escape(f"side={bad!r} is not allowed: use one of 'data', 'instr'")):
            m.reach("8K", side=bad)
    with pytest.raises(ValueError, match="side='dat' is not allowed"):
        pagesim.machine("skylake").programmed_for("4K", side="dat")
    with pytest.raises(ValueError, match="kind='unified' is not allowed"):
        pagesim.machine("skylake").chain("unified", 4096)


def test_functions_of_a_result_name_what_they_were_given():
    from pagesim.system.trapstat import trapstat

    for fn, call in (("summary", pagesim.summary), ("pmap", pagesim.pmap), ("trapstat", trapstat), ("save", lambda d: pagesim.save(d, "x.nc"))):
        for bad in ({"a": 1}, None):
            with pytest.raises(TypeError, match=f"{fn}: ds must be the Dataset a simulation returned .*, got {type(bad).__name__}"):
                call(bad)


def test_reach_table_takes_one_name():
    t = pagesim.reach_table("skylake")
    assert set(t["machine"]) == {"skylake"}


def test_a_region_mode_is_what_pmap_shows():
    assert Region(0, 4096, 4096, mode="r-x--").mode == "r-x--"
    assert Region(0, 4096, 4096, mode="rw-s-").mode == "rw-s-"
    for bad in ("xyz", "rw-p", "wr---", "rw----", 5):
        with pytest.raises(ValueError, match=re.escape(f"region mode={bad!r} is not a mode as pmap -x shows it")):
            Region(0, 4096, 4096, mode=bad)


def test_a_matrix_working_set_smaller_than_a_tile_names_working_set():
    with pytest.raises(
        ValueError, match=r"working_set=64B gives matrices of n=1 .*smaller than a tile of block=32: give working_set of at least 24K or a smaller block"
    ):
        pagesim.simulate("skylake", "blocked_matrix", working_set="64", accesses=100)
    ds = pagesim.simulate("skylake", "blocked_matrix", working_set="64", block=1, accesses=100)
    assert int(ds["accesses"].sum()) > 0
    assert pagesim.workload("blocked_matrix", working_set="24K").n == 32


def test_addresses_from_a_generator_say_what_to_pass():
    with pytest.raises(TypeError, match=r"addresses must be an array or a list in access order, got a generator: make one with np.fromiter"):
        pagesim.simulate("skylake", addresses=(a for a in range(0, 1 << 20, 4096)))
    ds = pagesim.simulate("skylake", addresses=range(0, 1 << 20, 4096))
    assert int(ds["accesses"].sum()) == 256


def test_what_has_no_access_order_is_refused():
    for bad, what in (({4096, 8192}, "set"), ({4096: 1}.keys(), "dict_keys")):
        with pytest.raises(TypeError, match=f"addresses must be an array or a list in access order, got a {what}"):
            pagesim.simulate("skylake", addresses=bad)
    with pytest.raises(TypeError, match=r"kinds must be an array or a list in access order, got a generator: make one with np.fromiter\(..., dtype=np.uint8\)"):
        pagesim.simulate("skylake", addresses=[4096, 8192], kinds=(k for k in (0, 1)))
    with pytest.raises(ValueError, match="working_set=0 must be more than 0 bytes"):
        pagesim.workload("blocked_matrix", working_set=0)


def test_a_dataset_that_is_not_a_result_is_named():
    import xarray as xr

    with pytest.raises(TypeError, match="summary: ds is a Dataset without machine, machine_title, workload_label, seed in its attrs"):
        pagesim.summary(xr.Dataset())
    with pytest.raises(TypeError, match="pmap: ds is a Dataset without layout"):
        pagesim.pmap(xr.Dataset())


def test_a_result_cut_down_is_named():
    """A result cut with .isel of one value, or to some of its variables, raised xarray's own error
    (or, for summary, a KeyError) from inside summary, pmap and trapstat."""
    ds = pagesim.simulate("skylake", "random", working_set="1M", accesses=100)
    with pytest.raises(ValueError, match=r"summary: ds\['accesses'\] has lost its dimension 'side' \(a result cut with .sel or .isel of one value\)"):
        pagesim.summary(ds.isel(side=0))
    with pytest.raises(ValueError, match=r"summary: ds has no 'accesses', .*pass one simulation's whole result"):
        pagesim.summary(ds[["walks"]])
    with pytest.raises(ValueError, match=r"pmap: ds\['region_pages_touched'\] has lost its dimension 'region'"):
        pagesim.pmap(ds.isel(region=0))
    with pytest.raises(ValueError, match=r"pmap: ds has 0 of its layout's 1 regions"):
        pagesim.pmap(ds.isel(region=slice(0, 0)))
    # a transposed or reordered result is read by label
    assert pagesim.summary(ds.transpose()) == pagesim.summary(ds) == pagesim.summary(ds.sortby("page_size", ascending=False))
    # a cut that keeps the dimensions printed totals of the whole beside the cut's counts
    with pytest.raises(ValueError, match=r"summary: ds has the sides \['instr'\], not both \(a result cut along 'side'\)"):
        pagesim.summary(ds.isel(side=[0]) if str(ds["side"].values[0]) == "instr" else ds.isel(side=[1]))
    with pytest.raises(ValueError, match=r"summary: ds's cycles add up to 0 of its total_cycles [\d,]+ \(a result cut along 'page_size' or 'component'\)"):
        pagesim.summary(ds.isel(page_size=[1, 2]))
    with pytest.raises(ValueError, match=r"summary: ds\['pwc_hits'\] has lost its dimension 'pwc'"):
        pagesim.summary(ds.isel(pwc=0))
    vm = pagesim.simulate(pagesim.machine("skylake").virtualised("4K"), "random", working_set="1M", accesses=100)
    with pytest.raises(ValueError, match=r"summary: ds\['host_pwc_hits'\] has lost its dimension 'host_pwc'"):
        pagesim.summary(vm.isel(host_pwc=0))
    # one dimension more (a sweep's, expand_dims) is named, for summary, pmap and trapstat
    with pytest.raises(ValueError, match=r"summary: ds\['accesses'\] has the dimension 'run', which one simulation's result has not"):
        pagesim.summary(ds.expand_dims(run=2))
    with pytest.raises(ValueError, match=r"pmap: ds\['region_pages_touched'\] has the dimension 'run'"):
        pagesim.pmap(ds.expand_dims(run=2))
    us = pagesim.simulate("ultrasparc-iii", "random", working_set="1M", accesses=100)
    from pagesim.system.trapstat import trapstat

    with pytest.raises(ValueError, match=r"trapstat: ds\['walks'\] has lost its dimension 'side'"):
        trapstat(us.sel(side="data"))
    with pytest.raises(ValueError, match=r"trapstat: ds has the sides \['data'\], not both"):
        trapstat(us.sel(side=["data"]))
    with pytest.raises(ValueError, match=r"trapstat: ds's cycles add up to 0 of its total_cycles"):
        trapstat(us.isel(component=[]))
    with pytest.raises(ValueError, match=r"trapstat needs a result of a TSB walker \(UltraSPARC\); ds is a result of machine 'skylake', which has no TSB"):
        trapstat(ds)


def test_out_in_a_file_is_not_a_folder(tmp_path):
    f = tmp_path / "plain"
    f.write_text("x")
    ds = pagesim.simulate("skylake", "random", working_set="1M", accesses=100)
    with pytest.raises(FileNotFoundError, match=f"{f} is not a folder"):
        pagesim.save(ds, f / "r.nc")
