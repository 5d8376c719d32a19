"""The documents' tables and figures, loadable in one line with their provenance.

    >>> import pagesim.sources.datasets as D
    >>> D.list()                       # every dataset name
    >>> df = D.load("cscs_pchan")      # a pandas DataFrame; df.attrs has document, section, units

The files live in the repository's ``datasets/`` folder, which is installed with the package as
``pagesim._datasets`` (pyproject.toml maps it), so the same call works from a checkout and from an
installed wheel. ``datasets/catalog.toml`` describes every dataset; ``datasets/README.md`` is
generated from it (``python -m pagesim.sources.datasets --readme``).
"""

from __future__ import annotations

import builtins
import functools
import importlib.resources
import io
import re
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def data_root():
    """The datasets folder: the installed ``pagesim._datasets``, else the checkout's ``datasets/``."""
    try:
        root = importlib.resources.files("pagesim._datasets")
        if root.joinpath("catalog.toml").is_file():
            return root
    except ModuleNotFoundError:
        pass
    here = Path(__file__).resolve().parents[2] / "datasets"
    if (here / "catalog.toml").is_file():
        return here
    raise FileNotFoundError("pagesim's datasets are missing: neither pagesim._datasets nor a checkout's datasets/ folder was found")


@functools.lru_cache(maxsize=1)
def catalog() -> dict:
    return tomllib.loads(data_root().joinpath("catalog.toml").read_text(encoding="utf-8"))


def list() -> builtins.list[str]:  # noqa: A001 - the issue asks for datasets.list()
    """Names of every dataset."""
    return [d["name"] for d in catalog()["dataset"]]


def info(name: str) -> dict:
    """The catalog entry of ``name`` with its document's title, author, date and file."""
    for d in catalog()["dataset"]:
        if d["name"] == name:
            doc = catalog()["documents"].get(
                d["document"], {"title": "pagesim architecture reference", "file": "datasets/architecture/NOTES.md", "author": "", "date": ""}
            )
            return {**d, "document_info": doc}
    raise ValueError(f"no dataset named {name!r}: choose one of {', '.join(list())}")


def load(name: str):
    """The dataset ``name`` as a pandas DataFrame, with ``attrs``: name, document (title, author,
    date, file), section, description, units and meaning of each column, formula (if any)."""
    import pandas as pd  # deferred: pandas is slow to import; only tables need it

    meta = info(name)
    root = data_root()
    if "parser" in meta:
        parse = {"trapstat": parse_trapstat, "pmap": parse_pmap}[meta["parser"]]
        frames = [parse(root.joinpath(f).read_text(encoding="utf-8"), label=f) for f in meta["files"]]
        df = pd.concat(frames, ignore_index=True)
    else:
        df = pd.read_csv(io.StringIO(root.joinpath(meta["file"]).read_text(encoding="utf-8")))
    if "finding_rules" in meta:
        df = _apply_finding_rules(df, meta["finding_rules"], name)
    cols = meta["columns"]
    missing = set(df.columns) ^ set(cols)
    if missing:
        raise RuntimeError(f"dataset {name!r}: columns and catalog disagree on {sorted(missing)}")
    doc = meta["document_info"]
    df.attrs.update(
        {
            "name": name,
            "document": f"{doc['title']} ({doc.get('author', '')}, {doc.get('date', '')})",
            "document_file": doc["file"],
            "section": meta["section"],
            "description": meta["description"],
            "units": {c: u for c, (u, _) in cols.items()},
            "columns": {c: m for c, (_, m) in cols.items()},
            "formula": meta.get("formula", ""),
            "files": meta.get("files", [meta.get("file")]),
        }
    )
    return df


def _apply_finding_rules(df, rules, name: str):
    """The ``finding`` column of a parsed dataset (its rows are copied verbatim from the document, so
    the column cannot live in the file): each row takes the finding of the first rule in the
    catalog's ``finding_rules`` whose ``where`` holds (column = value, or column = [values])."""
    out = []
    for i, row in df.iterrows():
        for rule in rules:
            where = rule.get("where", {})
            if all((row[c] in v) if isinstance(v, builtins.list) else (row[c] == v) for c, v in where.items()):
                out.append(rule["finding"])
                break
        else:
            raise ValueError(f"dataset {name!r}: no finding rule matches row {i} ({dict(row)})")
    return df.assign(finding=out)


# ------------------------------------------------------------------------------------- parsers
_TRAP_EVENTS = ("itlb-miss", "itsb-miss", "dtlb-miss", "dtsb-miss")


