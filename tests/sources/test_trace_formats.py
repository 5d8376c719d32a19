"""The trace formats analysts have: ChampSim (64-byte records, plain, gzip or xz), DynamoRIO
drmemtrace's text view, Pin's pinatrace and `perf mem report -D`. Each test writes its traces with a
writer of its own, from each format's published layout (ChampSim's inc/trace_instruction.h, the
drmemtrace view tool's output, Pin's pinatrace.cpp, perf-mem's raw dump), and checks that the same
synthetic program read from each gives the same accesses and identical counters, and that a
malformed record names the file and the record."""

import gzip
import lzma
import os
import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pagesim
from pagesim.sources.traces import _CACHE_HEAD, FORMATS, TraceFormatError, UnknownTraceFormat, detect_format, read_trace

COUNTERS = ("walks", "walk_refs", "faults", "hits", "misses")


def program(n: int, seed: int = 0) -> list[tuple[int, list[int], list[int]]]:
    """(ip, loads, stores) of ``n`` instructions: a loop over code in 3 pages reading up to 4 and
    writing up to 2 addresses spread over 64 MiB of data."""
    rng = np.random.default_rng(seed)
    code, data = 0x400000, 0x7F0000000000
    out = []
    for i in range(n):
        ip = code + (i * 4) % (3 << 12)
        loads = [data + int(x) * 64 for x in rng.integers(0, 1 << 20, int(rng.integers(0, 5)))]
        stores = [data + int(x) * 64 for x in rng.integers(0, 1 << 20, int(rng.integers(0, 3)))]
        out.append((ip, loads, stores))
    return out


def expected(prog, instructions: bool = True):
    """The accesses in the order every reader gives them: the fetch, the loads, the stores."""
    out = []
    for ip, loads, stores in prog:
        if instructions:
            out.append((ip, 1))
        out += [(a, 0) for a in loads] + [(a, 0) for a in stores]
    return out


def champsim_bytes(prog, flags=None) -> bytes:
    """ChampSim's input_instr, little-endian: u64 ip, u8 is_branch, u8 branch_taken, u8 dst_reg[2],
    u8 src_reg[4], u64 dst_mem[2], u64 src_mem[4] (64 bytes)."""
    out = bytearray()
    for i, (ip, loads, stores) in enumerate(prog):
        br, taken = (flags or {}).get(i, (i % 7 == 0, i % 14 == 0))
        dst = stores + [0] * (2 - len(stores))
        src = loads + [0] * (4 - len(loads))
        out += struct.pack("<QBB2B4B2Q4Q", ip, br, taken, 1, 0, 2, 3, 0, 0, *dst, *src)
    assert len(out) == 64 * len(prog)
    return bytes(out)


def drmemtrace_text(prog) -> str:
    lines = [
        "Output format:",
        "<--record#-> <--instr#->: <---tid---> <record details>",
        "------------------------------------------------------------",
        "           1           0:     2765542 <marker: version 6>",
        "           2           0:     2765542 <marker: page size 4096>",
    ]
    rec, tid = 3, 2765543
    for n, (ip, loads, stores) in enumerate(prog, start=1):
        lines.append(f"{rec:>12} {n:>11}: {tid:>11} ifetch       4 byte(s) @ 0x{ip:016x} 48 89 e7   mov    %rsp, %rdi")
        rec += 1
        for kind, addrs in (("read", loads), ("write", stores)):
            for a in addrs:
                lines.append(f"{rec:>12} {n:>11}: {tid:>11} {kind:<12} 8 byte(s) @ 0x{a:016x} by PC 0x{ip:016x}")
                rec += 1
        if n % 5 == 0:
            lines.append(f"{rec:>12} {n:>11}: {tid:>11} <marker: timestamp 13362425886720000>")
            rec += 1
    return "\n".join(lines) + "\n"


def pinatrace_text(prog) -> str:
    lines = [f"0x{ip:x}: {rw} 0x{a:x}" for ip, loads, stores in prog for rw, addrs in (("R", loads), ("W", stores)) for a in addrs]
    return "\n".join(lines + ["#eof"]) + "\n"


