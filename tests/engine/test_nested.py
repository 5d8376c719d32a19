"""Nested (two-dimensional) paging: hand-checked walks, the kernel against the reference twin, and
what a virtualised machine's TLBs hold."""

import threading

import numpy as np
import pytest
from helpers import assert_matches_reference, dataset_counters
from hypothesis import given, settings
from hypothesis import strategies as st
from twins.reference import reference_simulate
from twins.strategies import cases

import pagesim
from pagesim import Layout, Machine, PageWalkCache, Region, Structure, Walker

K4, M2, G1 = 4096, 2 << 20, 1 << 30
RADIX4 = Walker("radix", level_bits=(9, 9, 9, 9))  # no page-walk caches


def _bare(sizes=(K4, M2, G1)) -> Machine:
    """One 64-entry data TLB holding every page size, a 4-level radix table, no walk caches."""
    return Machine("bare", "one TLB", sizes, K4, (Structure("DTLB", 1, "data", 64, 4, sizes),), RADIX4)


def _one(m, addrs, page):
    addrs = np.array(addrs, dtype=np.uint64)
    lay = Layout((Region(1 << 40, 1 << 31, page, "r"),))
    return pagesim.simulate(m, addresses=addrs, layout=lay)


def test_one_2d_walk_without_walk_caches_makes_24_references():
    """4 guest levels, each entry's guest-physical address walked through 4 host levels, then the
    data's: 4 x (4 + 1) + 4 = 24 references (the 4 the guest reads among them)."""
    m = _bare().virtualised("4K", host_walker=RADIX4)
    ds = _one(m, [(1 << 40) + 12345], K4)
    assert int(ds["walks"].sum()) == 1
    assert int(ds["walk_refs"].sum()) == 24
    assert int(ds["host_walk_refs"].sum()) == 20
    bare = _one(_bare(), [(1 << 40) + 12345], K4)
    assert int(bare["walk_refs"].sum()) == 4


@pytest.mark.parametrize(
    "guest_page, host_page, refs",
    [
        (M2, K4, 3 * (4 + 1) + 4),  # a 2M guest page: 3 guest levels, each and the data through 4 host levels
        (K4, M2, 4 * (3 + 1) + 3),  # 2M host pages: 3 host levels per translation
        (G1, K4, 2 * (4 + 1) + 4),
        (K4, G1, 4 * (2 + 1) + 2),
    ],
)
def test_one_2d_walk_by_page_sizes(guest_page, host_page, refs):
    ds = _one(_bare().virtualised(host_page, host_walker=RADIX4), [(1 << 40) + 5], guest_page)
    assert int(ds["walk_refs"].sum()) == refs


def test_a_2m_guest_page_on_4k_host_pages_takes_a_4k_entry():
    """Two accesses 8 KiB apart in one 2M guest page: bare metal walks once; on 4K host pages the
    TLB holds 4K entries, so the second access walks too (and its guest walk is again 3 levels)."""
    addrs = [(1 << 40) + 100, (1 << 40) + 100 + 8192]
    bare = _one(_bare(), addrs, M2)
    virt = _one(_bare().virtualised("4K", host_walker=RADIX4), addrs, M2)
    assert int(bare["walks"].sum()) == 1
    assert int(virt["walks"].sum()) == 2
    assert int(virt["walk_refs"].sum() - virt["host_walk_refs"].sum()) == 2 * 3
    assert int(_one(_bare().virtualised("2M", host_walker=RADIX4), addrs, M2)["walks"].sum()) == 1


def test_the_nested_tlb_and_host_walk_caches_cut_host_references():
    """The second walk of a neighbouring page finds the guest's upper table entries and the data's
    host page in the nested TLB (same host pages): fewer host references than the first."""
    m = _bare().virtualised("2M", nested_tlb=16, host_walker=RADIX4)
    addrs = [(1 << 40) + 0, (1 << 40) + K4]
    ds = _one(m, addrs, K4)
    first = 4 * (3 + 1) + 3
    assert int(ds["walks"].sum()) == 2
    assert int(ds["walk_refs"].sum()) < 2 * first
    assert int(ds["nested_tlb_hits"].sum()) >= 1
    got, _ = dataset_counters(ds)
    want, _ = reference_simulate(m, Layout((Region(1 << 40, 1 << 31, K4, "r"),)), addrs)
    assert got == want


def test_a_host_region_on_2m_pages_walks_the_data_with_3_host_levels():
    """A 4K guest page in a host region on 2M pages, no walk caches: the guest's 4 table entries
    sit on the default 4K host pages (4 host levels each), the data on a 2M host page (3):
    4 x (4 + 1) + 3 = 23 references; the same access outside the region makes 24."""
    r = (1 << 40, (1 << 40) + (1 << 31), "2M")
    m = _bare().virtualised("4K", host_walker=RADIX4, host_regions=[r])
    assert int(_one(m, [(1 << 40) + 12345], K4)["walk_refs"].sum()) == 23
    outside = _bare().virtualised("4K", host_walker=RADIX4, host_regions=[(1 << 41, (1 << 41) + M2, "2M")])
    assert int(_one(outside, [(1 << 40) + 12345], K4)["walk_refs"].sum()) == 24
    from pagesim.teaching.explain import nested_walk

    t = nested_walk(m, (1 << 40) + 12345)
    assert int(t["refs"].iloc[-1]) == 23 and "4K guest page on 2M host pages (the guest's tables on 4K ones)" in t.title


def test_a_2m_guest_page_takes_a_2m_entry_only_in_a_host_region_on_2m_pages():
    """Two accesses 8 KiB apart in one 2M guest page, the default host page 4K: inside a host
    region on 2M pages the TLB holds one 2M entry (one walk), outside it two 4K entries (two)."""
    addrs = [(1 << 40) + 100, (1 << 40) + 100 + 8192]
    inside = _bare().virtualised("4K", host_walker=RADIX4, host_regions={(1 << 40, (1 << 40) + (1 << 31)): "2M"})
    outside = _bare().virtualised("4K", host_walker=RADIX4, host_regions={(1 << 41, (1 << 41) + M2): "2M"})
    assert int(_one(inside, addrs, M2)["walks"].sum()) == 1
    assert int(_one(outside, addrs, M2)["walks"].sum()) == 2


