"""Kernels generated from ``translate.py`` for what a run needs.

Every run's kernel is a copy of ``translate.py``'s source with the paths the run cannot take cut
out (the other walkers, fault-around, the walk log: between ``# <tag>`` markers), written to the
cache directory chosen in ``_jit.py`` and imported, so numba's on-disk cache keeps it between
processes (with no writable cache directory it is compiled from memory instead). numba's compile
time grows with the code it types and lowers: the generic kernel with every path took 11-16 s.

Two kinds of copies:

- generic (:func:`generic`): each structure's geometry read at run time, so one compiled copy per
  walker, fault-around and walk-log setting serves every machine; mixed page sizes, instruction
  accesses and shared structures (several processes) need it.
- specialised (:func:`kernel`), when every access is a data access to one page size: the data
  chain's *shape* (per position: padded ways, ways, replacement mode, power-of-two sets and where
  its slots and recency words start; per SLB and page-walk cache the same with its set count, and
  a cache's levels skipped and tag shift) written in as constants, so LLVM unrolls the way search
  and drops the other replacement modes; each call site calls the lookup of its own mode
  (``lk_scan``, ``lk_list``, ``lk_direct`` or ``lk_stamp``). The chain's set counts, masks and
  tag shifts are read once per chunk into locals (held in arrays, every store to ``tags`` could
  alias them), so machines differing only in page sizes or in the entries of the chain's last
  structure share one copy. A one-page-size run places its chain's positions at the same places
  for every page size of the machine (``_engine.MachineParts.placed``), so page sizes whose chains
  differ only in set counts share one too (Skylake's and Zen 4's 4K and 2M): the presets' 56
  machine and page-size pairs have 18 shapes. (A chain
  structure's slot start read at run time made a random trace 1.35x slower: 17.7 against 13.1
  ns/access on the benchmark TLB; the page-walk caches' and the SLB's geometry read at run time,
  golden-cove's 14.6 against 12.2, the values held on the stack for want of registers.)

The ``<geometry>`` block becomes the shape's constants and locals, the ``<reload>`` block goes,
the ``<pwc>`` loop becomes one block per page-walk cache (written into the main loop with the radix
walk), a TSB or hashed-page-table walk is written into the main loop too (the TSB's with no branch
on the probe's outcome), and the ``<slb>`` lookup the SLB's own. A page-walk cache's block skips
its lookup when the key is the one that cache looked up last: that entry is the most recent, so
the hit changes nothing under LRU, FIFO or random, and is only counted (on a random trace over 1
GiB Skylake's two upper caches always hit so: 20.4 -> 11.9 ns an access in two runs of one
benchmark). A specialised copy also counts in local scalars (one kind and one page size: every
counter's index is known), returned to ``run_chunk``, which adds them to the arrays. Last, the
lookup closures are written out where they are called (``inline.py``); only the hash-table
lookup (``lk_list``) stays a closure for numba to inline. (Left to numba, ``lk_direct``'s hit
kept a reference-count increment and decrement of an array around its ring update: power8's random
trace over 2 MiB, all ERAT hits, ran 7.5-7.8 ns an access with them and 6.5-6.8 without.)
tests/test_specialize.py checks both kinds against the reference model.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import sys
import types
from pathlib import Path

from . import _jit, inline, simd
from . import translate as K
from .inline import inline_calls

_SOURCE = Path(K.__file__).read_text(encoding="utf-8")
# the vector tag search the kernels import (simd.py): its digest goes into every generated source,
# so a change there makes new kernel files (numba's cache keys a kernel on its own file only)
_SIMD = "# simd.py " + hashlib.sha256((Path(K.__file__).parent / "simd.py").read_bytes()).hexdigest()[:20] + "\n"
_loaded: dict[str, object] = {}
_lock = _jit.BUILD_LOCK  # rendering, writing, importing and decorating a kernel: one thread at a time


def _inline(src: str, names) -> str:
    """inline.inline_calls under the build lock: it parses and unparses syntax trees, which CPython
    (3.11) does not make safe to do from two threads at once."""
    with _lock:
        return inline_calls(src, names)


def cache_dir() -> Path | None:
    """Where generated kernels go: ``<cache>/kernels`` of the cache directory chosen once in
    ``_jit.py`` (PAGESIM_CACHE_DIR, ...), or None when nothing can be cached."""
    d = _jit.KERNELS_DIR
    if d is not None:
        d.mkdir(parents=True, exist_ok=True)
    return d


def _shape(cfg, s: int) -> tuple[int, int, int, int]:
    """What a structure's lookup is compiled for: padded ways, ways, replacement mode, and 1 if its
    sets are a power of two (set index by mask) or 0 (modulo)."""
    return (int(cfg.st_pways[s]), int(cfg.st_ways[s]), int(cfg.st_mode[s]), int(cfg.st_mask[s] >= 0))


def _place(cfg, s: int) -> tuple[int, int, int]:
    """A structure's sets and where its tags and recency words start."""
    return (int(cfg.st_sets[s]), int(cfg.st_base[s]), int(cfg.st_obase[s]))


