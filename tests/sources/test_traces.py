"""Trace readers: lackey, din and hex round-trip, stream in chunks, and reject malformed lines
with the file and line number; the real lackey sample runs through simulate."""

import gzip
import os
import subprocess
import sys
import threading
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from twins.reference_traces import reference_read

import pagesim
import pagesim.sources.traces as T
from pagesim.sources.traces import TraceFormatError, detect_format, read_trace

SAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "traces" / "ls-lackey.txt.gz"


def write(path, fmt, addrs, kinds):
    lines = ["==1== Lackey, an example Valgrind tool"] if fmt == "lackey" else ["# a trace"] if fmt == "hex" else []
    for a, k in zip(addrs, kinds):
        if fmt == "lackey":
            lines.append(f"I  {a:08x},4" if k else f" {'LSM'[a % 3]} {a:08x},8")
        elif fmt == "din":
            lines.append(f"{2 if k else a % 2} {a:x}")
        else:
            lines.append(f"0x{a:x}")
    path.write_text("\n".join(lines) + "\n")


@settings(max_examples=30, deadline=None)
@given(
    st.sampled_from(["lackey", "din", "hex"]),
    st.lists(st.tuples(st.integers(0, 2**48), st.booleans()), min_size=1, max_size=60),
    st.sampled_from([1, 3, 1 << 20]),
    st.booleans(),
)
def test_round_trip(tmp_path_factory, fmt, items, chunk, compress):
    d = tmp_path_factory.mktemp("t")
    addrs = [a for a, _ in items]
    kinds = [int(k) if fmt != "hex" else 0 for _, k in items]
    p = d / "t.txt"
    write(p, fmt, addrs, kinds)
    if compress:
        gz = d / "t.txt.gz"
        gz.write_bytes(gzip.compress(p.read_bytes()))
        p = gz
    assert detect_format(p) == fmt
    tr = read_trace(p)
    got_a, got_k = [], []
    for a, k in tr.chunks(chunk=chunk):
        assert a.size <= chunk
        got_a += a.tolist()
        got_k += [0] * a.size if k is None else k.tolist()
    assert got_a == addrs and got_k == kinds
    assert tr.n_accesses == len(addrs) and tr.instr_accesses == sum(kinds)
    data = read_trace(p, instructions=False) if sum(kinds) < len(kinds) else None
    if data is not None:
        assert [x for c, _ in data.chunks(chunk=chunk) for x in c.tolist()] == [a for a, k in zip(addrs, kinds) if not k]
        assert set(data.blocks) == {a >> T.GRANULE_SHIFT for a, k in zip(addrs, kinds) if not k}
    assert set(tr.blocks) == {a >> T.GRANULE_SHIFT for a in addrs}


@pytest.mark.parametrize(
    "fmt,bad,expect",
    [
        ("lackey", " X 0400,8", "line 3: expected 'I  addr,size'"),
        ("din", "7 1234", "line 3: expected 'label address'"),
        ("hex", "0xZZ", "line 3: expected one hex address"),
        ("hex", "ffffffffffffffff", "line 3: address 0xffffffffffffffff is beyond 2\\*\\*63-1"),
    ],
)
def test_malformed_line_names_file_and_line(tmp_path, fmt, bad, expect):
    p = tmp_path / "bad.txt"
    write(p, fmt, [4096], [0])
    lines = p.read_text().splitlines()
    if fmt == "din":
        lines = ["0 1000", "1 2000"]
    elif fmt == "lackey":
        lines = lines[:2]
    else:
        lines = lines[:2]
    p.write_text("\n".join(lines + [bad]) + "\n")
    with pytest.raises(TraceFormatError, match=f"bad.txt, {expect}"):
        read_trace(p, format=fmt)


def test_bad_arguments(tmp_path):
    p = tmp_path / "x.txt"
    p.write_text("0x1000\n")
    with pytest.raises(ValueError, match="format='vcd' is not allowed"):
        read_trace(p, format="vcd")
    p.write_text("\n# only a comment\n")
    with pytest.raises(TraceFormatError, match="holds no accesses"):
        read_trace(p)


