"""The timing model: page-walk references and the program's own loads through a data-cache hierarchy.

``simulate_timed`` runs :func:`pagesim.simulate` and, chunk by chunk, replays in program order each
walk's page-table references and each data access's line through the machine's data caches
(:class:`Hierarchy`, presets in ``pagesim/data/caches.toml``, every figure with its source or
named in ``assumed``). It counts where each reference was served, per page size, and prices them:

  walk        = (walks x walk_base_cycles + sum over walk references of the serving level's
                latency) / walk_mlp
                (a walk's references depend on each other, so they are serialised; ``walk_mlp`` > 1
                lets walks of independent accesses overlap, as with several page walkers)
  data_stall  = sum over data accesses served beyond L1 of (that level's latency - L1 latency) / mlp
                (``mlp``: how many independent misses overlap, bounded by the core's miss buffers)
  work        = accesses x work_cycles (everything else, including L1 hits)
  tlb_hit_latency, slb_miss, fault, swap: as in :mod:`pagesim.model.costs`.

Modelling assumptions (besides each hierarchy's own): the caches are non-inclusive with fill on
every level looked in and no back-invalidation, or exclusive (``inclusion='exclusive'``: a line
lives in one level and L1 victims move outward, as the K8's L2); exact LRU replacement (real caches
use pseudo-LRU); data
lines indexed by virtual address (as if page frames were coloured); instruction fetches are not
replayed (the instruction cache is not modelled) but their walks are; the page-table layout in
memory is described in ``pagesim/_kernels/timing.py``; no prefetching, no write-backs.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import importlib.resources
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .._kernels import timing as T
from ..core.check import check_number
from ..core.units import is_power_of_two, log2, parse_size
from ..model.machines import Machine
from ..model.machines import machine as get_machine
from .nested import untimed_error
from .simulate import simulate
from .xrdata import rebuilt

if TYPE_CHECKING:
    import xarray as xr

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover
    import tomli as tomllib

MAX_LEVELS = 4
MAX_MLP = 64.0  # no core of the presets tracks more outstanding misses than this
MAX_LATENCY = 100_000
# how levels share lines: 'non-inclusive' (a miss fills every level looked in, no back-invalidation)
# or 'exclusive' (a line lives in one level; L1 victims move outward, as the K8's L2)
INCLUSION = ("non-inclusive", "exclusive")


@dataclass(frozen=True)
class CacheLevel:
    """One data-cache level: ``size`` bytes, ``ways``-way, ``line``-byte lines, ``latency`` cycles
    load-to-use when a load is served here."""

    name: str
    size: int
    ways: int
    latency: float
    line: int = 64

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"cache level name must be a non-empty string, got {self.name!r}")
        n = f"cache level {self.name!r}"
        object.__setattr__(self, "size", parse_size(self.size, f"{n} size"))
        if isinstance(self.line, bool) or not isinstance(self.line, (int, np.integer)) or self.line not in (16, 32, 64, 128, 256):
            raise ValueError(f"{n} line={self.line!r} must be 16, 32, 64, 128 or 256 bytes")
        if isinstance(self.ways, bool) or not isinstance(self.ways, (int, np.integer)) or not 1 <= self.ways <= 64:
            raise ValueError(f"{n} ways={self.ways!r} must be an int in 1..64")
        if not 0 < self.size <= 1 << 32 or self.size % (self.line * self.ways):
            raise ValueError(f"{n} size={self.size} must be a positive multiple of line x ways ({self.line * self.ways} bytes), at most 4 GiB")
        object.__setattr__(self, "latency", check_number(f"{n} latency", self.latency, 0, MAX_LATENCY))

    @property
    def sets(self) -> int:
        return self.size // (self.line * self.ways)


@dataclass(frozen=True)
class Hierarchy:
    """A machine's data caches, innermost first, and the load-to-use latency of memory (cycles).
    ``inclusion``: 'non-inclusive' (a miss fills every level looked in) or 'exclusive' (a line lives
    in one level, L1 victims move outward: the K8). ``source`` says where each figure comes from;
    ``assumed`` names the figures no source gives."""

    name: str
    levels: tuple[CacheLevel, ...]
    memory_latency: float
    clock_ghz: float = 0.0
    inclusion: str = "non-inclusive"
    source: str = ""
    assumed: tuple[str, ...] = ()

    def __post_init__(self):
        levels = self.levels
        if isinstance(levels, (str, bytes, dict)) or not hasattr(levels, "__iter__"):
            raise TypeError(f"hierarchy {self.name!r} levels must be a sequence of CacheLevel, got {type(levels).__name__} {levels!r}")
        levels = tuple(c if isinstance(c, CacheLevel) else CacheLevel(**c) for c in levels)
        if not 1 <= len(levels) <= MAX_LEVELS:
            raise ValueError(f"hierarchy {self.name!r} has {len(levels)} levels: allowed 1..{MAX_LEVELS}")
        if len({c.line for c in levels}) != 1:
            raise ValueError(f"hierarchy {self.name!r}: every level must have the same line size, got {[c.line for c in levels]}")
        names = [c.name for c in levels]
        if len(set(names)) != len(names) or "memory" in names:
            raise ValueError(f"hierarchy {self.name!r}: level names must differ and not be 'memory' (the level beyond the last), got {names}")
        lat = [c.latency for c in levels]
        object.__setattr__(self, "levels", levels)
        object.__setattr__(self, "clock_ghz", check_number(f"hierarchy {self.name!r} clock_ghz", self.clock_ghz, 0, 100))
        object.__setattr__(self, "memory_latency", check_number(f"hierarchy {self.name!r} memory_latency", self.memory_latency, 0, MAX_LATENCY))
        if lat != sorted(lat) or self.memory_latency < lat[-1]:
            raise ValueError(f"hierarchy {self.name!r}: latencies must not decrease outward, got {lat + [self.memory_latency]}")
        object.__setattr__(self, "assumed", tuple(self.assumed))
        if self.inclusion not in INCLUSION:
            raise ValueError(f"hierarchy {self.name!r} inclusion={self.inclusion!r} is not allowed: use one of {', '.join(map(repr, INCLUSION))}")
        if self.inclusion == "exclusive":
            bad = [c.name for c in levels if c.ways > 16 or c.sets & (c.sets - 1)]
            if bad:
                raise ValueError(f"hierarchy {self.name!r}: exclusive levels need a power-of-two number of sets and at most 16 ways; {bad} do not")

    @property
    def line(self) -> int:
        return self.levels[0].line

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.levels] + ["memory"]

    @property
    def latencies(self) -> np.ndarray:
        """Load-to-use cycles by serving level, memory last."""
        return np.array([c.latency for c in self.levels] + [self.memory_latency], dtype=float)

    def replace_level(self, name: str, **changes) -> "Hierarchy":
        """A copy with one level changed (a what-if; the changed fields become assumptions)."""
        if name not in [c.name for c in self.levels]:
            raise ValueError(f"hierarchy {self.name!r} has no level {name!r}: it has {[c.name for c in self.levels]}")
        levels = tuple(dataclasses.replace(c, **changes) if c.name == name else c for c in self.levels)
        return dataclasses.replace(self, name=self.name + "*", levels=levels, assumed=self.assumed + tuple(f"{name}.{k}" for k in changes))

    def describe(self) -> str:
        rows = [
            f"{self.name} ({self.inclusion}): "
            + ", ".join(f"{c.name} {c.size // 1024} KiB {c.ways}-way {c.line} B lines {c.latency:g} cycles" for c in self.levels)
            + f", memory {self.memory_latency:g} cycles"
        ]
        if self.source:
            rows.append(f"  source: {self.source}")
        if self.assumed:
            rows.append(f"  modelling assumptions: {', '.join(self.assumed)}")
        return "\n".join(rows)


@functools.lru_cache(maxsize=1)
def _presets() -> dict[str, Hierarchy]:
    text = importlib.resources.files("pagesim").joinpath("data/caches.toml").read_bytes()
    data = tomllib.loads(text.decode("utf-8"))
    out = {}
    for h in data["hierarchy"]:
        h = dict(h)
        levels = tuple(CacheLevel(**lv) for lv in h.pop("level"))
        out[h["name"]] = Hierarchy(levels=levels, **{k: (tuple(v) if k == "assumed" else v) for k, v in h.items()})
    return out


def hierarchies() -> list[str]:
    """Names of the preset data-cache hierarchies (most are named after a machine preset)."""
    return list(_presets())


def hierarchy(name) -> Hierarchy:
    """A preset hierarchy by name (a machine preset's name gives that machine's caches), or a
    :class:`Hierarchy` itself. A derived machine ('opteron-k8*') uses its preset's caches."""
    if isinstance(name, Hierarchy):
        return name

    if isinstance(name, Machine):
        key = (name.derived_from or name.name).strip().lower()
        if key not in _presets():
            raise ValueError(
                f"machine {name.name!r} has no data-cache hierarchy preset (those with one: {', '.join(_presets())}): "
                "pass hierarchy= a pagesim.engine.timing.Hierarchy or one of those names"
            )
        return _presets()[key]
    if not isinstance(name, str):
        raise TypeError(f"hierarchy must be a preset name, a Machine or a Hierarchy, got {type(name).__name__} {name!r}")
    p = _presets()
    key = name.strip().lower()
    if key not in p:
        raise ValueError(
            f"hierarchy={name!r}: no data-cache hierarchy preset of that name: choose one of {', '.join(p)} or pass a pagesim.engine.timing.Hierarchy"
        )
    return p[key]


