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
  contradicted    the model ran and disagrees with the document (opposite sign, no change or under
                  a tenth of the document's change, a factor it falls far short of, an exact count
                  that differs, or, where the model's set-up fixes the sign, a size outside the
                  band), with the model's reason
  not reproduced  nothing was run for it, or an input the document does not state sets it and the
                  runs over its range fall on both sides of the document's figure (so any figure
                  could be matched): shown with the reason. :meth:`Findings.robust` applies the
                  second part to every swept finding outside its band, row by row: a row whose
                  runs straddle its document figure is marked not reproduced, and the finding is
                  when every row outside its band is
  arithmetic      a worked calculation that illustrates a figure (a value against its own input,
                  or a ratio fixed by arithmetic): never evidence, never counted as reproduced
  calibrated      a parameter was fitted to this figure: shown, never counted
  shown           a measurement of the machine that runs the notebook, or a prediction of the
                  model, set beside what could explain it, with no document figure to agree or
                  disagree with: not judged (only for ``host`` and ``model`` findings)

A finding about several systems or rows (``document`` and ``simulation`` given as dicts with the same
keys) is ``within`` only when every row lies inside its own band; otherwise ``direction`` when every
row has its document's sign, else ``contradicted``; every row's ratio is shown.

A ``within`` whose simulated figure rests on a modelling choice (a working set, a hot fraction, work
per access...) names the choice when it is recorded (``choices=``) and is re-run over x0.5..x2 of it
with :meth:`Findings.robust`; the report calls it ``within (robust)`` only when every run stays in its
band, and prints where it holds otherwise. Saving refuses a ``within`` whose named choices were not
swept.

Counted once: a finding that restates another finding's simulated figure says so (``reuses="id"``, or a
tuple of ids)
and the headline does not count it again. A finding measured on the machine that runs the notebook
(``host=True``, or a notebook recorded with ``Findings(..., host=True)``) is a check of pagesim
against this machine, not evidence about a document, and the headline counts it apart.

A prediction of the model that no document figure stands beside (``model=True``) is shown and
counted apart too.

Where the model's set-up fixes a figure's sign (it cannot come out the other way, ``sign_fixed=True``),
the sign is no evidence: a figure, or any of its rows, outside its band is ``contradicted``, not
``direction``; so is one outside a document range that has both signs. A band holds the document's
figure (or its whole range) and never reaches the other sign.

``figures`` is how many of the document's measured-performance figures a finding covers (a table of
16 rows is 16 figures, a not-reproduced finding too); the report counts them per document.

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
import re
from dataclasses import asdict, dataclass
from pathlib import Path

from ..core.check import check_choice, check_number
from ..core.files import write_atomic

VERDICTS = ("exact", "within", "direction", "contradicted", "not reproduced", "arithmetic", "calibrated", "shown")
#: the verdicts as the report shows them: a within that survived its sweeps is "within (robust)"
LABELS = ("exact", "within (robust)", "within", "direction", "contradicted", "not reproduced", "arithmetic", "calibrated", "shown")
REPRODUCED = ("exact", "within (robust)", "within")
#: verdicts that can regress, best first; the others are fixed by how a finding is written
RANKED = ("exact", "within (robust)", "within", "direction", "contradicted")


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
    #: per-row figures of a finding about several systems: [{row, document, doc_low, doc_high, simulation, low, high, verdict, ratio}]
    rows: list | None = None
    #: the id of the finding whose simulated figure this one restates ("" when its own)
    reuses: str = ""
    #: measured on the machine that runs the notebook, not a document's figure
    host: bool = False
    #: a prediction of the model the document says nothing about (shown, counted apart)
    model: bool = False
    #: the modelling choices a ``within`` rests on; each must be swept with :meth:`Findings.robust`
    choices: tuple = ()
    #: True when every run of every swept choice stays in the band, False when some leave it, None: not swept
    robust: bool | None = None
    #: what the sweeps found, one text per choice
    robustness: list | None = None
    #: the choices swept with :meth:`Findings.robust`
    swept: tuple = ()
    #: how many of the document's measured-performance figures this finding covers
    figures: int = 0
    #: recorded with ``sign_fixed=True``: the model's set-up gives it the document's sign, so a sweep
    #: that finds the other sign refutes that claim
    sign_fixed: bool = False
    #: the document's figure of a one-figure ``measured`` finding as (low, high): its range, or the figure twice
    doc_limits: tuple[float, float] | None = None
    #: a finding outside its band (or a row of it) that is inside it at another value of a choice swept:
    #: its disagreement rests on the value chosen
    reaches: bool = False

    @property
    def label(self) -> str:
        """The verdict as the report shows it: ``within (robust)`` for a within that survived its sweeps."""
        return "within (robust)" if self.verdict == "within" and self.robust else self.verdict


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def note_text(why: str, sensitivity: str = "", robustness=None) -> str:
    """A finding's note: its reason, then "Holds for <sensitivity>." when a sweep found the range,
    then "Swept: ..." for each modelling choice re-run with :meth:`Findings.robust`."""
    why = (why or "").strip()
    extra = ([f"Holds for {sensitivity}."] if sensitivity else []) + [f"Swept: {t}." for t in robustness or []]
    if not extra:
        return why
    if why and why[-1] not in ".;:!?":
        why += "."
    return " ".join(([why] if why else []) + extra)


def short_note(note: str, limit: int = 120) -> str:
    """A note's first clause that is not the band's description (clauses end at ``;`` or a sentence
    end), at most ``limit`` characters; the validation report keeps the whole note."""
    note = (note or "").strip()
    clauses = [c.strip(" .;") for c in re.split(r"; |\. (?=[A-Z(])", note) if c.strip(" .;")]
    if not clauses:
        return ""
    head = next((c for c in clauses if not c.startswith("band")), clauses[0])
    if len(head) > limit:
        head = head[: limit - 1].rsplit(" ", 1)[0] + "…"
    return head + (" (more in the report)" if len(clauses) > 1 or head.endswith("…") else "")


def label(f: dict) -> str:
    """The verdict of a saved finding (a dict) as the report shows it."""
    return "within (robust)" if f.get("verdict") == "within" and f.get("robust") else f.get("verdict", "")


