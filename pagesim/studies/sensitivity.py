"""Sensitivity: where a stated parameter sets a finding, sweep it and find where the finding holds.

A finding whose verdict a modelling parameter can flip (SPECjbb's hot fraction,
the solver's plane size, MD's work per access, the program text's size, the calibrated ``S.WORK``,
the database size behind 05's disk-I/O figure) is shown with a sweep of that parameter, the
document's figure marked, and the range of the parameter over which the finding holds. The range
is computed from the sweep (:func:`holding_range`) and attached to the finding with
:meth:`pagesim.studies.findings.Findings.holds_for`; the report shows it as "Holds for ...".

Two kinds of sweep:

* re-simulation: each value of the parameter is a new simulation (hot fraction, plane size, text
  size); edges of a holding range are refined by bisection between swept values;
* re-costing: work cycles per access change no counter of a simulation (no TLB or walk count
  depends on them), only its modelled cycles, which are linear in them: T(w) = T(w0) + (w - w0) N
  for N accesses (``pagesim.model.costs``). A work sweep re-costs one simulation instead of repeating
  it; ``tests/test_sensitivity.py`` checks the re-costed cycles against a new simulation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..core.units import parse_size
from ..engine.simulate import place, simulate
from ..model.machines import machine as get_machine
from ..sources.workloads import workload

# ------------------------------------------------------------------------------ the range finder


def _fmt(x: float, fmt: str) -> str:
    return fmt.format(x)


@dataclass
class Holds:
    """A sweep of one parameter and where a finding holds over it.

    ``table``: one row per evaluated value (sorted), with the parameter's column, the compared
    column and ``holds``. ``intervals``: the runs of consecutive evaluated values at which the
    finding holds, as (first, last) values; the true edges lie between a run's end and the next
    evaluated value: at most ``resolution`` away when the edges were refined, up to the next swept
    value when they were not (``resolution`` None)."""

    parameter: str
    unit: str
    table: object
    intervals: list = field(default_factory=list)
    resolution: float | None = None
    fmt: str = "{:g}"

    @property
    def swept(self) -> tuple[float, float]:
        x = self.table[self.parameter]
        return float(x.min()), float(x.max())

    def contains(self, value: float) -> bool:
        return any(lo <= value <= hi for lo, hi in self.intervals)

    def range_text(self) -> str:
        """'0.452..0.546' (or several ranges joined by 'and'), or '' when the finding holds nowhere."""
        parts = []
        for lo, hi in self.intervals:
            a, b = _fmt(lo, self.fmt), _fmt(hi, self.fmt)
            parts.append(a if a == b else f"{a}..{b}")
        return " and ".join(parts)

    def text(self, what: str = "") -> str:
        """The sensitivity text for :meth:`Findings.holds_for`, e.g. 'hot_fraction 0.452..0.546 of
        the 0.2..0.8 swept (edges to within 0.004)'."""
        lo, hi = self.swept
        sw = f"{_fmt(lo, self.fmt)}..{_fmt(hi, self.fmt)}{self.unit}"
        tail = f" ({what})" if what else ""
        if not self.intervals:
            return f"no {self.parameter} in the {sw} swept{tail}"
        res = f"; edges to within {_fmt(self.resolution, self.fmt)}{self.unit}" if self.resolution else ""
        return f"{self.parameter} {self.range_text()}{self.unit} of the {sw} swept{res}{tail}"


def _position(y: float, lo: float, hi: float) -> int:
    """-1 below the band, 0 inside (closed), +1 above; NaN counts as outside (above)."""
    if math.isnan(y):
        return 1
    return -1 if y < lo else (1 if y > hi else 0)