def test_a_host_region_on_the_default_host_page_changes_nothing():
    rng = np.random.default_rng(5)
    addrs = (1 << 40) + rng.integers(0, 64 << 20, 3000).astype(np.uint64)
    lay = Layout((Region(1 << 40, 64 << 20, K4, "r"),))
    plain = pagesim.simulate(pagesim.machine("zen4").virtualised("4K", nested_tlb=16), addresses=addrs, layout=lay)
    same = pagesim.machine("zen4").virtualised("4K", nested_tlb=16, host_regions=[(1 << 40, (1 << 40) + (64 << 20), "4K")])
    assert dataset_counters(pagesim.simulate(same, addresses=addrs, layout=lay)) == dataset_counters(plain)
    assert same.host.regions == ()  # no region at all: raw addresses are not cut, a 1G page size runs
    m2 = pagesim.machine("skylake").virtualised("4K", host_regions=[((1 << 40) + 4096, (1 << 40) + 8192, "4K")])
    assert int(pagesim.simulate(m2, addresses=addrs, page_size="1G")["walks"].sum()) > 0


def test_host_region_errors_name_the_problem():
    sky = pagesim.machine("skylake")
    with pytest.raises(ValueError, match=r"host_regions: \[0x0, 0x1000\) must be a non-empty range starting and ending at multiples of its host page \(2M\)"):
        sky.virtualised("4K", host_regions=[(0, 4096, "2M")])
    with pytest.raises(ValueError, match="overlap; host regions must be disjoint"):
        sky.virtualised("4K", host_regions=[(0, 4 << 20, "2M"), (2 << 20, 6 << 20, "2M")])
    with pytest.raises(ValueError, match="larger than guest_ram=64M"):
        from pagesim.model.machines import Host

        Host(K4, RADIX4, guest_ram="64M", regions=[(0, 1 << 30, "1G")])
    with pytest.raises(ValueError, match=r"each is \(start, end, host page\)"):
        sky.virtualised("4K", host_regions=[(0, 1 << 30)])
    with pytest.raises(ValueError, match=r"host_regions must be .* got the key\(s\) \[1099511627776\]"):
        sky.virtualised("4K", host_regions={1 << 40: "2M"})
    with pytest.raises(ValueError, match="host_regions page size=16K is not supported by machine 'skylake'"):
        sky.virtualised("4K", host_regions=[(0, 1 << 30, "16K")])
    with pytest.raises(ValueError, match="reach beyond its 48-bit address space"):
        sky.virtualised("4K", host_regions=[(1 << 48, (1 << 48) + M2, "2M")])
    with pytest.raises(ValueError, match="beyond the host table's 48-bit reach"):
        sky.virtualised("4K", guest_ram="128T", host_regions=[(0, M2, "2M"), (G1, 2 * G1, "1G")])
    with pytest.raises(
        ValueError, match=r"guest_ram='1P': give a power of two from 1G \(the largest page of machine 'skylake'\) to 256T \(the host table's 48-bit reach\)"
    ):
        sky.virtualised("4K", guest_ram="1P")
    with pytest.raises(ValueError, match=r"guest_ram='16G' \(the default\): give a power of two from 1G .* to 1G \(the host table's 30-bit reach\)"):
        sky.virtualised("4K", host_walker=Walker("radix", level_bits=(9, 9)))
    with pytest.raises(ValueError, match=r"host_walker: its table reaches 256M of guest-physical memory, less than 1G"):
        sky.virtualised("4K", host_walker=Walker("radix", level_bits=(8, 8)), guest_ram="1G")
    # the least guest_ram is the machine's own (its largest page), not the 2 MiB floor of any host
    for ram in ("2M", "512M", "3G"):
        with pytest.raises(ValueError, match=rf"guest_ram='{ram}': give a power of two from 1G \(the largest page of machine 'skylake'\) to 256T"):
            sky.virtualised("4K", guest_ram=ram)
    with pytest.raises(ValueError, match=r"guest_ram='1M': give a power of two from 2M \(the largest page of machine 'opteron-k8'\)"):
        pagesim.machine("opteron-k8").virtualised("4K", guest_ram="1M")
    assert sky.virtualised("4K", guest_ram="1G").host.guest_ram == G1
    m = sky.virtualised("4K", host_regions=[(1 << 40, (1 << 40) + (2 << 20), "2M")])
    lay = Layout((Region(1 << 40, 4 << 20, K4, "heap"),))
    with pytest.raises(ValueError, match=r"layout region 'heap' \[0x10000000000, 0x10000400000\) overlaps the host region .* without lying inside it"):
        pagesim.simulate(m, addresses=np.array([1 << 40], dtype=np.uint64), layout=lay)
    with pytest.raises(ValueError, match="needs data accesses only and one page size in the layout .* TLB entries of one size too"):
        lay2 = Layout((Region(1 << 40, M2, M2, "in"), Region((1 << 40) + M2, M2, M2, "out")))  # a 2M entry inside, 4K ones outside
        pagesim.simulate(m, addresses=np.array([1 << 40], dtype=np.uint64), layout=lay2, specialize=True)
    from pagesim.teaching.explain import nested_walk

    with pytest.raises(ValueError, match=r"the 1G guest page of 0x10000000005 \[0x10000000000, 0x10040000000\) overlaps the host region"):
        nested_walk(m, (1 << 40) + 5, "1G")


def test_host_regions_merge_name_and_reach():
    sky = pagesim.machine("skylake")
    assert sky.virtualised("4K", host_regions=[("1T", "1026G", "2M")]).host.regions == ((1 << 40, (1 << 40) + 2 * G1, M2),)
    b = 1 << 40
    m1 = sky.virtualised("4K", host_regions=[(b + M2, b + 3 * M2, "2M")])
    with pytest.raises(ValueError, match="lays the addresses out in 1G pages, and a host region's bound 0x10000200000 falls inside one"):
        pagesim.simulate(m1, addresses=(b + np.arange(0, 6 * M2, 4096)).astype(np.uint64), page_size="1G")
    with pytest.raises(ValueError, match="outside 1KiB..16GiB.*; machine 'skylake' has 4K, 2M, 1G"):
        sky.virtualised("4K", host_regions=[(0, 1 << 40, "512G")])
    m = sky.virtualised("4K", host_regions=[(0, M2, "2M"), (M2, 2 * M2, "2M")])
    assert m.host.regions == ((0, 2 * M2, M2),) and m.name == "skylake-vm-4K+2M"
    assert sky.virtualised("4K", host_regions=[(0, M2, "4K")]).name == "skylake-vm-4K"
    assert m.reach("2M") == sky.virtualised("4K").reach("2M") and m.reach("2M", host_page="2M") == sky.virtualised("2M").reach("2M")
    with pytest.raises(ValueError, match="applies to a virtualised machine with host_regions"):
        sky.reach("2M", host_page="2M")


