"""The translation kernel, written as Python source for numba: one writer for every kernel.

numba's compile time grows with the code it types and lowers (a kernel with every path took 11-16
s), so each run gets a kernel holding only what it can use. :func:`specialised` writes one for a
chain shape (``specialize.chain_shape``: per chain position its padded ways, ways, replacement
mode, whether its sets are a power of two, where its tags and recency words start; the walker; the
SLB's and each page-walk cache's shape), with all of that written in as constants, so LLVM unrolls
the way search and compiles nothing of the other modes, walkers or paths. :func:`generic` writes
one that reads the geometry at run time, for what a shape cannot fix: instruction accesses, mixed
page sizes, shared structures (several processes). Both read top to bottom as the model does
(``translate.py`` states it; ``tests/twins/reference.py`` is its plain-Python twin)::

    for each access:
        fast path   the same entry granule as the previous access of its kind: an L1 hit that
                    changes nothing, only counted
        region      the region holding the address (the last one, else a binary search)
        chain       position 0, then on a miss the SLB, position 1, ...: each lookup written by
                    its structure's replacement mode (LOOKUPS), which fills the set on a miss
        walk        the first-touch fault (and fault-around), then the walker's references
                    (WALKS), its page-walk caches included; the walk log if asked for

A replacement mode is a storage (how a set's ways are found: ``scan`` up to 16 ways, or for wider
sets the layout's ``direct`` index, the structure's hash table, ``list``, or ``stamp``) and a
policy (what a hit and a miss do to the set's order: ``policies/``). The state updates the written
code calls live in ``rules.py``, ``sets.py`` and ``walks.py``, numba functions inlined where called.

:func:`nested` writes a virtualised machine's nested replay (``nested.py`` states its model) the
same two ways: the host caches' geometry written in as constants, or one loop reading it at run
time. Its lookups are the translation kernels' (``lookup_scan`` with the LRU policy) for sets of up
to 16 ways, and stamps for wider sets.

A specialised kernel counts in local scalars (one kind, one page size: every counter's index is
known) and returns them; ``run_chunk`` adds them to the arrays. Counting in the arrays, every
increment is a load and a store that LLVM must order against the stores to ``tags`` (a random
trace: 14.5 -> 13.2 ns an access). The fast-path memo and the counts are returned, not stored after
the loop: such stores were lost under numba 0.68.1. A chain position that is one ring-kept set
keeps its ring's head in a local (``hd<j>``), returned the same way: in memory, each miss read the
head the previous miss had just stored (POWER8's random trace over 1 GiB: 13.2 -> 11.4 ns).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from . import policies, rules
from . import translate as K
from .sets import DIRECT_FILL, HASH_FACTOR, RING_NEXT, RING_TOUCH
from .simd import MAX_MIN_LANES

MASK63 = 0x7FFFFFFFFFFFFFFF  # a set mask ANDed with it is known non-negative: LLVM drops the modulo branch
# the modules a kernel calls into: their digests go into its source, so a change there writes a new
# kernel file (numba's cache keys a kernel on its own file only)
_HERE = Path(__file__).parent
_CALLED = [_HERE / n for n in ("rules.py", "sets.py", "simd.py", "walks.py")] + sorted((_HERE / "policies").glob("*.py"))
DIGESTS = [f"# {f.relative_to(_HERE)} {hashlib.sha256(f.read_bytes()).hexdigest()[:20]}" for f in _CALLED]
IMPORTS = [
    "import numpy as np",
    "from pagesim._kernels._jit import jit",
    "from pagesim._kernels.rules import SEGMENT_SHIFT, find_tag, hpt_group, region_of, stamp_victim",
    "from pagesim._kernels.sets import hash_lookup",
    "from pagesim._kernels.simd import find_way, min_way",
    "from pagesim._kernels.walks import NOT_IN_HPT, hpt_insert",
    *sorted({p.IMPORTS for p in policies.REGISTRY} - {""}),
    f"ORDER_LRU, ORDER_FIFO, LIST_LRU, LIST_FIFO, RANDOM_FILL, DIRECT_LRU, DIRECT_FIFO, STAMP_LRU = {K.ORDER_LRU}, {K.ORDER_FIFO}, {K.LIST_LRU}, {K.LIST_FIFO}, {K.RANDOM_FILL}, {K.DIRECT_LRU}, {K.DIRECT_FIFO}, {K.STAMP_LRU}",
]


@dataclass(frozen=True)
class Site:
    """One lookup written into a kernel. Geometry, each a constant (specialised) or an expression
    read at run time (generic): ``p`` padded ways, ``w`` ways, ``mode``, ``setx`` the set index,
    ``sets``, ``b`` and ``o`` where its tags and recency words start. Then the expressions of the
    tag and granule number it looks up, and ``head``: the local holding the ring's head of a
    structure that is one ring-kept set, or None; ``sfx`` keeps this site's temporaries apart."""

    p: int | str
    w: int | str
    mode: int | str
    setx: str
    sets: int | str
    b: int | str
    o: int | str
    tag: str = "tag"
    idx: str = "idx"
    head: str | None = None
    sfx: str = "0"  # ends the names of the temporaries written here


def _place(s: Site) -> list[str]:
    return [f"sx = {s.setx}", f"base = {s.b} + sx * {s.p}", f"osl = {s.o} + sx"]


def _if_hit(touch: list[str], miss: list[str]) -> list[str]:
    """``if hit: touch`` (if any) ``else: miss``."""
    if touch:
        return ["if hit:", *_indent(touch, 4), "else:", *_indent(miss, 4)]
    return ["if not hit:", *_indent(miss, 4)]


def _find(s: Site) -> str:
    """The tag search: one vector compare when the padded ways are a constant (simd.py), else the
    scan in groups of four (a run-time width cannot be vectorised)."""
    return f"hw = find_way(tags, base, {s.p}, {s.tag})" if isinstance(s.p, int) else f"hw = find_tag(tags, base, {s.p}, {s.tag})"