def ratio_text(f: dict) -> str:
    """simulation / document: one ratio, or one per row for a finding about several rows."""
    if f.get("rows"):
        return "; ".join(f"{r['row']} {'' if r.get('ratio') is None else format(r['ratio'] + 0.0, '.2f')}" for r in f["rows"])
    return "" if f.get("ratio") is None else f"{f['ratio'] + 0.0:.2f}"  # + 0.0: no "-0.00" for a zero change


def _sign(v: float) -> int:
    return (v > 0) - (v < 0)


#: a simulated change smaller than this share of the document's is no change (``contradicted``)
NO_CHANGE = 0.1


def classify(document: float, simulation: float, lo: float, hi: float, change: bool = False) -> tuple[str, float | None]:
    """The verdict of a measured figure: ``within`` when ``lo <= simulation <= hi``, else
    ``direction`` when it has the document's sign, else ``contradicted``; with simulation/document.
    A figure under :data:`NO_CHANGE` (a tenth) of the document's or more than ten times it is
    ``contradicted``, not ``direction``: the same sign is not agreement when the size is off by more
    than an order of magnitude (for a ``change``, a speed-up or a drop in misses, a tenth of it is no
    change)."""
    if not all(math.isfinite(float(x)) for x in (document, simulation, lo, hi)):
        raise ValueError(f"classify needs finite numbers, got document={document}, simulation={simulation}, band={lo}..{hi}")
    ratio = simulation / document if document else None
    if lo <= simulation <= hi:
        return "within", ratio
    if _sign(simulation) == _sign(document) and document != 0 and NO_CHANGE <= abs(ratio) <= 1 / NO_CHANGE:
        return "direction", ratio
    return "contradicted", ratio


