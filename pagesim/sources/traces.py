"""Real programs' memory traces: valgrind lackey, Dinero 'din', one hex address per line, Pin's
pinatrace, DynamoRIO drmemtrace (its text view), ``perf mem report -D`` and ChampSim.

``read_trace(path)`` checks the whole file once (a malformed line is reported with the file and its
line number, before anything is simulated), notes which 2 MiB blocks it touches (8 bytes a
distinct block: a sorted uint64 array), and returns a
workload that streams the file again in chunks whenever it is simulated: a trace larger than
memory is never loaded whole, and no line is held whole beyond ``MAX_LINE`` (64 KiB) bytes: a
longer one is an error naming the file and the line (a ChampSim record: its record number). gzip
and xz data are decompressed as they are read (recognised by their first bytes; a file named .gz
or .xz that is not such data is an error); a UTF-8
byte-order mark and CRLF line ends are accepted. ``read_trace(..., progress=True)`` shows the
bytes checked. A trace whose layout would map more than ``pagesim.model.layout.MAX_PAGES`` pages, or
need more than ``MAX_REGIONS`` regions (blocks apart from one another), is refused when it is
laid out, before any region is made, with its footprint and the limit.

Formats
  lackey   ``valgrind --tool=lackey --trace-mem=yes``: ``I  addr,size`` (instruction fetch),
           `` L addr,size`` (load), `` S addr,size`` (store), `` M addr,size`` (modify: a load and a
           store of the same bytes, which translate once, so one data access). Lines starting
           with ``==`` (valgrind's messages) and blank lines are skipped.
  din      Dinero III/IV: ``label address`` with label 0 (read), 1 (write), 2 (instruction fetch),
           3 and 4 (escape records: skipped); the address in hex.
  hex      one address per line, hex, with or without 0x; blank lines and # comments skipped;
           every access is a data access.
  pinatrace  Pin's ``pinatrace`` tool (source/tools/ManualExamples/pinatrace.cpp):
           ``0xIP: R 0xADDR`` (a read) or ``0xIP: W 0xADDR`` (a write), data accesses only (the
           tool records no instruction fetch); its closing ``#eof`` and blank lines are skipped.
  drmemtrace DynamoRIO's drmemtrace as its ``view`` tool prints it (``drrun -t drcachesim
           -simulator_type view -indir DIR``; the raw trace files need DynamoRIO's reader): record
           lines ``<record#> <instr#>: <tid> ifetch|read|write <n> byte(s) @ 0xADDR ...`` (or, in
           its older layout, ``<record#>: T<tid> ...``); ifetch is an instruction fetch, read and
           write data accesses; markers (``<marker: ...>``), the header, prefetches and other
           records are skipped, and so are the tool's results and checks printed after the records.
  perf     ``perf mem report -D`` (raw samples): ``PID TID 0xIP 0xADDR ...`` under its
           ``# PID, TID, IP, ADDR, ...`` header (on the first sample line perf prints ADDR after a
           literal ``0x016``: its format string there has ``0x016%x`` for ``0x%016x``, and the
           lines after it are printed with single spaces), or with ``-x ,`` the same fields
           separated by commas; each sample is a data access at ADDR. Samples
           in the kernel's half (ADDR at or above 2**63) or with no address (0) are skipped: a
           sampled trace, so its counts are of the samples, not of the program's accesses.
  champsim ChampSim's binary traces (``.champsimtrace``, usually xz- or gzip-compressed): 64-byte
           little-endian records (ChampSim's ``input_instr``: ip, is_branch, branch_taken, 2
           destination and 4 source register ids, 2 destination and 4 source memory addresses,
           0 when unused). Each record is an instruction fetch at ip, then a load at each nonzero
           source address, then a store at each nonzero destination address, in that order.
A file compressed with gzip or xz is decompressed as it is read, recognised by its first bytes, as
is the format (``detect_format``): the file's name is not needed.
An access is translated at its first byte; one that crosses a page boundary is counted once.
"""

from __future__ import annotations

import gzip
import itertools
import lzma
import os
import re
import struct
import tempfile
import threading
import warnings
import zlib
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .._kernels import textparse as TP
from .._kernels.regions import distinct_blocks
from ..core.check import check_bool, check_choice, check_int
from ..core.files import new_file_mode
from ..core.progress import bar
from ..core.units import format_bytes, parse_page_size
from ..model.layout import Layout
from .workloads import Workload

