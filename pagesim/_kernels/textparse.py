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
0xHEX`` (``0x016HEX`` on its first sample line: perf's own spelling) or, with ``-x ,``,
``PID,TID,0xIP,0xHEX``, ``#`` lines skipped, an address of 0 or of the kernel's half skipped.
"""

import sys

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


@intrinsic
def _at64(typingctx, p, i):
    """The 8 bytes at address ``p + i`` as one word, the byte at ``p + i`` in its lowest bits (on
    a little-endian machine; :data:`WORDS` says whether the parser reads words at all). Nothing is
    checked: every caller keeps ``i + 8`` at or below the line's end."""
    sig = types.uint64(types.uintp, types.intp)

    def codegen(context, builder, signature, args):
        a, j = args
        word = builder.load(builder.inttoptr(builder.add(a, j), llvm_ir.IntType(64).as_pointer()))
        word.align = 1  # any address
        return word

    return sig, codegen


def _bit_count(name: str, doc: str):
    """An intrinsic that applies LLVM's bit-counting intrinsic ``name`` to a uint64 (for
    ``llvm.cttz``, defined for 0: 64)."""

    def count(typingctx, x):
        sig = types.uint64(types.uint64)

        def codegen(context, builder, signature, args):
            (v,) = args
            flags = [llvm_ir.Constant(llvm_ir.IntType(1), 0)] if name == "llvm.cttz" else []
            fnty = llvm_ir.FunctionType(v.type, [v.type] + [f.type for f in flags])
            return builder.call(builder.module.declare_intrinsic(name, [v.type], fnty), [v, *flags])

        return sig, codegen

    count.__doc__ = doc
    return intrinsic(count)


_cttz = _bit_count("llvm.cttz", "The number of trailing zero bits of ``x`` (64 for 0).")
_popcount = _bit_count("llvm.ctpop", "The number of bits set in ``x``.")


def _bitmap(ranges, doc: str):
    """An intrinsic ``f(p, i)``: the 64 bytes at address ``p + i`` as a bitmap (bit t for the byte
    at ``p + i + t``), a bit set where the byte lies in one of the inclusive byte ranges
    ``ranges``. One vector compare per range (LLVM lowers it to what the machine has: two AVX2
    compares, four SSE2 or NEON ones); the bits come in this order where :data:`WORDS` holds.
    Nothing is checked: every caller keeps ``i + 64`` at or below the buffer's end."""

    def bitmap(typingctx, p, i):
        sig = types.uint64(types.uintp, types.intp)

        def codegen(context, builder, signature, args):
            a, j = args
            vt = llvm_ir.VectorType(llvm_ir.IntType(8), 64)
            v = builder.load(builder.inttoptr(builder.add(a, j), vt.as_pointer()))
            v.align = 1
            hit = None
            for lo, hi in ranges:  # lo <= c <= hi as one unsigned compare of c - lo
                d = builder.sub(v, llvm_ir.Constant(vt, [lo] * 64))
                h = builder.icmp_unsigned("<=", d, llvm_ir.Constant(vt, [hi - lo] * 64))
                hit = h if hit is None else builder.or_(hit, h)
            return builder.bitcast(hit, llvm_ir.IntType(64))

        return sig, codegen

    bitmap.__doc__ = doc
    return intrinsic(bitmap)


_lf_bits = _bitmap(((10, 10),), "The LF bytes of the 64 at ``p + i``.")
_space_bits = _bitmap(((32, 32),), "The spaces of the 64 bytes at ``p + i``.")
_zero_bits = _bitmap(((48, 48),), 'The "0" bytes of the 64 at ``p + i``.')
_digit_bits = _bitmap(((48, 57),), "The decimal digits of the 64 bytes at ``p + i``.")
_hex_bits = _bitmap(((48, 57), (97, 102), (65, 70)), "The hex digits (either case) of the 64 bytes at ``p + i``.")


# Words: the runs of a line (spaces, digits, hex digits, zeros) are found 8 bytes at a time. In each
# byte of a mask only the top bit counts; a byte's top bit says whether that byte is of the class,
# computed for each byte on its own (no carry or borrow crosses a byte: every subtraction below is
# from a byte whose top bit is set, of a value below 0x80).
WORDS = sys.byteorder == "little"  # a constant in the kernels: elsewhere the byte loops alone run
ONES = np.uint64(0x0101010101010101)
HIGHS = np.uint64(0x8080808080808080)
LOWS = np.uint64(0x7F7F7F7F7F7F7F7F)
NIBBLES = np.uint64(0x0F0F0F0F0F0F0F0F)
LFS = np.uint64(0x0A0A0A0A0A0A0A0A)
SPACES = np.uint64(0x2020202020202020)  # also the bit that makes an ASCII letter lower case
ZEROS = np.uint64(0x3030303030303030)  # "0" in every byte
NINES_HIGH = np.uint64(0xB9B9B9B9B9B9B9B9)  # "9" with the top bit set
AS = np.uint64(0x6161616161616161)  # "a"
FS_HIGH = np.uint64(0xE6E6E6E6E6E6E6E6)  # "f" with the top bit set
# drmemtrace's access kinds with the space after them, and " byte(s)", as words
LOW5, LOW6, LOW7 = np.uint64((1 << 40) - 1), np.uint64((1 << 48) - 1), np.uint64((1 << 56) - 1)
W_READ = np.uint64(int.from_bytes(b"read ", "little"))
W_WRITE = np.uint64(int.from_bytes(b"write ", "little"))
W_IFETCH = np.uint64(int.from_bytes(b"ifetch ", "little"))
W_BYTES = np.uint64(int.from_bytes(b" byte(s)", "little"))

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
def _first(mask):
    """The index of the lowest byte of ``mask`` (not 0) that is not 0."""
    return np.intp(_cttz(mask) >> np.uint64(3))


@inline
def _digit_mask(w):
    """The bytes of ``w`` that are decimal digits."""
    return ((w | HIGHS) - ZEROS) & (NINES_HIGH - (w & LOWS)) & ~w & HIGHS


@inline
def _hex_mask(w):
    """The bytes of ``w`` that are hex digits (either case)."""
    lower = w | SPACES
    return (_digit_mask(w) | (((lower | HIGHS) - AS) & (FS_HIGH - (lower & LOWS)) & ~w)) & HIGHS


@inline
def _equal_mask(w, c):
    """The bytes of ``w`` equal to the byte repeated in ``c``, each byte on its own (for counting)."""
    x = w ^ c
    return ~(((x & LOWS) + LOWS) | x) & HIGHS


@inline
def _find_lf(p, i, end):
    """The position of the first LF at or after ``i``, or ``end``."""
    while WORDS and i + 64 <= end:
        m = _lf_bits(p, i)
        if m != 0:
            return i + np.intp(_cttz(m))
        i += 64
    while WORDS and i + 8 <= end:
        x = _at64(p, i) ^ LFS
        m = (x - ONES) & ~x & HIGHS  # exact in the lowest byte that is an LF (a borrow only runs upwards)
        if m != 0:
            return i + _first(m)
        i += 8
    while i < end and _at(p, i) != LF:
        i += 1
    return i


# Windows: a line's runs are found in bitmaps of its first 64 bytes (or of 64 bytes from a later
# place in it), one for each class, computed together at the start; the end of a run is then a
# shift and a count of trailing bits, with no loop and no reload. A window is the tuple
# (q, n, spaces, zeros, digits, hex digits, end): bitmaps of the bytes [q, n) of the line (n at
# most q + 64 and at most the line's end; the bits from n up are clear) and the buffer's end, from
# which a later window may be made. Where 64 bytes from q are not in the buffer (or words are not
# read) the window holds no bytes (n = q), and the word loops find every run.


@inline
def _window(p, q, le, end):
    """The window of the line's bytes from ``q`` (the line ends at ``le``, the buffer at ``end``)."""
    if WORDS and q + 64 <= end:
        n = min(le - q, 64)
        keep = ~np.uint64(0) if n == 64 else (np.uint64(1) << np.uint64(n)) - np.uint64(1)
        return q, q + n, _space_bits(p, q) & keep, _zero_bits(p, q) & keep, _digit_bits(p, q) & keep, _hex_bits(p, q) & keep, end
    zero = np.uint64(0)
    return q, q, zero, zero, zero, zero, end


@inline
def _in_window(i, le, q, n, bits):
    """(the position after the run at ``i`` of the bytes set in ``bits``, a window's bitmap of
    the bytes [q, n); whether that is the run's end). Not the end when ``i`` is beyond the
    window's bytes (``i`` is returned) or the run reaches the window's last byte before the
    line's end (``n`` is returned: the run goes on from there). ``i`` is at least ``q``."""
    if i >= n:
        return i, False
    r = i + np.intp(_cttz(~(bits >> np.uint64(i - q))))  # the bits from n - (i - q) up are set: r <= n
    return r, r < n or n == le


@inline
def _repeats(p, i, le, c, word):
    """The position after the bytes ``c`` at ``i`` (``word``: ``c`` in every byte)."""
    j = i
    while WORDS and j + 8 <= le:
        x = _at64(p, j) ^ word  # its lowest byte that is not 0: the first that is not c
        if x != 0:
            return j + _first(x)
        j += 8
    while j < le and _at(p, j) == c:
        j += 1
    return j


@inline
def _spaces(p, i, le, w):
    """The position after the spaces at ``i`` (``w``: a window, :func:`_window`)."""
    r, done = _in_window(i, le, w[0], w[1], w[2])
    return r if done else _repeats(p, r, le, SP, SPACES)


@inline
def _zeros(p, i, le, w):
    """The position after the "0" bytes at ``i``."""
    r, done = _in_window(i, le, w[0], w[1], w[3])
    return r if done else _repeats(p, r, le, 48, ZEROS)


@inline
def _class_end(p, i, le, mask):
    """The position after the bytes at ``i`` of the class ``mask`` gives (``_digit_mask`` or
    ``_hex_mask``: it sets the top bit of each byte of a word that is of the class)."""
    j = i
    while WORDS and j + 8 <= le:
        m = ~mask(_at64(p, j)) & HIGHS
        if m != 0:
            return j + _first(m)
        j += 8
    while j < le and mask(np.uint64(_at(p, j))) != 0:  # one byte as a word: its own top bit alone
        j += 1
    return j


@inline
def _digits(p, i, le, w):
    """The position after the decimal digits at ``i`` (``i`` when there are none)."""
    r, done = _in_window(i, le, w[0], w[1], w[4])
    return r if done else _class_end(p, r, le, _digit_mask)


@inline
def _hexrun(p, i, le, w):
    """The position after the hex digits at ``i`` (``i`` when there are none)."""
    r, done = _in_window(i, le, w[0], w[1], w[5])
    return r if done else _class_end(p, r, le, _hex_mask)


@inline
def _pack8(w):
    """The value of the 8 hex digit bytes of ``w``, its first byte the most significant digit."""
    d = (w & NIBBLES) + np.uint64(9) * ((w >> np.uint64(6)) & ONES)  # each byte's digit value
    d = ((d << np.uint64(4)) | (d >> np.uint64(8))) & np.uint64(0x00FF00FF00FF00FF)  # pairs of digits
    d = ((d << np.uint64(8)) | (d >> np.uint64(16))) & np.uint64(0x0000FFFF0000FFFF)  # fours
    return ((d << np.uint64(16)) | (d >> np.uint64(32))) & np.uint64(0xFFFFFFFF)


@inline
def _hex(p, i, le, w):
    """(value, position after, ok) of the hex digits at ``i``: ok is False when there are none,
    more than 16 significant ones, or the value exceeds 2**63 - 1."""
    z = _zeros(p, i, le, w)
    j = _hexrun(p, z, le, w)
    if j == i or j - z > 16:
        return np.uint64(0), j, False
    if WORDS and j >= 16:  # the 16 bytes before j, in the buffer (positions count from its start)
        hi, lo = _at64(p, j - 16), _at64(p, j - 8)
        g = 16 - (j - i)  # of them, the bytes before i: cleared (a byte that is no digit would spill into the next)
        if g >= 8:
            hi, lo = np.uint64(0), lo & (~np.uint64(0) << np.uint64(8 * (g - 8)))
        elif g > 0:
            hi &= ~np.uint64(0) << np.uint64(8 * g)
        v = (_pack8(hi) << np.uint64(32)) | _pack8(lo)  # digits before z are zeros
    else:
        v = np.uint64(0)
        for t in range(z, j):
            v = (v << np.uint64(4)) | np.uint64(_hexval(_at(p, t)))
    return v, j, v <= np.uint64(MAX_ADDRESS)


@inline
def _has_0x(p, i, le):
    """Whether ``0x`` or ``0X`` is at ``i``."""
    return i + 1 < le and _at(p, i) == 48 and (_at(p, i + 1) == 120 or _at(p, i + 1) == 88)


@inline
def _integer(p, i, le, w):
    """(the position of the decimal digits after an optional "-" at ``i``, the position after them)."""
    j = i + 1 if i < le and _at(p, i) == 45 else i
    return j, _digits(p, j, le, w)


@inline
def _prefixed_hex(p, i, le, w):
    """``0x`` or ``0X`` and hex digits at ``i``: (value, position after, ok) as :func:`_hex`."""
    if _has_0x(p, i, le):
        return _hex(p, i + 2, le, w)
    return np.uint64(0), i, False


@inline
def _skip_prefixed_hex(p, i, le, w):
    """The position after ``0x`` or ``0X`` and one or more hex digits at ``i`` of any value, or -1."""
    if _has_0x(p, i, le):
        j = _hexrun(p, i + 2, le, w)
        if j > i + 2:
            return j
    return -1


@inline
def _lackey(p, i, le, w):
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
    j = _spaces(p, i + 2, le, w)
    v, j, ok = _hex(p, j, le, w)
    if not ok or j >= le or _at(p, j) != 44:  # ","
        return 3, np.uint64(0)
    k = _digits(p, j + 1, le, w)
    if k == j + 1 or _spaces(p, k, le, w) != le:
        return 3, np.uint64(0)
    return kind, v


@inline
def _din(p, i, le, w):
    """A din line at bytes [i, le) of address p that is not all spaces: (kind, value) as :func:`_line`."""
    j = _spaces(p, i, le, w)
    label = np.int64(_at(p, j)) - 48
    if not 0 <= label <= 4 or j + 1 >= le or _at(p, j + 1) != SP:
        return 3, np.uint64(0)
    j = _spaces(p, j + 1, le, w)
    if _has_0x(p, j, le):
        if j + 2 >= le or _hexval(_at(p, j + 2)) < 0:
            return 3, np.uint64(0)
        j += 2
    v, k, ok = _hex(p, j, le, w)
    if not ok or (k < le and (_word(_at(p, k)) or (_at(p, k) < SP and _at(p, k) != 9))):  # not a letter, a digit or a control byte
        return 3, np.uint64(0)
    if label >= 3:
        return 2, np.uint64(0)
    return (1 if label == 2 else 0), v


@inline
def _hexline(p, i, le, w):
    """A hex line at bytes [i, le) of address p that is not all spaces: (kind, value) as :func:`_line`."""
    j = _spaces(p, i, le, w)
    if _at(p, j) == 35:  # "#": a comment line
        return 2, np.uint64(0)
    if _has_0x(p, j, le):
        if j + 2 >= le or _hexval(_at(p, j + 2)) < 0:
            return 3, np.uint64(0)
        j += 2
    v, k, ok = _hex(p, j, le, w)
    if not ok:
        return 3, np.uint64(0)
    k = _spaces(p, k, le, w)
    if k == le or _at(p, k) == 35:
        return 0, v
    return 3, np.uint64(0)


@inline
def _pinatrace(p, i, le, w):
    """A pinatrace line at bytes [i, le) of address p that is not all spaces: (kind, value) as :func:`_line`."""
    if _at(p, i) == 35:
        return 2, np.uint64(0)
    j = _skip_prefixed_hex(p, i, le, w)
    if j < 0 or j + 4 > le or _at(p, j) != 58 or _at(p, j + 1) != SP or (_at(p, j + 2) != 82 and _at(p, j + 2) != 87) or _at(p, j + 3) != SP:
        return 3, np.uint64(0)
    v, k, ok = _prefixed_hex(p, j + 4, le, w)
    if not ok or _spaces(p, k, le, w) != le:
        return 3, np.uint64(0)
    return 0, v


@inline
def _drmemtrace(p, i, le, w):
    """A drmemtrace line at bytes [i, le) of address p that is not all spaces: (kind, value) as :func:`_line`."""
    j = _spaces(p, i, le, w)
    k = _digits(p, j, le, w)
    if k == j or k >= le or _at(p, k) != SP:
        return 3, np.uint64(0)
    j = _spaces(p, k, le, w)
    k = _digits(p, j, le, w)
    if k == j or k >= le or _at(p, k) != 58:  # ":"
        return 3, np.uint64(0)
    j = _spaces(p, k + 1, le, w)
    if j == k + 1:
        return 3, np.uint64(0)
    k = _digits(p, j, le, w)
    if k == j or k >= le or _at(p, k) != SP:
        return 3, np.uint64(0)
    j = _spaces(p, k, le, w)
    if j >= le:
        return 3, np.uint64(0)
    if WORDS and j + 8 <= le:  # an access's kind and the space after it, read as one word
        kw = _at64(p, j)
        isr = (kw & LOW5) == W_READ
        isw = (kw & LOW6) == W_WRITE
        isi = (kw & LOW7) == W_IFETCH
        if isr or isw or isi:
            t = j + 4 + isw + 2 * isi
            kind = 1 if isi else 0
            j = _spaces(p, t, le, w)
            k = _digits(p, j, le, w)
            if k > j and k + 11 <= le and _at64(p, k) == W_BYTES and _at(p, k + 8) == SP and _at(p, k + 9) == 64 and _at(p, k + 10) == SP:
                v, e, ok = _prefixed_hex(p, k + 11, le, _window(p, k + 11, le, w[6]))  # the address: beyond the first window
                if ok and (e >= le or not _word(_at(p, e))):
                    return kind, v
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
    j = _spaces(p, t, le, w)
    k = _digits(p, j, le, w)
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
    v, e, ok = _prefixed_hex(p, k + 11, le, w)
    if not ok or (e < le and _word(_at(p, e))):
        return 3, np.uint64(0)
    return kind, v


@inline
def _perf_address(p, j, le, w, sep):
    """perf's ADDR at ``j`` and what may follow it: (kind, value) as :func:`_line`. ``sep``: the
    comma-separated form (``0xADDR``, then spaces and a comma or the line's end), else the default
    one (``0xADDR``, or ``0x016ADDR`` on perf's first sample line, then a byte that is not a word
    character, or the line's end)."""
    if not _has_0x(p, j, le):
        return 3, np.uint64(0)
    j += 2
    if not sep and j + 2 < le and _at(p, j) == 48 and _at(p, j + 1) == 49 and _at(p, j + 2) == 54:
        j += 3  # "016": an address printed unpadded never starts with 0
    v, e, ok = _hex(p, j, le, w)
    if e == j:
        return 3, np.uint64(0)
    if sep:
        e = _spaces(p, e, le, w)
        if e < le and _at(p, e) != 44:
            return 3, np.uint64(0)
    elif e < le and _word(_at(p, e)):
        return 3, np.uint64(0)
    if not ok or v == 0:  # beyond 2**63 - 1 (the kernel's half), or no address: skipped
        return 2, np.uint64(0)
    return 0, v


@inline
def _perf(p, i, le, w):
    """A perf line at bytes [i, le) of address p that is not all spaces: (kind, value) as :func:`_line`."""
    if _at(p, i) == 35:
        return 2, np.uint64(0)
    j, k = _integer(p, _spaces(p, i, le, w), le, w)  # the PID
    if k == j:
        return 3, np.uint64(0)
    t = _spaces(p, k, le, w)
    if t < le and _at(p, t) == 44:  # the comma-separated form (-x ,): TID, IP and ADDR between commas
        j, k = _integer(p, _spaces(p, t + 1, le, w), le, w)  # the TID
        t = _spaces(p, k, le, w)
        if k == j or t >= le or _at(p, t) != 44:
            return 3, np.uint64(0)
        k = _skip_prefixed_hex(p, _spaces(p, t + 1, le, w), le, w)  # the IP, of any value
        t = _spaces(p, k, le, w) if k >= 0 else le
        if t >= le or _at(p, t) != 44:
            return 3, np.uint64(0)
        return _perf_address(p, _spaces(p, t + 1, le, w), le, w, True)
    if k >= le or _at(p, k) != SP:
        return 3, np.uint64(0)
    j, k = _integer(p, _spaces(p, k, le, w), le, w)  # the TID
    if k == j or k >= le or _at(p, k) != SP:
        return 3, np.uint64(0)
    k = _skip_prefixed_hex(p, _spaces(p, k, le, w), le, w)  # the IP, of any value
    if k < 0 or k >= le or _at(p, k) != SP:
        return 3, np.uint64(0)
    return _perf_address(p, _spaces(p, k, le, w), le, w, False)


@inline
def _line(p, i, le, parse, w):
    """Parse the line at bytes [i, le) of address p with ``parse``, one format's line function: (kind, value), kind 0
    data, 1 instruction, 2 skip, 3 for the reference to read."""
    # a line of spaces is skipped by every format; any other whitespace, or a byte beyond ASCII,
    # fails the strict forms of the line functions where it matters (in what the reference's
    # expressions read), and the line goes to the reference
    if _spaces(p, i, le, w) == le:
        return 2, np.uint64(0)
    return parse(p, i, le, w)


@inline
def _run(buf, pos, parse, max_line, out_a, out_k, k):
    end = buf.shape[0]
    addr = buf.ctypes.data  # the line functions read through it: no array passed, no reference counting per line
    lines = 0
    while pos < end:
        e = _find_lf(addr, pos, end)
        le = e
        if le > pos and _at(addr, le - 1) == CR:
            le -= 1
        if le - pos > max_line:
            return pos, k, lines, TOO_LONG
        kind, v = _line(addr, pos, le, parse, _window(addr, pos, le, end))
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


@jit
def count_lf(buf, start, end):
    """The number of LF bytes in ``buf[start:end]`` (uint8)."""
    p = buf.ctypes.data
    n = 0
    i = start
    while WORDS and i + 8 <= end:
        n += _popcount(_equal_mask(_at64(p, i), LFS))
        i += 8
    while i < end:
        n += _at(p, i) == LF
        i += 1
    return n
