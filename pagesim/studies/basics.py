"""Notebook 00 (basics): the reach table in page-size order and as a map, walks per access of uniform
random accesses over growing working sets on any machine (a preset name or a derived Machine), and the
findings each section records."""

from __future__ import annotations

import numpy as np

from ..core.progress import steps
from ..core.units import format_size, parse_size
from ..engine.simulate import simulate
from ..model.machines import machine as get_machine

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
    import pandas as pd  # deferred: pandas is slow to import; only tables need it

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


def reach_map(data, ax=None, title="TLB reach of every preset, by page size (largest data TLB level)"):
    """The reach table (machines x page sizes, in order of size) as a figure: each cell coloured by
    its reach on a log scale and labelled with it; "*" marks a reach that needs the UltraSPARC III
    Cu's T512_1 programmed to that page size. Empty: the machine has no such page size."""
    import matplotlib.pyplot as plt  # deferred: matplotlib is slow to import; only figures need it

    label = reach_pivot(data, "reach")
    reach = data.pivot_table(index="machine", columns="page", values="reach_bytes", aggfunc="first").reindex(index=label.index, columns=label.columns)
    programmed = data.pivot_table(index="machine", columns="page", values="programmed", aggfunc="any").reindex_like(reach).fillna(False).astype(bool)
    if ax is None:
        _, ax = plt.subplots(figsize=(11, 0.38 * len(reach) + 1.6))
    shown = np.log2(reach.where(reach > 0))
    image = ax.imshow(shown, cmap="viridis", aspect="auto")
    lo, hi = np.nanmin(shown.to_numpy()), np.nanmax(shown.to_numpy())
    for (i, j), v in np.ndenumerate(shown.to_numpy()):
        if np.isnan(v):
            continue
        text = label.iat[i, j] + ("*" if programmed.iat[i, j] else "")
        ax.text(j, i, text, ha="center", va="center", fontsize=8, color="black" if v > lo + 0.6 * (hi - lo) else "white")
    ax.set_xticks(range(reach.shape[1]), reach.columns)
    ax.set_yticks(range(reach.shape[0]), reach.index)
    ax.set_xlabel("page size")
    ax.set_ylabel("")
    ax.set_title(title)
    ticks = [t for t in range(int(np.ceil(lo)), int(hi) + 1) if t % 5 == 0]
    bar = ax.figure.colorbar(image, ax=ax, ticks=ticks, pad=0.01)
    bar.ax.set_yticklabels([format_size(1 << t) for t in ticks])
    bar.set_label("reach (log scale)")
    if programmed.to_numpy().any():
        ax.text(0, -0.12, "* with T512_1 programmed to that page size", transform=ax.transAxes, fontsize=8, va="top")
    return ax


def record_reach(F, data):
    """Findings of the reach section: the presets take their entry counts from the documents
    themselves, so these are worked arithmetic, not evidence; those the documents' own notebooks
    judge too are counted there (``counted_in``). ``data``: the data side of
    :func:`pagesim.reach_table`. The notebook's appendix lists them."""
    p5, k8 = get_machine("power5+"), get_machine("opteron-k8")
    why = "entries x page size; the preset takes its entries from this document"
    F.arithmetic(
        "reach-power5",
        "POWER5+: 2048 TLB entries x 4 KB = 8 MB",
        "000_1774b52266f446e5.txt, Introduction",
        "8M",
        format_size(p5.reach("4K", structure="TLB")),
        p5.reach("4K", structure="TLB") == 8 << 20,
        counted_in="01_power_64k:coverage-8mb",
        why=why,
    )
    F.arithmetic(
        "reach-k8-2m",
        "Opteron 2 MB pages: 8 entries, 16 MB",
        "001_ec4ce787d7978bc9.txt, section 3",
        "16 MB",
        format_size(k8.reach("2M")),
        k8.reach("2M") == 16 << 20,
        counted_in="02_opteron_cscs:reach-2m",
        why=why,
    )
    us = data.set_index(["machine", "page"])
    us3, us3cu = us.loc["ultrasparc-iii"], us.loc["ultrasparc-iii-cu"]
    F.arithmetic(
        "reach-us3cu-4m",
        "UltraSPARC III Cu reaches 512 x 4 MB with T512_1 programmed; the 750 MHz III only its 16-entry T16",
        "002_7166aff63bc805c7.txt, Things to watch out for",
        "two 512-entry TLBs, one programmable (III Cu); one, 8K only (III)",
        f"III Cu {us3cu.loc['4M', 'reach_label']}; III {us3.loc['4M', 'reach']}",
        us3cu.loc["4M", "reach_bytes"] == 512 * (4 << 20) and us3.loc["4M", "reach_bytes"] == 16 * (4 << 20),
        counted_in="03_solaris_mpss:us3cu",
        why="entries x page size of the presets, whose TLB designs come from this document",
    )
    k8_2m = sum(s.entries for s in k8.chain("data", 2 << 20))
    F.arithmetic(
        "k8-no-l2-2m",
        "Opteron: no L2 entries for 2 MB pages",
        "001_ec4ce787d7978bc9.txt, section 3",
        "8 entries overall",
        k8_2m,
        k8_2m == 8,
        counted_in="02_opteron_cscs:entries-2m",
        why="the preset's 2 MB chain, taken from this document",
    )