class Findings:
    def __init__(self, notebook: str, document: str, *, host: bool = False):
        self.notebook = notebook
        self.document = document
        #: every finding of this notebook is measured on the machine that runs it
        self.host = bool(host)
        self.items: list[Finding] = []

    def _add(
        self, f: Finding, *, reuses: str | tuple = "", counted_in: str = "", host: bool | None = None, model: bool = False, figures: int | None = None
    ) -> Finding:
        """Record ``f``. ``reuses``: the findings whose simulated figure it restates; ``counted_in``: the
        finding where the same document figure is judged (its rows one by one): either way it is not
        counted again in the headline."""
        check_choice("verdict", f.verdict, VERDICTS)
        if not isinstance(f.id, str) or not f.id or "," in f.id or ":" in f.id:
            raise ValueError(f"finding id {f.id!r} must be a non-empty text without ',' or ':' (they separate the ids a finding names)")
        if any(x.id == f.id for x in self.items):
            raise ValueError(f"{self.notebook}: finding id {f.id!r} is recorded twice")
        if reuses and counted_in:
            raise ValueError(f"{f.id}: give reuses= (a simulated figure restated) or counted_in= (a document figure judged elsewhere), not both")
        if model and (reuses or counted_in):
            raise ValueError(f"{f.id}: a prediction of the model (model=True) stands beside no document figure: it neither restates nor is judged elsewhere")
        if counted_in:
            if not isinstance(counted_in, str) or not counted_in or counted_in == f.id:
                raise ValueError(f"{f.id}: counted_in={counted_in!r} must name the finding where this document figure is judged")
            # a finding of this notebook may be recorded later (a section that judges the figure row by row): save() checks it is
            if figures:
                raise ValueError(f"{f.id}: its document figure is counted in {counted_in}, so it covers none itself (figures={figures!r})")
            figures = 0
            f.reuses = counted_in
            note = f"the document's figure is judged in {counted_in}: not counted again"
            f.why = note if not f.why else f"{note}; {f.why}"
        if reuses:
            ids = [reuses] if isinstance(reuses, str) else list(reuses) if isinstance(reuses, (list, tuple)) else [None]
            for r in ids:
                if not isinstance(r, str) or (":" not in r and not any(x.id == r for x in self.items)):
                    raise ValueError(f"{f.id}: reuses={reuses!r} names no finding recorded before it (give ids of this notebook, or 'notebook:id')")
            f.reuses = ", ".join(ids)
            note = f"restates the simulated figure{'s' if len(ids) > 1 else ''} of {f.reuses}: not counted again"
            f.why = note if not f.why else f"{note}; {f.why}"
        f.host = self.host if host is None else bool(host)
        f.model = bool(model)
        if f.model:
            figures = 0  # no document figure stands beside it
        if figures is not None:
            if not isinstance(figures, int) or isinstance(figures, bool) or figures < 0:
                raise ValueError(f"{f.id}: figures must be a whole number >= 0 (how many of the document's measured figures it covers), got {figures!r}")
            f.figures = figures
        self.items.append(f)
        return f

    # -- findings that are evidence ------------------------------------------------------------
    def exact(self, id: str, finding: str, source: str, document, simulation, why: str = "", **meta) -> Finding:  # noqa: A002
        """The document gives an exact count: ``exact`` when equal, else ``contradicted``. A count
        that holds only over a range of an assumption records that range with :meth:`holds_for`;
        a count the model's inputs fix (size / page size) is :meth:`arithmetic`, not exact."""
        verdict = "exact" if document == simulation else "contradicted"
        return self._add(Finding(id, finding, source, _fmt(document), _fmt(simulation), verdict, why), **meta)

    def measured(
        self,
        id: str,
        finding: str,
        source: str,
        document,
        simulation,
        *,  # noqa: A002
        band=None,
        rel: float | None = None,
        points: float | None = None,
        unit: str = "",
        why: str = "",
        sensitivity: str = "",
        choices=(),
        change: bool = True,
        sign_fixed: bool = False,
        said: str = "",
        **meta,
    ) -> Finding:
        """A figure the document measured on a real machine (a speed-up in %, a miss reduction...).
        ``document`` is one figure, the document's spread ``(low, high)`` (a range it gives), or a
        dict ``{system or row: figure}`` with ``simulation`` a dict of the same keys: each row is
        then judged against its own band. The band is stated here: ``band=(lo, hi)`` explicitly (or
        a dict of them per row), or ``rel=0.5`` (the figure widened by 50% of itself), or
        ``points=5`` (widened by 5 in its unit). The ratio simulation/document uses the figure, or
        the middle of the spread; for rows, the row farthest from its figure. ``choices`` names the
        modelling choices the simulated figure rests on (see :meth:`robust`). A figure under a tenth
        of the document's, or over ten times it, is ``contradicted`` (:func:`classify`); the note
        says "no change" for a change the document measured (``change=True``) and "an order of
        magnitude off" for a level (``change=False``: a share of time, a residual), which, having
        no sign to agree on, is ``contradicted`` outside its band, never ``direction``. ``sign_fixed``:
        the model's set-up fixes the sign (it cannot come out the other way), so the sign is no
        evidence and a figure outside its band is ``contradicted``, not ``direction``. ``said``: the
        document's own words for a figure it gives as a bound ('over 40% worse'), shown in place of
        the number the band is set from (one figure only)."""
        if sum(x is not None for x in (band, rel, points)) != 1:
            raise ValueError("give exactly one of band=(lo, hi), rel= or points=")
        if said and (not isinstance(said, str) or isinstance(document, dict)):
            raise ValueError(f"{id}: said= is the document's words for one figure (a text), got {said!r} for document={document!r}")
        if isinstance(document, dict):
            if not isinstance(simulation, dict) or set(simulation) != set(document) or not document:
                raise ValueError(f"{id}: document is per row ({', '.join(map(str, document))}); give simulation as a dict of the same rows, got {simulation!r}")
            if isinstance(band, dict) and set(band) != set(document):
                raise ValueError(f"{id}: band is per row; give one for each row ({', '.join(map(str, document))}), got {', '.join(map(str, band))}")
            rows = [self._row(k, document[k], simulation[k], band[k] if isinstance(band, dict) else band, rel, points, unit, change) for k in document]
            if all(r["verdict"] == "within" for r in rows):
                verdict = "within"
            elif all(r["verdict"] in ("within", "direction") for r in rows):
                verdict = "direction"
            else:
                verdict = "contradicted"
            worst = max((r for r in rows if r["ratio"] is not None), key=lambda r: abs(math.log(abs(r["ratio"]))) if r["ratio"] else math.inf, default=None)
            f = Finding(
                id,
                finding,
                source,
                "; ".join(f"{r['row']} {r['doc_text']}" for r in rows),
                "; ".join(f"{r['row']} {_fmt(r['simulation'])}{unit}" for r in rows),
                verdict,
                why,
                "; ".join(f"{r['row']} {r['band_text']}" for r in rows),
                None if worst is None else worst["ratio"],
                sensitivity,
                None,
                rows=[{k: v for k, v in r.items() if k not in ("doc_text", "band_text")} for r in rows],
            )
            meta.setdefault("figures", 0 if meta.get("counted_in") or meta.get("model") else len(rows))
        else:
            r = self._row("", document, simulation, band, rel, points, unit, change)
            sim_text = f"{_fmt(r['simulation'])}{unit}"
            if said:
                r["doc_text"] = f"{said} ({r['doc_text']} the bound)"
            f = Finding(id, finding, source, r["doc_text"], sim_text, r["verdict"], why, r["band_text"], r["ratio"], sensitivity, (r["low"], r["high"]))
            f.doc_limits = (r["doc_low"], r["doc_high"])
            meta.setdefault("figures", 0 if meta.get("counted_in") or meta.get("model") else 1)
        f.choices = tuple(choices)
        flat = f.rows or [{"row": "", "verdict": f.verdict, "ratio": f.ratio, "document": 1.0, "simulation": 1.0}]
        none = [r for r in flat if r["verdict"] == "contradicted" and r["ratio"] is not None and 0 <= r["ratio"] < NO_CHANGE]
        if none:
            who = ", ".join(str(r["row"]) for r in none if r["row"] != "")
            ratios = ", ".join(f"{r['ratio']:.2f}x" for r in none)
            note = f"{who + ': ' if who else ''}" + (
                f"under a tenth of the document's change ({ratios}): counted as no change"
                if change
                else f"under a tenth of the document's figure ({ratios}): an order of magnitude off"
            )
            f.why = note if not f.why else f"{f.why.rstrip('.')}. {note[0].upper()}{note[1:]}"
        if not isinstance(sign_fixed, bool):
            raise ValueError(f"{id}: sign_fixed must be True or False, got {sign_fixed!r}")
        judged = rows if f.rows else [r]  # the rows as _row gave them (with the document's text)
        unsigned = [x for x in judged if not x["signed"]] if sign_fixed else []
        if unsigned:
            which = ", ".join(f"{x['row'] + ' ' if x['row'] != '' else ''}{x['doc_text']}" for x in unsigned)
            raise ValueError(f"{id}: sign_fixed=True needs a document figure with a sign, not zero or a range over both signs ({which})")
        f.sign_fixed = sign_fixed
        if (sign_fixed or not change) and any(r["verdict"] == "direction" for r in flat):
            for r in flat:
                if r["verdict"] == "direction":
                    r["verdict"] = "contradicted"
            f.verdict = "contradicted"
            off = [r for r in flat if r["ratio"] is not None and r["verdict"] != "within"]
            ratios = ", ".join(f"{r['row'] + ' ' if r['row'] != '' else ''}{r['ratio']:.2f}x" for r in off)
            why = "the model's set-up fixes the sign" if sign_fixed else "a level (a share, a residual) has no sign to agree on"
            note = f"{why}, so only the size is evidence, and it is outside the band ({ratios}): contradicted"
            f.why = note if not f.why else f"{f.why.rstrip('.')}. {note[0].upper()}{note[1:]}"
        far = [r for r in flat if r["verdict"] == "contradicted" and r["ratio"] is not None and r["ratio"] > 1 / NO_CHANGE]
        if far:
            who = ", ".join(str(r["row"]) for r in far if r["row"] != "")
            ratios = ", ".join(f"{r['ratio']:.1f}x" for r in far)
            note = f"{who + ': ' if who else ''}more than ten times the document's figure ({ratios}): the same sign, but not agreement"
            f.why = note if not f.why else f"{f.why.rstrip('.')}. {note[0].upper()}{note[1:]}"
        return self._add(f, **meta)

    @staticmethod
    def _row(name, document, simulation, band, rel, points, unit, change=True) -> dict:
        what = f"row {name!r}: " if name != "" else ""
        if isinstance(document, (tuple, list)):
            if len(document) != 2:
                raise ValueError(f"{what}document={document!r} must be one figure or a range (low, high)")
            d_lo, d_hi = sorted(check_number("document", x) for x in document)
            doc_text = f"{_fmt(d_lo)}..{_fmt(d_hi)}{unit}" if d_lo != d_hi else f"{_fmt(d_lo)}{unit}"
        else:
            d_lo = d_hi = check_number("document", document)
            doc_text = f"{_fmt(d_lo)}{unit}"
        d, s = (d_lo + d_hi) / 2, check_number("simulation", simulation)
        if band is not None:
            if not isinstance(band, (tuple, list)) or len(band) != 2:
                raise ValueError(f"{what}band={band!r} must be (low, high)")
            lo, hi = (check_number("band", x) for x in band)
            if lo > hi:
                raise ValueError(f"{what}band={band!r}: low above high")
            if lo > d_lo or hi < d_hi:
                raise ValueError(f"{what}band={band!r} does not hold the document's figure {_fmt(d_lo)}..{_fmt(d_hi)}: a band is set around it")
            text = f"{_fmt(lo)}..{_fmt(hi)}{unit} (stated)"
        elif rel is not None:
            if isinstance(rel, bool) or not 0 < check_number("rel", rel) <= 1:
                raise ValueError(f"{what}rel={rel!r} must be a fraction of the figure in 0 < rel <= 1 (wider bands reach the other sign)")
            lo, hi = min(d_lo * (1 - rel), d_lo * (1 + rel)), max(d_hi * (1 - rel), d_hi * (1 + rel))
            text = f"document +-{rel:.0%}: {_fmt(lo)}..{_fmt(hi)}{unit}"
        else:
            if isinstance(points, bool) or check_number("points", points) <= 0:
                raise ValueError(f"{what}points={points!r} must be a positive width in the figure's unit")
            lo, hi = d_lo - points, d_hi + points
            text = f"document +-{_fmt(points)} {'points' if unit == '%' else unit or 'units'}: {_fmt(lo)}..{_fmt(hi)}{unit}"
        if (d_lo > 0 and lo < 0) or (d_hi < 0 and hi > 0):
            raise ValueError(f"{what}the band {_fmt(lo)}..{_fmt(hi)} reaches the other sign of the document's {_fmt(d_lo)}..{_fmt(d_hi)}: give a narrower one")
        verdict, ratio = classify(d, s, lo, hi, change)
        if verdict == "direction" and d_lo < 0 < d_hi:
            verdict = "contradicted"  # the document's own range has both signs: a sign outside the band agrees with nothing
        signed = d_lo > 0 or d_hi < 0  # the document's figure (its whole range) has a sign
        return {
            "row": name,
            "document": d,
            "doc_low": d_lo,
            "doc_high": d_hi,
            "simulation": s,
            "low": lo,
            "high": hi,
            "verdict": verdict,
            "ratio": ratio,
            "signed": signed,
            "doc_text": doc_text,
            "band_text": text,
        }

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
        **meta,
    ) -> Finding:
        """Only the direction can be compared (the document gives no figure a band could be set
        around): ``direction`` when ``holds``, else ``contradicted``."""
        verdict = "direction" if holds else "contradicted"
        return self._add(Finding(id, finding, source, _fmt(document), _fmt(simulation), verdict, why, "", ratio, sensitivity), **meta)

    # -- findings that are not evidence ---------------------------------------------------------
    def arithmetic(self, id: str, finding: str, source: str, document, simulation, holds: bool = True, why: str = "", **meta) -> Finding:  # noqa: A002
        """A worked calculation that illustrates a document's figure (never counted as reproduced).
        Raises at once when the arithmetic does not come out: that is a bug, not a finding."""
        f = self._add(Finding(id, finding, source, _fmt(document), _fmt(simulation), "arithmetic", why), **meta)
        if not holds:
            raise FindingFailed(f"{self.notebook}: the arithmetic of {id!r} does not come out: {finding}; document {document}, computed {simulation}")
        return f

    def calibrated(self, id: str, finding: str, source: str, document, simulation, parameter: str, why: str = "", **meta) -> Finding:  # noqa: A002
        """A figure a parameter was fitted to (shown, never counted)."""
        return self._add(Finding(id, finding, source, _fmt(document), _fmt(simulation), "calibrated", why or f"{parameter} was fitted to this figure"), **meta)

    def not_reproduced(self, id: str, finding: str, source: str, document, simulation, why: str, **meta) -> Finding:  # noqa: A002
        """A document item nothing was run for, or whose figure what the model runs cannot set (it is
        made of what the model does not have, or an unstated input decides it), shown with the
        reason. Where the model ran and disagrees (0%, the other sign, unchanged counts), record
        ``contradicted`` with the model's reason instead (:meth:`measured`, :meth:`direction` or
        :meth:`contradicted`)."""
        if not why:
            raise ValueError(f"{id}: say why the finding is not reproduced")
        return self._add(Finding(id, finding, source, _fmt(document), _fmt(simulation), "not reproduced", why), **meta)

    def contradicted(self, id: str, finding: str, source: str, document, simulation, why: str, **meta) -> Finding:  # noqa: A002
        """The model ran and disagrees with the document (no change where the document measured one,
        the other sign, a factor the model cannot reach): ``contradicted``, with the model's reason."""
        if not why:
            raise ValueError(f"{id}: say why the model disagrees")
        return self._add(Finding(id, finding, source, _fmt(document), _fmt(simulation), "contradicted", why), **meta)

    # -- a computed condition instead of ==, and what is only shown --------------------------------------
    def check(self, id: str, finding: str, source: str, document, simulation, holds: bool, kind: str = "exact", why: str = "", **meta) -> bool:  # noqa: A002
        """For an exact count whose agreement is not ``document == simulation`` (a dict of counts, a
        condition over several rows): kind 'exact' -> exact/contradicted as ``holds`` says;
        'direction' is :meth:`direction`."""
        if kind == "exact":
            verdict = "exact" if holds else "contradicted"
        elif kind == "direction":
            verdict = "direction" if holds else "contradicted"
        else:
            raise ValueError(f"kind={kind!r}: use 'exact' or 'direction' (or the methods exact, measured, direction, arithmetic, calibrated)")
        self._add(Finding(id, finding, source, _fmt(document), _fmt(simulation), verdict, why), **meta)
        return bool(holds)

    def shown(self, id: str, finding: str, source: str, document, simulation, why: str, **meta) -> Finding:  # noqa: A002
        """A measurement of the machine that runs the notebook (a knee of a latency curve), or a
        prediction of the model, set beside what could explain it (a preset's reach) with no document
        figure to agree or disagree with: ``shown``, not judged. Only for a finding measured here
        (``host``) or a prediction of the model (``model=True``): a document's figure is judged."""
        host = self.host if meta.get("host") is None else bool(meta["host"])
        if not (host or meta.get("model")):
            raise ValueError(
                f"{id}: 'shown' is for a measurement of this machine (host=True) or a prediction of the model (model=True); "
                "a document's figure is judged (measured, exact, direction, contradicted, not_reproduced, ...)"
            )
        if not why:
            raise ValueError(f"{id}: say what the figure shows")
        return self._add(Finding(id, finding, source, _fmt(document), _fmt(simulation), "shown", why), **meta)

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

    def robust(self, id: str, choice: str, chosen: float, runs: dict, *, span: tuple[float, float] | None = None, why: str = "") -> Finding:  # noqa: A002
        """Record how finding ``id`` (recorded with :meth:`measured`) fares when its modelling choice
        ``choice`` (chosen value ``chosen``) is varied: ``runs`` maps each value tried to the
        simulated figure there (a number, or a dict of rows for a finding about several rows).
        The values must reach from x0.5 to x2 of ``chosen``; a choice that cannot go that far (a
        fraction near 1) gives the reachable ``span=(low, high)`` and says ``why``. The finding is
        robust when every run lies in its band(s); the report prints the values where it holds. A
        finding (or row) outside its band whose runs fall on both sides of the document's figure
        becomes ``not reproduced`` (:meth:`_both_sides`): the choice, not stated by the document,
        could match any figure there."""
        f = self.get(id)
        if f.limits is None and not f.rows:
            raise ValueError(f"{id}: only a finding recorded with measured() has a band to sweep against")
        if not isinstance(runs, dict) or len(runs) < 3:
            raise ValueError(f"{id}: runs must map at least 3 values of {choice} to the simulated figure, got {runs!r}")
        chosen = float(chosen)
        lo, hi = (0.5 * chosen, 2.0 * chosen) if span is None else (float(span[0]), float(span[1]))
        lo, hi = min(lo, hi), max(lo, hi)
        if span is not None and not why:
            raise ValueError(f"{id}: span={span} instead of x0.5..x2 of {choice}: say why")
        vals = sorted(float(v) for v in runs)
        tol = 1e-9 * max(1.0, abs(chosen))
        if vals[0] > lo + tol or vals[-1] < hi - tol or not any(abs(v - chosen) <= tol for v in vals):
            raise ValueError(f"{id}: the runs of {choice} ({_fmt(vals[0])}..{_fmt(vals[-1])}) must include {_fmt(chosen)} and reach {_fmt(lo)}..{_fmt(hi)}")

        def inside(sim) -> bool:
            return self._inside(f, sim)

        runs = {float(v): s for v, s in runs.items()}
        for v, sim in runs.items():  # numbers only, as measured() takes
            for x in sim.values() if isinstance(sim, dict) else [sim]:
                check_number(f"{id}: the run of {choice} at {_fmt(v)}", x)
        ok = {v: inside(s) for v, s in runs.items()}
        held = [v for v in sorted(ok) if ok[v]]
        failed = [v for v in sorted(ok) if not ok[v]]

        def show(sim):
            return ", ".join(f"{k} {_fmt(float(x))}" for k, x in sim.items()) if isinstance(sim, dict) else _fmt(float(sim))

        text = f"{choice} {_fmt(lo)}..{_fmt(hi)} (chosen {_fmt(chosen)}): "
        if not failed:
            text += "in its band at every value run (" + "; ".join(f"{_fmt(v)}: {show(runs[v])}" for v in sorted(ok)) + ")"
        else:
            turns = " (so this verdict, not within, rests on the value chosen)" if held and f.verdict != "within" else ""
            text += (
                ("in its band at " + ", ".join(_fmt(v) for v in held) + turns if held else "in its band at none")
                + "; outside at "
                + "; ".join(f"{_fmt(v)} ({show(runs[v])})" for v in failed)
            )
        if f.rows and f.verdict != "within":
            # a row outside its band at the chosen value that enters it at another: that row's verdict rests on the choice
            turned = []
            for r in f.rows:
                if not r["low"] <= float(r["simulation"]) <= r["high"]:
                    at = [v for v in sorted(runs) if r["low"] <= float(runs[v][r["row"]]) <= r["high"]]
                    if at:
                        turned.append(f"{r['row']} in its band at {', '.join(_fmt(v) for v in at)}")
            if turned:
                text += f"; {'; '.join(turned)} (so that row's verdict rests on the value chosen)"
                f.reaches = True
        if held and f.verdict != "within":
            f.reaches = True
        if f.verdict == "direction" or f.sign_fixed:
            # a direction is evidence only where the sign holds: name the values where it turns; a sign
            # the set-up fixes must not turn
            def turns(sim, strict: bool) -> bool:
                # strict: the other sign; else the other sign or none
                # every row whose document figure has a sign (the band's middle has that sign then)
                pairs = [(sim[r["row"]], r) for r in f.rows if r.get("signed", True)] if f.rows else [(sim, {"low": f.limits[0], "high": f.limits[1]})]
                doc = [(_sign(float(x)), _sign(r["low"] + r["high"])) for x, r in pairs]
                return any(a == -b if strict else a != b for a, b in doc)

            flips = [v for v in sorted(runs) if turns(runs[v], False)]
            other = [v for v in sorted(runs) if turns(runs[v], True)]
            if other and f.sign_fixed:
                raise FindingFailed(
                    f"{id}: recorded with sign_fixed=True, but {choice} at {', '.join(_fmt(v) for v in other)} gives the other sign: the set-up does not fix it"
                )
            text += (
                f"; the other sign, or none, at {', '.join(_fmt(v) for v in flips)} (so its direction rests on the value chosen)"
                if flips
                else "; the document's sign at every value run"
            )
        if f.verdict in ("direction", "contradicted"):  # over x0.5..x2 (or the span) only: runs beyond it are shown, not used
            text += self._both_sides(f, choice, {v: x for v, x in runs.items() if lo - tol <= v <= hi + tol})
        if why:
            text += f" [{why}]"
        f.robustness = (f.robustness or []) + [text]
        f.robust = (f.robust is not False) and not failed
        if choice not in f.choices:
            f.choices = tuple(f.choices) + (choice,)
        f.swept = tuple(f.swept) + (choice,)
        return f

    @staticmethod
    def _inside(f: Finding, sim) -> bool:
        """Whether a run's figure (a dict of every row's for a finding about rows) lies in its band(s)."""
        if f.rows:
            if not isinstance(sim, dict) or set(sim) != {r["row"] for r in f.rows}:
                raise ValueError(f"{f.id}: each run must give every row ({', '.join(str(r['row']) for r in f.rows)}), got {sim!r}")
            return all(r["low"] <= float(sim[r["row"]]) <= r["high"] for r in f.rows)
        return f.limits[0] <= float(sim) <= f.limits[1]

    def settings(self, id: str, choice: str, chosen: str, runs: dict, why: str) -> Finding:  # noqa: A002
        """Like :meth:`robust` for a modelling choice that is not a number (how memory is laid out, which
        pages can move): ``runs`` maps each setting tried, named, to the simulated figure there (a dict
        of rows for a finding about rows), ``chosen`` names the one the finding was recorded at, and
        ``why`` says why these settings span what the document leaves open. The same rules follow:
        robust only when every setting stays in the band, not reproduced where the settings fall on
        both sides of the document's figure."""
        f = self.get(id)
        if f.limits is None and not f.rows:
            raise ValueError(f"{id}: only a finding recorded with measured() has a band to sweep against")
        if not isinstance(runs, dict) or len(runs) < 2 or chosen not in runs:
            raise ValueError(
                f"{id}: runs must map at least 2 named settings of {choice}, the chosen {chosen!r} among them, to the simulated figure, got {runs!r}"
            )
        if not isinstance(why, str) or not why.strip():
            raise ValueError(f"{id}: say why the settings of {choice} span what the document leaves open")
        for k, sim in runs.items():
            for x in sim.values() if isinstance(sim, dict) else [sim]:
                check_number(f"{id}: the run of {choice} at {k}", x)
        ok = {k: self._inside(f, sim) for k, sim in runs.items()}

        def show(sim):
            return ", ".join(f"{k} {_fmt(float(x))}" for k, x in sim.items()) if isinstance(sim, dict) else _fmt(float(sim))

        text = f"{choice} (chosen: {chosen}): " + "; ".join(f"{k}: {show(runs[k])} ({'in' if ok[k] else 'outside'} its band)" for k in runs)
        if f.verdict != "within":  # in its band (or a row outside its own in it) at another setting: the disagreement rests on the one chosen
            out = [r for r in f.rows or () if not r["low"] <= float(r["simulation"]) <= r["high"]]
            if any(ok.values()) or any(r["low"] <= float(s[r["row"]]) <= r["high"] for r in out for s in runs.values()):
                f.reaches = True
            text += self._both_sides(f, choice, runs)
        f.robustness = (f.robustness or []) + [f"{text} [{why.strip()}]"]
        f.robust = (f.robust is not False) and all(ok.values())
        if choice not in f.choices:
            f.choices = tuple(f.choices) + (choice,)
        f.swept = tuple(f.swept) + (choice,)
        return f

    @staticmethod
    def _both_sides(f: Finding, choice: str, runs: dict) -> str:
        """The rule of ``not reproduced`` for a swept finding outside its band: a figure (a row) whose
        runs over ``choice`` fall on both sides of the document's figure (or reach into its range)
        could be matched by picking the choice, so the model shows nothing either way there. Such
        rows are marked ``not reproduced``; when every row outside its band is, so is the finding.
        Returns the text the sweep's line gets."""
        rows = f.rows or [{"row": "", "doc_low": f.doc_limits[0], "doc_high": f.doc_limits[1], "verdict": f.verdict}]
        opened = []
        for r in rows:
            if r["verdict"] not in ("direction", "contradicted"):
                continue
            vals = [float(runs[v][r["row"]] if f.rows else runs[v]) for v in runs]
            if min(vals) <= r["doc_high"] and max(vals) >= r["doc_low"]:
                r["verdict"] = "not reproduced"
                opened.append(r)
        if not opened:
            return ""
        who = ", ".join(str(r["row"]) for r in opened if r["row"] != "")
        text = f"; {who + ': ' if who else ''}on both sides of the document's figure over this range, so any figure there could be matched (not reproduced)"
        if f.verdict == "contradicted" and all(r["verdict"] in ("within", "direction", "not reproduced") for r in rows):
            # the verdict changes below: what measured() said of the values chosen stays, as theirs
            f.why = re.sub(r"\): contradicted(?! at the values chosen)", "): contradicted at the values chosen", f.why)
        if all(r["verdict"] in ("within", "not reproduced") for r in rows):
            f.verdict = "not reproduced"
            note = (
                "not reproduced: a modelling choice the document does not state moves the model to both sides of the document's figure"
                + (" (in every row outside its band, one choice or another)" if f.rows else "")
                + " over the range swept (the sweeps below), so the figure at the value chosen is neither agreement nor disagreement"
            )
            f.why = note if not f.why else f"{f.why.rstrip('.')}. {note[0].upper()}{note[1:]}"
        elif f.rows and f.verdict == "contradicted" and all(r["verdict"] in ("within", "direction", "not reproduced") for r in rows):
            f.verdict = "direction"  # the rows that made it contradicted are not reproduced: the rest have the document's sign
            left = ", ".join(str(r["row"]) for r in rows if r["verdict"] == "direction")
            note = (
                f"direction: the rows on both sides of their document figure are not reproduced, and those left outside their band ({left}) "
                "have the document's sign"
            )
            f.why = note if not f.why else f"{f.why.rstrip('.')}. {note[0].upper()}{note[1:]}"
        return text

    def together(self, id: str, choices: str, runs: dict) -> Finding:  # noqa: A002
        """Record finding ``id`` re-run with several modelling choices moved at once: ``runs`` maps
        each corner (a text naming every choice's value) to the simulated figure there. Shown beside
        the one-at-a-time sweeps of :meth:`robust` (how far the choices moved together take it); the
        verdict is unchanged: 'within (robust)' is defined one choice at a time."""
        f = self.get(id)
        if f.limits is None or f.rows:
            raise ValueError(f"{id}: together() takes a finding of one figure recorded with measured()")
        if not isinstance(choices, str) or not choices.strip():
            raise ValueError(f"{id}: choices must name the choices moved together, got {choices!r}")
        if not isinstance(runs, dict) or len(runs) < 2:
            raise ValueError(f"{id}: runs must map at least 2 corners to the simulated figure, got {runs!r}")
        for k, v in runs.items():
            check_number(f"{id}: the run at {k}", v)
        lo, hi = f.limits
        other = [k for k, v in runs.items() if _sign(float(v)) == -_sign(lo + hi)]
        if f.sign_fixed and other:
            raise FindingFailed(f"{id}: recorded with sign_fixed=True, but the corner {other[0]} gives the other sign: the set-up does not fix it")
        out = {k: float(v) for k, v in runs.items() if not lo <= float(v) <= hi}
        low, high = min(runs, key=runs.get), max(runs, key=runs.get)

        def show(v: float) -> str:  # a figure just outside the band is not rounded onto its edge
            if lo <= v <= hi:
                return _fmt(v)
            return next(t for t in (_fmt(v), f"{v:.9g}", repr(v)) if not lo <= float(t) <= hi)

        text = (
            f"{choices} moved together, each at either end of its range ({len(runs)} corners): from {show(float(runs[low]))} ({low}) "
            f"to {show(float(runs[high]))} ({high}); " + (f"outside its band at {len(out)} of the {len(runs)}" if out else "in its band at every corner")
        )
        f.robustness = (f.robustness or []) + [text]
        return f

    # -- output -----------------------------------------------------------------------------------
    def counts(self) -> dict:
        return {v: sum(1 for f in self.items if f.label == v) for v in LABELS}

    def unswept(self) -> list[str]:
        """``within`` findings whose named modelling choices were not all swept with :meth:`robust`."""
        out = []
        for f in self.items:
            left = [c for c in f.choices if c not in f.swept]
            if f.verdict == "within" and left:
                out.append(f"{f.id} ({', '.join(left)})")
        return out

    def table(self, full: bool = False):
        """The "document vs simulation" table. By default each note is cut to its first clause (the
        validation report carries the whole note); ``full=True`` adds the band and the whole note."""
        import pandas as pd  # deferred: pandas is slow to import; only tables need it

        rows = []
        for f in self.items:
            note = note_text(f.why, f.sensitivity, f.robustness)
            row = {
                "finding": f.finding,
                "source": f.source,
                "document": f.document,
                "simulation": f.simulation,
                "verdict": f.label,
                "sim / doc": ratio_text(asdict(f)),
            }
            if full:
                row["band"] = f.band
            row["note"] = note if full else short_note(note)
            rows.append(row)
        return pd.DataFrame(rows)

    def unresolved(self) -> list[str]:
        """The findings whose ``reuses``/``counted_in`` names a finding of this notebook (a bare id, or
        'notebook:id' with this notebook's name) that is not recorded, is not counted (a check on this
        machine, a prediction of the model) or leads back to it (:func:`broken`): their figure would
        be counted nowhere. Other notebooks' findings are checked when the report is made."""
        rec = {"notebook": self.notebook, "findings": [asdict(f) for f in self.items]}
        return [f"{f['id']} -> {'; '.join(b)}" for f in rec["findings"] if f.get("reuses") and (b := broken([rec], rec, f))]

    def overstated(self) -> list[str]:
        """The findings whose verdict is evidence (exact, within, direction) while a finding of this
        notebook they restate or are counted in is not (:func:`stronger`); other notebooks' are named
        in the report's headline."""
        rec = {"notebook": self.notebook, "findings": [asdict(f) for f in self.items]}
        return [f"{f['id']} ({f['verdict']}) -> {', '.join(b)}" for f in rec["findings"] if (b := stronger([rec], rec, f))]

    def save(self, result_path) -> None:
        """Write the findings as JSON (when ``result_path`` is set) and print the verdict counts."""
        lost = self.unresolved()
        if lost:
            raise FindingFailed(f"{self.notebook}: findings name, as where their figure is counted, no finding of this notebook that counts: {'; '.join(lost)}")
        over = self.overstated()
        if over:
            raise FindingFailed(f"{self.notebook}: findings say more than the finding whose figure they restate: {'; '.join(over)}")
        missing = self.unswept()
        if missing:
            raise FindingFailed(f"{self.notebook}: within findings rest on modelling choices never swept with Findings.robust: {'; '.join(missing)}")
        peak = _peak_rss_mib()
        c = self.counts()
        print(", ".join(f"{n} {v}" for v, n in c.items() if n) + f" ({len(self.items)} findings)")
        if result_path:
            p = Path(result_path)
            p.parent.mkdir(parents=True, exist_ok=True)
            data = {"notebook": self.notebook, "document": self.document, "peak_rss_mib": peak, "findings": [asdict(f) for f in self.items]}
            write_atomic({p: json.dumps(data, indent=1)}, f"the findings of {self.notebook}")


