"""Findings: a document's figure beside the simulation's, with whether the finding holds.

A notebook records each finding with :meth:`Findings.check` (or :meth:`Findings.note` for a figure
shown beside the simulation but not checked, with the reason), shows :meth:`Findings.table` (the
"document vs simulation" table), and ends with :meth:`Findings.save`, which writes the findings to
``result_path`` as JSON for the validation report and raises if any check failed.

Kinds of check:
  exact      the simulation must equal the document's figure (the document gives an exact count)
  direction  the document measured a real machine; the simulation must agree on the direction
             (and on rough size where the check says so)
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path


def _peak_rss_mib():
    try:
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    except ImportError:  # pragma: no cover - Windows
        return None


class FindingFailed(AssertionError):
    """A document's finding does not hold in the simulation."""


@dataclass
class Finding:
    id: str
    finding: str
    source: str
    document: str
    simulation: str
    kind: str
    holds: bool | None
    why: str = ""


class Findings:
    def __init__(self, notebook: str, document: str):
        self.notebook = notebook
        self.document = document
        self.items: list[Finding] = []

    def check(self, id: str, finding: str, source: str, document, simulation, holds: bool, kind: str = "exact", why: str = "") -> bool:  # noqa: A002
        """Record a checked finding; raises :class:`FindingFailed` at once if it does not hold."""
        if kind not in ("exact", "direction"):
            raise ValueError(f"kind={kind!r}: use 'exact' or 'direction'")
        f = Finding(id, finding, source, str(document), str(simulation), kind, bool(holds), why)
        self.items.append(f)
        if not f.holds:
            raise FindingFailed(f"{self.notebook}: finding {id!r} does not hold: {finding}; document {document}, simulation {simulation}")
        return True

    def note(self, id: str, finding: str, source: str, document, simulation, why: str) -> None:  # noqa: A002
        """Record a figure shown beside the simulation but not checked, and why not."""
        self.items.append(Finding(id, finding, source, str(document), str(simulation), "shown", None, why))

    def table(self):
        import pandas as pd

        rows = [{"finding": f.finding, "source": f.source, "document": f.document, "simulation": f.simulation,
                 "check": f.kind, "holds": {True: "yes", False: "NO", None: "not checked"}[f.holds]} for f in self.items]
        return pd.DataFrame(rows)

    def save(self, result_path) -> None:
        """Write the findings as JSON (when ``result_path`` is set) and raise if any failed."""
        peak = _peak_rss_mib()
        if peak:
            print(f"peak memory of this kernel: {peak:.0f} MiB")
        if result_path:
            p = Path(result_path)
            p.parent.mkdir(parents=True, exist_ok=True)
            tmp = p.with_suffix(p.suffix + ".part")
            tmp.write_text(json.dumps({"notebook": self.notebook, "document": self.document, "peak_rss_mib": peak,
                                       "findings": [asdict(f) for f in self.items]}, indent=1), encoding="utf-8")
            tmp.replace(p)
        bad = [f.id for f in self.items if f.holds is False]
        if bad:
            raise FindingFailed(f"{self.notebook}: findings that do not hold: {bad}")