TEXT_FORMATS = TP.FORMATS  # the text formats, in the byte parser's order (its format codes)
FORMATS = (*TEXT_FORMATS, "champsim")
MAX_ADDRESS = TP.MAX_ADDRESS
_LACKEY = re.compile(r"^(I | L| S| M) ?\s*([0-9A-Fa-f]+),(\d+)\s*$")
# the address ends at the line's end or a byte that is not a letter, a digit or a control byte (a NUL)
_DIN = re.compile(r"^\s*([0-4])\s+(?:0[xX])?([0-9A-Fa-f]+)(?=[^\w\x00-\x08\x0b\x0c\x0e-\x1f]|$)")
_HEX = re.compile(r"^\s*(?:0[xX])?([0-9A-Fa-f]+)\s*$")
_PINATRACE = re.compile(r"^0[xX][0-9A-Fa-f]+: ([RW]) 0[xX]([0-9A-Fa-f]+)\s*$")
# a record's start: "<record#> <instr#>: <tid>", or in the view tool's older layout "<record#>: T<tid>"
_DRMEM_REC = r"^\s*(?:\d+\s+\d+:\s+\d+|\d+:\s+T\d+)\s+"
_DRMEM = re.compile(_DRMEM_REC + r"(ifetch|read|write)\s+\d+ byte\(s\) @ 0[xX]([0-9A-Fa-f]+)\b")
_DRMEM_ACCESS = re.compile(_DRMEM_REC + r"(ifetch|read|write)(\s|$)")  # an access record, well formed or not
_DRMEM_OTHER = re.compile(_DRMEM_REC + r"\S")  # a record of another kind, or a marker
_DRMEM_HEAD = ("Output format:", "<--record#->", "<record#>", "---", "<...>")
# what the view tool prints after the records: its results ("6 : total instructions") and the trace checks
_DRMEM_TRAILER = re.compile(r"^(View tool results:|=+\s*$|Trace invariant checks passed|\s*[\d,]+ : \S)")
# perf's default form prints the first sample's ADDR as "0x016" and then the address in hex (its
# format string, tools/perf/builtin-mem.c dump_raw_samples: "%s0x016%"PRIx64), and every later
# sample's as "0x%"PRIx64 with single spaces (it sets the separator to " " after the first); with
# -x , the fields are separated by commas and ADDR is 0x and the address. An address printed
# unpadded never starts with 0, so "0x016" is the first line's spelling
_PERF = re.compile(r"^\s*-?\d+\s+-?\d+\s+0[xX][0-9A-Fa-f]+\s+0x(?:016)?([0-9A-Fa-f]+)\b")
_PERF_SEP = re.compile(r"^\s*-?\d+\s*,\s*-?\d+\s*,\s*0[xX][0-9A-Fa-f]+\s*,\s*0[xX]([0-9A-Fa-f]+)\s*(,|$)")
_PERF_HEAD = "# PID, TID, IP, ADDR"
GRANULE_SHIFT = 21  # the layout covers the 2 MiB blocks a trace touches


MAX_LINE = 1 << 16  # the longest line read, in bytes: more is not a trace (and is never held whole)
_BLOCK = 1 << 18  # bytes read at a time
_GZIP_MAGIC = b"\x1f\x8b"
_XZ_MAGIC = b"\xfd7zXZ\x00"
# ChampSim's input_instr: 64 bytes, little-endian (ChampSim/ChampSim inc/trace_instruction.h)
CHAMPSIM_RECORD = np.dtype(
    [("ip", "<u8"), ("is_branch", "u1"), ("branch_taken", "u1"), ("dst_reg", "u1", 2), ("src_reg", "u1", 4), ("dst_mem", "<u8", 2), ("src_mem", "<u8", 4)]
)
_UTF8_BOM = b"\xef\xbb\xbf"


class TraceFormatError(ValueError):
    """A trace file that its format does not allow (the message names the file, and the line where known)."""


class UnknownTraceFormat(TraceFormatError):
    """A trace whose format cannot be told from its lines. ``reason`` names the file, the line and
    its text; the message adds how to give the format (``format=``); the command line gives it
    as ``--trace-format``."""

    def __init__(self, reason: str):
        super().__init__(f"{reason}: pass format= one of {', '.join(repr(f) for f in FORMATS)}")
        self.reason = reason


def _short(text: str, n: int = 80) -> str:
    return repr(text if len(text) <= n else text[:n] + "...")


def _line_blocks(path: Path, bar=None):
    """The file at ``path`` as ``(number of the first line, data, start, end, number of LFs in
    data[start:end])``, whole lines (each ends in LF but perhaps the file's last), per block of
    about ``_BLOCK`` bytes, without copying the block: the line a block boundary cuts comes as a
    piece of its own. ``data`` is valid until the next piece is asked for (:func:`_read_blocks`).
    gzip and xz data (known by their first bytes) are decompressed; a UTF-8 byte order mark is
    skipped; UTF-16 is an error. Memory is bounded: a line that runs on past ``MAX_LINE`` bytes
    beyond a block is an error, found without reading the rest of it (a long line inside a block
    is the caller's to find). ``bar``: a tqdm bar advanced by the bytes read from disk
    (compressed bytes for compressed data)."""
    carry = b""
    n = 1  # the number of the line that carry begins

    def done():  # what was read when compressed data cannot be read on
        # the decompressor gives nothing of a block it cannot finish: lines of that last block (up
        # to _BLOCK bytes of text) may still be in the file
        read = f"lines 1 to {n - 1} were read, in whole blocks" if n > 1 else "no whole block could be read"
        return read + f" of {_BLOCK // 1024} KiB of text (the block it stopped in may hold more lines)"

    blocks = _read_blocks(path, bar, done)
    head = b""  # the file's first bytes, enough to see a byte order mark however small the blocks
    for block in blocks:
        head += block
        if len(head) >= len(_UTF8_BOM):
            break
    if head.startswith(_UTF8_BOM):
        head = head[len(_UTF8_BOM) :]
    elif head[:2] in (b"\xff\xfe", b"\xfe\xff"):
        raise TraceFormatError(f"{path}: the file is UTF-16 text; traces are ASCII (convert it, e.g. iconv -f UTF-16 -t ASCII)")
    for block in itertools.chain((head,) if head else (), blocks):
        start = 0
        if carry:
            i = block.find(b"\n")
            if i < 0:
                carry += block
            else:
                head = carry + block[: i + 1]  # the line the boundary cut, whole
                yield n, head, 0, len(head), 1
                n += 1
                carry = b""
                start = i + 1
        if not carry:
            cut = block.rfind(b"\n", start) + 1
            if cut > start:
                lf = TP.count_lf(np.frombuffer(block, dtype=np.uint8), start, cut)
                yield n, block, start, cut, lf
                n += lf
            carry = block[max(cut, start) :]
        if len(carry) - carry.endswith(b"\r") > MAX_LINE:  # (a CR may be the start of a CRLF)
            _too_long(path, n)  # after the lines before it, yielded above
    if carry:
        yield n, carry, 0, len(carry), 0


