"""Sensitivity: where a stated parameter sets a finding, sweep it and find where the finding holds.

A finding whose verdict a modelling parameter can flip (SPECjbb's hot fraction,
the solver's plane size, MD's work per access, the program text's size, the calibrated ``S.WORK``,
the database size behind 05's disk-I/O figure) is shown with a sweep of that parameter, the
document's figure marked, and the range of the parameter over which the finding holds. The range
is computed from the sweep (:func:`holding_range`) and attached to the finding with
:meth:`pagesim.studies.findings.Findings.holds_for`; the report shows it as "Holds for ...".

This module holds the machinery; each sweep lives with its study (``power64k.jbb_hot_fraction``,
``cscs.solver_plane_sizes``, ``mpss.text_sizes`` and ``mpss.trapstat_work``, ``sharedpt.database_sizes``)
and calls :func:`holding_range`.

Two kinds of sweep:

* re-simulation: each value of the parameter is a new simulation (hot fraction, plane size, text
  size); edges of a holding range are refined by bisection between swept values;
* re-costing: work cycles per access change no counter of a simulation (no TLB or walk count
  depends on them), only its modelled cycles, which are linear in them: T(w) = T(w0) + (w - w0) N
  for N accesses (``pagesim.model.costs``). A work sweep re-costs one simulation instead of repeating
  it; ``tests/studies/test_sensitivity.py`` checks the re-costed cycles against a new simulation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..engine.simulate import place
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
    import pandas as pd  # deferred: pandas is slow to import; only tables need it

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
