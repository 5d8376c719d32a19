"""The reference reading of a text trace: line by line with the regular expressions that define
each format (``pagesim.sources.traces._parse_line``), which the block reader and its numba parser
must match exactly."""

import pagesim.sources.traces as T


def reference_read(text: str, fmt: str, max_line: int = T.MAX_LINE):
    """The accesses of ``text`` as (address, kind) pairs, or the number of the line of the first
    error (a malformed line, an address beyond 2**63-1, a line longer than ``max_line``)."""
    out = []
    lines = text.replace("\r\n", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for n, s in enumerate(lines, start=1):
        if len(s) > max_line:
            return n
        try:
            r = T._parse_line(s, fmt)
        except ValueError:
            return n
        if r is not None:
            if r[0] > T.MAX_ADDRESS:
                return n
            out.append(r)
    return out