_get_hierarchy = hierarchy  # simulate_timed's ``hierarchy`` argument shadows the function


# --------------------------------------------------------------------------- the replay
class _Replay:
    """Chunk hook for simulate(): replays each chunk and its walk log through the hierarchy."""

    def __init__(self, m, h: Hierarchy):
        self.m, self.h = m, h
        nk = len(m.page_sizes)
        nlev = len(h.levels)
        self.data_hits = np.zeros((nlev + 1, nk), dtype=np.int64)
        self.walk_hits = np.zeros((nlev + 1, nk), dtype=np.int64)
        sets = np.array([c.sets for c in h.levels], dtype=np.int64)
        ways = np.array([c.ways for c in h.levels], dtype=np.int64)
        pways = (ways + 3) // 4 * 4
        cbase = np.zeros(nlev, dtype=np.int64)
        cbase[1:] = np.cumsum(sets * pways)[:-1]
        obase = np.zeros(nlev, dtype=np.int64)
        obase[1:] = np.cumsum(sets)[:-1]
        self.sets, self.ways, self.pways, self.cbase, self.obase = sets, ways, pways, cbase, obase
        self.mask = np.array([s - 1 if is_power_of_two(int(s)) else -1 for s in sets], dtype=np.int64)
        self.pow2 = bool((self.mask >= 0).all() and (ways <= 16).all())
        total = int((sets * pways).sum())
        # recency words with way 0 at the least-recent end, so empty ways fill in order 0, 1, 2...
        order = np.concatenate(
            [np.full(int(n), sum((int(w) - 1 - r) << (4 * r) for r in range(int(w))) if w <= 16 else 0, dtype=np.uint64) for n, w in zip(sets, ways)]
        )
        self.st = T.TState(
            tags=np.full(total, -1, dtype=np.int64),
            stamps=np.zeros(total if (ways > 16).any() else 1, dtype=np.int64),
            order=order,
            clock=np.zeros(1, dtype=np.int64),
            memo=np.array([-1, 0], dtype=np.int64),
        )
        w = m.walker
        if w.kind == "radix":
            bits = list(w.level_bits)
            nl = len(bits)
            self.level_bits = np.array(bits, dtype=np.int64)
            self.level_shift = np.array([w.base_shift + sum(bits[lv + 1 :]) for lv in range(nl)], dtype=np.int64)
            self.leaf_level = np.array([w.leaf_refs(p) - 1 for p in m.page_sizes], dtype=np.int64)
            fb = [min(62, max(0, 63 - int(sh) - b)) for sh, b in zip(self.level_shift, bits)]
            self.frame_mask = np.array([(1 << x) - 1 for x in fb], dtype=np.int64)
        else:
            self.level_bits = self.level_shift = self.frame_mask = np.zeros(1, dtype=np.int64)
            self.leaf_level = np.zeros(nk, dtype=np.int64)
        self.cfg = None

    def __call__(self, a, ka, kcfg, kst):
        if self.cfg is None:
            one = lambda v: np.array([v], dtype=np.int64)  # noqa: E731
            w = self.m.walker
            self.cfg = T.TConfig(
                sets=self.sets,
                ways=self.ways,
                mask=self.mask,
                cbase=self.cbase,
                pways=self.pways,
                obase=self.obase,
                line_shift=one(log2(self.h.line)),
                reg_start=kcfg.reg_start,
                reg_end=kcfg.reg_end,
                reg_size=kcfg.reg_size,
                page_shift=kcfg.page_shift,
                walk_kind=one(int(kcfg.walk_kind[0])),
                level_bits=self.level_bits,
                level_shift=self.level_shift,
                leaf_level=self.leaf_level,
                frame_mask=self.frame_mask,
                hpt_mask=one(int(kcfg.hpt_mask[0])),
                tsb_entries=one(w.tsb_entries if w.kind == "tsb" else 1),
                exclusive=one(1 if self.h.inclusion == "exclusive" else 0),
            )
        nlog = int(kst.wlog_n[0])
        kernel = T.time_chunk_pow2 if self.pow2 else T.time_chunk
        used = kernel(a, ka, kst.wlog, nlog, self.cfg, self.st, self.data_hits, self.walk_hits)
        if used != nlog:
            raise RuntimeError(f"internal error: the timing replay used {used} of {nlog} walk-log words")
        kst.wlog_n[0] = 0


