"""The main job: execute every notebook headlessly with papermill, render HTML copies, and write the
validation report (each document, each finding, the document's figure, the simulation's, and its
verdict; see pagesim.report). ``pagesim notebooks [--quick] [--out build] [--save-baseline]``; exit
status 1 if a notebook errors (naming the notebook and the cell) or a verdict regressed against
``notebooks/verdicts.json``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

KERNEL = "python3"  # the kernel papermill starts: ipykernel of the Python running this command
REQUIRED_PARAMETERS = {"quick", "result_path"}
CELL_TIMEOUT = 600  # seconds; the slowest cell (a cold compile on a loaded 2-core machine) takes about a minute


POLL_SLICE = 1.0  # seconds: the longest the runner waits on a kernel message before looking again


def sliced_get_msg(get_msg, slice_s: float = POLL_SLICE, clock=time.monotonic):
    """``get_msg`` (an async ``channel.get_msg(timeout)``) waiting in slices of ``slice_s`` seconds
    up to the same timeout. pyzmq's asyncio poll can miss the wakeup of a message that arrives
    while it waits; it then finds the message only when its timeout ends (its last check). Seen
    here once in 9 cold runs of notebook 00: the widget cell's reply was sent 0.15 s after it
    started and received 600 s later, at the cell timeout (nbclient issue 312 describes the same
    with ipywidgets). A new poll first checks whether a message is waiting, so a missed one is
    found within ``slice_s``."""
    from queue import Empty

    async def sliced(self, timeout=None):
        end = None if timeout is None else clock() + timeout
        while True:
            left = slice_s if end is None else max(0.0, end - clock())
            try:
                return await get_msg(self, timeout=min(slice_s, left))
            except Empty:
                if end is not None and clock() >= end:
                    raise

    sliced.pagesim_sliced = True
    return sliced


def _slice_kernel_polls() -> None:
    """Make the kernel client's channels wait in slices (:func:`sliced_get_msg`), once per process."""
    from jupyter_client.channels import AsyncZMQSocketChannel

    if not getattr(AsyncZMQSocketChannel.get_msg, "pagesim_sliced", False):
        AsyncZMQSocketChannel.get_msg = sliced_get_msg(AsyncZMQSocketChannel.get_msg)


def notebooks_dir() -> Path:
    d = Path(__file__).resolve().parents[1] / "notebooks"
    if not d.is_dir():
        raise FileNotFoundError(f"no notebooks folder at {d}: run from a checkout of the pagesim repository")
    return d


def list_notebooks(folder: Path | None = None) -> list[Path]:
    return sorted((folder or notebooks_dir()).glob("[0-9][0-9]_*.ipynb"))


def check_parameters(path: Path) -> dict:
    """The notebook's parameters as papermill inspects them; raises if a required one is missing."""
    import papermill as pm

    params = pm.inspect_notebook(str(path))
    missing = REQUIRED_PARAMETERS - set(params)
    if missing:
        raise ValueError(f"{path.name}: the cell tagged 'parameters' lacks {sorted(missing)}")
    return params


def execute(path: Path, out_dir: Path, quick: bool) -> dict:
    """Run one notebook; returns a record with status, seconds, findings (or the error and cell)."""
    import papermill as pm

    out_dir.mkdir(parents=True, exist_ok=True)
    params = check_parameters(path)
    result = out_dir / f"{path.stem}.json"
    if result.exists():
        result.unlink()
    out_nb = out_dir / path.name
    kw = {"quick": bool(quick), "result_path": str(result.resolve())}
    if "seed" in params:
        kw["seed"] = 0
    rec = {"notebook": path.name, "quick": bool(quick)}
    from nbclient.exceptions import CellTimeoutError

    _slice_kernel_polls()
    t = time.perf_counter()
    for attempt in (1, 2):
        try:
            pm.execute_notebook(
                str(path),
                str(out_nb),
                parameters=kw,
                kernel_name=KERNEL,
                progress_bar=False,
                cwd=str(path.parent),
                log_output=False,
                execution_timeout=CELL_TIMEOUT,
            )
            rec["status"] = "ok"
            break
        except pm.PapermillExecutionError as e:
            rec["status"] = "error"
            rec["error"] = f"cell {_source_index(out_nb, e.cell_index)} (execution {e.exec_count}): {e.ename}: {e.evalue}"
            break
        except CellTimeoutError as e:
            # Rarely the client never hears that a cell finished although the kernel is idle (seen
            # here about once in 50 runs on a loaded machine: both processes waiting in epoll; the
            # hang papermill issue 711 describes; the sliced waits of sliced_get_msg should find
            # such a reply within a second). A cell of ours takes seconds, so one that runs past
            # CELL_TIMEOUT is such a hang: run the notebook once more, and say so.
            rec["status"] = "error"
            rec["error"] = f"a cell ran past {CELL_TIMEOUT} s: {str(e).splitlines()[0] if str(e) else type(e).__name__}"
            rec["retried"] = f"attempt {attempt} timed out after {CELL_TIMEOUT} s"
            print(f"  {path.name}: a cell ran past {CELL_TIMEOUT} s ({'running the notebook once more' if attempt == 1 else 'giving up'})", flush=True)
            if result.exists():
                result.unlink()
    rec["seconds"] = round(time.perf_counter() - t, 1)
    if out_nb.exists():
        _html(out_nb)
    if result.exists():
        rec.update(json.loads(result.read_text(encoding="utf-8")))
    elif rec["status"] == "ok":
        rec["status"] = "error"
        rec["error"] = "the notebook wrote no findings (its last cell must call Findings.save(result_path))"
    return rec