def _ring1(cfg, s: int) -> int:
    """1 if structure ``s`` is one directly indexed set (a fully associative DIRECT_LRU or
    DIRECT_FIFO structure): its ring's head then lives in a local in the specialised kernel."""
    return int(int(cfg.st_sets[s]) == 1 and int(cfg.st_mode[s]) in (K.DIRECT_LRU, K.DIRECT_FIFO))


def chain_shape(cfg, z: int, log_walks: bool = False) -> tuple | None:
    """The shape of the data chain for page-size index ``z`` (what a specialised copy compiles in),
    or None if it cannot be specialised: per chain position its shape, where its slots and
    recency words start, and 1 if it is one directly indexed set (:func:`_ring_heads`); the SLB's
    and each page-walk cache's shape, sets and place (and a cache's levels skipped and tag shift).
    Compiled in as constants, these free registers: a kernel that read them at run time kept them
    on the stack and ran golden-cove's random trace 1.2x slower.
    The chain's set counts, masks and tag shifts are read once at the start of a chunk, so machines
    that differ only in page sizes or in the entries of their last structure share one compiled
    copy (the walker's caches and the SLB sit before the TLBs in the arrays, and a one-page-size
    run places each chain position where the largest structure at that position in any of the
    machine's data chains would start: _engine.MachineParts.placed)."""
    chain = [int(s) for s in cfg.chain[0, z] if s >= 0]
    if len(chain) > K.MAX_CHAIN:
        return None
    slb = int(cfg.slb_struct[0])
    return (
        tuple(_shape(cfg, s) + (int(cfg.st_base[s]), int(cfg.st_obase[s]), _ring1(cfg, s)) for s in chain),
        int(cfg.walk_kind[0]),
        _shape(cfg, slb) + _place(cfg, slb) if slb >= 0 else None,
        tuple(_shape(cfg, int(s)) + _place(cfg, int(s)) + (int(cfg.pwc_skip[q]), int(cfg.tag_shift[s, 0])) for q, s in enumerate(cfg.pwc_struct)),
        bool(cfg.any_fa[0]),
        bool(log_walks),
    )


# the lookup closures written out where they are called (inline.py): numba's own closure inlining
# took about half of a kernel's compile time
_INLINED = ("find", "order_hit", "order_fill", "random_fill", "lk_scan", "lk_stamp", "lk_direct", "ring_hit", "ring_victim", "direct_fill")
MODE_LOOKUP = {
    K.ORDER_LRU: "lk_scan",
    K.ORDER_FIFO: "lk_scan",
    K.LIST_LRU: "lk_list",
    K.LIST_FIFO: "lk_list",
    K.RANDOM_FILL: "lk_scan",
    K.DIRECT_LRU: "lk_direct",
    K.DIRECT_FIFO: "lk_direct",
    K.STAMP_LRU: "lk_stamp",
}
_WALKER_BLOCKS = {"radix": K.RADIX, "hashed": K.HASHED, "tsb": K.TSB}


def _site(j: int) -> str:
    """Chain position ``j``'s lookup call in translate.py."""
    return f"lookup_g(key, key * 16 + z, key + e{j}, m{j}, n{j}, p{j}, b{j}, o{j}, w{j}, d{j})"


def _cut(src: str, tag: str) -> str:
    """``src`` without every block between a ``# <tag>`` line and its ``# </tag>`` line."""
    pat = re.compile(rf"^[ \t]*# <{tag}>[^\n]*\n.*?^[ \t]*# </{tag}>\n", re.M | re.S)
    out, n = pat.subn("", src)
    if n == 0:
        raise RuntimeError(f"internal error: no <{tag}> block in translate.py")
    return out