def _each_policy(s: Site, part: str) -> list[str]:
    """The policies' ``touch`` or ``fill`` lines for a mode read at run time, each under its test
    (policies writing the same lines share one; none for a part with no lines)."""
    branches: list[tuple[list, list[str]]] = []
    for p in policies.REGISTRY:
        lines = getattr(p, part)(s)
        same = next((b for b in branches if b[1] == lines), None)
        if same is not None:
            same[0].append(p)
        elif lines:
            branches.append(([p], lines))
    out: list[str] = []
    for i, (ps, lines) in enumerate(branches):
        names = ", ".join(p.NAME for p in ps)
        test = " or ".join(f"{s.mode} == {p.MODE}" for p in ps)
        head = f"{'if' if i == 0 else 'elif'} {test}:  # {names}"
        out += [head, *_indent(lines, 4)]
    return out


def lookup_scan(s: Site) -> list[str]:
    """A set whose tags are scanned (up to 16 ways, or any width its policy allows): the tags
    compared, then the policy's ``touch`` on a hit and ``fill`` on a miss (``policies/``)."""
    if isinstance(s.mode, int):
        p = policies.BY_MODE[s.mode]
        return [*_place(s), _find(s), "hit = hw >= 0", *_if_hit(p.touch(s), p.fill(s))]
    return [*_place(s), _find(s), "hit = hw >= 0", *_if_hit(_each_policy(s, "touch"), _each_policy(s, "fill"))]


def _ring(s: Site, lru: bool | str) -> tuple[list[str], list[str]]:
    """A ring-kept set's hit (LRU: the way moves behind the head; FIFO: nothing) and miss (the head
    way is the victim, the head moves on), the head in a local or in the set's order word."""
    head = s.head or "np.int64(order[np.uint64(osl)])"
    store = [f"{s.head} = nh"] if s.head else ["order[np.uint64(osl)] = np.uint64(nh)"]
    touch = [*RING_TOUCH.lines(s.sfx, links="links", lb="2 * base", head=head, w="hw", out="nh"), *store]
    if lru is not True:
        touch = [f"if {lru}:", *_indent(touch, 4)] if lru else []
    return touch, [f"victim = {head}", *RING_NEXT.lines(s.sfx, links="links", base="base", head="victim", out="nh"), *store]


def lookup_direct(s: Site) -> list[str]:
    """More than 16 ways, found through the layout's direct index (``pos``: a granule's way, or -1),
    kept as a ring: a lookup is one load, a miss two stores."""
    lru = s.mode == K.DIRECT_LRU if isinstance(s.mode, int) else f"{s.mode} == DIRECT_LRU"
    touch, miss = _ring(s, lru)
    fill = DIRECT_FILL.lines(s.sfx, tags="tags", pos="pos", base="base", victim="victim", idx=s.idx)
    return [f"hw = np.int64(pos[np.uint64({s.idx})])", *_place(s), "hit = hw >= 0", *_if_hit(touch, [*miss, *fill])]


def lookup_list(s: Site) -> list[str]:
    """More than 16 ways, found through the structure's own hash table of (tag, way) pairs."""
    lru = s.mode == K.LIST_LRU if isinstance(s.mode, int) else f"{s.mode} == LIST_LRU"
    return [*_place(s), f"hit = hash_lookup(tags, links, order, htab, set_hash[{s.o}], {HASH_FACTOR} * {s.w} * {s.sets}, base, osl, {s.tag}, {lru})"]


def lookup_stamp(s: Site) -> list[str]:
    """A wide LRU structure with a direct index (an SLB): each way's last use stamped, so a hit is
    one store; a miss takes the way with the oldest stamp (empty ways hold -ways..-1)."""
    vector = isinstance(s.p, int) and s.p <= MAX_MIN_LANES
    oldest = f"min_way(links, sb, {s.p})" if vector else f"stamp_victim(links, sb, {s.p}) - sb"
    return [
        f"hw = np.int64(pos[np.uint64({s.idx})])",
        *_place(s),
        "clk = np.int64(order[np.uint64(osl)]) + 1",
        "order[np.uint64(osl)] = np.uint64(clk)",
        "sb = 2 * base",
        "hit = hw >= 0",
        *_if_hit(
            ["links[np.uint64(sb + hw)] = clk"],
            [
                f"victim = {oldest}",
                *DIRECT_FILL.lines(s.sfx, tags="tags", pos="pos", base="base", victim="victim", idx=s.idx),
                "links[np.uint64(sb + victim)] = clk",
            ],
        ),
    ]


LOOKUPS = {
    **{p.MODE: lookup_scan for p in policies.REGISTRY},
    K.DIRECT_LRU: lookup_direct,
    K.DIRECT_FIFO: lookup_direct,
    K.LIST_LRU: lookup_list,
    K.LIST_FIFO: lookup_list,
    K.STAMP_LRU: lookup_stamp,
}


def lookup(s: Site) -> list[str]:
    """The lines of one lookup, setting ``hit``: the mode's own, or (a mode read at run time) each
    storage's under its test."""
    if isinstance(s.mode, int):
        return LOOKUPS[s.mode](s)
    d = s.mode
    return [
        f"if {d} == LIST_LRU or {d} == LIST_FIFO:",
        *_indent(lookup_list(s), 4),
        f"elif {d} == DIRECT_LRU or {d} == DIRECT_FIFO:",
        *_indent(lookup_direct(s), 4),
        f"elif {d} == STAMP_LRU:",
        *_indent(lookup_stamp(s), 4),
        "else:",
        *_indent(lookup_scan(s), 4),
    ]


def _indent(lines: list[str], n: int) -> list[str]:
    return [" " * n + x if x else x for x in lines]


def _setx(pow2: int | None, one_set: bool, m: str, n: str, key: str = "key") -> str:
    """The set index: 0 for one set, a mask for a power of two, a modulo otherwise, or (``pow2``
    None: known at run time) the mask when it is not negative."""
    if one_set:
        return "0"
    if pow2 is None:
        return f"{key} & {m} if {m} >= 0 else {key} % {n}"
    return f"{key} & {m}" if pow2 else f"{key} % {n}"


