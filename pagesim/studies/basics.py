"""Notebook 00 (basics): the reach table in page-size order, and walks per access of uniform random
accesses over growing working sets on any machine (a preset name or a derived Machine)."""

from __future__ import annotations

from .._progress import steps
from ..machines import machine as get_machine
from ..simulate import simulate
from ..units import format_size, parse_size

SIZES = {"quick": ["1M", "4M", "16M", "64M"], "full": ["512K", "1M", "2M", "4M", "8M", "16M", "32M", "64M", "256M"]}
ACCESSES = {"quick": 50_000, "full": 200_000}


def reach_pivot(data, value: str = "reach_label"):
    """Machines x page sizes of a :func:`pagesim.reach_table` frame, the columns in order of size
    (4K, 8K, 16K, ... 1G, 4G, 16G), not of their names."""
    order = data.drop_duplicates("page").sort_values("page_size")["page"].tolist()
    t = data.pivot_table(index="machine", columns="page", values=value, aggfunc="first")
    return t.reindex(columns=order).fillna("")


def default_pages(machine) -> list[str]:
    """The machine's base page and its smallest page of 2 MiB or more (4K and 2M on x86-64)."""
    m = get_machine(machine)
    big = min((p for p in m.page_sizes if p >= 2 << 20), default=max(m.page_sizes))
    return [format_size(m.base_page), format_size(big)]


def walks_vs_working_set(machine="skylake", pages=None, sizes=None, accesses=None, quick: bool = False, seed: int = 0, progress: bool = True):
    """Walks per access of uniform random accesses over each working set, for each page size (default:
    :func:`default_pages`): one row per (working set, page). ``machine``: a preset name or a Machine
    (``pagesim.machine("skylake").replace_structure("STLB", entries=768)``)."""
    import pandas as pd

    m = get_machine(machine)
    mode = "quick" if quick else "full"
    sizes = list(sizes or SIZES[mode])
    n = ACCESSES[mode] if accesses is None else accesses
    pages = [format_size(m.check_page_size(p)) for p in (pages or default_pages(m))]
    rows = []
    for ws, page in steps([(ws, p) for ws in sizes for p in pages], f"{m.name}: random accesses", show=progress):
        ds = simulate(m, "random", working_set=ws, accesses=n, page_size=page, seed=seed)
        rows.append(
            {"working set MiB": parse_size(ws, "working set") / 2**20, "page": page, "walks per access": float(ds["walks"].sum() / ds["accesses"].sum())}
        )
    return pd.DataFrame(rows)


def touch_faults(machine="power6", size="64K", page="4K") -> int:
    """Page faults of touching every byte of a fresh region of ``size`` with ``page`` pages."""
    return int(simulate(machine, "touch", size=size, page_size=page)["faults"].sum())