def test_raw_addresses_are_laid_out_around_host_regions():
    """Without a layout, the regions covering the addresses are cut at the host regions' bounds:
    the same counts as a layout made by hand."""
    b = 1 << 40
    m = pagesim.machine("skylake").virtualised("4K", nested_tlb=16, host_regions=[(b + M2, b + 2 * M2, "2M")])
    addrs = np.array([b + M2 - 64, b + M2 + 64, b + M2 - 4096, b + 2 * M2 + 8], dtype=np.uint64)
    got = pagesim.simulate(m, addresses=addrs)
    lay = Layout((Region(b, M2, K4, "a"), Region(b + M2, M2, K4, "b"), Region(b + 2 * M2, M2, K4, "c")))
    assert dataset_counters(got) == dataset_counters(pagesim.simulate(m, addresses=addrs, layout=lay))
    assert list(got["region"].values) == ["[ trace ] 0", "[ trace ] 0 @0x10000200000", "[ trace ] 0 @0x10000400000"]


def test_host_regions_leave_the_guests_faults_as_they_are(tmp_path):
    """Where the host backs guest memory is the host's business: the guest's faults and prefaults
    are those of the same run without host regions, whichever host page a region is on; a cut of
    the addresses' region that fault-around's window would cross is refused, naming the bound."""
    b = 1 << 40
    sky = pagesim.machine("skylake")
    addrs = np.array([b + M2 - 3 * 4096, b + M2 + 5, b + 3 * M2 + 64], dtype=np.uint64)
    for fa in (1, 16, 512):
        want = pagesim.simulate(sky.virtualised("4K"), addresses=addrs, fault_around=fa)
        for page in ("4K", "2M"):
            got = pagesim.simulate(sky.virtualised("4K", host_regions=[(b + M2, b + 2 * M2, page)]), addresses=addrs, fault_around=fa)
            for v in ("faults", "prefaulted"):
                assert int(got[v].sum()) == int(want[v].sum()), (fa, page, v)
    with pytest.raises(ValueError, match=r"bound 0x10000200000 falls inside .* fault_around=1024 would stop at the cut .* multiples of 4M "):
        pagesim.simulate(sky.virtualised("4K", host_regions=[(b + M2, b + 2 * M2, "2M")]), addresses=addrs, fault_around=1024)
    # a trace file: the same, and the refusal names the trace
    from pagesim.sources.traces import read_trace

    path = tmp_path / "cut.txt"
    path.write_text("".join(f"{int(a):#x}\n" for a in addrs))
    tr = read_trace(path)
    want = pagesim.simulate(sky.virtualised("4K"), tr, fault_around=16)
    got = pagesim.simulate(sky.virtualised("4K", host_regions=[(b + M2, b + 2 * M2, "2M")]), tr, fault_around=16)
    assert [int(got[v].sum()) for v in ("faults", "prefaulted")] == [int(want[v].sum()) for v in ("faults", "prefaulted")]
    with pytest.raises(ValueError, match=r"bound 0x10000200000 falls inside the region \[0x10000000000, 0x10000400000\) pagesim laid trace\(cut.txt, 3\) out"):
        pagesim.simulate(sky.virtualised("4K", host_regions=[(b + M2, b + 2 * M2, "2M")]), tr, fault_around=1024)
    with pytest.raises(TypeError, match="nested_tlb_ways must be an int, got str 'x'"):
        sky.virtualised("4K", nested_tlb_ways="x")  # checked with no nested TLB too
    with pytest.raises(ValueError, match=r"host page 1G \(host_page\) is not a leaf of the host's table \(host_walker\).*allowed 4K, 2M"):
        sky.virtualised("1G", host_walker=Walker("radix", level_bits=(9, 9)))
    with pytest.raises(ValueError, match="nested_tlb_ways=65 is out of range: allowed 1..64"):
        sky.virtualised("4K", nested_tlb_ways=65)
    with pytest.raises(TypeError, match="name must be a str .* got int 5"):
        sky.virtualised("4K", name=5)
    with pytest.raises(ValueError, match="name='' is empty"):
        sky.virtualised("4K", name="")
    # given as an iterator, host regions are read once and kept
    one = [(b, b + 2 * G1, "2M")]
    assert sky.virtualised("4K", host_regions=iter(one)).host.regions == sky.virtualised("4K", host_regions=one).host.regions != ()
    assert sky.virtualised("4K", host_regions=(r for r in one)).name == "skylake-vm-4K+2M"


@pytest.mark.filterwarnings("ignore:.*more than guest_ram")  # small guest RAMs alias frames on purpose: kernel and reference must agree there too
@settings(max_examples=min(settings().max_examples, 80))
@given(cases(virtualised=True), st.sampled_from([1, 7, 1 << 20]))
def test_virtualised_kernel_matches_reference(case, chunk):
    assert_matches_reference(case, chunk)


@pytest.mark.parametrize("name", [n for n in pagesim.machines() if pagesim.machine(n).walker.kind == "radix"])
def test_every_radix_preset_runs_virtualised(name):
    """The virtualised variant of each x86 and Arm preset runs, at each host page, against the reference."""
    base = pagesim.machine(name)
    for hp in base.page_sizes:
        m = base.virtualised(hp, nested_tlb=16)
        rng = np.random.default_rng(3)
        lay = Layout((Region(1 << 40, 256 << 20, base.base_page, "r"),))
        addrs = (1 << 40) + rng.integers(0, 256 << 20, 1500).astype(np.uint64)
        got, _ = dataset_counters(pagesim.simulate(m, addresses=addrs, layout=lay))
        want, _ = reference_simulate(m, lay, [int(a) for a in addrs])
        assert got == want, (name, hp)