class Counts:
    """Where the written code counts: local scalars (specialised) or the counter arrays (generic)."""

    def __init__(self, local: bool):
        self.local = local

    def add(self, name: str, what: str = "1") -> str:
        local = {
            "walk": "c_walk",
            "fault": "c_fault",
            "refs": "c_refs",
            "slb_hit": "c_slbh",
            "slb_miss": "c_slbm",
            "tsb_hit": "c_tsbh",
            "hpt_sec": "c_hsec",
            "pref": "c_pref",
        }
        arrays = {
            "walk": "resolved[k, z, L]",
            "fault": "faults[z]",
            "refs": "walk_refs[k, z]",
            "slb_hit": "hits[slb_struct, z]",
            "slb_miss": "misses[slb_struct, z]",
            "tsb_hit": "tsb_hits[k, z]",
            "hpt_sec": "hpt_secondary[z]",
            "pref": "prefaulted[z]",
        }
        return f"{(local if self.local else arrays)[name]} += {what}"


# ------------------------------------------------------------------------------------------ walks


def walk_radix(ctx) -> list[str]:
    """The levels below the leaf, less the levels the deepest hitting page-walk cache skips (every
    cache that applies is looked up and filled). Specialised: a cache's lookup is skipped when its
    key is the one it looked up last (that entry is its most recent: the hit changes nothing under
    LRU, FIFO, random or tree pseudo-LRU, and is only counted; a random trace over 1 GiB on Skylake, whose two upper
    caches then always hit: 20.4 -> 11.9 ns an access)."""
    shape = ctx.shape
    if shape is None:  # generic: the caches read at run time
        if not ctx.pwc:
            return ["wr = radix_refs[z]"]
        site = Site(
            "st_pways[s]",
            "st_ways[s]",
            "st_mode[s]",
            _setx(None, False, "st_mask[s]", "st_sets[s]"),
            "st_sets[s]",
            "st_base[s]",
            "st_obase[s]",
            tag="key * 16",
            idx="0",
            sfx="q",
        )
        return [
            "refs = radix_refs[z]",
            "best = 0",
            "for q in range(npwc):",
            "    skip = pwc_skip[q]",
            "    if skip < refs:",
            "        s = pwc_struct[q]",
            "        key = a >> tag_shift[s, 0]",
            *_indent(lookup(site), 8),
            "        if hit:",
            "            hits[s, z] += 1",
            "            if skip > best:",
            "                best = skip",
            "        else:",
            "            misses[s, z] += 1",
            "wr = refs - best",
        ]
    out = ["refs = q_refs", "best = 0"]
    for q, (p, w, d, pow2, sets, _b, _o, _skip, _shift) in enumerate(shape[3]):
        site = Site(p, w, d, _setx(pow2, sets == 1, f"q{q}_m", f"q{q}_n"), sets, f"q{q}_b", f"q{q}_o", tag="key * 16", idx="0", sfx=f"q{q}")
        out += [
            f"if q{q}_skip < refs:",
            f"    key = a >> q{q}_h",
            "    qhit = True",
            f"    if key != q{q}_k:",
            *_indent(lookup(site), 8),
            "        qhit = hit",
            f"        q{q}_k = key",
            "    if qhit:",
            f"        c_q{q}h += 1",
            f"        if q{q}_skip > best:",
            f"            best = q{q}_skip",
            "    else:",
            f"        c_q{q}m += 1",
        ]
    return out + ["wr = refs - best"]


def walk_hashed(ctx) -> list[str]:
    """1 reference in the primary group, 2 in the secondary; a page not in the table (first touch,
    or evicted) is inserted, 2 references."""
    return [
        "where = np.int64(page_hpt[np.uint64(gid)])",
        "if where == NOT_IN_HPT:",
        "    if not faulted:",
        "        hpt_events[1] += 1  # a refill: the page was mapped, its entry evicted",
        "    hpt_insert(gid, hpt_group(a, rps, hpt_mask), hpt_mask, hpt_slots, hpt_rr, page_hpt, hpt_events)",
        "    wr = 2",
        "else:",
        "    wr = where",
        "    " + ctx.counts.add("hpt_sec", "where - 1"),
    ]


def walk_tsb(ctx) -> list[str]:
    """The TSB probe with no branch on its outcome (on a random trace it is a coin toss): the slot is
    written whether or not it held the page; 1 reference, plus the software walk's on a miss."""
    out = [
        "vpn = a >> rps",
        "slot = z * (tsb_mask + 1) + (vpn & tsb_mask)",
        "tsb_hit = np.int64(tsb[np.uint64(slot)] == vpn)",
        "tsb[np.uint64(slot)] = vpn",
        ctx.counts.add("tsb_hit", "tsb_hit"),
    ]
    if not ctx.counts.local:  # specialised: the misses are the walks that did not hit (run_chunk)
        out.append("tsb_misses[k, z] += 1 - tsb_hit")
    return out + ["wr = 1 + sw_walk_refs * (1 - tsb_hit)"]


def walk_vhpt(ctx) -> list[str]:
    """The short-format VHPT: one reference."""
    return ["wr = 1"]


WALKS = {rules.RADIX: walk_radix, rules.HASHED: walk_hashed, rules.TSB: walk_tsb, rules.VHPT: walk_vhpt}


def _fault(ctx) -> list[str]:
    """The page's first walk is its fault: its bit in ``mapped`` set (with fault-around, the group of
    ``fa`` pages around it, aligned, within the region; ``page_state`` 2 marks a page mapped but
    not yet touched, whose first touch is then no fault)."""
    c = ctx.counts
    out = [
        "gid = rb + ((a - rs) >> rps)",
        "faulted = False",
        "word = mapped[np.uint64(gid >> 6)]",
        "bit = np.uint64(1) << np.uint64(gid & 63)",
        "if (word & bit) == 0:",
        "    " + c.add("fault"),
        "    faulted = True",
    ]
    if not ctx.any_fa:
        return out + ["    mapped[np.uint64(gid >> 6)] = word | bit"]
    return out + [
        "    fa = reg_fa[lo]",
        "    if fa == 1:",
        "        mapped[np.uint64(gid >> 6)] = word | bit",
        "        page_state[gid] = 1",
        "    else:",
        "        first = reg_base[lo]",
        "        last = first + ((reg_end[lo] - reg_start[lo]) >> rps)",
        "        grp = gid - ((a >> rps) & (fa - 1))",
        "        for q in range(max(grp, first), min(grp + fa, last)):",
        "            qb = np.uint64(1) << np.uint64(q & 63)",
        "            if (mapped[q >> 6] & qb) == 0:",
        "                mapped[q >> 6] |= qb",
        "                if q != gid:",
        "                    page_state[q] = 2",
        "                    " + c.add("pref"),
        "        page_state[gid] = 1",
        "elif page_state[gid] == 2:",
        "    page_state[gid] = 1  # first touch of a prefaulted page: no fault",
    ]