def _strip(src: str, walk_kind: int, any_fa: bool, log_walks: bool) -> str:
    """The kernel source without the paths a run cannot take: the other walkers, fault-around
    when no region maps more than one page per fault, the walk log when it is not asked for.
    Fewer lines to type and lower: the generic kernel with every path took 11-16 s to compile."""
    for tag, kind in _WALKER_BLOCKS.items():
        if walk_kind != kind:
            src = _cut(src, tag)
    if any_fa:
        src = re.sub(r"^[ \t]*# <nofa>[^\n]*\n", "", src, flags=re.M)
    else:
        src = _cut(src, "fa")
        src = re.sub(r"^([ \t]*)# <nofa> ", r"\1", src, flags=re.M)
    if not log_walks:
        src = _cut(src, "log")
    for name, value in (("walk_kind", walk_kind), ("any_fa", bool(any_fa)), ("log_walks", bool(log_walks))):
        src = re.sub(rf"^(    ){name} = [^\n]*$", rf"\g<1>{name} = {value}", src, count=1, flags=re.M)
    return src


def generic_source(walk_kind: int, any_fa: bool, log_walks: bool, depth: int = K.MAX_CHAIN, slb: bool = True, pwc: bool = True) -> str:
    """The generic kernel (geometry read at run time) with only the paths these features use:
    lookups for chain positions up to ``depth`` only, the SLB's and the page-walk caches' only if
    the machine has them (each lookup site compiles the whole lookup: about 1 s of CPU)."""
    src = _SOURCE
    for j in range(depth, K.MAX_CHAIN):
        site = _site(j)
        if site not in src:
            raise RuntimeError(f"internal error: no lookup site {site} in translate.py")
        src = src.replace(site, "False")
    if not slb:
        line = "                    if lookup(slb_struct, skey, skey * 16, skey + es):  # <slb>"
        if line not in src:
            raise RuntimeError("internal error: no SLB lookup in translate.py")
        src = src.replace(line, "                    if False:  # no SLB")
    if not pwc:
        src = _cut(src, "pwc")
    src = _strip(src, walk_kind, any_fa, log_walks)
    src = _inline(src, _INLINED + ("lookup_g", "lookup"))
    what = f"walker {walk_kind}, fault-around {any_fa}, walk log {log_walks}, depth {depth}, SLB {slb}, page-walk caches {pwc}"
    header = f'"""Generated by pagesim._kernels.specialize: the generic kernel for {what}. Do not edit."""\n'
    return header + _absolute(src)


_preset_shapes: set | None = None


def preset_shapes() -> set:
    """The chain shapes of every preset at each of its page sizes, without fault-around and without
    the walk log: 18 shapes for the 56 pairs. ``pagesim warm`` compiles them; ``specialize='auto'``
    uses them at any run length."""
    global _preset_shapes
    if _preset_shapes is None:
        from ..engine import stages as E
        from ..engine.simulate import resolve_programmable
        from ..model.layout import Layout
        from ..model.machines import machine, machines

        shapes = set()
        for name in machines():
            m = machine(name)
            for p in m.page_sizes:
                layout = Layout.single(1 << 30, p, start=1 << 40)
                cfg = E.kernel_inputs(resolve_programmable(m, layout)[0], layout, 0)[0]
                shape = chain_shape(cfg, int(cfg.reg_size[0]))
                if shape is not None:
                    shapes.add(shape)
        _preset_shapes = shapes
    return _preset_shapes


MASK63 = "0x7FFFFFFFFFFFFFFF"  # a set mask ANDed with it is known non-negative: LLVM drops the modulo branch


def _mask(var: str, pow2: int) -> str:
    return f"st_mask[{var}] & {MASK63}" if pow2 else "-1"