def _source_index(out_nb: Path, idx: int) -> int:
    """The index of a cell in the committed notebook (papermill inserts its injected-parameters cell
    into the executed copy)."""
    import nbformat

    try:
        nb = nbformat.read(out_nb, as_version=4)
    except (OSError, ValueError):
        return idx
    # papermill also adds its error banners (markdown cells tagged papermill-error-cell-tag) after the run,
    # while idx counts the cells that ran: leave the banners out before finding the injected cell
    cells = [c for c in nb.cells if "papermill-error-cell-tag" not in c.metadata.get("tags", [])]
    inj = [i for i, c in enumerate(cells) if "injected-parameters" in c.metadata.get("tags", [])]
    return idx - 1 if inj and idx > inj[0] else idx


def _html(out_nb: Path) -> None:
    import nbformat
    from nbconvert import HTMLExporter

    body, _ = HTMLExporter().from_notebook_node(nbformat.read(out_nb, as_version=4))
    _write_atomic({out_nb.with_suffix(".html"): body})


def _write_atomic(files: dict[Path, str]) -> None:
    """Write every file or none: each goes to a temporary file beside it, and they replace their
    targets only once all are written (a killed or failed run leaves no half-written file)."""
    tmps = {}
    try:
        for path, text in files.items():
            tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            tmps[path] = tmp
            tmp.write_text(text, encoding="utf-8")
        for path, tmp in tmps.items():
            os.replace(tmp, path)
    finally:
        for tmp in tmps.values():
            tmp.unlink(missing_ok=True)


def clear_outputs(out: Path, notebooks: list[Path]) -> None:
    """Remove the report and every notebook's outputs that a previous run left in ``out``, so the
    files there always come from one run: a run that is killed leaves its partial notebooks and
    no report, never an old report beside new notebooks. Only files this command writes are
    removed (``report.md``, ``report.json``, and ``notebooks/NN_name.{ipynb,html,json,json.part}``)."""
    for name in ("report.md", "report.json"):
        (out / name).unlink(missing_ok=True)
    for nb in notebooks:
        for suffix in (".ipynb", ".html", ".json", ".json.part"):
            (out / "notebooks" / f"{nb.stem}{suffix}").unlink(missing_ok=True)


def report(records: list[dict], quick: bool = False) -> str:
    from .report import render

    return render(records, quick)


def main(argv=None) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="pagesim notebooks", description="execute every notebook and write the validation report")
    ap.add_argument("--quick", action="store_true", help="small sizes (what CI runs)")
    ap.add_argument("--out", default="build", help="output folder (default build/)")
    ap.add_argument(
        "--save-baseline", action="store_true", help="store this run's verdicts in notebooks/verdicts.json (the baseline a later run must not fall below)"
    )
    ap.add_argument("names", nargs="*", help="notebooks to run (default: all)")
    args = ap.parse_args(argv)
    out = Path(args.out)
    nbs = list_notebooks()
    if args.names:
        nbs = [p for p in nbs if any(n in p.name for n in args.names)]
        if not nbs:
            print(f"pagesim notebooks: no notebook matches {args.names}", file=sys.stderr)
            return 2
    clear_outputs(out, list_notebooks())
    records = []
    for p in nbs:
        print(f"running {p.name}{' (quick)' if args.quick else ''} ...", flush=True)
        r = execute(p, out / "notebooks", args.quick)
        records.append(r)
        bad = [x["id"] for x in r.get("findings", []) if x["verdict"] == "contradicted"]
        print(f"  {r['status']} in {r['seconds']} s" + (f": {r['error']}" if r.get("error") else "") + (f"; contradicted: {bad}" if bad else ""), flush=True)
    from .findings import regressions
    from .report import headline, load_baseline, save_baseline

    out.mkdir(parents=True, exist_ok=True)
    _write_atomic({out / "report.md": report(records, args.quick), out / "report.json": json.dumps(records, indent=1)})
    print(f"report: {out / 'report.md'}; HTML copies in {out / 'notebooks'}")
    print(headline(records))
    # against the baseline this run started from: a run that saves a new one still names what got worse
    reg = regressions(records, load_baseline(args.quick))
    if args.save_baseline:
        print(f"baseline saved: {save_baseline(records, args.quick)}")
    errors = [f"{r['notebook']}: {r.get('error', '')}" for r in records if r["status"] != "ok"]
    for x in errors:
        print(f"ERROR {x}", file=sys.stderr)
    for x in reg:
        print(f"REGRESSION {x}", file=sys.stderr)
    return 1 if errors or reg else 0


if __name__ == "__main__":
    sys.exit(main())
