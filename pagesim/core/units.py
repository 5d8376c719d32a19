"""Sizes: parse "4K", "4KiB", "2 MiB", 65536 into integers of bytes, and format them back."""

from __future__ import annotations

import re

_UNITS = {"": 1, "B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40, "P": 1 << 50}
_SIZE_RE = re.compile(r"^\s*(\d+)\s*([KMGTP]?)(?:I?B)?\s*$", re.IGNORECASE)


def parse_size(value, name: str = "size") -> int:
    """Return ``value`` as a whole number of bytes.

    Accepts a non-negative int or a string with a binary unit: ``"4K"``, ``"4KiB"``, ``"2 MiB"``,
    ``"16M"``, ``"1G"``, ``"512B"``, or a sum of them: ``"2M+4K"``. ``K`` always means 1024 (the
    documents write 4K and 64KB for 4096 and 65536 bytes). ``name`` is the parameter named in the
    error message.
    """
    if isinstance(value, bool):
        raise TypeError(f"{name} must be a size in bytes (int) or a string such as '4KiB', got bool {value!r}")
    if isinstance(value, int) or (hasattr(value, "__index__") and not isinstance(value, str)):
        v = int(value)
    elif isinstance(value, str):
        terms = [_SIZE_RE.match(t) for t in value.split("+")]
        if value.strip().startswith("-") and _SIZE_RE.match(value.strip()[1:]):
            raise ValueError(f"{name}={value!r} is negative; sizes are zero or more bytes")
        if not all(terms):
            raise ValueError(
                f"{name}={value!r} is not a size: use bytes or a number with K, M, G, T or P "
                "(binary units), for example '4KiB', '64K', '2MiB', '16M', '1G', or a sum such as '2M+4K'"
            )
        v = sum(int(m.group(1)) * _UNITS[m.group(2).upper()] for m in terms)
    else:
        raise TypeError(f"{name} must be a size in bytes (int) or a string such as '4KiB', got {type(value).__name__} {value!r}")
    if v < 0:
        raise ValueError(f"{name}={value!r} is negative; sizes are zero or more bytes")
    return v


def is_power_of_two(v: int) -> bool:
    return v > 0 and (v & (v - 1)) == 0


def parse_page_size(value, name: str = "page_size") -> int:
    """A page size: a size that is a power of two, at least 1 KiB and at most 16 GiB."""
    v = parse_size(value, name)
    if not is_power_of_two(v):
        raise ValueError(f"{name}={value!r} ({v} bytes) is not a power of two; page sizes are powers of two such as 4KiB, 64KiB, 2MiB")
    if v < 1024 or v > (16 << 30):
        raise ValueError(f"{name}={value!r} is outside 1KiB..16GiB, the page sizes pagesim models")
    return v


def format_size(v: int) -> str:
    """Shortest exact binary form: 4096 -> '4K', 2097152 -> '2M', 1536 -> '1536B'."""
    v = int(v)
    for unit in ("P", "T", "G", "M", "K"):
        mul = _UNITS[unit]
        if v >= mul and v % mul == 0:
            return f"{v // mul}{unit}"
    return f"{v}B"


def format_bytes(v: int) -> str:
    """A size as a reader says it: 2097152 -> '2 MiB', 1 << 30 -> '1 GiB', 1536 -> '1536 bytes'."""
    short = format_size(v)
    return f"{short[:-1]} {short[-1]}iB" if short[-1] != "B" else f"{short[:-1]} bytes"


def log2(v: int) -> int:
    return int(v).bit_length() - 1


HEX_DIGITS = re.compile(r"^[0-9a-f]+$")  # the digits of a hexadecimal address, lower case


def parse_address(text, name: str = "address") -> int:
    """An address from an int or from text: hexadecimal with ``0x`` ("0x7f00", "0x7f12_3456"), or decimal
    ("32512"), or a size with a binary unit (:func:`parse_size`: "4K", "2M+4K"). Text that would be read
    differently by different people ("0700", "7f00") is refused; ``name`` is the parameter named in the error."""
    if isinstance(text, bool):
        raise TypeError(f"{name}={text!r} (bool): give an integer or text such as '0x7f00'")
    if isinstance(text, int) or (hasattr(text, "__index__") and not isinstance(text, str)):
        try:
            v = int(text)
        except TypeError:
            raise TypeError(f"{name}={text!r} ({type(text).__name__}): give one integer or text such as '0x7f00'") from None
        if v < 0:
            raise ValueError(f"{name}={text}: an address is not negative")
        return v
    if not isinstance(text, str):
        raise TypeError(f"{name}={text!r} ({type(text).__name__}): give an integer or text such as '0x7f00'")
    raw = text.strip().lower()
    if raw.startswith("-"):
        raise ValueError(f"{name}={text!r}: an address is not negative")
    if len(raw) > 40:
        raise ValueError(f"{name}={text[:20]!r}... ({len(raw)} characters): too long for an address (pagesim simulates addresses below 2**63)")
    if "_" in raw and not re.fullmatch(r"(0x)?[0-9a-f]+(_[0-9a-f]+)*", raw):
        raise ValueError(f"{name}={text!r}: an underscore goes between two digits, as in '0x7f12_3456' or '1_000'")
    s = raw.replace("_", "")
    if s.startswith(("0b", "0o")) and len(s) > 2:  # "0b" alone is zero bytes
        raise ValueError(f"{name}={text!r}: binary and octal are not read; write hexadecimal with 0x (0x7f00) or decimal (32512)")
    if s.startswith("0x"):
        if not HEX_DIGITS.match(s[2:] or "-"):
            raise ValueError(f"{name}={text!r}: after 0x only hexadecimal digits 0-9 and a-f are allowed")
        return int(s[2:], 16)
    if s.isascii() and s.isdigit():
        if len(s) > 1 and s[0] == "0":
            raise ValueError(
                f"{name}={text!r}: a leading 0 is ambiguous; write hexadecimal with 0x (0x{s.lstrip('0') or '0'}) or decimal without the 0 ({int(s)})"
            )
        return int(s)
    if HEX_DIGITS.match(s):
        raise ValueError(f"{name}={text!r} looks hexadecimal (or like a number with an exponent): write hexadecimal with 0x (0x{s}), or a whole decimal number")
    if s.isascii() and all(_SIZE_RE.match(t) for t in s.split("+")):
        return parse_size(text, name)
    raise ValueError(f"{name}={text!r} is not an address: write hexadecimal with 0x (0x7f00), decimal (32512) or a size such as '2M+4K'")
