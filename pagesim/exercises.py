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
``pagesim exercises grade`` (see exercises/README.md and :mod:`pagesim.grading`).
"""
from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

import numpy as np

from .units import format_size, log2, parse_size

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
    return int.from_bytes(hashlib.sha256(s.encode()).digest()[:4], "big")


@dataclass(frozen=True)
class Question:
    """One generated question: parameters, the text a student reads, and named answers."""

    name: str
    text: str
    params: dict
    answers: dict
    tolerance: dict  # answer name -> relative tolerance (0: exact)


def _pick(rng, seq):
    return seq[int(rng.integers(len(seq)))]


# ---------------------------------------------------------------------------------------------
# 00 basics: index bits, reach, walk references, a first simulation


def _radix_index(m, address: int, level: int) -> int:
    w = m.walker
    shift = w.base_shift + sum(w.level_bits[level + 1:])
    return (address >> shift) & ((1 << w.level_bits[level]) - 1)


def q00_index(rng):
    name = _pick(rng, RADIX_MACHINES)
    from .machines import machine

    m = machine(name)
    top = m.va_bits - 1
    address = int(rng.integers(1 << 30, 1 << top)) & ~0x7
    leaf = len(m.walker.level_bits) - 1
    text = (f"On `{name}` with {format_size(m.base_page)} pages, the address {address:#x} is translated by a "
            f"{len(m.walker.level_bits)}-level radix walk (bits per level {list(m.walker.level_bits)}, the "
            f"{log2(m.base_page)} low bits are the page offset). Work out by hand the index into the top-level "
            f"table (`q1_top`) and into the leaf table (`q1_leaf`), then check with `translate`.")
    return dict(params={"machine": name, "address": address, "page_size": m.base_page},
                answers={"q1_top": _radix_index(m, address, 0), "q1_leaf": _radix_index(m, address, leaf)}, text=text)


def _variant_l2(rng):
    from .machines import machine

    name = _pick(rng, sorted(SHARED_L2))
    m = machine(name)
    st = m.structure(SHARED_L2[name])
    entries = st.ways * int(_pick(rng, (st.sets // 2, st.sets, st.sets * 2)))
    return name, st.name, entries, m.replace_structure(st.name, entries=entries, new_name=f"{name} ({st.name} {entries})")


def q00_reach(rng):
    name, sname, entries, m = _variant_l2(rng)
    huge = m.page_sizes[1]
    text = (f"A variant of `{name}` whose `{sname}` has {entries} entries ({m.structure(sname).ways}-way). "
            f"The structure holds {format_size(m.base_page)} and {format_size(huge)} pages. Give its reach "
            f"in bytes with {format_size(m.base_page)} pages (`q2_reach_base`) and with {format_size(huge)} "
            f"pages (`q2_reach_huge`).")
    return dict(params={"machine": name, "structure": sname, "entries": entries, "huge_page": huge},
                answers={"q2_reach_base": m.reach(m.base_page, structure=sname),
                         "q2_reach_huge": m.reach(huge, structure=sname)}, text=text)


def q00_walk(rng):
    from .machines import machine

    name = _pick(rng, RADIX_MACHINES)
    m = machine(name)
    huge = m.page_sizes[-1]
    text = (f"On `{name}`, a TLB miss whose walk finds nothing in the page-walk caches: how many memory "
            f"references does the walk make for a {format_size(m.base_page)} page (`q3_refs_base`) and for a "
            f"{format_size(huge)} page (`q3_refs_huge`)?")
    return dict(params={"machine": name, "huge_page": huge},
                answers={"q3_refs_base": m.walker.leaf_refs(m.base_page), "q3_refs_huge": m.walker.leaf_refs(huge)},
                text=text)


def _walks_per_access(m, working_set, accesses, page_size, seed) -> float:
    from .simulate import simulate

    ds = simulate(m, "random", working_set=working_set, accesses=accesses, page_size=page_size, seed=seed)
    return float(ds["walks"].sum()) / accesses


def q00_simulate(rng):
    from .machines import machine

    name = _pick(rng, ("skylake", "zen4", "neoverse-n1", "opteron-k8"))
    m = machine(name)
    ws = int(_pick(rng, (16, 32, 64, 128, 256))) << 20
    seed = int(rng.integers(1 << 16))
    acc = 20_000
    text = (f"Simulate {acc} uniformly random accesses over a {format_size(ws)} working set on `{name}` with "
            f"{format_size(m.base_page)} pages (`pagesim.simulate(\"{name}\", \"random\", working_set=\"{format_size(ws)}\", "
            f"accesses={acc}, page_size=\"{format_size(m.base_page)}\", seed={seed})`) and give the page walks per "
            f"access (`q4_walks_per_access`, a float).")
    return dict(params={"machine": name, "working_set": ws, "accesses": acc, "seed": seed, "page_size": m.base_page},
                answers={"q4_walks_per_access": _walks_per_access(name, ws, acc, m.base_page, seed)},
                text=text, tolerance={"q4_walks_per_access": 1e-9})


# ---------------------------------------------------------------------------------------------

ASSIGNMENTS = {
    "00": ("00_basics", [("q1", q00_index), ("q2", q00_reach), ("q3", q00_walk), ("q4", q00_simulate)]),
}


def assignment_key(assignment) -> str:
    key = str(assignment)[:2]
    if key not in ASSIGNMENTS:
        raise ValueError(f"assignment={assignment!r} is unknown: allowed {sorted(ASSIGNMENTS)} (or their names "
                         f"{[v[0] for v in ASSIGNMENTS.values()]})")
    return key


class Sheet:
    """One student's questions for one assignment: ``Sheet("00", student_id)``."""

    def __init__(self, assignment, student):
        self.assignment = assignment_key(assignment)
        self.seed = seed_of(student)
        self._questions = {}

    def question(self, name) -> Question:
        if name not in self._questions:
            gens = dict(ASSIGNMENTS[self.assignment][1])
            if name not in gens:
                raise ValueError(f"question={name!r} is not in assignment {self.assignment}: allowed {sorted(gens)}")
            idx = list(gens).index(name)
            rng = np.random.default_rng([self.seed, int(self.assignment), idx])
            out = gens[name](rng)
            self._questions[name] = Question(name, out["text"], out["params"], out["answers"], out.get("tolerance", {}))
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