@pytest.mark.parametrize("kept", [True, False])
def test_trace_equals_the_same_addresses_in_memory(tmp_path, monkeypatch, kept):
    """From the accesses kept in the process, and parsed again from the file."""
    if not kept:
        monkeypatch.setattr(T, "KEEP_BYTES", 0)
    rng = np.random.default_rng(3)
    addrs = (0x7F0000000000 + rng.integers(0, 64 << 20, 5000)).tolist()
    kinds = rng.integers(0, 2, 5000).tolist()
    p = tmp_path / "t.txt"
    write(p, "din", addrs, kinds)
    tr = read_trace(p)
    lay = tr.covering_layout("4K")
    a = pagesim.simulate("skylake", tr, page_size="4K", chunk_size=777)
    b = pagesim.simulate("skylake", addresses=np.array(addrs, dtype=np.uint64), kinds=np.array(kinds), layout=lay)
    for v in ("walks", "hits", "misses", "faults", "walk_refs"):
        assert (a[v].values == b[v].values).all(), v
    assert (str(p), "din") in T._kept if kept else (str(p), "din") not in T._kept


def _parses(monkeypatch):
    """The list that each parse of a trace file (T._iter_chunks) appends to."""
    calls, real = [], T._iter_chunks
    monkeypatch.setattr(T, "_iter_chunks", lambda *a, **k: calls.append(a[0]) or real(*a, **k))
    return calls


def test_a_trace_is_parsed_once_in_a_process(tmp_path, monkeypatch):
    p = tmp_path / "t.hex"
    p.write_text("0x1000\n0x2000\n0x3000\n")
    tr = read_trace(p)
    calls = _parses(monkeypatch)
    assert [a.tolist() for a, _ in tr.chunks(chunk=2)] == [[0x1000, 0x2000], [0x3000]]
    for a, _ in tr.chunks():
        a[:] = 0  # what a caller does with its chunk does not change the next read
    assert np.concatenate([a for a, _ in tr.chunks()]).tolist() == [0x1000, 0x2000, 0x3000] and calls == []
    p.write_text("0x5000\n")  # new contents: the summary read_trace made is not theirs
    with pytest.raises(T.TraceFormatError, match="has changed since read_trace read it"):
        list(tr.chunks())
    loose = T.Trace(path=str(p), format="hex")  # a Trace without read_trace's record of the file: parsed again
    assert [a.tolist() for a, _ in loose.chunks()] == [[0x5000]] and calls == [p]


def test_what_is_kept_is_bounded(tmp_path, monkeypatch):
    """Up to KEEP_BYTES (9 bytes an access): a larger trace is not kept, and the trace read least
    recently is dropped for a new one."""
    monkeypatch.setattr(T, "KEEP_BYTES", 9 * 5)
    monkeypatch.setattr(T, "_kept", T.OrderedDict())
    paths = []
    for name, n in (("a", 3), ("b", 2), ("c", 6), ("d", 2)):
        paths.append(tmp_path / f"{name}.hex")
        paths[-1].write_text("".join(f"0x{i + 1:x}000\n" for i in range(n)))
        read_trace(paths[-1])
    assert [Path(k[0]).name for k in T._kept] == ["b.hex", "d.hex"]  # c is too large; a made way for d
    calls = _parses(monkeypatch)
    trs = [T.Trace(path=str(p), format="hex") for p in paths]
    assert [sum(a.size for a, _ in t.chunks()) for t in trs] == [3, 2, 6, 2] and [q.name for q in calls] == ["a.hex", "c.hex"]


