"""Which kernel a run uses, and where it lives: written (``writer.py``), cached on disk, loaded.

A run's kernel is Python source written by :mod:`pagesim._kernels.writer` for what the run needs
and nothing more, saved under the cache directory chosen in ``_jit.py`` and imported from there, so
numba's on-disk cache keeps it between processes (with no writable cache directory it is compiled
from memory instead). Two kinds:

- specialised (:func:`kernel`), when every access is a data access to one page size: the chain's
  shape (:func:`chain_shape`) written in as constants. A one-page-size run places its chain's
  positions at the same places for every page size of the machine
  (``pagesim.engine.stages.MachineParts.placed``), and the set counts, masks and tag shifts are
  read at run time, so machines and page sizes that differ only in those share one kernel: the
  presets' machine and page-size pairs have about a third as many shapes
  (``pagesim.engine.stages.preset_shapes()``). (A chain structure's slot start read at run time made a random
  trace 1.35x slower: 17.7 against 13.1 ns/access on the benchmark TLB.)
- generic (:func:`generic`): each structure's geometry read at run time, one kernel per walker,
  fault-around, walk log, chain depth (up to 2, or more: :func:`generic_key`), SLB and page-walk
  caches, at most 48 in all; mixed page sizes, instruction accesses and shared structures (several processes) need it.

tests/kernels/test_specialize.py checks both kinds against the reference model.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
import types
from pathlib import Path

from . import _jit, writer
from . import translate as K

_loaded: dict[str, object] = {}
_lock = _jit.BUILD_LOCK  # rendering, writing, importing and decorating a kernel: one thread at a time


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
    recency words start, and 1 if it is one directly indexed set (its ring's head then lives in a local of the kernel: writer.py); the SLB's
    and each page-walk cache's shape, sets and place (and a cache's levels skipped and tag shift).
    Compiled in as constants, these free registers: a kernel that read them at run time kept them
    on the stack and ran golden-cove's random trace 1.2x slower.
    The chain's set counts, masks and tag shifts are read once at the start of a chunk, so machines
    that differ only in page sizes or in the entries of their last structure share one compiled
    copy (the walker's caches and the SLB sit before the TLBs in the arrays, and a one-page-size
    run places each chain position where the largest structure at that position in any of the
    machine's data chains would start: engine.stages.MachineParts.placed)."""
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


def loaded() -> list:
    """The run_chunk of every kernel this process has loaded, in the order loaded."""
    return list(_loaded.values())


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
                fn = _by_key[("shape", shape)] = _rendered("shape", shape, lambda: writer.specialised(shape))
                _record("shape", shape)
    return fn


def generic(cfg, log_walks: bool = False):
    """The ``run_chunk`` of the generic kernel (geometry read at run time) for this configuration's
    walker, fault-around, longest chain, SLB and page-walk caches, with or without the walk log:
    mixed page sizes, instruction accesses, shared page tables, ``specialize=False``."""
    depth = int((cfg.chain >= 0).sum(axis=2).max()) if cfg.chain.size else 0
    key = (int(cfg.walk_kind[0]), bool(cfg.any_fa[0]), bool(log_walks), depth, int(cfg.slb_struct[0]) >= 0, cfg.pwc_struct.shape[0] > 0)
    return generic_by_key(key)


SHALLOW = 2  # chains of at most this many structures share one generic kernel; deeper ones, MAX_CHAIN's


def generic_key(key: tuple) -> tuple:
    """The kernel that serves ``key`` (walker, fault-around, walk log, chain depth, SLB, page-walk
    caches): the depth rounded up to SHALLOW or MAX_CHAIN (a lookup a chain does not reach is passed
    over at run time), the rest as it is. Each kernel written costs 10-25 s of CPU to compile; this
    way at most 48 serve every machine (pagesim's walkers have page-walk caches only when radix and
    an SLB only when hashed), where one per exact key made 96 (and about 60 in a run of the tests,
    40 now). Rounding the SLB and the page-walk caches too would make 32, at a run-time cost the
    measurements in docs/kernels.md could not separate from noise."""
    walk_kind, any_fa, log, depth, slb, pwc = key
    return (int(walk_kind), bool(any_fa), bool(log), SHALLOW if depth <= SHALLOW else K.MAX_CHAIN, bool(slb), bool(pwc))


def generic_by_key(key: tuple):
    """The generic kernel for ``key``: (walker, fault-around, walk log, depth, SLB, page-walk
    caches), as :func:`generic_key` rounds it."""
    key = generic_key(key)
    fn = _by_key.get(("generic", key))
    if fn is None:
        walk_kind, any_fa, log, depth, slb, pwc = key
        with _lock:
            fn = _by_key.get(("generic", key))
            if fn is None:
                fn = _by_key[("generic", key)] = _rendered("generic", key, lambda: writer.generic(walk_kind, any_fa, log, depth=depth, slb=slb, pwc=pwc))
                _record("generic", key)
    return fn


def nested(shape):
    """The ``run_chunk`` of the nested replay for ``shape`` (writer.nested: the nested TLB or not,
    each host cache's sets, ways and levels skipped, each guest level's shifts), or the generic
    replay for None."""
    fn = _by_key.get(("nested", shape))
    if fn is None:
        with _lock:
            fn = _by_key.get(("nested", shape))
            if fn is None:
                fn = _by_key[("nested", shape)] = _rendered("nested", shape, lambda: writer.nested(shape))
                _record("nested", shape)
    return fn


def by_key(kind: str, key: tuple):
    """A kernel by what ``PAGESIM_RECORD_KERNELS`` recorded (``pagesim/data/kernels.json``):
    ("shape", chain shape), ("generic", key) or ("nested", replay shape or None)."""
    if kind == "shape":
        return kernel(key)
    if kind == "generic":
        return generic_by_key(key)
    if kind == "nested":
        return nested(key)
    raise ValueError(f"kind={kind!r} is not a kernel kind: 'shape', 'generic' or 'nested'")


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


def _rendered(kind: str, key: tuple, render):
    """The run_chunk of (kind, key): ``render()``'s source, written and imported once (writing a
    kernel's source takes about a millisecond; numba's cache keeps its compiled code)."""
    return _get(render())


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
