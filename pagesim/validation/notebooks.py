"""The main job: execute the notebooks headlessly with papermill, render HTML copies, and write the
validation report (each document, each finding, the document's figure, the simulation's, and its
verdict; see pagesim.validation.report). ``pagesim notebooks [--quick] [--out build] [--save-baseline] [NN ...]``;
exit status 1 if a notebook errors (naming the notebook and the cell) or a verdict regressed against
``notebooks/verdicts.json``.

Each notebook's outputs go to ``OUT/notebooks`` (see :func:`execute`: written whole once it has run,
never over an earlier run's outputs when it fails); a run of some notebooks leaves the others'
outputs as they are, and ``OUT/report.md`` is rebuilt after every notebook from all the records in
the folder (:func:`write_report`), so it always describes the files beside it.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import errno
import hashlib
import importlib.util
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from queue import Empty

from ..core.files import probe_folder, write_atomic
from ..core.version import __version__
from ..studies.findings import regressions
from .report import coverage, headline, load_baseline, notebooks_dir, render, results, save_baseline

KERNEL = "python3"  # the kernel papermill starts: ipykernel of the Python running this command
REQUIRED_PARAMETERS = {"quick", "result_path"}
CELL_TIMEOUT = 600  # seconds; the slowest cell (a cold compile on a loaded 2-core machine) takes about a minute


POLL_SLICE = 1.0  # seconds: the longest the runner waits on a kernel message before looking again


def sliced_get_msg(get_msg, slice_s: float = POLL_SLICE, clock=time.monotonic):
    """``get_msg`` (an async ``channel.get_msg(timeout)``) waiting in slices of ``slice_s`` seconds
    up to the same timeout. pyzmq's asyncio poll can miss the wakeup of a message that arrives
    while it waits; it then finds the message only when its timeout ends (its last check). Seen
    here once in 9 cold runs of notebook 00: the widget cell's reply was sent 0.15 s after it
    started and received 600 s later, at the cell timeout (nbclient's tracker, #312, reports the same
    with ipywidgets). A new poll first checks whether a message is waiting, so a missed one is
    found within ``slice_s``."""

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
    from jupyter_client.channels import AsyncZMQSocketChannel  # deferred: only running notebooks needs jupyter_client

    if not getattr(AsyncZMQSocketChannel.get_msg, "pagesim_sliced", False):
        AsyncZMQSocketChannel.get_msg = sliced_get_msg(AsyncZMQSocketChannel.get_msg)


def list_notebooks(folder: Path | None = None) -> list[Path]:
    return sorted((folder or notebooks_dir()).glob("[0-9][0-9]_*.ipynb"))


def select(every: list[Path], names: list[str]) -> list[Path]:
    """The notebooks of ``every`` that ``names`` name, in the order of ``every`` (all of them when
    ``names`` is empty). A name is the start of a notebook's file name (``02``, ``02_opteron_cscs``,
    ``02_opteron_cscs.ipynb``) and must match exactly one notebook: an empty name, or one that
    matches none or several, raises ValueError naming it and listing the notebooks."""
    if not names:
        return list(every)
    chosen, bad = set(), []
    for n in names:
        hits = [p for p in every if n and p.name.startswith(n)]
        if len(hits) == 1:
            chosen.add(hits[0])
        else:
            why = "is empty" if not n else "matches no notebook" if not hits else f"matches {len(hits)} notebooks"
            bad.append(f"{n!r} {why}")
    if bad:
        raise ValueError(
            f"notebook name {'; '.join(bad)}: a name is the start of one notebook's file name, such as 02 or 02_opteron_cscs; "
            f"the notebooks: {', '.join(p.stem for p in every)}"
        )
    return [p for p in every if p in chosen]


OUT_ALLOWED = "a folder this user can write (created if missing) whose notebooks/ subfolder is not the folder of the source notebooks, such as build"


def prepare_out(arg: str, source: Path) -> Path:
    """The output folder ``--out arg``, checked before any notebook runs: created with its
    ``notebooks/`` subfolder, and written to (a probe file in each, removed). Refused, with a
    ValueError naming --out, the path and why: an empty ``arg``; a folder whose ``notebooks/``
    subfolder is, after resolving symlinks, the folder ``source`` the notebooks are read from (the
    executed notebooks would be written over the source ones); a folder that cannot be created or
    written. Folders created for a refused ``arg`` are removed."""
    if not arg.strip():
        raise ValueError(f"--out {arg!r} is empty: give {OUT_ALLOWED}")
    out = Path(arg)
    nb_out = out / "notebooks"

    def refuse_source():
        raise ValueError(
            f"--out {arg!r}: its subfolder {nb_out} is the folder of the source notebooks ({source.resolve()}), and the executed notebooks would be "
            f"written over them: give {OUT_ALLOWED}"
        )

    if nb_out.resolve() == source.resolve():
        refuse_source()
    created = []
    try:
        for d in (*reversed(nb_out.absolute().parents), nb_out.absolute()):
            if not d.is_dir():
                d.mkdir()  # raises if d is a file, or cannot be made
                created.append(d)
        if os.path.samefile(nb_out, source):  # the same folder by another way than a symlink (a bind mount, a hard-linked path)
            refuse_source()
        for d in (out, nb_out):
            probe_folder(d)
    except BaseException as e:
        for d in reversed(created):
            try:
                d.rmdir()
            except OSError:
                pass
        if not isinstance(e, OSError):
            raise
        where = e.filename or nb_out
        if e.errno in (errno.ENOTDIR, errno.EEXIST):
            files = [d for d in (*reversed(nb_out.absolute().parents), nb_out.absolute()) if d.exists() and not d.is_dir()]
            why = f"{files[0]} is a file, not a folder" if files else e.strerror
        else:
            why = e.strerror or str(e)
        raise ValueError(f"--out {arg!r}: cannot create or write {where}: {why}; give {OUT_ALLOWED}") from None
    return out


def check_parameters(path: Path) -> dict:
    """The notebook's parameters as papermill inspects them; raises if a required one is missing."""
    import papermill as pm  # deferred: only running notebooks needs papermill

    params = pm.inspect_notebook(str(path))
    missing = REQUIRED_PARAMETERS - set(params)
    if missing:
        raise ValueError(f"{path.name}: the cell tagged 'parameters' lacks {sorted(missing)}")
    return params