@pytest.mark.skipif(not SAMPLE.is_file(), reason="the sample trace is not in this checkout")
def test_real_sample_runs_for_two_page_sizes():
    tr = read_trace(SAMPLE)
    assert tr.format == "lackey" and tr.n_accesses == 773_752 and tr.instr_accesses == 570_056
    small = pagesim.simulate("skylake", tr, page_size="4K")
    huge = pagesim.simulate("skylake", tr, page_size="2M")
    assert int(small["accesses"].sum()) == int(huge["accesses"].sum()) == 773_752
    assert int(huge["faults"].sum()) < int(small["faults"].sum())
    assert int(small["accesses"].sel(side="instr").sum()) == 570_056


# --- bad input: every error names the file (and the line where there is one) -------------------

LACKEY = "==1== Lackey\nI  0400,4\n L 1000,8\n S 7fff0000,8\n"


def test_path_of_the_wrong_type():
    with pytest.raises(TypeError, match=r"path=5 is not allowed: give the trace file's path as a str or os.PathLike, not int"):
        read_trace(5)
    with pytest.raises(TypeError, match="path=None is not allowed"):
        detect_format(None)


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(FileNotFoundError, match="none.txt' is not a file: there is no such file"):
        read_trace(tmp_path / "none.txt")
    with pytest.raises(FileNotFoundError, match="is not a file: it is a directory"):
        read_trace(tmp_path)


def test_flags_must_be_booleans(tmp_path):
    p = tmp_path / "t.txt"
    p.write_text(LACKEY)
    with pytest.raises(TypeError, match="progress must be True or False, got str 'yes'"):
        read_trace(p, progress="yes")
    with pytest.raises(TypeError, match="instructions must be True or False, got int 0"):
        read_trace(p, instructions=0)


@pytest.mark.parametrize("compress", [False, True])
@pytest.mark.parametrize("text,fmt", [(LACKEY, "lackey"), ("0x1000\n0x2000\n", "hex"), ("0 1000\n2 400\n", "din")])
def test_utf8_byte_order_mark_is_skipped(tmp_path, text, fmt, compress):
    data = "\ufeff".encode() + text.encode()  # what Windows editors write first
    p = tmp_path / ("t.txt.gz" if compress else "t.txt")
    p.write_bytes(gzip.compress(data) if compress else data)
    tr = read_trace(p)  # was: "cannot tell the trace format"
    plain = tmp_path / "plain.txt"
    plain.write_text(text)
    assert tr.format == fmt and tr.n_accesses == read_trace(plain).n_accesses
    assert [a.tolist() for a, _ in tr.chunks()] == [a.tolist() for a, _ in read_trace(plain).chunks()]


def test_utf16_is_named(tmp_path):
    p = tmp_path / "t.txt"
    p.write_bytes(LACKEY.encode("utf-16"))
    with pytest.raises(TraceFormatError, match="t.txt: the file is UTF-16 text; traces are ASCII"):
        read_trace(p)


def _many_lines(n=50_000):
    return "".join(f"I  {0x400000 + 4 * i:x},4\n" for i in range(n)).encode()


