"""The validation report: every finding of every notebook with its verdict, counted by class.

``pagesim notebooks`` writes it to ``build/report.md`` (and ``report.json``). The headline counts
each verdict class and says what was reproduced; it never says that every finding holds while any
finding is direction-only, contradicted, not reproduced or calibrated.
"""

from __future__ import annotations

import json
from pathlib import Path

from .findings import REPRODUCED, VERDICTS, changes, note_text, regressions

MEANING = {
    "exact": "the document gives an exact count and the simulation equals it",
    "within": "inside the tolerance band stated beside the finding",
    "direction": "same sign as the document but outside the band (sim / doc gives the size)",
    "contradicted": "the simulation disagrees with the document",
    "not reproduced": "shown, not checked; the reason is given",
    "arithmetic": "a worked calculation that illustrates a figure: not evidence",
    "calibrated": "a parameter was fitted to this figure: not evidence",
}


def baseline_path() -> Path:
    from .notebooks import notebooks_dir

    return notebooks_dir() / "verdicts.json"


def load_baseline(quick: bool) -> dict:
    p = baseline_path()
    if not p.is_file():
        return {}
    return json.loads(p.read_text(encoding="utf-8")).get("quick" if quick else "full", {})


def save_baseline(records: list[dict], quick: bool) -> Path:
    """Store this run's verdicts as the baseline for its mode (written atomically)."""
    p = baseline_path()
    data = json.loads(p.read_text(encoding="utf-8")) if p.is_file() else {}
    mode = data.setdefault("quick" if quick else "full", {})
    for r in records:
        if r.get("status") == "ok":
            mode[r["notebook"].removesuffix(".ipynb")] = {f["id"]: f["verdict"] for f in r.get("findings", [])}
    tmp = p.with_suffix(".json.part")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(p)
    return p


def counts(records: list[dict]) -> dict:
    c = {v: 0 for v in VERDICTS}
    for r in records:
        for f in r.get("findings", []):
            c[f["verdict"]] += 1
    return c


def headline(records: list[dict]) -> str:
    c = counts(records)
    total = sum(c.values())
    evidence = c["exact"] + c["within"] + c["direction"] + c["contradicted"]
    reproduced = sum(c[v] for v in REPRODUCED)
    parts = ", ".join(f"{n} {v}" for v, n in c.items() if n)
    text = f"{total} findings: {parts}. Reproduced (exact or within their band): {reproduced} of the {evidence} that are checked."
    own = [r for r in records if "_your_" in r.get("notebook", "")]
    if own and len(own) < len(records):
        d = counts([r for r in records if r not in own])
        text += (
            f" Of the documents' findings alone: {sum(d[v] for v in REPRODUCED)} of the "
            f"{d['exact'] + d['within'] + d['direction'] + d['contradicted']} checked; the rest are the 'your program' and "
            "'your machine' notebooks' checks of pagesim against a trace and this machine (consistency and real "
            "measurements), not of a document."
        )
    if c["contradicted"]:
        text += f" {c['contradicted']} contradicted: read them below."
    if total and reproduced == total:
        text += " Every finding is reproduced."
    return text


def render(records: list[dict], quick: bool = False) -> str:
    base = load_baseline(quick)
    lines = [
        "# pagesim validation report",
        "",
        "Each notebook executed headlessly with papermill" + (" in quick mode (small sizes)" if quick else "") + ".",
        "",
        "**" + headline(records) + "**",
        "",
        "Verdicts:",
        "",
    ]
    lines += [f"- `{v}`: {m}" for v, m in MEANING.items()]
    reg = regressions(records, base)
    ch = changes(records, base)
    lines += ["", f"Against the committed baseline (`notebooks/verdicts.json`): {len(reg)} regressions, {len(ch)} changes."]
    lines += [f"- REGRESSION {x}" for x in reg] + [f"- changed: {x}" for x in ch if x not in reg]
    lines += ["", "| notebook | status | seconds | peak MiB | " + " | ".join(VERDICTS) + " |", "|---|---|---|---|" + "---|" * len(VERDICTS)]
    for r in records:
        c = counts([r])
        peak = round(r["peak_rss_mib"]) if r.get("peak_rss_mib") else ""
        lines.append(f"| {r['notebook']} | {r['status']} | {r['seconds']} | {peak} | " + " | ".join(str(c[v]) for v in VERDICTS) + " |")
    for r in records:
        lines += ["", f"## {r['notebook']}" + (f" ({r['document']})" if r.get("document") else ""), ""]
        if r["status"] != "ok":
            lines += [f"**ERROR** in {r['notebook']}: {r.get('error', '')}", ""]
        if r.get("findings"):
            lines += ["| finding | source | document | simulation | verdict | band | sim / doc | note |", "|---|---|---|---|---|---|---|---|"]
            for x in r["findings"]:
                ratio = "" if x.get("ratio") is None else f"{x['ratio']:.2f}"
                note = note_text(x.get("why", ""), x.get("sensitivity", ""))
                cells = [x["finding"], x["source"], x["document"], x["simulation"], x["verdict"], x.get("band", ""), ratio, note]
                lines.append("| " + " | ".join(str(c).replace("|", "\\|").replace("\n", " ") for c in cells) + " |")
    return "\n".join(lines) + "\n"
