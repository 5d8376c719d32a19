"""Findings: a document's figure beside the simulation's, with a verdict that says what happened.

A notebook records each finding with one of the methods below, shows :meth:`Findings.table` (the
"document vs simulation" table), and ends with :meth:`Findings.save`, which writes the findings to
``result_path`` as JSON for the validation report (``pagesim notebooks``).

Verdicts (only ``exact`` and ``within`` count as reproduced):

  exact           the document gives an exact count and the simulation equals it
  within          the simulation lies inside a tolerance band stated beside the finding (from the
                  document's own spread, or a stated default such as +-50% relative or +-5 points)
  direction       same sign as the document, outside the band; the size is reported as the ratio
                  simulation / document
  contradicted    the simulation disagrees with the document (opposite sign, or an exact count
                  that differs)
  not reproduced  shown beside the simulation but not checked, with the reason
  arithmetic      a worked calculation that illustrates a figure (a value against its own input,
                  or a ratio fixed by arithmetic): never evidence, never counted as reproduced
  calibrated      a parameter was fitted to this figure: shown, never counted

A finding that a stated parameter can flip carries ``sensitivity``: the range of the parameter over
which it holds (given when it is recorded, or attached with :meth:`Findings.holds_for` after a
sweep of ``pagesim.studies.sensitivity``). Verdicts are data, not exceptions: a notebook records an honest ``contradicted``
and goes on; ``pagesim notebooks`` fails on a *regression* (a finding whose verdict is worse than
in the committed baseline, ``notebooks/verdicts.json``). An ``arithmetic`` finding whose arithmetic
does not come out is a bug in the notebook and raises at once.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path

from ._check import check_choice

VERDICTS = ("exact", "within", "direction", "contradicted", "not reproduced", "arithmetic", "calibrated")
REPRODUCED = ("exact", "within")
#: verdicts that can regress, best first; the others are fixed by how a finding is written
RANKED = ("exact", "within", "direction", "contradicted")


def _peak_rss_mib():
    try:
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    except ImportError:  # pragma: no cover - Windows
        return None


class FindingFailed(AssertionError):
    """A notebook's own arithmetic does not come out, or a finding regressed."""


@dataclass
class Finding:
    id: str
    finding: str
    source: str
    document: str
    simulation: str
    verdict: str
    why: str = ""
    band: str = ""
    ratio: float | None = None
    sensitivity: str = ""
    #: the band of a ``measured`` finding as numbers (low, high), for a sweep that asks where it holds
    limits: tuple[float, float] | None = None


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def note_text(why: str, sensitivity: str = "") -> str:
    """A finding's note: its reason, then "Holds for <sensitivity>." when a sweep found the range."""
    why = (why or "").strip()
    if not sensitivity:
        return why
    if why and why[-1] not in ".;:!?":
        why += "."
    return (why + " " if why else "") + f"Holds for {sensitivity}."


def _sign(v: float) -> int:
    return (v > 0) - (v < 0)


def classify(document: float, simulation: float, lo: float, hi: float) -> tuple[str, float | None]:
    """The verdict of a measured figure: ``within`` when ``lo <= simulation <= hi``, else
    ``direction`` when it has the document's sign, else ``contradicted``; with simulation/document."""
    if not all(math.isfinite(float(x)) for x in (document, simulation, lo, hi)):
        raise ValueError(f"classify needs finite numbers, got document={document}, simulation={simulation}, band={lo}..{hi}")
    ratio = simulation / document if document else None
    if lo <= simulation <= hi:
        return "within", ratio
    if _sign(simulation) == _sign(document) and document != 0:
        return "direction", ratio
    return "contradicted", ratio


