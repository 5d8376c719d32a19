"""The ``pagesim`` command.

    pagesim machines [--sources] [NAME ...]
    pagesim simulate --machine skylake --workload random --working-set 1G --page-size 4K [--accesses N]
    pagesim simulate --machine skylake --trace FILE [--trace-format FORMAT] --page-size 4K
    pagesim demo
    pagesim host [--size 64M ...] [--offset 0]
    pagesim trace record [-o OUT] [--force] [--data-only] [--limit N] -- CMD [ARG ...]
    pagesim probe [--quick] [--max-size 1G] [--repeats 7]
    pagesim measure [--repeat 3] [--record [FILE]] -- CMD [ARG ...]
    pagesim warm [--generic-only] [--record]
    pagesim exercises build [--out build/exercises] | grade SUBMISSIONS_DIR [--timeout S] [--format canvas|moodle] | samples

Bad input (a bad option value, a missing or malformed trace file) is reported in one line,
``pagesim: error: ...``, on standard error with exit status 2, never a traceback. Integer options
take a whole number written as digits (``1000``, ``1_000``) or in exponent form when exact
(``1e3``); 1.5, 1e-3, nan, inf, 0x10 and 1K are refused, naming the option, the value and the
range allowed. Progress bars go to standard error when it is a terminal (never with --quiet).
"""

from __future__ import annotations

import argparse
import decimal
import json
import re
import signal
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

from ._kernels import _jit
from .core.units import format_size
from .core.version import __version__
from .engine import warm as W
from .engine.export import FolderNotWritable, destination, save
from .engine.simulate import simulate
from .host import measure as MEASURE
from .host.linux import HUGE, check_region, compare_faults, thp_mode, why_not
from .host.probe import measure, table
from .model.costs import summary
from .model.layout import Layout, Region
from .model.machines import machine, machines
from .sources.record import TraceExists, record, recording_output
from .sources.traces import FORMATS as TRACE_FORMATS
from .sources.traces import UnknownTraceFormat, read_trace
from .sources.workloads import MAX_ACCESSES
from .system.memory import PhysicalMemory
from .system.pagecache import file_sizes, internal_fragmentation
from .system.pagetables import TWICHELL_8GB, shared_page_table_table
from .system.pressure import Ram
from .teaching import grading
from .teaching.grading import DEFAULT_TIMEOUT as grading_timeout
from .validation.notebooks import main as notebooks_main

# simulate's parameters that the command line sets with an option of their own, not --param
_OWN_OPTIONS = {
    "machine": "--machine",
    "workload": "--workload",
    "trace": "--trace",
    "working_set": "--working-set",
    "page_size": "--page-size",
    "accesses": "--accesses",
    "seed": "--seed",
    "progress": "--quiet",
}


def _parse_params(items):
    """``--param NAME=VALUE`` items as keywords (a value that reads as an int or a float becomes
    one). A name given twice, or one with an option of its own (``seed``: ``--seed``), is refused."""
    out = {}
    for it in items or []:
        k, eq, v = it.partition("=")
        k = k.strip()
        if not eq or not k or k.startswith("_"):
            raise ValueError(f"--param {it!r} must look like name=value, with a parameter's name (a workload's, or simulate's such as fault_around)")
        own = _OWN_OPTIONS.get(k.replace("-", "_"))
        if own == "--quiet":
            raise ValueError(f"--param {it!r}: progress bars are set by --quiet")
        if own is not None:
            raise ValueError(f"--param {it!r}: {k} has an option of its own: give {own} {v}")
        if k in out:
            raise ValueError(f"--param {k} is given twice ({k}={out[k]!r} and {it!r}): give it once")
        for conv in (int, float):
            try:
                v = conv(v)
                break
            except ValueError:
                continue
        out[k] = v
    return out


def _progress(args) -> bool:
    """Progress bars unless --quiet or standard error is not a terminal (a log file, CI)."""
    return not args.quiet and sys.stderr.isatty()