LOG = ["q = wlog_n[0]", "wlog[q] = a", "wlog[q + 1] = wr * 16 + reg_class[lo]", "wlog[q + 2] = i", "wlog_n[0] = q + 3"]


@dataclass
class Ctx:
    """What a kernel is written for: a shape (specialised) or None (generic); the walker, whether
    a region maps several pages a fault, the walk log, and (generic) the longest chain, whether
    there is an SLB and page-walk caches."""

    shape: tuple | None
    walk_kind: int
    any_fa: bool
    log_walks: bool
    depth: int
    slb: bool
    pwc: bool
    counts: Counts


def _walk(ctx) -> list[str]:
    """The lines run on a miss everywhere: fault, walk, its references counted, the log."""
    return [ctx.counts.add("walk"), *_fault(ctx), *WALKS[ctx.walk_kind](ctx), ctx.counts.add("refs", "wr"), *(LOG if ctx.log_walks else [])]


def _arrays(ctx) -> list[str]:
    """The arrays taken out of the tuples once (reading ``cfg.x`` in the loop costs a reference-count
    round trip per read)."""
    out = [
        "tags, links, order, htab, pos, rng = st.tags, st.links, st.order, st.htab, st.pos, st.rng",
        "mapped, page_state = st.mapped, st.page_state",
        "reg_start, reg_end, reg_size, reg_base, reg_fa, page_shift = cfg.reg_start, cfg.reg_end, cfg.reg_size, cfg.reg_base, cfg.reg_fa, cfg.page_shift",
        "st_sets, st_ways, st_mask, st_mode, st_base, st_pways, st_obase = cfg.st_sets, cfg.st_ways, cfg.st_mask, cfg.st_mode, cfg.st_base, cfg.st_pways, cfg.st_obase",
        "set_hash, tag_shift, idx_off, chain = cfg.set_hash, cfg.tag_shift, cfg.idx_off, cfg.chain",
    ]
    if ctx.walk_kind == rules.HASHED:
        out += ["page_hpt, hpt_slots, hpt_rr, hpt_events = st.page_hpt, st.hpt_slots, st.hpt_rr, cnt.hpt_events", "hpt_mask = cfg.hpt_mask[0]"]
    if ctx.walk_kind == rules.TSB:
        out += ["tsb = st.tsb", "tsb_mask = cfg.tsb_mask[0]", "sw_walk_refs = cfg.sw_walk_refs[0]"]
    if ctx.log_walks:
        out += ["wlog, wlog_n, reg_class = st.wlog, st.wlog_n, cfg.reg_class"]
    return out


def _module(doc: str, kernel: list[str], run_chunk: list[str], imports: list[str] = ()) -> str:
    return "\n".join([f'"""{doc} Do not edit."""', *DIGESTS, *IMPORTS, *imports, "", "", "@jit", *kernel, "", "", *run_chunk, ""])


# ------------------------------------------------------------------------------------ specialised


def specialised_counters(shape) -> list[tuple[str, str]]:
    """A specialised kernel's local counts, and the counter each goes to in ``run_chunk``."""
    chain, walk_kind, slb, pwcs, any_fa, _log = shape
    out = [(f"c_res{j}", f"cnt.resolved[0, z, {j}]") for j in range(len(chain))]
    out += [("c_walk", "cnt.resolved[0, z, cfg.chain.shape[2]]"), ("c_fault", "cnt.faults[z]"), ("c_refs", "cnt.walk_refs[0, z]")]
    if slb is not None:
        out += [("c_slbh", "cnt.hits[cfg.slb_struct[0], z]"), ("c_slbm", "cnt.misses[cfg.slb_struct[0], z]")]
    for q in range(len(pwcs)):
        out += [(f"c_q{q}h", f"cnt.hits[cfg.pwc_struct[{q}], z]"), (f"c_q{q}m", f"cnt.misses[cfg.pwc_struct[{q}], z]")]
    if walk_kind == rules.TSB:
        out += [("c_tsbh", "cnt.tsb_hits[0, z]")]
    if walk_kind == rules.HASHED:
        out += [("c_hsec", "cnt.hpt_secondary[z]")]
    if any_fa:
        out += [("c_pref", "cnt.prefaulted[z]")]
    return out


def _specialised_chain(ctx) -> list[str]:
    """The chain's lookups, nested: position j + 1 only on a miss at j, the SLB after a miss at 0."""
    chain, _walk, slb, _pwcs, _fa, _log = ctx.shape
    nc = len(chain)
    out: list[str] = [f"j = {nc}"]
    depth = 0
    for j, (p, w, d, pow2, b, o, one) in enumerate(chain):
        site = Site(p, w, d, _setx(pow2, bool(one), f"m{j}", f"n{j}"), f"n{j}", b, o, head=f"hd{j}" if one else None, sfx=str(j))
        # a directly indexed structure looks the granule's number up, any other the tag
        found_by = f"idx = key + e{j}" if d in (K.DIRECT_LRU, K.DIRECT_FIFO, K.STAMP_LRU) else "tag = key * 16 + z"
        block = [f"key = a >> h{j}", found_by, *lookup(site), "if hit:", f"    j = {j}", f"    c_res{j} += 1"]
        more = j + 1 < nc or (j == 0 and slb is not None)
        out += _indent(block + (["else:"] if more else []), depth)
        depth += 4
        if j == 0 and slb is not None:
            sp, sw, sd, spow2, ssets, _sb, _so = slb
            ssite = Site(sp, sw, sd, _setx(spow2, ssets == 1, "slb_m", "slb_n", "skey"), ssets, "slb_b", "slb_o", tag="skey * 16", idx="skey + es", sfx="s")
            out += _indent(["skey = a >> SEGMENT_SHIFT", *lookup(ssite), "if hit:", "    c_slbh += 1", "else:", "    c_slbm += 1"], depth)
    return out