def test_virtualising_a_processor_without_nested_paging_says_so():
    """The Opteron K8 had no nested paging (its CPUID: no SVM; NPT came with Family 10h): its
    virtualised model warns, at the caller's line, and names the source. The other radix presets,
    for which the references state nothing, virtualise without a word."""
    import warnings

    k8 = pagesim.machine("opteron-k8")
    assert "Fn8000_000A" in k8.no_nested_paging and "Sledgehammer" in k8.no_nested_paging
    with pytest.warns(UserWarning, match=r"machine 'opteron-k8': its processor had no nested paging \(AMD CPUID of Opteron 240") as got:
        vm = k8.virtualised("4K")
    assert got[0].filename == __file__ and vm.host is not None
    assert "nested paging: none (AMD CPUID" in k8.describe(sources=True) and "nested paging" not in pagesim.machine("skylake").describe(sources=True)
    with pytest.warns(UserWarning, match="no nested paging"):
        k8.replace_structure("L2 DTLB 4K", entries=1024).virtualised("2M")  # a variant of the K8 too
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in pagesim.machines():
            m = pagesim.machine(name)
            if m.walker.kind == "radix" and name != "opteron-k8":
                assert not m.no_nested_paging
                m.virtualised(m.base_page)
        # the presets' replay shapes (every preset virtualised, the K8 too) warn no one who simulates
        from pagesim.engine import nested as NE

        NE.preset_hosts()
        pagesim.simulate(pagesim.machine("skylake").virtualised("4K"), "random", working_set="1M", accesses=100)


def test_virtualised_tlbs_cap_entries_at_the_host_page():
    m = pagesim.machine("skylake").virtualised("4K")
    assert all(s.entry_size(p) <= K4 for s in m.structures for p in s.sizes)
    assert not any(s.name == "L1 DTLB 2M" for s in m.structures)  # it held only 2M pages: nothing fills it
    assert m.structure("L1 DTLB 4K").sizes == (K4, M2, G1)
    m2 = pagesim.machine("skylake").virtualised("2M")
    assert m2.structure("L1 DTLB 4K").sizes == (K4,) and m2.structure("L1 DTLB 2M").sizes == (M2, G1)
    assert "host: 2M pages" in m2.describe()


def test_virtualised_errors_name_the_problem():
    with pytest.raises(ValueError, match="nested paging is modelled for radix guests"):
        pagesim.machine("power6").virtualised("4K")
    with pytest.raises(ValueError, match="host_page=16K is not supported by machine 'skylake'"):
        pagesim.machine("skylake").virtualised("16K")
    with pytest.raises(ValueError, match="nested_tlb=10 is not divisible by nested_tlb_ways=4"):
        pagesim.machine("skylake").virtualised("4K", nested_tlb=10)
    with pytest.raises(ValueError, match="is virtualised already"):
        pagesim.machine("skylake").virtualised("4K").virtualised("4K")
    # a host walker of another kind gets the error a dict or a name gets, not a reach error
    for walker in (Walker("hashed", hpt_ptegs=1024), Walker("tsb", tsb_entries=512), {"kind": "radix"}, "radix"):
        with pytest.raises(ValueError, match=r"host walker must be a radix Walker \(the host's table over guest-physical addresses\), got"):
            pagesim.machine("skylake").virtualised("4K", host_walker=walker)
    with pytest.raises(ValueError, match="timing model does not replay nested walks"):
        from pagesim.engine.timing import simulate_timed

        simulate_timed(pagesim.machine("skylake").virtualised("4K"), "random", hierarchy="opteron-k8", working_set="4M", accesses=100)
    with pytest.raises(ValueError, match="'skylake-vm-4K' is virtualised: the timing model does not replay nested walks"):
        simulate_timed(pagesim.machine("skylake").virtualised("4K"), "random", working_set="4M", accesses=100)  # before the hierarchy
    with pytest.raises(ValueError, match="simulate_processes does not model nested paging"):
        from pagesim.engine.processes import simulate_processes

        simulate_processes(pagesim.machine("skylake").virtualised("4K"), "random", processes=2, working_set="4M", accesses=100)


@pytest.mark.parametrize("name, host_page, guest_page", [("skylake", "4K", "4K"), ("skylake", "4K", "2M"), ("zen4", "2M", "4K"), ("neoverse-n1", "1G", "2M")])
def test_the_step_by_step_walk_counts_what_the_simulator_counts(name, host_page, guest_page):
    """teaching.explain.nested_walk's last count is the simulator's walk_refs for one access on the
    machine without host walk caches (the first walk: the guest's caches are empty), and its host
    walks are (guest levels + 1) of the host's levels each. With the host's caches the simulator
    counts fewer: they fill during the walk."""
    from pagesim.teaching.explain import nested_walk

    base = pagesim.machine(name)
    m = base.virtualised(host_page, host_walker=Walker("radix", level_bits=base.walker.level_bits))
    a = (1 << 40) + 0x123456
    t = nested_walk(m, a, guest_page)
    ds = _one(m, [a], m.check_page_size(guest_page))
    assert int(t["refs"].iloc[-1]) == int(ds["walk_refs"].sum())
    g, h = m.walker.leaf_refs(guest_page), m.host.walker.leaf_refs(m.host.page_size)
    assert int(t["refs"].iloc[-1]) == g * (h + 1) + h
    cached = _one(base.virtualised(host_page), [a], m.check_page_size(guest_page))
    assert int(cached["walk_refs"].sum()) <= int(ds["walk_refs"].sum())
    with pytest.raises(ValueError, match="is not virtualised"):
        nested_walk("skylake", a)


# Host caches the specialised replay is checked on: no caches, the presets' walk caches, a nested
# TLB of sets up to 16 ways and of wider sets (stamps), sets that are not a power of two.
_SIX = (PageWalkCache("PDE6", 3, 12, 2), PageWalkCache("PDPTE", 2, 6, 6), PageWalkCache("PML4-wide", 1, 20, 20))
# page-walk caches kept as lane lists (up to 4 ways, keys below 2**16 - 1): 3 sets of 2 ways, one set
# of 3, 8 sets of 1; and a 4-way cache over sets of 5 ways beside them (kept as packed order)
_LANES = (PageWalkCache("PDE3x2", 3, 6, 2), PageWalkCache("PDPTE1x3", 2, 3, 3), PageWalkCache("PML4-8x1", 1, 8, 1))
SPECIALISED_HOSTS = {
    "no caches": dict(host_walker=RADIX4),
    "skylake's walk caches": {},
    "nested TLB 32 x 4": dict(nested_tlb=32),
    "nested TLB 34 x 17": dict(nested_tlb=34, nested_tlb_ways=17),
    "nested TLB 6 x 2, caches of 3 and 1 sets": dict(nested_tlb=6, nested_tlb_ways=2, host_walker=Walker("radix", level_bits=(9, 9, 9, 9), pwc=_SIX)),
    "lane lists of 3 x 2, 1 x 3 and 8 x 1": dict(host_walker=Walker("radix", level_bits=(9, 9, 9, 9), pwc=_LANES)),
}


