"""How long each notebook runs, measured, and written where students read it: the first cell of every
notebook and the table of notebooks/START_HERE.ipynb.

    python benchmarks/notebook_times.py --measure   # runs every notebook four times: quick and full, each
                                                    # alone with an empty kernel cache (cold), then all of them
                                                    # again with the caches they filled (warm); ~30 min
    python benchmarks/notebook_times.py --measure 06  # the named notebooks only, kept beside the others' times
    python benchmarks/notebook_times.py --write     # rewrites the first cells and START_HERE from build/times.json

Times are wall-clock seconds of `pagesim notebooks` per notebook (kernel start included) on whatever machine
runs this: measure on a quiet machine, and again after a change that makes a notebook faster or slower.
A cold run is a notebook run first on a fresh install without `pagesim warm`: each notebook gets an empty
kernel cache of its own, so it compiles every kernel it uses, not only those the notebooks before it left
uncompiled. A warm run is never slower than a cold one except for interference; the full-mode warm figure
shown is therefore the lower of the two full runs.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
from nbformat.v4 import new_markdown_cell, new_notebook

ROOT = Path(__file__).resolve().parents[1]
NB = ROOT / "notebooks"
TIMES = ROOT / "build" / "times.json"
RUNS = {"quick_cold": ("--quick", True), "quick_warm": ("--quick", False), "full_cold": (None, True), "full_warm": (None, False)}


def measure(names: list[str]) -> dict:
    """Each notebook of ``names`` (all when empty) quick and full, cold then warm (module text), merged into
    the times kept in build/times.json."""
    nbs = [p.name[:2] for p in sorted(NB.glob("[0-9][0-9]_*.ipynb")) if not names or p.name[:2] in names]
    out: dict[str, dict[str, float]] = json.loads(TIMES.read_text()) if TIMES.exists() else {}
    with tempfile.TemporaryDirectory() as tmp:
        for run, (flag, fresh) in RUNS.items():
            mode = run.split("_")[0]
            for nb in nbs:
                cache = Path(tmp) / f"cache_{mode}_{nb}"  # the notebook's own: a cold run starts it empty
                if fresh:
                    cache.mkdir()
                dest = Path(tmp) / run / nb
                cmd = [sys.executable, "-m", "pagesim", "notebooks", nb, "--out", str(dest)] + ([flag] if flag else [])
                print(run, nb, "...", flush=True)
                subprocess.run(cmd, cwd=ROOT, env={**os.environ, "PAGESIM_CACHE_DIR": str(cache)}, check=False)
                for rec in json.loads((dest / "report.json").read_text()):
                    if rec["notebook"][:2] == nb:
                        out.setdefault(nb, {})[run] = rec["seconds"]
    TIMES.parent.mkdir(parents=True, exist_ok=True)
    TIMES.write_text(json.dumps(out, indent=1))
    return out


def shown(times: dict, nb: str, run: str) -> str:
    t = times.get(nb, {})
    v = min(t[run], t["full_cold"]) if run == "full_warm" and run in t and "full_cold" in t else t.get(run)
    if v is None:
        return "?"
    return f"{v:.0f} s" if v < 90 else f"{v / 60:.1f} min"


WHAT = {
    "00": "splits an address into page number and offset, follows page walks on x86-64, POWER and SPARC, compares the TLB reach of 14 processors, and runs a first simulation of walks against working set",
    "01": "reproduces IBM's evaluation of 64 KB pages on POWER: TLB coverage, data-ERAT misses of Linpack- and SPECjbb-like runs, page faults and prefaulting, prefetch restarts, internal fragmentation",
    "02": "reproduces the CSCS study of 2 MB pages on the Opteron (Cray XT3): why large pages lose for a strided solver and molecular dynamics and win for STREAM, a map of where each page size wins, strong scaling, and the paper's counterfactual",
    "03": "reproduces the Solaris MPSS page: trapstat before and after a 4M heap, which UltraSPARC gains, fragmentation and the kernel cage, large pages for program text",
    "04": "reproduces the POWER8 memory-mapping measurements: page faults and dTLB misses of 64K, hugetlb and THP pages, memory pressure and compaction, kernel work; then the same experiment on your own Linux kernel",
    "05": "reproduces the shared-page-table measurements of a database (linux-mm, 2006): page-table memory with private and shared tables, what the freed memory buys, walks and cache misses",
    "06": "analyses a memory trace of a real program (a shipped one, or one you record with valgrind): footprint for every page size, reuse, every preset and page size, and a page-size recommendation",
    "07": "measures this machine's TLB reach with a pointer-chase latency probe, with 4 KiB pages and transparent huge pages, and sets it beside the presets and the simulator",
}
PROGRESS = {k: " In full mode its long cells show a progress bar." for k in ("00", "02", "06", "07")}
EXTRA = {
    "06": " Recording your own program needs valgrind (installed on Binder).",
    "07": " It measures real latencies, so its numbers depend on the machine and on what else runs on it.",
}


ABOUT = """
> **About this notebook.** It {what}.{extra}
>
> **How to run it:** menu *Run → Run All Cells* (or *Kernel → Restart Kernel and Run All Cells*); the cells depend on each other, top to bottom.
> Cells marked *Predict* ask for your answer first: write it in place of `None` and run the cell again to compare.
>
> **How long:** measured on a 2-core machine shared with other work (a busier machine takes up to twice as long), for the whole notebook including the kernel start:
> full mode (`quick = False`, the default) {full_warm} with pagesim's kernels already compiled, {full_cold} on the very first run (compiling);
> quick mode (`quick = True` in the parameters cell, smaller sizes) {quick_warm}, or {quick_cold} the first time.{progress}
"""

rows = [
    (
        "00_basics.ipynb",
        "Basics: pages, TLBs, page walks",
        "page number and offset, radix walks, POWER's hashed table, SPARC's TSB, TLB reach of 14 processors; a translation explorer",
        "none: start here",
    ),
    (
        "01_power_64k.ipynb",
        "64 KB pages on POWER (IBM)",
        "TLB coverage, data-ERAT misses, faults and prefaulting, prefetch restarts, internal fragmentation",
        "00",
    ),
    (
        "02_opteron_cscs.ipynb",
        "2 MB pages on the Opteron (CSCS, Cray XT3)",
        "when large pages lose (few TLB entries, set conflicts) and when they win; strong scaling",
        "00, 01",
    ),
    (
        "03_solaris_mpss.ipynb",
        "Multiple page sizes on Solaris (UltraSPARC)",
        "trapstat, TLB designs that do or do not help, fragmentation and the kernel cage, large text pages",
        "00",
    ),
    (
        "04_power8_mmap.ipynb",
        "Linux memory mapping on POWER8",
        "page faults of 64K, hugetlb and THP pages; memory pressure and compaction; your own kernel's faults",
        "00",
    ),
    (
        "05_shared_page_tables.ipynb",
        "Shared page tables for a database (linux-mm)",
        "page-table memory of many processes, what sharing frees, walks and cache misses",
        "00, 04",
    ),
    (
        "06_your_program.ipynb",
        "Your program: which page size would help it?",
        "a real program's memory trace on every preset and page size, and a recommendation",
        "00-02",
    ),
    ("07_your_machine.ipynb", "Your machine: how far does its TLB reach?", "a latency probe of this machine's TLBs, with 4 KiB pages and huge pages", "00"),
]


def write_first_cells(T: dict) -> None:
    for path in sorted(NB.glob("[0-9][0-9]_*.ipynb")):
        k = path.name[:2]
        if k not in T:  # not measured: its cell keeps the times it has
            continue
        src = ABOUT.format(what=WHAT[k], extra=EXTRA.get(k, ""), progress=PROGRESS.get(k, ""), **{run: shown(T, k, run) for run in RUNS}).strip("\n")
        nb = nbformat.read(path, as_version=4)
        if nb.cells[0].get("id") == "about":
            # only the times change: the rest of the cell is the notebook's own (its glossary links)
            mark = "> **How long:**"
            old = nb.cells[0].source
            nb.cells[0].source = old.partition(mark)[0] + mark + src.partition(mark)[2] if mark in old else src
        else:
            cell = new_markdown_cell(src)
            cell.id = "about"
            nb.cells.insert(0, cell)
        nbformat.write(nb, path)


def start_cells(T: dict) -> list:
    table = "| notebook | what you learn | read first | full mode | quick mode |\n|---|---|---|---|---|\n" + "\n".join(
        f"| [{title}]({f}) | {what} | {pre} | {shown(T, f[:2], 'full_warm')} | {shown(T, f[:2], 'quick_warm')} |" for f, title, what, pre in rows
    )
    slowest = max((nb for nb in T if "full_cold" in T[nb]), key=lambda nb: T[nb]["full_cold"], default="02")  # the longest first run
    return [
        new_markdown_cell("""# Start here: page sizes, TLBs, page walks and page faults