def _read_blocks(path: Path, bar, done):
    """The file's contents (gzip and xz decompressed: :func:`_unpacked`) in blocks of up to
    ``_BLOCK`` bytes, each a bytearray that the next block overwrites: the caller is done with a
    block when it asks for the next. Compressed data that cannot be read on is an error saying
    ``done()``: what was read."""
    buf = bytearray(_BLOCK)  # one buffer, read into again for each block (no new memory to fault in)
    with open(path, "rb") as raw:
        src, packed = _unpacked(raw, path)
        pos = 0
        while True:
            try:
                got = src.readinto(buf)
            except (EOFError, OSError, zlib.error, lzma.LZMAError) as e:
                _damaged(path, packed, e, done())
            if bar is not None:
                bar.update(raw.tell() - pos)
                pos = raw.tell()
            if not got:
                return
            yield buf if got == len(buf) else buf[:got]


def _split(block: bytes) -> list[str]:
    """The lines of a block of :func:`_line_blocks` as text: bytes that are not ASCII become
    U+FFFD, CRLF line ends are accepted (a CR before each LF, and at the end, is dropped)."""
    text = block.decode("ascii", "replace")
    if "\r" in text:
        text = text.replace("\r\n", "\n")
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # the empty piece after the last newline
    elif lines[-1].endswith("\r"):
        lines[-1] = lines[-1][:-1]
    return lines


def _lines(path: Path, bar=None):
    """The lines of the file at ``path`` as ``(number of the first line, list of str)`` per block
    of :func:`_line_blocks`; a line longer than ``MAX_LINE`` (not counting its LF or CRLF) is an
    error, after the lines before it."""
    for n, data, start, end, _ in _line_blocks(path, bar):
        block = data[start:end]
        lines = _split(block)
        if len(block) > MAX_LINE and max(map(len, lines)) > MAX_LINE:
            i = next(i for i, s in enumerate(lines) if len(s) > MAX_LINE)
            yield n, lines[:i]  # the lines before it are read first (an error there comes first)
            _too_long(path, n + i)
        yield n, lines


def _unpacked(raw, path: Path):
    """(a binary stream of the file's contents, "gzip", "xz" or None): gzip and xz data, known by
    their first bytes, are decompressed as they are read. A name ending in .gz or .xz over other
    data is an error."""
    head = raw.read(6)
    raw.seek(0)
    if head[:2] == _GZIP_MAGIC:
        return gzip.GzipFile(fileobj=raw, mode="rb"), "gzip"
    if head == _XZ_MAGIC:
        return lzma.LZMAFile(raw, mode="rb"), "xz"
    for suffix, what in ((".gz", "gzip"), (".xz", "xz")):
        if path.suffix == suffix:
            raise TraceFormatError(f"{path}: the name ends in {suffix} but the file is not {what} data (it starts with {head[:3]!r})")
    return raw, None


def _damaged(path: Path, packed, e: Exception, done: str):
    """Raise the error for compressed data that cannot be read on (a disk error is raised as it is)."""
    if isinstance(e, OSError) and not isinstance(e, gzip.BadGzipFile):
        raise e  # a disk or permission error: its own message names the file
    what = "ends early (is the file truncated?)" if isinstance(e, EOFError) else "is damaged"
    raise TraceFormatError(f"{path}: the {packed or 'compressed'} data {what}; {done}: {e}") from e


def _records(path: Path, bar=None):
    """A ChampSim trace's records as ``(number of the first record, array of CHAMPSIM_RECORD)`` per
    block of about ``_BLOCK`` bytes (decompressed as :func:`_lines` does). A file that does not end
    on a whole record is an error naming the record."""
    size = CHAMPSIM_RECORD.itemsize
    carry = b""
    n = 1

    def done():  # what was read when compressed data cannot be read on
        return f"records 1 to {n - 1} were read" if n > 1 else "no record could be read"

    for block in _read_blocks(path, bar, done):
        buf = carry + block if carry else block
        whole = len(buf) // size * size
        carry = buf[whole:]
        if whole:
            rec = np.frombuffer(buf[:whole], dtype=CHAMPSIM_RECORD)
            yield n, rec
            n += rec.size
    if carry:
        raise TraceFormatError(f"{path}, record {n}: incomplete: the file ends {len(carry)} bytes into it (a ChampSim record is {size} bytes)")


def _champsim_matrix(rec: np.ndarray) -> np.ndarray:
    """ChampSim records' addresses in the order they are accessed, one row a record: ip, the 4
    source (load) addresses, the 2 destination (store) addresses; 0 where unused."""
    m = np.empty((rec.size, 7), dtype=np.uint64)
    m[:, 0] = rec["ip"]
    m[:, 1:5] = rec["src_mem"]
    m[:, 5:7] = rec["dst_mem"]
    return m


def _champsim_accesses(path: Path, n0: int, rec: np.ndarray):
    """The accesses of ChampSim records ``rec`` (the first is record ``n0``): per record, the
    instruction fetch at ip, the loads at its nonzero source addresses, the stores at its nonzero
    destination addresses. Raises TraceFormatError naming the first record that is not one."""
    flags = rec["is_branch"] | rec["branch_taken"]
    if rec.size and (flags > 1).any():
        i = int(np.argmax(flags > 1))
        raise TraceFormatError(
            f"{path}, record {n0 + i}: is_branch={rec['is_branch'][i]}, branch_taken={rec['branch_taken'][i]}: a ChampSim record holds 0 or 1 "
            "in each (is this a ChampSim trace, and whole from its start?)"
        )
    m = _champsim_matrix(rec)
    keep = m != 0
    keep[:, 0] = True
    kinds = np.zeros((rec.size, 7), dtype=np.uint8)
    kinds[:, 0] = 1
    a = m[keep]
    if a.size and int(a.max()) > MAX_ADDRESS:
        i = int(np.argmax((m > MAX_ADDRESS).any(axis=1)))
        raise TraceFormatError(f"{path}, record {n0 + i}: an address beyond 2**63-1, the largest address pagesim models")
    return a, kinds[keep]