def perf_text(prog, sep: str | None = None) -> str:
    """As perf mem report -D prints its samples (tools/perf/builtin-mem.c, dump_raw_samples): the
    first with "%5d%s%5d%s0x%016llx%s0x016%llx%s" then the weight, the data source and the symbol,
    so its ADDR comes after a literal 0x016; perf then sets the separator to " ", and every later
    sample is "%d%s%d%s0x%llx%s0x%llx%s" with single spaces; with -x SEP, that form with SEP."""
    lines = ["# PID, TID, IP, ADDR, LOCAL WEIGHT, DSRC, SYMBOL"]
    samples = [(ip, a) for ip, loads, stores in prog for a in loads + stores]
    samples += [(0xFFFFFFFFB63F645C, 0xFFFFFFFFB752B814), (0x401000, 0)]  # a kernel address, and none: skipped
    for n, (ip, a) in enumerate(samples):
        if sep is None and n == 0:
            lines.append(f"{20134:5d} {20134:5d} 0x{ip:016x} 0x016{a:x} {1168:5d} 0x{0x5080144:06x} /usr/bin/prog:main")
        elif sep is None:
            lines.append(f"20134 20134 0x{ip:x} 0x{a:x} 1168 0x{0x5080144:x} /usr/bin/prog:main")
        else:
            lines.append(sep.join(["20134", "20134", f"0x{ip:x}", f"0x{a:x}", "1168", "0x5080144", "/usr/bin/prog:main"]))
    return "\n".join(lines) + "\n"


def write(path, fmt, prog, pack=None):
    data = champsim_bytes(prog) if fmt == "champsim" else {"drmemtrace": drmemtrace_text, "pinatrace": pinatrace_text, "perf": perf_text}[fmt](prog).encode()
    if pack == "gz":
        data = gzip.compress(data)
    elif pack == "xz":
        data = lzma.compress(data)
    path.write_bytes(data)
    return path


def accesses(tr):
    out = []
    for a, k in tr.chunks(chunk=7):
        out += list(zip(a.tolist(), [0] * a.size if k is None else k.tolist()))
    return out


@pytest.mark.parametrize("fmt", ["champsim", "drmemtrace", "pinatrace", "perf"])
@pytest.mark.parametrize("pack", [None, "gz", "xz"])
def test_each_format_reads_the_program_it_was_written_from(tmp_path, fmt, pack):
    prog = program(300)
    p = write(tmp_path / "trace.bin", fmt, prog, pack)  # the name says nothing: the contents do
    assert detect_format(p) == fmt
    tr = read_trace(p)
    full = fmt in ("champsim", "drmemtrace")  # pinatrace and perf mem record data accesses only
    assert accesses(tr) == expected(prog, instructions=full)
    assert tr.format == fmt and tr.instr_accesses == (len(prog) if full else 0)


def test_the_same_program_gives_identical_counters_in_every_format(tmp_path):
    prog = program(3000, seed=1)
    paths = {f: write(tmp_path / f"t.{f}", f, prog, pack) for f, pack in (("champsim", "xz"), ("drmemtrace", "gz"), ("pinatrace", None), ("perf", None))}
    for instructions, fmts in ((True, ("champsim", "drmemtrace")), (False, ("champsim", "drmemtrace", "pinatrace", "perf"))):
        results = {}
        for f in fmts:
            ds = pagesim.simulate("skylake", read_trace(paths[f], instructions=instructions), page_size="4K")
            results[f] = {c: ds[c].values.copy() for c in COUNTERS if c in ds}
        first = results[fmts[0]]
        assert int(first["walks"].sum()) > 0
        for f in fmts[1:]:
            for c, v in first.items():
                np.testing.assert_array_equal(results[f][c], v, err_msg=f"{f} vs {fmts[0]}: {c} (instructions={instructions})")


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 40), st.integers(0, 2**16), st.sampled_from([None, "gz", "xz"]))
def test_champsim_round_trips_any_program(tmp_path_factory, n, seed, pack):
    prog = program(n, seed)
    p = write(tmp_path_factory.mktemp("c") / "t.champsimtrace", "champsim", prog, pack)
    assert accesses(read_trace(p)) == expected(prog)
    assert [a for a, k in accesses(read_trace(p, instructions=False))] == [a for a, k in expected(prog, False)]


