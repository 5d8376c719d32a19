"""pagesim.teaching.diagrams: the page-walk diagram and the step-by-step TLB view agree with the simulator
(its counters for the same accesses), with pagesim.teaching.explain's fields, and with an LRU worked by hand;
bad input names the parameter."""

import re

import matplotlib
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

matplotlib.use("Agg")

from pagesim import machine, machines, simulate  # noqa: E402
from pagesim.teaching import diagrams as D  # noqa: E402
from pagesim.teaching.explain import translate  # noqa: E402

BASE = 0x0A12_0000_0000  # below 2**44: every preset's address space


def counters_of_last(m, addresses, page):
    """What the last access did, by the simulator: its counters with and without it."""

    def run(a):
        if not a:
            return None
        return simulate(m, addresses=np.array(a, dtype=np.uint64), page_size=page, specialize=False)

    after, before = run(addresses), run(addresses[:-1])

    def diff(name):
        if name not in after:
            return None
        v = after[name].sum(dim=[d for d in after[name].dims if d not in ("pwc",)])
        return (v - before[name].sum(dim=[d for d in before[name].dims if d not in ("pwc",)])).values if before is not None else v.values

    return {
        "refs": int(diff("walk_refs")),
        "faults": int(diff("faults")),
        "walks": int(diff("walks")),
        "pwc_hits": diff("pwc_hits"),
        "tsb_hits": diff("tsb_hits"),
    }


# ------------------------------------------------------------------------------------------ the walk
def _explained(m, a, p):
    """From pagesim.teaching.explain's table: each radix level's (hi, lo, index), the PTEGs, the TSB slot."""
    t = translate(m, a, p)
    levels = []
    for _, r in t[t["step"].str.startswith("walk level")].iterrows():
        hi, lo = map(int, re.search(r"bits (\d+)\.\.(\d+)", r["what"]).groups())
        levels.append((hi, lo, int(re.search(r"index (\d+)", r["value"]).group(1))))
    values = " ".join(t["value"])
    grab = lambda pat: int(re.search(pat, values).group(1)) if re.search(pat, values) else None  # noqa: E731
    return levels, grab(r"primary PTEG (\d+)"), grab(r"secondary PTEG (\d+)"), grab(r"slot (\d+)")


@pytest.mark.parametrize("name", machines())
def test_walk_fields_and_entries_agree_with_explain(name):
    """Every preset at every page size: the diagram's bit fields and table entries are those of
    pagesim.teaching.explain.translate (the translation explorer's table), and the fields tile the address."""
    m = machine(name)
    rng = np.random.default_rng(7)
    for p in m.page_sizes:
        for a in rng.integers(0, 1 << min(m.va_bits, 63), 2, dtype=np.uint64):
            a = int(a)
            d = D.walk_steps(m, a, p)
            bits = [b for f in d["fields"] for b in range(f["lo"], f["hi"] + 1)]
            assert sorted(bits) == list(range(m.va_bits)), (name, p)
            assert sum(f["value"] << f["lo"] for f in d["fields"]) == a
            levels, prim, sec, slot = _explained(m, a, p)
            if m.walker.kind == "radix":
                index = [(f["hi"], f["lo"], f["value"]) for f in d["fields"] if f["role"] == "index"]
                assert index == levels and [s["entry"] for s in d["walk"]] == [x[2] for x in levels], (name, p, a)
            elif m.walker.kind == "hashed":
                assert [s["entry"] for s in d["walk"][1:]] == [prim, sec]
            elif m.walker.kind == "tsb":
                assert d["walk"][1]["entry"] == slot and next(f["value"] for f in d["fields"] if f["name"] == "TSB slot") == slot
            assert d["explanation"].equals(translate(m, a, p))


def test_cold_walks_read_every_level():
    d = D.walk_steps("skylake", 0x7F12_3456_789A)
    assert d["walked"] and d["fault"] and d["refs"] == 4
    assert [s["state"] for s in d["walk"]] == ["read"] * 4 and [c["result"] for c in d["pwc"]] == ["miss"] * 3
    assert [x["result"] for x in d["lookups"]] == ["miss", "miss"]
    d = D.walk_steps("skylake", 0x7F12_3456_789A, "2M")
    assert d["refs"] == 3 and [c["result"] for c in d["pwc"]] == ["miss", "miss", "not looked up"]
    assert d["walk"][-1]["name"].endswith("(leaf)") and d["fields"][-1]["hi"] == 20