class Findings:
    def __init__(self, notebook: str, document: str):
        self.notebook = notebook
        self.document = document
        self.items: list[Finding] = []

    def _add(self, f: Finding) -> Finding:
        check_choice("verdict", f.verdict, VERDICTS)
        if any(x.id == f.id for x in self.items):
            raise ValueError(f"{self.notebook}: finding id {f.id!r} is recorded twice")
        self.items.append(f)
        return f

    # -- findings that are evidence ------------------------------------------------------------
    def exact(self, id: str, finding: str, source: str, document, simulation, why: str = "") -> Finding:  # noqa: A002
        """The document gives an exact count: ``exact`` when equal, else ``contradicted``."""
        verdict = "exact" if document == simulation else "contradicted"
        return self._add(Finding(id, finding, source, _fmt(document), _fmt(simulation), verdict, why))

    def measured(
        self,
        id: str,
        finding: str,
        source: str,
        document,
        simulation: float,
        *,  # noqa: A002
        band: tuple[float, float] | None = None,
        rel: float | None = None,
        points: float | None = None,
        unit: str = "",
        why: str = "",
        sensitivity: str = "",
    ) -> Finding:
        """A figure the document measured on a real machine (a speed-up in %, a miss reduction...).
        ``document`` is one figure or the document's spread ``(low, high)`` (two systems, a range).
        The band is stated here: ``band=(lo, hi)`` explicitly, or ``rel=0.5`` (the document's
        figure or spread widened by 50% of itself), or ``points=5`` (widened by 5 in its unit).
        The ratio simulation/document uses the figure, or the middle of the spread."""
        if sum(x is not None for x in (band, rel, points)) != 1:
            raise ValueError("give exactly one of band=(lo, hi), rel= or points=")
        if isinstance(document, (tuple, list)):
            d_lo, d_hi = sorted(float(x) for x in document)
            doc_text = f"{_fmt(d_lo)}..{_fmt(d_hi)}{unit}" if d_lo != d_hi else f"{_fmt(d_lo)}{unit}"
        else:
            d_lo = d_hi = float(document)
            doc_text = f"{_fmt(d_lo)}{unit}"
        d, s = (d_lo + d_hi) / 2, float(simulation)
        if band is not None:
            lo, hi = float(band[0]), float(band[1])
            text = f"{_fmt(lo)}..{_fmt(hi)}{unit} (stated)"
        elif rel is not None:
            lo, hi = min(d_lo * (1 - rel), d_lo * (1 + rel)), max(d_hi * (1 - rel), d_hi * (1 + rel))
            text = f"document +-{rel:.0%}: {_fmt(lo)}..{_fmt(hi)}{unit}"
        else:
            lo, hi = d_lo - points, d_hi + points
            text = f"document +-{_fmt(points)} {'points' if unit == '%' else unit or 'units'}: {_fmt(lo)}..{_fmt(hi)}{unit}"
        verdict, ratio = classify(d, s, lo, hi)
        return self._add(Finding(id, finding, source, doc_text, f"{_fmt(s)}{unit}", verdict, why, text, ratio, sensitivity, (lo, hi)))

    def direction(
        self,
        id: str,
        finding: str,
        source: str,
        document,
        simulation,
        holds: bool,
        *,  # noqa: A002
        ratio: float | None = None,
        why: str = "",
        sensitivity: str = "",
    ) -> Finding:
        """Only the direction can be compared (the document gives no figure a band could be set
        around): ``direction`` when ``holds``, else ``contradicted``."""
        verdict = "direction" if holds else "contradicted"
        return self._add(Finding(id, finding, source, _fmt(document), _fmt(simulation), verdict, why, "", ratio, sensitivity))

    # -- findings that are not evidence ---------------------------------------------------------
    def arithmetic(self, id: str, finding: str, source: str, document, simulation, holds: bool = True, why: str = "") -> Finding:  # noqa: A002
        """A worked calculation that illustrates a document's figure (never counted as reproduced).
        Raises at once when the arithmetic does not come out: that is a bug, not a finding."""
        f = self._add(Finding(id, finding, source, _fmt(document), _fmt(simulation), "arithmetic", why))
        if not holds:
            raise FindingFailed(f"{self.notebook}: the arithmetic of {id!r} does not come out: {finding}; document {document}, computed {simulation}")
        return f

    def calibrated(self, id: str, finding: str, source: str, document, simulation, parameter: str, why: str = "") -> Finding:  # noqa: A002
        """A figure a parameter was fitted to (shown, never counted)."""
        return self._add(Finding(id, finding, source, _fmt(document), _fmt(simulation), "calibrated", why or f"{parameter} was fitted to this figure"))

    def not_reproduced(self, id: str, finding: str, source: str, document, simulation, why: str) -> Finding:  # noqa: A002
        """A document item shown but not reproduced, with the reason."""
        if not why:
            raise ValueError(f"{id}: say why the finding is not reproduced")
        return self._add(Finding(id, finding, source, _fmt(document), _fmt(simulation), "not reproduced", why))

    # -- a computed condition instead of ==, and a shorter name for not_reproduced ----------------------
    def check(self, id: str, finding: str, source: str, document, simulation, holds: bool, kind: str = "exact", why: str = "") -> bool:  # noqa: A002
        """For an exact count whose agreement is not ``document == simulation`` (a dict of counts, a
        condition over several rows): kind 'exact' -> exact/contradicted as ``holds`` says;
        'direction' is :meth:`direction`."""
        if kind == "exact":
            verdict = "exact" if holds else "contradicted"
        elif kind == "direction":
            verdict = "direction" if holds else "contradicted"
        else:
            raise ValueError(f"kind={kind!r}: use 'exact' or 'direction' (or the methods exact, measured, direction, arithmetic, calibrated)")
        self._add(Finding(id, finding, source, _fmt(document), _fmt(simulation), verdict, why))
        return bool(holds)

    def note(self, id: str, finding: str, source: str, document, simulation, why: str) -> Finding:  # noqa: A002
        """:meth:`not_reproduced`."""
        return self.not_reproduced(id, finding, source, document, simulation, why)

    # -- sensitivity ------------------------------------------------------------------------------
    def get(self, id: str) -> Finding:  # noqa: A002
        """The finding recorded under ``id``."""
        for f in self.items:
            if f.id == id:
                return f
        raise KeyError(f"{self.notebook}: no finding {id!r} is recorded (recorded: {', '.join(f.id for f in self.items)})")

    def holds_for(self, id: str, sensitivity: str) -> Finding:  # noqa: A002
        """Attach to finding ``id`` the range of a parameter over which it holds, found by a sweep
        after the finding was recorded (``pagesim.studies.sensitivity``); the report shows it as
        "Holds for ...". The verdict does not change."""
        if not isinstance(sensitivity, str) or not sensitivity.strip():
            raise ValueError(f"{id}: sensitivity must be a non-empty text such as 'hot_fraction 0.45..0.55', got {sensitivity!r}")
        f = self.get(id)
        f.sensitivity = sensitivity.strip()
        return f

    # -- output -----------------------------------------------------------------------------------
    def counts(self) -> dict:
        return {v: sum(1 for f in self.items if f.verdict == v) for v in VERDICTS}

    def table(self):
        import pandas as pd

        rows = [
            {
                "finding": f.finding,
                "source": f.source,
                "document": f.document,
                "simulation": f.simulation,
                "verdict": f.verdict,
                "band": f.band,
                "sim / doc": "" if f.ratio is None else f"{f.ratio:.2f}",
                "note": note_text(f.why, f.sensitivity),
            }
            for f in self.items
        ]
        return pd.DataFrame(rows)

    def save(self, result_path) -> None:
        """Write the findings as JSON (when ``result_path`` is set) and print the verdict counts."""
        peak = _peak_rss_mib()
        c = self.counts()
        print(", ".join(f"{n} {v}" for v, n in c.items() if n) + f" ({len(self.items)} findings)")
        if peak:
            print(f"peak memory of this kernel: {peak:.0f} MiB")
        if result_path:
            from ._files import write_atomic

            p = Path(result_path)
            p.parent.mkdir(parents=True, exist_ok=True)
            data = {"notebook": self.notebook, "document": self.document, "peak_rss_mib": peak, "findings": [asdict(f) for f in self.items]}
            write_atomic({p: json.dumps(data, indent=1)}, f"the findings of {self.notebook}")