def _too_long(path: Path, n: int):
    raise TraceFormatError(
        f"{path}, line {n}: longer than {MAX_LINE} bytes, the longest line a trace may have "
        "(is this a trace file? valgrind lackey, din and hex lines are a few dozen bytes)"
    )


def _check_path(path) -> Path:
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path={path!r} is not allowed: give the trace file's path as a str or os.PathLike, not {type(path).__name__}")
    p = Path(path)
    if not p.is_file():
        what = "it is a directory" if p.is_dir() else "there is no such file" if not p.exists() else "it is not a regular file"
        raise FileNotFoundError(f"trace path={str(path)!r} is not a file: {what}")
    return p


def detect_format(path) -> str:
    """The trace file's format, told from its contents (after decompression), not its name: binary
    data whose first records are ChampSim's is ``champsim``; text is told by its first meaningful
    lines (module text)."""
    path = _check_path(path)
    with open(path, "rb") as raw:
        src, packed = _unpacked(raw, path)
        try:
            head = src.read(64 * 256)
        except (EOFError, OSError, zlib.error, lzma.LZMAError):
            head = b""  # damaged compressed data: reading it as text below names the error
    if b"\x00" in head[:4096] and head[:2] not in (b"\xff\xfe", b"\xfe\xff"):  # binary, not UTF-16 text
        nul = head.index(b"\x00")
        before = head[:nul]
        lf = before.count(b"\n")
        after = head[nul:].lstrip(b"\x00")[:256]
        after = after[: after.find(b"\x00")] if b"\x00" in after else after
        printable = lambda b: all(32 <= c < 127 or c in (9, 10, 13) for c in b)  # noqa: E731
        # text up to a stray NUL; or NULs first, and text lines after them (a ChampSim record is not)
        text = printable(before) and (len(before) > 0 or (b"\n" in after and printable(after)))
        stray = UnknownTraceFormat(
            f"{path}, line {lf + 1}: a NUL byte (binary data) in what reads as text up to there: "
            "a text trace holds none; a ChampSim trace is binary from its first byte"
        )
        if text and lf:
            raise stray
        rec = np.frombuffer(head[: len(head) // 64 * 64], dtype=CHAMPSIM_RECORD)
        if not rec.size:
            if text:
                raise stray
            raise UnknownTraceFormat(f"{path}: binary data shorter than one ChampSim record ({len(head)} bytes; a record is 64)")
        bad = ((rec["is_branch"] | rec["branch_taken"]) > 1) | (rec["ip"] == 0)
        if not bad.any():
            return "champsim"
        if text:
            raise stray
        i = int(np.argmax(bad))
        raise UnknownTraceFormat(
            f"{path}: binary data that is not a ChampSim trace: record {i + 1} has is_branch={rec['is_branch'][i]}, "
            f"branch_taken={rec['branch_taken'][i]}, ip={int(rec['ip'][i]):#x} (a record holds 0 or 1 in each flag, and an ip)"
        )
    for n0, lines in _lines(path):
        for n, s in enumerate(lines, start=n0):
            if s.startswith(_PERF_HEAD):
                return "perf"
            if not s.strip() or s.startswith("#"):
                continue
            if s.startswith("==") or _LACKEY.match(s):
                return "lackey"
            if s.strip().startswith(_DRMEM_HEAD) or _DRMEM.match(s):
                return "drmemtrace"
            if _PINATRACE.match(s):
                return "pinatrace"
            if _PERF.match(s) or _PERF_SEP.match(s):
                return "perf"
            if _DIN.match(s) and len(s.split()) >= 2:
                return "din"
            if _HEX.match(s):
                return "hex"
            raise UnknownTraceFormat(f"{path}, line {n}: cannot tell the trace format from {_short(s, 60)}")
    raise TraceFormatError(f"{path}: the file holds no accesses")


def _parse_line(s: str, fmt: str):
    """(address, kind) or None for a line to skip; raises ValueError for a malformed line."""
    if fmt == "lackey":
        if not s.strip() or s.startswith("=="):
            return None
        m = _LACKEY.match(s)
        if not m:
            raise ValueError("expected 'I  addr,size', ' L addr,size', ' S addr,size' or ' M addr,size'")
        return int(m.group(2), 16), 1 if m.group(1) == "I " else 0
    if fmt == "din":
        if not s.strip():
            return None
        m = _DIN.match(s)
        if not m:
            raise ValueError("expected 'label address' with label 0-4 and a hex address")
        label = int(m.group(1))
        if label >= 3:
            return None
        return int(m.group(2), 16), 1 if label == 2 else 0
    if fmt == "pinatrace":
        if not s.strip() or s.startswith("#"):
            return None
        m = _PINATRACE.match(s)
        if not m:
            raise ValueError("expected '0xIP: R 0xADDR' or '0xIP: W 0xADDR' (Pin's pinatrace)")
        return int(m.group(2), 16), 0
    if fmt == "drmemtrace":
        if not s.strip() or s.strip().startswith(_DRMEM_HEAD) or _DRMEM_TRAILER.match(s):
            return None
        m = _DRMEM.match(s)
        if m:
            return int(m.group(2), 16), 1 if m.group(1) == "ifetch" else 0
        if _DRMEM_ACCESS.match(s):
            raise ValueError("expected '<kind> <n> byte(s) @ 0xADDR' in an ifetch, read or write record (drmemtrace's view tool)")
        if _DRMEM_OTHER.match(s):
            return None  # a marker, a prefetch, a thread's start or end
        raise ValueError("expected '<record#> <instr#>: <tid> <record>' (drmemtrace's view tool)")
    if fmt == "perf":
        if not s.strip() or s.startswith("#"):
            return None
        m = _PERF.match(s) or _PERF_SEP.match(s)
        if not m:
            raise ValueError("expected 'PID TID 0xIP 0xADDR ...' or 'PID,TID,0xIP,0xADDR,...' (perf mem report -D)")
        a = int(m.group(1), 16)
        return None if a == 0 or a > MAX_ADDRESS else (a, 0)  # no address, or the kernel's
    t = s.split("#", 1)[0]
    if not t.strip():
        return None
    m = _HEX.match(t)
    if not m:
        raise ValueError("expected one hex address")
    return int(m.group(1), 16), 0


def _parse_block(path: Path, n0: int, data: bytes, start: int, end: int, lf: int, fmt: str):
    """The accesses of ``data[start:end]``, lines of :func:`_line_blocks` (its first line is line
    ``n0``, ``lf`` the number of LFs in it) as (addresses uint64, kinds uint8): the numba parser
    (``pagesim._kernels.textparse``) reads the plain lines, and each line it leaves is read by
    :func:`_parse_line`, which takes it, skips it or names the error with the file and the line."""
    buf = np.frombuffer(data, dtype=np.uint8)[:end]
    cap = lf + 1  # at most one access a line
    out_a = np.empty(cap, dtype=np.uint64)
    out_k = np.empty(cap, dtype=np.uint8)
    code = TP.FORMATS.index(fmt)
    pos, k = start, 0
    n = n0
    while True:
        pos, k, passed, status = TP.parse_text(buf, pos, code, MAX_LINE, out_a, out_k, k)
        n += passed
        if status == TP.DONE:
            return out_a[:k], out_k[:k]
        if status == TP.TOO_LONG:
            _too_long(path, n)
        e = data.find(b"\n", pos, end)
        e = end if e < 0 else e
        (s,) = _split(data[pos:e] + b"\n")
        try:
            r = _parse_line(s, fmt)
        except ValueError as err:
            raise TraceFormatError(f"{path}, line {n}: {err}; got {_short(s)}") from None
        if r is not None:
            if r[0] > MAX_ADDRESS:
                raise TraceFormatError(f"{path}, line {n}: address {_short(hex(r[0]), 40)[1:-1]} is beyond 2**63-1, the largest address pagesim models")
            out_a[k], out_k[k] = r
            k += 1
        n += 1
        pos = e + 1
        if pos >= end:
            return out_a[:k], out_k[:k]


def accesses(path, format: str, chunk: int = 1 << 20):  # noqa: A002
    """Every access of the trace file at ``path`` in ``format`` (one of ``FORMATS``, or "auto":
    see :func:`detect_format`), checked line by line, as (addresses uint64, kinds uint8: 0 data,
    1 instruction) arrays of ``chunk``."""
    path = _check_path(path)
    fmt = detect_format(path) if format == "auto" else check_choice("format", format, FORMATS)
    yield from _iter_chunks(path, fmt, check_int("chunk", chunk, 1), True)


def _iter_chunks(path: Path, fmt: str, chunk: int, want_kinds: bool, bar=None):
    """The accesses of the file as (addresses uint64, kinds uint8 or None) arrays of ``chunk``
    accesses (the last may be shorter)."""
    out_a = np.empty(chunk, dtype=np.uint64)
    out_k = np.empty(chunk, dtype=np.uint8)
    k = 0
    if fmt == "champsim":
        blocks = (_champsim_accesses(path, n0, rec) for n0, rec in _records(path, bar))
    else:
        blocks = (_parse_block(path, n0, data, start, end, lf, fmt) for n0, data, start, end, lf in _line_blocks(path, bar))
    for a, kk in blocks:
        i = 0
        while i < a.size:
            take = min(chunk - k, a.size - i)
            out_a[k : k + take] = a[i : i + take]
            out_k[k : k + take] = kk[i : i + take]
            k += take
            i += take
            if k == chunk:
                yield out_a, (out_k if want_kinds else None)
                out_a = np.empty(chunk, dtype=np.uint64)  # a new one: the caller keeps what it was given
                out_k = np.empty(chunk, dtype=np.uint8)
                k = 0
    if k:
        yield out_a[:k].copy(), (out_k[:k].copy() if want_kinds else None)


def _bar(progress: bool, total: int, desc: str, unit: str):
    if not progress:
        return None

    return bar(total=total, desc=desc, unit=unit, unit_scale=True, unit_divisor=1024 if unit == "B" else 1000, leave=False)


@dataclass(frozen=True)
class Trace(Workload):
    """A trace file as a workload (see :func:`read_trace`)."""

    name = "trace"
    path: str = ""
    format: str = "lackey"
    instructions: bool = True
    accesses: int = 0
    instr_accesses: int = 0
    #: the sorted distinct 2 MiB block numbers the trace touches, as uint64 bytes (8 bytes a block)
    block_data: bytes = field(default=b"", repr=False)
    #: the parse-once cache of the decoded accesses beside the trace ("" when not kept)
    cache: str = ""
    #: the file as read_trace read it (its size, modification and status-change times, inode, as
    #: for the parse-once cache): a simulation refuses a file that has changed since, as the
    #: summary (accesses, blocks) would no longer be its own; a copy that keeps the modification
    #: time (cp -p, rsync) counts as changed
    stamp: tuple = ()

    def spans(self):
        return []

    @property
    def blocks(self) -> np.ndarray:
        """The sorted distinct 2 MiB block numbers (``address >> 21``) the trace touches: a
        read-only uint64 array over ``block_data`` (no copy)."""
        return np.frombuffer(self.block_data, dtype=np.uint64)

    @property
    def n_accesses(self) -> int:
        return self.accesses if self.instructions else self.accesses - self.instr_accesses

    @property
    def has_kinds(self) -> bool:
        return self.instructions and self.instr_accesses > 0

    @property
    def working_set(self) -> int:
        return len(self.block_data) // 8 << GRANULE_SHIFT

    @property
    def label(self) -> str:
        return f"trace({Path(self.path).name}, {self.n_accesses:,})"

    def params(self):
        return {"path": self.path, "format": self.format, "instructions": self.instructions, "accesses": self.n_accesses}

    def covering_layout(self, page_size, machine=None) -> Layout:
        """Regions over the 2 MiB blocks the trace touches (merged when adjacent), all of
        ``page_size`` (blocks of the page size when it is larger). A footprint of more than
        ``MAX_PAGES`` pages, or blocks apart in more than ``MAX_REGIONS`` places, is refused
        before any region is made: the error names the footprint and the limit. So is an address
        in the last block below 2**63 (regions end below it), or, given ``machine``, one beyond its
        virtual address space: the error names the line (:meth:`check_covered`)."""
        p = parse_page_size(page_size)
        g = max(1 << GRANULE_SHIFT, p)
        b = self.blocks
        if g > 1 << GRANULE_SHIFT:  # sorted, so the distinct larger blocks are where the value changes
            b = b >> np.uint64(g.bit_length() - 1 - GRANULE_SHIFT)
            b = b[np.concatenate(([True], b[1:] != b[:-1]))]
        self.check_covered(machine, (int(b[-1]) + 1) * g, g)
        return Layout.covering_blocks(b, g, p, f"trace {self.path!r}")

    def check_covered(self, machine, top: int, block: int) -> None:
        """Name the first line whose address a covering of ``block``-sized blocks that ends at
        ``top`` cannot hold: one beyond the virtual address space of ``machine`` (when given), or
        one in the last block below 2**63 (regions end below 2**63). Reads the file again only
        when there is one."""
        va = 1 << min(machine.va_bits if machine is not None else 63, 63)
        if top <= va and top < 1 << 63:
            return
        limit = min(va, (1 << 63) - block)
        path = Path(self.path)
        for where, addr in self._located(limit):
            if limit == va:
                raise ValueError(
                    f"{path}, {where}: address {addr:#x} is beyond the virtual address space of machine {machine.name!r} "
                    f"({machine.va_bits}-bit: addresses below {va:#x})"
                )
            raise ValueError(
                f"{path}, {where}: address {addr:#x} lies in the last {format_bytes(block)} below 2**63: a trace is covered by "
                f"whole {format_bytes(block)} blocks, and regions end below 2**63"
            )

    def _located(self, limit: int = 0):
        """(where, address) of each access at or above ``limit`` this workload simulates: where
        is "line N", or "record N" in a ChampSim trace."""
        path = Path(self.path)
        if self.format == "champsim":
            for n0, rec in _records(path):
                m = _champsim_matrix(rec)
                if not self.instructions:
                    m[:, 0] = 0
                for i in np.nonzero((m >= np.uint64(max(limit, 1))).any(axis=1))[0]:
                    yield f"record {n0 + int(i)}", int(m[i][m[i] >= np.uint64(max(limit, 1))][0])
            return
        for n0, lines in _lines(path):
            for n, s in enumerate(lines, start=n0):
                r = _parse_line(s, self.format)
                if r is None or r[0] < limit or (r[1] and not self.instructions):
                    continue
                yield f"line {n}", r[0]

    def _unchanged(self, path: Path) -> None:
        try:
            now = _cache_key(path)
        except OSError as e:
            raise TraceFormatError(f"{path}: the trace read_trace read cannot be read now ({e.strerror or e})") from None
        if self.stamp and now != tuple(self.stamp):
            raise TraceFormatError(f"{path} has changed since read_trace read it (its size, times or inode differ): read it again with read_trace")

    def chunks(self, bases=(), chunk: int = 1 << 20, seed: int = 0):
        chunk = check_int("chunk", chunk, 1)
        path = Path(self.path)
        self._unchanged(path)
        yield from self._chunks(path, chunk)
        self._unchanged(path)  # not changed while it was read either

    def _chunks(self, path: Path, chunk: int):
        kept = _kept_chunks(path, self.format, chunk)
        cached = _cache_read(path, self.format, chunk) if self.cache and kept is None else None
        for a, k in kept if kept is not None else cached if cached is not None else _iter_chunks(path, self.format, chunk, True):
            if not self.instructions:
                keep = k == 0
                a = a[keep]
                if a.size:
                    yield a, None
            else:
                yield a, (k if self.has_kinds else None)


def _merge(merged: np.ndarray, new: np.ndarray) -> np.ndarray:
    """The sorted distinct values of two sorted distinct uint64 arrays (about the two arrays'
    memory again, as a set union takes none of Python's per-object bytes)."""
    if merged.size == 0:
        return new
    at = np.searchsorted(merged, new)
    inside = at < merged.size
    fresh = np.ones(new.size, dtype=bool)
    fresh[inside] = merged[at[inside]] != new[inside]
    return np.insert(merged, at[fresh], new[fresh])


class _Blocks:
    """The distinct 2 MiB blocks of the accesses seen so far, 8 bytes a block: each chunk's
    distinct blocks wait in a list and join the sorted array when they are as many as it holds
    (at least 2**16), so each block is merged O(log n) times."""

    def __init__(self):
        self.merged = np.empty(0, dtype=np.uint64)
        self.pending: list[np.ndarray] = []
        self.waiting = 0

    def add(self, addresses: np.ndarray) -> None:
        if addresses.size:
            b = distinct_blocks(addresses, GRANULE_SHIFT)
            self.pending.append(b)
            self.waiting += b.size
            if self.waiting >= max(self.merged.size, 1 << 16):
                self.flush()

    def flush(self) -> np.ndarray:
        if self.pending:
            new = self.pending[0] if len(self.pending) == 1 else np.unique(np.concatenate(self.pending))
            self.pending, self.waiting = [], 0
            self.merged = _merge(self.merged, new)
        return self.merged


# The parse-once cache: the decoded accesses of a trace in a file beside it (``NAME.pagesim``), a
# 64-byte header (magic, version, format, the trace's size, mtime and ctime in ns and inode,
# accesses, instruction fetches) and then 9 bytes an access (the address, little-endian, and its
# kind). It is used while the trace's size, mtime, ctime and inode are those it was written for
# (ctime cannot be set back by a program, so a copy with its mtime kept still counts as changed),
# and rewritten otherwise.
CACHE_SUFFIX = ".pagesim"
_CACHE_HEAD = struct.Struct("<8sII7Q")  # magic, version, format, the trace's key (4), accesses, fetches, CRC-32 of the records
_CACHE_MAGIC = b"PAGESIMT"
_CACHE_VERSION = 3
CACHED = np.dtype([("a", "<u8"), ("k", "u1")])


def cache_path(path) -> Path:
    """Where the parse-once cache of the trace at ``path`` lives: beside it, ``NAME.pagesim``."""
    p = Path(path)
    return p.with_name(p.name + CACHE_SUFFIX)


def _cache_key(path: Path) -> tuple[int, int, int, int]:
    st = path.stat()
    return st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino


def _cache_header(path: Path, fmt: str):
    """(accesses, instruction fetches) of a cache that is valid for the trace at ``path`` read as
    ``fmt`` ("auto": any format; then also the format), or None."""
    c = cache_path(path)
    try:
        with open(c, "rb") as f:
            head = f.read(_CACHE_HEAD.size)
        length = c.stat().st_size
    except OSError:
        return None
    if len(head) != _CACHE_HEAD.size:
        return None
    magic, version, code, size, mtime, ctime, ino, n, ni, crc = _CACHE_HEAD.unpack(head)
    if magic != _CACHE_MAGIC or version != _CACHE_VERSION or code >= len(FORMATS) or (size, mtime, ctime, ino) != _cache_key(path):
        return None
    if fmt != "auto" and FORMATS[code] != fmt or length != _CACHE_HEAD.size + n * CACHED.itemsize:
        return None
    return n, ni, FORMATS[code], crc


def _cache_read(path: Path, fmt: str, chunk: int):
    """The accesses of a valid cache as (addresses, kinds) arrays of ``chunk``, or None."""
    head = _cache_header(path, fmt)
    if head is None:
        return None
    n, crc = head[0], head[3]
    rec = np.memmap(cache_path(path), dtype=CACHED, mode="r", offset=_CACHE_HEAD.size, shape=(n,)) if n else np.zeros(0, dtype=CACHED)

    def chunks():
        got = 0
        for i in range(0, n, chunk):
            part = rec[i : i + chunk]
            got = zlib.crc32(memoryview(part).cast("B"), got)
            a, k = np.ascontiguousarray(part["a"]), np.ascontiguousarray(part["k"])
            if a.size and (int(a.max()) > MAX_ADDRESS or int(k.max()) > 1):  # what a trace would be refused for
                raise TraceFormatError(f"{cache_path(path)}: the cache of {path.name} is damaged (accesses {i + 1}-{i + a.size}): delete it")
            yield a, k
        if got != crc:  # a damage within range: the simulation that read it fails, never counts it
            raise TraceFormatError(f"{cache_path(path)}: the cache of {path.name} is damaged (its records' checksum differs): delete it")

    return chunks()


class _CacheWriter:
    """Writes a cache beside the trace as it is read: to a temporary file, renamed into place only
    when the whole trace was read (a trace with an error leaves no cache)."""

    def __init__(self, path: Path, fmt: str):
        self.path, self.fmt = path, fmt
        self.target = cache_path(path)
        self.key = _cache_key(path)
        fd, tmp = tempfile.mkstemp(prefix=f".{self.target.name}.", suffix=".tmp", dir=self.target.parent)  # one per writer
        os.fchmod(fd, new_file_mode())  # mkstemp's 0o600 would keep the cache from whoever may read the trace
        self.tmp = Path(tmp)
        self.f = os.fdopen(fd, "wb")
        self.f.write(bytes(_CACHE_HEAD.size))
        self.crc = 0

    def add(self, a: np.ndarray, k: np.ndarray) -> None:
        rec = np.empty(a.size, dtype=CACHED)
        rec["a"], rec["k"] = a, k
        b = rec.tobytes()
        self.crc = zlib.crc32(b, self.crc)
        self.f.write(b)

    def finish(self, n: int, ni: int) -> None:
        self.f.seek(0)
        self.f.write(_CACHE_HEAD.pack(_CACHE_MAGIC, _CACHE_VERSION, FORMATS.index(self.fmt), *self.key, n, ni, self.crc))
        self.f.flush()
        os.fsync(self.f.fileno())
        self.f.close()
        if _cache_key(self.path) != self.key:  # the trace changed while it was read
            self.abort()
            return
        try:
            os.replace(self.tmp, self.target)
        except OSError as e:
            self.tmp.unlink(missing_ok=True)
            warnings.warn(f"{self.path}: no parse-once cache ({self.target} cannot be written: {e.strerror or e}); the trace is read as it is", stacklevel=3)

    def abort(self) -> None:
        self.f.close()
        self.tmp.unlink(missing_ok=True)


# The decoded accesses of the traces parsed last, kept in this process so that the simulations
# after read_trace do not parse the file again: at most KEEP_BYTES of them (9 bytes an access), the
# least recently read dropped first. A trace whose file changed since (its size, mtime, ctime or
# inode) is parsed again. A trace larger than KEEP_BYTES is not kept: each simulation parses it, or
# reads its parse-once cache file (read_trace(..., cache=True)). While a trace is being kept, its
# chunks and their concatenation are both in memory for a moment (twice its size).
KEEP_BYTES = 256 << 20
_kept: OrderedDict = OrderedDict()  # (path, format) -> (file key, addresses, kinds)
_kept_lock = threading.Lock()  # simulations of a sweep's threads read _kept at once


def _keep(path: Path, fmt: str, key, parts) -> None:
    size = sum(a.nbytes + k.nbytes for a, k in parts)
    with _kept_lock:  # room first, then the concatenation
        _kept.pop((str(path), fmt), None)
        while _kept and sum(v[1].nbytes + v[2].nbytes for v in _kept.values()) + size > KEEP_BYTES:
            _kept.popitem(last=False)
    a = np.concatenate([x for x, _ in parts]) if parts else np.zeros(0, dtype=np.uint64)
    k = np.concatenate([x for _, x in parts]) if parts else np.zeros(0, dtype=np.uint8)
    parts.clear()
    with _kept_lock:
        _kept[(str(path), fmt)] = (key, a, k)


def _kept_chunks(path: Path, fmt: str, chunk: int):
    """The kept accesses of the trace at ``path`` as (addresses, kinds) arrays of ``chunk`` (copies:
    the caller may change them), or None when they are not kept or the file changed since."""
    with _kept_lock:
        got = _kept.get((str(path), fmt))
    if got is None:
        return None
    try:
        same = _cache_key(path) == got[0]
    except OSError:
        same = False
    with _kept_lock:
        if not same:
            if _kept.get((str(path), fmt)) is got:
                del _kept[(str(path), fmt)]
            return None
        if (str(path), fmt) in _kept:
            _kept.move_to_end((str(path), fmt))
    _, a, k = got
    return ((a[i : i + chunk].copy(), k[i : i + chunk].copy()) for i in range(0, a.size, chunk))


def _summary(chunks, instructions: bool, writer, parts=None):
    """(accesses, instruction fetches, the distinct 2 MiB blocks) of ``chunks``; each chunk also to
    ``writer`` when there is one, and to the list ``parts`` while the accesses fit in
    ``KEEP_BYTES`` (``parts`` is emptied when they do not)."""
    n = ni = 0
    blocks = _Blocks()
    for a, k in chunks:
        n += a.size
        ni += int(k.sum())
        blocks.add(a if instructions else a[k == 0])
        if writer is not None:
            writer.add(a, k)
        if parts is not None and n * CACHED.itemsize <= KEEP_BYTES:
            parts.append((a, k))
        elif parts:
            parts.clear()
    return n, ni, blocks


def read_trace(path, format: str = "auto", instructions: bool = True, progress: bool = False, cache: bool = False) -> Trace:  # noqa: A002
    """Check and summarise the trace at ``path``; returns a :class:`Trace` workload to pass to
    ``simulate(machine, trace, page_size=...)``. ``instructions=False`` keeps data accesses only.
    ``progress``: a progress bar of the bytes checked (the check reads the whole file once).
    The distinct 2 MiB blocks the accesses touch are kept at 8 bytes a block, and the decoded
    accesses of a trace of up to ``KEEP_BYTES`` / 9 accesses are kept in this process, so that
    the simulations of the trace read them instead of parsing the file again (while it is
    unchanged). The summary is the file's as read here: a simulation of the returned Trace refuses
    the file once it has changed (its size, modification or status-change time, or inode, as for
    the cache below; read it again with read_trace).

    ``cache=True`` keeps the decoded accesses in a file beside the trace (:func:`cache_path`, 9
    bytes an access): this check writes it, and every later read of the trace (each simulation,
    and the next ``read_trace`` while the trace is unchanged: its size, modification and
    status-change times and inode) reads it instead of parsing the trace again. A damaged cache is
    read around and written again; a directory that cannot be written gets no cache (a
    :class:`UserWarning` says so); the trace is then read as without one."""
    p = _check_path(path)
    check_choice("format", format, ("auto", *FORMATS))
    for name, v in (("instructions", instructions), ("progress", progress), ("cache", cache)):
        check_bool(name, v)
    fmt = detect_format(p) if format == "auto" else format
    stamp = _cache_key(p)
    known = _cache_header(p, fmt) if cache else None
    writer = None
    if cache and known is None:
        try:
            writer = _CacheWriter(p, fmt)
        except OSError as e:
            warnings.warn(f"{p}: no parse-once cache ({cache_path(p)} cannot be written: {e.strerror or e}); the trace is read as it is", stacklevel=2)
    if known:
        try:
            n, ni, blocks = _summary(_cache_read(p, fmt, 1 << 18), instructions, None)
        except TraceFormatError as e:  # a damaged cache: read the trace itself, and write the cache again
            warnings.warn(f"{e}; the trace is read again", stacklevel=2)
            cache_path(p).unlink(missing_ok=True)
            return read_trace(p, format=format, instructions=instructions, progress=progress, cache=cache)
    else:
        bar = _bar(progress, p.stat().st_size, f"checking {p.name}", "B")
        key, parts = _cache_key(p), []
        try:
            n, ni, blocks = _summary(_iter_chunks(p, fmt, 1 << 18, True, bar), instructions, writer, parts)
            if n * CACHED.itemsize <= KEEP_BYTES:
                _keep(p, fmt, key, parts)
            if writer is not None:
                writer.finish(n, ni)
                writer = None
        finally:
            if writer is not None:
                writer.abort()
            if bar is not None:
                bar.close()
    if n == 0 or (not instructions and n == ni):
        raise TraceFormatError(f"{p}: the file holds no {'data ' if not instructions else ''}accesses")
    if _cache_key(p) != stamp:
        raise TraceFormatError(f"{p} changed while it was read (its size, times or inode differ): read it again once it is complete")
    return Trace(
        path=str(p.absolute()),  # a later os.chdir does not lose it
        format=fmt,
        instructions=bool(instructions),
        accesses=n,
        instr_accesses=ni,
        block_data=blocks.flush().tobytes(),
        cache=str(cache_path(p)) if cache and _cache_header(p, fmt) else "",
        stamp=stamp,
    )