def specialised(shape) -> str:
    """The kernel module for a chain shape: data accesses to one page size (see the module's docstring)."""
    chain, walk_kind, slb, pwcs, any_fa, log_walks = shape
    ctx = Ctx(shape, walk_kind, bool(any_fa), bool(log_walks), len(chain), slb is not None, len(pwcs) > 0, Counts(local=True))
    nc = len(chain)
    ring1 = [j for j in range(nc) if chain[j][6]]
    counts = specialised_counters(shape)
    names = [c for c, _ in counts]
    pre = [*_arrays(ctx), "z = reg_size[0]  # one page size", "rps = page_shift[z]"]
    if walk_kind == rules.RADIX:
        pre += ["q_refs = cfg.radix_refs[z]"]
    pre += ["# the chain's positions (what the shape fixes is written in below as constants)"]
    for j, (_p, _w, _d, pow2, _b, _o, _one) in enumerate(chain):
        pre += [f"s{j} = chain[0, z, {j}]", f"h{j} = tag_shift[s{j}, z]", f"e{j} = idx_off[s{j}, 0]", f"n{j} = st_sets[s{j}]"]
        pre += [f"m{j} = st_mask[s{j}] & {MASK63}"] if pow2 else []
    if slb is not None:
        _, _, _, pow2, sets, b, o = slb
        pre += ["slb = cfg.slb_struct[0]", "es = idx_off[slb, 0]", f"slb_m = {sets - 1 if pow2 else -1}", f"slb_n = {sets}", f"slb_b = {b}", f"slb_o = {o}"]
    for q, (_p, _w, _d, pow2, sets, b, o, skip, shift) in enumerate(pwcs):
        pre += [
            f"q{q}_skip = {skip}",
            f"q{q}_h = {shift}",
            f"q{q}_m = {sets - 1 if pow2 else -1}",
            f"q{q}_n = {sets}",
            f"q{q}_b = {b}",
            f"q{q}_o = {o}",
            f"q{q}_k = -1",
        ]
    pre += [f"hd{j} = np.int64(order[np.uint64({chain[j][5]})])" for j in ring1]
    pre += [f"{c} = 0" for c in names]
    pre += [
        "# the current region in locals: held in arrays, every store to tags could alias them",
        "lo = 0",
        "rs = reg_start[0]",
        "rlen = np.uint64(reg_end[0] - rs)",
        "rb = reg_base[0]",
        "bad = -1",
        "a0, f0, g0, r0 = st.memo_addr[0], st.memo_shift[0], st.memo_z[0], st.run[0]",
        "n = addrs.shape[0]",
    ]
    if nc > 0:
        # every slow access leaves a valid address in the memo, so only the empty memo (-1, shift 0)
        # can match a negative address: checked here, so the fast path has no sign test
        pre += ["if a0 == -1 and n > 0 and addrs[0] < 0:", "    bad = 0", "    n = 0"]
    fast = "((a ^ a0) >> f0) == 0" if nc > 0 else "(((a ^ a0) | (a >> 63)) >> f0) == 0"
    loop = [
        "a = addrs[i]",
        f"if {fast}:  # fast path",
        "    r0 += 1",
        "    continue",
        "if r0:",
        "    " + ("c_res0 += r0" if nc else "cnt.resolved[0, g0, 0] += r0"),
        "    r0 = 0",
        "if np.uint64(a - rs) >= rlen:  # another region (a negative address is outside every one)",
        "    lo = region_of(a, reg_start)",
        "    if not (reg_start[lo] <= a and a < reg_end[lo]):",
        "        a0 = -1",
        "        f0 = 0",
        "        bad = i",
        "        break",
        "    rs = reg_start[lo]",
        "    rlen = np.uint64(reg_end[lo] - rs)",
        "    rb = reg_base[lo]",
        *[f"    e{j} = idx_off[s{j}, lo]" for j in range(nc)],
        *(["    es = idx_off[slb, lo]"] if slb is not None else []),
        *_specialised_chain(ctx),
        f"if j == {nc}:  # a miss everywhere: a walk",
        *_indent(_walk(ctx), 4),
        "a0, f0, g0 = a, h0, z" if nc else "a0, f0 = -1, 0",
    ]
    heads = "".join(f"hd{j}, " for j in ring1)
    kernel = [
        "def translate_chunk(addrs, kinds, cfg, st, cnt):",
        '    """Simulate ``addrs`` (data accesses to one page size) up to the first address outside every',
        '    region. Returns (its index or -1, the fast-path memo, the ring heads, the counts)."""',
        *_indent(pre, 4),
        "    for i in range(n):",
        *_indent(loop, 8),
        f"    return bad, a0, f0, g0, r0, ({heads}), ({', '.join(names)},)",
    ]
    run = [
        "def run_chunk(addrs, kinds, cfg, st, cnt) -> int:",
        '    """Simulate one chunk; keep the fast-path memo and ring heads in ``st``, add the counts to ``cnt``."""',
        "    bad, a0, f0, g0, r0, hd, c = translate_chunk(addrs, kinds, cfg, st, cnt)",
        "    st.memo_addr[0], st.memo_shift[0], st.memo_z[0], st.run[0] = a0, f0, g0, r0",
        *[f"    st.order[{chain[j][5]}] = hd[{i}]" for i, j in enumerate(ring1)],
        "    z = int(cfg.reg_size[0])",
        "    # each count added only when not zero: a numpy element update costs about a microsecond",
        *[f"    if c[{i}]:\n        {dest} += c[{i}]" for i, (_, dest) in enumerate(counts)],
    ]
    if walk_kind == rules.TSB:  # every walk probes the TSB: its misses are the walks that did not hit
        w, t = names.index("c_walk"), names.index("c_tsbh")
        run += [f"    if c[{w}] - c[{t}]:", f"        cnt.tsb_misses[0, z] += c[{w}] - c[{t}]"]
    run += ["    return bad"]
    return _module(f"Written by pagesim._kernels.writer for the chain shape {shape}.", kernel, run)


# ---------------------------------------------------------------------------------------- generic


