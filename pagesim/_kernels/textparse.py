"""The trace reader's byte parser: whole lines of a text trace, parsed in numba.

Model (the reference is ``pagesim.sources.traces._parse_line``, the regular expressions that
define each format, and ``tests/sources/test_traces.py`` requires the block reader to give exactly
what reading line by line with it gives, or the same first error):

- The parser reads a line only when what the reference's expression reads of it is in the plain
  form of its format: ASCII, spaces as the only whitespace (a final CR of a CRLF is dropped), hex
  addresses of at most 16 significant digits and at most 2**63 - 1. It takes the line's access,
  or skips the line, exactly as the reference would; what the expression does not read (a
  comment, the rest of a din or perf line, a drmemtrace record's details) is not looked at.
- Any other line (a tab, a byte beyond ASCII, an unusual header, anything malformed) stops it:
  it returns the line's position and the caller reads that one line with the reference, which
  takes it, skips it or names the error. So the parser never decides anything the reference
  would decide otherwise; it only makes the common lines fast.
- A line longer than ``max_line`` bytes (its final CR not counted) stops it too, with its own
  status, as the reference reader refuses it.

Formats (codes as ``FORMATS``): lackey ``I  HEX,N`` / `` L|S|M HEX,N``, lines starting ``==`` and
blank lines skipped; din ``L HEX ...`` with label 0-4 (3 and 4 skipped); hex ``HEX`` or
``0xHEX`` with an optional ``#`` comment, comment lines skipped; pinatrace ``0xIP: R|W 0xHEX``,
``#`` lines skipped; drmemtrace ``REC INSTR: TID KIND ...``: KIND ifetch, read or write with
``N byte(s) @ 0xHEX`` is an access, any other KIND a record to skip; perf ``PID TID 0xIP
0x016HEX`` (perf's own spelling of the address), ``#`` lines skipped, an address of 0 or of the
kernel's half skipped (the comma-separated form goes to the reference).
"""

import numpy as np
from llvmlite import ir as llvm_ir
from numba.core import types
from numba.extending import intrinsic

from ._jit import jit
from .rules import inline

FORMATS = ("lackey", "din", "hex", "pinatrace", "drmemtrace", "perf")
DONE, FALLBACK, TOO_LONG = 0, 1, 2
MAX_ADDRESS = (1 << 63) - 1
SP, LF, CR = 32, 10, 13


@intrinsic
def _at(typingctx, p, i):
    """The byte at address ``p + i``: how the line functions read the buffer (the byte ``buf[i]``
    of the array whose data is at ``p``). Nothing is checked: every caller keeps ``i`` below the
    line's end."""
    sig = types.uint8(types.uintp, types.intp)

    def codegen(context, builder, signature, args):
        a, j = args
        return builder.load(builder.inttoptr(builder.add(a, j), llvm_ir.IntType(8).as_pointer()))

    return sig, codegen


# each byte's value as a hex digit, -1 for a byte that is not one
HEX = np.full(256, -1, dtype=np.int64)
HEX[48:58] = np.arange(10)
HEX[97:103] = np.arange(10, 16)
HEX[65:71] = np.arange(10, 16)


@inline
def _hexval(c):
    """The value of hex digit byte ``c``, or -1."""
    return HEX[c]


@inline
def _word(c):
    """Whether byte ``c`` is a regular-expression word character ([A-Za-z0-9_])."""
    return (48 <= c <= 57) or (65 <= c <= 90) or (97 <= c <= 122) or c == 95


@inline
def _hex(p, i, le):
    """(value, position after, ok) of the hex digits at ``i``: ok is False when there are none,
    more than 16 significant ones, or the value exceeds 2**63 - 1."""
    v = np.uint64(0)
    sig = 0
    j = i
    while j < le:
        d = _hexval(_at(p, j))
        if d < 0:
            break
        if sig > 0 or d > 0:
            sig += 1
        v = (v << np.uint64(4)) | np.uint64(d)
        j += 1
    ok = j > i and sig <= 16 and v <= np.uint64(MAX_ADDRESS)
    return v, j, ok


@inline
def _digits(p, i, le):
    """The position after the decimal digits at ``i`` (``i`` when there are none)."""
    j = i
    while j < le and 48 <= _at(p, j) <= 57:
        j += 1
    return j


@inline
def _spaces(p, i, le):
    j = i
    while j < le and _at(p, j) == SP:
        j += 1
    return j


@inline
def _prefixed_hex(p, i, le):
    """``0x`` or ``0X`` and hex digits at ``i``: (value, position after, ok) as :func:`_hex`."""
    if i + 1 < le and _at(p, i) == 48 and (_at(p, i + 1) == 120 or _at(p, i + 1) == 88):
        return _hex(p, i + 2, le)
    return np.uint64(0), i, False