@pytest.mark.parametrize(
    "name, distance, refs, cached",
    [
        ("skylake", 1 << 12, 1, 3),  # the same 2 MiB: the PDE cache leaves the last level
        ("skylake", 1 << 21, 2, 2),  # the same 1 GiB, another 2 MiB: the PDPTE cache
        ("skylake", 1 << 30, 3, 1),  # the same 512 GiB: the PML4 cache
        ("zen4", 1 << 21, 2, 2),
        ("neoverse-n1", 1 << 12, 1, 3),
        ("opteron-k8", 1 << 12, 4, 0),  # no page-walk caches
    ],
)
def test_a_warm_walk_skips_the_levels_its_caches_hold(name, distance, refs, cached):
    a = BASE + 0x3456_7000
    d = D.walk_steps(name, a + distance, previous=[a])
    assert d["refs"] == refs
    assert [s["state"] for s in d["walk"]] == ["cached"] * cached + ["read"] * (4 - cached)
    sim = counters_of_last(name, [a, a + distance], None)
    assert sim["refs"] == refs and sim["walks"] == 1
    if d["pwc"]:
        assert [c["result"] == "hit" for c in d["pwc"]] == [bool(h) for h in sim["pwc_hits"]]


def test_a_tlb_hit_needs_no_walk():
    a = BASE + 0x1234
    d = D.walk_steps("skylake", a + 8, previous=[a])
    assert not d["walked"] and d["refs"] == 0 and d["lookups"][0]["result"] == "hit"
    assert {s["state"] for s in d["walk"]} == {"not needed"} and "No walk" in d["description"]


def test_hashed_and_tsb_walks():
    d = D.walk_steps("power8", 0x12_3456_789A, "64K")
    assert d["fault"] and d["refs"] == 2 and "inserted here" in d["walk"][1]["how"]  # the first touch: into the primary group
    assert [x["structure"] for x in d["lookups"]] == ["primary D-ERAT", "SLB", "secondary D-ERAT", "TLB"]
    near = D.walk_steps("power8", 0x12_3456_789A + (1 << 16), "64K", previous=[0x12_3456_789A])
    assert next(x for x in near["lookups"] if x["structure"] == "SLB")["result"] == "hit"  # the same 256 MiB segment
    d = D.walk_steps("ultrasparc-iii", 0x12_3456_789A, "8K")
    assert d["refs"] == 1 + machine("ultrasparc-iii").walker.sw_walk_refs and d["walk"][1]["state"] == "miss"
    d = D.walk_steps("itanium2", 0x12_3456_789A)
    assert d["refs"] == 1 and d["walk"][0]["entry"] == 0x12_3456_789A >> 14


@settings(max_examples=20, deadline=None)
@given(
    name=hs.sampled_from(["skylake", "zen4", "neoverse-n1", "apple-m1", "power8", "power5+", "ultrasparc-iii", "ultrasparc-t1", "itanium2"]),
    pages=hs.lists(hs.integers(0, 40), min_size=1, max_size=30),
    seed=hs.integers(0, 2**32 - 1),
)
def test_a_walk_after_any_sequence_agrees_with_the_simulator(name, pages, seed):
    """The last access of a random sequence (pages spread over a few GiB): the diagram's references,
    fault and page-walk-cache hits are the simulator's."""
    m = machine(name)
    rng = np.random.default_rng(seed)
    spread = rng.choice([1, 1 << 9, 1 << 18], size=len(pages))
    seq = [BASE + int(k) * int(s) * m.base_page + int(rng.integers(0, m.base_page)) for k, s in zip(pages, spread)]
    d = D.walk_steps(m, seq[-1], previous=seq[:-1])
    sim = counters_of_last(m, seq, None)
    assert (d["refs"], d["fault"], d["walked"]) == (sim["refs"], sim["faults"] > 0, sim["walks"] > 0)
    if d["pwc"]:
        assert [c["result"] == "hit" for c in d["pwc"]] == [bool(h) for h in sim["pwc_hits"]]
    if m.walker.kind == "tsb" and d["walked"]:
        assert (d["walk"][1]["state"] == "hit") == bool(sim["tsb_hits"].sum())