@pytest.mark.parametrize("fmt", ["auto", "lackey"])
def test_gzip_errors_name_the_file(tmp_path, fmt):
    data = gzip.compress(_many_lines())
    cases = {
        "truncated.txt.gz": (data[: len(data) // 2], r"truncated.txt.gz: .*; lines 1 to \d+ were read, in whole blocks"),
        "early.txt.gz": (data[:15], "early.txt.gz: the gzip data ends early .*; no whole block could be read of 256 KiB"),
        "notgzip.txt.gz": (LACKEY.encode(), "notgzip.txt.gz: the name ends in .gz but the file is not gzip data"),
        "crc.txt.gz": (data[:-8] + bytes(8), "crc.txt.gz: the gzip data is damaged; .*CRC check failed"),
    }
    for name, (content, msg) in cases.items():
        p = tmp_path / name
        p.write_bytes(content)
        with pytest.raises(TraceFormatError, match=msg):
            read_trace(p, format=fmt)


def test_gzip_data_is_recognised_by_content(tmp_path):
    p = tmp_path / "trace.txt"  # compressed, but not named .gz
    p.write_bytes(gzip.compress(LACKEY.encode()))
    assert read_trace(p).n_accesses == 3


@pytest.mark.parametrize("where", ["middle", "no newline at all", "last line"])
def test_a_line_longer_than_the_limit_names_file_line_and_limit(tmp_path, where):
    long = "0x" + "1" * (T.MAX_LINE + 10)
    text = {"middle": f"0x1000\n0x2000\n{long}\n0x3000\n", "no newline at all": long, "last line": f"0x1000\n0x2000\n{long}"}[where]
    line = 1 if where == "no newline at all" else 3
    p = tmp_path / "long.txt"
    p.write_text(text)
    with pytest.raises(TraceFormatError, match=f"long.txt, line {line}: longer than {T.MAX_LINE} bytes"):
        read_trace(p, format="hex")
    with pytest.raises(TraceFormatError, match=f"long.txt, line {line}: longer than {T.MAX_LINE} bytes"):
        read_trace(p)
    ok = tmp_path / "ok.txt"  # a line of exactly the limit is allowed (and then malformed here)
    ok.write_text("0x1000\n" + "#" + "x" * (T.MAX_LINE - 1) + "\n0x2000\n")
    assert read_trace(ok).n_accesses == 2


def test_memory_for_a_file_without_newlines_is_bounded(tmp_path):
    p = tmp_path / "blob.txt"
    p.write_bytes(b"1" * (16 << 20))  # 16 MiB, one "line"
    tracemalloc.start()
    try:
        with pytest.raises(TraceFormatError, match=f"blob.txt, line 1: longer than {T.MAX_LINE} bytes"):
            read_trace(p, format="hex")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20, f"peak {peak / 2**20:.1f} MiB while rejecting a 16 MiB line"  # was: the whole line, twice


# lines of every kind the formats know, valid and malformed, to cut into blocks anywhere
LINE = st.sampled_from(
    [
        "I  0400,4",
        " L 1000,8",
        " S 7fff0000,8",
        " M 0abc,2",
        "I 0400,4",
        " L  \t 1000,8 ",
        "==12== message",
        "",
        "  ",
        "0 1000",
        "1 0x2000",
        "2 400 extra",
        "3 0",
        "4 ff",
        "0x1000",
        "1000  ",
        "0XfF # comment",
        "# only a comment",
        "ffffffffffffffff",
        "7fffffffffffffff",
        "0x00000000000000001000",
        "# a comment longer than twenty bytes",
        " X 0400,8",
        "I  zz,4",
        "5 100",
        "0xZZ",
        "\x0c0x1000",
        "0x10\x0b",
        "caf\u00e9",
        "0x401000: R 0x7f0000001000",
        "0x401000: W 0xffffffffffffffff",
        "0x401000: X 0x10",
        "#eof",
        "           1           1:        7 ifetch       4 byte(s) @ 0x0000000000401000 90",
        "           2           1:        7 read         8 byte(s) @ 0x00007f0000001000 by PC 0x401000",
        "           3           1:        7 <marker: timestamp 1>",
        "Output format:",
        "# PID, TID, IP, ADDR, LOCAL WEIGHT, DSRC, SYMBOL",
        "20134 20134 0x401000 0x7f0000001000 5 0x1 a:b",
        "20134 20134 0x0000000000401000 0x0167f0000001000  5 0x000001 a:b",
        "20134 20134 0xffffffff81000000 0x016ffffffffb752b814 5 0x1 [kernel]:x",
        "20134 20134 0x401000 0x0160 5 0x1 a:b",
        "20134,20134,0x401000,0x7f0000001000,5,0x1,a:b",
        "           2           1:        7 write        8 byte(s) @ 0xZZ",
    ]
)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(LINE, max_size=40),
    st.sampled_from(T.TEXT_FORMATS),
    st.integers(1, 64),
    st.sampled_from([8, 12, 20, 1 << 16]),
    st.booleans(),
    st.booleans(),
    st.booleans(),
)
def test_blocks_cut_anywhere_read_as_line_by_line(tmp_path_factory, lines, fmt, block, max_line, crlf, final_newline, bom):
    """Reading in blocks of any size gives what reading line by line gives: the same accesses, or
    an error naming the same line (the first bad one), with line-length limits of several sizes;
    a UTF-8 byte order mark is skipped even when the blocks cut it."""
    text = ("\r\n" if crlf else "\n").join(lines) + ("\n" if final_newline and lines else "")
    p = tmp_path_factory.mktemp("b") / "t.txt"
    p.write_bytes((T._UTF8_BOM if bom else b"") + text.encode("utf-8"))
    want = reference_read(text.encode("utf-8").decode("ascii", "replace"), fmt, max_line)
    saved = T._BLOCK, T.MAX_LINE
    T._BLOCK, T.MAX_LINE = block, max_line
    try:
        if isinstance(want, int):
            with pytest.raises(TraceFormatError, match=f"t.txt, line {want}: "):
                list(T._iter_chunks(p, fmt, 5, True))
        else:
            got = [(int(a), int(k)) for aa, kk in T._iter_chunks(p, fmt, 5, True) for a, k in zip(aa, kk)]
            assert got == want
    finally:
        T._BLOCK, T.MAX_LINE = saved


def test_chunk_and_format_are_checked(tmp_path):
    p = tmp_path / "t.txt"
    p.write_text("0x1000\n0x2000\n")
    for bad, err in ((0, ValueError), (-1, ValueError), ("3", TypeError), (2.5, TypeError), (True, TypeError)):
        with pytest.raises(err, match="chunk"):
            list(T.accesses(p, "hex", chunk=bad))
        with pytest.raises(err, match="chunk"):
            list(T.read_trace(p).chunks(chunk=bad))
    for bad in ("HEX", None, "text"):
        with pytest.raises((ValueError, TypeError), match="format"):
            list(T.accesses(p, bad))
    assert [a.tolist() for a, _ in T.accesses(p, "auto", chunk=1)] == [[0x1000], [0x2000]]


def test_a_utf16_mark_cut_by_a_tiny_block_is_still_named(tmp_path, monkeypatch):
    p = tmp_path / "t.txt"
    p.write_bytes("0x1000\n".encode("utf-16"))
    monkeypatch.setattr(T, "_BLOCK", 1)
    with pytest.raises(TraceFormatError, match="UTF-16"):
        list(T.accesses(p, "hex"))


def test_progress_counts_the_bytes_of_the_file(tmp_path, monkeypatch, capsys):
    p = tmp_path / "t.txt"
    p.write_bytes(_many_lines(20_000))
    gz = tmp_path / "t.txt.gz"
    gz.write_bytes(gzip.compress(p.read_bytes()))
    bars = []
    real = T._bar

    def spy(*args):
        bars.append(real(*args))
        return bars[-1]

    monkeypatch.setattr(T, "_bar", spy)
    read_trace(p)
    assert bars == [None] and capsys.readouterr().err == ""
    for f in (p, gz):
        read_trace(f, progress=True)
        bar = bars[-1]
        assert bar.total == bar.n == f.stat().st_size  # bytes read from disk (compressed for gzip)
        assert f"checking {f.name}" in capsys.readouterr().err


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "pagesim", *args], capture_output=True, text=True)