def _render(shape) -> str:
    chain, walk_kind, slb, pwcs, any_fa, log_walks = shape
    nc = len(chain)
    lines = [
        "    # specialised geometry (generated): the chain's shape as constants, where it sits read once",
        "    cur_k = 0",
        "    cur_z = reg_size[0]",
        f"    nc = {nc}",
    ]
    for j in range(K.MAX_CHAIN):
        if j < nc:
            p, w, d, pow2, b, o, ring1 = chain[j]
            lines += [
                f"    s{j} = chain[0, cur_z, {j}]",
                f"    h{j} = tag_shift[s{j}, cur_z]",
                f"    e{j} = idx_off[s{j}, 0]",
                f"    m{j} = {0 if ring1 else _mask(f's{j}', pow2)}",  # one set: its index is 0
                f"    n{j} = {1 if ring1 else f'st_sets[s{j}]'}",
                f"    b{j} = {b}",  # a constant: read at run time, a random trace ran 1.35x slower
                f"    o{j} = {o}",
                f"    p{j} = {p}",
                f"    w{j} = {w}",
                f"    d{j} = {d}",
            ]
        else:
            lines += [f"    s{j} = -1", f"    h{j} = m{j} = b{j} = o{j} = d{j} = e{j} = 0", f"    n{j} = w{j} = 1", f"    p{j} = 4"]
    start = _SOURCE.index("    # <geometry>")
    end = _SOURCE.index("    # </geometry>\n") + len("    # </geometry>\n")
    src = _SOURCE[:start] + "\n".join(lines) + "\n" + _SOURCE[end:]
    r0 = src.index("        if k != cur_k or z != cur_z:  # <reload>")
    r1 = src.index("            # </reload>\n") + len("            # </reload>\n")
    src = src[:r0] + src[r1:]
    for j in range(K.MAX_CHAIN):  # each chain position calls the lookup of its own replacement mode
        site = _site(j)
        if site not in src:
            raise RuntimeError(f"internal error: no lookup site {site} in translate.py")
        src = src.replace(site, site.replace("lookup_g", MODE_LOOKUP[chain[j][2]]) if j < nc else "False")
    scal = [
        "    # specialised scalars (generated): data accesses only, so no fast path is shared",
        f"    walk_kind = {walk_kind}",
        "    slb_struct = cfg.slb_struct[0]" if slb is not None else "    slb_struct = -1",
        "    tsb_mask = cfg.tsb_mask[0]",
        "    sw_walk_refs = cfg.sw_walk_refs[0]",
        "    hpt_mask = cfg.hpt_mask[0]",
        "    shared = False",
        f"    npwc = {len(pwcs)}",
        "    all_data = True",
        f"    any_fa = {bool(any_fa)}",
        f"    log_walks = {bool(log_walks)}",
    ]
    if slb is not None:
        _, _, _, pow2, sets, b, o = slb
        scal += [f"    slb_m = {sets - 1 if pow2 else -1}", f"    slb_n = {sets}", f"    slb_b = {b}", f"    slb_o = {o}"]
    if walk_kind == K.RADIX:
        scal += ["    q_refs = radix_refs[reg_size[0]]"]  # one page size: the walk's references, read once
    for q, (_, _, _, pow2, sets, b, o, skip, shift) in enumerate(pwcs):
        scal += [
            f"    q{q}_skip = {skip}",
            f"    q{q}_h = {shift}",
            f"    q{q}_m = {sets - 1 if pow2 else -1}",
            f"    q{q}_n = {sets}",
            f"    q{q}_b = {b}",
            f"    q{q}_o = {o}",
            f"    q{q}_k = -1",
        ]
    s0 = src.index("    # <scalars>")
    s1 = src.index("    # </scalars>\n") + len("    # </scalars>\n")
    # the scalars read arrays unpacked at the top: they go after the unpacking
    src = src[:s0] + src[s1:]
    anchor = "    nreg = reg_start.shape[0]\n"
    if anchor not in src:
        raise RuntimeError("internal error: no 'nreg = ' line in translate.py")
    src = src.replace(anchor, "\n".join(scal) + "\n" + anchor)
    # a chain, an SLB or a page-walk cache to look up: with none, numba does not drop the unused
    # closures and cannot compile them, so the walk stays a call
    inline_walk = walk_kind in (K.RADIX, K.TSB, K.HASHED) and (nc > 0 or slb is not None or len(pwcs) > 0)
    src = _render_slb_pwc(src, slb, pwcs, inline_walk and walk_kind == K.RADIX)
    if inline_walk and walk_kind in (K.TSB, K.HASHED):
        src = _sub(src, _WALK_CALL, _TSB_WALK if walk_kind == K.TSB else _HASHED_WALK)
    src = _local_counts(src, nc, slb is not None, len(pwcs), tsb=inline_walk and walk_kind == K.TSB, hashed=inline_walk and walk_kind == K.HASHED)
    if nc > 0:
        # Every slow access leaves a valid (non-negative) address in the memo, so only an empty memo
        # (-1, shift 0: the run's first access) can match a negative address: that one is checked
        # before the loop, and the fast path drops its sign test (0.25 ns of a sequential access's 1.3).
        src = _sub(src, "if (((a ^ a0) | (a >> 63)) >> f0) == 0:", "if ((a ^ a0) >> f0) == 0:")
        src = _sub(
            src,
            "    for i in range(n):\n        a = addrs[i]\n",
            "    if a0 == -1 and n > 0 and addrs[0] < 0:\n        bad = 0\n        n = 0\n    for i in range(n):\n        a = addrs[i]\n",
        )
    src = _cut(src, "generic-lookup")
    # the tag search as one vector compare (every pw here is a constant; simd.py). The generic
    # kernel keeps the scalar search: simd.py's scalar form, compiled apart and called, ran a
    # random trace at 31 ns an access against 10.7 for the search written in place
    src = _cut(src, "scalar-find")
    src = _sub(src, "        # <vector-find> hw = find_way(tags, base, pw, tag)\n", "        hw = find_way(tags, base, pw, tag)\n")
    if slb is not None and slb[0] <= simd.MAX_MIN_LANES:  # the oldest stamp as one vector reduction
        src = _cut(src, "scalar-min")
        src = _sub(src, "            # <vector-min> victim = min_way(links, sb, pw)\n", "            victim = min_way(links, sb, pw)\n")
    src = _strip(src, walk_kind, bool(any_fa), log_walks)
    if inline_walk:
        src = _cut(src, "walkfn")  # written into the main loop; left uncalled, the closure would not compile
    ring1 = [j for j in range(nc) if chain[j][6]]
    src = _ring_heads_io(src, ring1, [chain[j][5] for j in range(nc)])
    src = _inline(src, _INLINED)
    src = _ring_heads(src, ring1)
    header = f'"""Generated by pagesim._kernels.specialize for the chain shape {shape}. Do not edit."""\n' + _SIMD
    return header + _absolute(src)