@inline
def _skip_prefixed_hex(p, i, le):
    """The position after ``0x`` or ``0X`` and one or more hex digits at ``i`` of any value, or -1."""
    if i + 1 < le and _at(p, i) == 48 and (_at(p, i + 1) == 120 or _at(p, i + 1) == 88):
        j = i + 2
        while j < le and _hexval(_at(p, j)) >= 0:
            j += 1
        if j > i + 2:
            return j
    return -1


@inline
def _lackey(p, i, le):
    """A lackey line at bytes [i, le) of address p that is not all spaces: (kind, value) as :func:`_line`."""
    if le - i >= 2 and _at(p, i) == 61 and _at(p, i + 1) == 61:  # "=="
        return 2, np.uint64(0)
    if le - i < 3:
        return 3, np.uint64(0)
    a, b = _at(p, i), _at(p, i + 1)
    if a == 73 and b == SP:  # "I "
        kind = 1
    elif a == SP and (b == 76 or b == 83 or b == 77):  # " L", " S", " M"
        kind = 0
    else:
        return 3, np.uint64(0)
    j = _spaces(p, i + 2, le)
    v, j, ok = _hex(p, j, le)
    if not ok or j >= le or _at(p, j) != 44:  # ","
        return 3, np.uint64(0)
    k = _digits(p, j + 1, le)
    if k == j + 1 or _spaces(p, k, le) != le:
        return 3, np.uint64(0)
    return kind, v


@inline
def _din(p, i, le):
    """A din line at bytes [i, le) of address p that is not all spaces: (kind, value) as :func:`_line`."""
    j = _spaces(p, i, le)
    label = np.int64(_at(p, j)) - 48
    if not 0 <= label <= 4 or j + 1 >= le or _at(p, j + 1) != SP:
        return 3, np.uint64(0)
    j = _spaces(p, j + 1, le)
    if j + 1 < le and _at(p, j) == 48 and (_at(p, j + 1) == 120 or _at(p, j + 1) == 88):
        if j + 2 >= le or _hexval(_at(p, j + 2)) < 0:
            return 3, np.uint64(0)
        j += 2
    v, k, ok = _hex(p, j, le)
    if not ok or (k < le and _word(_at(p, k))):
        return 3, np.uint64(0)
    if label >= 3:
        return 2, np.uint64(0)
    return (1 if label == 2 else 0), v


@inline
def _hexline(p, i, le):
    """A hex line at bytes [i, le) of address p that is not all spaces: (kind, value) as :func:`_line`."""
    j = _spaces(p, i, le)
    if _at(p, j) == 35:  # "#": a comment line
        return 2, np.uint64(0)
    if j + 1 < le and _at(p, j) == 48 and (_at(p, j + 1) == 120 or _at(p, j + 1) == 88):
        if j + 2 >= le or _hexval(_at(p, j + 2)) < 0:
            return 3, np.uint64(0)
        j += 2
    v, k, ok = _hex(p, j, le)
    if not ok:
        return 3, np.uint64(0)
    k = _spaces(p, k, le)
    if k == le or _at(p, k) == 35:
        return 0, v
    return 3, np.uint64(0)


@inline
def _pinatrace(p, i, le):
    """A pinatrace line at bytes [i, le) of address p that is not all spaces: (kind, value) as :func:`_line`."""
    if _at(p, i) == 35:
        return 2, np.uint64(0)
    j = _skip_prefixed_hex(p, i, le)
    if j < 0 or j + 4 > le or _at(p, j) != 58 or _at(p, j + 1) != SP or (_at(p, j + 2) != 82 and _at(p, j + 2) != 87) or _at(p, j + 3) != SP:
        return 3, np.uint64(0)
    v, k, ok = _prefixed_hex(p, j + 4, le)
    if not ok or _spaces(p, k, le) != le:
        return 3, np.uint64(0)
    return 0, v


@inline
def _drmemtrace(p, i, le):
    """A drmemtrace line at bytes [i, le) of address p that is not all spaces: (kind, value) as :func:`_line`."""
    j = _spaces(p, i, le)
    k = _digits(p, j, le)
    if k == j or k >= le or _at(p, k) != SP:
        return 3, np.uint64(0)
    j = _spaces(p, k, le)
    k = _digits(p, j, le)
    if k == j or k >= le or _at(p, k) != 58:  # ":"
        return 3, np.uint64(0)
    j = _spaces(p, k + 1, le)
    if j == k + 1:
        return 3, np.uint64(0)
    k = _digits(p, j, le)
    if k == j or k >= le or _at(p, k) != SP:
        return 3, np.uint64(0)
    j = _spaces(p, k, le)
    if j >= le:
        return 3, np.uint64(0)
    t = j
    while t < le and _at(p, t) > SP:
        t += 1
    if t < le and _at(p, t) != SP:
        return 3, np.uint64(0)  # a control byte in the record's kind: the reference decides
    n = t - j
    kind = -1
    if n == 6 and _at(p, j) == 105 and _at(p, j + 1) == 102 and _at(p, j + 2) == 101 and _at(p, j + 3) == 116 and _at(p, j + 4) == 99 and _at(p, j + 5) == 104:
        kind = 1  # ifetch
    elif n == 4 and _at(p, j) == 114 and _at(p, j + 1) == 101 and _at(p, j + 2) == 97 and _at(p, j + 3) == 100:
        kind = 0  # read
    elif n == 5 and _at(p, j) == 119 and _at(p, j + 1) == 114 and _at(p, j + 2) == 105 and _at(p, j + 3) == 116 and _at(p, j + 4) == 101:
        kind = 0  # write
    if kind < 0:
        return 2, np.uint64(0)  # a marker or a record of another kind
    j = _spaces(p, t, le)
    k = _digits(p, j, le)
    if j == t or k == j or k + 11 > le:
        return 3, np.uint64(0)
    # " byte(s) @ "
    if not (
        _at(p, k) == SP
        and _at(p, k + 1) == 98
        and _at(p, k + 2) == 121
        and _at(p, k + 3) == 116
        and _at(p, k + 4) == 101
        and _at(p, k + 5) == 40
        and _at(p, k + 6) == 115
        and _at(p, k + 7) == 41
        and _at(p, k + 8) == SP
        and _at(p, k + 9) == 64
        and _at(p, k + 10) == SP
    ):
        return 3, np.uint64(0)
    v, e, ok = _prefixed_hex(p, k + 11, le)
    if not ok or (e < le and _word(_at(p, e))):
        return 3, np.uint64(0)
    return kind, v