def _check_timing(m, h, mlp, walk_mlp):
    mlp = check_number("mlp", mlp, 1.0, MAX_MLP)
    walk_mlp = check_number("walk_mlp", walk_mlp, 1.0, MAX_MLP)
    w = m.walker
    if w.kind == "radix" and m.va_bits > 57:
        raise ValueError(f"machine {m.name!r}: the timing model lays radix page tables out for at most 57 virtual-address bits, got va_bits={m.va_bits}")
    return mlp, walk_mlp


def simulate_timed(machine, workload=None, *, hierarchy=None, work_cycles=None, mlp: float = 1.0, walk_mlp: float = 1.0, **kwargs) -> "xr.Dataset":
    """:func:`pagesim.simulate` with the timing model: walks and data accesses through data caches.

    machine, workload, work_cycles and every other keyword: as for :func:`pagesim.simulate`
        (``work_cycles``: cycles per access for everything but data stalls and translation,
        L1 hits included; default: the workload's).
    hierarchy: a :class:`Hierarchy` or a preset name (default: the machine's own, by name).
    mlp: independent data misses that overlap (1..64; a modelling assumption per workload and
        core, bounded by its outstanding-miss buffers): data stalls are divided by it.
    walk_mlp: walks that overlap (1..64; 1 = walks serialised, the default).

    Returns the Dataset of :func:`pagesim.simulate` plus ``data_level_hits`` and
    ``walk_level_hits`` (cache_level x page_size: data accesses / walk references served by each
    level, 'memory' last), ``cache_latency`` (cycles by cache_level), and ``cycles`` with the
    components work, data_stall, tlb_hit_latency, walk, slb_miss, fault, swap (page_size
    columns), ``total_cycles`` and the shares recomputed. :func:`timed_cycles` re-prices a result
    for other ``mlp``/``walk_mlp``/``work_cycles``/latencies without simulating again.
    """
    m = get_machine(machine)
    if m.host is not None:
        raise untimed_error(m)
    h = _get_hierarchy(m if hierarchy is None else hierarchy)
    mlp, walk_mlp = _check_timing(m, h, mlp, walk_mlp)
    if "_chunk_hook" in kwargs:
        raise TypeError("simulate_timed() got an unexpected keyword argument '_chunk_hook'")
    replay = _Replay(m, h)
    ds = simulate(m, workload, work_cycles=work_cycles, _chunk_hook=replay, **kwargs)
    # what the timing model adds, then its prices, applied in one build (pagesim.engine.xrdata.rebuilt)
    # as the step-by-step xarray way (ds.assign_coords, ds[...] = ..., timed_cycles) gives them
    steps = [
        ("coord", "cache_level", ("cache_level", h.names)),
        ("var", "cache_latency", (("cache_level",), h.latencies, {"units": "cycles", "long_name": "load-to-use latency of the serving level"})),
        (
            "var",
            "data_level_hits",
            (("cache_level", "page_size"), replay.data_hits, {"units": "accesses", "long_name": "data accesses served by each cache level (memory last)"}),
        ),
        (
            "var",
            "walk_level_hits",
            (
                ("cache_level", "page_size"),
                replay.walk_hits,
                {"units": "references", "long_name": "page-walk references served by each cache level (memory last)"},
            ),
        ),
    ]
    attrs = dict(ds.attrs)
    attrs["walk_base_cycles"] = float(m.costs.walk_base_cycles)
    # the machine's own figures the run was simulated with: a re-pricing names those it changes
    hier = {
        "name": h.name,
        "inclusion": h.inclusion,
        "levels": [(c.name, c.size, c.ways, c.line, c.latency) for c in h.levels],
        "memory_latency": h.memory_latency,
        "assumed": list(h.assumed),
    }
    attrs["as_simulated"] = json.dumps(
        {
            "latencies": [float(x) for x in h.latencies],
            "walk_base_cycles": float(m.costs.walk_base_cycles),
            "machine_changes": list(m.changes),
            "hierarchy": hier,
        }
    )
    attrs["hierarchy"] = json.dumps(hier)
    new = {step[1]: np.asarray(step[2][1]) for step in steps}
    comp_names = list(ds["component"].values)
    cycles = ds["cycles"].values

    def get(k):
        if k in ("walks", "accesses"):  # by page size: summed over sides, the first dimension here
            return ds[k].values.sum(axis=0)
        return new[k] if k in new else ds[k].values

    price, upd = _pricing(get, lambda c: cycles[comp_names.index(c)], attrs, len(h.names), lambda: list(h.names), mlp, walk_mlp, None, None)

    added = {k: attrs[k] for k in ("walk_base_cycles", "hierarchy", "as_simulated")}
    return rebuilt(ds, steps + [("drop", "cycles"), ("drop", "component")] + price, {**added, **upd})