@pytest.mark.parametrize("host", SPECIALISED_HOSTS.values(), ids=SPECIALISED_HOSTS.keys())
@pytest.mark.parametrize("regions", [False, True], ids=["one host page", "host regions"])
def test_the_specialised_replay_counts_as_the_reference(host, regions, monkeypatch):
    """The nested replay with the host caches' geometry written in (what runs of 100,000 accesses
    or more use) against the plain-Python twin: 4K and 2M guest pages, instruction accesses, chunks
    of 7 accesses, and a 2M host region or none."""
    from pagesim._kernels import specialize as S
    from pagesim.engine import nested as NE

    monkeypatch.setattr(NE, "SPECIALIZE_MIN_ACCESSES", 0)  # every run's replay specialised
    used = []
    real = S.nested
    monkeypatch.setattr(S, "nested", lambda shape: used.append(shape) or real(shape))
    hosted = [((1 << 40) + (8 << 20), (1 << 40) + (16 << 20), "2M")] if regions else []
    m = pagesim.machine("skylake").virtualised("4K", guest_ram=2 << 30, host_regions=hosted, **host)
    lay = Layout((Region(1 << 40, 8 << 20, K4, "a"), Region((1 << 40) + (8 << 20), 8 << 20, K4, "b"), Region((1 << 40) + (16 << 20), 16 << 20, M2, "c")))
    rng = np.random.default_rng(11)
    hot = (1 << 40) + rng.integers(0, 1 << 20, 3000)
    addrs = np.where(rng.random(3000) < 0.5, hot, (1 << 40) + rng.integers(0, 32 << 20, 3000)).astype(np.uint64)
    kinds = (rng.random(3000) < 0.2).astype(np.uint8)
    got, _ = dataset_counters(pagesim.simulate(m, addresses=addrs, kinds=kinds, layout=lay, chunk_size=7))
    want, _ = reference_simulate(m, lay, [int(a) for a in addrs], [int(k) for k in kinds])
    assert used and all(shape is not None for shape in used)
    assert got == want


def test_lane_lists_only_where_every_key_fits(monkeypatch):
    """A page-walk cache of up to 4 ways is kept as lane lists only when every key it can look up
    (guest RAM's areas shifted by its shift) lies below 2**16 - 1; with 128 GiB of guest RAM the
    PDE cache's keys do not, and it keeps packed order. Counts as the reference's either way, with
    the caches small enough to evict and hot sets that hit."""
    from pagesim.engine import nested as NE

    monkeypatch.setattr(NE, "SPECIALIZE_MIN_ACCESSES", 0)
    pwc = (PageWalkCache("PDE", 3, 8, 4), PageWalkCache("PDPTE", 2, 4, 4))
    walker = Walker("radix", level_bits=(9, 9, 9, 9), pwc=pwc)
    lay = Layout((Region(1 << 40, 64 << 20, K4, "a"),))
    rng = np.random.default_rng(3)
    addrs = np.where(rng.random(4000) < 0.6, (1 << 40) + rng.integers(0, 1 << 20, 4000), (1 << 40) + rng.integers(0, 64 << 20, 4000)).astype(np.uint64)
    for ram, kept in (("2G", (True, True)), ("128G", (False, True))):
        m = pagesim.machine("skylake").virtualised("4K", guest_ram=ram, host_walker=walker)
        assert tuple(c[3] for c in NE.host_shape(m.host)[1]) == kept
        got, _ = dataset_counters(pagesim.simulate(m, addresses=addrs, layout=lay, chunk_size=101))
        want, _ = reference_simulate(m, lay, [int(a) for a in addrs])
        assert got == want, ram


def test_a_guest_page_on_host_pages_no_smaller_is_translated_as_one_class():
    """4K guest pages inside and outside a 2M host region take 4K TLB entries either way: the
    translation runs as one page class (so it can be specialised), and only the nested replay
    walks the data with the region's host levels; counters as the reference's either way."""
    from pagesim.engine.stages import kernel_inputs

    m = pagesim.machine("skylake").virtualised("4K", host_regions=[((1 << 40) + M2, (1 << 40) + 4 * M2, "2M")])
    lay = Layout((Region(1 << 40, M2, K4, "out"), Region((1 << 40) + M2, 3 * M2, K4, "in")))
    cfg = kernel_inputs(m, lay, 0, log_walks=8)[0]
    assert cfg.reg_size[0] == cfg.reg_size[1] and cfg.reg_class[0] != cfg.reg_class[1]
    rng = np.random.default_rng(5)
    addrs = ((1 << 40) + rng.integers(0, 4 * M2, 4000)).astype(np.uint64)
    want, _ = reference_simulate(m, lay, [int(a) for a in addrs])
    for spec in (True, False):
        got, _ = dataset_counters(pagesim.simulate(m, addresses=addrs, layout=lay, specialize=spec, chunk_size=97))
        assert got == want, spec


def test_the_summary_shows_the_hosts_side():
    ds = pagesim.simulate(pagesim.machine("skylake").virtualised("4K", nested_tlb=16), "random", accesses=3000)
    text = pagesim.summary(ds)
    host, walk = int(ds["host_walk_refs"].sum()), int(ds["walk_refs"].sum())
    assert f"host (4K pages): page-table references {host:,} of the walk refs above (the guest's {walk - host:,})" in text
    assert f"nested TLB: hits {int(ds['nested_tlb_hits'].sum()):,}, misses {int(ds['nested_tlb_misses'].sum()):,}" in text
    assert "host page-walk cache PDE cache: hits" in text
    assert "host" not in pagesim.summary(pagesim.simulate("skylake", "random", accesses=3000))


def test_page_for_finds_the_host_region_as_a_scan_does():
    """Host.page_for searches the sorted regions; a plain scan over them gives the same page or error."""
    rng = np.random.default_rng(5)
    sky = pagesim.machine("skylake")
    for _ in range(60):
        bounds = np.cumsum(rng.integers(1, 4, 2 * int(rng.integers(1, 6))) * M2)
        regs = [(int(a), int(b), "2M" if rng.random() < 0.5 else "4K") for a, b in zip(bounds[::2], bounds[1::2])]
        host = sky.virtualised("4K", host_regions=regs).host
        for _ in range(40):
            start = int(rng.integers(0, int(bounds[-1]) + 2 * M2)) // 4096 * 4096
            end = start + int(rng.integers(1, 1024)) * 4096
            want = host.page_size
            for a, b, p in host.regions:
                if a <= start and end <= b:
                    want = p
                    break
                if start < b and a < end:
                    want = "overlaps"
                    break
            try:
                got = host.page_for(start, end)
            except ValueError as e:
                assert "without lying inside it" in str(e)
                got = "overlaps"
            assert got == want, (host.regions, start, end)


