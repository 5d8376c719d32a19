"""The validation report: every finding of every notebook with its verdict, counted by class.

``pagesim notebooks`` writes it to ``build/report.md`` (and ``report.json``), from the run records
of every notebook in ``build/notebooks`` (a run of some notebooks updates theirs and keeps the
others'). It says which notebooks' results it holds, when each ran and on what code
(:func:`pagesim.validation.notebooks.code_version`), and calls itself a complete validation only when every
notebook's latest run succeeded, in one mode, on the same code. The headline counts each verdict
class and says what was reproduced; it never says that every finding holds while any finding is
direction-only, contradicted, not reproduced or calibrated, or while the validation is not complete.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..core.files import write_atomic
from ..studies.findings import LABELS, REPRODUCED, broken, changes, is_host, label, note_text, notebook_stem, ratio_text, regressions, restated, stronger

MEANING = {
    "exact": "the document gives an exact count and the simulation equals it",
    "within (robust)": (
        "inside its band (every system or row inside its own), and still inside when each modelling choice it rests on is re-run from x0.5 to x2, "
        "one choice at a time (two moved together can take it outside)"
    ),
    "within": "inside its band (every system or row inside its own); the notes say where a modelling choice takes it outside",
    "direction": "same sign as the document but outside the band (sim / doc gives the size)",
    "contradicted": (
        "the model ran and disagrees with the document (the other sign, no change, a size off by ten times or more, an exact count that differs, "
        "or, where the model's set-up fixes the sign, a size outside the band); the model's reason is given"
    ),
    "not reproduced": (
        "nothing was run for it, or what would set it is not stated and the runs over its range (x0.5..x2 of each choice) fall on both sides of "
        "the document's figure (so any figure could be matched); the reason is given"
    ),
    "arithmetic": "a worked calculation that illustrates a figure: not evidence",
    "calibrated": "a parameter was fitted to this figure: not evidence",
    "shown": (
        "a measurement of the machine that ran the notebook, or a prediction of the model, set beside what could explain it, with no "
        "document figure to agree or disagree with: not judged"
    ),
}


def notebooks_dir() -> Path:
    """The checkout's notebooks folder (the lessons, and the baseline of their verdicts)."""
    d = Path(__file__).resolve().parents[2] / "notebooks"
    if not d.is_dir():
        raise FileNotFoundError(f"no notebooks folder at {d}: run from a checkout of the pagesim repository")
    return d


def baseline_path() -> Path:
    return notebooks_dir() / "verdicts.json"


def load_baseline(quick: bool) -> dict:
    p = baseline_path()
    if not p.is_file():
        return {}
    return json.loads(p.read_text(encoding="utf-8")).get("quick" if quick else "full", {})


def save_baseline(records: list[dict], quick: bool) -> Path:
    """Store this run's verdicts as the baseline for its mode (written atomically), less the checks
    measured on this machine (:func:`pagesim.studies.findings.is_host`)."""
    p = baseline_path()
    data = json.loads(p.read_text(encoding="utf-8")) if p.is_file() else {}
    mode = data.setdefault("quick" if quick else "full", {})
    for r in records:  # a check measured on this machine is never a gate (regressions), so not kept
        if r.get("status") == "ok":
            mode[r["notebook"].removesuffix(".ipynb")] = {f["id"]: label(f) for f in r.get("findings", []) if not is_host(r, f)}
    write_atomic({p: json.dumps(data, indent=1, sort_keys=True) + "\n"}, "the baseline")
    return p


def counts(records: list[dict]) -> dict:
    c = {v: 0 for v in LABELS}
    for r in records:
        for f in r.get("findings", []):
            c[label(f)] += 1
    return c


def counted(records: list[dict], only: dict | None = None) -> list[dict]:
    """``records`` (or the one record ``only`` among them) with only the findings the headline
    counts: the documents' own, each figure once (no restatement of another finding's simulated
    figure, no prediction of the model alone, no check on this machine)."""
    keep = lambda r, f: not restated(records, r, f) and not is_host(r, f) and not f.get("model")  # noqa: E731
    return [dict(r, findings=[f for f in r.get("findings", []) if keep(r, f)]) for r in ([only] if only is not None else records)]


