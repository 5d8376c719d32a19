"""The validation report: every finding of every notebook with its verdict, counted by class.

``pagesim notebooks`` writes it to ``build/report.md`` (and ``report.json``), from the run records
of every notebook in ``build/notebooks`` (a run of some notebooks updates theirs and keeps the
others'). It says which notebooks' results it holds, when each ran and on what code
(:func:`pagesim.notebooks.code_version`), and calls itself a complete validation only when every
notebook's latest run succeeded, in one mode, on the same code. The headline counts each verdict
class and says what was reproduced; it never says that every finding holds while any finding is
direction-only, contradicted, not reproduced or calibrated, or while the validation is not complete.
"""

from __future__ import annotations

import json
from pathlib import Path

from ._files import write_atomic
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
    write_atomic({p: json.dumps(data, indent=1, sort_keys=True) + "\n"}, "the baseline")
    return p


def counts(records: list[dict]) -> dict:
    c = {v: 0 for v in VERDICTS}
    for r in records:
        for f in r.get("findings", []):
            c[f["verdict"]] += 1
    return c


def headline(records: list[dict], complete: bool = True) -> str:
    """The verdict counts of ``records``; "Every finding is reproduced" only when all are and the
    validation is ``complete`` (see :func:`coverage`)."""
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
    if total and reproduced == total and complete:
        text += " Every finding is reproduced."
    return text


def results(records: list[dict]) -> list[dict]:
    """The records of runs without error: the findings the report counts."""
    return [r for r in records if r.get("status") == "ok"]


def _stem(r: dict) -> str:
    return r["notebook"].removesuffix(".ipynb")


def _mode(r: dict) -> str:
    return "quick" if r.get("quick") else "full"


def _code(r: dict) -> str:
    c = r.get("pagesim") or {}
    return f"pagesim {c.get('version', '?')}, commit {c.get('commit') or 'unknown'}, sources {c.get('sources', '?')}"


def _same(r: dict) -> tuple:
    """What two runs' results must share to be read together: the code's digest and the mode."""
    return (r.get("pagesim") or {}).get("sources"), bool(r.get("quick"))


def coverage(records: list[dict], names: list[str]) -> tuple[bool, str]:
    """Whether ``records`` make a complete validation of the notebooks ``names`` (stems), and a
    sentence saying so or why not: a notebook without results, one whose latest run failed or was
    interrupted, results of another mode or of other code (another pagesim version, commit or
    changed sources, see :func:`pagesim.notebooks.code_version`) than the newest run's."""
    ok = {_stem(r): r for r in results(records)}
    failed = {_stem(r): r for r in records if r.get("status") != "ok"}
    reasons = []
    missing = [n for n in names if n not in ok and n not in failed]
    if missing:
        reasons.append("not run: " + ", ".join(missing))
    if failed:
        reasons.append(
            "latest run failed: "
            + ", ".join(f"{n} ({failed[n].get('status')} at {failed[n].get('started', '?')}{'; earlier results shown' if n in ok else ''})" for n in failed)
        )
    newest = max(ok.values(), key=lambda r: r.get("started", "")) if ok else None
    other = [n for n, r in ok.items() if _same(r) != _same(newest)]
    if other:
        reasons.append(
            f"run on other code or in another mode than the newest run ({_stem(newest)}: {_mode(newest)} mode, {_code(newest)}): "
            + ", ".join(f"{n} ({_mode(ok[n])} mode, {_code(ok[n])}, at {ok[n].get('started', '?')})" for n in other)
        )
    if not names or reasons:
        return False, f"Not a complete validation: results of {len(ok)} of the {len(names)} notebooks; " + "; ".join(reasons or ["no notebooks"]) + "."
    times = sorted(r.get("started", "?") for r in ok.values())
    return True, (
        f"A complete validation: all {len(names)} notebooks ran without error in {_mode(newest)} mode on the same code ({_code(newest)}), "
        f"from {times[0]} to {times[-1]} (UTC)."
    )


def render(records: list[dict], names: list[str] | None = None) -> str:
    """The report of ``records`` (run records, see :func:`pagesim.notebooks.execute`) for the
    notebooks ``names`` (stems; default: those of the records)."""
    names = names if names is not None else list(dict.fromkeys(_stem(r) for r in records))
    res = results(records)
    complete, says = coverage(records, names)
    lines = [
        "# pagesim validation report",
        "",
        "Each notebook executed headlessly with papermill; the latest results of each, with when and on what code it ran.",
        "",
        "**" + says + "**",
        "",
        "**" + headline(res, complete) + "**",
        "",
        "Verdicts:",
        "",
    ]
    lines += [f"- `{v}`: {m}" for v, m in MEANING.items()]
    reg, ch = [], []
    for quick in sorted({bool(r.get("quick")) for r in res}):
        mode = [r for r in res if bool(r.get("quick")) == quick]
        base = load_baseline(quick)
        reg += regressions(mode, base)
        ch += changes(mode, base)
    lines += ["", f"Against the committed baseline (`notebooks/verdicts.json`): {len(reg)} regressions, {len(ch)} changes."]
    lines += [f"- REGRESSION {x}" for x in reg] + [f"- changed: {x}" for x in ch if x not in reg]
    head = "| notebook | status | mode | run at (UTC) | code | seconds | peak MiB | "
    lines += ["", head + " | ".join(VERDICTS) + " |", "|---|---|---|---|---|---|---|" + "---|" * len(VERDICTS)]
    by = {n: [r for r in records if _stem(r) == n] for n in names}
    for n in names:
        if not by[n]:
            lines.append(f"| {n}.ipynb | not run | | | | | | " + " | ".join("" for _ in VERDICTS) + " |")
        for r in by[n]:
            c = counts([r])
            peak = round(r["peak_rss_mib"]) if r.get("peak_rss_mib") else ""
            cells = [r["notebook"], r["status"], _mode(r), r.get("started", ""), _code(r), r.get("seconds", ""), peak]
            lines.append("| " + " | ".join(str(x) for x in cells) + " | " + " | ".join(str(c[v]) for v in VERDICTS) + " |")
    for n in names:
        for r in by[n]:
            lines += ["", f"## {r['notebook']}" + (f" ({r['document']})" if r.get("document") else ""), ""]
            output = f"; executed notebook: `{r['output']}`" if r.get("output") else ""
            lines += [f"Run at {r.get('started', '?')} (UTC), {_mode(r)} mode, {_code(r)}{output}.", ""]
            if r["status"] != "ok":
                lines += [f"**{'INTERRUPTED' if r['status'] == 'interrupted' else 'ERROR'}** in {r['notebook']}: {r.get('error', '')}", ""]
            if r.get("findings"):
                lines += ["| finding | source | document | simulation | verdict | band | sim / doc | note |", "|---|---|---|---|---|---|---|---|"]
                for x in r["findings"]:
                    ratio = "" if x.get("ratio") is None else f"{x['ratio']:.2f}"
                    note = note_text(x.get("why", ""), x.get("sensitivity", ""))
                    cells = [x["finding"], x["source"], x["document"], x["simulation"], x["verdict"], x.get("band", ""), ratio, note]
                    lines.append("| " + " | ".join(str(c).replace("|", "\\|").replace("\n", " ") for c in cells) + " |")
    return "\n".join(lines) + "\n"
