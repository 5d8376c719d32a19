"""Linux memory mapping on POWER8 (003_e083a135b5a1afda.txt): 16 MiB mapped with 64K normal pages,
16M hugetlb pages and 16M THP; memset versus random touch; ideal versus memory-pressure environment.

Modelling choices (stated): a 4 GiB memory of 64 KiB frames; the pressure environment is the
document's background thread holding 95% of memory with normal pages, scattered at random (they are
anonymous pages, so movable); the hugetlb pool is reserved before the pressure starts (a modelling
choice: sections V-VI of the document say only that mmap() maps the hugepages, not when or how they were
reserved); THP faults may compact memory (Linux's default THP defrag setting, 'madvise', compacts
directly for MADV_HUGEPAGE regions). Random touch: 4096 random 8-byte writes, enough to touch all
256 64K pages (as the document's equal counts imply).
"""

from __future__ import annotations

import json

from ..layout import Layout, Region
from ..memory import PhysicalMemory
from ..simulate import simulate

SIZE = 16 << 20
START = 1 << 32
KINDS = {"normal": ("64K", "base"), "hugepage": ("16M", "hugetlb"), "THP": ("16M", "thp")}
TOUCHES = 4096  # random touches (see above)


RAM, FRAME, POOL = "4G", "64K", 1  # the modelled memory, its frames, and the hugetlb pool (16M pages)
HELD = 0.95  # the pressure environment: the share of memory the background thread holds


def max_held() -> float:
    """The largest share of memory the background pages can hold: all of it but the hugetlb pool."""
    m = PhysicalMemory(RAM, frame=FRAME, max_block="16M")
    return (m.nframes - POOL * (16 << 20) // m.frame) / m.nframes


def memories(seed: int = 1, held: float = HELD):
    """The two environments: 'ideal' (free memory, the hugetlb pool reserved) and 'pressure' (then
    ``held`` of all memory taken by movable background pages, scattered)."""
    if not isinstance(held, bool) and isinstance(held, (int, float)) and held > max_held():
        raise ValueError(
            f"held={held!r}: the hugetlb pool ({POOL} x 16M) is reserved first, so background pages can hold at most "
            f"{max_held():.5f} of the {RAM} memory (try 0.99 or 0.995)"
        )
    ideal = PhysicalMemory(RAM, frame=FRAME, max_block="16M").reserve_hugetlb(POOL, "16M")
    return {"ideal": ideal, "pressure": ideal.fragment(held, "scattered", movable=1.0, seed=seed)}


def run(kind: str, pattern: str, memory, compaction: bool = True, touches: int = TOUCHES, seed: int = 0):
    page, policy = KINDS[kind]
    lay = Layout((Region(START, SIZE, page, "[ anon ]", policy=policy),))
    count = {"accesses": touches} if pattern == "random" else {}  # memset writes every 8 bytes once
    return simulate("power8", "touch", size=SIZE, pattern=pattern, layout=lay, memory=memory, compaction=compaction, seed=seed, **count)


def matrix(seed: int = 0, held: float = HELD, touches: int = TOUCHES, compaction: bool = True):
    """Every environment x pattern x page kind: faults, dTLB misses, fault-handling cycles.
    ``held``: the share of memory held under pressure (:func:`memories`); ``touches``: random
    touches; ``compaction``: whether a THP fault may migrate pages to assemble its huge page."""
    import pandas as pd

    mems = memories(held=held)
    rows = []
    for env, mem in mems.items():
        for pattern in ("memset", "random"):
            for kind in KINDS:
                ds = run(kind, pattern, mem, compaction=compaction, touches=touches, seed=seed)
                back = sorted({r["page_size"] for r in json.loads(ds.attrs["layout"])})
                rows.append(
                    {
                        "environment": env,
                        "access": pattern,
                        "page kind": kind,
                        "backed by": "/".join(f"{b >> 10}K" if b < 1 << 20 else f"{b >> 20}M" for b in back),
                        "page faults": int(ds["faults"].sum()),
                        "dTLB misses": int(ds["walks"].sel(side="data").sum()),
                        "fault cycles": float(ds["cycles"].sel(component="fault").sum()),
                        "pages migrated": int(ds["pages_migrated"]),
                    }
                )
    return pd.DataFrame(rows)


def thp_without_compaction(seed: int = 0, held: float = HELD) -> dict:
    """THP under pressure when the kernel may not compact: the fallback the model predicts."""
    ds = run("THP", "memset", memories(held=held)["pressure"], compaction=False, seed=seed)
    return {"page faults": int(ds["faults"].sum()), "backing": json.loads(ds.attrs["backing"])}


def kernel_work(seed: int = 0):
    """The fault component split into per-fault work and zeroing (modelled cycles)."""
    import pandas as pd

    from ..machines import machine

    c = machine("power8").costs
    rows = []
    for kind, (page, _) in KINDS.items():
        faults = 256 if page == "64K" else 1
        rows.append(
            {"page kind": kind, "faults": faults, "per-fault cycles": faults * c.fault_cycles, "zeroing cycles": (SIZE // 1024) * c.zero_cycles_per_kib}
        )
    return pd.DataFrame(rows)