COMPONENTS = ("work", "data_stall", "tlb_hit_latency", "walk", "slb_miss", "fault", "swap")


#: how a re-priced result's ``machine_changes`` names the machine's figures it changed
REPRICED = "re-priced: "


def timed_cycles(
    ds: "xr.Dataset",
    *,
    mlp: float | None = None,
    walk_mlp: float | None = None,
    work_cycles: float | None = None,
    latencies=None,
    walk_base_cycles: float | None = None,
) -> "xr.Dataset":
    """Re-price a :func:`simulate_timed` result (the counters do not change): ``mlp``, ``walk_mlp``,
    ``work_cycles`` (per access), ``latencies`` (cycles by cache level, memory last) and
    ``walk_base_cycles`` (a walk's own cycles besides its references) default to the ones the
    result was priced with. Returns a new Dataset with ``cycles`` and the shares."""
    steps, upd = _repriced(ds, mlp, walk_mlp, work_cycles, latencies, walk_base_cycles)
    ds = ds.drop_vars(["cycles", "component"], errors="ignore")
    for op, name, value in steps:
        if op == "coord":
            ds = ds.assign_coords({name: value})
        else:
            ds[name] = value
    # the latencies it is priced with are the result's from now on: a later re-pricing starts from them
    ds["cache_latency"] = ds["cache_latency"].copy(data=np.asarray(json.loads(upd["latencies"]), dtype=ds["cache_latency"].dtype))
    ds.attrs.update(upd)
    return ds