@pytest.mark.parametrize(
    "name, page, previous",
    [
        ("skylake", "4K", [BASE + 0x3456_0000]),
        ("golden-cove", "1G", []),
        ("apple-m1", None, []),
        ("power8", "64K", [0x12_3466_789A]),
        ("power6", "16G", []),
        ("ultrasparc-iii-cu", "4M", []),
        ("ultrasparc-t1", "256M", []),
        ("itanium2", "4G", []),
    ],
)
def test_walk_figure(name, page, previous, tmp_path):
    import matplotlib.figure

    fig = D.walk(name, BASE + 0x3456_789A, page, previous=previous)
    assert isinstance(fig, matplotlib.figure.Figure)
    m = machine(name)
    assert fig.steps["title"] == m.title and m.title in fig._suptitle.get_text()
    assert fig.description.startswith(f"Page-walk diagram for {m.title}") and "bits" in fig.description
    fig.savefig(tmp_path / "walk.png")
    assert (tmp_path / "walk.png").stat().st_size > 10_000


# ------------------------------------------------------------------------------------------ the TLB
def test_four_ways_hand_checked():
    """Skylake's L1 DTLB for 4K pages: 16 sets of 4 ways, LRU. Pages 16 apart share set 0: A B C D
    fill it, E evicts A (least recent), A evicts B, F evicts C, B evicts D; a page of set 1 leaves
    set 0 alone."""
    pages = [0, 1, 2, 3, 4, 0, 5, 1]
    addrs = [BASE + 16 * k * 4096 for k in pages] + [BASE + 4096]
    st = D.tlb_states("skylake", addrs)
    assert [s["set"] for s in st] == [0] * 8 + [1]
    assert [s["result"] for s in st] == ["miss"] * 9
    e = lambda k: (BASE >> 12) + 16 * k  # noqa: E731
    assert [(s["way"], s["evicted"]) for s in st[:8]] == [(0, None), (1, None), (2, None), (3, None), (0, e(0)), (1, e(1)), (2, e(2)), (3, e(3))]
    assert st[7]["sets"][0] == [e(4), e(0), e(5), e(1)] and st[8]["sets"][1][0] == (BASE >> 12) + 1
    assert [s["resolved_by"] for s in st] == ["walk"] * 5 + ["STLB", "walk", "STLB", "walk"]
    again = D.tlb_states("skylake", [BASE, BASE + 8, BASE + 4096, BASE])
    assert [s["result"] for s in again] == ["miss", "hit", "miss", "hit"]
    assert D.tlb_states("skylake", [BASE, BASE + 8], structure="STLB")[1]["result"] == "not looked up"


CASES = [
    ("skylake", "4K", "L1 DTLB 4K"),
    ("skylake", "4K", "STLB"),
    ("skylake", "2M", "L1 DTLB 2M"),
    ("golden-cove", "4K", "STLB 4K"),
    ("opteron-k8", "4K", "L2 DTLB 4K"),
    ("apple-m1", "16K", "L1 DTLB"),
    ("power8", "64K", "primary D-ERAT"),
    ("power8", "4K", "TLB"),
    ("power6", "4K", "D-ERAT"),
    ("ultrasparc-iii", "8K", "dTLB T512"),
    ("ultrasparc-iii-cu", "8K", "dTLB T512_0"),
    ("itanium2", "64K", "L1 DTLB"),  # holds larger pages as 4K pieces
]


def lru_by_hand(states, ways):
    """(way, evicted) of each lookup, from a plain LRU of each set: a hit moves the entry to the
    front; a miss fills the lowest empty way, else evicts the least recent."""
    sets, out = {}, []
    for s in states:
        if s["result"] == "not looked up":
            continue
        slots = sets.setdefault(s["set"], [None] * ways)
        order = sets.setdefault(("order", s["set"]), [])  # ways, least recent first
        if s["result"] == "hit":
            w, evicted = slots.index(s["entry"]), None
            order.remove(w)
        elif None in slots:
            w, evicted = slots.index(None), None
        else:
            w = order.pop(0)
            evicted = slots[w]
        slots[w] = s["entry"]
        order.append(w)
        out.append((w, evicted))
    return out