def parse_trapstat(text: str, label: str = "trapstat output"):
    """Parse ``trapstat -t`` or ``trapstat -T`` output into a long DataFrame: a row per CPU, mode,
    page size and event (and one 'all' row per line for the last %tim column)."""
    import pandas as pd  # deferred: pandas is slow to import; only tables need it

    lines = text.splitlines()
    if not lines or not lines[0].startswith("sol9# trapstat"):
        raise ValueError(f"{label}: line 1 is not a trapstat command line")
    output = "-T" if " -T" in lines[0] else "-t"
    run = "after" if "after" in label else "before"
    rows = []
    for n, line in enumerate(lines[1:], start=2):
        if not line.strip() or line.startswith(("cpu", "-", "=", "- ")) or set(line.strip()) <= set("-+= "):
            continue
        head, *parts = line.split("|")
        if len(parts) != 3:
            raise ValueError(f"{label}, line {n}: expected 3 '|' separators in {line!r}")
        h = head.split()
        if h and h[0] == "ttl":
            cpu, mode, size = "ttl", "", ""
        elif output == "-T" and len(h) == 3:
            cpu, mode, size = h
        elif output == "-t" and len(h) == 2:
            cpu, mode, size = h[0], h[1], ""
        else:
            raise ValueError(f"{label}, line {n}: cannot read cpu/mode/size from {head!r}")
        nums = parts[0].split() + parts[1].split()
        if len(nums) != 8:
            raise ValueError(f"{label}, line {n}: expected 8 numbers between the separators, got {len(nums)}")
        for i, ev in enumerate(_TRAP_EVENTS):
            rows.append(
                {
                    "output": output,
                    "run": run,
                    "cpu": cpu,
                    "mode": mode,
                    "page_size": size,
                    "event": ev,
                    "count": int(nums[2 * i]),
                    "pct_time": float(nums[2 * i + 1]),
                }
            )
        rows.append({"output": output, "run": run, "cpu": cpu, "mode": mode, "page_size": size, "event": "all", "count": None, "pct_time": float(parts[2])})
    df = pd.DataFrame(rows)
    df["count"] = df["count"].astype("Int64")
    return df


def parse_pmap(text: str, label: str = "pmap output"):
    """Parse ``pmap -sx`` output into a DataFrame, a row per mapping; '-' becomes missing."""
    import pandas as pd  # deferred: pandas is slow to import; only tables need it

    rows = []
    lines = text.splitlines()
    for n, line in enumerate(lines, start=1):
        if n <= 3 or line.startswith(("--------", "total Kb")) or not line.strip():
            continue
        m = re.match(r"^([0-9A-Fa-f]+)\s+(\d+)\s+(\d+|-)\s+(\d+|-)\s+(\d+|-)\s+(\S+)\s+(\S+)\s+(.*)$", line)
        if not m:
            raise ValueError(f"{label}, line {n}: not a pmap -sx mapping line: {line!r}")
        addr, kb, rss, anon, locked, pgsz, mode, mapped = m.groups()
        num = lambda v: None if v == "-" else int(v)  # noqa: E731
        rows.append(
            {
                "address": addr,
                "kbytes": int(kb),
                "rss": num(rss),
                "anon": num(anon),
                "locked": num(locked),
                "pgsz": None if pgsz == "-" else pgsz,
                "mode": mode,
                "mapped_file": mapped.strip(),
            }
        )
    df = pd.DataFrame(rows)
    for c in ("rss", "anon", "locked"):
        df[c] = df[c].astype("Int64")
    return df


# ------------------------------------------------------------------------------------- README
def readme() -> str:
    """datasets/README.md, generated from the catalog."""
    cat = catalog()
    out = [
        "# datasets/",
        "",
        "The five documents' tables and figures as tidy data, each with its source. Load any of them",
        "in one line: `pagesim.sources.datasets.load(name)` returns a pandas DataFrame whose `attrs` carry the",
        "document, section, units and column meanings. Figures are copied as the documents print them;",
        "a bound or range stays a bound or range. This file is generated from `catalog.toml`",
        "(`python -m pagesim.sources.datasets --readme > datasets/README.md`); `traces/` holds real memory traces.",
        "",
        "## Documents",
        "",
        "| key | file (in the project's shared seeds) | title | author | date | notebook |",
        "|---|---|---|---|---|---|",
    ]
    for k, d in cat["documents"].items():
        out.append(f"| {k} | {d['file']} | {d['title']} | {d['author']} | {d['date']} | {d.get('notebook', '')} |")
    out += [
        "",
        "Every row of a dataset of findings names, in its `finding` column, the id of the finding in the",
        "document's notebook that covers it (several ids are separated by ';'); the validation report",
        "(`make run`) shows each with its verdict, and `tests/validation/test_document_items.py` checks that every id",
        "is a finding of that notebook. A dataset of parameters (the setup of the measurements, not a",
        "result) says so, with the reason, and has no `finding` column.",
    ]
    out += ["", "## Datasets", ""]
    for d in cat["dataset"]:
        files = ", ".join(f"`{f}`" for f in d.get("files", [d.get("file")]))
        out += [f"### {d['name']}", "", f"{d['description']}", "", f"- document: {d['document']}; section: {d['section']}", f"- files: {files}"]
        if d.get("formula"):
            out.append(f"- formula: {d['formula']}")
        if d.get("parameters"):
            out.append(f"- parameters, not findings: {d['parameters']}")
        for r in d.get("finding_rules", []):
            cond = " and ".join(f"{c} {'in' if isinstance(v, builtins.list) else '='} {v}" for c, v in r.get("where", {}).items()) or "every other row"
            out.append(f"- finding `{r['finding']}`: {cond}")
        out += ["", "| column | unit | meaning |", "|---|---|---|"]
        for c, (u, m) in d["columns"].items():
            out.append(f"| {c} | {u} | {m} |")
        out.append("")
    out += [
        "## traces/",
        "",
        "`traces/ls-lackey.txt.gz`: a real program's memory trace recorded with valgrind lackey; beside it",
        "the traces of three small C programs (`traces/programs/`: random updates, a stream, a pointer chase).",
        "How each was recorded is in `traces/README.md`. Read them with `pagesim.sources.traces.read_trace`.",
        "",
    ]
    return "\n".join(out)


if __name__ == "__main__":
    if sys.argv[1:] == ["--readme"]:
        sys.stdout.write(readme())
    else:
        for n in list():
            print(n)
