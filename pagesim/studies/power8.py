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

Cache references and misses (:func:`cache_counts`): what the document's counters count on a POWER8 (user-space
L1 data-cache loads, :data:`COUNTERS`), from the accesses of the document's own program (glibc's POWER8
memset, the random touch of its code) and of the kernel (clear_page's dcbz, compaction's copy), replayed in
order through POWER8's L1 data cache (:class:`L1D`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

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


# ---------------------------------------------------------- cache references and misses, user instructions

#: What the document's cache counters count. Its program (event_apis.h of the code its section VI.C links)
#: opens PERF_COUNT_HW_CACHE_REFERENCES and PERF_COUNT_HW_CACHE_MISSES with exclude_kernel and exclude_hv set:
#: user space only. On POWER8 Linux maps these generic events to PM_LD_REF_L1 ("All L1 D cache load
#: references counted at finish, gated by reject") and PM_LD_MISS_L1 ("Load Missed L1")
#: (arch/powerpc/perf/power8-pmu.c, power8_generic_events; arch/powerpc/include/asm/perf_event_server.h:
#: 'on POWER8, both "cache-references" and "L1-dcache-loads" events refer to the same event, PM_LD_REF_L1').
COUNTERS = {"cache-references": "PM_LD_REF_L1", "cache-misses": "PM_LD_MISS_L1"}

#: the readings of the cache counters the study compares: which accesses count, (privileges, operations)
READINGS = {
    "perf on POWER8: user loads": (("user",), ("load",)),
    "user and kernel loads": (("user", "kernel"), ("load",)),
    "every access, user and kernel": (("user", "kernel"), ("load", "store", "dcbz")),
}
PERF = "perf on POWER8: user loads"

#: glibc's POWER8 memset for a non-zero byte and more than 255 bytes (L(huge_vector) of
#: sysdeps/powerpc/powerpc64/power8/memset.S, glibc 2.20 to 2.26; the document's Ubuntu 17.04 ships 2.24):
#: per 128-byte line 8 stvx of 16 bytes, 2 addi and one bdnz; no load. The document memsets the value 1, so
#: the dcbz path (value 0 only) is not taken.
MEMSET_STORE = 16
MEMSET_PER_LINE = 11
#: the instructions of that memset outside its loop for a 128-byte-aligned 16 MiB: 27 from its entry to the loop
#: (cmpldi, neg, mr, 2 insrdi, ble; andi., insrdi, beq; cmpldi, dcbtst, cmpldi, crand, bt, bge; mtvsrd, xxpermdi,
#: vspltb, 3 li, mtocrf, srdi, cmpdi, beq, mtctr, b) and 8 in its tail (mtocrf, 6 bf, the final bflr)
MEMSET_OUTSIDE = 35
#: the document's random touch (normal_memory_analysis_random.c): for each 64 KiB of the 16 MiB,
#: ``addr[i + rand() % 65536] = 1``, a one-byte store: 256 stores whatever the page kind
RANDOM_STEP = 64 << 10
#: copypage_power7 (arch/powerpc/lib/copypage_power7.S) moves each 128-byte line with 8 lvx and 8 stvx
COPY_LOADS = COPY_STORES = 8


@dataclass(frozen=True)
class L1D:
    """POWER8's L1 data cache: 64 KiB, 8-way, 128-byte lines, store-through, so a store that misses
    allocates no line (IBM J. Res. Dev. 59(1) 2015, 'IBM POWER8 processor core microarchitecture', as
    quoted and measured in jiegec's POWER8 review: a 64 KiB knee in a pointer chase). Exact LRU
    (a modelling assumption: the real replacement is not documented here). ``dcbz`` (zero a line) is
    treated as a store: a MODELLING ASSUMPTION (the POWER8 L1 is store-through; where dcbz establishes
    its line is not sourced here)."""

    size: int = 64 << 10
    ways: int = 8
    line: int = LINE

    @property
    def sets(self) -> int:
        return self.size // (self.ways * self.line)


def replay(trace, cache: L1D = L1D()) -> dict:
    """Run ``trace`` through ``cache``: an iterable of (line number, operation, accesses, privilege),
    where consecutive accesses to one line are one entry of ``accesses`` (8 stvx of a memset line, 8 lvx
    of a copied line). A load is a reference; it misses when its line is not held, and then brings the
    line in (the entry's other accesses hit). A store or dcbz is a reference that misses when its line
    is not held, and brings nothing in. Returns {(privilege, operation): [references, misses]}."""
    sets = [[] for _ in range(cache.sets)]  # per set, line numbers, most recent last
    nsets, ways = cache.sets, cache.ways
    out = {}
    for line, op, n, who in trace:
        s = sets[line % nsets]
        held = line in s
        c = out.setdefault((who, op), [0, 0])
        c[0] += n
        if held:
            s.remove(line)
            s.append(line)
        elif op == "load":
            c[1] += 1
            if len(s) == ways:
                s.pop(0)
            s.append(line)
        else:
            c[1] += n
    return out