def headline(records: list[dict], complete: bool = True) -> str:
    """The verdict counts of the documents' findings, each simulated figure counted once, with the
    restatements, the model's own predictions and the checks on this machine counted apart; "Every
    finding is reproduced" only
    when all are and the validation is ``complete`` (see :func:`coverage`)."""
    every = counts(records)
    total = sum(every.values())
    c = counts(counted(records))
    n = sum(c.values())
    evidence = sum(c[v] for v in ("exact", "within (robust)", "within", "direction", "contradicted"))
    reproduced = sum(c[v] for v in REPRODUCED)
    parts = ", ".join(f"{k} {v}" for v, k in c.items() if k)
    text = (
        f"{total} findings. The documents' findings, each simulated figure counted once: {n} ({parts or 'none'}). "
        f"Reproduced (exact, or within their band): {reproduced} of the {evidence} that are checked: {c['exact']} exact, "
        f"{c['within (robust)']} within and robust to their modelling choices, {c['within']} within but not robust (or not swept)."
    )
    near = [f"{notebook_stem(r)}:{f['id']} ({label(f)})" for r in counted(records) for f in r.get("findings", []) if label(f) in ("within (robust)", "within")]
    if near:
        text += f" Within: {'; '.join(near)} (each note gives its band and what it rests on)."
    reused = [(r, f) for r in records for f in r.get("findings", []) if restated(records, r, f) and not is_host(r, f)]
    host = [(r, f) for r in records for f in r.get("findings", []) if is_host(r, f)]
    model = [f for r in records for f in r.get("findings", []) if f.get("model") and not restated(records, r, f) and not is_host(r, f)]
    bad = [(r, f) for r in records for f in r.get("findings", []) if f.get("reuses") and not is_host(r, f) and broken(records, r, f)]
    if bad:
        which = "; ".join(f"{f['id']} -> {', '.join(broken(records, r, f))}" for r, f in bad)
        text += f" Counted here, as their reference names no counted finding: {len(bad)} ({which})."
    over = [(r, f) for r in records for f in r.get("findings", []) if f.get("reuses") and not is_host(r, f) and stronger(records, r, f)]
    if over:
        which = "; ".join(f"{f['id']} ({f['verdict']}) -> {', '.join(stronger(records, r, f))}" for r, f in over)
        text += f" Read with care: {len(over)} restate a figure with a stronger verdict than the finding that counts it ({which})."
    if reused:
        which = "; ".join(f"{f['id']} -> {f['reuses']}" for _, f in reused)
        text += f" Not counted again: {len(reused)} restate another finding's simulated figure, or a document figure another finding judges ({which})."
    if model:
        ids = ", ".join(f["id"] for f in model)
        text += f" Apart: {len(model)} prediction{'s' * (len(model) != 1)} of the model that no document figure stands beside ({ids})."
    if host:
        hc = counts([{"findings": [f for _, f in host]}])
        text += (
            f" Apart: {len(host)} finding{'s' * (len(host) != 1)} measured on the machine that ran the notebooks (real faults, a trace, this machine's "
            "latencies): checks of pagesim against it, and measurements shown beside the model, not evidence about a document ("
            + ", ".join(f"{k} {v}" for v, k in hc.items() if k)
            + ")."
        )
    if c["contradicted"]:
        resting = [f["id"] for r in counted(records) for f in r.get("findings", []) if label(f) == "contradicted" and f.get("reaches")]
        text += f" {c['contradicted']} contradicted: read them below" + (
            f"; of them, in their band (or with a row in its own) at another value of a choice swept (x0.5..x2 of an unstated figure): "
            f"{len(resting)} ({', '.join(resting)}), whose disagreement rests on the value chosen, as a within that is not robust rests on it."
            if resting
            else "."
        )
    if total and evidence and sum(every[v] for v in REPRODUCED) == total and complete:
        text += " Every finding is reproduced."
    return text


def figures(records: list[dict]) -> list[dict]:
    """Per notebook (document), the document's measured-performance figures its findings cover
    (``Finding.figures``; checks on this machine left out; a finding that restates another's simulated
    number still carries its own document figures), and how many of them are within their band, and
    within and robust."""
    out = []
    for r in records:
        r = dict(r, findings=[f for f in r.get("findings", []) if not is_host(r, f)])
        fs = [f for f in r.get("findings", []) if f.get("figures") and not f.get("model")]
        if not fs:
            continue

        within = sum(f["figures"] for f in fs if f["verdict"] == "within")  # a row inside its band counts only when its whole finding is within
        robust = sum(f["figures"] for f in fs if label(f) == "within (robust)")
        total = sum(f["figures"] for f in fs)
        out.append(
            {
                "notebook": r["notebook"],
                "document": r.get("document", ""),
                "figures": total,
                "within": within,
                "robust": robust,
                "list": [(f["id"], f["figures"], label(f)) for f in fs],
            }
        )
    return out