def code_version(folder: Path | None = None) -> dict:
    """What produced a run: pagesim's version, the git commit of the checkout (``+changes`` when
    its tracked files differ from it; None outside a checkout) and ``sources``, a digest of the
    package's files and of the notebooks in ``folder`` (default: the notebooks folder, when there is
    one). Two runs are comparable when their digests are equal."""
    pkg = Path(__file__).resolve().parents[1]
    if folder is None:
        try:
            folder = notebooks_dir()
        except FileNotFoundError:
            folder = None
    files = [p for p in sorted(pkg.rglob("*")) if p.is_file() and "__pycache__" not in p.parts]
    files += list_notebooks(folder) if folder is not None else []
    h = hashlib.sha256()
    for p in files:
        h.update(p.name.encode() + b"\0" + p.read_bytes() + b"\0")
    commit = None
    try:
        if not (pkg.parent / ".git").exists():  # an installed copy, not a checkout
            raise FileNotFoundError(pkg.parent / ".git")
        run = dict(cwd=pkg.parent, capture_output=True, text=True, timeout=30)
        head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], **run)
        if head.returncode == 0:
            changed = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], **run).stdout.strip()
            commit = head.stdout.strip() + ("+changes" if changed else "")
    except (OSError, subprocess.SubprocessError):
        pass
    return {"version": __version__, "commit": commit, "sources": h.hexdigest()[:12]}