@pytest.mark.parametrize("name, page, structure", CASES, ids=lambda x: str(x))
@settings(max_examples=8, deadline=None)
@given(picks=hs.lists(hs.integers(0, 80), min_size=1, max_size=120), seed=hs.integers(0, 2**32 - 1))
def test_tlb_states_agree_with_the_simulator(name, page, structure, picks, seed):
    """Random short sequences over a few dozen pages (some in the same sets): the hits and misses
    counted step by step are the simulator's for that structure, each step's way and eviction are
    an LRU's worked by hand, and each shown set holds distinct entries."""
    m = machine(name)
    p = m.check_page_size(page)
    rng = np.random.default_rng(seed)
    st = next(s for s in m.structures if s.name == structure)
    stride = st.sets * st.entry_size(p) if rng.random() < 0.5 else st.entry_size(p)  # same set, or consecutive
    addrs = [BASE + k * stride + int(rng.integers(0, p)) for k in picks]
    states = D.tlb_states(m, addrs, page, structure)
    ds = simulate(m, addresses=np.array(addrs, dtype=np.uint64), page_size=page, specialize=False)
    sel = {"structure": structure, "page_size": p}
    assert (states[-1]["hits"], states[-1]["misses"]) == (int(ds["hits"].sel(sel)), int(ds["misses"].sel(sel)))
    assert sum(s["result"] == "hit" for s in states) == states[-1]["hits"]
    assert [(s["way"], s["evicted"]) for s in states if s["result"] != "not looked up"] == lru_by_hand(states, st.ways)
    for s in states:
        for ways in s["sets"].values():
            held = [e for e in ways if e is not None]
            assert len(held) == len(set(held)) and len(ways) == st.ways
        if s["result"] != "not looked up":
            assert s["entry"] in s["sets"][s["set"]]


def test_tlb_view_figures_and_widget(tmp_path):
    pages = [0, 1, 2, 3, 4, 0, 5, 1]
    view = D.tlb_steps("skylake", [BASE + 16 * k * 4096 for k in pages])
    assert len(view) == 8 and list(view.table().index) == list(range(1, 9))
    assert view.table().loc[5, "evicted"] == "A" and view.table().loc[5, "inserted"] == "E"
    fig = view.figure(5)
    assert "E inserted in way 0, A evicted" in fig.description and "step 5 of 8" in fig._suptitle.get_text()
    fig.savefig(tmp_path / "tlb.png")
    assert view.figure().description.startswith("Step 8 of 8")
    wide = D.tlb_steps("power8", [BASE + k * 65536 for k in range(5)], "64K", "primary D-ERAT")
    assert "fully associative, 48 entries" in wide.figure(2).description
    box = view.widget()
    assert view.slider.min == 1 and view.slider.max == 8 and view.buttons[0].disabled
    view.buttons[1].click()
    assert view.slider.value == 2 and "Step 2 of 8" in view.text.value and view.image.value[:4] == b"\x89PNG"
    assert box.children


def test_a_programmed_structure():
    """UltraSPARC III Cu's second T512 holds 4M pages once the accesses touch 8 of them (as simulate
    programs it); with fewer, the error says why it is not looked up."""
    four_m = [BASE + k * (4 << 20) for k in range(8)]
    states = D.tlb_states("ultrasparc-iii-cu", four_m + four_m, "4M", "dTLB T512_1")
    assert [s["result"] for s in states] == ["miss"] * 8 + ["hit"] * 8
    with pytest.raises(ValueError, match="structure='dTLB T512_1'.*at least 8 pages"):
        D.tlb_states("ultrasparc-iii-cu", four_m[:3], "4M", "dTLB T512_1")


# ------------------------------------------------------------------------------------------ bad input
@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: D.walk("nope", 0x1000), ValueError, "machine='nope'"),
        (lambda: D.walk_steps("skylake", "zz"), ValueError, "address='zz'"),
        (lambda: D.walk_steps("skylake", "7f00"), ValueError, "address='7f00' looks hexadecimal"),
        (lambda: D.walk_steps("skylake", 1 << 48), ValueError, "address=0x1000000000000 is beyond the 48-bit"),
        (lambda: D.walk_steps("skylake", -5), ValueError, "address=-5"),
        (lambda: D.walk_steps("skylake", 0x1000, "3K"), ValueError, "page='3K'"),
        (lambda: D.walk_steps("skylake", 0x1000, "64K"), ValueError, "page"),
        (lambda: D.walk_steps("skylake", 0x1000, previous=["0x10", "bad"]), ValueError, r"previous\[1\]"),
        (lambda: D.walk_steps("skylake", 0x1000, previous=0x10), TypeError, "previous=16"),
        (lambda: D.walk_steps("skylake", 0x1000, seed=-1), ValueError, "seed"),
        (lambda: D.tlb_states("skylake", []), ValueError, "addresses is empty"),
        (lambda: D.tlb_states("skylake", "0x1000"), TypeError, "addresses='0x1000'"),
        (lambda: D.tlb_states("skylake", [0x1000, 1 << 50]), ValueError, r"addresses\[1\]"),
        (lambda: D.tlb_states("skylake", [0x1000] * (D.MAX_STEPS + 1)), ValueError, "at most"),
        (lambda: D.tlb_states("skylake", [0x1000], structure="L1 DTLB 2M"), ValueError, "structure='L1 DTLB 2M'.*'L1 DTLB 4K', 'STLB'"),
        (lambda: D.tlb_states("skylake", [0x1000], structure="L1 ITLB 4K"), ValueError, "structure="),
        (lambda: D.tlb_states("skylake", [0x1000], structure=3), TypeError, "structure=3"),
        (lambda: D.tlb_steps("skylake", [0x1000, 0x2000]).figure(3), ValueError, "step=3"),
        (lambda: D.tlb_steps("skylake", [0x1000, 0x2000]).figure(0), ValueError, "step=0"),
    ],
)
def test_bad_input_names_the_parameter(call, error, match):
    with pytest.raises(error, match=match):
        call()