def test_a_footprint_beyond_guest_ram_is_named():
    """A guest whose layout maps more than its RAM would page; the model instead lets guest pages
    share frames, so the host's caches see fewer distinct pages: the run says so."""
    vm = pagesim.machine("skylake").virtualised("4K", guest_ram="1G")
    with pytest.warns(UserWarning, match=r"the layout maps 2G, more than guest_ram=1G: guest pages share guest-physical frames"):
        pagesim.simulate(vm, "random", working_set="2G", accesses=1000)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pagesim.simulate(vm, "random", working_set="512M", accesses=1000)


def _replay_threads() -> list:
    return [t for t in threading.enumerate() if t.name.startswith("pagesim nested replay")]


def _replay_threads_after(seconds: float) -> list:
    """The replay threads still alive once they have had ``seconds`` to end (polled)."""
    import time

    end = time.monotonic() + seconds
    while _replay_threads() and time.monotonic() < end:
        time.sleep(0.01)
    return _replay_threads()


@pytest.mark.parametrize("pipeline", [True, False], ids=["pipelined", "one thread"])
@pytest.mark.parametrize("chunk", [1, 7, 60, 500, 4000])
def test_the_pipelined_replay_counts_as_the_reference(pipeline, chunk, monkeypatch):
    """The replay of each chunk on a thread of its own, beside the translation of the next, counts
    as the reference does (the walks reach the host caches in program order), whatever this machine's
    cores: at chunks of one access and a few (each replayed on the calling thread, fewer than 20
    walks), of 60 (some chunks on each thread), of 500, and more than the run (one chunk: never
    pipelined)."""
    import threading

    from pagesim.engine import nested as NE

    stages, threaded = [], []
    real, replay = NE.NestedStage.__init__, NE.NestedStage._replay

    def init(self, *a, **k):
        real(self, *a, **k)
        stages.append(self)

    monkeypatch.setattr(NE, "pipelined", lambda chunk_size, n: pipeline and chunk_size < n)
    monkeypatch.setattr(NE, "PIPELINE_MIN_WALKS", 20)
    monkeypatch.setattr(NE.NestedStage, "__init__", init)

    def spy(self, wlog, nlog, kinds):
        if threading.current_thread() is not threading.main_thread():
            threaded.append(nlog)
        replay(self, wlog, nlog, kinds)

    monkeypatch.setattr(NE.NestedStage, "_replay", spy)
    m = pagesim.machine("skylake").virtualised("4K", guest_ram="2G", nested_tlb=8)
    lay = Layout((Region(1 << 40, 8 << 20, K4, "a"), Region((1 << 40) + (8 << 20), 8 << 20, M2, "b")))
    rng = np.random.default_rng(5)
    addrs = np.where(rng.random(3000) < 0.5, (1 << 40) + rng.integers(0, 1 << 20, 3000), (1 << 40) + rng.integers(0, 16 << 20, 3000)).astype(np.uint64)
    kinds = (rng.random(3000) < 0.3).astype(np.uint8)
    got, _ = dataset_counters(pagesim.simulate(m, addresses=addrs, kinds=kinds, layout=lay, chunk_size=chunk))
    want, _ = reference_simulate(m, lay, [int(a) for a in addrs], [int(k) for k in kinds])
    assert got == want
    assert stages[-1].pipeline == (pipeline and chunk < 3000)
    assert (len(threaded) > 0) == (pipeline and 50 <= chunk < 3000)
    assert all(n >= 3 * 20 for n in threaded)
    assert not _replay_threads()


def test_a_failing_chunk_waits_for_the_replay_under_way(monkeypatch):
    """An address outside the layout in a later chunk is named as in any run, and no replay is left
    running; an error in the replay itself reaches the caller."""
    from pagesim.engine import nested as NE

    monkeypatch.setattr(NE, "pipelined", lambda chunk_size, n: chunk_size < n)
    monkeypatch.setattr(NE, "PIPELINE_MIN_WALKS", 1)
    m = pagesim.machine("skylake").virtualised("4K")
    lay = Layout((Region(1 << 40, 8 << 20, K4, "a"),))
    addrs = (1 << 40) + np.arange(5000, dtype=np.uint64) * np.uint64(4096 + 64) % np.uint64(8 << 20)
    addrs[3333] = 1 << 41
    with pytest.raises(ValueError, match=r"address 0x20000000000 \(access 3333\) lies outside every region"):
        pagesim.simulate(m, addresses=addrs, layout=lay, chunk_size=1000)
    assert not _replay_threads()

    def broken(self, wlog, nlog, kinds):
        raise RuntimeError(f"replay of {nlog} words failed")

    monkeypatch.setattr(NE.NestedStage, "_replay", broken)
    with pytest.raises(RuntimeError, match=r"replay of \d+ words failed"):
        pagesim.simulate(m, addresses=addrs[:3000], layout=lay, chunk_size=1000)
    assert not _replay_threads()


