"""Reading traces, ns per access, beside the simulation's own cost per access: each format
pagesim reads, written from one synthetic program (the writers of tests/sources/test_trace_formats.py
and tests/sources/test_traces.py), then the parser alone over the file's blocks already read (and
decompressed) into memory, read_trace (the check pass, which reads and parses the file), one
stream of its chunks parsing the file again (what a simulation reads when the accesses are not kept
in the process), one stream from the accesses read_trace kept, the same check and stream with the
parse-once cache file (``cache=True``: the check that writes it, then a stream from it),
decompression alone (gzip and xz), and ``simulate`` of the same accesses from memory: of the
addresses alone (every access a data access, the fastest kernel), and of the trace as read (with
its instruction fetches, where the format has them: what a simulation of the file runs).

    python benchmarks/bench_trace_parse.py [--instructions 200000] [--repeat 3]

CPU time (time.process_time), ``--repeat`` rounds with the formats interleaved; the table shows the
best round and the spread (worst - best) in ns per access, and each figure over the simulation's
of the addresses alone; the last column is the parser alone and the stream over the simulation of
the trace as read.
"""

from __future__ import annotations

import argparse
import gzip
import lzma
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import pagesim
import pagesim.sources.traces as T

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "sources"))
from test_trace_formats import champsim_bytes, drmemtrace_text, perf_text, pinatrace_text, program  # noqa: E402


def lackey_text(prog) -> str:
    lines = ["==1== Lackey"]
    for ip, loads, stores in prog:
        lines.append(f"I  {ip:08x},4")
        lines += [f" L {a:08x},8" for a in loads] + [f" S {a:08x},8" for a in stores]
    return "\n".join(lines) + "\n"


def din_text(prog) -> str:
    return "\n".join(f"2 {ip:x}\n" + "".join(f"0 {a:x}\n" for a in loads) + "".join(f"1 {a:x}\n" for a in stores) for ip, loads, stores in prog)


def hex_text(prog) -> str:
    return "".join(f"0x{a:x}\n" for _, loads, stores in prog for a in loads + stores)


WRITERS = {
    "lackey": lackey_text,
    "din": din_text,
    "hex": hex_text,
    "pinatrace": pinatrace_text,
    "drmemtrace": drmemtrace_text,
    "perf": perf_text,
    "perf -x ,": lambda prog: perf_text(prog, ","),
}


def files(prog, d: Path) -> dict:
    out = {}
    for fmt, w in WRITERS.items():
        p = d / f"t{len(out)}.{fmt.split()[0]}"
        p.write_text(w(prog))
        out[fmt] = p
    raw = champsim_bytes(prog)
    (d / "t.champsimtrace").write_bytes(raw)
    (d / "t.champsimtrace.xz").write_bytes(lzma.compress(raw))
    (d / "t.lackey.gz").write_bytes(gzip.compress(out["lackey"].read_bytes()))
    out["champsim"] = d / "t.champsimtrace"
    out["champsim (xz)"] = d / "t.champsimtrace.xz"
    out["lackey (gzip)"] = d / "t.lackey.gz"
    return out


COLUMNS = ("parse", "check", "stream", "stream, kept", "cached check", "cached stream", "decompress", "simulate", "simulate, as read")


def cpu(fn):
    t = time.process_time()
    r = fn()
    return time.process_time() - t, r


def stream(tr) -> int:
    return sum(a.size for a, _ in tr.chunks())


def without_kept(tr) -> int:
    """A stream with nothing kept in the process: from the file, or from its parse-once cache."""
    T._kept.clear()
    return stream(tr)


def in_memory(p: Path, fmt: str) -> list:
    """The file's blocks as the parser takes them, read (and decompressed) beforehand."""
    if fmt == "champsim":
        return [(n0, rec.copy()) for n0, rec in T._records(p)]
    return [(n0, bytes(data), start, end, lf) for n0, data, start, end, lf in T._line_blocks(p)]