def _user_lines(pattern: str, seed: int):
    """The document's program's own accesses to the mapping, in order, as (offset, operation, accesses)."""
    import numpy as np

    if pattern == "memset":
        return [(off, "store", LINE // MEMSET_STORE) for off in range(0, SIZE, LINE)]
    rng = np.random.default_rng(seed)
    return [(int(i + r), "store", 1) for i, r in zip(range(0, SIZE, RANDOM_STEP), rng.integers(0, RANDOM_STEP, SIZE // RANDOM_STEP))]


def program_trace(pattern: str, backing: int, migrated: int = 0, seed: int = 0):
    """The accesses of one run (the document's program and the kernel's work for it), in order:
    ``backing`` the page size that backs the mapping (65536 or 16 MiB), ``migrated`` the 64K pages
    compaction moved before the THP fault. Each fault zeroes its page with clear_page (one dcbz per
    line, at the page's own lines), then the program's access goes on; a THP fault that compacts
    first copies each migrated page (8 lvx and 8 stvx per line, from and to frames outside the
    mapping). The rest of each fault (exception, VMA lookup, allocation, page-table updates) is not
    replayed: its loads are not known (the instruction model's FAULT_PATH is itself an assumption)."""
    out, faulted = [], set()
    away = (SIZE + (64 << 20)) // LINE  # line numbers of the frames compaction copies from and to
    for off, op, n in _user_lines(pattern, seed):
        page = off // backing
        if page not in faulted:
            faulted.add(page)
            if migrated:
                for p in range(migrated):
                    for ln in range(RANDOM_STEP // LINE):
                        src = away + (2 * p * RANDOM_STEP) // LINE + ln
                        out.append((src, "load", COPY_LOADS, "kernel"))
                        out.append((src + RANDOM_STEP // LINE, "store", COPY_STORES, "kernel"))
                migrated = 0
            first = page * backing // LINE
            out.extend((first + ln, "dcbz", 1, "kernel") for ln in range(backing // LINE))
        out.append((off // LINE, op, n, "user"))
    return out


def cache_counts(mx, seed: int = 0, cache: L1D = L1D()):
    """Cache references and misses of every run of :func:`matrix` under each of :data:`READINGS`:
    the runs' accesses (:func:`program_trace`, backed and compacted as the simulation decided)
    through POWER8's L1 data cache (:class:`L1D`)."""
    import pandas as pd

    from ..units import parse_size

    rows, memo = [], {}
    for _, r in mx.iterrows():
        backing, moved = parse_size(r["backed by"].split("/")[-1]), int(r["pages migrated"])
        key = (r["access"], backing, moved)
        if key not in memo:
            memo[key] = replay(program_trace(r["access"], backing, moved, seed), cache)
        got = memo[key]
        row = {"environment": r["environment"], "access": r["access"], "page kind": r["page kind"]}
        for name, (who, ops) in READINGS.items():
            row[f"{name}: references"] = sum(v[0] for (w, o), v in got.items() if w in who and o in ops)
            row[f"{name}: misses"] = sum(v[1] for (w, o), v in got.items() if w in who and o in ops)
        rows.append(row)
    return pd.DataFrame(rows)


def memset_instructions(size: int = SIZE) -> int:
    """User instructions of glibc's POWER8 memset of ``size`` bytes (a multiple of 128, 128-byte aligned)
    with a non-zero byte: :data:`MEMSET_PER_LINE` per line plus :data:`MEMSET_OUTSIDE`."""
    return size // LINE * MEMSET_PER_LINE + MEMSET_OUTSIDE


def bound_band(relation: str, value: float) -> tuple[float, float]:
    """The band of a figure the document gives only as a bound: '< v' is 0..v; '> v' is v..2v (the
    document gives no upper end: twice the bound, a stated choice)."""
    if relation == "<":
        return (0.0, float(value))
    if relation == ">":
        return (float(value), 2.0 * float(value))
    raise ValueError(f"relation {relation!r}: only '<' and '>' are bounds")