def _ring_heads_io(src: str, ring1: list[int], obase: list[int]) -> str:
    """The ring heads of :func:`_ring_heads` read before the loop, returned, and stored by
    ``run_chunk`` (stores after the loop were lost under numba 0.68.1, see _local_counts)."""
    if not ring1:
        return src
    heads = "".join(f"    hd{j} = np.int64(order[np.uint64(o{j})])\n" for j in ring1)
    src = _sub(src, "    if a0 == -1 and n > 0 and addrs[0] < 0:\n", heads + "    if a0 == -1 and n > 0 and addrs[0] < 0:\n")
    names = ", ".join(f"hd{j}" for j in ring1)
    src = _sub(src, "    return bad, a0, f0, g0, r0, a1, f1, g1, r1, (", f"    return bad, a0, f0, g0, r0, a1, f1, g1, r1, ({names},), (")
    call = "    bad, a0, f0, g0, r0, a1, f1, g1, r1, c = translate_chunk(addrs, kinds, cfg, st, cnt)\n"
    stores = "".join(f"    st.order[{obase[j]}] = hd[{i}]\n" for i, j in enumerate(ring1))
    return _sub(src, call, call.replace(" c = ", " hd, c = ") + stores)


def _ring_heads(src: str, ring1: list[int]) -> str:
    """Chain positions ``ring1`` (each one directly indexed set) keep their ring's head in a local
    ``hd{j}``, not in ``order[o{j}]`` (:func:`_ring_heads_io` reads and returns it). In memory, every miss
    read the head the previous miss had just stored (a store-to-load dependency from one access to
    the next), and LLVM had to reload it after every store to ``links`` or ``tags``: POWER8's random
    trace over 1 GiB, whose two ERATs (48 and 256 entries, fully associative) miss on nearly every
    access, ran 13.2 -> 11.4 ns an access. The written-out ring_hit and ring_victim are the only
    code touching a chain position's recency word (translate.py; the count of rewrites is checked)."""
    if not ring1:
        return src
    for j in ring1:
        slots = re.findall(rf"^[ \t]*(\w+) = o{j} \+ \w+$", src, flags=re.M)
        if not slots:
            raise RuntimeError(f"internal error: no recency-word index of chain position {j} in the written-out lookup")
        for v in slots:
            src, n_read = re.subn(rf"np\.int64\(order\[np\.uint64\({v}\)\]\)", f"hd{j}", src)
            src, n_write = re.subn(rf"order\[np\.uint64\({v}\)\] = np\.uint64\((.*)\)$", rf"hd{j} = np.int64(\1)", src, flags=re.M)
            if n_read != 1 or n_write != 1 or re.search(rf"\b{v}\b(?! = o{j} \+)", src):
                raise RuntimeError(f"internal error: {v} (chain position {j}'s recency word) is used other than as the ring's head")
            src = re.sub(rf"^[ \t]*{v} = o{j} \+ \w+\n", "", src, flags=re.M)  # now unused
    return src


