"""Internal fragmentation of a page cache holding many small files.

A cached file occupies whole pages: a file of ``s`` bytes takes ``ceil(s / p)`` pages of size ``p``
(an empty file none). Bytes used minus bytes needed is the internal fragmentation, the first
disadvantage of 64 KB pages that 000_1774b52266f446e5.txt ("Internal Fragmentation") names: "When
a 3KB file is put in a 4KB pages, 25% of the page is unused. When this same file is put in a 64KB
page, 95% of the page is unused." The page cache keeps file data in base pages, so the page sizes
compared here are base page sizes (4 KiB or 64 KiB kernels), not huge pages.
"""

from __future__ import annotations

import numpy as np

from ..core.check import check_int
from ..core.units import format_size, parse_page_size, parse_size

MAX_FILES = 1 << 27


def file_sizes(spec, n: int | None = None, seed: int = 0) -> np.ndarray:
    """File sizes in bytes from a distribution.

    spec: one size ('3K' or 3072): ``n`` files of that size; a dict {size: count}; a sequence of
        sizes; or ('lognormal', median, sigma): ``n`` sizes drawn from a log-normal distribution with
        that median (bytes) and shape, rounded to whole bytes (seeded).
    """
    if isinstance(spec, dict):
        parts = []
        for size, count in spec.items():
            s = parse_size(size, "file size")
            count = check_int(f"spec[{size!r}] (the count of files of that size)", count, 0, MAX_FILES)
            parts.append(np.full(int(count), s, dtype=np.int64))
        out = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
    elif isinstance(spec, tuple) and spec and spec[0] == "lognormal":
        if len(spec) != 3:
            raise ValueError(f"spec={spec!r}: write ('lognormal', median, sigma)")
        median = parse_size(spec[1], "lognormal median")
        sigma = float(spec[2])
        if median <= 0 or not 0 < sigma <= 5:
            raise ValueError(f"spec={spec!r}: the median must be positive and sigma in (0, 5]")
        n = _count(n)
        rng = np.random.default_rng(seed)
        out = np.rint(rng.lognormal(np.log(median), sigma, n)).astype(np.int64)
    elif isinstance(spec, (str, int, np.integer)) and not isinstance(spec, bool):
        out = np.full(_count(n), parse_size(spec, "file size"), dtype=np.int64)
    else:
        try:
            out = np.array([parse_size(s, "file size") for s in spec], dtype=np.int64)
        except TypeError:
            raise TypeError(
                f"spec must be a size, a dict {{size: count}}, a sequence of sizes or ('lognormal', median, sigma); got {type(spec).__name__}"
            ) from None
    if out.size > MAX_FILES:
        raise ValueError(f"{out.size} files: the model handles at most {MAX_FILES} (2**27)")
    return out


def _count(n) -> int:
    if n is None:
        raise ValueError(f"n=None: give the number of files, an int in 1..{MAX_FILES}")
    return check_int("n", n, 1, MAX_FILES, " files")


def internal_fragmentation(sizes, page_sizes=("4K", "64K"), memory=None):
    """Bytes needed versus bytes used for the files ``sizes`` (from :func:`file_sizes`, or any
    sequence of byte counts) cached in pages of each size. Returns a pandas DataFrame, a row per page
    size: files, pages, bytes_needed, bytes_used, wasted, unused_share (wasted / bytes_used), and with
    ``memory`` (bytes of page cache) how many of these files fit in it, in the order given."""
    import pandas as pd  # deferred: pandas is slow to import; only tables need it

    s = np.asarray(sizes)
    if s.ndim != 1 or (s.size and not np.issubdtype(s.dtype, np.integer)):
        raise TypeError("sizes must be a one-dimensional sequence of integer byte counts")
    s = s.astype(np.int64)
    if s.size and s.min() < 0:
        raise ValueError(f"file size {int(s.min())} is negative; sizes are zero or more bytes")
    mem = parse_size(memory, "memory") if memory is not None else None
    rows = []
    for p in page_sizes:
        ps = parse_page_size(p, "page_sizes entry")
        pages = -(-s // ps)
        used = int(pages.sum()) * ps
        need = int(s.sum())
        row = {
            "page_size": ps,
            "page": format_size(ps),
            "files": int(s.size),
            "pages": int(pages.sum()),
            "bytes_needed": need,
            "bytes_used": used,
            "wasted": used - need,
            "unused_share": (used - need) / used if used else 0.0,
        }
        if mem is not None:
            row["files_fitting"] = int(np.searchsorted(np.cumsum(pages * ps), mem, side="right"))
        rows.append(row)
    df = pd.DataFrame(rows).set_index("page")
    df.attrs["source"] = "000_1774b52266f446e5.txt, 'Internal Fragmentation'"
    df.attrs["units"] = {"bytes_needed": "bytes", "bytes_used": "bytes", "wasted": "bytes", "pages": "pages", "unused_share": "1"}
    return df
