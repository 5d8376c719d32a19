"""Real programs' memory traces: valgrind lackey, Dinero 'din', and one hex address per line.

``read_trace(path)`` checks the whole file once (a malformed line is reported with the file and its
line number, before anything is simulated), notes which 2 MiB blocks it touches, and returns a
workload that streams the file again in chunks whenever it is simulated: a trace larger than
memory is never loaded whole. Files ending in .gz are read compressed.

Formats
  lackey   ``valgrind --tool=lackey --trace-mem=yes``: ``I  addr,size`` (instruction fetch),
           `` L addr,size`` (load), `` S addr,size`` (store), `` M addr,size`` (modify: a load and a
           store of the same bytes, which translate once, so one data access). Lines starting
           with ``==`` (valgrind's messages) and blank lines are skipped.
  din      Dinero III/IV: ``label address`` with label 0 (read), 1 (write), 2 (instruction fetch),
           3 and 4 (escape records: skipped); the address in hex.
  hex      one address per line, hex, with or without 0x; blank lines and # comments skipped;
           every access is a data access.
An access is translated at its first byte; one that crosses a page boundary is counted once.
"""
from __future__ import annotations

import gzip
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .layout import Layout
from .units import parse_page_size
from .workloads import Workload

FORMATS = ("lackey", "din", "hex")
MAX_ADDRESS = (1 << 63) - 1
_LACKEY = re.compile(r"^(I | L| S| M) ?\s*([0-9A-Fa-f]+),(\d+)\s*$")
_DIN = re.compile(r"^\s*([0-4])\s+(?:0[xX])?([0-9A-Fa-f]+)\b")
_HEX = re.compile(r"^\s*(?:0[xX])?([0-9A-Fa-f]+)\s*$")
GRANULE_SHIFT = 21  # the layout covers the 2 MiB blocks a trace touches


class TraceFormatError(ValueError):
    """A line of a trace file that its format does not allow."""


def _open(path: Path):
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="ascii", errors="replace")
    return open(path, encoding="ascii", errors="replace")


def detect_format(path) -> str:
    """Guess a trace file's format from its first meaningful lines."""
    path = Path(path)
    with _open(path) as f:
        for n, line in enumerate(f, start=1):
            s = line.rstrip("\n")
            if not s.strip() or s.startswith("#"):
                continue
            if s.startswith("==") or _LACKEY.match(s):
                return "lackey"
            if _DIN.match(s) and len(s.split()) >= 2:
                return "din"
            if _HEX.match(s):
                return "hex"
            raise TraceFormatError(f"{path}, line {n}: cannot tell the trace format from {s[:60]!r}: pass format='lackey', 'din' or 'hex'")
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
    t = s.split("#", 1)[0]
    if not t.strip():
        return None
    m = _HEX.match(t)
    if not m:
        raise ValueError("expected one hex address")
    return int(m.group(1), 16), 0


def _iter_chunks(path: Path, fmt: str, chunk: int, want_kinds: bool):
    addrs = np.empty(chunk, dtype=np.uint64)
    kinds = np.empty(chunk, dtype=np.uint8)
    k = 0
    with _open(path) as f:
        for n, line in enumerate(f, start=1):
            s = line.rstrip("\n")
            try:
                r = _parse_line(s, fmt)
            except ValueError as e:
                raise TraceFormatError(f"{path}, line {n}: {e}; got {s[:80]!r}") from None
            if r is None:
                continue
            a, kind = r
            if a > MAX_ADDRESS:
                raise TraceFormatError(f"{path}, line {n}: address {a:#x} is beyond 2**63-1, the largest address pagesim models")
            addrs[k] = a
            kinds[k] = kind
            k += 1
            if k == chunk:
                yield addrs.copy(), (kinds.copy() if want_kinds else None)
                k = 0
    if k:
        yield addrs[:k].copy(), (kinds[:k].copy() if want_kinds else None)


@dataclass(frozen=True)
class Trace(Workload):
    """A trace file as a workload (see :func:`read_trace`)."""

    name = "trace"
    path: str = ""
    format: str = "lackey"
    instructions: bool = True
    accesses: int = 0
    instr_accesses: int = 0
    blocks: tuple = field(default=(), repr=False)

    def spans(self):
        return []

    @property
    def n_accesses(self) -> int:
        return self.accesses if self.instructions else self.accesses - self.instr_accesses

    @property
    def has_kinds(self) -> bool:
        return self.instructions and self.instr_accesses > 0

    @property
    def working_set(self) -> int:
        return len(self.blocks) << GRANULE_SHIFT

    @property
    def label(self) -> str:
        return f"trace({Path(self.path).name}, {self.n_accesses:,})"

    def params(self):
        return {"path": self.path, "format": self.format, "instructions": self.instructions, "accesses": self.n_accesses}

    def covering_layout(self, page_size) -> Layout:
        """Regions over the 2 MiB blocks the trace touches (merged when adjacent), all of ``page_size``."""
        p = parse_page_size(page_size)
        g = max(1 << GRANULE_SHIFT, p)
        return Layout.from_blocks(sorted({(b << GRANULE_SHIFT) // g for b in self.blocks}), g, p)

    def chunks(self, bases=(), chunk: int = 1 << 20, seed: int = 0):
        for a, k in _iter_chunks(Path(self.path), self.format, int(chunk), True):
            if not self.instructions:
                keep = k == 0
                a = a[keep]
                if a.size:
                    yield a, None
            else:
                yield a, (k if self.has_kinds else None)


def read_trace(path, format: str = "auto", instructions: bool = True) -> Trace:  # noqa: A002
    """Check and summarise the trace at ``path``; returns a :class:`Trace` workload to pass to
    ``simulate(machine, trace, page_size=...)``. ``instructions=False`` keeps data accesses only."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"trace path={str(path)!r} is not a file")
    fmt = detect_format(p) if format == "auto" else format
    if fmt not in FORMATS:
        raise ValueError(f"format={format!r} is not allowed: use 'auto', {', '.join(repr(f) for f in FORMATS)}")
    n = ni = 0
    blocks: set[int] = set()
    for a, k in _iter_chunks(p, fmt, 1 << 18, True):
        n += a.size
        ni += int(k.sum())
        blocks.update(np.unique(a >> np.uint64(GRANULE_SHIFT)).tolist())
    if n == 0 or (not instructions and n == ni):
        raise TraceFormatError(f"{p}: the file holds no {'data ' if not instructions else ''}accesses")
    if not instructions:
        blocks = set()
        for a, k in _iter_chunks(p, fmt, 1 << 18, True):
            blocks.update(np.unique(a[k == 0] >> np.uint64(GRANULE_SHIFT)).tolist())
    return Trace(path=str(p), format=fmt, instructions=bool(instructions), accesses=n, instr_accesses=ni, blocks=tuple(sorted(blocks)))