def _render_slb_pwc(src: str, slb, pwcs, radix: bool) -> str:
    """The SLB lookup and one block per page-walk cache, each with its shape as constants. A radix
    walk is written into the main loop (not called as the ``walk`` closure, which cannot add to the
    loop's local counters)."""
    line = "                    if lookup(slb_struct, skey, skey * 16, skey + es):  # <slb>"
    if line not in src:
        raise RuntimeError("internal error: no SLB lookup in translate.py")
    if slb is not None:
        p, w, d = slb[:3]
        call = f"{MODE_LOOKUP[d]}(skey, skey * 16, skey + es, slb_m, slb_n, {p}, slb_b, slb_o, {w}, {d})"
        src = src.replace(line, f"                    if {call}:  # specialised SLB")
    else:
        src = src.replace(line, "                    if False:  # no SLB")
    blocks = []
    for q, (p, w, d) in enumerate(pw[:3] for pw in pwcs):
        blocks.append(
            f"            if q{q}_skip < refs:\n"
            f"                key = a >> q{q}_h\n"
            # the key of this cache's last lookup is its most recent entry: a hit that changes nothing
            f"                qhit = True\n"
            f"                if key != q{q}_k:\n"
            f"                    qhit = {MODE_LOOKUP[d]}(key, key * 16, 0, q{q}_m, q{q}_n, {p}, q{q}_b, q{q}_o, {w}, {d})\n"
            f"                    q{q}_k = key\n"
            f"                if qhit:\n"
            f"                    c_q{q}h += 1\n"
            f"                    if q{q}_skip > best:\n"
            f"                        best = q{q}_skip\n"
            f"                else:\n"
            f"                    c_q{q}m += 1\n"
        )
    src = _cut(src, "pwc")
    if not radix:
        return src
    call = "            wr = walk(a, k, z, gid, faulted)\n"
    inline = "            # the radix walk with its page-walk caches (generated)\n            refs = q_refs\n            best = 0\n"
    return _sub(src, call, inline + "".join(blocks) + "            wr = refs - best\n")


def _absolute(src: str) -> str:
    """The generated module is imported by path, outside the package: its imports made absolute."""
    return src.replace("from ._jit import jit", "from pagesim._kernels._jit import jit").replace("from .simd import", "from pagesim._kernels.simd import")


# The walker's walk written into the main loop in place of the ``walk`` closure's call (a closure
# cannot add to the loop's local counters), for the TSB and the hashed page table.
_WALK_CALL = "            wr = walk(a, k, z, gid, faulted)\n"
# The TSB probe, without a branch on its outcome (on a random trace it is a coin toss:
# ultrasparc-ii's 32768-entry TSB holds a quarter of the pages of 1 GiB): the slot is written
# whether or not it held the page (a hit writes what it held); 1 reference, plus the software
# walk's on a miss; the hits are counted in a local scalar, the misses are the walks that did not hit.
_TSB_WALK = (
    "            tsb_vpn = a >> rps\n"
    "            tsb_slot = z * (tsb_mask + 1) + (tsb_vpn & tsb_mask)\n"
    "            tsb_hit = np.int64(tsb[np.uint64(tsb_slot)] == tsb_vpn)\n"
    "            tsb[np.uint64(tsb_slot)] = tsb_vpn\n"
    "            c_tsbh += tsb_hit\n"
    "            wr = 1 + sw_walk_refs * (1 - tsb_hit)\n"
)
# The hashed page table's walk: a page in the table costs as many references as the number of its
# group (1 primary, 2 secondary; secondary hits counted in a local scalar); a page not in it is
# inserted (2 references, as the generic walk).
_HASHED_WALK = (
    "            hpt_where = np.int64(page_hpt[np.uint64(gid)])\n"
    "            if hpt_where == NOT_IN_HPT:\n"
    "                if not faulted:\n"
    "                    hpt_events[1] += 1\n"
    "                hpt_insert(gid, a, z)\n"
    "                wr = 2\n"
    "            else:\n"
    "                wr = hpt_where\n"
    "                c_hsec += hpt_where - 1\n"
)


def _digest(src: str) -> str:
    return hashlib.sha256(src.encode()).hexdigest()[:20]


_by_key: dict = {}  # (kind, key) -> run_chunk: rendering and hashing the source took ~1.2 ms a call


def kernel(shape):
    """The ``run_chunk`` of the kernel specialised to a chain ``shape`` (see :func:`chain_shape`),
    generated and imported once."""
    fn = _by_key.get(("shape", shape))
    if fn is None:
        with _lock:
            fn = _by_key.get(("shape", shape))  # another thread may have built it while this one waited
            if fn is None:
                fn = _by_key[("shape", shape)] = _rendered("shape", shape, lambda: _render(shape))
                _record("shape", shape)
    return fn