def cycles_by_component(
    ds: "xr.Dataset",
    *,
    mlp: float | None = None,
    walk_mlp: float | None = None,
    work_cycles: float | None = None,
    latencies=None,
    walk_base_cycles: float | None = None,
) -> dict[str, np.ndarray]:
    """What :func:`timed_cycles` puts in ``cycles``, as {component: cycles by page size} (numpy),
    without building a Dataset: for re-pricing in a loop (a fit over ``mlp``), where building one
    costs more than the pricing."""
    steps, _ = _repriced(ds, mlp, walk_mlp, work_cycles, latencies, walk_base_cycles)
    arr = next(value[1] for _, name, value in steps if name == "cycles")
    return {c: arr[i] for i, c in enumerate(COMPONENTS)}


def _repriced(ds, mlp, walk_mlp, work_cycles, latencies, walk_base_cycles=None):
    if "data_level_hits" not in ds:
        raise ValueError("timed_cycles needs a simulate_timed() result (it has data_level_hits and walk_level_hits)")
    rows = ds["cycles"].transpose("component", ...).values  # numpy, not .sel: this runs in fits
    comps = [str(c) for c in ds["component"].values]
    return _pricing(
        lambda k: ds[k].values.sum(axis=ds[k].dims.index("side")) if k in ("walks", "accesses") else ds[k].values,
        lambda c: rows[comps.index(c)],
        ds.attrs,
        ds.sizes["cache_level"],
        lambda: ds["cache_level"].values.tolist(),
        mlp,
        walk_mlp,
        work_cycles,
        latencies,
        walk_base_cycles,
    )