def _generic_chain(ctx) -> list[str]:
    out: list[str] = ["j = nc", "if nc > 0:"]
    depth = 4
    for j in range(ctx.depth):
        site = Site(f"p{j}", f"w{j}", f"d{j}", _setx(None, False, f"m{j}", f"n{j}"), f"n{j}", f"b{j}", f"o{j}", sfx=str(j))
        block = [f"key = a >> h{j}", "tag = key * 16 + z", f"idx = key + e{j}", *lookup(site), "if hit:", f"    j = {j}"]
        more = j + 1 < ctx.depth or (j == 0 and ctx.slb)
        out += _indent(block + (["else:"] if more else []), depth)
        depth += 4
        if j == 0 and ctx.slb:
            ssite = Site(
                "slb_p", "slb_w", "slb_d", _setx(None, False, "slb_m", "slb_n", "skey"), "slb_n", "slb_b", "slb_o", tag="skey * 16", idx="skey + es", sfx="s"
            )
            out += _indent(
                [
                    "if slb_struct >= 0:",
                    "    skey = a >> SEGMENT_SHIFT",
                    *_indent(lookup(ssite), 4),
                    "    if hit:",
                    "        hits[slb_struct, z] += 1",
                    "    else:",
                    "        misses[slb_struct, z] += 1",
                ],
                depth,
            )
        if j + 1 < ctx.depth:
            out += _indent([f"if nc > {j + 1}:"], depth)
            depth += 4
    return out


def generic(walk_kind: int, any_fa: bool, log_walks: bool, depth: int = K.MAX_CHAIN, slb: bool = True, pwc: bool = True) -> str:
    """The kernel module that reads each structure's geometry at run time, for a walker, with or
    without fault-around and the walk log, chains up to ``depth``, with or without an SLB and
    page-walk caches (each lookup written costs about 1 s of compile)."""
    ctx = Ctx(None, walk_kind, bool(any_fa), bool(log_walks), max(1, depth), slb, pwc, Counts(local=False))
    pre = [
        *_arrays(ctx),
        "resolved, hits, misses, walk_refs = cnt.resolved, cnt.hits, cnt.misses, cnt.walk_refs",
        "tsb_hits, tsb_misses, faults, hpt_secondary, prefaulted = cnt.tsb_hits, cnt.tsb_misses, cnt.faults, cnt.hpt_secondary, cnt.prefaulted",
        "radix_refs, pwc_struct, pwc_skip = cfg.radix_refs, cfg.pwc_struct, cfg.pwc_skip",
        "npwc = pwc_struct.shape[0]",
        "shared = cfg.shared_first[0] != 0  # a structure first in one kind's chains is in the other's",
        "all_data = kinds.shape[0] == 0",
        "L = chain.shape[2]",
        "slb_struct = cfg.slb_struct[0]",
        "sl = max(slb_struct, 0)",
        "slb_m, slb_n, slb_p, slb_b, slb_o, slb_w, slb_d = st_mask[sl], st_sets[sl], st_pways[sl], st_base[sl], st_obase[sl], st_ways[sl], st_mode[sl]",
        "# the current region in locals: held in arrays, every store to tags could alias them",
        "lo = 0",
        "rs = reg_start[0]",
        "rlen = np.uint64(reg_end[0] - rs)",
        "rb = reg_base[0]",
        "z = reg_size[0]",
        "rps = page_shift[z]",
        "es = idx_off[sl, 0]",
        "# the current chain's geometry in locals, reloaded when the (kind, page size) pair changes",
        "cur_k = -1",
        "cur_z = -1",
        "nc = 0",
    ]
    for j in range(ctx.depth):
        pre += [f"s{j} = -1", f"h{j} = m{j} = b{j} = o{j} = d{j} = e{j} = 0", f"n{j} = w{j} = 1", f"p{j} = 4"]
    pre += [
        "bad = -1",
        "a0, f0, g0, r0 = st.memo_addr[0], st.memo_shift[0], st.memo_z[0], st.run[0]",
        "a1, f1, g1, r1 = st.memo_addr[1], st.memo_shift[1], st.memo_z[1], st.run[1]",
        "n = addrs.shape[0]",
    ]
    reload = ["cur_k = k", "cur_z = z", "nc = 0", "while nc < L and chain[k, z, nc] >= 0:", "    nc += 1"]
    for j in range(ctx.depth):
        reload += [
            f"if nc > {j}:",
            f"    s{j} = chain[k, z, {j}]",
            f"    h{j}, m{j}, n{j}, p{j}, b{j}, o{j}, w{j}, d{j} = tag_shift[s{j}, z], st_mask[s{j}], st_sets[s{j}], st_pways[s{j}], st_base[s{j}], st_obase[s{j}], st_ways[s{j}], st_mode[s{j}]",
            f"    e{j} = idx_off[s{j}, lo]",
        ]
    loop = [
        "a = addrs[i]",
        "k = 0 if all_data else np.int64(kinds[i])",
        "# fast path: the same entry granule as the previous access of its kind (an address of 2**63",
        "# or above is negative here: | (a >> 63) sends it to the slow path, where no region holds it)",
        "if k == 0:",
        "    if (((a ^ a0) | (a >> 63)) >> f0) == 0:",
        "        r0 += 1",
        "        continue",
        "elif (((a ^ a1) | (a >> 63)) >> f1) == 0:",
        "    r1 += 1",
        "    continue",
        "if r0 and (k == 0 or shared):",
        "    resolved[0, g0, 0] += r0",
        "    r0 = 0",
        "if r1 and (k == 1 or shared):",
        "    resolved[1, g1, 0] += r1",
        "    r1 = 0",
        "if shared:  # a slow access of one kind may change what the other kind's fast path relies on",
        "    if k == 0:",
        "        a1 = -1",
        "        f1 = 0",
        "    else:",
        "        a0 = -1",
        "        f0 = 0",
        "if np.uint64(a - rs) >= rlen:  # another region (a negative address is outside every one)",
        "    lo = region_of(a, reg_start)",
        "    if not (reg_start[lo] <= a and a < reg_end[lo]):",
        "        if k == 0:",
        "            a0 = -1",
        "            f0 = 0",
        "        else:",
        "            a1 = -1",
        "            f1 = 0",
        "        bad = i",
        "        break",
        "    rs = reg_start[lo]",
        "    rlen = np.uint64(reg_end[lo] - rs)",
        "    rb = reg_base[lo]",
        "    z = reg_size[lo]",
        "    rps = page_shift[z]",
        *[f"    e{j} = idx_off[max(s{j}, 0), lo]" for j in range(ctx.depth)],
        "    es = idx_off[sl, lo]",
        "if k != cur_k or z != cur_z:",
        *_indent(reload, 4),
        *_generic_chain(ctx),
        "if j < nc:",
        "    resolved[k, z, j] += 1",
        "else:  # a miss everywhere: a walk",
        *_indent(_walk(ctx), 4),
        "if k == 0:",
        "    if nc > 0:",
        "        a0, f0, g0 = a, h0, z",
        "    else:",
        "        a0, f0 = -1, 0",
        "elif nc > 0:",
        "    a1, f1, g1 = a, h0, z",
        "else:",
        "    a1, f1 = -1, 0",
    ]
    kernel = [
        "def translate_chunk(addrs, kinds, cfg, st, cnt):",
        '    """Simulate ``addrs`` (``kinds``: 0 data, 1 instruction, or empty for all data) up to the',
        '    first address outside every region. Returns (its index or -1, the fast-path memo)."""',
        *_indent(pre, 4),
        "    for i in range(n):",
        *_indent(loop, 8),
        "    return bad, a0, f0, g0, r0, a1, f1, g1, r1",
    ]
    run = [
        "def run_chunk(addrs, kinds, cfg, st, cnt) -> int:",
        '    """Simulate one chunk and keep the fast-path memo in ``st``."""',
        "    bad, a0, f0, g0, r0, a1, f1, g1, r1 = translate_chunk(addrs, kinds, cfg, st, cnt)",
        "    st.memo_addr[:] = (a0, a1)",
        "    st.memo_shift[:] = (f0, f1)",
        "    st.memo_z[:] = (g0, g1)",
        "    st.run[:] = (r0, r1)",
        "    return bad",
    ]
    what = f"walker {walk_kind}, fault-around {bool(any_fa)}, walk log {bool(log_walks)}, depth {ctx.depth}, SLB {slb}, page-walk caches {pwc}"
    return _module(f"Written by pagesim._kernels.writer: the generic kernel for {what}.", kernel, run)


