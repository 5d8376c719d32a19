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


def log2(v: int) -> int:
    return int(v).bit_length() - 1