def host_notebook(name: str) -> bool:
    """A notebook about the reader's own machine or program: every finding of it is measured there."""
    return "_your_" in name


def is_host(r: dict, f: dict) -> bool:
    """A finding measured on the machine that runs the notebook: a check of pagesim, not a document's figure."""
    return bool(f.get("host")) or host_notebook(r.get("notebook", ""))


def notebook_stem(r: dict) -> str:
    """A record's notebook name without ``.ipynb``."""
    return str(r.get("notebook", "")).removesuffix(".ipynb")


def _target(records: list[dict], r: dict, t: str):
    """The record and finding that reference ``t`` (an id of ``r``'s notebook, or 'notebook:id')
    names: (record, finding or None), or (None, None) when that notebook is not among ``records``."""
    nb, _, fid = t.strip().rpartition(":")
    nb = nb.removesuffix(".ipynb")
    if not nb or nb == notebook_stem(r):
        rec = r
    else:
        same = [x for x in records if notebook_stem(x) == nb]
        rec = next((x for x in same if x.get("status") == "ok"), same[0] if same else None)
    if rec is None:
        return None, None
    return rec, next((x for x in rec.get("findings", []) if x.get("id") == fid), None)


def broken(records: list[dict], r: dict, f: dict) -> list[str]:
    """The references of ``f`` (``reuses``/``counted_in``) that name no counted finding, each with
    why: one not there (its notebook among ``records``), a check on this machine (unless ``f`` is
    one too), a prediction of the model, or a chain that leads back to ``f``."""
    out = []
    for t in str(f.get("reuses") or "").split(","):
        if not t.strip():
            continue
        rec, g = _target(records, r, t)
        if rec is None:
            continue  # a notebook not in this run: taken on trust
        if g is None:
            out.append(f"{t.strip()} (not recorded)")
        elif (is_host(rec, g) and not is_host(r, f)) or g.get("model"):
            out.append(f"{t.strip()} (not counted)")
    if not out:
        seen, todo = set(), [(r, t) for t in str(f.get("reuses") or "").split(",") if t.strip()]
        while todo:
            rr, t = todo.pop()
            rec, g = _target(records, rr, t)
            if g is None:
                continue
            if g is f:
                return [f"{f['reuses']} (leads back to {f.get('id')})"]
            key = (notebook_stem(rec), g.get("id"))
            if key not in seen:
                seen.add(key)
                todo += [(rec, u) for u in str(g.get("reuses") or "").split(",") if u.strip()]
    return out


