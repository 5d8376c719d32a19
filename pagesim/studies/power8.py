"""Linux memory mapping on POWER8 (003_e083a135b5a1afda.txt): 16 MiB mapped with 64K normal pages,
16M hugetlb pages and 16M THP; memset versus random touch; ideal versus memory-pressure environment.

Modelling choices (stated): a 4 GiB memory of 64 KiB frames; the pressure environment is the
document's background thread holding 95% of memory with normal pages, scattered at random (they are
anonymous pages, so movable); the hugetlb pool is reserved before the pressure starts (a modelling
choice: sections V-VI of the document say only that mmap() maps the hugepages, not when or how they were
reserved); THP faults may compact memory (Linux's default THP defrag setting, 'madvise', compacts
directly for MADV_HUGEPAGE regions). Random touch: 4096 random 8-byte writes, enough to touch all
256 64K pages (as the document's equal counts imply).

Kernel work is counted two ways: the cost model's cycles (:func:`kernel_work`, every cost an
assumption of :class:`pagesim.machines.Costs`), and kernel instructions (:func:`kernel_instructions`):
zeroing counted from Linux's ppc64 clear_page, THP's compaction from its page copy, and the rest of
a fault an assumption (``FAULT_PATH``). The sweeps (:func:`thp_pressure_sweep`,
:func:`tlb_capacity_sweep`) give the range of the assumptions over which the exact counts hold.
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


def memories(seed: int = 1, held: float = HELD, movable: float = 1.0, placement: str = "scattered"):
    """The two environments: 'ideal' (free memory, the hugetlb pool reserved) and 'pressure' (then
    ``held`` of all memory taken by background pages, ``movable`` of them migratable, placed
    'scattered' at random (the study's choice) or 'caged' at the bottom of memory)."""
    if not isinstance(held, bool) and isinstance(held, (int, float)) and held > max_held():
        raise ValueError(
            f"held={held!r}: the hugetlb pool ({POOL} x 16M) is reserved first, so background pages can hold at most "
            f"{max_held():.5f} of the {RAM} memory (try 0.99 or 0.995)"
        )
    ideal = PhysicalMemory(RAM, frame=FRAME, max_block="16M").reserve_hugetlb(POOL, "16M")
    return {"ideal": ideal, "pressure": ideal.fragment(held, placement, movable=movable, seed=seed)}


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


# ------------------------------------------------------------------ where the exact counts hold


def thp_pressure_sweep(held=(0.5, 0.7, 0.8, 0.9, HELD, 0.99, 0.995), movable=(0.9, 0.95, 0.97, 0.98, 0.99, 1.0), seed: int = 0):
    """THP under pressure (memset, compaction allowed) as the pressure changes: the share of memory
    held (background pages all movable), the share of background pages that are movable (at
    ``HELD``), and the background pages caged instead of scattered. Each row: THP's faults and
    pages migrated, and the modelled fault cycles of THP and of 64K pages in the same memory.
    A memory the 16 MiB no longer fits in (the model does not reclaim) is a row with no counts."""
    import pandas as pd

    from ..memory import OutOfMemory

    cases = [("held", h, 1.0, "scattered") for h in held]
    cases += [("movable", HELD, m, "scattered") for m in movable]
    cases += [("placement", HELD, 1.0, "caged")]
    rows = []
    for what, h, m, place in cases:
        row = {"swept": what, "held": h, "movable": m, "placement": place}
        try:
            mem = memories(held=h, movable=m, placement=place)["pressure"]
            thp = run("THP", "memset", mem, seed=seed)
            normal = run("normal", "memset", mem, seed=seed)
        except OutOfMemory:
            rows.append(row | {"THP faults": None, "pages migrated": None, "THP fault cycles": None, "64K fault cycles": None})
            continue
        tc, nc = float(thp["cycles"].sel(component="fault").sum()), float(normal["cycles"].sel(component="fault").sum())
        counts = {"THP faults": int(thp["faults"].sum()), "pages migrated": int(thp["pages_migrated"])}
        rows.append(row | counts | {"THP fault cycles": tc, "64K fault cycles": nc})
    df = pd.DataFrame(rows)
    df["THP / 64K cycles"] = df["THP fault cycles"] / df["64K fault cycles"]
    return df


def _values(xs) -> str:
    return ", ".join(f"{x:g}" for x in xs) if len(xs) else "none"


def thp_pressure_holds(sw) -> str:
    """Where THP under pressure keeps its one fault, from :func:`thp_pressure_sweep`."""
    held, mov = sw[sw.swept == "held"], sw[sw.swept == "movable"]
    cage = sw[sw.swept == "placement"].iloc[0]
    ok_h = held[held["THP faults"] == 1]["held"].tolist()
    oom = held[held["THP faults"].isna()]["held"].tolist()
    ok_m, bad_m = mov[mov["THP faults"] == 1]["movable"].tolist(), mov[mov["THP faults"] != 1]["movable"].tolist()
    return (
        f"a share of movable background pages of {_values(ok_m)} (at {_values(bad_m)} the THP request falls back to 256 64K faults; held {HELD:g}); "
        f"held {_values(ok_h)} of memory, all movable (at {_values(oom)} not even 256 64K pages fit: the model does not reclaim); "
        f"background pages caged instead of scattered: {int(cage['THP faults'])} fault, {int(cage['pages migrated'])} pages migrated"
    )


def thp_costlier_holds(sw) -> str:
    """Where THP under pressure takes more modelled fault cycles than 64K pages, from :func:`thp_pressure_sweep`."""
    held = sw[(sw.swept == "held") & sw["THP faults"].notna()]
    more = held[held["THP / 64K cycles"] > 1]["held"].tolist()
    less = held[held["THP / 64K cycles"] <= 1]["held"].tolist()
    cage = sw[sw.swept == "placement"].iloc[0]
    return (
        f"held {_values(more)} of memory (THP / 64K fault cycles {_values(held[held['held'].isin(more)]['THP / 64K cycles'].round(3).tolist())}); "
        f"THP is the cheaper at held {_values(less)}, and with the background pages caged ({cage['THP / 64K cycles']:.2f}x)"
    )


def tlb_capacity_sweep(entries=(32, 64, 128, 192, 256, 512), seed: int = 0):
    """dTLB misses against page faults of 16 MiB of 64K pages when the data-side translation
    structures that can hold all 256 pages (the 256-entry secondary D-ERAT and the 2048-entry TLB)
    are both cut to ``entries``; memset and random touch, on free memory."""
    import pandas as pd

    from ..machines import machine

    base = machine("power8")
    mem = memories()["ideal"]
    rows = []
    for n in entries:
        m = base.replace_structure("TLB", entries=min(n, 2048)).replace_structure("secondary D-ERAT", entries=n, ways=n)
        for pattern in ("memset", "random"):
            lay = Layout((Region(START, SIZE, "64K", "[ anon ]"),))
            count = {"accesses": TOUCHES} if pattern == "random" else {}
            ds = simulate(m, "touch", size=SIZE, pattern=pattern, layout=lay, memory=mem, seed=seed, **count)
            rows.append({"entries": n, "access": pattern, "page faults": int(ds["faults"].sum()), "dTLB misses": int(ds["walks"].sel(side="data").sum())})
    return pd.DataFrame(rows)


def tlb_capacity_holds(sw, access: str) -> str:
    """Where dTLB misses equal page faults for ``access``, from :func:`tlb_capacity_sweep`."""
    t = sw[sw.access == access]
    ok, bad = t[t["dTLB misses"] == t["page faults"]], t[t["dTLB misses"] != t["page faults"]]
    text = f"secondary D-ERAT and TLB both cut to {_values(ok['entries'].tolist())} entries (the preset has 256 and 2048; the mapping has 256 64K pages)"
    if len(bad):
        text += "; at " + ", ".join(f"{r.entries} entries {r._4} misses for {r._3} faults" for r in bad.itertuples())
    return text


# ---------------------------------------------------------- kernel work: cycles, and instructions

#: POWER's cache lines are 128 bytes (datasets/architecture/NOTES.md, section 1.2)
LINE = 128
#: instructions per line zeroed: Linux's ppc64 clear_page (arch/powerpc/include/asm/page_64.h, the same
#: loop in Linux 4.9 and later, so in the document's 4.14) clears 8 lines per turn with 8 dcbz, one add, one bdnz
CLEAR_PER_LINE = 10 / 8
#: ESTIMATE (not counted on a POWER8): instructions around each 64 KiB clear_page: its operand set-up
#: and mtctr, and the call from the fault path or from clear_huge_page's loop over 64K subpages
CLEAR_CALL = 20
#: instructions per line copied when compaction migrates a page: copypage_power7
#: (arch/powerpc/lib/copypage_power7.S), whose VMX loop moves 128 bytes with 8 lvx, 8 stvx, 2 addi, one bdnz
COPY_PER_LINE = 19
#: MODELLING ASSUMPTION (not sourced): kernel instructions of one page fault apart from zeroing (exception
#: entry and return, the VMA lookup, the page allocation, the page-table update, the hashed-page-table insert)
FAULT_PATH = 2000


def kernel_work(seed: int = 0):
    """The cost model's fault component split into per-fault work and zeroing (modelled cycles:
    ``fault_cycles`` per fault and ``zero_cycles_per_kib`` per KiB, both assumptions of
    :class:`pagesim.machines.Costs`)."""
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


def kernel_instructions(mx, fault_path: float = FAULT_PATH, clear_call: float = CLEAR_CALL):
    """Kernel instructions of each run of :func:`matrix` (memset rows): the simulated faults x
    ``fault_path``; the bytes the faults zero, 64 KiB at a time (clear_page, ``CLEAR_PER_LINE`` per
    128-byte line plus ``clear_call`` per 64 KiB); and, for THP under pressure, the pages compaction
    migrates, copied at ``COPY_PER_LINE`` per line. hugetlb takes its page from the reserved pool and
    never compacts; the other differences between the THP and hugetlb allocation paths, and
    compaction's scanning and remapping, are not counted (the copy is a lower bound of its cost)."""
    import pandas as pd

    from ..units import parse_size

    sub = 64 << 10
    per_sub = sub // LINE * CLEAR_PER_LINE + clear_call
    rows = []
    for _, r in mx[mx.access == "memset"].iterrows():
        faults, moved = int(r["page faults"]), int(r["pages migrated"])
        zeroed = faults * parse_size(r["backed by"].split("/")[-1])
        row = {
            "environment": r["environment"],
            "page kind": r["page kind"],
            "page faults": faults,
            "pages migrated": moved,
            "fault path": faults * fault_path,
            "zeroing": zeroed // sub * per_sub,
            "copying": moved * (sub // LINE) * COPY_PER_LINE,
        }
        row["kernel instructions"] = row["fault path"] + row["zeroing"] + row["copying"]
        rows.append(row)
    return pd.DataFrame(rows)