def parse(p: Path, fmt: str, blocks: list) -> int:
    """The parser alone: the accesses of each block in memory (the numba byte parser for text,
    the record reader for ChampSim)."""
    if fmt == "champsim":
        return sum(T._champsim_accesses(p, n0, rec)[0].size for n0, rec in blocks)
    return sum(T._parse_block(p, n0, data, start, end, lf, fmt)[0].size for n0, data, start, end, lf in blocks)


def decompress(p: Path) -> int:
    """Read the file decompressed in blocks of the reader's size, and nothing else."""
    opener = {".gz": gzip.open, ".xz": lzma.open}.get(p.suffix)
    if opener is None:
        return 0
    with opener(p, "rb") as f:
        buf = bytearray(1 << 18)
        while f.readinto(buf):
            pass
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--instructions", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    prog = program(args.instructions, seed=7)
    with tempfile.TemporaryDirectory() as tmp:
        paths = files(prog, Path(tmp))
        names = list(paths)
        times = {n: {k: [] for k in COLUMNS} for n in names}
        counts = {}
        for _ in range(args.repeat):
            for n in names:
                p = paths[n]
                T.cache_path(p).unlink(missing_ok=True)
                t, tr = cpu(lambda p=p: T.read_trace(p))
                times[n]["check"].append(t / tr.accesses)
                counts[n] = tr.accesses
                blocks = in_memory(p, tr.format)
                t, got = cpu(lambda p=p, tr=tr, blocks=blocks: parse(p, tr.format, blocks))
                assert got == tr.accesses, (n, got, tr.accesses)
                times[n]["parse"].append(t / tr.accesses)
                t, _ = cpu(lambda tr=tr: stream(tr))
                times[n]["stream, kept"].append(t / tr.accesses)
                t, _ = cpu(lambda tr=tr: without_kept(tr))
                times[n]["stream"].append(t / tr.accesses)
                t, _ = cpu(lambda p=p: decompress(p))
                times[n]["decompress"].append(t / tr.accesses)
                t, _ = cpu(lambda p=p: T.read_trace(p, cache=True))
                t, trc = cpu(lambda p=p: T.read_trace(p, cache=True))
                times[n]["cached check"].append(t / tr.accesses)
                t, _ = cpu(lambda trc=trc: without_kept(trc))
                times[n]["cached stream"].append(t / tr.accesses)
                parts = list(trc.chunks())
                a = np.concatenate([c for c, _ in parts])
                k = np.concatenate([c for _, c in parts]) if tr.has_kinds else None
                lay = tr.covering_layout("4K")
                for column, kinds in (("simulate", None), ("simulate, as read", k)):
                    pagesim.simulate("skylake", addresses=a[:1000], kinds=None if kinds is None else kinds[:1000], layout=lay)  # compiled first
                    t, _ = cpu(lambda a=a, kinds=kinds, lay=lay: pagesim.simulate("skylake", addresses=a, kinds=kinds, layout=lay))
                    times[n][column].append(t / a.size)
    print(f"{args.instructions:,} instructions of one synthetic program, each format; CPU ns per access, best of {args.repeat} (spread)")
    print(f"{'format':<16}{'accesses':>10}  " + "  ".join(f"{k:>22}" for k in COLUMNS) + f"{'parse, stream / as read':>25}")
    for n in names:
        sim = min(times[n]["simulate"]) * 1e9
        cells = []
        for k in COLUMNS:
            v = np.array(times[n][k]) * 1e9
            ratio = "" if k.startswith("simulate") else f" {v.min() / sim:5.1f}x"
            cells.append(f"{v.min():8.1f} ({v.max() - v.min():5.1f}){ratio:>7}")
        as_read = [min(times[n][k]) / min(times[n]["simulate, as read"]) for k in ("parse", "stream")]
        print(f"{n:<16}{counts[n]:>10,}  " + "  ".join(f"{c:>22}" for c in cells) + f"{as_read[0]:>17.1f}x, {as_read[1]:.1f}x")
    print("ratios: the figure over the simulation's own ns per access (simulate of the same addresses from memory, all data accesses,")
    print("skylake, 4K pages); parse, stream / as read: each over simulate of the trace as read (its instruction fetches as such)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