#: verdicts that are evidence about a document figure
EVIDENCE = ("exact", "within", "direction")


def stronger(records: list[dict], r: dict, f: dict) -> list[str]:
    """The findings ``f`` (of record ``r``) restates or is counted in (``reuses``/``counted_in``)
    whose verdict is no evidence (contradicted, not reproduced, arithmetic, calibrated) while its
    own is (exact, within, direction), each with its verdict: a figure may not say more where it
    is restated than where it is counted. A notebook not among ``records`` is taken on trust."""
    if f.get("verdict") not in EVIDENCE:
        return []
    out = []
    for t in str(f.get("reuses") or "").split(","):
        if t.strip():
            _, g = _target(records, r, t)
            if g is not None and g.get("verdict") not in EVIDENCE:
                out.append(f"{t.strip()} ({g.get('verdict')})")
    return out


def restated(records: list[dict], r: dict, f: dict) -> bool:
    """Whether ``f`` (of record ``r``) restates findings counted elsewhere and is not counted again:
    it names some (``reuses`` or ``counted_in``: ids of its notebook, or 'notebook:id') and each is
    there and counted, or restates one that is (:func:`broken` finds those that are not: a finding
    not there, a check on this machine, a prediction of the model, a loop). One with a broken
    reference is counted itself, so its figure is not lost; a notebook not among ``records`` (a run
    of some notebooks) is taken on trust."""
    return bool(f.get("reuses")) and not broken(records, r, f)