# ----------------------------------------------------------------------------------- nested replay

NESTED_PARAMS = (
    "wlog, nlog, kinds, g_shift, g_bits, g_leaf, t_frame_bits, page_shift, d_frame_bits, d_area, d_levels, d_shift, ram_bits, host_levels, ntlb, hc, cnt"
)


def _host_lookup(s: Site, wide: bool | str) -> list[str]:
    """One host cache's lookup of ``key``, setting ``hit``: sets of up to 16 ways as the LRU
    policy's scan (``policies/lru.py``); wider sets by stamps (each way's last use, ``clock``
    counting the lookups; the way with the smallest stamp, the lowest on a tie, is the victim, so
    empty ways fill first, lowest first). ``wide``: a constant, or the test read at run time."""
    scan = lookup_scan(s)
    victim = f"min_way(stamps, base, {s.w})" if isinstance(s.w, int) and s.w <= MAX_MIN_LANES else f"stamp_victim(stamps, base, {s.w}) - base"
    stamp = [
        *_place(s),
        _find(s),
        "hit = hw >= 0",
        "clock += 1",
        *_if_hit(["stamps[base + hw] = clock"], [f"victim = {victim}", "tags[base + victim] = key", "stamps[base + victim] = clock"]),
    ]
    if wide is True:
        return stamp
    if wide is False:
        return scan
    return [f"if {wide}:", *_indent(stamp, 4), "else:", *_indent(scan, 4)]


def _host_cache(ntlb: int, q: str, site: Site, wide, skip: str, last: str, shift: str) -> list[str]:
    """The lookup of a host cache in one translation (the nested TLB's key is ``nkey``, a page-walk
    cache's ``g >> shift``; ``q``: a page-walk cache's index among them), with its ``last`` key
    memo (the key it looked up last is its most recent entry: a hit that changes nothing) and its
    counters; a nested TLB hit ends the translation (``walks`` false), a page-walk cache hit raises
    ``best`` to the levels it skips."""
    memo = [f"hit = key == {last}", "if not hit:", f"    {last} = key", *_indent(_host_lookup(site, wide), 4)]
    if ntlb:
        return ["key = nkey", *memo, "if hit:", "    ntlb_hits[z] += 1", "    walks = False", "else:", "    ntlb_misses[z] += 1"]
    return [
        f"key = g >> {shift}",
        *memo,
        "if hit:",
        f"    pwc_hits[{q}, z] += 1",
        f"    if {skip} > best:",
        f"        best = {skip}",
        "else:",
        f"    pwc_misses[{q}, z] += 1",
    ]


def _lane_cache(q: str, sets: int, ways: int, skip: int, wbase: int, last: str, shift: str) -> list[str]:
    """The lookup of a host page-walk cache kept as LRU lists in one word a set (``rules.lane_lookup``,
    ``wbase`` where its sets start in ``words``), branch free: a hit or a miss runs the same lines,
    so an outcome that cannot be predicted costs no mispredicted branch. A cache of one set keeps
    its ``last`` key memo (every lookup of it depends on the one before; a repeated key skips it)."""
    setx = _setx(sets & (sets - 1) == 0, sets == 1, str(sets - 1), str(sets))
    body = [f"osl = {wbase} + ({setx})", "wd = words[osl]", *rules.LANE_LOOKUP.lines(f"l{q}", w="wd", key="key", ways=str(ways), hit="hit", out="words[osl]")]
    look = [f"hit = key == {last}", "if not hit:", f"    {last} = key", *_indent(body, 4)] if sets == 1 else body
    return [
        f"key = g >> {shift}",
        *look,
        f"pwc_hits[{q}, z] += np.int64(hit)",
        f"pwc_misses[{q}, z] += 1 - np.int64(hit)",
        f"best = {skip} if hit and {skip} > best else best",
    ]


