"""Per-student exercise variants and their answers (the assignments in ``exercises/``).

Each assignment is a list of questions; each question is a function of a seeded random generator
that returns the parameters a student sees, the question text, and the answers, computed with
pagesim itself (so the autograder recomputes them for a student's seed). The seed comes from the
student's id (a SHA-256 hash), or is an int given directly. Same seed, same questions; two
students differ in machine, page size, working set or address.

>>> from pagesim import exercises
>>> sheet = exercises.Sheet("00", "ada@example.edu")
>>> sheet.params("q1")["machine"] in exercises.RADIX_MACHINES
True

The notebooks call :class:`Sheet` to show a student's questions; hidden tests call
:func:`correct` with the submitted value. Instructors run ``pagesim exercises build`` and
``pagesim exercises grade`` (see exercises/README.md and :mod:`pagesim.teaching.grading`).
"""

from __future__ import annotations

import hashlib
import html
import math
import shutil
import sys
import unicodedata

import numpy as np

from .._kernels.rules import SEGMENT_SHIFT, VSID_MULT, hpt_group
from ..core.units import format_size, log2, parse_size
from ..engine.simulate import simulate
from ..model.costs import miss_count
from ..model.machines import machine
from ..system.pagetables import shared_page_table_table

PLACEHOLDER_ID = "change-me@example.edu"  # the student notebooks' STUDENT_ID until the student sets it
RADIX_MACHINES = ("skylake", "zen4", "golden-cove", "neoverse-n1", "opteron-k8", "apple-m1")
# machines where one data structure holds both the base page and a huge page
SHARED_L2 = {"skylake": "STLB", "zen4": "L2 DTLB", "neoverse-n1": "L2 TLB", "apple-m1": "L2 TLB"}