@inline
def _perf(p, i, le):
    """A perf line at bytes [i, le) of address p that is not all spaces: (kind, value) as :func:`_line`."""
    if _at(p, i) == 35:
        return 2, np.uint64(0)
    j = _spaces(p, i, le)
    for _ in range(2):  # PID, TID
        if j < le and _at(p, j) == 45:
            j += 1
        k = _digits(p, j, le)
        if k == j or k >= le or _at(p, k) != SP:
            return 3, np.uint64(0)
        j = _spaces(p, k, le)
    k = _skip_prefixed_hex(p, j, le)  # the IP, of any value
    if k < 0 or k >= le or _at(p, k) != SP:
        return 3, np.uint64(0)
    j = _spaces(p, k, le)
    # ADDR as perf prints it: "0x016", then the address in hex
    if j + 4 < le and _at(p, j) == 48 and _at(p, j + 1) == 120 and _at(p, j + 2) == 48 and _at(p, j + 3) == 49 and _at(p, j + 4) == 54:
        v, e, ok = _hex(p, j + 5, le)
        if e > j + 5 and (e == le or not _word(_at(p, e))):
            if not ok or v == 0:  # beyond 2**63 - 1 (the kernel's half), or no address: skipped
                return 2, np.uint64(0)
            return 0, v
    return 3, np.uint64(0)


@inline
def _line(p, i, le, parse):
    """Parse the line at bytes [i, le) of address p with ``parse``, one format's line function: (kind, value), kind 0
    data, 1 instruction, 2 skip, 3 for the reference to read."""
    # a line of spaces is skipped by every format; any other whitespace, or a byte beyond ASCII,
    # fails the strict forms of the line functions where it matters (in what the reference's
    # expressions read), and the line goes to the reference
    if _spaces(p, i, le) == le:
        return 2, np.uint64(0)
    return parse(p, i, le)


@inline
def _run(buf, pos, parse, max_line, out_a, out_k, k):
    end = buf.shape[0]
    addr = buf.ctypes.data  # the line functions read through it: no array passed, no reference counting per line
    lines = 0
    while pos < end:
        e = pos
        while e < end and buf[e] != LF:
            e += 1
        le = e
        if le > pos and buf[le - 1] == CR:
            le -= 1
        if le - pos > max_line:
            return pos, k, lines, TOO_LONG
        kind, v = _line(addr, pos, le, parse)
        if kind == 3:
            return pos, k, lines, FALLBACK
        if kind < 2:
            out_a[k] = v
            out_k[k] = kind
            k += 1
        lines += 1
        pos = e + 1
    return end, k, lines, DONE


@jit
def parse_text(buf, pos, fmt, max_line, out_a, out_k, k):
    """Parse the lines of ``buf`` (uint8) from byte ``pos`` into ``out_a`` / ``out_k`` from index
    ``k``, until the end or a line the parser leaves to the reference. Returns (position of the
    line it stopped at, or the end; accesses written so far; lines passed; status DONE, FALLBACK
    or TOO_LONG). Each format's loop is its own code (the format a constant in it)."""
    if fmt == 0:
        return _run(buf, pos, _lackey, max_line, out_a, out_k, k)
    if fmt == 1:
        return _run(buf, pos, _din, max_line, out_a, out_k, k)
    if fmt == 2:
        return _run(buf, pos, _hexline, max_line, out_a, out_k, k)
    if fmt == 3:
        return _run(buf, pos, _pinatrace, max_line, out_a, out_k, k)
    if fmt == 4:
        return _run(buf, pos, _drmemtrace, max_line, out_a, out_k, k)
    return _run(buf, pos, _perf, max_line, out_a, out_k, k)