def test_the_replay_is_pipelined_only_with_a_core_free_for_it(monkeypatch, tmp_path):
    """More than one chunk, two usable cores (the tightest CPU quota of the process's control group
    and those above it counts) and not a sweep's thread."""
    import threading

    from pagesim.core import check as C
    from pagesim.engine import nested as NE

    monkeypatch.setattr(C.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    own = tmp_path / "own"
    own.write_text("0::/\n")
    cases = {"max 100000\n": 4, "150000 100000\n": 1, "250000 100000\n": 2, "garbage": 4, "100000 0": 4, "0 100000": 4, "-100000 100000": 4, "": 4}
    for text, cores in cases.items():
        (tmp_path / "cpu.max").write_text(text)
        assert C.usable_cores(tmp_path, own) == cores == C.usable_cores(str(tmp_path), str(own)), text
    # a group below the mount, as on a host without a cgroup namespace: its quota and its parent's
    (tmp_path / "cpu.max").write_text("max 100000\n")
    (tmp_path / "user.slice" / "job").mkdir(parents=True)
    (tmp_path / "user.slice" / "cpu.max").write_text("300000 100000\n")
    (tmp_path / "user.slice" / "job" / "cpu.max").write_text("max 100000\n")
    own.write_text("0::/user.slice/job\n")
    assert C.usable_cores(tmp_path, own) == 3
    (tmp_path / "user.slice" / "job" / "cpu.max").write_text("100000 100000\n")
    assert C.usable_cores(tmp_path, own) == 1
    v1 = tmp_path / "v1"
    (v1 / "cpu" / "lxc").mkdir(parents=True)
    (v1 / "cpu" / "cpu.cfs_period_us").write_text("100000\n")
    own.write_text("4:memory:/x\n2:cpu,cpuacct:/\n")
    for quota, cores in (("-1", 4), ("100000", 1), ("300000", 3), ("0", 4), ("-100000", 4)):
        (v1 / "cpu" / "cpu.cfs_quota_us").write_text(quota + "\n")
        assert C.usable_cores(v1, own) == cores, quota
    (v1 / "cpu" / "cpu.cfs_quota_us").write_text("-1\n")
    (v1 / "cpu" / "lxc" / "cpu.cfs_quota_us").write_text("200000\n")
    (v1 / "cpu" / "lxc" / "cpu.cfs_period_us").write_text("100000\n")
    own.write_text("2:cpu,cpuacct:/lxc\n")
    assert C.usable_cores(v1, own) == 2
    assert C.usable_cores(tmp_path / "none", tmp_path / "none") == 4
    monkeypatch.setattr(NE, "usable_cores", lambda: 2)
    assert NE.pipelined(1000, 1001) and not NE.pipelined(1000, 1000) and not NE.pipelined(0, 1000)
    assert NE.pipelined(1 << 20, NE.PIPELINE_CHUNK + 1) and not NE.pipelined(1 << 20, NE.PIPELINE_CHUNK)
    seen = []
    t = threading.Thread(target=lambda: seen.append(NE.pipelined(1000, 5000)))
    t.start()
    t.join()
    assert seen == [False]
    monkeypatch.setattr(NE, "usable_cores", lambda: 1)
    assert not NE.pipelined(1000, 5000)
    monkeypatch.setattr(NE, "usable_cores", lambda: 2)
    monkeypatch.setenv("PAGESIM_PIPELINE", "0")
    assert not NE.pipelined(1000, 5000)
    for on in ("1", ""):
        monkeypatch.setenv("PAGESIM_PIPELINE", on)
        assert NE.pipelined(1000, 5000)
    monkeypatch.setenv("PAGESIM_PIPELINE", "off")
    with pytest.raises(ValueError, match=r"PAGESIM_PIPELINE='off': allowed are '1' .* and '0' \(never\)"):
        NE.pipelined(1000, 5000)


def test_a_wait_for_the_worker_goes_on_through_ctrl_c():
    """Waiting for a replay goes on through a storm of interrupts (a real signal, its handler raising
    KeyboardInterrupt at whatever point of the wait it lands) and then raises the first, with the
    replay's own error as its context: never a hang, never another error in its place."""
    import itertools
    import signal
    import time

    from pagesim.engine.nested import _Job

    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signal handlers run in the main thread only")
    count = itertools.count()

    def handler(signum, frame):  # an interrupt wherever in the wait it lands; none elsewhere
        if frame is not None and frame.f_code is _Job.result.__code__:
            raise KeyboardInterrupt(f"Ctrl-C {next(count)}")

    job = _Job(lambda: None, ())
    main = threading.main_thread().ident
    waiting = threading.Event()

    def storm():  # 100 interrupts, then the replay ends (with an error)
        waiting.wait()
        time.sleep(0.01)
        for _ in range(100):
            signal.pthread_kill(main, signal.SIGUSR1)
            time.sleep(0.001)
        time.sleep(0.05)
        job.end(RuntimeError("the replay failed"))

    old = signal.signal(signal.SIGUSR1, handler)
    try:
        t = threading.Thread(target=storm)
        t.start()
        with pytest.raises(KeyboardInterrupt, match="Ctrl-C 0") as e:
            waiting.set()
            job.result()
        t.join()
    finally:
        signal.signal(signal.SIGUSR1, old)
    assert next(count) > 10 and isinstance(e.value.__context__, RuntimeError)
    done = _Job(lambda: None, ())
    done.end()
    done.result()  # an ended job returns at once


def test_ctrl_c_as_the_worker_starts_leaves_no_thread(monkeypatch):
    """A KeyboardInterrupt as the worker thread starts (Thread.start waits for the thread to run)
    still ends it: the stage keeps the worker before starting it."""

    from pagesim.engine import nested as NE

    monkeypatch.setattr(NE, "pipelined", lambda chunk_size, n: chunk_size < n)
    monkeypatch.setattr(NE, "PIPELINE_MIN_WALKS", 1)
    real = threading.Thread.start

    def start(self):
        real(self)
        if self.name.startswith("pagesim nested replay"):
            raise KeyboardInterrupt("Ctrl-C in Thread.start")

    monkeypatch.setattr(threading.Thread, "start", start)
    m = pagesim.machine("skylake").virtualised("4K")
    lay = Layout((Region(1 << 40, 8 << 20, K4, "a"),))
    addrs = (1 << 40) + np.random.default_rng(2).integers(0, 8 << 20, 3000).astype(np.uint64)
    for _ in range(3):
        with pytest.raises(KeyboardInterrupt, match="Ctrl-C in Thread.start"):
            pagesim.simulate(m, addresses=addrs, layout=lay, chunk_size=1000)
    assert not _replay_threads_after(10)


def test_a_stage_dropped_unfinished_ends_its_worker(monkeypatch):
    """A stage whose finish was never called (an interrupt on the way into it) ends its worker
    when it is dropped."""
    import gc

    from pagesim.engine import nested as NE

    monkeypatch.setattr(NE, "pipelined", lambda chunk_size, n: chunk_size < n)
    monkeypatch.setattr(NE, "PIPELINE_MIN_WALKS", 1)
    monkeypatch.setattr(NE.NestedStage, "finish", lambda self: None)
    m = pagesim.machine("skylake").virtualised("4K")
    lay = Layout((Region(1 << 40, 8 << 20, K4, "a"),))
    addrs = (1 << 40) + np.random.default_rng(2).integers(0, 8 << 20, 3000).astype(np.uint64)
    pagesim.simulate(m, addresses=addrs, layout=lay, chunk_size=1000)
    gc.collect()
    assert not _replay_threads_after(10)


def test_a_run_where_no_thread_can_start_replays_on_the_calling_thread(monkeypatch):
    """At interpreter shutdown (an atexit handler) no thread starts: the run replays every chunk
    on the calling thread, with the same counts."""
    from pagesim.engine import nested as NE

    start = threading.Thread.start

    def refuse(self):
        if self.name.startswith("pagesim nested replay"):
            raise RuntimeError("can't create new thread at interpreter shutdown")
        start(self)

    stages = []
    real = NE.NestedStage.__init__
    monkeypatch.setattr(NE.NestedStage, "__init__", lambda self, *a, **k: real(self, *a, **k) or stages.append(self))
    monkeypatch.setattr(NE, "pipelined", lambda chunk_size, n: chunk_size < n)
    monkeypatch.setattr(NE, "PIPELINE_MIN_WALKS", 1)
    monkeypatch.setattr(threading.Thread, "start", refuse)
    m = pagesim.machine("skylake").virtualised("4K")
    lay = Layout((Region(1 << 40, 8 << 20, K4, "a"),))
    addrs = (1 << 40) + np.random.default_rng(2).integers(0, 8 << 20, 2000).astype(np.uint64)
    got, _ = dataset_counters(pagesim.simulate(m, addresses=addrs, layout=lay, chunk_size=300))
    want, _ = reference_simulate(m, lay, [int(a) for a in addrs])
    assert got == want and not stages[-1].pipeline


def test_a_pipelined_run_in_an_atexit_handler(tmp_path):
    """The same run in an atexit handler as at the top of the script: it once failed there, as the
    thread pool it used took no work at shutdown."""
    import subprocess
    import sys

    script = tmp_path / "at_exit.py"
    script.write_text(
        "import atexit\n"
        "import pagesim\n"
        "from pagesim.engine import nested as NE\n"
        "NE.pipelined = lambda chunk_size, n: chunk_size < n\n"
        "NE.PIPELINE_MIN_WALKS = 1\n"
        "vm = pagesim.machine('skylake').virtualised('4K')\n"
        "run = lambda: int(pagesim.simulate(vm, 'random', working_set='64M', accesses=20000, chunk_size=3000)['host_walk_refs'].sum())\n"
        "atexit.register(lambda: print('at exit', run()))\n"
        "print('first', run())\n"
    )
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    first, at_exit = r.stdout.split("\n")[:2]
    assert first.split()[-1] == at_exit.split()[-1] and at_exit.startswith("at exit"), r.stdout


def test_a_workload_that_reuses_its_kinds_buffer(monkeypatch):
    """A workload may hand every chunk's kinds in the same buffer, refilled: the replay on the
    worker thread reads the kinds of its own chunk, not those of the chunk being translated."""
    from pagesim.engine import nested as NE
    from pagesim.sources.workloads import Addresses

    class Reused(Addresses):
        def chunks(self, bases, chunk=1 << 20, seed=0):
            buf = np.empty(chunk, dtype=np.uint8)
            for s in range(0, self.addresses.size, chunk):
                n = min(chunk, self.addresses.size - s)
                buf[:n] = self.kinds[s : s + n]
                yield self.addresses[s : s + n], buf[:n]

    monkeypatch.setattr(NE, "pipelined", lambda chunk_size, n: chunk_size < n)
    monkeypatch.setattr(NE, "PIPELINE_MIN_WALKS", 1)
    m = pagesim.machine("skylake").virtualised("4K")
    lay = Layout((Region(1 << 40, 64 << 20, K4, "a"),))
    rng = np.random.default_rng(4)
    addrs = (1 << 40) + rng.integers(0, 64 << 20, 4000).astype(np.uint64)
    kinds = np.repeat(np.array([0, 1] * 4, dtype=np.uint8), 500)  # each chunk of 500 all data or all instructions
    got, _ = dataset_counters(pagesim.simulate(m, Reused(addresses=addrs, kinds=kinds), layout=lay, chunk_size=500))
    want, _ = reference_simulate(m, lay, [int(a) for a in addrs], [int(k) for k in kinds])
    assert got == want


@pytest.mark.filterwarnings("ignore:.*more than guest_ram")
@settings(max_examples=min(settings().max_examples, 25), deadline=None)
@given(cases(virtualised=True), st.sampled_from([1, 7, 1 << 20]))
def test_the_specialised_replay_of_any_guest_levels_counts_as_the_reference(case, chunk):
    """The specialised replay writes each guest level's shifts in (one block of lookups a level):
    guests of 3 and 4 levels of 2 to 9 bits, guest RAM from 2 MiB (table frames of no bits) to 16
    GiB, against the plain-Python twin."""
    from pagesim._kernels import specialize as S
    from pagesim.engine import nested as NE

    used = []
    real = S.nested
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(NE, "SPECIALIZE_MIN_ACCESSES", 0)
        mp.setattr(S, "nested", lambda shape: used.append(shape) or real(shape))
        assert_matches_reference(case, chunk)
    assert used and all(shape is not None and shape[2] == NE.guest_shape(case[0]) for shape in used)


def test_guest_ram_leaves_the_replay_shape_alone():
    """The replay shape is the host caches' and the guest levels' geometry: a preset virtualised
    with another guest RAM (up to where a cache's keys no longer fit its lane lists) runs the
    preset's compiled replay (its tables' frame bits are read at run time), and counts as the
    reference does."""
    from pagesim.engine import nested as NE

    sky = pagesim.machine("skylake")
    shapes = {NE.replay_shape(sky.virtualised("4K", guest_ram=ram)) for ram in ("1G", "16G", "64G")}
    assert len(shapes) == 1 and shapes <= NE.preset_shapes()
    lay = Layout((Region(1 << 40, 64 << 20, K4, "a"),))
    addrs = ((1 << 40) + np.random.default_rng(4).integers(0, 64 << 20, 2000)).astype(np.uint64)
    for ram in ("1G", "64G"):
        m = sky.virtualised("4K", guest_ram=ram)
        want, _ = reference_simulate(m, lay, [int(a) for a in addrs])
        got, _ = dataset_counters(pagesim.simulate(m, addresses=addrs, layout=lay, specialize=True, chunk_size=333))
        assert got == want, ram