def cmd_machines(args) -> int:

    names = args.names or machines()
    if args.sources:
        for n in names:
            print(machine(n).describe(sources=True))
            print()
        return 0
    rows = []
    for n in names:
        m = machine(n)
        reach = []
        for p in m.page_sizes:
            r = m.reach(p, "data", programmed=True)  # a programmable TLB (III Cu's T512_1) counted as the OS programs it
            mark = "*" if r != m.reach(p, "data") else ""
            reach.append(f"{format_size(p)}:{format_size(r) if r else '0'}{mark}")
        nassumed = len(m.assumptions)
        rows.append((m.name, m.title, ", ".join(reach), f"{nassumed} assumption{'s' if nassumed != 1 else ''}"))
    w0 = max(len(r[0]) for r in rows)
    w1 = max(len(r[1]) for r in rows)
    w2 = max(len(r[2]) for r in rows)
    print(f"{'preset':<{w0}}  {'processor':<{w1}}  {'data TLB reach per page size (largest level)':<{w2}}  modelling")
    for r in rows:
        print(f"{r[0]:<{w0}}  {r[1]:<{w1}}  {r[2]:<{w2}}  {r[3]}")
    if any("*" in r[2] for r in rows):
        print("* with the programmable TLB programmed to that size (Solaris does so once 8 or more such pages are mapped); unprogrammed it adds nothing")
    print("\nSources (every structure's own source and each modelling assumption: pagesim machines --sources NAME):")
    for n in names:
        m = machine(n)
        srcs = []
        for st in m.structures:
            short = st.source.split(" | what-if")[0]
            short = short if len(short) <= 90 else short[:87] + "..."
            if short not in srcs:
                srcs.append(short)
        print(f"  {m.name}:")
        for x in srcs:
            print(f"      {x}")
    return 0


def cmd_simulate(args) -> int:

    if (args.workload is None) == (args.trace is None):
        raise ValueError("give --workload or --trace (one of them)")
    if args.out is not None:  # checked before anything runs
        if not args.out.endswith((".nc", ".zarr")):
            raise ValueError(f"--out {args.out}: the name must end in .nc (netCDF) or .zarr (a zarr store)")
        try:
            destination(args.out, overwrite=args.force)
        except FileExistsError:
            raise ValueError(f"--out {args.out} exists: add --force to replace it") from None
        except FolderNotWritable as e:
            raise ValueError(f"--out {args.out}: {e.reason}") from None
        except FileNotFoundError:
            parent = Path(args.out).parent
            where = f"{parent} is not a folder" if parent.exists() else f"the folder {parent} does not exist"
            raise ValueError(f"--out {args.out}: {where}") from None
    seed = _whole("--seed", args.seed, 0, SEED_MAX)
    if args.trace is not None:
        if args.param or args.working_set is not None or args.accesses is not None:
            raise ValueError("--trace takes no --param, --working-set or --accesses: the trace fixes them")
        progress = _progress(args)
        try:
            trace = read_trace(args.trace, format=args.trace_format or "auto", progress=progress, cache=args.trace_cache)
        except UnknownTraceFormat as e:
            raise ValueError(f"{e.reason}: give --trace-format, one of {', '.join(TRACE_FORMATS)}") from None
        ds = simulate(args.machine, trace, page_size=args.page_size, seed=seed, progress=progress)
        return _report(ds, args)
    if args.trace_format is not None:
        raise ValueError("--trace-format goes with --trace (the format of the trace file), not with --workload")
    params = _parse_params(args.param)
    if args.working_set is not None:
        params["working_set"] = args.working_set
    if args.accesses is not None:
        params["accesses"] = _whole("--accesses", args.accesses, 1, MAX_ACCESSES)
    ds = simulate(args.machine, args.workload, page_size=args.page_size, seed=seed, progress=_progress(args), **params)
    return _report(ds, args)


def _report(ds, args) -> int:
    """Print the summary of ``ds``, and save it to ``--out`` when given."""
    print(summary(ds))
    if args.out is not None:
        print(f"saved: {save(ds, args.out, overwrite=args.force)}")
    return 0