def test_cli_bad_trace_is_one_line_and_exit_2(tmp_path):
    data = gzip.compress(_many_lines())
    files = {
        "truncated.txt.gz": data[: len(data) // 2],
        "notgzip.txt.gz": LACKEY.encode(),
        "long.txt": b"0x" + b"1" * (T.MAX_LINE + 1),
        "bad.txt": b"I  0400,4\n X 12,4\n",
    }
    for name, content in files.items():
        (tmp_path / name).write_bytes(content)
    for name in [*files, "missing.txt"]:
        r = _cli("simulate", "--machine", "skylake", "--trace", str(tmp_path / name))
        assert r.returncode == 2, (name, r.stderr)  # was: exit 1 and a traceback
        assert r.stderr.startswith("pagesim: error: ") and r.stderr.count("\n") == 1 and name in r.stderr, r.stderr
    r = _cli("simulate", "--machine", "skylake", "--trace", str(tmp_path / "bad.txt"))
    assert "bad.txt, line 2: expected 'I  addr,size'" in r.stderr  # two spaces kept


# --- a sparse trace: its blocks take a few bytes each, and a footprint too large is refused early --


def _sparse_hex(path, n, seed=1):
    """``n`` random 47-bit addresses, one hex number a line: nearly one distinct 2 MiB block each."""
    a = np.random.default_rng(seed).integers(0, 1 << 47, n, dtype=np.uint64)
    path.write_text("".join(f"{x:012x}\n" for x in a.tolist()))
    return a


def test_the_blocks_of_a_sparse_trace_take_a_few_bytes_each(tmp_path):
    n = 200_000
    addrs = _sparse_hex(tmp_path / "sparse.hex", n)
    (tmp_path / "dense.hex").write_text("".join(f"{(1 << 40) + 8 * i:012x}\n" for i in range(n)))  # the same bytes a line, one block
    peaks = {}
    for name in ("dense", "sparse"):
        read_trace(tmp_path / f"{name}.hex", format="hex")  # kernels loaded before measuring
        tracemalloc.start()
        try:
            tr = read_trace(tmp_path / f"{name}.hex", format="hex")
            peaks[name] = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    want = np.unique(addrs >> np.uint64(T.GRANULE_SHIFT))
    assert np.array_equal(tr.blocks, want) and tr.working_set == want.size << T.GRANULE_SHIFT
    per_block = (peaks["sparse"] - peaks["dense"]) / want.size
    assert per_block < 48, f"{per_block:.0f} bytes a distinct block while reading"  # was ~100: a set of Python ints


def test_a_footprint_of_too_many_pages_is_refused_before_any_region_is_made(tmp_path, monkeypatch):
    p = tmp_path / "sparse.hex"
    addrs = _sparse_hex(p, 300)
    tr = read_trace(p)
    blocks = np.unique(addrs >> np.uint64(T.GRANULE_SHIFT)).size

    def no_regions(*args, **kwargs):
        raise AssertionError("regions were made before the footprint was checked")

    monkeypatch.setattr(pagesim.model.layout.Layout, "_from_runs", no_regions)
    monkeypatch.setattr(pagesim.model.layout.Layout, "__init__", no_regions)
    monkeypatch.setattr(pagesim.model.layout, "MAX_PAGES", 512 * blocks - 1)
    msg = rf"sparse.hex': its footprint is {blocks:,} distinct 2M blocks \(600 MiB\), {512 * blocks:,} pages of 4K; "
    msg += rf"pagesim simulates at most {512 * blocks - 1:,} pages"
    with pytest.raises(ValueError, match=msg):
        pagesim.simulate("skylake", tr, page_size="4K")
    monkeypatch.setattr(pagesim.model.layout, "MAX_REGIONS", blocks - 10)
    msg = rf"footprint is {blocks:,} distinct 2M blocks .* in {blocks:,} places apart from one another: .* at most {blocks - 10:,} regions"
    with pytest.raises(ValueError, match=msg):
        pagesim.simulate("skylake", tr, page_size="2M")
    # the same limits, checked as early, for addresses given as an array
    with pytest.raises(ValueError, match=rf"^addresses: its footprint is {blocks:,} distinct 2M blocks .* at most {blocks - 10:,} regions"):
        pagesim.simulate("skylake", addresses=addrs, page_size="2M")
    monkeypatch.setattr(pagesim.model.layout, "MAX_REGIONS", 1 << 18)
    with pytest.raises(ValueError, match=rf"^addresses: its footprint is {blocks:,} distinct 2M blocks \(600 MiB\), {512 * blocks:,} pages of 4K"):
        pagesim.simulate("skylake", addresses=addrs, page_size="4K")


def test_a_trace_layout_is_the_blocks_it_touches(tmp_path):
    """Runs of adjacent blocks become one region each, for page sizes below, at and above 2 MiB."""
    rng = np.random.default_rng(5)
    blocks = np.unique(np.concatenate([rng.integers(0, 4096, 300), rng.integers(1 << 20, (1 << 20) + 64, 50)])).astype(np.uint64)
    addrs = (blocks << np.uint64(T.GRANULE_SHIFT)) + rng.integers(0, 1 << 21, blocks.size).astype(np.uint64)
    p = tmp_path / "t.hex"
    p.write_text("".join(f"{a:x}\n" for a in rng.permutation(addrs).tolist()))
    tr = read_trace(p)
    for page in ("4K", "2M", "1G"):
        g = max(2 << 20, pagesim.core.units.parse_page_size(page))
        covered = sorted({int(b) * (2 << 20) // g for b in blocks})
        runs, start = [], covered[0]
        for x, y in zip(covered, covered[1:] + [None]):
            if y != x + 1:
                runs.append((start, x + 1))
                start = y
        want = [(s * g, (e - s) * g, pagesim.core.units.parse_page_size(page), f"[ trace ] {i}") for i, (s, e) in enumerate(runs)]
        got = [(r.start, r.length, r.page_size, r.name) for r in tr.covering_layout(page).regions]
        assert got == want, page


@pytest.mark.parametrize("instructions", [True, False])
def test_an_address_beyond_va_bits_names_the_file_and_line(tmp_path, instructions):
    p = tmp_path / "far.txt"
    p.write_text("==1== Lackey\nI  0400,4\n L 1000,8\nI  1000000000000,4\n S 1000000000040,8\n")
    with pytest.raises(ValueError) as e:
        pagesim.simulate("skylake", read_trace(p, instructions=instructions), page_size="4K")
    line, addr = ("4", "0x1000000000000") if instructions else ("5", "0x1000000000040")  # without instructions, their lines are skipped
    assert str(e.value) == (
        f"{p}, line {line}: address {addr} is beyond the virtual address space of machine 'skylake' (48-bit: addresses below 0x1000000000000)"
    )  # was: "region '[ trace ] 1' ends at ..."
    r = _cli("simulate", "--machine", "skylake", "--trace", str(p))
    want = f"{p}, line 4: address 0x1000000000000 is beyond the virtual address space of machine 'skylake' (48-bit: addresses below 0x1000000000000)"
    assert r.returncode == 2 and r.stderr == f"pagesim: error: {want}\n"


def test_a_format_that_cannot_be_told_names_the_way_to_give_it(tmp_path, capsys):
    """The first line (a hex address with a comment) tells no format: Python is told format=,
    the command line --trace-format (was: format=, which the command line does not take), and
    --trace-format hex reads the file."""
    from pagesim.cli import main

    f = tmp_path / "binary.hex"
    f.write_text("1000 # the first access\n2000\n1000\n")
    every = ", ".join(T.FORMATS)
    quoted = ", ".join(repr(f) for f in T.FORMATS)
    with pytest.raises(T.UnknownTraceFormat, match=rf"binary\.hex, line 1: cannot tell the trace format from .*: pass format= one of {quoted}$"):
        read_trace(f)
    assert read_trace(f, format="hex").accesses == 3
    assert main(["simulate", "--machine", "skylake", "--trace", str(f), "--page-size", "4K", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err == f"pagesim: error: {f}, line 1: cannot tell the trace format from '1000 # the first access': give --trace-format, one of {every}\n", err
    assert main(["simulate", "--machine", "skylake", "--trace", str(f), "--trace-format", "hex", "--page-size", "4K", "--quiet"]) == 0
    out, err = capsys.readouterr()
    assert "accesses 3" in out and err == "", (out, err)
    assert main(["simulate", "--machine", "skylake", "--trace", str(f), "--trace-format", "din", "--quiet"]) == 2
    assert "binary.hex, line 1: expected 'label address'" in capsys.readouterr().err  # the format given is the one read


def test_threads_reading_a_changed_trace_at_once(tmp_path):
    """Threads of a sweep that find the kept accesses stale at the same moment each parse the
    file again; none fails."""
    p = tmp_path / "t.hex"
    p.write_text("0x1000\n0x2000\n")
    errors, sizes = [], []
    for i in range(20):
        read_trace(p)
        tr = T.Trace(path=str(p), format="hex")  # without read_trace's record of the file, which would refuse it
        p.chmod(0o600 if i % 2 else 0o644)  # its status changed: what is kept is stale
        barrier = threading.Barrier(4)

        def run(tr=tr, barrier=barrier):
            barrier.wait()
            try:
                sizes.append(sum(a.size for a, _ in tr.chunks()))
            except Exception as e:  # noqa: BLE001 (collected for the assertion)
                errors.append(repr(e))

        threads = [threading.Thread(target=run) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert errors == [] and sizes == [2] * 80


def test_auto_reads_the_format_of_the_contents_whatever_cache_is_beside_them(tmp_path):
    p = tmp_path / "t.txt"
    p.write_bytes(b"1 2: 3 read 8 byte(s) @ 0x7f001000\n2 3: 3 ifetch 4 byte(s) @ 0x401000\n")
    assert read_trace(p, format="din", cache=True).format == "din"
    tr = read_trace(p, cache=True)
    assert tr.format == "drmemtrace" and [a.tolist() for a, _ in tr.chunks()] == [[0x7F001000, 0x401000]]


def test_the_cache_file_gets_the_permissions_of_a_new_file(tmp_path):
    p = tmp_path / "t.hex"
    p.write_text("0x1000\n0x2000\n")
    read_trace(p, cache=True)
    mask = os.umask(0o022)
    os.umask(mask)
    assert (T.cache_path(p).stat().st_mode & 0o777) == 0o666 & ~mask


def test_a_cache_damaged_within_range_is_never_counted(tmp_path):
    """A flipped bit that leaves every address in range: the checksum finds it. read_trace reads
    the trace again and writes a new cache; a simulation that meets it fails instead of counting it."""
    p = tmp_path / "t.hex"
    p.write_text("".join(f"{0x7F0000000000 + i * 4096:x}\n" for i in range(5000)))
    tr = read_trace(p, cache=True)
    good = int(pagesim.simulate("skylake", tr)["faults"].sum())
    c = T.cache_path(p)
    raw = bytearray(c.read_bytes())
    at = T._CACHE_HEAD.size + 100 * T.CACHED.itemsize + 1  # record 100's address, bit 13: a page of the same 2 MiB block
    raw[at] ^= 0x20
    key = os.stat(c)
    c.write_bytes(bytes(raw))
    os.utime(c, ns=(key.st_atime_ns, key.st_mtime_ns))
    T._kept.clear()  # what this process kept from read_trace would be read instead of the cache
    with pytest.raises(T.TraceFormatError, match="t.hex.pagesim: the cache of t.hex is damaged .its records' checksum differs.: delete it"):
        pagesim.simulate("skylake", tr)
    with pytest.warns(UserWarning, match="checksum differs.*the trace is read again"):
        again = read_trace(p, cache=True)
    assert int(pagesim.simulate("skylake", again)["faults"].sum()) == good == 5000


def test_a_trace_read_by_a_relative_path_survives_a_change_of_folder(tmp_path, monkeypatch):
    (tmp_path / "rel.hex").write_text("0x1000\n0x2000\n")
    monkeypatch.chdir(tmp_path)
    tr = read_trace("rel.hex")
    monkeypatch.chdir("/")
    assert int(pagesim.simulate("skylake", tr)["accesses"].sum()) == 2 and tr.label == "trace(rel.hex, 2)"