# ------------------------------------------------------------------------------------------ the glossary
GLOSSARY_TERMS = (
    "TLB ERAT SLB VSID HPT PTEG TSB STLB PML4 PWC THP hugetlb MPSS MLP reach walk page-fault page-table huge-page set-associative LRU "
    "prefetch SMT segment working-set internal-fragmentation ASID nested-paging"
).split()


def _glossary():
    import nbformat

    from pagesim.validation.notebooks import notebooks_dir

    nb = nbformat.read(notebooks_dir() / "glossary.ipynb", as_version=4)
    # code: only the parameters cell and the cell that describes one machine
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert [c.metadata.get("tags", []) for c in code] == [["parameters"], []] and "describe()" in code[1].source
    terms = {}
    for c in nb.cells:
        assert len(c.source.splitlines()) <= 10, c.source[:40]
        if c.cell_type != "markdown":
            continue
        first = c.source.splitlines()[0]
        if first.startswith("### "):
            terms[first[4:].replace(" ", "-")] = c.source
    return nb, terms


def test_glossary_has_one_heading_per_term_and_its_links_resolve():
    nb, terms = _glossary()
    assert sorted(terms) == sorted(GLOSSARY_TERMS)
    for term, text in terms.items():
        body = text.split("\n", 2)[2]
        assert "In pagesim:" in body and "](#" in body, f"{term}: the machines that have it, and a link to a related term"
        assert 2 <= len([line for line in body.splitlines() if line.strip()]) <= 8, term
    for c in nb.cells:
        for target in re.findall(r"\]\((#[^)]*)\)", c.source):
            assert target[1:] in terms, target


def test_glossary_names_the_machines_that_have_each_structure():
    """The presets a term's "In pagesim" line names are those whose definitions have it."""
    _, terms = _glossary()
    ms = [machine(n) for n in machines()]
    have = {
        "ERAT": {m.name for m in ms if any("ERAT" in s.name for s in m.structures)},
        "SLB": {m.name for m in ms if m.slb is not None},
        "HPT": {m.name for m in ms if m.walker.kind == "hashed"},
        "PTEG": {m.name for m in ms if m.walker.kind == "hashed"},
        "VSID": {m.name for m in ms if m.walker.kind == "hashed"},
        "segment": {m.name for m in ms if m.walker.kind == "hashed"},
        "TSB": {m.name for m in ms if m.walker.kind == "tsb"},
        "PWC": {m.name for m in ms if m.walker.kind == "radix" and m.walker.pwc},
        "STLB": {m.name for m in ms if any(s.name.startswith("STLB") for s in m.structures)},
    }
    for term, names in have.items():
        line = next(line for line in terms[term].splitlines() if "In pagesim:" in line)
        named = set(re.findall(r"`([a-z0-9+-]+)`", line)) & set(machines())
        assert named == names, (term, named ^ names)
    assert "65,536 groups" in terms["HPT"] and all(m.walker.hpt_ptegs == 65536 for m in ms if m.walker.kind == "hashed")
    assert "32,768 slots" in terms["TSB"] and all(m.walker.tsb_entries == 32768 for m in ms if m.walker.kind == "tsb")
    assert machine("skylake").reach("4K") == 6 << 20 and "6 MiB" in terms["reach"]


def test_the_glossary_runs_and_describes_the_machine_it_is_given(tmp_path):
    """Its parameters cell takes a preset, and its last cell prints that machine's structures."""
    import papermill as pm

    from pagesim.validation.notebooks import notebooks_dir

    out = pm.execute_notebook(
        str(notebooks_dir() / "glossary.ipynb"), str(tmp_path / "out.ipynb"), parameters={"quick": True, "machine_name": "power8"}, progress_bar=False
    )
    text = "".join(o.get("text", "") for o in out.cells[-1].outputs)
    assert text.startswith("power8: ") and "D-ERAT" in text and "SLB" in text