def cmd_demo(args) -> int:
    """A short demonstration: the documents' exact counts, reproduced."""
    failures = 0

    def check(what, got, want):
        nonlocal failures
        ok = got == want
        failures += not ok
        print(f"  {'ok  ' if ok else 'FAIL'} {what}: simulation {got}, document {want}")

    print("pagesim demonstration: exact counts from the source documents\n")
    p5 = machine("power5+")
    check("POWER5+ TLB reach with 4K pages, 2048 entries (000_1774b52266f446e5.txt, Introduction)", format_size(p5.reach("4K", structure="TLB")), "8M")
    check("... with 64K pages: 16 times more", p5.reach("64K", structure="TLB") // p5.reach("4K", structure="TLB"), 16)
    for page, want in (("4K", 16), ("64K", 1)):
        ds = simulate("power6", "touch", size="64K", pattern="memset", page_size=page)
        check(f"64 KiB touched with {page} pages on POWER6: page faults (000_..., Page Fault Handling)", int(ds["faults"].sum()), want)
    for page, want in (("64K", 256), ("16M", 1)):
        for pattern in ("memset", "random"):
            ds = simulate("power8", "touch", size="16M", pattern=pattern, page_size=page, seed=1)
            check(f"16 MiB {pattern} touch with {page} pages on POWER8: faults (003_e083a135b5a1afda.txt, §VII)", int(ds["faults"].sum()), want)
    k8 = machine("opteron-k8")
    check("Opteron 2M pages: TLB entries overall (001_ec4ce787d7978bc9.txt, §3)", sum(s.entries for s in k8.chain("data", 2 << 20)), 8)
    print("\nA random walk over 64 MiB on the Opteron, 4K vs 2M pages (the CSCS trade-off):")
    for page in ("4K", "2M"):
        ds = simulate("opteron-k8", "random", working_set="64M", accesses=200_000, page_size=page, seed=1)
        trans = float(ds["cycles"].sel(component=["tlb_hit_latency", "walk", "slb_miss"]).sum())
        print(
            f"  {page}: walks {int(ds['walks'].sum()):,} of 200,000 accesses, walk references {int(ds['walk_refs'].sum()):,}, "
            f"modelled translation cycles per access {trans / 200_000:.1f}"
        )
    print("\nThe Solaris MPSS heap layout, as pmap -sx shows it (002_7166aff63bc805c7.txt):")

    lay = Layout((Region(0x22000, 3960 * 1024, "8K", "[ heap ]"), Region(0x400000, 128 << 20, "4M", "[ heap ]")))
    print(lay.pmap(title="2953:   ./testprog (simulated)"))
    _demo_os_side(check)
    print(f"\n{failures} of the checks failed" if failures else "\nall checks hold")
    return 1 if failures else 0


def _demo_os_side(check) -> None:
    """The OS side: huge pages on fragmented memory, fault-around waste, page-table memory,
    memory pressure, small files. Its checks go through ``check``, which counts failures."""
    print("\nThe OS side")
    thp = Layout((Region(1 << 32, 16 << 20, "16M", "[ anon ]", policy="thp"),))
    ideal = PhysicalMemory("4G", frame="64K")
    stressed = ideal.fragment(0.95, placement="scattered", seed=1)
    for label, mem in (("ideal", ideal), ("95% held by scattered pages", stressed)):
        ds = simulate("power8", "touch", size="16M", pattern="memset", layout=thp, memory=mem)
        back = sorted({r["page_size"] for r in json.loads(ds.attrs["layout"])})
        print(f"  POWER8, 16 MiB with THP, memory {label}: backed by {', '.join(map(format_size, back))} pages, faults {int(ds['faults'].sum())}")
        check(f"  THP on {label} memory maps a 16M page", (16 << 20) in back, label == "ideal")
    ds = simulate("power6", "touch", size="1M", pattern="random", accesses=8, page_size="4K", fault_around=16, seed=2)
    print(
        f"  POWER6 64 KiB emulation (one fault maps 16 x 4K), 8 random touches of 1 MiB: faults {int(ds['faults'].sum())}, "
        f"prefaulted {int(ds['prefaulted'].sum())}, never touched {int(ds['prefaulted_untouched'].sum())} "
        f"({int(ds['prefault_waste'].sum()) // 1024} KiB held for nothing)"
    )
    t = shared_page_table_table(**TWICHELL_8GB).set_index(["pool_pages", "page_tables"])["MiB"]
    print(
        f"  page tables, {TWICHELL_8GB['processes']} processes sharing a {TWICHELL_8GB['buffer_pool'] >> 20} MiB buffer pool "
        f"(stated parameters, pagesim.system.pagetables.TWICHELL_8GB): 4K pool {t['4K', 'private']:,.0f} -> {t['4K', 'shared']:,.0f} MiB shared; "
        f"2M pool {t['2M', 'private']:,.0f} -> {t['2M', 'shared']:,.0f} MiB (004_b9bff536459e6bfe.txt: 1.65 GB -> 51 MB, 53 -> 37 MB)"
    )
    check("  shared page tables, small pages (MiB, rounded)", (float(round(t["4K", "private"] / 1024, 2)), round(t["4K", "shared"])), (1.65, 51))
    check("  shared page tables, huge pages (MiB, rounded)", (round(t["2M", "private"]), round(t["2M", "shared"])), (53, 37))
    ds = simulate("skylake", "random", working_set="96M", accesses=100_000, ram=Ram("128M"), seed=1)
    print(
        f"  96 MiB random on Skylake with 64 MiB left to it of 128 MiB: major faults {int(ds['major_faults']):,}, "
        f"swap-outs {int(ds['swap_outs']):,}, {float(ds['swap_share']):.0%} of modelled time swapping"
    )
    df = internal_fragmentation(file_sizes("3K", 1), ["4K", "64K"])
    check(
        "  a 3 KB file: unused share of a 4K / 64K page, % (000_..., Internal Fragmentation)",
        (round(df.loc["4K", "unused_share"] * 100), round(df.loc["64K", "unused_share"] * 100)),
        (25, 95),
    )


def cmd_host(args) -> int:
    """This machine's kernel against the simulation: minor faults of a real mmap."""
    sizes = args.size or ["64M"]
    checked = [check_region(size, args.offset) for size in sizes]  # every value before any run
    print(f"transparent huge pages: {thp_mode() or 'not available'}")
    bad = 0
    for size, (n, off) in zip(sizes, checked):
        partial = bool(n % HUGE or off % HUGE)
        for thp in (False, True):
            reason = why_not(thp, partial)
            if reason:
                print(f"  {size} {'THP' if thp else '4K'}: cannot compare here: {reason}")
                continue
            for pattern in ("sequential", "random"):
                r = compare_faults(size, thp=thp, pattern=pattern, offset=args.offset)
                bad += not r.equal
                print(f"  {r}")
    return 1 if bad else 0


SEED_MAX = (1 << 63) - 1  # numpy's default_rng takes seeds in 0..2**63-1 here (pagesim.core.check.check_seed)


def _whole(option: str, value, lo: int, hi: int) -> int:
    """The value of an integer option: a whole number written as digits (``1000``, ``1_000``) or
    in exponent form when it is exact (``1e3``, ``2.5e6``), in ``lo..hi``. Anything else (1.5,
    1e-3, nan, inf, 0x10, 1K, an empty value) is refused naming the option, the value and the
    range. Every integer option of every subcommand is read through here."""
    text = str(value).strip()
    try:
        d = decimal.Decimal(text)
    except decimal.InvalidOperation:
        d = None
    if d is None or not d.is_finite() or d != d.to_integral_value():
        raise ValueError(f"{option} {value!r} must be a whole number in {lo}..{hi} (digits, or an exact exponent form such as 1e3)")
    if not lo <= d <= hi:
        raise ValueError(f"{option} {text} is out of range: allowed {lo}..{hi}")
    return int(d)


def cmd_trace(args) -> int:
    """Record a program's memory trace with valgrind lackey (pagesim.sources.record)."""
    limit = None if args.limit is None else _whole("--limit", args.limit, 1, 1 << 40)
    quiet = subprocess.DEVNULL if args.quiet_program else None
    try:
        rec = record(args.command, out=args.output, data_only=args.data_only, limit=limit, program_output=quiet, force=args.force)
    except TraceExists as e:
        raise ValueError(f"{e.path} exists: give --force to replace it, or -o another file") from None
    print(rec)
    print(f"simulate it: pagesim simulate --machine skylake --trace {rec.path} --page-size 4K")
    return 0


def cmd_measure(args) -> int:
    """A real program with THP off and on, interleaved (pagesim.host.measure); Ctrl-C stops it and
    prints the pairs run so far, exit status 130."""
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        raise ValueError("give the program to run after --: pagesim measure [--repeat N] -- CMD [ARG ...]")
    repeat = _whole("--repeat", args.repeat, 1, 1000)
    out = None if args.show_output else subprocess.DEVNULL

    def progress(i, r):
        print(f"  pair {i + 1}/{repeat}, THP {'on ' if r.thp else 'off'}: {r.seconds:.3f} s, {r.minor_faults:,} minor faults", file=sys.stderr)

    if args.record is not None:  # where the trace goes is checked before anything runs
        try:
            recording_output(command, args.record or None, args.force, name="--record")
        except TraceExists as e:
            raise ValueError(f"{e.path} exists: give --force to replace it, or --record another file") from None
    res = MEASURE.measure(command, repeat=repeat, output=out, progress=None if args.quiet else progress)
    print(res.summary())
    if res.interrupted:
        raise KeyboardInterrupt
    if res.failed:
        some = "every run" if len(res.failed) == len(res.runs) else f"{len(res.failed)} of {len(res.runs)} runs"
        print(f"pagesim: error: the program failed in {some} (above){'; its trace is not recorded' if args.record is not None else ''}", file=sys.stderr)
        return 1
    if args.record is not None:
        try:
            rec = record(command, out=args.record or None, data_only=True, program_output=out, force=args.force)
        except TraceExists as e:
            raise ValueError(f"{e.path} exists: give --force to replace it, or --record another file") from None
        print(rec)
        print(f"simulate it: pagesim simulate --machine skylake --trace {rec.path} --page-size 4K (and --page-size 2M)")
    return 0


def cmd_probe(args) -> int:
    """This machine's translation, measured: pointer-chase latency, 4K pages vs THP (pagesim.host.probe)."""
    res = measure(
        min_size=args.min_size,
        max_size=args.max_size,
        per_octave=_whole("--per-octave", args.per_octave, 1, 8),
        repeats=_whole("--repeats", args.repeats, 1, 101),
        line_max=args.line_max,
        quick=args.quick,
        seed=_whole("--seed", args.seed, 0, SEED_MAX),
        progress=not args.quiet,
    )
    print(table(res))
    return 0


def cmd_warm(args) -> int:
    if args.record:
        return W.record()
    t = time.perf_counter()
    W.warm(specialised=not args.generic_only)
    print(f"pagesim warm: done in {time.perf_counter() - t:.1f} s (cache: {_cache_dir()})")
    return 0


def _cache_dir():

    return _jit.CACHE_DIR if _jit.CACHE_DIR is not None else "none: kernels cannot be cached here"


def cmd_exercises(args) -> int:
    """Instructor's commands (exercises/README.md): build with otter assign, grade with otter's tests."""
    if args.ex_cmd == "build":
        grading.build(args.out or grading.default_build(), masters_dir=args.masters, only=args.only or None, check=not args.no_check)
    elif args.ex_cmd == "grade":
        build = args.build or grading.default_build()
        grading.grade(args.submissions, build, out_csv=args.csv, in_process=args.in_process, timeout=args.timeout, lms_format=args.format)
    else:
        for name, paths in grading.samples(args.build or grading.default_build(), args.out or grading.SAMPLES, only=args.only or None).items():
            print(f"{name}: " + ", ".join(str(p) for p in paths))
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The ``pagesim`` command's parser, every subcommand with its options."""
    ap = argparse.ArgumentParser(prog="pagesim", description="Simulate TLBs, page walks and page faults.")
    ap.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = ap.add_subparsers(dest="cmd", metavar="COMMAND", title="commands")
    m = sub.add_parser("machines", help="list the machine presets with their TLB reach")
    m.add_argument("names", nargs="*", help="presets to show (default: all)")
    m.add_argument("--sources", action="store_true", help="every structure with its source and the modelling assumptions")
    s = sub.add_parser("simulate", help="simulate one workload on one machine and print a summary")
    s.add_argument("--machine", required=True, help="a preset name (see 'pagesim machines')")
    s.add_argument("--workload", help="sequential, strided, stream, random, pointer_chase, blocked_matrix, md, touch")
    s.add_argument(
        "--trace", help="a memory trace file instead of a workload (valgrind lackey, din, hex, pinatrace, drmemtrace's view, perf mem -D, ChampSim; gzip or xz)"
    )
    s.add_argument("--trace-format", choices=TRACE_FORMATS, help="the trace file's format (default: told from its contents)")
    s.add_argument("--out", help="also save the result: a .nc (netCDF) or .zarr file, read back with pagesim.load")
    s.add_argument("--force", action="store_true", help="replace an existing --out file")
    s.add_argument(
        "--trace-cache",
        action="store_true",
        help="keep the decoded accesses beside the trace (NAME.pagesim, 9 bytes an access), so the trace is parsed once, not once a read",
    )
    s.add_argument("--working-set", help="bytes, or a size such as 64M or 1G")
    s.add_argument("--page-size", help="page size for every region (default: the machine's base page)")
    s.add_argument("--accesses", help="number of accesses, a whole number: 1000, 1_000 or 1e3 (workloads with passes repeat to reach it)")
    s.add_argument("--seed", default="0", help="every random choice comes from it: a whole number: 1000, 1_000 or 1e3 in 0..2**63-1 (default 0)")
    s.add_argument(
        "--param",
        action="append",
        metavar="NAME=VALUE",
        help="another workload parameter, e.g. --param stride=4096 (working_set, accesses, seed... have options of their own)",
    )
    s.add_argument("--quiet", action="store_true", help="no progress bars (there are none either when standard error is not a terminal)")
    sub.add_parser("demo", help="a short demonstration: the documents' exact counts, reproduced")
    h = sub.add_parser("host", help="real page faults of an mmap on this Linux machine beside the simulation's")
    h.add_argument("--size", action="append", help="region size, a multiple of 4K such as 3M or 2M+4K; repeat for more (default 64M)")
    h.add_argument("--offset", default="0", help="where the region starts past a 2M boundary, a multiple of 4K below 2M (default 0)")
    t = sub.add_parser("trace", help="record a program's memory trace: pagesim trace record [-o OUT] -- CMD [ARG ...]")
    tsub = t.add_subparsers(dest="trace_cmd", metavar="SUBCOMMAND", title="subcommands")
    tr = tsub.add_parser("record", help="run CMD under valgrind lackey and stream its memory trace into a gzip file")
    tr.add_argument("-o", "--output", help="the trace file (default: <program>-lackey.txt.gz; .gz compresses)")
    tr.add_argument("--data-only", action="store_true", help="drop instruction fetches (about 3/4 of a lackey trace)")
    tr.add_argument("--limit", help="stop the program after this many accesses (a whole number: 1000, 1_000 or 1e3)")
    tr.add_argument("--quiet-program", action="store_true", help="discard the program's own output")
    tr.add_argument("--force", action="store_true", help="replace the trace file if it exists (it is replaced only once the new trace is complete)")
    tr.add_argument("command", nargs=argparse.REMAINDER, help="the command to trace, after --")
    me = sub.add_parser("measure", help="run a program with transparent huge pages off and on, interleaved: time ratio, faults, AnonHugePages")
    me.add_argument("--repeat", default="3", help="pairs of runs, off then on (default 3)")
    me.add_argument("--show-output", action="store_true", help="let the program's own output through (default: discarded)")
    me.add_argument("--quiet", action="store_true", help="no line per run")
    me.add_argument(
        "--record",
        nargs="?",
        const="",
        default=None,
        metavar="FILE",
        help="then record its data accesses with valgrind lackey (default file: <program>-lackey.txt.gz)",
    )
    me.add_argument("--force", action="store_true", help="with --record: replace the trace file if it exists")
    me.add_argument("command", nargs=argparse.REMAINDER, help="the program and its arguments, after --")
    pr = sub.add_parser("probe", help="measure this machine: pointer-chase latency over working sets, 4K pages vs THP, and the knees")
    pr.add_argument("--min-size", default="16K", help="smallest working set (default 16K)")
    pr.add_argument("--max-size", default="1G", help="largest working set (default 1G; capped to half the available memory)")
    pr.add_argument("--per-octave", default="2", help="working sets per doubling, 1..8 (default 2)")
    pr.add_argument("--repeats", default="7", help="timed runs per working set and page kind, 1..101 (default 7); medians are reported")
    pr.add_argument("--line-max", default="64M", help="largest working set of the line-stride (cache) curve (default 64M)")
    pr.add_argument("--quick", action="store_true", help="at most 64M, 5 repeats (about 10 seconds)")
    pr.add_argument("--seed", default="0", help="a whole number: 1000, 1_000 or 1e3 in 0..2**63-1 (default 0)")
    pr.add_argument("--quiet", action="store_true", help="no progress bar")
    wa = sub.add_parser("warm", help="compile the kernels the notebooks use into the cache (make, Binder and CI run it)")
    wa.add_argument("--generic-only", action="store_true", help="skip the presets' specialised kernels and the notebooks' other 9 (3-6 s of CPU each)")
    wa.add_argument("--record", action="store_true", help="maintainers: run every notebook, list the kernels they load in pagesim/data/kernels.json")

    ex = sub.add_parser("exercises", help="instructor: build the assignments (otter assign), grade a folder of submissions")
    exsub = ex.add_subparsers(dest="ex_cmd", metavar="SUBCOMMAND", title="subcommands")
    eb = exsub.add_parser("build", help="student and autograder versions of every master in exercises/masters/")
    eb.add_argument("--out", help="output folder (default: the checkout's build/exercises, wherever the command runs; not committed)")
    eb.add_argument("--masters", help="folder of master notebooks (default: exercises/masters/)")
    eb.add_argument("--no-check", action="store_true", help="skip running the solutions against their tests")
    eb.add_argument("only", nargs="*", help="assignments to build, e.g. 00 or 00_basics (default: all)")
    eg = exsub.add_parser("grade", help="grade every notebook in SUBMISSIONS_DIR into a CSV of scores per question")
    eg.add_argument("submissions", help="folder of submitted notebooks (searched recursively)")
    eg.add_argument("--build", help="where 'pagesim exercises build' wrote (default: the checkout's build/exercises, wherever the command runs)")
    eg.add_argument("--csv", help="the CSV to write (default SUBMISSIONS_DIR/grades.csv)")
    eg.add_argument(
        "--timeout",
        default=grading_timeout,
        help=f"seconds a submission's cells may run before its processes are killed and it is not graded (default {grading_timeout:g})",
    )
    eg.add_argument("--in-process", action="store_true", help="trusted notebooks only: run them in this process instead of one process each")
    eg.add_argument(
        "--format",
        choices=("canvas", "moodle"),
        help="also write the gradebook import file of this LMS beside the CSV (NAME-canvas.csv, NAME-moodle.csv)",
    )
    es = exsub.add_parser("samples", help="write sample submissions (solution, blank, wrong) from a build")
    es.add_argument("--build", help="where 'pagesim exercises build' wrote (default: the checkout's build/exercises, wherever the command runs)")
    es.add_argument("--out", help="output folder (default: the checkout's exercises/samples)")
    es.add_argument("only", nargs="*", help="assignments (default: all built)")
    sub.add_parser("notebooks", help="execute every notebook with papermill and write the validation report (--quick, --out DIR)", add_help=False)
    return ap


def main(argv=None) -> int:
    """The command; Ctrl-C anywhere in it (or SIGTERM during ``pagesim notebooks``) is one line,
    ``pagesim: interrupted``, and exit status 130 (143)."""
    try:
        return _main(argv)
    except KeyboardInterrupt as e:
        # a further Ctrl-C while it says so is dropped (no traceback); the handler is put back after,
        # as main() may run inside a process that goes on (a notebook's kernel)
        old = signal.signal(signal.SIGINT, signal.SIG_IGN) if threading.current_thread() is threading.main_thread() else None
        try:
            if not getattr(e, "said", False):  # pagesim notebooks says it when the signal arrives
                print("pagesim: interrupted", file=sys.stderr)
        finally:
            if old is not None:
                signal.signal(signal.SIGINT, old)
        return 128 + getattr(e, "signum", signal.SIGINT)  # 130 for Ctrl-C, 143 for SIGTERM


def _main(argv=None) -> int:
    ap = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    shown = warnings.formatwarning
    warnings.formatwarning = _format_warning  # this command's warnings on one line; restored on return
    try:
        if argv[:1] == ["notebooks"]:
            return notebooks_main(argv[1:])
        args = _parse(ap, _attach_negative_values(ap, argv))
        return {
            "machines": cmd_machines,
            "simulate": cmd_simulate,
            "demo": cmd_demo,
            "host": cmd_host,
            "trace": cmd_trace,
            "probe": cmd_probe,
            "measure": cmd_measure,
            "warm": cmd_warm,
            "exercises": cmd_exercises,
        }[args.cmd](args)
    except USER_ERRORS as e:
        print(f"pagesim: error: {_one_line(e)}", file=sys.stderr)
        return 2
    finally:
        warnings.formatwarning = shown


def _version() -> str:
    """This copy's version (:mod:`pagesim.core.version`: it names the commit)."""
    return __version__


def _parse(ap: argparse.ArgumentParser, argv: list) -> argparse.Namespace:
    """``argv`` parsed. An option the subcommand named does not have is reported with that
    subcommand's usage and name (``pagesim simulate: error: unrecognized arguments: ...``); a
    command without its subcommand is a ValueError listing the subcommands."""
    args, extra = ap.parse_known_args(argv)
    parser, missing = ap, None
    while missing is None:  # down the subcommands named
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs:
            break
        chosen = getattr(args, subs[0].dest)
        if chosen is None:
            missing = subs[0]
        else:
            parser = subs[0].choices[chosen]
    if extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if missing is not None:
        what = "a command" if parser is ap else "a subcommand"
        raise ValueError(f"{parser.prog} needs {what}: {', '.join(missing.choices)} ({parser.prog} --help says what each does)")
    return args


def _format_warning(message, category, filename, lineno, line=None) -> str:
    """A warning as the command prints it: ``pagesim: warning: <message>`` on one line, without
    the source line Python's own format shows."""
    return f"pagesim: warning: {_one_line(message)}\n"


_NEGATIVE = re.compile(r"^-\d")  # -1M, -5, -0.5: a value, never one of pagesim's options


def _attach_negative_values(ap: argparse.ArgumentParser, argv: list) -> list:
    """``argv`` with each value that starts with '-' and a digit, given after an option that takes
    a value (``--working-set -1M``), attached to it (``--working-set=-1M``): argparse would read
    it as an option ("expected one argument"); attached, it reaches the option's own check,
    which names the range. Only the options of the subcommand named are considered, and nothing
    after ``--`` or after the command of ``pagesim trace record`` is changed."""
    parser, i = ap, 0
    while i < len(argv):  # the subcommands named: the parser whose options follow
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs or argv[i] not in subs[0].choices:
            break
        parser, i = subs[0].choices[argv[i]], i + 1
    takes_value = {s for a in parser._actions if a.option_strings and a.nargs != 0 for s in a.option_strings}
    rest = any(a.nargs == argparse.REMAINDER for a in parser._actions)
    out = list(argv[:i])
    while i < len(argv):
        t = argv[i]
        if t == "--" or (rest and not t.startswith("-")):
            return out + argv[i:]
        if t in takes_value and i + 1 < len(argv):
            v = argv[i + 1]
            if _NEGATIVE.match(v):
                out.append(f"{t}={v}" if t.startswith("--") else t + v)  # -o-1 is -o with the value -1
            else:
                out += [t, v]  # an option's value is never itself an option
            i += 2
            continue
        out.append(t)
        i += 1
    return out


# What bad input raises: pagesim's own checks (ValueError, TypeError; TraceFormatError is a
# ValueError), a file that is missing or unreadable (OSError, which includes gzip.BadGzipFile),
# compressed data that ends early (EOFError), and RuntimeError.
USER_ERRORS = (ValueError, TypeError, OSError, EOFError, RuntimeError)


def _one_line(e: BaseException) -> str:
    """The message on one line (spaces inside a line kept: lackey's 'I  addr' has two)."""
    msg = " ".join(part.strip() for part in str(e).splitlines() if part.strip())
    return msg or type(e).__name__


if __name__ == "__main__":
    sys.exit(main())