def _match(value, expected, rel: float) -> bool:
    if value is None or value is Ellipsis or isinstance(value, (str, bytes)):
        return False
    if isinstance(expected, bool):
        return isinstance(value, (bool, np.bool_)) and bool(value) == expected
    try:
        v = float(value)
    except (TypeError, ValueError):
        return False
    if not math.isfinite(v):
        return False
    if rel == 0:
        return v == float(expected)
    return math.isclose(v, float(expected), rel_tol=rel, abs_tol=1e-12)


def correct(assignment, student, answer: str, value) -> bool:
    """Whether ``value`` is the right ``answer`` for this student's variant (the hidden tests)."""
    sheet = Sheet(assignment, student)
    for n in sheet.names:
        q = sheet.question(n)
        if answer in q.answers:
            return _match(value, q.answers[answer], q.tolerance.get(answer, 0))
    raise ValueError(f"answer={answer!r} is not in assignment {sheet.assignment}: allowed {sheet.answer_names()}")


def plausible(value, lo=0, hi=None, integer=False) -> bool:
    """The public tests' check of form: a number (an int if asked) in [lo, hi]; never the answer."""
    if value is None or value is Ellipsis or isinstance(value, (bool, np.bool_, str, bytes)):
        return False
    if integer and not isinstance(value, (int, np.integer)):
        return False
    try:
        v = float(value)
    except (TypeError, ValueError):
        return False
    return math.isfinite(v) and v >= lo and (hi is None or v <= hi)


def size(value) -> int:
    """Sizes as the notebooks write them ('2M') in bytes: a convenience for answers."""
    return parse_size(value, "value")


# A classic misconception per assignment: answer -> (expression in the notebook's names, the belief).
# The sample submission ``wrong.ipynb`` holds it; tests check it earns partial marks.
WRONG = {
    "00": {"q2_reach_huge": ('p2["entries"] * m2.base_page', "misconception: reach = entries x base page, even for huge pages")},
}