This collection teaches how a processor translates virtual addresses (TLBs, page walks, page faults), and why
the **page size** matters, by reproducing five real measurements from IBM, CSCS, Sun and Linux developers with
a simulator, `pagesim`. Every number in the notebooks is computed while you watch, and every figure of a
document is set beside the simulation's, with a verdict saying how close they are.

**Where to start:** [00 · Basics](00_basics.ipynb). Then any of 01-05, each of which reproduces one document;
06 and 07 apply the same tools to your own program and your own machine."""),
        new_markdown_cell(
            "## The notebooks\n\n"
            + table
            + """

Times are for the whole notebook on a 2-core machine shared with other work, once pagesim's kernels are
compiled (on Binder they are compiled when the image is built). The very first run on a fresh install takes
longer, up to """
            + shown(T, slowest, "full_cold")
            + f""" for {slowest}, while the kernels compile. Each notebook's first cell gives its own times."""
        ),
        new_markdown_cell("""## How to work through a notebook

1. Open it and use **Run → Run All Cells** (or *Kernel → Restart Kernel and Run All Cells*). The cells build on
   each other from top to bottom; running one out of order can fail on a name defined above it.
2. **Predict before you look.** Cells that start with `# Predict` hold variables set to `None`: write your
   answer (a number, or a size such as `"8M"`), run the cell again, and `check_answer` says whether you were right
   and how to work it out. Nothing is graded.
3. **Change the parameters.** The second code cell of each notebook holds its parameters; `quick = True` runs
   smaller sizes in a fraction of the time.
4. **Try this.** Each notebook ends with questions whose code runs as written in a new cell; worked answers
   are in `exercises/`.
5. **Document vs simulation.** The table at the end of each notebook lists every figure of the document with
   the simulation's value and a verdict: *exact*, *within* a stated band, *direction* (same sign only),
   *contradicted*, *not reproduced* (with the reason), *arithmetic* (a worked calculation, not evidence) or
   *calibrated* (a parameter was fitted to it)."""),
        new_markdown_cell("""## For instructors and developers

- Assignments with autograding: `exercises/README.md`.
- Running every notebook headlessly and the validation report: `make run` (the README's quick start);
  notes on the notebooks' structure for developers: [`README.md`](README.md) in this folder."""),
    ]