def _kernel_manager(log):
    """A kernel manager class whose kernels write their own log lines (ipykernel's warnings, and the
    traceback a kernel prints when it is shut down in the middle of a cell) to the open file ``log``
    instead of this terminal. What the cells print reaches the notebook either way. Once the run is
    stopped by a signal (:func:`_signals_stop_the_run`) it kills its kernel instead of waiting for
    it to shut down."""
    from jupyter_client.manager import AsyncKernelManager  # deferred: only running notebooks needs jupyter_client

    class LoggedKernelManager(AsyncKernelManager):
        async def _async_launch_kernel(self, kernel_cmd, **kw):
            kw.setdefault("stdout", log)
            kw.setdefault("stderr", log)
            return await super()._async_launch_kernel(kernel_cmd, **kw)

        async def shutdown_kernel(self, now=False, restart=False):
            # once the run is stopped, the kernel is killed at once: asked to shut down, a kernel busy
            # in compiled code (a numba loop does not see SIGINT) is waited for up to shutdown_wait_time
            return await super().shutdown_kernel(now=now or _STOP["signum"] is not None, restart=restart)

    return LoggedKernelManager


def _engine():
    """papermill's nbclient engine, registered as 'pagesim', which puts the notebook it executes in
    the list ``keep`` (an engine argument): the runner then has the notebook however the run ends
    (an error, a timeout, Ctrl-C), and writes it itself. papermill itself writes no file (the runner
    gives it no output path)."""
    from papermill.engines import NBClientEngine, papermill_engines  # deferred: only running notebooks needs papermill

    class KeepingEngine(NBClientEngine):
        @classmethod
        def execute_notebook(cls, nb, kernel_name, keep=None, **kw):
            if keep is not None:
                keep.append(nb)
            return super().execute_notebook(nb, kernel_name, **kw)

    papermill_engines.register("pagesim", KeepingEngine)
    return "pagesim"


class Stopped(KeyboardInterrupt):
    """Raised in the main thread when SIGINT (Ctrl-C) or SIGTERM (``timeout``, a CI cancel) stops a
    run (:func:`_signals_stop_the_run`); the line ``pagesim: interrupted`` is already printed."""

    said = True

    def __init__(self, signum: int):

        super().__init__()
        self.signum = signum
        self.why = "interrupted (Ctrl-C)" if signum == signal.SIGINT else f"terminated ({signal.Signals(signum).name})"


_STOP = {"signum": None}  # the signal that stopped the run under way, if one did


def _on_stop_signal(signum, frame):
    if _STOP["signum"] is None:  # said once, when the first signal arrives, before the clean-up
        print("pagesim: interrupted", file=sys.stderr, flush=True)
    _STOP["signum"] = signum
    raise Stopped(signum)