def regressions(records: list[dict], baseline: dict) -> list[str]:
    """Findings whose verdict is worse than in ``baseline`` ({notebook: {id: verdict}}), or missing.
    Only the ranked verdicts (exact > within > direction > contradicted) can regress; a finding
    whose class changed between ranked and unranked (a check relabelled arithmetic) is a change of
    the notebook and is reported by :func:`changes`, not here. A finding measured on the machine
    running the notebook (:func:`is_host`) is never a regression: another machine (a build node
    without huge pages, a busy neighbour) turns it without any change to pagesim, so the baseline
    keeps none (``pagesim.validation.report.save_baseline``); a baseline finding that has become
    one is reported, as a document finding would otherwise slip out of the gate."""
    out = []
    for r in records:
        if host_notebook(r["notebook"]) or r.get("status") != "ok":
            continue  # its findings are all measured here; an error is reported on its own
        base = baseline.get(r["notebook"].removesuffix(".ipynb"), {})
        now = {f["id"]: label(f) for f in r.get("findings", [])}
        host = {f["id"] for f in r.get("findings", []) if is_host(r, f)}
        for fid, was in base.items():
            if fid in host:  # the baseline keeps no host check: a document finding turned into one
                out.append(f"{r['notebook']}: {fid} was {was}, now a check measured on this machine (not a document finding)")
            elif fid not in now:
                out.append(f"{r['notebook']}: {fid} was {was}, now missing")
            elif was in RANKED and now[fid] in RANKED and RANKED.index(now[fid]) > RANKED.index(was):
                out.append(f"{r['notebook']}: {fid} was {was}, now {now[fid]}")
    return out


def changes(records: list[dict], baseline: dict) -> list[str]:
    """Every verdict that differs from ``baseline`` (better, new, or relabelled), less the checks
    measured on the machine running the notebook (:func:`is_host`): the baseline keeps none, so
    each would be 'new' on every run."""
    out = []
    for r in records:
        base = baseline.get(r["notebook"].removesuffix(".ipynb"), {})
        for f in r.get("findings", []):
            if is_host(r, f):
                continue
            was = base.get(f["id"])
            if was != label(f):
                out.append(f"{r['notebook']}: {f['id']} {was or 'new'} -> {label(f)}")
    return out
