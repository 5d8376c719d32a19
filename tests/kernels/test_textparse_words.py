"""The trace parser finds a line's runs in bitmaps of 64 bytes and 8 bytes at a time
(pagesim/_kernels/textparse.py). Each run function is checked against its plain definition, byte
by byte, on any bytes at any offset and line end, with its window of bitmaps made anywhere before
it (or none) and any bytes beyond the line's end; whole lines with bytes changed anywhere read exactly as the regular
expressions that define each format read them; and a machine that reads byte by byte only (the
parser's path where words are not little-endian) gives the same accesses."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numba
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from twins.reference_traces import reference_read

import pagesim.sources.traces as T
from pagesim._kernels import textparse as TP

# the bytes the runs are made of and the ones around them, any byte beyond, and the same biased in
BYTES = st.one_of(st.sampled_from(b" 0123456789abcdefABCDEFxX:@()\n\r\t\x0b\x0c/`gG\xb0\xa0\xff\x8a"), st.integers(0, 255))
# runs of each class the parser reads (spaces, zeros, decimal and hex digits), 0-20 bytes long,
# between any bytes
RUN = st.sampled_from([b" ", b"0", b"0123456789", b"0123456789abcdefABCDEF"]).flatmap(lambda cls: st.lists(st.sampled_from(cls), max_size=20).map(bytes))
DATA = st.lists(st.one_of(RUN, st.lists(BYTES, max_size=3).map(bytes)), max_size=8).map(b"".join)


@numba.njit
def _runs(buf, i, le, q):
    """The runs at ``i`` of the line ending at ``le``, with the window made at ``q`` (at most
    ``i``; it holds no bytes where 64 from ``q`` are not in ``buf``)."""
    p = buf.ctypes.data
    w = TP._window(p, q, le, buf.shape[0])
    v, j, ok = TP._hex(p, i, le, w)
    return TP._spaces(p, i, le, w), TP._zeros(p, i, le, w), TP._digits(p, i, le, w), TP._hexrun(p, i, le, w), TP._find_lf(p, i, le), v, j, ok


def _plain(data: bytes, i: int, le: int):
    def run(ok):
        j = i
        while j < le and ok(data[j]):
            j += 1
        return j

    hexdigit = set(b"0123456789abcdefABCDEF")
    z = run(lambda c: c == 48)
    h = run(lambda c: c in hexdigit)
    digits = data[z:h]
    v = int(digits, 16) if digits else 0
    ok = h > i and len(digits) <= 16 and v <= TP.MAX_ADDRESS
    return run(lambda c: c == 32), z, run(lambda c: 48 <= c <= 57), h, run(lambda c: c != 10), v, h, ok


@settings(max_examples=400, deadline=None)
@given(DATA, st.lists(BYTES, max_size=80).map(bytes), st.data())
def test_each_run_is_found_as_byte_by_byte(data, beyond, draw):
    """At every offset, with the line ending at the end of its bytes and at a drawn place, any
    bytes after it in the buffer (runs must stop at the line's end whatever follows), and the
    window made at the run, 63 bytes before it, halfway from the buffer's start, or nowhere."""
    buf = np.frombuffer(data + beyond, dtype=np.uint8)
    cut = draw.draw(st.integers(0, len(data)))
    for le in {len(data), cut}:
        for i in range(le + 1):
            want = _plain(data, i, le)
            for q in {i, max(i - 63, 0), i // 2}:
                got = _runs(buf, i, le, q)
                assert got[:5] == want[:5] and got[6:] == want[6:], (data, beyond, i, le, q)
                if want[7]:  # the value, where there is one
                    assert int(got[5]) == want[5], (data, beyond, i, le, q)


@settings(max_examples=200, deadline=None)
@given(st.lists(BYTES, max_size=200).map(bytes), st.data())
def test_line_feeds_are_counted(data, draw):
    end = draw.draw(st.integers(0, len(data)))
    start = draw.draw(st.integers(0, end))
    assert TP.count_lf(np.frombuffer(data, dtype=np.uint8), start, end) == data.count(b"\n", start, end)


VALID = {
    "lackey": ["I  0400ab12,4", " L 7ff000001000,8", " S 00000000deadbeef,8"],
    "din": ["0 7ff000001000", "2 0x400000", "1 00000000000001000 extra"],
    "hex": ["0x00007f0002801900", "7fffffffffffffff", "0xabc # comment"],
    "pinatrace": ["0x400000: R 0x7f0002801900", "0x0000000000400008: W 0x00007f0000056440"],
    "drmemtrace": [
        "           3           1:     2765543 ifetch       4 byte(s) @ 0x0000000000400000 48 89 e7   mov    %rsp, %rdi",
        "           4           1:     2765543 read         8 byte(s) @ 0x00007f0002801900 by PC 0x0000000000400000",
        "          12           9:     2765543 write        8 byte(s) @ 0x00007f000355a880 by PC 0x0000000000400008",
        "      123456      100000:          7 <marker: timestamp 13342123>",
    ],
    "perf": [
        "20134 20134 0x0000000000400000 0x0167f0002801900  1168 0x5080144 /usr/bin/prog:main",
        "-1 -1 0x401000 0x016ffff  5 0x1 a:b",
        "20134,20134,0x400000,0x7f0002801900,1168,0x5080144,/usr/bin/prog:main",
        " -1 , 7 , 0X40 , 0xffff ",
    ],
}


PLAIN = {fmt: ("\n".join(v * (1 + 128 // len("".join(v)))) + "\n").encode() for fmt, v in VALID.items()}  # 128 bytes or more


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(sorted(VALID)), st.data())
def test_lines_with_any_byte_changed_read_as_the_regular_expressions_read_them(tmp_path_factory, fmt, draw):
    """Valid lines of a format with bytes replaced, inserted or deleted anywhere (line feeds
    excepted): the parser takes each line as the format's regular expressions do, or names the
    same first bad line."""
    lines = []
    for _ in range(draw.draw(st.integers(1, 6))):
        s = bytearray(draw.draw(st.sampled_from(VALID[fmt])).encode())
        for _ in range(draw.draw(st.integers(0, 3))):
            at = draw.draw(st.integers(0, len(s)))
            c = draw.draw(BYTES.filter(lambda c: c != 10))
            op = draw.draw(st.sampled_from(["put", "insert", "delete"]))
            if op == "insert" or at == len(s):
                s.insert(at, c)
            elif op == "put":
                s[at] = c
            else:
                del s[at]
        lines.append(bytes(s))
    p = tmp_path_factory.mktemp("w") / "t.txt"
    data = b"\n".join(lines) + b"\n" + PLAIN[fmt]  # lines after them: the changed ones are read in windows of 64 bytes too
    p.write_bytes(data)
    want = reference_read(data.decode("ascii", "replace"), fmt)
    try:
        got = [(int(a), int(k)) for aa, kk in T._iter_chunks(p, fmt, 7, True) for a, k in zip(aa, kk)]
    except T.TraceFormatError as e:
        assert isinstance(want, int), f"{e} where the reference reads {want}"
        assert f"t.txt, line {want}: " in str(e)
        return
    assert got == want


def test_a_machine_that_reads_byte_by_byte_gives_the_same_accesses(tmp_path):
    """The parser's byte loops alone (what runs where words are not little-endian): compiled in
    a process that takes the machine for a big-endian one, with a cache of its own."""
    text = {fmt: "\n".join(v) + "\n" for fmt, v in VALID.items()}
    for fmt, t in text.items():
        (tmp_path / f"t.{fmt}").write_text(t)
    code = textwrap.dedent(
        f"""
        import sys
        sys.byteorder = "big"
        import pagesim.sources.traces as T
        from pagesim._kernels import textparse as TP
        assert not TP.WORDS
        for fmt in {sorted(text)!r}:
            got = [(int(a), int(k)) for aa, kk in T._iter_chunks(T.Path({str(tmp_path)!r}) / f"t.{{fmt}}", fmt, 5, True) for a, k in zip(aa, kk)]
            print(fmt, got)
        """
    )
    env = {**os.environ, "PAGESIM_CACHE_DIR": str(tmp_path / "cache")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600, check=True).stdout
    for line in out.splitlines():
        fmt, got = line.split(" ", 1)
        want = reference_read(text[fmt], fmt)
        assert got == str(want), fmt
        assert [(int(a), int(k)) for aa, kk in T._iter_chunks(tmp_path / f"t.{fmt}", fmt, 5, True) for a, k in zip(aa, kk)] == want
    assert len(out.splitlines()) == len(VALID)
    assert Path(tmp_path / "cache").is_dir()
