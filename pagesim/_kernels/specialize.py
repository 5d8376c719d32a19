"""Specialised copies of the translation kernel for one chain of structures.

The generic kernel reads each structure's geometry (sets, ways, set mask, replacement) at run
time. When every access uses one chain (data accesses only and one page size in the layout: every
generated workload), a copy of the same kernel source with that chain's geometry written in as
literal constants lets LLVM unroll the way search, drop the unused replacement modes and fold the
shifts: measured 33 -> 58 M accesses/s on a random trace over a two-level TLB.

The copy is produced from ``translate.py`` itself by replacing the block between ``<geometry>``
markers with constants, the ``<reload>`` block with nothing, the page-walk-cache loop between
``<pwc>`` markers with one block per cache and the ``<slb>`` lookup with the SLB's geometry as
constants (page-walk caches were 37 of skylake's 47 ns per access when read at run time), written to the cache directory
chosen in ``_jit.py`` and imported, so numba's on-disk cache keeps the compiled kernel between
processes (with no writable cache directory it is compiled from memory instead). Nothing else
differs; tests/test_specialize.py checks specialised copies against the reference model.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import threading
import types
from pathlib import Path

from . import _jit
from . import translate as K

_SOURCE = Path(K.__file__).read_text(encoding="utf-8")
_loaded: dict[str, object] = {}
_lock = threading.Lock()  # sweep(workers=N): two threads must not write, import or compile one kernel at once


def cache_dir() -> Path | None:
    """Where generated kernels go: ``<cache>/kernels`` of the cache directory chosen once in
    ``_jit.py`` (PAGESIM_CACHE_DIR, ...), or None when nothing can be cached."""
    d = _jit.KERNELS_DIR
    if d is not None:
        d.mkdir(parents=True, exist_ok=True)
    return d


def chain_constants(cfg, z: int) -> tuple[int, ...] | None:
    """The constants of the data chain for page-size index ``z``, or None if it cannot be specialised."""
    chain = [int(s) for s in cfg.chain[0, z] if s >= 0]
    if len(chain) > K.MAX_CHAIN:
        return None
    consts = [0, z, len(chain), int(cfg.walk_kind[0]), int(cfg.slb_struct[0]), int(cfg.pwc_struct.shape[0]), int(cfg.any_fa[0])]
    for j in range(K.MAX_CHAIN):
        if j < len(chain):
            s = chain[j]
            consts += [
                s,
                int(cfg.tag_shift[s, z]),
                int(cfg.st_mask[s]),
                int(cfg.st_sets[s]),
                int(cfg.st_pways[s]),
                int(cfg.st_base[s]),
                int(cfg.st_obase[s]),
                int(cfg.st_ways[s]),
                int(cfg.st_mode[s]),
            ]
        else:
            consts += [-1, 0, 0, 1, 4, 0, 0, 1, 0]
    # the SLB's geometry (or -1s), then each page-walk cache's: skip and geometry
    slb = int(cfg.slb_struct[0])
    consts += _geometry(cfg, slb) if slb >= 0 else [-1] * 8
    for p in range(cfg.pwc_struct.shape[0]):
        s = int(cfg.pwc_struct[p])
        consts += [int(cfg.pwc_skip[p]), int(cfg.tag_shift[s, 0])] + _geometry(cfg, s)
    return tuple(consts)


def _geometry(cfg, s: int) -> list[int]:
    """Structure ``s``: index, set mask, sets, padded ways, first tag slot, first order word, ways,
    replacement mode."""
    return [
        s,
        int(cfg.st_mask[s]),
        int(cfg.st_sets[s]),
        int(cfg.st_pways[s]),
        int(cfg.st_base[s]),
        int(cfg.st_obase[s]),
        int(cfg.st_ways[s]),
        int(cfg.st_mode[s]),
    ]


def _render(consts) -> str:
    k, z, nc, walk_kind, slb, npwc, any_fa = consts[:7]
    lines = ["    # specialised geometry (generated)", f"    cur_k = {k}", f"    cur_z = {z}", f"    nc = {nc}"]
    names = ["s", "h", "m", "n", "p", "b", "o", "w", "d"]
    for j in range(K.MAX_CHAIN):
        vals = consts[7 + 9 * j : 16 + 9 * j]
        for nm, v in zip(names, vals):
            lines.append(f"    {nm}{j} = {v}")
    start = _SOURCE.index("    # <geometry>")
    end = _SOURCE.index("    # </geometry>\n") + len("    # </geometry>\n")
    src = _SOURCE[:start] + "\n".join(lines) + "\n" + _SOURCE[end:]
    r0 = src.index("        if k != cur_k or z != cur_z:  # <reload>")
    r1 = src.index("            # </reload>\n") + len("            # </reload>\n")
    src = src[:r0] + src[r1:]
    scal = [
        "    # specialised scalars (generated): data accesses only, so no fast path is shared",
        f"    walk_kind = {walk_kind}",
        f"    slb_struct = {slb}",
        "    tsb_mask = cfg.tsb_mask[0]",
        "    sw_walk_refs = cfg.sw_walk_refs[0]",
        "    hpt_mask = cfg.hpt_mask[0]",
        "    shared = False",
        f"    npwc = {npwc}",
        "    all_data = True",
        f"    any_fa = {bool(any_fa)}",
        "    log_walks = False",
    ]
    s0 = src.index("    # <scalars>")
    s1 = src.index("    # </scalars>\n") + len("    # </scalars>\n")
    src = src[:s0] + "\n".join(scal) + "\n" + src[s1:]
    src = _render_slb_pwc(src, consts, npwc)
    header = f'"""Generated by pagesim._kernels.specialize for chain constants {consts}. Do not edit."""\n'
    return header + src.replace("from ._jit import jit", "from pagesim._kernels._jit import jit")


def _render_slb_pwc(src: str, consts, npwc: int) -> str:
    """The SLB lookup and the page-walk-cache loop with each structure's geometry as constants."""
    at = 7 + 9 * K.MAX_CHAIN
    slb = consts[at : at + 8]
    if slb[0] >= 0:
        _, m, n, p, b, o, w, d = slb
        line = "                    if lookup(slb_struct, skey, skey * 16):  # <slb>"
        src = src.replace(line, f"                    if lookup_g(skey, skey * 16, {m}, {n}, {p}, {b}, {o}, {w}, {d}):  # specialised SLB")
    at += 8
    blocks = []
    for q in range(npwc):
        skip, shift, s, m, n, p, b, o, w, d = consts[at + 10 * q : at + 10 * q + 10]
        blocks.append(
            f"            if {skip} < refs:\n"
            f"                key = a >> {shift}\n"
            f"                if lookup_g(key, key * 16, {m}, {n}, {p}, {b}, {o}, {w}, {d}):\n"
            f"                    hits[{s}, z] += 1\n"
            f"                    if {skip} > best:\n"
            f"                        best = {skip}\n"
            f"                else:\n"
            f"                    misses[{s}, z] += 1\n"
        )
    p0 = src.index("            # <pwc>")
    p1 = src.index("            # </pwc>\n") + len("            # </pwc>\n")
    return src[:p0] + "            # specialised page-walk caches (generated)\n" + "".join(blocks) + src[p1:]


def _digest(src: str) -> str:
    return hashlib.sha256(src.encode()).hexdigest()[:20]


def is_loaded(consts) -> bool:
    return _digest(_render(consts)) in _loaded


def kernel(consts):
    """The ``run_chunk`` of the kernel specialised to ``consts`` (generated and imported once)."""
    src = _render(consts)
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