def holding_range(
    f: Callable[[float], dict],
    values,
    band: tuple[float, float],
    *,
    key: str,
    parameter: str,
    unit: str = "",
    resolution: float | None = None,
    quantum: float | None = None,
    fmt: str = "{:g}",
    max_evals: int = 80,
) -> Holds:
    """Evaluate ``f`` (value -> dict of columns) at ``values`` and find where ``f(x)[key]`` lies in
    the closed ``band`` (lo, hi); use ``-inf``/``inf`` for a one-sided condition.

    With ``resolution``, every pair of neighbouring values whose results fall on different sides of
    an edge of the band (below, inside, above) is bisected until the pair is closer than
    ``resolution`` (or, with ``quantum``, until they are neighbouring multiples of ``quantum``: a
    parameter that only takes such values, like a size in whole 4 MiB pages). A pair that jumps
    over the band is bisected as well, so a narrow band between two swept values is found.
    Bisection assumes the result moves one way between the two values; the sweep itself assumes
    nothing. At most ``max_evals`` evaluations in all (an error beyond it)."""
    import pandas as pd

    lo, hi = (float(band[0]), float(band[1]))
    if not lo <= hi:
        raise ValueError(f"band={band!r}: the low edge must not exceed the high edge")
    xs = sorted({float(v) for v in values})
    if len(xs) < 1:
        raise ValueError("values: give at least one value of the parameter")
    if resolution is not None and not resolution > 0:
        raise ValueError(f"resolution={resolution!r} must be positive")
    if quantum is not None and not quantum > 0:
        raise ValueError(f"quantum={quantum!r} must be positive")
    rows: dict[float, dict] = {}

    def ev(x: float) -> int:
        if x not in rows:
            if len(rows) >= max_evals:
                raise RuntimeError(f"holding_range: more than max_evals={max_evals} evaluations of {parameter}")
            r = dict(f(x))
            if key not in r:
                raise KeyError(f"holding_range: f({x}) returned no {key!r} (columns: {sorted(r)})")
            rows[x] = {parameter: x, **r}
        return _position(float(rows[x][key]), lo, hi)

    for x in xs:
        ev(x)
    if resolution is not None or quantum is not None:
        todo = [(a, b) for a, b in zip(xs, xs[1:]) if ev(a) != ev(b)]
        while todo:
            a, b = todo.pop()
            if quantum is not None:
                ka, kb = round(a / quantum), round(b / quantum)
                if kb - ka <= 1:
                    continue
                m = ((ka + kb) // 2) * quantum
            else:
                if b - a <= resolution:
                    continue
                m = (a + b) / 2
            ev(m)
            todo += [(u, v) for u, v in ((a, m), (m, b)) if ev(u) != ev(v)]
    t = pd.DataFrame([rows[x] for x in sorted(rows)])
    t["holds"] = [_position(float(y), lo, hi) == 0 for y in t[key]]
    return Holds(parameter, unit, t, _runs(t[parameter].tolist(), t["holds"].tolist()), quantum if quantum is not None else resolution, fmt)


def from_table(h: Holds, key: str, band: tuple[float, float]) -> Holds:
    """Where another column of a finished sweep lies in ``band``, over the values already swept
    (no new evaluation, so no refinement of the edges)."""
    t = h.table.drop(columns="holds")
    rows = {float(r[h.parameter]): r.drop(labels=h.parameter).to_dict() for _, r in t.iterrows()}
    return holding_range(lambda x: rows[x], list(rows), band, key=key, parameter=h.parameter, unit=h.unit, fmt=h.fmt, max_evals=len(rows))


def _runs(xs, ok) -> list[tuple[float, float]]:
    out, start = [], None
    for i, (x, h) in enumerate(zip(xs, ok)):
        if h and start is None:
            start = x
        if h and (i + 1 == len(xs) or not ok[i + 1]):
            out.append((start, x))
            start = None
    return out


def alignment_rule(sizes, holds) -> int | None:
    """The power of two A (bytes) such that, among the swept ``sizes``, the finding holds exactly at
    the sizes that are not multiples of A; None when no such A separates them."""
    sizes = [int(s) for s in sizes]
    align = [s & -s for s in sizes]  # the largest power of two dividing each size
    for a in sorted(set(align)):
        if all(h == (al < a) for al, h in zip(align, holds)):
            return a
    return None


# ------------------------------------------------------------------------- 01: SPECjbb's hot fraction


def jbb_point(hot_fraction: float, quick: bool = False, seed: int = 0, accesses: int | None = None) -> dict:
    """The SPECjbb-like run of ``power64k.erat_runs`` at another hot fraction (and, given, another
    number of references): data-ERAT misses and steady cycles with 4 KiB and 64 KiB pages, the
    reduction and the throughput improvement."""
    from . import power64k

    spec = power64k.WORKLOADS["SPECjbb2005"]
    params = {**spec["quick" if quick else "full"], "hot_fraction": float(hot_fraction)}
    if accesses is not None:
        params["accesses"] = int(accesses)
    w = workload(spec["name"], **params)
    miss, cyc = {}, {}
    for page in ("4K", "64K"):
        p = parse_size(page)
        ds = simulate("power6", w, layout=place(w, p, gap=p), seed=seed)
        miss[page] = int(ds["misses"].sel(structure="D-ERAT").sum())
        cyc[page] = float(ds["cycles"].sel(component=["work", "tlb_hit_latency", "walk", "slb_miss"]).sum())
    return {
        "D-ERAT misses 4K": miss["4K"],
        "D-ERAT misses 64K": miss["64K"],
        "reduction %": 100 * (miss["4K"] - miss["64K"]) / miss["4K"],
        "throughput improvement %": 100 * (cyc["4K"] / cyc["64K"] - 1),
    }


JBB_SWEEP_ACCESSES = 300_000  # per point of the sweep in both modes (quick mode's size); 100,000 give the same reductions to about 0.1 point


def jbb_hot_fraction(band, quick: bool = False, seed: int = 0, values=None, key: str = "reduction %", accesses: int = JBB_SWEEP_ACCESSES) -> Holds:
    """SPECjbb's data-ERAT reduction (or another column of :func:`jbb_point`) against the hot
    fraction, and the hot fractions at which it lies in ``band``."""
    if values is None:
        values = np.round(np.arange(0.2, 0.81, 0.1 if quick else 0.05), 3)
    return holding_range(
        lambda h: jbb_point(h, quick, seed, accesses), values, band, key=key, parameter="hot_fraction", resolution=0.02 if quick else 0.005, fmt="{:.3g}"
    )


# ------------------------------------------------------------------------- 02: plane size, MD work


def l2_sets_of_planes(plane: int, planes: int = 64, m="opteron-k8") -> dict:
    """Where the solver's planes fall in the last-level 4 KiB data TLB at the start of a sweep:
    the sets their pages use and the most planes in one set (against the set's ways)."""
    mm = get_machine(m)
    l2 = mm.chain("data", 4096)[-1]
    w = workload("planes", planes=planes, plane=plane, accesses=1)
    base = place(w, 4096).regions[0].start
    sets = [((base + i * plane) >> 12) % l2.sets for i in range(planes)]
    per_set = np.bincount(sets, minlength=l2.sets)
    return {"L2 TLB sets used": int(np.count_nonzero(per_set)), "most planes in one set": int(per_set.max()), "L2 TLB ways": int(l2.ways)}


def solver_plane_sizes(quick: bool = False, seed: int = 0, sizes=None, m="opteron-k8"):
    """The strided solver of ``cscs.kernels`` (64 planes) over plane sizes: % change with small
    pages (positive: 4 KB better), walks, and where the planes fall in the L2 TLB."""
    from . import cscs

    if sizes is None:
        sizes = [k << 10 for k in (range(896, 1153, 32) if quick else range(512, 2049, 32))]
    accesses = 50_000  # the sign needs the steady state only: 64 planes revisit their pages every 64 accesses

    def one(size):
        r = cscs.small_page_change(m, "planes", seed=seed, planes=64, plane=int(size), accesses=accesses)
        return {
            "plane KiB": int(size) >> 10,
            "walks 4K": r["walks_small"],
            "walks 2M": r["walks_large"],
            "small_page_change_pct": r["small_page_change_pct"],
            **l2_sets_of_planes(int(size), 64, m),
        }

    # the finding: small pages better, i.e. a change above 0 (closed band from the smallest positive number)
    return holding_range(one, sizes, (np.nextafter(0.0, 1.0), math.inf), key="small_page_change_pct", parameter="plane", unit=" B")


def solver_text(h: Holds) -> str:
    """The sensitivity text of the plane-size sweep, from the sweep: where small pages win, and the
    power-of-two alignment that decides it when one does."""
    t = h.table
    kib = (t["plane"] // 1024).astype(int)
    n_ok, n = int(t["holds"].sum()), len(t)
    steps = set(np.diff(kib).tolist())
    if n == 1:
        swept = f"{kib.min()} KiB"
    elif len(steps) == 1:
        swept = f"{kib.min()}..{kib.max()} KiB in {steps.pop()} KiB steps"
    else:
        swept = f"sizes from {kib.min()} to {kib.max()} KiB"
    a = alignment_rule(t["plane"], t["holds"])
    if n_ok == 0:
        return f"no plane size of the {swept} swept"
    if a is not None and n_ok < n:
        return f"plane sizes that are not multiples of {a >> 10} KiB: {n_ok} of the {n} swept ({swept}); at every multiple of {a >> 10} KiB small pages lose"
    sizes = ", ".join(str(k) for k in kib[t["holds"]])
    return f"plane sizes {sizes} KiB: {n_ok} of the {n} swept ({swept})"


def recost(T: float, work_used: float, accesses: int, work: float) -> float:
    """Modelled steady cycles of a run re-costed with ``work`` cycles per access instead of
    ``work_used`` (work cycles change no counter; see the module's docstring)."""
    return float(T) + (float(work) - float(work_used)) * int(accesses)


def md_work(row, band, work_used: float, values=None, key: str = "small_page_change_pct") -> Holds:
    """The MD kernel's % change with small pages against work cycles per access, re-costed from one
    row of ``cscs.kernels`` (T_small, T_large, accesses at ``work_used``); where it lies in ``band``."""
    if values is None:
        values = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000]

    def one(w):
        ts = recost(row["T_small"], work_used, row["accesses"], w)
        tl = recost(row["T_large"], work_used, row["accesses"], w)
        return {"T_small": ts, "T_large": tl, "small_page_change_pct": 100 * (tl - ts) / ts}

    return holding_range(one, values, band, key=key, parameter="work_cycles", resolution=0.5, fmt="{:.4g}", max_evals=200)


# ------------------------------------------------------------------------- 03: text size, S.WORK


def text_point(text_mib: int, quick: bool = False, seed: int = 0) -> dict:
    from . import mpss

    n = (60_000 if quick else 300_000) // 2  # the notebook's accesses for section 5
    t = mpss.text_pages(text=f"{int(text_mib)}M", accesses=n, seed=seed).set_index("text pages")
    m8, m4 = int(t.loc["8K", "iTLB misses"]), int(t.loc["4M", "iTLB misses"])
    return {
        "iTLB misses 8K": m8,
        "iTLB misses 4M": m4,
        # the finding: 4M misses < 8K misses / 10, i.e. this ratio above 10
        "8K / 4M misses": m8 / m4 if m4 else math.inf,
    }


def text_sizes(quick: bool = False, seed: int = 0, values=None) -> Holds:
    """iTLB misses with 8K and 4M text pages over the text size (MiB, whole 4 MiB pages), and the
    sizes at which 4M pages still cut them more than tenfold."""
    if values is None:
        values = [8, 16, 32, 64, 128, 256] if quick else [8, 16, 32, 48, 64, 80, 96, 128, 192, 256]
    return holding_range(
        lambda s: text_point(int(s), quick, seed),
        values,
        (np.nextafter(10.0, math.inf), math.inf),
        key="8K / 4M misses",
        parameter="text",
        unit=" MiB",
        quantum=4,
    )


def trapstat_work(runs: dict, band, values=None, which: str = "before") -> Holds:
    """%tim in TLB handling (trapstat's total) of the before and after runs of
    ``mpss.trapstat_before_after``, re-costed over work cycles per access (``S.WORK``); where the
    ``which`` run's share lies in ``band``."""
    from . import mpss

    base = {}
    for run, (ds, t) in runs.items():
        steady = float(ds["cycles"].sel(component=["work", "tlb_hit_latency", "walk", "slb_miss"]).sum())
        base[run] = (mpss.total_pct(t) / 100 * steady, steady, int(ds["accesses"].sum()), float(ds.attrs["work_cycles_per_access"]))
    if values is None:
        values = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000]

    def one(w):
        out = {}
        for run, (trap, steady, n, w0) in base.items():
            out[f"%tim {run}"] = 100 * trap / recost(steady, w0, n, w)
        return out

    return holding_range(one, values, band, key=f"%tim {which}", parameter="S.WORK", resolution=0.5, fmt="{:.4g}", max_evals=200)


# ------------------------------------------------------------------------- 05: database size


def database_sizes(pool: float, freed: float, band, values_gib=None) -> Holds:
    """05's disk-I/O reduction (``sharedpt.buffer_pool_io``) over the database size in GiB, and the
    sizes at which it lies in ``band``."""
    from .sharedpt import GIB, buffer_pool_io

    if values_gib is None:
        values_gib = [7, 8, 9, 10, 11, 12, 13, 14, 16, 20, 24, 32, 48, 64]

    def one(d):
        r = buffer_pool_io(pool, freed, [d * GIB]).iloc[0].to_dict()
        del r["database GiB"]
        return r

    return holding_range(one, values_gib, band, key="disk I/O reduction %", parameter="database", unit=" GiB", resolution=0.01, fmt="{:.3g}")