def results(records: list[dict]) -> list[dict]:
    """The records of runs without error: the findings the report counts."""
    return [r for r in records if r.get("status") == "ok"]


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
    changed sources, see :func:`pagesim.validation.notebooks.code_version`) than the newest run's."""
    ok = {notebook_stem(r): r for r in results(records)}
    failed = {notebook_stem(r): r for r in records if r.get("status") != "ok"}
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
            f"run on other code or in another mode than the newest run ({notebook_stem(newest)}: {_mode(newest)} mode, {_code(newest)}): "
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
    """The report of ``records`` (run records, see :func:`pagesim.validation.notebooks.execute`) for the
    notebooks ``names`` (stems; default: those of the records)."""
    names = names if names is not None else list(dict.fromkeys(notebook_stem(r) for r in records))
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
    fig = figures(res)
    if fig:
        lines += [
            "",
            "The documents' measured-performance figures (each row of a table a figure, those not reproduced included; the figures "
            "of a finding count as within only when the whole finding is, every system or row inside its own band, and as robust "
            "only when it is also robust):",
            "",
            "| notebook | document | figures | within | within (robust) |",
            "|---|---|---|---|---|",
        ]
        for x in fig:
            within, robust = (f"{x[k]} ({100 * x[k] / x['figures']:.0f}%)" if x["figures"] else str(x[k]) for k in ("within", "robust"))
            lines.append(f"| {x['notebook']} | {x['document']} | {x['figures']} | {within} | {robust} |")
    reg, ch = [], []
    for quick in sorted({bool(r.get("quick")) for r in res}):
        mode = [r for r in res if bool(r.get("quick")) == quick]
        base = load_baseline(quick)
        reg += regressions(mode, base)
        ch += changes(mode, base)
    lines += ["", f"Against the committed baseline (`notebooks/verdicts.json`): {len(reg)} regressions, {len(ch)} changes."]
    lines += [f"- REGRESSION {x}" for x in reg] + [f"- changed: {x}" for x in ch if x not in reg]
    head = "| notebook | status | mode | run at (UTC) | code | seconds | peak MiB | "
    judged = tuple(v for v in LABELS if v != "shown")  # shown is for the findings of the last two columns only
    apart = ("restated", "model only", "host checks")
    lines += [
        "",
        "The verdict columns count each notebook's own findings about its document, each simulated figure once; "
        "restatements, the model's own predictions and checks on the machine that ran it are counted in the last three columns.",
        "",
        head + " | ".join((*judged, *apart)) + " |",
        "|---|---|---|---|---|---|---|" + "---|" * (len(judged) + len(apart)),
    ]
    by = {n: [r for r in records if notebook_stem(r) == n] for n in names}
    for n in names:
        if not by[n]:
            lines.append(f"| {n}.ipynb | not run | | | | | | " + " | ".join("" for _ in (*judged, *apart)) + " |")
        for r in by[n]:
            c = counts(counted(records, only=r))
            fs = r.get("findings", [])
            host = sum(is_host(r, f) for f in fs)
            c["restated"] = sum(restated(records, r, f) and not is_host(r, f) for f in fs)
            c["model only"] = sum(bool(f.get("model")) and not restated(records, r, f) and not is_host(r, f) for f in fs)
            c["host checks"] = host
            peak = round(r["peak_rss_mib"]) if r.get("peak_rss_mib") else ""
            cells = [r["notebook"], r["status"], _mode(r), r.get("started", ""), _code(r), r.get("seconds", ""), peak]
            lines.append("| " + " | ".join(str(x) for x in cells) + " | " + " | ".join(str(c[v]) for v in (*judged, *apart)) + " |")
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
                    note = note_text(x.get("why", ""), x.get("sensitivity", ""), x.get("robustness"))
                    if is_host(r, x):
                        note = "measured on this machine, counted apart. " + note
                    verdict = label(x)
                    cells = [x["finding"], x["source"], x["document"], x["simulation"], verdict, x.get("band", ""), ratio_text(x), note]
                    lines.append("| " + " | ".join(str(c).replace("|", "\\|").replace("\n", " ") for c in cells) + " |")
    return "\n".join(lines) + "\n"