def record_first_simulation(F, walks, machine):
    """Findings of the first simulation: ``walks`` from :func:`walks_vs_working_set` on ``machine``
    (its :func:`default_pages`), and the page faults of touching 64 KiB with 4 KiB pages on POWER6.
    The notebook's appendix lists them."""
    small_page, big_page = default_pages(machine)
    w = walks.pivot(index="working set MiB", columns="page", values="walks per access")
    small, big = w.index.min(), w.index.max()
    why = "a property of the model shown in this notebook, not a document's measurement"
    F.arithmetic(
        "knee-4k",
        f"{small_page} pages: random accesses beyond the reach mostly walk",
        "principle (this notebook)",
        "walks rise with the working set",
        f"{w.loc[small, small_page]:.3f} -> {w.loc[big, small_page]:.3f}",
        w.loc[big, small_page] > 0.5 > w.loc[small, small_page],
        model=True,
        why=why,
    )
    F.arithmetic(
        "knee-2m",
        f"{big_page} pages keep the same working sets within reach",
        "principle (this notebook)",
        "few walks",
        f"{w.loc[big, big_page]:.3f} at {big:.0f} MiB",
        w.loc[big, big_page] < 0.1,
        model=True,
        why=why,
    )
    faults = touch_faults("power6", size="64K", page="4K")
    F.arithmetic(
        "faults-64k",
        "64 KiB touched with 4 KiB pages takes 16 faults",
        "000_1774b52266f446e5.txt, Page Fault Handling",
        16,
        faults,
        faults == 16,
        counted_in="01_power_64k:faults-4k",
        why="size / page size: each page of a fresh region faults once, at its first touch: 64 KiB / 4 KiB = 16",
    )


def nested_costs(machine="skylake", quick: bool = False, seed: int = 0):
    """Uniform random accesses over 256 MiB (64 MiB with ``quick``) on ``machine`` bare metal and
    virtualised (host 4K and 2M pages), with 4K and 2M guest pages: walks per 1,000 accesses and
    the references of a walk, the guest's and the host's (the host's table and walk caches shaped
    like the guest's: docs/nested.md)."""
    import pandas as pd  # deferred: pandas is slow to import; only tables need it

    m = get_machine(machine)
    size, n = (64 << 20, 20_000) if quick else (256 << 20, 100_000)
    rows = []
    for label, mm in (("bare metal", m), ("host 4K pages", m.virtualised("4K")), ("host 2M pages", m.virtualised("2M"))):
        for page in ("4K", "2M"):
            ds = simulate(mm, "random", working_set=size, accesses=n, page_size=page, seed=seed)
            walks, refs = int(ds["walks"].sum()), int(ds["walk_refs"].sum())
            host = int(ds["host_walk_refs"].sum()) if "host_walk_refs" in ds else 0
            rows.append(
                {
                    "setting": label,
                    "guest page": page,
                    "walks per 1,000 accesses": 1000 * walks / n,
                    "guest refs per walk": (refs - host) / max(walks, 1),
                    "host refs per walk": host / max(walks, 1),
                    "refs per walk": refs / max(walks, 1),
                }
            )
    return pd.DataFrame(rows).round(2)