def nested(shape) -> str:
    """The nested replay's module (``nested.py`` states the model and its arguments): for ``shape``
    (1 with a nested TLB first, else 0; then each host cache's (sets, ways, levels skipped, kept
    as lane lists); then each guest level's (shift, bits)) with that geometry written in as
    constants, or for ``shape`` None one loop over the caches and the walk's steps reading it at
    run time (a table's frame bits, which follow guest RAM, are read at run time either way).
    Constants let LLVM unroll the way search and keep each cache's last key in a register: the
    random trace of ``benchmarks/bench_nested.py`` on Skylake's host caches replayed its walks
    about 2-3x faster than with the geometry read at run time; a page-walk cache of up to 4 ways
    whose keys fit 16 bits is kept as lane lists and looked up branch free (:func:`_lane_cache`),
    about a third faster again on that trace; one block of lookups a guest level, with that
    level's shifts written in, about a fifth less time a walk again (each level's lookups are
    branches of their own, whose outcomes differ by level: docs/speed.md)."""
    pre = [
        "c_sets, c_mask, c_ways, c_pways, c_base, c_sbase = hc.sets, hc.mask, hc.ways, hc.pways, hc.base, hc.sbase",
        "c_shift, c_skip, last, tags, order, stamps = hc.shift, hc.skip, hc.last, hc.tags, hc.orders, hc.stamps",
        "host_refs, ntlb_hits, ntlb_misses, pwc_hits, pwc_misses = cnt.host_refs, cnt.ntlb_hits, cnt.ntlb_misses, cnt.pwc_hits, cnt.pwc_misses",
        "ncache = c_sets.shape[0]",
        "clock = hc.clock[0]",
        "all_data = kinds.shape[0] == 0",
    ]
    if shape is None:
        site = Site(
            "c_pways[c]",
            "c_ways[c]",
            K.ORDER_LRU,
            _setx(None, False, "c_mask[c]", "c_sets[c]"),
            "c_sets[c]",
            "c_base[c]",
            "c_sbase[c]",
            tag="key",
            sfx="c",
        )
        caches = [
            "for c in range(ncache):",
            "    if c < ntlb:",
            *_indent(_host_cache(1, "", site, "c_ways[c] > 16", "c_skip[c]", "last[c]", "c_shift[c]"), 8),
            "        if not walks:",
            "            break",
            "    elif c_skip[c] < levels:",
            *_indent(_host_cache(0, "c - ntlb", site, "c_ways[c] > 16", "c_skip[c]", "last[c]", "c_shift[c]"), 8),
        ]
        post: list[str] = []
        what = "the generic nested replay (host caches read at run time)"
    else:
        has_ntlb, geo = shape[0], shape[1]
        caches, post, base, sbase, wbase = [], [], 0, 0, 0
        pre.append("words = hc.words")
        for c, (sets, ways, skip, lanes) in enumerate(geo):
            pways = -(-ways // 4) * 4
            pre += [f"sh{c} = c_shift[{c}]", f"last{c} = last[{c}]"]
            post += [f"last[{c}] = last{c}"]
            if lanes:
                block = _lane_cache(str(c - has_ntlb), sets, ways, skip, wbase, f"last{c}", f"sh{c}")
                wbase += sets
            else:
                site = Site(
                    pways, ways, K.ORDER_LRU, _setx(sets & (sets - 1) == 0, sets == 1, str(sets - 1), str(sets)), sets, base, sbase, tag="key", sfx=str(c)
                )
                block = _host_cache(1 if c < has_ntlb else 0, str(c - has_ntlb), site, ways > 16, str(skip), f"last{c}", f"sh{c}")
            caches += block if c < has_ntlb else [f"if walks and {skip} < levels:", *_indent(block, 4)]
            base += sets * pways
            sbase += sets
        what = f"the nested replay for the host caches and guest levels {shape}"
    head = [
        "a = wlog[q]",
        "rz = wlog[q + 1]",
        "i = wlog[q + 2]",
        "q += 3",
        "r = rz >> 4",
        "z = rz & 15",
        "k = 0 if all_data else np.int64(kinds[i])",
        "top = g_leaf[z]",
        "total = 0",
    ]
    data = [
        "ps = page_shift[z]",
        "ar = d_area[z]",
        "g = (ar << ram_bits) | (guest_frame(a >> ps, 0, d_frame_bits[z]) << ps) | (a & ((1 << ps) - 1))",
        "levels = d_levels[z]",
        "nkey = (g >> d_shift[z]) | (ar << 56)",
    ]
    lookups = ["best = 0", "walks = True", *caches, "if walks:", "    total += levels - best"]
    if shape is None:
        entry = [
            "lv = top - r + 1 + step",
            "t = a >> (g_shift[lv] + g_bits[lv])",
            "e = (a >> g_shift[lv]) & ((1 << g_bits[lv]) - 1)",
            "g = (guest_frame(t, lv + 1, t_frame_bits[lv]) << (3 + g_bits[lv])) | (e << 3)",
            "levels = host_levels",
            "nkey = g >> c_shift[0] if ntlb else 0",
        ]
        steps = [
            "for step in range(r + 1):",
            "    if step < r:  # the entry of guest level lv, top first",
            *_indent(entry, 8),
            "    else:  # the data",
            *_indent(data, 8),
            *_indent(lookups, 4),
        ]
    else:
        # one block a guest level, its geometry written in (the levels top - r + 1 .. top, top first)
        steps = ["lo = top - r + 1"]
        for lv, (gs, gb) in enumerate(shape[2]):
            pre.append(f"tfb{lv} = t_frame_bits[{lv}]")
            entry = [
                f"t = a >> {gs + gb}",
                f"e = (a >> {gs}) & {(1 << gb) - 1}",
                f"g = (guest_frame(t, {lv + 1}, tfb{lv}) << {3 + gb}) | (e << 3)",
                "levels = host_levels",
                *(["nkey = g >> sh0"] if shape[0] else []),
            ]
            steps += [f"if lo <= {lv} and {lv} <= top:  # the entry of guest level {lv}", *_indent(entry + lookups, 4)]
        steps += ["# the data", *data, *lookups]
    loop = [*head, *steps, "host_refs[k, z] += total"]
    kernel = [
        f"def replay({NESTED_PARAMS}):",
        '    """Replay the ``nlog`` words of ``wlog`` (3 a walk) through the host; returns the words used."""',
        *_indent(pre, 4),
        "    q = 0",
        "    while q + 3 <= nlog:",
        *_indent(loop, 8),
        *_indent(post, 4),
        "    hc.clock[0] = clock",
        "    return q",
    ]
    run = [f"def run_chunk({NESTED_PARAMS}) -> int:", '    """The nested replay of one chunk\'s walk log."""', f"    return replay({NESTED_PARAMS})"]
    return _module(f"Written by pagesim._kernels.writer: {what}.", kernel, run, ["from pagesim._kernels.rules import LANE_HIGHS, LANE_ONES, guest_frame"])