def regressions(records: list[dict], baseline: dict) -> list[str]:
    """Findings whose verdict is worse than in ``baseline`` ({notebook: {id: verdict}}), or missing.
    Only the ranked verdicts (exact > within > direction > contradicted) can regress; a finding
    whose class changed between ranked and unranked (a check relabelled arithmetic) is a change of
    the notebook and is reported by :func:`changes`, not here."""
    out = []
    for r in records:
        base = baseline.get(r["notebook"].removesuffix(".ipynb"), {})
        now = {f["id"]: f["verdict"] for f in r.get("findings", [])}
        if r.get("status") != "ok":
            continue  # an error is reported on its own
        for fid, was in base.items():
            if fid not in now:
                out.append(f"{r['notebook']}: {fid} was {was}, now missing")
            elif was in RANKED and now[fid] in RANKED and RANKED.index(now[fid]) > RANKED.index(was):
                out.append(f"{r['notebook']}: {fid} was {was}, now {now[fid]}")
    return out


def changes(records: list[dict], baseline: dict) -> list[str]:
    """Every verdict that differs from ``baseline`` (better, new, or relabelled)."""
    out = []
    for r in records:
        base = baseline.get(r["notebook"].removesuffix(".ipynb"), {})
        for f in r.get("findings", []):
            was = base.get(f["id"])
            if was != f["verdict"]:
                out.append(f"{r['notebook']}: {f['id']} {was or 'new'} -> {f['verdict']}")
    return out