def _pricing(get, component, attrs, nl, level_names, mlp, walk_mlp, work_cycles, latencies, walk_base_cycles=None):
    """The timing model's prices from the counters: ``get(name)`` gives a variable's values
    (``walks`` and ``accesses`` summed over sides),
    ``component(c)`` the row of the old ``cycles`` for component c, ``attrs`` the Dataset's attrs,
    ``nl`` the cache levels (memory last), ``level_names()`` their names. Returns the steps that
    set ``cycles`` (after it and ``component`` are dropped), ``component`` and the shares, as
    (op, name, (dims, values, attrs)) for pagesim.engine.xrdata.rebuilt, and the attrs to update."""
    mlp = float(attrs.get("mlp", 1.0)) if mlp is None else check_number("mlp", mlp, 1.0, MAX_MLP)
    walk_mlp = float(attrs.get("walk_mlp", 1.0)) if walk_mlp is None else check_number("walk_mlp", walk_mlp, 1.0, MAX_MLP)
    wc = float(attrs["work_cycles_per_access"]) if work_cycles is None else check_number("work_cycles", work_cycles, 0)
    if latencies is None:
        lat = get("cache_latency").astype(float)
    else:
        try:
            lat = np.asarray(latencies, dtype=float)
        except (TypeError, ValueError):
            raise TypeError(f"latencies={latencies!r} must be a sequence of {nl} cycle counts (cache levels, memory last)") from None
        if lat.shape != (nl,) or not np.isfinite(lat).all() or (lat < 0).any() or (np.diff(lat) < 0).any():
            raise ValueError(
                f"latencies={np.atleast_1d(lat).tolist()!r} must be {nl} finite cycle counts >= 0, not decreasing outward (levels {level_names()})"
            )
    walks = get("walks").astype(float)
    base = float(attrs["walk_base_cycles"]) if walk_base_cycles is None else check_number("walk_base_cycles", walk_base_cycles, 0, 1e6)
    walk = (walks * base + (get("walk_level_hits") * lat[:, None]).sum(axis=0)) / walk_mlp
    stall = (get("data_level_hits")[1:] * (lat[1:, None] - lat[0])).sum(axis=0) / mlp
    work = get("accesses").astype(float) * wc
    comps = {c: np.asarray(component(c)).astype(float) for c in ("tlb_hit_latency", "slb_miss", "fault", "swap")}
    comps.update(work=work, data_stall=stall, walk=walk)
    arr = np.stack([comps[c] for c in COMPONENTS])
    total = float(arr.sum())
    trans = float(sum(comps[c].sum() for c in ("tlb_hit_latency", "walk", "slb_miss")))
    steps = [
        ("var", "cycles", (("component", "page_size"), arr, {"units": "cycles", "long_name": "modelled cycles by component and page size (timing model)"})),
        ("coord", "component", ("component", list(COMPONENTS))),
        ("var", "total_cycles", ((), total, {"units": "cycles"})),
        ("var", "translation_share", ((), trans / total if total else 0.0, {"units": "1", "long_name": "share of modelled time in TLB-miss handling"})),
        (
            "var",
            "data_stall_share",
            ((), float(stall.sum()) / total if total else 0.0, {"units": "1", "long_name": "share of modelled time stalled on data beyond L1"}),
        ),
        ("var", "fault_share", ((), float(comps["fault"].sum()) / total if total else 0.0, {"units": "1"})),
        ("var", "swap_share", ((), float(comps["swap"].sum()) / total if total else 0.0, {"units": "1"})),
    ]
    upd = dict(mlp=mlp, walk_mlp=walk_mlp, work_cycles_per_access=wc, latencies=json.dumps(lat.tolist()), walk_base_cycles=base)
    simulated = json.loads(attrs["as_simulated"]) if "as_simulated" in attrs else None
    if "machine_changes" in attrs:
        # the machine's own figures changed from those simulated: the result no longer prices the machine as given
        now = {"latencies": [float(x) for x in lat.tolist()], "walk_base_cycles": base}
        if simulated is not None:
            sim = simulated
            kept, what = list(sim["machine_changes"]), "simulated with"
        else:  # a result without them (an earlier pagesim's): against the figures it was last priced with
            sim = {k: json.loads(attrs[k]) if k == "latencies" else float(attrs[k]) for k in now if k in attrs}
            kept, what = json.loads(attrs["machine_changes"]), "was"
        moved = [f"{k}={json.dumps(now[k])} ({what} {json.dumps(sim[k])})" for k in now if k in sim and now[k] != sim[k]]
        upd["machine_changes"] = json.dumps(kept + ([REPRICED + ", ".join(moved)] if moved else []))
    if "costs" in attrs:  # the machine's costs as priced: a walk's own cycles are the ones used here
        upd["costs"] = str({**ast.literal_eval(attrs["costs"]), "walk_base_cycles": base})
    if "hierarchy" in attrs:  # the hierarchy as priced: its levels' latencies are the ones used here
        # against the simulated hierarchy, or without it (an earlier pagesim's result) the one last priced
        hier = (simulated or {}).get("hierarchy") or json.loads(attrs["hierarchy"])
        names = [f"{lv[0]}.latency" for lv in hier["levels"]] + ["memory_latency"]
        was = [lv[4] for lv in hier["levels"]] + [hier["memory_latency"]]
        moved = [n for n, a, b in zip(names, was, lat.tolist()) if float(a) != float(b)]
        hier["levels"] = [[*lv[:4], float(x)] for lv, x in zip(hier["levels"], lat.tolist())]
        hier["memory_latency"] = float(lat[-1])
        if moved:  # as Hierarchy.replace_level marks a what-if: the name starred, the changed latencies assumed
            hier["name"] += "*"
            hier["assumed"] = list(hier["assumed"]) + [n for n in moved if n not in hier["assumed"]]
        upd["hierarchy"] = json.dumps(hier)
    return steps, upd