def generic(cfg, log_walks: bool = False):
    """The ``run_chunk`` of the generic kernel (geometry read at run time) for this configuration's
    walker, fault-around, longest chain, SLB and page-walk caches, with or without the walk log:
    mixed page sizes, instruction accesses, shared page tables, ``specialize=False``."""
    depth = int((cfg.chain >= 0).sum(axis=2).max()) if cfg.chain.size else 0
    key = (int(cfg.walk_kind[0]), bool(cfg.any_fa[0]), bool(log_walks), max(1, depth), int(cfg.slb_struct[0]) >= 0, cfg.pwc_struct.shape[0] > 0)
    return generic_by_key(key)


def generic_by_key(key: tuple):
    """The generic kernel for ``key``: (walker, fault-around, walk log, depth, SLB, page-walk caches)."""
    fn = _by_key.get(("generic", key))
    if fn is None:
        walk_kind, any_fa, log, depth, slb, pwc = key
        with _lock:
            fn = _by_key.get(("generic", key))
            if fn is None:
                fn = _by_key[("generic", key)] = _rendered("generic", key, lambda: generic_source(walk_kind, any_fa, log, depth=depth, slb=slb, pwc=pwc))
                _record("generic", key)
    return fn


def by_key(kind: str, key: tuple):
    """A kernel by what ``PAGESIM_RECORD_KERNELS`` recorded (``pagesim/data/kernels.json``):
    ("shape", chain shape) or ("generic", key)."""
    if kind == "shape":
        return kernel(key)
    if kind == "generic":
        return generic_by_key(key)
    raise ValueError(f"kind={kind!r} is not a kernel kind: 'shape' or 'generic'")


def _record(kind: str, key: tuple) -> None:
    """With ``PAGESIM_RECORD_KERNELS`` naming a file, append each kernel this process loads to it,
    one JSON line each (``pagesim warm --record`` collects what the notebooks load this way)."""
    path = os.environ.get("PAGESIM_RECORD_KERNELS")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps([kind, key]) + "\n")


def key_from_json(obj):
    """A key read back from JSON: lists become tuples again (None, ints and booleans stay)."""
    return tuple(key_from_json(x) for x in obj) if isinstance(obj, list) else obj


# Which source each (kind, key) renders to, kept in the cache directory: rendering runs inline.py
# over the kernel's syntax tree, 0.2-0.3 s of CPU for a generic kernel, in every new process (every
# notebook). An entry holds the digest of the source (the kernel file's name), under a name made of
# the kind, the key and what rendering depends on (the sources of translate.py, simd.py, inline.py
# and this module, and the Python version, whose ast.unparse writes the text), so a change to any
# of them renders afresh; so does an entry whose kernel file is gone or no longer has that digest.
_RENDERER = _digest(
    "".join(Path(m.__file__).read_text(encoding="utf-8") for m in (K, simd, inline)) + Path(__file__).read_text(encoding="utf-8") + sys.version.split()[0]
)


def _index_entry(kind: str, key: tuple) -> Path | None:
    d = cache_dir()
    return None if d is None else d / "index" / f"{_digest(json.dumps([kind, key]) + _RENDERER)}.txt"


def _rendered(kind: str, key: tuple, render):
    """The run_chunk of (kind, key): its kernel file as the index names it, else ``render()``'s
    source (then indexed)."""
    entry = _index_entry(kind, key)
    if entry is not None:
        try:
            digest = entry.read_text(encoding="utf-8").strip()
            src = (entry.parent.parent / f"pagesim_kernel_{digest}.py").read_text(encoding="utf-8")
        except OSError:
            src = None
        if src is not None and _digest(src) == digest:
            return _get(src)
    src = render()
    fn = _get(src)
    if entry is not None:
        try:
            entry.parent.mkdir(exist_ok=True)
            tmp = entry.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(_digest(src), encoding="utf-8")
            os.replace(tmp, entry)
        except OSError:  # an index is only a shortcut
            pass
    return fn


def _get(src: str):
    digest = _digest(src)
    if digest in _loaded:
        return _loaded[digest]
    with _lock:
        if digest in _loaded:  # another thread made it while this one waited
            return _loaded[digest]
        return _load(src, digest)


def _load(src: str, digest: str):
    d = cache_dir()
    name = f"pagesim_kernel_{digest}"
    if d is None:  # no writable cache directory (see _jit.py): compile from memory, cache nothing
        mod = types.ModuleType(name)
        exec(compile(src, f"<pagesim kernel {digest}>", "exec"), mod.__dict__)  # noqa: S102 - our own generated source
        _loaded[digest] = mod.run_chunk
        return mod.run_chunk
    path = d / f"{name}.py"
    if not path.exists() or path.read_text(encoding="utf-8") != src:
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(src, encoding="utf-8")
        os.replace(tmp, path)  # atomic: no half-written kernel is ever imported
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    _loaded[digest] = mod.run_chunk
    return mod.run_chunk