@contextlib.contextmanager
def _signals_stop_the_run():
    """For the duration of the block, SIGINT and SIGTERM raise :class:`Stopped` (a
    KeyboardInterrupt) in the main thread, so that the clean-up of Ctrl-C runs for both: the kernel
    killed, temporary files removed, the notebook recorded as failed, the report rebuilt. The line
    ``pagesim: interrupted`` is printed when the signal arrives. A signal whose handler is not
    Python's default (ignored, or another handler) keeps it; the old handlers are restored after. Out
    of the main thread, nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    defaults = {signal.SIGINT: signal.default_int_handler, signal.SIGTERM: signal.SIG_DFL}
    old = {s: signal.getsignal(s) for s in defaults}
    _STOP["signum"] = None
    try:
        for s, default in defaults.items():
            if old[s] is default:
                signal.signal(s, _on_stop_signal)
        yield
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)
        _STOP["signum"] = None


def _now() -> str:

    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def execute(path: Path, out_dir: Path, quick: bool) -> dict:
    """Run one notebook; returns its record: status, seconds, when it started, the code that ran it
    (:func:`code_version`), findings (or the error and its cell) and ``output``, the executed
    notebook's file name. The outputs are written atomically once the notebook has run: after a run
    without error ``NN_name.ipynb``, ``.html`` and ``.json`` (the record) replace the notebook's
    earlier outputs, and any ``NN_name.failed.*`` of an earlier run is removed. A notebook that errors,
    times out or is interrupted (Ctrl-C or SIGTERM, see :func:`_signals_stop_the_run`: the record
    is written, then the KeyboardInterrupt is raised again) leaves the earlier outputs as they were
    and writes ``NN_name.failed.ipynb`` (the cells after the one that stopped it marked not run,
    papermill status 'pending', and a banner cell at the top saying where it stopped), ``.failed.html``, ``.failed.json`` and, when the kernel wrote
    any, its log ``.failed.kernel.log``."""
    import papermill as pm  # deferred: only running notebooks needs papermill
    from nbclient.exceptions import CellTimeoutError  # deferred: only running notebooks needs nbclient

    out_dir.mkdir(parents=True, exist_ok=True)
    params = check_parameters(path)
    result = out_dir / f".{path.stem}.findings.{os.getpid()}.json"
    log_path = out_dir / f".{path.stem}.kernel.{os.getpid()}.log"
    kw = {"quick": bool(quick), "result_path": str(result.resolve())}
    if "seed" in params:
        kw["seed"] = 0
    rec = {"notebook": path.name, "quick": bool(quick), "started": _now(), "pagesim": code_version()}
    _slice_kernel_polls()
    engine = _engine()
    t = time.perf_counter()
    nb = None
    try:
        with open(log_path, "wb") as log:
            for attempt in (1, 2):
                kept = []
                try:
                    pm.execute_notebook(
                        str(path),
                        None,
                        parameters=kw,
                        engine_name=engine,
                        kernel_name=KERNEL,
                        progress_bar=False,
                        cwd=str(path.parent),
                        log_output=False,
                        execution_timeout=CELL_TIMEOUT,
                        keep=kept,
                        kernel_manager_class=_kernel_manager(log),
                    )
                    rec["status"] = "ok"
                    break
                except pm.PapermillExecutionError as e:
                    rec["status"] = "error"
                    rec["error"] = f"cell {_source_index(kept[0], e.cell_index) if kept else e.cell_index} (execution {e.exec_count}): {e.ename}: {e.evalue}"
                    break
                except CellTimeoutError as e:
                    # Rarely the client never hears that a cell finished although the kernel is idle (seen
                    # here about once in 50 runs on a loaded machine: both processes waiting in epoll; the
                    # hang papermill's tracker reports as #711; the sliced waits of sliced_get_msg should find
                    # such a reply within a second). A cell of ours takes seconds, so one that runs past
                    # CELL_TIMEOUT is such a hang: run the notebook once more, and say so.
                    rec["status"] = "error"
                    rec["error"] = f"a cell ran past {CELL_TIMEOUT} s: {str(e).splitlines()[0] if str(e) else type(e).__name__}"
                    rec["retried"] = f"attempt {attempt} timed out after {CELL_TIMEOUT} s"
                    print(f"  {path.name}: a cell ran past {CELL_TIMEOUT} s ({'running the notebook once more' if attempt == 1 else 'giving up'})", flush=True)
                    result.unlink(missing_ok=True)
                    if kept:
                        where = _mark_stopped(kept[0], f"it ran past {CELL_TIMEOUT} s")
                        rec["error"] = rec["error"].replace(" s: ", f" s ({where}): ", 1)
                finally:
                    nb = kept[0] if kept else None
        rec["seconds"] = round(time.perf_counter() - t, 1)
        if result.exists():
            found = json.loads(result.read_text(encoding="utf-8"))
            found.pop("notebook", None)  # the record names the notebook file that ran
            rec.update(found)
        elif rec["status"] == "ok":
            rec["status"] = "error"
            rec["error"] = "the notebook wrote no findings (its last cell must call Findings.save(result_path))"
        _save(rec, nb, out_dir, path.stem, log_path)
    except KeyboardInterrupt as e:
        why = getattr(e, "why", "interrupted (Ctrl-C)")  # a Stopped says which signal
        if "seconds" in rec:  # the notebook had run: stopped while its outputs were written
            rec["error"] = f"{why} while its outputs were written"
        else:
            rec["seconds"] = round(time.perf_counter() - t, 1)
            rec["error"] = why
            if nb is not None:
                where = _mark_stopped(nb, why)
                rec["error"] = f"{why} {'in ' if where.startswith('cell') else ''}{where}"
        rec["status"] = "interrupted"
        rec.pop("findings", None)
        _save(rec, nb, out_dir, path.stem, log_path)
        raise
    finally:
        result.unlink(missing_ok=True)
        log_path.unlink(missing_ok=True)
    return rec


FAILED_SUFFIXES = (".failed.ipynb", ".failed.html", ".failed.json", ".failed.kernel.log")


def _save(rec: dict, nb, out_dir: Path, stem: str, log_path: Path) -> None:
    """Write the run's executed notebook, its HTML copy and its record, all or none (see
    :func:`execute` for which names)."""
    import nbformat  # deferred: only running notebooks needs nbformat

    base = stem if rec["status"] == "ok" else f"{stem}.failed"
    files = {}
    if nb is not None:
        rec["output"] = f"{base}.ipynb"
        files[out_dir / f"{base}.ipynb"] = nbformat.writes(nb)
        files[out_dir / f"{base}.html"] = _html(nb)
    if rec["status"] != "ok" and log_path.is_file() and log_path.stat().st_size:
        files[out_dir / f"{base}.kernel.log"] = log_path.read_bytes()
    files[out_dir / f"{base}.json"] = json.dumps(rec, indent=1)
    write_atomic(files, f"the outputs of {stem}")
    if rec["status"] == "ok":
        for suffix in FAILED_SUFFIXES:
            (out_dir / f"{stem}{suffix}").unlink(missing_ok=True)


def _source_index(nb, idx: int) -> int:
    """The index in the committed notebook of cell ``idx`` of the executed notebook ``nb`` (papermill
    inserts its injected-parameters cell into the executed copy)."""
    # papermill also adds its error banners (markdown cells tagged papermill-error-cell-tag) after the run,
    # while idx counts the cells that ran: leave the banners out before finding the injected cell
    cells = [c for c in nb.cells if "papermill-error-cell-tag" not in c.metadata.get("tags", [])]
    inj = [i for i, c in enumerate(cells) if "injected-parameters" in c.metadata.get("tags", [])]
    return idx - 1 if inj and idx > inj[0] else idx


STOPPED_TAG = "pagesim-run-stopped"


def _mark_stopped(nb, why: str) -> str:
    """Mark a notebook whose run was stopped (Ctrl-C, a timeout) in the middle of a cell: papermill
    then records that cell and every later one as 'completed'. The stopping cell (the last that
    started) becomes 'failed', the cells after it 'pending' with no end time, and a banner cell at the
    top says where the run stopped and why. Returns where, for messages: "cell N" (its index in the
    committed notebook) or "before its first cell"."""
    import nbformat  # deferred: only running notebooks needs nbformat

    started = [i for i, c in enumerate(nb.cells) if c.metadata.get("papermill", {}).get("start_time")]
    stop = started[-1] if started else -1
    for i, c in enumerate(nb.cells):
        pm_meta = c.metadata.setdefault("papermill", {})
        if i == stop:
            pm_meta.update(status="failed", exception=True)
        elif i > stop:
            pm_meta.update(status="pending", end_time=None, duration=None)
    nb.metadata.setdefault("papermill", {})["exception"] = True
    where = f"cell {_source_index(nb, stop)}" if started else "before its first cell"
    banner = nbformat.v4.new_markdown_cell(
        f'<span style="color:red; font-size:1.5em">**This run stopped {"in " if started else ""}{where}: {why}.** '
        f"The cells after it did not run (papermill status 'pending').</span>"
    )
    banner.metadata["tags"] = [STOPPED_TAG]
    nb.cells.insert(0, banner)
    nb.metadata["pagesim"] = {"stopped": why, "where": where}
    return where


def _html(nb) -> str:
    from nbconvert import HTMLExporter  # deferred: only running notebooks needs nbconvert

    body, _ = HTMLExporter().from_notebook_node(nb)
    return body


def load_records(nb_out: Path, names: list[str]) -> list[dict]:
    """The run records in ``nb_out`` of the notebooks ``names`` (stems), in that order: each one's
    last run without error (``NN_name.json``) and the failed run after it (``NN_name.failed.json``),
    when there are. Files that are not a runner's record (no status or start time) are left out."""
    records = []
    for name in names:
        for suffix in (".json", ".failed.json"):
            p = nb_out / f"{name}{suffix}"
            if not p.is_file():
                continue
            try:
                r = json.loads(p.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if isinstance(r, dict) and "status" in r and "started" in r:
                records.append(r)
    return records


def write_report(out: Path, names: list[str]) -> list[dict]:
    """Rebuild ``report.md`` and ``report.json`` in ``out`` from every record in ``out/notebooks``
    (both files or neither); returns the records."""
    records = load_records(out / "notebooks", names)
    write_atomic({out / "report.md": render(records, names), out / "report.json": json.dumps(records, indent=1)}, "the report")
    return records


def report(records: list[dict], names: list[str] | None = None) -> str:

    return render(records, names)


# what running the notebooks needs beyond the library: the `notebooks` extra of pyproject.toml
NOTEBOOK_MODULES = ("papermill", "nbformat", "nbconvert", "jupyter_client", "ipykernel", "matplotlib", "seaborn", "ipywidgets")


def missing_modules(names=NOTEBOOK_MODULES) -> list[str]:
    """The modules of ``names`` that cannot be imported here."""
    return [n for n in names if importlib.util.find_spec(n) is None]


def main(argv=None) -> int:

    ap = argparse.ArgumentParser(prog="pagesim notebooks", description="execute the notebooks and write the validation report")
    ap.add_argument("--quick", action="store_true", help="small sizes (what CI runs)")
    ap.add_argument("--out", default="build", help="output folder (default build/)")
    ap.add_argument(
        "--save-baseline", action="store_true", help="store this run's verdicts in notebooks/verdicts.json (the baseline a later run must not fall below)"
    )
    ap.add_argument(
        "names",
        nargs="*",
        help="notebooks to run (default: all), each named by the start of its file name, such as 02 or 02_opteron_cscs, matching exactly one; "
        "the others' outputs in the output folder are kept, and the report holds every notebook's latest results",
    )
    args = ap.parse_args(argv)
    missing = missing_modules()
    if missing:
        print(f"pagesim notebooks: error: running the notebooks needs {', '.join(missing)}: pip install 'pagesim[notebooks]'", file=sys.stderr)
        return 2
    every = list_notebooks()
    try:
        nbs = select(every, args.names)
    except ValueError as e:
        print(f"pagesim notebooks: error: {e}", file=sys.stderr)
        return 2
    try:
        out = prepare_out(args.out, notebooks_dir())
    except ValueError as e:
        print(f"pagesim notebooks: error: {e}", file=sys.stderr)
        return 2
    with _signals_stop_the_run():  # SIGTERM too stops the run as Ctrl-C does, with the same clean-up
        return _run(args, out, nbs, [p.stem for p in every])


def _run(args, out: Path, nbs: list[Path], names: list[str]) -> int:
    records = []
    for p in nbs:
        print(f"running {p.name}{' (quick)' if args.quick else ''} ...", flush=True)
        try:
            r = execute(p, out / "notebooks", args.quick)
        except KeyboardInterrupt:
            write_report(out, names)  # the report holds what the folder holds, the interrupted run included
            raise
        records.append(r)
        bad = [x["id"] for x in r.get("findings", []) if x["verdict"] == "contradicted"]
        print(f"  {r['status']} in {r['seconds']} s" + (f": {r['error']}" if r.get("error") else "") + (f"; contradicted: {bad}" if bad else ""), flush=True)
        write_report(out, names)

    folder = load_records(out / "notebooks", names)
    complete, says = coverage(folder, names)
    print(f"report: {out / 'report.md'}; HTML copies in {out / 'notebooks'}")
    print(says)
    print(headline(results(folder), complete))
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