def seed_of(student) -> int:
    """A student's seed: an int as given (0 .. 2**32-1), or a non-empty id hashed with SHA-256."""
    if isinstance(student, bool):
        raise TypeError(f"student must be an id (str) or a seed (int), got bool {student!r}")
    if isinstance(student, (int, np.integer)):
        if not 0 <= int(student) < 1 << 32:
            raise ValueError(f"student={student!r} is out of range: a seed is 0 .. 2**32-1")
        return int(student)
    if not isinstance(student, str):
        raise TypeError(f"student must be an id (str) or a seed (int), got {type(student).__name__} {student!r}")
    s = student.strip()
    if not s:
        raise ValueError("student='' is empty: give your student id (e.g. STUDENT_ID = \"ada@example.edu\")")
    hidden = [ch for ch in s if unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Zl", "Zp")]
    if hidden:
        raise ValueError(
            f"student={student!r} holds an invisible or control character (U+{ord(hidden[0]):04X}): an id is printable "
            'characters only (e.g. STUDENT_ID = "ada@example.edu")'
        )
    return int.from_bytes(hashlib.sha256(s.encode()).digest()[:4], "big")


class Question:
    """One generated question: parameters, the text a student reads, and named answers (computed
    on first use: a simulation's answer costs a run, a question's text does not)."""

    def __init__(self, name: str, text: str, params: dict, answers, precision: dict):
        # precision: answer -> ("sig", n) (n significant figures) or ("dec", n) (n decimals); absent: exact
        self.name, self.text, self.params, self.precision = name, text, params, precision
        self._answers = answers

    @property
    def answers(self) -> dict:
        if callable(self._answers):
            self._answers = self._answers()
        return self._answers


SIG3 = ("sig", 3)  # graded to 3 significant figures
SIG4 = ("sig", 4)  # graded to 4 significant figures
DEC1 = ("dec", 1)  # graded to one decimal place
DEC2 = ("dec", 2)  # graded to two decimal places


def precision_text(precision, what: str = "it") -> str:
    """How precise a float answer must be, as its question says it (one sentence)."""
    kind, n = precision
    if kind == "sig":
        return f"Give {what} to {n} significant figures: an answer within one unit of the exact value's {_ordinal(n)} figure scores."
    places = "one decimal place" if n == 1 else f"{n} decimal places"
    return f"Give {what} to {places}: an answer within {10.0**-n:g} of the exact value scores."


def _ordinal(n: int) -> str:
    return {1: "first", 2: "second", 3: "third", 4: "fourth"}.get(n, f"{n}th")


def _unit(expected: float, precision) -> float:
    """One unit of the last place a float answer is graded at."""
    kind, n = precision
    if kind == "dec":
        return 10.0**-n
    if expected == 0:
        return 0.0
    return 10.0 ** (math.floor(math.log10(abs(expected))) - (n - 1))


def _pick(rng, seq):
    return seq[int(rng.integers(len(seq)))]


# ---------------------------------------------------------------------------------------------
# 00 basics: index bits, reach, walk references, a first simulation


def _radix_index(m, address: int, level: int) -> int:
    w = m.walker
    shift = w.base_shift + sum(w.level_bits[level + 1 :])
    return (address >> shift) & ((1 << w.level_bits[level]) - 1)


def q00_index(rng):
    name = _pick(rng, RADIX_MACHINES)

    m = machine(name)
    top = m.va_bits - 1
    address = int(rng.integers(1 << 30, 1 << top)) & ~0x7
    leaf = len(m.walker.level_bits) - 1
    text = (
        f"On `{name}` with {format_size(m.base_page)} pages, the address {address:#x} is translated by a "
        f"{len(m.walker.level_bits)}-level radix walk (bits per level {list(m.walker.level_bits)}, the "
        f"{log2(m.base_page)} low bits are the page offset). Work out by hand the index into the top-level "
        f"table (`q1_top`) and into the leaf table (`q1_leaf`), then check with `translate`."
    )
    return dict(
        params={"machine": name, "address": address, "page_size": m.base_page},
        answers={"q1_top": _radix_index(m, address, 0), "q1_leaf": _radix_index(m, address, leaf)},
        text=text,
    )


def _variant_l2(rng):

    name = _pick(rng, sorted(SHARED_L2))
    m = machine(name)
    st = m.structure(SHARED_L2[name])
    # any number of sets from a quarter to twice the real one: a variant per student, not one of a few
    entries = st.ways * int(rng.integers(st.sets // 4, 2 * st.sets + 1))
    return name, st.name, entries, m.replace_structure(st.name, entries=entries, new_name=f"{name} ({st.name} {entries})")


def q00_reach(rng):
    name, sname, entries, m = _variant_l2(rng)
    huge = m.page_sizes[1]
    text = (
        f"A variant of `{name}` whose `{sname}` has {entries} entries ({m.structure(sname).ways}-way). "
        f"The structure holds {format_size(m.base_page)} and {format_size(huge)} pages. Give its reach "
        f"in bytes with {format_size(m.base_page)} pages (`q2_reach_base`) and with {format_size(huge)} "
        f"pages (`q2_reach_huge`)."
    )
    return dict(
        params={"machine": name, "structure": sname, "entries": entries, "huge_page": huge},
        answers={"q2_reach_base": m.reach(m.base_page, structure=sname), "q2_reach_huge": m.reach(huge, structure=sname)},
        text=text,
    )


def q00_walk(rng):

    name = _pick(rng, RADIX_MACHINES)
    m = machine(name)
    huge = int(_pick(rng, m.page_sizes[1:]))
    walks = int(rng.integers(100, 10_000))
    cached = int(rng.integers(0, m.walker.leaf_refs(huge)))  # upper levels the page-walk caches supply
    pwc = (
        "finds nothing in page-walk caches"
        if cached == 0
        else f"finds the entries of the top {cached} level{'s' if cached > 1 else ''} in page-walk caches (it reads only the levels below from memory)"
    )
    text = (
        f"On `{name}` ({len(m.walker.level_bits)}-level radix tree), suppose {walks} TLB misses each start a walk that {pwc}. "
        f"How many memory references do the {walks} walks make in all for {format_size(m.base_page)} pages "
        f"(`q3_refs_base`) and for {format_size(huge)} pages (`q3_refs_huge`)?"
    )
    return dict(
        params={"machine": name, "huge_page": huge, "walks": walks, "pwc_levels": cached},
        answers={
            "q3_refs_base": walks * (m.walker.leaf_refs(m.base_page) - cached),
            "q3_refs_huge": walks * (m.walker.leaf_refs(huge) - cached),
        },
        text=text,
    )


def _walks_per_access(m, working_set, accesses, page_size, seed) -> float:

    ds = simulate(m, "random", working_set=working_set, accesses=accesses, page_size=page_size, seed=seed)
    return float(ds["walks"].sum()) / accesses


def q00_simulate(rng):

    name = _pick(rng, ("skylake", "zen4", "neoverse-n1", "opteron-k8"))
    m = machine(name)
    ws = int(_pick(rng, (16, 32, 64, 128, 256))) << 20
    seed = int(rng.integers(1 << 16))
    acc = 20_000
    text = (
        f"Simulate {acc} uniformly random accesses over a {format_size(ws)} working set on `{name}` with "
        f'{format_size(m.base_page)} pages (`pagesim.simulate("{name}", "random", working_set="{format_size(ws)}", '
        f'accesses={acc}, page_size="{format_size(m.base_page)}", seed={seed})`) and give the page walks per '
        f"access (`q4_walks_per_access`, a float). {precision_text(SIG3)}"
    )
    return dict(
        params={"machine": name, "working_set": ws, "accesses": acc, "seed": seed, "page_size": m.base_page},
        answers=lambda: {"q4_walks_per_access": _walks_per_access(name, ws, acc, m.base_page, seed)},
        text=text,
        precision={"q4_walks_per_access": SIG3},
    )


def _sim(m, workload, page_size, seed, **kw):

    return simulate(m, workload, page_size=page_size, seed=seed, **kw)


def _seed(rng) -> int:
    return int(rng.integers(1 << 16))


# ---------------------------------------------------------------------------------------------
# 01 POWER, 64 KB pages: faults, ERAT reach, page-cache packing, ERAT misses


def q01_faults(rng):
    size = int(rng.integers(1, 64)) * (64 << 10)
    text = (
        f"A program writes every byte of a freshly mapped {format_size(size)} buffer in order (memset) on "
        f"`power6`. How many page faults does it take with 4 KB pages (`q1_faults_4k`) and with 64 KB pages "
        f"(`q1_faults_64k`)? (No prefaulting: one fault maps one page.) Check with "
        f'`pagesim.simulate("power6", "touch", size={size}, pattern="memset", page_size=...)`.'
    )
    return dict(params={"machine": "power6", "size": size}, answers={"q1_faults_4k": size // 4096, "q1_faults_64k": size // 65536}, text=text)


def q01_reach(rng):

    entries = 2 * int(rng.integers(16, 257))  # 2-way: 32 to 512 entries
    m = machine("power6").replace_structure("D-ERAT", entries=entries)
    text = (
        f"A POWER6 variant whose data ERAT has {entries} entries (2-way). Give its reach in bytes with 4 KB pages "
        f"(`q2_reach_4k`) and with 64 KB pages (`q2_reach_64k`)."
    )
    return dict(
        params={"machine": "power6", "structure": "D-ERAT", "entries": entries},
        answers={"q2_reach_4k": m.reach("4K", structure="D-ERAT"), "q2_reach_64k": m.reach("64K", structure="D-ERAT")},
        text=text,
    )


def q01_files(rng):
    fsize = int(rng.integers(300, 200_000))
    cache = int(rng.integers(64, 1025)) << 20
    per4, per64 = -(-fsize // 4096) * 4096, -(-fsize // 65536) * 65536
    text = (
        f"A page cache of {format_size(cache)} holds files of {fsize} bytes each; a file takes whole pages. How "
        f"many files fit with 4 KB pages (`q3_files_4k`) and with 64 KB pages (`q3_files_64k`)?"
    )
    return dict(params={"file_bytes": fsize, "cache": cache}, answers={"q3_files_4k": cache // per4, "q3_files_64k": cache // per64}, text=text)


def _erat_reduction(ws, acc, seed) -> float:

    small = miss_count(_sim("power6", "random", "4K", seed, working_set=ws, accesses=acc), "D-ERAT")
    large = miss_count(_sim("power6", "random", "64K", seed, working_set=ws, accesses=acc), "D-ERAT")
    return 100.0 * (1 - large / small)


def q01_erat(rng):
    # any whole MiB from 2 to 32: inside the 64 KB reach the reduction is set by the working set
    # alone (a few cold misses), so each size is one answer and few students share one
    ws = int(rng.integers(2, 33)) << 20
    seed, acc = _seed(rng), 20_000
    text = (
        f"Simulate {acc} random accesses over {format_size(ws)} on `power6` with 4 KB and with 64 KB pages "
        f'(`working_set="{format_size(ws)}", accesses={acc}, seed={seed}`) and give the reduction in data-ERAT '
        f"misses, in percent (`q4_reduction_pct` = 100 x (1 - misses 64K / misses 4K); "
        f'`pagesim.model.costs.miss_count(ds, "D-ERAT")` counts them). {precision_text(DEC2)} Predict first: inside or beyond the 64 KB reach?'
    )
    return dict(
        params={"machine": "power6", "working_set": ws, "accesses": acc, "seed": seed},
        answers=lambda: {"q4_reduction_pct": _erat_reduction(ws, acc, seed)},
        text=text,
        precision={"q4_reduction_pct": DEC2},
    )


# ---------------------------------------------------------------------------------------------
# 02 Opteron (Cray XT3): reach of split TLBs, L2 sets of planes, walks, scaling


def q02_reach(rng):

    e1 = int(rng.integers(2, 49))  # fully associative
    e2 = 4 * int(rng.integers(32, 385))  # 4-way: 128 to 1536 entries
    m = machine("opteron-k8").replace_structure("L1 DTLB 2M", entries=e1, ways=e1).replace_structure("L2 DTLB 4K", entries=e2)
    text = (
        f"An Opteron K8 variant: the L1 data TLB for 2 MB pages has {e1} entries, the L2 data TLB {e2} entries "
        f"(4-way) and holds 4 KB pages only; there is no L2 entry for 2 MB pages. Give the largest data reach with "
        f"4 KB pages (`q1_reach_4k`) and with 2 MB pages (`q1_reach_2m`), in bytes."
    )
    return dict(
        params={"machine": "opteron-k8", "l1_2m_entries": e1, "l2_4k_entries": e2},
        answers={"q1_reach_4k": m.reach("4K"), "q1_reach_2m": m.reach("2M")},
        text=text,
    )


def q02_sets(rng):

    st = machine("opteron-k8").structure("L2 DTLB 4K")
    planes = int(rng.integers(8, 49))
    # a stride of (odd number) x 2**k pages: the larger k, the fewer sets the planes share; the
    # first plane starts at a page of its own, so the sets (and plane 1's set) differ across students
    k = int(rng.integers(0, 8))
    stride = (2 * int(rng.integers(0, 32)) + 1) * (1 << k) * 4096
    base = int(rng.integers(1 << 8, 1 << 20)) * 4096
    pages = [(base + i * stride) >> 12 for i in range(planes)]
    sets = {page % st.sets for page in pages}
    text = (
        f"The solver walks {planes} planes that start {stride} bytes apart (plane i at address {base:#x} + i x {stride}). "
        f"On `opteron-k8` with 4 KB pages, the L2 DTLB has {st.entries} entries, {st.ways}-way: {st.sets} sets, "
        f"indexed by the page number mod {st.sets}. Into how many distinct L2 sets do the planes' first pages "
        f"fall (`q2_sets`), and which set holds plane 1's first page (`q2_set_plane1`)?"
    )
    return dict(
        params={"planes": planes, "base": base, "stride": stride, "sets": st.sets, "ways": st.ways},
        answers={"q2_sets": len(sets), "q2_set_plane1": pages[1] % st.sets},
        text=text,
    )


def q02_walks(rng):
    ws = int(_pick(rng, (4, 8, 12, 24, 32, 48, 64))) << 20
    seed, acc = _seed(rng), 20_000
    text = (
        f"Simulate {acc} random accesses over {format_size(ws)} on `opteron-k8` with 4 KB pages and with 2 MB "
        f'pages (`working_set="{format_size(ws)}", accesses={acc}, seed={seed}`) and give the walks per access '
        f"of each (`q3_walks_4k`, `q3_walks_2m`). {precision_text(SIG3, 'each')}"
    )
    return dict(
        params={"machine": "opteron-k8", "working_set": ws, "accesses": acc, "seed": seed},
        answers=lambda: {
            "q3_walks_4k": _walks_per_access("opteron-k8", ws, acc, "4K", seed),
            "q3_walks_2m": _walks_per_access("opteron-k8", ws, acc, "2M", seed),
        },
        text=text,
        precision={"q3_walks_4k": SIG3, "q3_walks_2m": SIG3},
    )


def q02_scaling(rng):
    total = int(rng.integers(200, 2000))
    reach_mib = 16
    text = (
        f"Strong scaling: a problem of {total} MiB is split evenly over P processors. With 2 MB pages the "
        f"Opteron's data TLB reaches {reach_mib} MiB (8 entries). What is the smallest P for which each processor's "
        f"share fits in that reach (`q4_processors`)?"
    )
    return dict(params={"total_mib": total, "reach_mib": reach_mib}, answers={"q4_processors": -(-total // reach_mib)}, text=text)


# ---------------------------------------------------------------------------------------------
# 03 Solaris MPSS on UltraSPARC: TSB slot, programmable TLB, traps, %time


def q03_tsb(rng):

    m = machine("ultrasparc-iii")
    a = int(rng.integers(1 << 20, 1 << 43)) & ~0x7
    big = int(_pick(rng, (65536, 524288, 4194304)))
    n = m.walker.tsb_entries
    text = (
        f"On `ultrasparc-iii` a TLB miss traps to software, which probes a direct-mapped TSB of {n} entries per "
        f"page size at slot (page number mod {n}). For the address {a:#x}, which slot does the 8 KB TSB probe "
        f"(`q1_slot_8k`) and which the {format_size(big)} TSB (`q1_slot_big`)? Check with `translate`."
    )
    return dict(
        params={"machine": "ultrasparc-iii", "address": a, "big_page": big, "tsb_entries": n},
        answers={"q1_slot_8k": (a >> 13) & (n - 1), "q1_slot_big": (a >> log2(big)) & (n - 1)},
        text=text,
    )


def q03_reach(rng):

    big = int(_pick(rng, (65536, 524288, 4194304)))
    entries = 2 * int(rng.integers(64, 1025))  # 2-way: 128 to 2048 entries
    m = machine("ultrasparc-iii-cu")
    for name in ("dTLB T512_0", "dTLB T512_1"):
        m = m.replace_structure(name, entries=entries)
    text = (
        f"A hypothetical UltraSPARC III Cu with two {entries}-entry 2-way data TLBs (the real ones have 512): "
        f"T512_0 holds 8 KB pages, T512_1 holds one large size chosen per process (Solaris programs it). Give "
        f"T512_0's reach with 8 KB pages (`q2_reach_8k`) and T512_1's reach programmed to {format_size(big)} "
        f"(`q2_reach_big`), in bytes."
    )
    return dict(
        params={"machine": "ultrasparc-iii-cu", "entries": entries, "big_page": big},
        answers={"q2_reach_8k": m.reach("8K", structure="dTLB T512_0"), "q2_reach_big": m.reach(big, structure="dTLB T512_1", programmed=True)},
        text=text,
    )


def q03_traps(rng):
    ws = int(_pick(rng, (8, 16, 32, 64, 128))) << 20
    seed, acc = _seed(rng), 20_000
    text = (
        f"Simulate {acc} random accesses over a {format_size(ws)} heap on `ultrasparc-iii-cu` with 8 KB pages and "
        f'with 4 MB pages (`working_set="{format_size(ws)}", accesses={acc}, seed={seed}`). Give the TLB-miss '
        f"traps (walks) of each (`q3_traps_8k`, `q3_traps_4m`)."
    )

    def traps(p):
        return int(_sim("ultrasparc-iii-cu", "random", p, seed, working_set=ws, accesses=acc)["walks"].sum())

    return dict(
        params={"machine": "ultrasparc-iii-cu", "working_set": ws, "accesses": acc, "seed": seed},
        answers=lambda: {"q3_traps_8k": traps("8K"), "q3_traps_4m": traps("4M")},
        text=text,
    )


def q03_share(rng):
    misses = int(rng.integers(10, 500)) * 1000
    per = int(_pick(rng, (50, 80, 100, 150, 200)))
    # everything else takes 1 to 19 times the trap cycles (whole millions): %tim from 5% to 50%.
    # Leaving the traps out of the total (traps x cycles / other) then overshoots by
    # 100 p^2 / (1 - p) > 0.26 points, more than the 0.1 an answer may be off
    trap_cycles = misses * per
    other = int(rng.integers(-(-trap_cycles // 1_000_000), 19 * trap_cycles // 1_000_000 + 1)) * 1_000_000
    share = 100.0 * misses * per / (misses * per + other)
    text = (
        f"trapstat's %tim is the share of time spent in TLB-miss traps. A run takes {misses} dTLB-miss traps of "
        f"{per} cycles each and spends {other} cycles on everything else. What %tim does trapstat show "
        f"(`q4_tim_pct`, in percent)? {precision_text(DEC1)} (trapstat prints one decimal.)"
    )
    return dict(
        params={"traps": misses, "cycles_per_trap": per, "other_cycles": other}, answers={"q4_tim_pct": share}, text=text, precision={"q4_tim_pct": DEC1}
    )


# ---------------------------------------------------------------------------------------------
# 04 Linux mmap on POWER8: faults, random touches, the hashed page table's groups


def q04_faults(rng):
    size = int(rng.integers(1, 65)) * (16 << 20)
    text = (
        f"A program memsets a freshly mapped {format_size(size)} region on `power8`. How many page faults with "
        f"64 KB pages (`q1_faults_64k`) and with 16 MB hugetlb pages (`q1_faults_16m`)?"
    )
    return dict(params={"machine": "power8", "size": size}, answers={"q1_faults_64k": size // 65536, "q1_faults_16m": size // (16 << 20)}, text=text)


def q04_random(rng):
    # from half as many touches as pages to four per page: with at least 128 touches of 256 pages,
    # some two touches share a page (every touch faulting is never the answer)
    touches = int(rng.integers(128, 1025))
    seed = _seed(rng)
    size = 16 << 20
    text = (
        f"Touch {touches} random 8-byte offsets of a fresh 16 MiB region on `power8` with 64 KB pages "
        f'(`pagesim.simulate("power8", "touch", size="16M", pattern="random", accesses={touches}, '
        f'page_size="64K", seed={seed})`). How many page faults (`q2_faults`)? Predict first: at most how many?'
    )
    return dict(
        params={"machine": "power8", "touches": touches, "seed": seed, "size": size},
        answers=lambda: {"q2_faults": int(_sim("power8", "touch", "64K", seed, size=size, pattern="random", accesses=touches)["faults"].sum())},
        text=text,
    )


def q04_pteg(rng):

    m = machine("power8")
    n = m.walker.hpt_ptegs
    page = int(_pick(rng, (4096, 65536)))
    a = int(rng.integers(1 << 28, 1 << 40)) & ~0x7
    h = hpt_group.py_func(a, log2(page), n - 1)
    text = (
        f"POWER8's hashed page table has {n} groups (PTEGs) of 8 entries. For the address {a:#x} with "
        f"{format_size(page)} pages: ESID = address >> {SEGMENT_SHIFT}; pagesim's VSID = (ESID x {VSID_MULT:#x}) "
        f"& 0xFFFFFFFFF (a modelling assumption); page index = (address mod 256 MiB) >> {log2(page)}; primary group "
        f"= (VSID XOR page index) mod {n}; the secondary group is its complement (mod {n}). Give both "
        f'(`q3_primary`, `q3_secondary`). Check with `translate("power8", address, page)`.'
    )
    return dict(
        params={"machine": "power8", "address": a, "page_size": page, "ptegs": n, "vsid_mult": VSID_MULT},
        answers={"q3_primary": h, "q3_secondary": (~h) & (n - 1)},
        text=text,
    )


# ---------------------------------------------------------------------------------------------
# 05 shared page tables: leaf tables of a pool, private vs shared, freed memory


def q05_leaf(rng):
    pool = int(rng.integers(1, 49)) << 30  # whole GiB: whole leaf tables with 4 KB and with 2 MB pages
    text = (
        f"On x86-64 (4 levels of 512 8-byte entries, 4 KiB tables) one process maps a {format_size(pool)} buffer "
        f"pool. How many bytes of leaf page tables (the level that holds the translations) does it need with 4 KB "
        f"pages (`q1_leaf_4k`: the PTE tables) and with 2 MB pages (`q1_leaf_2m`: the PMD tables)?"
    )
    return dict(params={"pool": pool}, answers={"q1_leaf_4k": pool // 4096 * 8, "q1_leaf_2m": pool // (2 << 20) * 8}, text=text)


def _db(rng):
    return {
        "processes": int(rng.integers(20, 400)),
        "buffer_pool": int(rng.integers(1, 12)) << 30,
        "shared_text": int(rng.integers(10, 100)) << 20,
        "private": int(rng.integers(20, 200)) << 20,
    }


def q05_tables(rng):

    db = _db(rng)
    t = shared_page_table_table(**db).set_index(["pool_pages", "page_tables"])["bytes"]
    text = (
        f"A database of {db['processes']} processes, each mapping a {format_size(db['buffer_pool'])} shared buffer "
        f"pool (4 KB pages), {format_size(db['shared_text'])} of shared text and {format_size(db['private'])} "
        f"private. With `pagesim.system.pagetables.shared_page_table_table(**p2)`, give the total page-table bytes with "
        f"private tables (`q2_private`) and with shared leaf tables (`q2_shared`), pool in 4 KB pages."
    )
    return dict(params=db, answers={"q2_private": int(t[("4K", "private")]), "q2_shared": int(t[("4K", "shared")])}, text=text)


def q05_freed(rng):

    db = _db(rng)
    ram = int(_pick(rng, (8, 16, 32, 64))) << 30
    t = shared_page_table_table(**db).set_index(["pool_pages", "page_tables"])["bytes"]
    freed = 100.0 * (t[("4K", "private")] - t[("4K", "shared")]) / ram
    text = (
        f"A database of {db['processes']} processes ({format_size(db['buffer_pool'])} shared pool in 4 KB pages, "
        f"{format_size(db['shared_text'])} shared text, {format_size(db['private'])} private each) on a machine with "
        f"{format_size(ram)} of RAM: what share of RAM, in percent, "
        f"does sharing the page tables free (`q3_freed_pct`, pool in 4 KB pages)? {precision_text(SIG4)} Predict before computing: "
        f"does it grow with the process count?"
    )
    return dict(params={**db, "ram": ram}, answers={"q3_freed_pct": float(freed)}, text=text, precision={"q3_freed_pct": SIG4})


# ---------------------------------------------------------------------------------------------

ASSIGNMENTS = {
    "00": ("00_basics", [("q1", q00_index), ("q2", q00_reach), ("q3", q00_walk), ("q4", q00_simulate)]),
    "01": ("01_power_64k", [("q1", q01_faults), ("q2", q01_reach), ("q3", q01_files), ("q4", q01_erat)]),
    "02": ("02_opteron_cscs", [("q1", q02_reach), ("q2", q02_sets), ("q3", q02_walks), ("q4", q02_scaling)]),
    "03": ("03_solaris_mpss", [("q1", q03_tsb), ("q2", q03_reach), ("q3", q03_traps), ("q4", q03_share)]),
    "04": ("04_power8_mmap", [("q1", q04_faults), ("q2", q04_random), ("q3", q04_pteg)]),
    "05": ("05_shared_page_tables", [("q1", q05_leaf), ("q2", q05_tables), ("q3", q05_freed)]),
}


def assignment_key(assignment) -> str:
    key = str(assignment)[:2]
    if key not in ASSIGNMENTS:
        raise ValueError(f"assignment={assignment!r} is unknown: allowed {sorted(ASSIGNMENTS)} (or their names {[v[0] for v in ASSIGNMENTS.values()]})")
    return key


class Sheet:
    """One student's questions for one assignment: ``Sheet("00", student_id)``."""

    def __init__(self, assignment, student, note: bool = True):
        self.assignment = assignment_key(assignment)
        self.seed = seed_of(student)
        if note and student == PLACEHOLDER_ID:  # the hidden tests (correct) print nothing: doctest reads output
            print(
                f"Note: STUDENT_ID is still the placeholder {PLACEHOLDER_ID!r}: put your own id, or your answers "
                "will be graded for the placeholder's questions."
            )
        self._questions = {}

    def question(self, name) -> Question:
        if name not in self._questions:
            gens = dict(ASSIGNMENTS[self.assignment][1])
            if name not in gens:
                raise ValueError(f"question={name!r} is not in assignment {self.assignment}: allowed {sorted(gens)}")
            idx = list(gens).index(name)
            rng = np.random.default_rng([self.seed, int(self.assignment), idx])
            out = gens[name](rng)
            self._questions[name] = Question(name, out["text"], out["params"], out["answers"], out.get("precision", {}))
        return self._questions[name]

    @property
    def names(self) -> list[str]:
        return [n for n, _ in ASSIGNMENTS[self.assignment][1]]

    def params(self, name) -> dict:
        return dict(self.question(name).params)

    def show(self, name) -> None:
        """Print a question as the student reads it (parameters in the text)."""
        print(f"[{ASSIGNMENTS[self.assignment][0]}, seed {self.seed}] {name}: {self.question(name).text}")

    def answers(self) -> dict:
        """Every answer of this sheet (the instructor's key; the autograder calls :func:`correct`)."""
        out = {}
        for n in self.names:
            out.update(self.question(n).answers)
        return out

    def answer_names(self) -> list[str]:
        return list(self.answers())


def number(value) -> int | float | None:
    """An answer as the checks read it: an int (Python's or numpy's, or a 0-d array or xarray value
    holding one), a finite float (anything ``float()`` reads that is not an array of one or more
    dimensions), or None for anything else (None, ``...``, str, bytes, bool, nan, an array)."""
    if value is None or value is Ellipsis or isinstance(value, (str, bytes, bytearray, bool, np.bool_)):
        return None
    try:
        if getattr(value, "ndim", 0) != 0:
            return None
        if hasattr(value, "item") and not isinstance(value, (int, float)):
            value = value.item()  # numpy scalars, 0-d arrays and xarray values: the Python number
        if isinstance(value, (bool, str, bytes)):
            return None
        if isinstance(value, (int, np.integer)):
            return int(value)
        v = float(value)
    except Exception:  # noqa: BLE001 - any object a student made: not a number
        return None
    return v if math.isfinite(v) else None


def _integral(v) -> int | None:
    """``v`` (from :func:`number`) as an int when it is one (5 or 5.0), else None."""
    if isinstance(v, int):
        return v
    return int(v) if isinstance(v, float) and v.is_integer() else None


def _match(value, expected, precision=None) -> bool:
    if isinstance(expected, bool):
        return isinstance(value, (bool, np.bool_)) and bool(value) == expected
    v = number(value)
    if v is None:
        return False
    if isinstance(expected, (int, np.integer)):
        return _integral(v) == int(expected)
    if precision is None:
        return v == float(expected)
    # within one unit of the last place asked (a rounded or a truncated answer), and float noise
    return abs(v - float(expected)) <= _unit(float(expected), precision) * (1 + 1e-9) + 1e-12


def correct(assignment, student, answer: str, value) -> bool:
    """Whether ``value`` is the right ``answer`` for this student's variant (the hidden tests)."""
    sheet = Sheet(assignment, student, note=False)
    for n in sheet.names:
        q = sheet.question(n)
        if answer in q.answers:
            return _match(value, q.answers[answer], q.precision.get(answer))
    raise ValueError(f"answer={answer!r} is not in assignment {sheet.assignment}: allowed {sheet.answer_names()}")


def plausible(value, lo=0, hi=None, integer=False) -> bool:
    """The public tests' check of form: a number (an integral one if asked: 5, 5.0, a numpy or
    0-d xarray value holding one, as the hidden tests read it) in [lo, hi]; never the answer."""
    v = number(value)
    if v is None or (integer and _integral(v) is None):
        return False
    return v >= lo and (hi is None or v <= hi)


def size(value) -> int:
    """Sizes as the notebooks write them ('2M') in bytes: a convenience for answers."""
    return parse_size(value, "value")


# A classic misconception per assignment: answer -> (expression in the notebook's names, the belief).
# The sample submission ``wrong.ipynb`` holds it; tests check it earns partial marks.
WRONG = {
    "00": {"q2_reach_huge": ('p2["entries"] * m2.base_page', "misconception: reach = entries x base page, even for huge pages")},
    "01": {"q1_faults_4k": ('p1["size"] // 8', "misconception: one fault per access (every 8-byte store faults)")},
    "02": {"q1_reach_2m": ('p1["l2_4k_entries"] * 2 * 2**20', "misconception: 2 MB pages also fill the L2 TLB")},
    "03": {
        "q2_reach_big": ('p2["entries"] * 8192', "misconception: reach = entries x base page, even for the 4M-programmed TLB"),
        "q4_tim_pct": (
            '100 * p4["traps"] * p4["cycles_per_trap"] / p4["other_cycles"]',
            "misconception: %tim = trap cycles / other cycles (the traps left out of the total)",
        ),
    },
    "04": {"q2_faults": ('p2["touches"]', "misconception: faults counted per access (every touch faults)")},
    "05": {"q2_shared": ('q2_private // p2["processes"]', "misconception: sharing divides every table by the process count")},
}


# ---------------------------------------------------------------------------------------------
# The students' ``grader``: otter's checks, reported as checks of form


class FormReport:
    """What :meth:`FormChecks.check` shows: for each question, whether its answers have the right
    form, or what is wrong with them. The public tests check only the form (a number, in range),
    so a right form is never called a pass: the values are graded after submission."""

    def __init__(self, results):
        self.lines, self.ok = [], True
        for question, tf in results:
            cases = [r for r in getattr(tf, "test_case_results", []) if not r.test_case.hidden]
            bad = [r for r in cases if not r.passed]
            if not bad:
                what = "; ".join(r.test_case.success_message for r in cases if r.test_case.success_message)
                self.lines.append(f"{question}: form OK{f' ({what})' if what else ''}; graded after submission.")
                continue
            self.ok = False
            for r in bad:
                why = r.test_case.failure_message or "an answer is not in the expected form"
                err = [line.strip() for line in (r.message or "").splitlines() if "Error" in line and line.strip() != "AssertionError"][-1:]
                self.lines.append(f"{question}: {why}" + (f" ({err[0]})" if err else "") + ".")
        if len(results) > 1:
            self.lines.append(
                "Every answer has the expected form; the values are graded after you submit (this check does not say whether they are right)."
                if self.ok
                else "Some answers are missing or not in the expected form: see above."
            )

    def __repr__(self):
        return "\n".join(self.lines)

    def _repr_html_(self):

        colour = "" if self.ok else " style='color: #b00'"
        return "".join(f"<p{colour}>{html.escape(line)}</p>" for line in self.lines)


class _NoCheck:
    """What :meth:`FormChecks.check` shows for a question it has no check for."""

    def __init__(self, question, checked):
        self.line = (
            f"{question!r} has no check: it is not one of this notebook's autograded questions ({', '.join(checked)}). "
            "A written answer is graded by hand by your instructor, with the assignment's rubric."
        )

    def __repr__(self):
        return self.line

    def _repr_html_(self):
        return f"<p>{html.escape(self.line)}</p>"


def _latex_available() -> bool:

    return bool(shutil.which("xelatex") and shutil.which("pandoc"))


class FormChecks:
    """The ``grader`` of the student notebooks: otter-grader's ``Notebook`` with its checks shown
    as what they are. The public tests check the form of an answer only, and otter would report a
    question whose form is right as "passed", right or wrong; here it says "form OK; graded after
    submission". ``export`` makes the PDF for the written answers through HTML (otter's
    ``exporter_type="html"``, chromium) when LaTeX is not installed. Everything else is otter's."""

    def __init__(self, notebook, questions):
        self._otter, self._questions = notebook, list(questions)

    def check(self, question, global_env=None):

        if question not in self._questions:  # a written answer (graded by hand) or a name with no check
            return _NoCheck(question, self._questions)
        env = sys._getframe(1).f_globals if global_env is None else global_env
        result = self._otter.check(question, env)
        return None if result is None else FormReport([(question, result)])

    def check_all(self):

        env = sys._getframe(1).f_globals
        results = [(q, self._otter.check(q, env)) for q in self._questions]
        return None if any(r is None for _, r in results) else FormReport(results)

    def export(self, nb_path=None, export_path=None, pdf=True, **kwargs):
        notebook = nb_path or getattr(self._otter, "_notebook", None)
        grading = getattr(type(self._otter), "_grading_mode", True)
        if pdf and notebook and not grading and not _latex_available():
            pdf = False
            try:
                from otter.export import export_notebook  # deferred: otter-grader is optional (the exercises extra)

                made = export_notebook(notebook, exporter_type="html", filtering=True, pagebreaks=True)
                kwargs["files"] = [*kwargs.get("files", []), made]
                print(f"LaTeX is not installed: the PDF of your notebook ({made}) was made through HTML and is in the zip.")
            except Exception as e:  # noqa: BLE001 - no PDF is a note, not the end of the export
                print(
                    f"No PDF: LaTeX is not installed and the HTML route failed ({' '.join(str(e).split())[:160]}). "
                    "The zip holds your notebook; print it to PDF from the browser if your instructor asks for one."
                )
        return self._otter.export(notebook, export_path, pdf=pdf, **kwargs)

    def __getattr__(self, name):
        if name == "_otter" or name.startswith("__"):  # not set yet (a copy being made): no recursion
            raise AttributeError(name)
        return getattr(self._otter, name)