def _sub(src: str, line: str, new: str) -> str:
    if src.count(line) != 1:
        raise RuntimeError(f"internal error: {line.strip()!r} is not in translate.py once")
    return src.replace(line, new)


def _local_counts(src: str, nc: int, slb: bool, npwc: int, tsb: bool = False, hashed: bool = False) -> str:
    """The specialised copy counts in local scalars (one kind, one page size: every counter's
    index is known) and returns them; ``run_chunk`` adds them to the counter arrays. Counting in
    the arrays, every increment is a load and a store that LLVM must order against the stores to
    ``tags`` (a random trace: 14.5 -> 13.2 ns an access). Returned, not stored after the loop: such
    stores were lost under numba 0.68.1 (see the memo in translate.py)."""
    names = [f"c_res{j}" for j in range(nc)] + ["c_walk", "c_fault", "c_refs"]
    names += ["c_slbh", "c_slbm"] if slb else []
    for q in range(npwc):
        names += [f"c_q{q}h", f"c_q{q}m"]
    names += ["c_tsbh"] if tsb else []
    names += ["c_hsec"] if hashed else []
    branches = "".join(f"            {'if' if j == 0 else 'elif'} j == {j}:\n                c_res{j} += 1\n" for j in range(nc))
    src = _sub(src, "            resolved[k, z, j] += 1  # <count resolved>\n", branches or "            pass\n")
    src = _sub(src, "resolved[0, g0, 0] += r0  # <count run>", "c_res0 += r0" if nc else "resolved[0, g0, 0] += r0")
    src = _sub(src, "resolved[k, z, L] += 1  # <count walk>", "c_walk += 1")
    src = _sub(src, "faults[z] += 1  # <count fault>", "c_fault += 1")
    src = _sub(src, "walk_refs[k, z] += wr  # <count refs>", "c_refs += wr")
    src = _sub(src, "hits[slb_struct, z] += 1  # <count slb-hit>", "c_slbh += 1")
    src = _sub(src, "misses[slb_struct, z] += 1  # <count slb-miss>", "c_slbm += 1")
    init = "".join(f"    {c} = 0\n" for c in names + ([] if slb else ["c_slbh", "c_slbm"]))
    src = _sub(src, "    last_reg = 0\n", "    last_reg = 0\n" + init)
    src = _sub(src, "    return bad, a0, f0, g0, r0, a1, f1, g1, r1  # <return>\n", f"    return bad, a0, f0, g0, r0, a1, f1, g1, r1, ({', '.join(names)},)\n")
    # where each count goes, skipped when zero (each numpy element update costs about a microsecond:
    # all of them on every call made a call on a 1-access chunk 22 -> 31 us)
    dest = [f"res[0, z, {j}]" for j in range(nc)] + ["res[0, z, cfg.chain.shape[2]]", "cnt.faults[z]", "cnt.walk_refs[0, z]"]
    if slb:
        dest += ["cnt.hits[cfg.slb_struct[0], z]", "cnt.misses[cfg.slb_struct[0], z]"]
    for q in range(npwc):
        dest += [f"cnt.hits[cfg.pwc_struct[{q}], z]", f"cnt.misses[cfg.pwc_struct[{q}], z]"]
    adds = []
    if tsb:  # every walk probes the TSB: its misses are the walks that did not hit
        dest += ["cnt.tsb_hits[0, z]"]
        adds = [f"    if c[{nc}] - c[{len(dest) - 1}]:\n        cnt.tsb_misses[0, z] += c[{nc}] - c[{len(dest) - 1}]\n"]
    if hashed:
        dest += ["cnt.hpt_secondary[z]"]
    adds = adds + [f"    if c[{i}]:\n        {d} += c[{i}]\n" for i, d in enumerate(dest)]
    call = "    bad, a0, f0, g0, r0, a1, f1, g1, r1 = translate_chunk(addrs, kinds, cfg, st, cnt)\n"
    body = "    bad, a0, f0, g0, r0, a1, f1, g1, r1, c = translate_chunk(addrs, kinds, cfg, st, cnt)\n"
    body += "    # the local counts (one page size: the first region's)\n    z = int(cfg.reg_size[0])\n    res = cnt.resolved\n" + "".join(adds)
    return _sub(src, call, body)