def test_a_bad_champsim_record_is_named(tmp_path):
    prog = program(10)
    p = tmp_path / "bad.champsimtrace"
    p.write_bytes(champsim_bytes(prog, flags={6: (7, 0)}))
    with pytest.raises(TraceFormatError, match=r"bad.champsimtrace, record 7: is_branch=7, branch_taken=0: a ChampSim record holds 0 or 1"):
        read_trace(p, format="champsim")
    p.write_bytes(champsim_bytes(prog)[: 64 * 9 + 20])
    with pytest.raises(TraceFormatError, match=r"record 10: incomplete: the file ends 20 bytes into it \(a ChampSim record is 64 bytes\)"):
        read_trace(p)
    big = champsim_bytes([(0x400000, [1 << 63], [])])
    p.write_bytes(big)
    with pytest.raises(TraceFormatError, match=r"record 1: an address beyond 2\*\*63-1"):
        read_trace(p)


def test_damaged_or_misnamed_compressed_data_is_named(tmp_path):
    good = lzma.compress(champsim_bytes(program(2000)))
    p = tmp_path / "t.champsimtrace.xz"
    p.write_bytes(good[: len(good) // 2])
    with pytest.raises(TraceFormatError, match="t.champsimtrace.xz: the xz data ends early"):
        read_trace(p, format="champsim")
    p.write_bytes(good[:40] + bytes(200) + good[240:])
    with pytest.raises(TraceFormatError, match="t.champsimtrace.xz: the xz data (is damaged|ends early)"):
        read_trace(p, format="champsim")
    q = tmp_path / "plain.xz"
    q.write_bytes(champsim_bytes(program(3)))
    with pytest.raises(TraceFormatError, match="plain.xz: the name ends in .xz but the file is not xz data"):
        read_trace(q)


@pytest.mark.parametrize(
    "fmt,bad,expect",
    [
        ("pinatrace", "0x401000: X 0x7f00", "line 3: expected '0xIP: R 0xADDR' or '0xIP: W 0xADDR'"),
        ("drmemtrace", "garbage here", "line 3: expected '<record#> <instr#>: <tid> <record>'"),
        ("perf", "20134 oops", "line 3: expected 'PID TID 0xIP 0xADDR ...'"),
        ("perf", "20134 20134 0x0000000000401000 7f0000001000 5 0x1 a:b", "line 3: expected 'PID TID 0xIP 0xADDR ...'"),
        ("drmemtrace", "           2           1:        7 read         8 byte(s) @ 0xZZ", "line 3: expected '<kind> <n> byte\\(s\\) @ 0xADDR'"),
    ],
)
def test_a_malformed_line_names_file_and_line(tmp_path, fmt, bad, expect):
    good = {
        "pinatrace": ["0x401000: R 0x7f0000001000", "0x401004: W 0x7f0000002000"],
        "drmemtrace": ["           1           1:        7 ifetch       4 byte(s) @ 0x0000000000401000 90", "           2           1:        7 <marker: x>"],
        "perf": ["# PID, TID, IP, ADDR, LOCAL WEIGHT, DSRC, SYMBOL", "    1     1 0x0000000000401000 0x0167f0000001000     5 0x000001 a:b"],
    }[fmt]
    p = tmp_path / "bad.txt"
    p.write_text("\n".join(good + [bad]) + "\n")
    assert detect_format(p) == fmt
    with pytest.raises(TraceFormatError, match=f"bad.txt, {expect}"):
        read_trace(p)


def test_binary_data_that_is_not_champsim_is_refused(tmp_path):
    p = tmp_path / "x.bin"
    p.write_bytes(bytes(range(256)) * 8)
    with pytest.raises(UnknownTraceFormat, match="binary data that is not a ChampSim trace"):
        detect_format(p)
    assert set(FORMATS) >= {"champsim", "drmemtrace", "pinatrace", "perf", "lackey", "din", "hex"}


def test_the_parse_once_cache_gives_what_parsing_gives(tmp_path, monkeypatch):
    import os

    import pagesim.sources.traces as T

    prog = program(2000, seed=3)
    p = write(tmp_path / "t.drmem.gz", "drmemtrace", prog, "gz")
    plain = read_trace(p)
    tr = read_trace(p, cache=True)
    c = T.cache_path(p)
    assert c.name == "t.drmem.gz.pagesim" and tr.cache == str(c)
    assert c.stat().st_size == _CACHE_HEAD.size + 9 * tr.accesses
    assert (tr.accesses, tr.instr_accesses, tr.block_data, tr.format) == (plain.accesses, plain.instr_accesses, plain.block_data, plain.format)

    def no_parsing(*a, **k):
        raise AssertionError("the trace was parsed again")

    want = accesses(plain)
    with monkeypatch.context() as mp:
        mp.setattr(T, "_iter_chunks", no_parsing)
        again = read_trace(p, cache=True)  # the check reads the cache
        assert again.block_data == plain.block_data and accesses(again) == want
        a = pagesim.simulate("zen4", again, page_size="4K")
    b = pagesim.simulate("zen4", plain, page_size="4K")
    for name in COUNTERS:
        np.testing.assert_array_equal(a[name].values, b[name].values)
    # the trace changes: the cache no longer describes it, and is written again
    p.write_bytes(gzip.compress(drmemtrace_text(prog[:100]).encode()))
    os.utime(p, ns=(1, 1))
    assert read_trace(p, cache=True).accesses == read_trace(p).accesses < plain.accesses
    assert T._cache_header(p, "auto")[0] == read_trace(p).accesses
    # another format asked for: the cache is not used for it
    assert T._cache_header(p, "lackey") is None


def test_a_trace_with_an_error_leaves_no_cache(tmp_path):
    import pagesim.sources.traces as T

    p = tmp_path / "bad.pinatrace"
    p.write_text("0x401000: R 0x7f0000001000\n0x401004: Q 0x7f0000002000\n")
    with pytest.raises(TraceFormatError, match="line 2"):
        read_trace(p, cache=True)
    assert sorted(x.name for x in tmp_path.iterdir()) == ["bad.pinatrace"]
    assert not T.cache_path(p).exists()


def test_a_cache_that_cannot_be_written_is_skipped_with_a_warning(tmp_path):
    """Where the cache cannot be written (here its temporary file's name is taken by a directory,
    as a read-only directory would refuse it, even to root), the trace is read without one."""
    import os

    import pagesim.sources.traces as T

    p = write(tmp_path / "t.pin", "pinatrace", program(50))
    T.cache_path(p).mkdir()  # its name taken by a directory
    with pytest.warns(UserWarning, match=r"t.pin: no parse-once cache \(.*t.pin.pagesim cannot be written"):
        tr = read_trace(p, cache=True)
    assert tr.cache == "" and accesses(tr) == expected(program(50), instructions=False)
    assert sorted(x.name for x in tmp_path.iterdir()) == ["t.pin", "t.pin.pagesim"] and not os.listdir(T.cache_path(p))


def test_threads_caching_one_trace_at_once_each_get_it(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    import pagesim.sources.traces as T

    p = write(tmp_path / "t.pin", "pinatrace", program(20_000, seed=2))
    with ThreadPoolExecutor(3) as ex:
        got = list(ex.map(lambda _: read_trace(p, cache=True), range(3)))
    want = read_trace(p)
    assert all(t.accesses == want.accesses and t.block_data == want.block_data for t in got)
    assert sorted(x.name for x in tmp_path.iterdir()) == ["t.pin", "t.pin.pagesim"]
    assert T._cache_header(p, "auto")[0] == want.accesses


def test_a_damaged_or_outdated_cache_is_not_used(tmp_path):
    import os

    import pagesim.sources.traces as T

    p = write(tmp_path / "t.pin", "pinatrace", program(300, seed=4))
    want = accesses(read_trace(p))
    read_trace(p, cache=True)
    c = T.cache_path(p)
    raw = bytearray(c.read_bytes())
    raw[64 + 7] = 0xFF  # the first address's top byte: beyond 2**63-1
    c.write_bytes(bytes(raw))
    with pytest.warns(UserWarning, match="is damaged"):
        tr = read_trace(p, cache=True)
    assert accesses(tr) == want and T._cache_header(p, "auto") is not None
    # the same size and mtime, other contents (as cp -p or rsync leave a file): the inode or ctime tells
    st = p.stat()
    other = tmp_path / "other.pin"
    other.write_text(p.read_text().replace(": R 0x7f0000", ": R 0x7f0001"))  # other addresses, the same size
    assert other.stat().st_size == st.st_size
    os.replace(other, p)
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert accesses(read_trace(p, cache=True)) == accesses(read_trace(p)) != want


def test_perf_with_a_field_separator_reads_the_same_samples(tmp_path):
    prog = program(200, seed=5)
    plain = write(tmp_path / "plain.txt", "perf", prog)
    commas = tmp_path / "commas.txt"
    commas.write_text(perf_text(prog, sep=","))
    assert detect_format(commas) == "perf"
    assert accesses(read_trace(commas)) == accesses(read_trace(plain)) == expected(prog, instructions=False)


def test_a_champsim_file_that_is_not_one_names_the_record(tmp_path):
    p = tmp_path / "t.bin"
    p.write_bytes(champsim_bytes(program(5), flags={1: (2, 0)}))
    with pytest.raises(UnknownTraceFormat, match="record 2 has is_branch=2"):
        detect_format(p)
    p.write_bytes(champsim_bytes(program(1))[:30])
    with pytest.raises(UnknownTraceFormat, match=r"shorter than one ChampSim record \(30 bytes"):
        detect_format(p)


def test_perf_as_perf_6_prints_it(tmp_path):
    """The first lines of `perf mem report -D` from perf 6.1 on this project's machines (page faults
    sampled with -d): the first sample's ADDR after a literal 0x016, every later one as 0xADDR with
    single spaces."""
    p = tmp_path / "pf.txt"
    p.write_text(
        "# PID, TID, IP, ADDR, LOCAL WEIGHT, DSRC, SYMBOL\n"
        "17139 17139 0xffffffff81775dda 0x016560eda4cc038     0 0x1e05080021 [kernel.kallsyms]:elf_load\n"
        "17139 17139 0xffffffff81775dda 0x7f50012f6110 0 0x1e05080021 [kernel.kallsyms]:elf_load\n"
        "17139 17139 0x7f50012dd7ad 0x7f50012f5e06 0 0x1e05080021 /usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2:_dl_start\n"
        "17139 17139 0x7f50012dd7ad 0xffffffffb752b814 0 0x1e05080021 [kernel.kallsyms]:x\n"
        "17139 17139 0x7f50012dd7ad 0x0 0 0x1e05080021 [unknown]:y\n"
    )
    assert detect_format(p) == "perf"
    assert accesses(read_trace(p)) == [(0x560EDA4CC038, 0), (0x7F50012F6110, 0), (0x7F50012F5E06, 0)]


def test_drmemtrace_view_as_captured_with_its_results_and_in_the_older_layout(tmp_path):
    """The view tool ends with its results and the trace checks (DynamoRIO's test expectations,
    clients/drcachesim/tests/offline-skip.expect, have them); its older layout names a record
    '<record#>: T<tid>'."""
    new = tmp_path / "view.txt"
    new.write_text(
        "Output format:\n<--record#-> <--instr#->: <---tid---> <record details>\n" + "-" * 60 + "\n"
        "          86          62:      296231 <marker: timestamp 13319413770947383>\n"
        "          87          63:      296231 ifetch       2 byte(s) @ 0x0000000000401026 0f 05                syscall  -> %rcx %r11\n"
        "          88          64:      296231 read         8 byte(s) @ 0x00007f8881e37c70 by PC 0x0000000000401028\n"
        "          94          68:      296231                                             00\n"
        "View tool results:\n              6 : total instructions\n\n" + "=" * 75 + "\nTrace invariant checks passed\n"
    )
    assert detect_format(new) == "drmemtrace"
    assert accesses(read_trace(new)) == [(0x401026, 1), (0x7F8881E37C70, 0)]
    old = tmp_path / "view_old.txt"
    old.write_text(
        "Output format:\n<record#>: T<tid> <record details>\n" + "-" * 60 + "\n"
        "        1: T1774673 <marker: version 4>\n"
        "   173369: T1774669 ifetch       3 byte(s) @ 0x0000000000402680 f3 48 a5             rep movsq\n"
        "   173370: T1774669 read         8 byte(s) @ 0x00007f8881e37c70 by PC 0x0000000000402680\n"
        "   173371: T1774669 write        8 byte(s) @ 0x00007f8881e37a70 by PC 0x0000000000402680\n"
    )
    assert detect_format(old) == "drmemtrace"
    assert accesses(read_trace(old)) == [(0x402680, 1), (0x7F8881E37C70, 0), (0x7F8881E37A70, 0)]
    bad = tmp_path / "bad.txt"
    bad.write_text(old.read_text() + "   173372: T1774669 read         8 byte(s) @ 0xZZ\n")
    with pytest.raises(TraceFormatError, match="line 8: expected '<kind> <n> byte\\(s\\) @ 0xADDR'"):
        accesses(read_trace(bad))


def test_a_trace_changed_after_read_trace_is_refused(tmp_path):
    p = tmp_path / "t.hex"
    p.write_text("".join(f"{0x7F0000000000 + i * 4096:x}\n" for i in range(10)))
    t = read_trace(p)
    assert int(pagesim.simulate("skylake", t)["faults"].sum()) == 10
    p.write_text("".join(f"{0x7F0000000000 + i * 4096:x}\n" for i in range(300)))  # same 2 MiB block, 30 times longer
    os.utime(p, ns=(t.stamp[1], t.stamp[1]))  # even with the modification time kept (cp -p)
    with pytest.raises(TraceFormatError, match="t.hex has changed since read_trace read it .*: read it again with read_trace"):
        pagesim.simulate("skylake", t)
    assert int(pagesim.simulate("skylake", read_trace(p))["faults"].sum()) == 300


def test_a_stray_nul_in_a_text_trace_names_its_line(tmp_path):
    p = tmp_path / "t.hex"
    p.write_bytes(b"0x7f0000001000\n0x7f0000002000\n\x00\x00junk\n0x7f0000003000\n")
    with pytest.raises(UnknownTraceFormat, match=r"t.hex, line 3: a NUL byte \(binary data\) in what reads as text up to there"):
        detect_format(p)


def test_a_nul_on_the_first_line_of_text_names_it(tmp_path):
    p = tmp_path / "t.lackey"
    p.write_bytes(b" L 00601000\x00,8\n L 00601040,8\n")
    with pytest.raises(UnknownTraceFormat, match="t.lackey, line 1: a NUL byte"):
        detect_format(p)
    q = tmp_path / "long.lackey"
    q.write_bytes(b" L 00\x00601000,8\n" + b" L 00601040,8\n" * 1000)
    with pytest.raises(UnknownTraceFormat, match="long.lackey, line 1: a NUL byte"):
        detect_format(q)
    r = tmp_path / "first.lackey"
    r.write_bytes(b"\x00 L 7ff000010,8\n L 7ff000020,8\n" * 40)
    with pytest.raises(UnknownTraceFormat, match="first.lackey, line 1: a NUL byte"):
        detect_format(r)


def test_din_refuses_a_nul_inside_an_address(tmp_path):
    p = tmp_path / "t.din"
    p.write_bytes(b"0 7ff000010\n0 7ff\x00000030\n2 400000\n")
    with pytest.raises(TraceFormatError, match="t.din, line 2: expected 'label address'"):
        accesses(read_trace(p, format="din"))
    q = tmp_path / "ok.din"
    q.write_bytes(b"0 7ff000010 4\r\n1\t0x7ff000020\r\n2 400000\r\n")
    assert accesses(read_trace(q, format="din")) == [(0x7FF000010, 0), (0x7FF000020, 0), (0x400000, 1)]