def write_start_here(T: dict) -> None:
    """Rewrite START_HERE's table of notebooks with these times; every other cell of an existing
    START_HERE is left as it is (cells were added there by hand, e.g. the setup check)."""
    path = NB / "START_HERE.ipynb"
    if path.exists():
        nb = nbformat.read(path, as_version=4)
        table = next(c for c in start_cells(T) if c.source.startswith("## The notebooks"))
        cells = [c for c in nb.cells if c.cell_type == "markdown" and c.source.startswith("## The notebooks")]
        if len(cells) != 1:
            raise SystemExit(f"{path}: expected one '## The notebooks' cell, found {len(cells)}")
        cells[0].source = table.source
        nbformat.validate(nb)
        nbformat.write(nb, path)
        return
    nb = new_notebook(cells=start_cells(T))
    for i, c in enumerate(nb.cells):
        c.id = f"start-{i}"
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.validate(nb)
    nbformat.write(nb, NB / "START_HERE.ipynb")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--measure", action="store_true", help="run every notebook quick/full, cold/warm; write build/times.json")
    ap.add_argument("notebooks", nargs="*", help="with --measure: the notebooks to measure (such as 06; default all), kept beside the others' times")
    ap.add_argument("--write", action="store_true", help="write the times into the first cells and START_HERE")
    a = ap.parse_args()
    if a.notebooks and not a.measure:
        ap.error("name notebooks with --measure")
    times = measure(a.notebooks) if a.measure else (json.loads(TIMES.read_text()) if TIMES.exists() else None)
    if times is None:
        ap.error(f"no {TIMES}: run with --measure first")
    print(json.dumps(times, indent=1))
    if a.write:
        write_first_cells(times)
        missing = [f[:2] for f, *_ in rows if f[:2] not in times]
        if missing:
            print(f"START_HERE left as it is: no times for {', '.join(missing)} (measure them first)")
        else:
            write_start_here(times)
    return 0


if __name__ == "__main__":
    sys.exit(main())
