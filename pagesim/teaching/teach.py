"""Teaching helpers for the notebooks: prediction questions that reveal their answer, and the
translation explorer of notebook 00.

``check_answer(question, guess, **given)`` compares a student's prediction with the answer pagesim
computes for the same inputs (never a number typed into the notebook) and says how to work it out.
Predictions are ungraded: with ``guess=None`` it only says that no prediction was made, and keeps the
answer folded away (in JupyterLab a "show the answer" line opens it).

``hint(question, **given)`` gives a hint for the same question and inputs, without the answer; a
Reveal with no prediction keeps one folded above the answer.

``TranslationExplorer`` is the widget of notebook 00: a machine, one of *that machine's* page sizes and
an address (hexadecimal with ``0x``, or decimal); an address beyond the machine's virtual address
space is cut to its low bits, and the note says so.
"""

from __future__ import annotations

import html
import math
import numbers
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..core.units import format_size, log2, parse_address, parse_page_size, parse_size
from ..model.machines import machine as get_machine
from ..model.machines import machines
from .diagrams import tlb_states, walk
from .explain import translate


# ---------------------------------------------------------------------------------------------- questions
@dataclass(frozen=True)
class Question:
    prompt: str  # what is asked, with {name} placeholders for the inputs
    answer: Callable[..., float]  # the answer, computed from the inputs
    how: Callable[..., str]  # how to work it out by hand
    kind: str = "count"  # count or address (exact integer), size (bytes), percent (+-0.5 points), ratio (+-1%)
    defaults: tuple = ()  # (name, value) pairs of inputs that may be left out


def _m(machine):
    return get_machine(machine)


def _walk_refs(machine, page):
    m = _m(machine)
    p = m.check_page_size(page)
    return m.walker.leaf_refs(p) if m.walker.kind == "radix" else 1


def _walk_how(machine, page):
    m = _m(machine)
    w = m.walker
    p = m.check_page_size(page)
    if w.kind == "hashed":
        return (
            f"{m.name} hashes the page number to one 8-entry group of its hashed page table: "
            "1 reference when the entry is in the primary group (2 in the secondary)"
        )
    if w.kind == "tsb":
        return f"{m.name} traps to software, which reads one TSB slot: 1 reference on a TSB hit (more on a TSB miss)"
    if w.kind != "radix":
        return f"{m.name}'s walker reads the page's entry in a linear table: 1 reference"
    return (
        f"{m.name}: {len(w.level_bits)} levels of {'/'.join(map(str, w.level_bits))} bits above a {w.base_shift}-bit offset, "
        f"numbered from 1 at the root; a {format_size(p)} page's entry sits at level {w.leaf_refs(p)}, so a walk without "
        f"page-walk-cache hits reads {w.leaf_refs(p)} entries, levels 1 to {w.leaf_refs(p)} (a larger page stops higher up the tree)"
    )


def _reach(machine, page, structure=None):
    m = _m(machine)
    return m.reach(page, structure=structure) if structure else m.reach(page)


def _reach_how(machine, page, structure=None):
    m = _m(machine)
    p = m.check_page_size(page)
    chain = m.chain("data", p)
    if structure:
        chain = [s for s in chain if s.name == structure]
    if not chain:
        return f"{m.name} holds no {format_size(p)} translations in a data TLB: reach 0"
    s = max(chain, key=lambda s: s.entries)
    return f"{m.name}'s {s.name} holds {s.entries} entries of {format_size(p)}: {s.entries} x {format_size(p)} = {format_size(s.entries * p)}"


def _set_loads(machine, page, stride, count, structure) -> dict[int, int]:
    """How many of the ``count`` pages, ``stride`` apart from address 0, fall in each set of ``structure``
    that any of them uses: {set: pages}."""
    m = _m(machine)
    p = m.check_page_size(page)
    st = m.structure(structure)
    stride = parse_size(stride, "stride")
    loads: dict[int, int] = {}
    for page_number in sorted({(i * stride) // st.entry_size(p) for i in range(int(count))}):
        s = page_number % st.sets
        loads[s] = loads.get(s, 0) + 1
    return loads


def _sets(machine, page, stride, count, structure):
    return len(_set_loads(machine, page, stride, count, structure))


def _sets_how(machine, page, stride, count, structure):
    m = _m(machine)
    p = m.check_page_size(page)
    st = m.structure(structure)
    size = parse_size(stride, "stride")
    loads = _set_loads(machine, page, stride, count, structure)
    pages = size / st.entry_size(p)
    if not float(pages).is_integer():
        step = f"{pages:g} pages: step i touches page number floor(i x {pages:g}), in set that number mod {st.sets}"
    elif int(pages) % st.sets == 0:
        step = f"{int(pages):,} pages, and {int(pages):,} mod {st.sets} = 0: every page lands in the same set"
    else:
        r = int(pages) % st.sets
        step = f"{int(pages):,} pages, and {int(pages):,} mod {st.sets} = {r}: each page lands {r} set{'s' * (r != 1)} after the one before"
    used, lo, hi = sum(loads.values()), min(loads.values()), max(loads.values())
    per = f"{lo} per set" if lo == hi else f"{lo} to {hi} per set"
    where = f"{used} pages touched land in {len(loads)} distinct set{'s' * (len(loads) != 1)}, {per}"
    over = sum(v for v in loads.values() if v > st.ways)
    if not over:
        fate = f"{hi} <= {st.ways} ways, so all {used} fit and, once loaded, every revisit hits"
    else:
        misses = "misses on every revisit" if st.replacement in ("lru", "fifo") else "misses on most revisits"
        crowded = f"{hi} > {st.ways} ways" if over == used else f"{over} of the {used} pages sit in sets holding more than {st.ways}"
        which = "" if over == used else " to those sets; the others hit once loaded"
        fate = f"{crowded}: a sweep over the pages in order {misses}{which} ({st.replacement.upper()} replacement)"
    return (
        f"{st.name} has {st.entries} entries, {st.ways}-way: {st.sets} sets, picked by the page number mod {st.sets}. "
        f"Each step of {format_size(size)} moves {step}. The {where}: {fate}"
    )


def _unused(file, page):
    f, p = parse_size(file, "file"), parse_page_size(page, "page")
    return 100 * (math.ceil(f / p) * p - f) / (math.ceil(f / p) * p)


def _return_states(machine, page, stride, count, structure):

    m = _m(machine)
    step = parse_size(stride, "stride")
    base = 0x7F00_0000_0000
    return tlb_states(m, [base + k * step for k in (*range(int(count)), 0)], page, structure)


def _return_misses(machine, page, stride, count, structure):
    return _return_states(machine, page, stride, count, structure)[-1]["misses"]


def _return_how(machine, page, stride, count, structure):
    states = _return_states(machine, page, stride, count, structure)
    m = _m(machine)
    st = m.structure(structure)
    p = m.check_page_size(page)
    first, last = states[0], states[-1]
    share = sum(s["set"] == first["set"] for s in states[:-1])
    evicted = [s["step"] for s in states if s["evicted"] == first["entry"]]
    back = (
        f"the first page was evicted at step {evicted[0]} to make room in its set, so coming back to it misses"
        if last["result"] == "miss"
        else "the first page is still in its set, so coming back to it hits"
    )
    return (
        f"{st.name}: {st.sets} sets of {st.ways} ways, the set picked by the page number mod {st.sets}; steps of "
        f"{format_size(parse_size(stride))} are {parse_size(stride) // st.entry_size(p)} pages of {format_size(p)}, and {share} of the "
        f"{int(count)} pages land in the first page's set {first['set']}. Each new page misses once; {back}: "
        f"{last['misses']} misses in {len(states)} accesses"
    )


def _return_hint(machine, page, stride, count, structure):
    st = _m(machine).structure(structure)
    return (
        f"{st.name} keeps at most {st.ways} pages per set and evicts the least recently used; which set does each page "
        f"land in (page number mod {st.sets}), and is the first page still there when it comes back?"
    )


QUESTIONS: dict[str, Question] = {
    "offset-bits": Question(
        "How many low bits of an address are the offset within a {page} page?",
        lambda page: log2(parse_page_size(page, "page")),
        lambda page: (
            f"{page} = 2**{log2(parse_page_size(page, 'page'))} bytes, so the low {log2(parse_page_size(page, 'page'))} bits pick the byte in the page"
        ),
    ),
    "page-number": Question(
        "What is the page number of address {address:#x} with {page} pages?",
        lambda address, page: parse_size(address, "address") >> log2(parse_page_size(page, "page")),
        lambda address, page: (
            f"drop the {log2(parse_page_size(page, 'page'))} offset bits: {address:#x} >> {log2(parse_page_size(page, 'page'))} "
            f"= {parse_size(address, 'address') >> log2(parse_page_size(page, 'page')):#x}"
        ),
        kind="address",
    ),
    "walk-levels": Question(
        "How many page-table entries does a {page}-page walk on {machine} read (no page-walk-cache hit, first place it looks)?", _walk_refs, _walk_how
    ),
    "reach": Question("What is the reach of {machine}'s largest data TLB level with {page} pages?", _reach, _reach_how, kind="size"),
    "faults": Question(
        # kind: which pages, when several kinds of one size are asked about ("hugetlb pages, from a reserved pool")
        "How many page faults does touching every byte of a fresh {size} region take with {page} {kind}?",
        lambda size, page, kind="pages": math.ceil(parse_size(size, "size") / parse_page_size(page, "page")),
        lambda size, page, kind="pages": (
            f"one fault per page, at its first touch: {size} / {page} = {math.ceil(parse_size(size, 'size') / parse_page_size(page, 'page'))} "
            "(the order of the touches does not matter once every page is touched)"
        ),
        defaults=(("kind", "pages"),),
    ),
    "tlb-sets": Question("{count} pages, {stride} apart, on {machine} with {page} pages: how many sets of its {structure} do they use?", _sets, _sets_how),
    "tlb-return": Question(
        "{count} pages, {stride} apart, on {machine} with {page} pages, then the first page again: how many of these accesses miss its {structure}?",
        _return_misses,
        _return_how,
    ),
    "nested-walk-refs": Question(
        "{machine} in a virtual machine, its memory backed by {host} host pages: how many memory references does one TLB miss "
        "to a {page} guest page make when no walk cache helps?",
        lambda machine, page, host: _nested(machine, page, host)[2],
        lambda machine, page, host: (
            "{0} guest levels, and before each guest entry is read its guest-physical address is translated by a {1}-level host walk: "
            "{0} x ({1} + 1); then the data's guest-physical address needs a host walk too: + {1} = {2}"
        ).format(*_nested(machine, page, host)),
    ),
    "unused-share": Question(
        "A {file} file in {page} pages: what share of the page memory is unused (%)?",
        _unused,
        lambda file, page: (
            f"the file takes whole pages: {math.ceil(parse_size(file) / parse_page_size(page))} x {page}; "
            f"unused = (pages - file) / pages = {_unused(file, page):.1f}%"
        ),
        kind="percent",
    ),
    "ratio": Question(
        "How many times fewer {what} with {big} pages than with {small} pages?",
        lambda big, small, what="page boundaries": parse_page_size(big, "big") / parse_page_size(small, "small"),
        lambda big, small, what="page boundaries": (
            f"one per page crossed: a {big} page spans {parse_page_size(big) // parse_page_size(small)} pages of {small}"
        ),
        kind="ratio",
        defaults=(("what", "page boundaries"),),
    ),
    "pte-bytes": Question(
        "{processes} processes each map a {region} region with {page} pages, each with private page tables: how many bytes of "
        "last-level entries (8 bytes each) do they need together?",
        lambda region, page, processes: parse_size(region, "region") // parse_page_size(page, "page") * 8 * int(processes),
        lambda region, page, processes: (
            f"{format_size(parse_size(region))} / {page} = {parse_size(region) // parse_page_size(page):,} entries of 8 bytes "
            f"per process, x {processes} = {format_size(parse_size(region) // parse_page_size(page) * 8 * int(processes))} "
            "(shared tables: the same entries once)"
        ),
        kind="size",
    ),
    "tsb-slot": Question(
        "Which slot of a {entries}-entry direct-mapped TSB does address {address:#x} use with {page} pages?",
        lambda address, page, entries: (parse_size(address, "address") >> log2(parse_page_size(page, "page"))) & (int(entries) - 1),
        lambda address, page, entries: (
            f"page number = address >> {log2(parse_page_size(page))} = {parse_size(address) >> log2(parse_page_size(page)):#x}; "
            f"its low {log2(int(entries))} bits pick the slot (mod {entries}): "
            f"{(parse_size(address) >> log2(parse_page_size(page))) & (int(entries) - 1)}"
        ),
    ),
}


def _nested(machine, page, host):
    """Guest levels, host levels and the references of one two-dimensional walk with no walk cache."""
    m = _m(machine)
    p, h = m.check_page_size(page), m.check_page_size(host, "host")
    if m.walker.kind != "radix":
        raise ValueError(f"machine {m.name!r} has a {m.walker.kind} walker: nested paging is modelled for radix walkers")
    g, n = m.walker.leaf_refs(p), m.walker.leaf_refs(h)  # the host's table shaped like the guest's
    return g, n, g * (n + 1) + n


def _walk_hint(machine, page):
    m = _m(machine)
    w = m.walker
    p = m.check_page_size(page)
    if w.kind == "hashed":
        return (
            f"{m.name} does not walk a tree: it hashes the page number to one group of 8 entries in one cache line. "
            "How many groups does it read when the entry is in the first?"
        )
    if w.kind == "tsb":
        return f"a TLB miss on {m.name} traps to software, which looks in one slot of a table in memory (the TSB). How many reads when the entry is there?"
    if w.kind != "radix":
        return f"{m.name}'s walker reads the page's entry in a linear table indexed by the page number. How many reads is that?"
    return (
        f"{m.name}'s tree has {len(w.level_bits)} levels of {'/'.join(map(str, w.level_bits))} bits (level 1 at the root) above a "
        f"{w.base_shift}-bit offset. A {format_size(p)} page's offset takes {log2(p)} bits: count the levels whose bits lie above it"
    )


def _reach_hint(machine, page, structure=None):
    m = _m(machine)
    p = m.check_page_size(page)
    chain = [s for s in m.chain("data", p) if not structure or s.name == structure]
    if not chain:
        return f"which of {m.name}'s data TLB levels hold {format_size(p)} translations at all?"
    levels = ", ".join(f"{s.name} ({s.entries} entries)" for s in chain)
    return f"{m.name}'s data TLB levels that hold {format_size(p)} pages: {levels}. Reach = entries x page size of the largest"


def _sets_hint(machine, page, stride, count, structure):
    m = _m(machine)
    p = m.check_page_size(page)
    st = m.structure(structure)
    pages = parse_size(stride, "stride") / st.entry_size(p)
    return (
        f"{st.name} has {st.sets} sets, picked by the page number mod {st.sets}; a step of {format_size(parse_size(stride))} "
        f"moves {pages:g} pages. Write the first page numbers mod {st.sets} (0, {pages:g}, {2 * pages:g}, ...) until they repeat"
    )


# A hint per question: where to start, from the question's own inputs, without the answer
HINTS: dict[str, Callable[..., str]] = {
    "offset-bits": lambda page: f"a {page} page holds {parse_page_size(page, 'page'):,} bytes, a power of two: how many bits number every byte of it?",
    "page-number": lambda address, page: (
        f"the offset of a {page} page is the address's low {log2(parse_page_size(page, 'page'))} bits: drop them (shift right)"
    ),
    "walk-levels": _walk_hint,
    "reach": _reach_hint,
    "faults": lambda size, page, kind="": f"each page of a fresh region faults once, at its first touch: how many {page} pages does {size} take?",
    "tlb-sets": _sets_hint,
    "tlb-return": _return_hint,
    "nested-walk-refs": lambda machine, page, host: (
        "the guest's walk reads one entry per guest level, but each entry sits at a guest-physical address the host must translate "
        "first, with a walk of its own table; and the data's address at the end, too"
    ),
    "unused-share": lambda file, page: f"the {file} file takes whole {page} pages: round it up, then unused share = (pages - file) / pages",
    "ratio": lambda big, small, what="page boundaries": f"how many {small} pages fit in one {big} page?",
    "pte-bytes": lambda region, page, processes: (
        f"one 8-byte last-level entry per {page} page of the {region} region, and each of the {processes} processes has its own"
    ),
    "tsb-slot": lambda address, page, entries: (
        f"the page number is the address shifted right by the {page} page's {log2(parse_page_size(page, 'page'))} offset bits; "
        f"a direct-mapped table of {entries} slots keeps its low {log2(int(entries))} bits"
    ),
}

# The form a prediction takes, per kind of answer: what a malformed prediction is told
FORMS = {
    "count": "a whole number (such as 4)",
    "address": "an integer (such as 0x7f00 or 32512)",
    "size": "a size (such as '6M') or a number of bytes",
    "percent": "a number of percent without the % sign (such as 12.5)",
    "ratio": "a number (such as 16 or 0.5)",
}


class _Text(str):
    """Text a notebook shows as it is (no quotes)."""

    def __repr__(self) -> str:
        return str(self)


def _given(question: str, given: dict) -> tuple[Question, dict]:
    if question not in QUESTIONS:
        raise ValueError(f"question={question!r} is not known: use one of {', '.join(QUESTIONS)}")
    q = QUESTIONS[question]
    return q, {**dict(q.defaults), **given}


def hint(question: str, **given) -> str:
    """A hint for ``question`` with the inputs ``given`` (those of ``check_answer``): where to start,
    computed from the inputs, without the answer."""
    _, given = _given(question, given)
    try:
        return _Text(HINTS[question](**given))
    except TypeError as e:
        raise TypeError(f"hint({question!r}, ...): {e}") from None


def _as_number(guess, kind):
    if isinstance(guess, bool):
        raise TypeError(f"guess={guess!r}: write a number (or a size such as '8M')")
    if kind == "size" and isinstance(guess, str):
        return parse_size(guess, "guess")
    if isinstance(guess, str):
        if guess.strip().lower().startswith("0x"):
            return float(parse_address(guess))
        try:
            return float(guess)
        except ValueError:
            raise ValueError(f"guess={guess!r} is not a number: write one such as 0.25 or 42 (no units or % sign)") from None
    if isinstance(guess, numbers.Real) and not isinstance(guess, np.bool_):  # int, float and numpy numbers
        return int(guess) if isinstance(guess, numbers.Integral) else float(guess)
    raise TypeError(f"guess={guess!r} ({type(guess).__name__}): write a number" + (" or a size such as '8M'" if kind == "size" else ""))


def _show(value, kind):
    if kind == "size":
        return f"{format_size(int(value))} ({int(value):,} bytes)"
    if kind == "percent":
        return f"{value:.1f}%"
    if kind == "ratio":
        return f"{value:g} times"
    if kind == "address":
        return f"{int(value):#x}"
    return f"{int(value):,}" if float(value).is_integer() else f"{value:g}"


@dataclass
class Reveal:
    """What ``check_answer`` shows: the question, the prediction, and (folded when there was none) the
    answer. A prediction that is not of the answer's form gets one line naming the form, not an error,
    so the other answers of the same cell still show."""

    question: str
    guess: object
    answer: float
    kind: str
    how: str
    hint: str = ""
    key: str = ""  # the question and its inputs, as teach.hint takes them

    @property
    def problem(self) -> str:
        """One line naming the expected form when the prediction is malformed, else ""."""
        if self.guess is None:
            return ""
        try:
            _as_number(self.guess, self.kind)
        except (TypeError, ValueError):
            return f"your prediction {self.guess!r} is not {FORMS[self.kind]}: write it that way and run the cell again"
        return ""

    @property
    def right(self) -> bool | None:
        """True or False for a prediction; None when there is none or it is malformed (see ``problem``)."""
        if self.guess is None or self.problem:
            return None
        g = _as_number(self.guess, self.kind)
        if self.kind == "percent":
            return abs(g - self.answer) <= 0.5
        if self.kind == "ratio":
            return abs(g - self.answer) <= 0.01 * abs(self.answer)
        return g == self.answer

    @property
    def judged(self) -> bool:
        return self.right is not None

    def _verdict(self) -> str:
        if self.problem:
            return self.problem
        r = self.right
        if r is None:
            return "no prediction yet: write yours in this cell and run it again"
        return f"your prediction {self.guess!r}: " + ("right" if r else "not quite")

    def __repr__(self) -> str:
        lines = [self.question, "  " + self._verdict()]
        if self.judged:
            lines.append(f"  answer: {_show(self.answer, self.kind)}. {self.how}")
        else:
            lines.append(f"  (a hint: teach.hint({self.key}); the answer: check_answer(...).reveal())")
        return "\n".join(lines)

    def reveal(self) -> str:
        return f"{_show(self.answer, self.kind)}. {self.how}"

    def _repr_html_(self) -> str:
        e = html.escape
        state = "malformed" if self.problem else self.right
        mark = {None: "&#9998;", "malformed": "?", True: "&#10004;", False: "&#10008;"}[state]
        colour = {None: "#555", "malformed": "#b35900", True: "#1a7f37", False: "#b35900"}[state]
        answer = f"<b>{e(_show(self.answer, self.kind))}</b>. {e(self.how)}"
        if self.judged:
            body = f"<div>answer: {answer}</div>"
        else:
            folded = f"<details><summary>a hint</summary>{e(self.hint)}</details>" if self.hint else ""
            body = f"{folded}<details><summary>show the answer</summary>{answer}</details>"
        return (
            f"<div style='border-left:3px solid {colour};padding-left:8px'><div><b>Predict:</b> {e(self.question)}</div>"
            f"<div style='color:{colour}'>{mark} {e(self._verdict())}</div>{body}</div>"
        )


def check_answer(question: str, guess=None, **given) -> Reveal:
    """Compare a prediction with pagesim's answer to ``question`` (a key of ``QUESTIONS``) for the inputs
    ``given``; returns a Reveal that the notebook displays. ``guess=None``: no prediction made (a hint
    and the answer stay folded); a guess not of the answer's form gets one line saying which form.
    Wrong inputs ``given`` are the notebook's error, not the student's: they raise."""
    q, given = _given(question, given)
    try:
        text = q.prompt.format(**given)
        answer = q.answer(**given)
        how = q.how(**given)
    except KeyError as e:
        raise TypeError(f"check_answer({question!r}, ...) needs the input {e.args[0]!r}") from None
    except TypeError as e:
        raise TypeError(f"check_answer({question!r}, ...): {e}") from None
    call = ", ".join([repr(question), *(f"{k}={v!r}" for k, v in given.items())])
    return Reveal(text, guess, answer, q.kind, how, hint=hint(question, **given), key=call)


def verdicts(findings, *ids, since: int | None = None):
    """The verdicts of the findings ``ids`` of a notebook's ``Findings`` (or of those recorded after the
    first ``since``; all when neither is given): what a validation cell shows instead of the return
    value of its last check."""
    import pandas as pd  # deferred: pandas is slow to import; only tables need it

    known = {f.id: f for f in findings.items}
    missing = [i for i in ids if i not in known]
    if missing:
        raise ValueError(f"ids={missing!r}: no such finding in {findings.notebook!r} yet")
    rows = [known[i] for i in ids] if ids else list(findings.items)[since or 0 :]
    return pd.DataFrame([{"id": f.id, "finding": f.finding, "document": f.document, "simulation": f.simulation, "verdict": f.verdict} for f in rows]).set_index(
        "id"
    )


# ------------------------------------------------------------------------------------------ the explorer
def fit_address(address: int, machine) -> tuple[int, str]:
    """``address`` if it fits the machine's virtual address space, else its low ``va_bits`` bits, with a
    sentence saying so ("" when unchanged)."""
    m = _m(machine)
    bits = min(m.va_bits, 63)
    if address < 1 << bits:
        return address, ""
    fitted = address & ((1 << bits) - 1)
    where = f"the {m.va_bits}-bit virtual address space of {m.name}" if m.va_bits < 64 else "2**63 (pagesim handles addresses below it)"
    return fitted, f"{address:#x} is beyond {where}: using its low {bits} bits, {fitted:#x}"


class TranslationExplorer:
    """Notebook 00's widget: a machine, one of its page sizes, and an address; the translation below
    follows every change, as a table and (``diagram=True``) as the walk's picture
    (:func:`pagesim.teaching.diagrams.walk`). ``result`` holds the last table translated (None before the
    first), ``figure`` the last picture, ``message`` the last note or error."""

    def __init__(self, machine="skylake", address=0x7F12_3456_789A, page=None, diagram=True):
        import ipywidgets as W  # deferred: ipywidgets, only in a notebook
        from IPython.display import display  # deferred: IPython, only in a notebook

        self._display = display
        m = _m(machine)
        a, note = fit_address(parse_address(address), m)
        self.machine = W.Dropdown(options=machines(), value=m.name, description="machine")
        self.page = W.Dropdown(options=self.page_options(m.name), value=format_size(m.check_page_size(page or m.base_page)), description="page size")
        self.address = W.Text(value=f"{a:#x}", description="address", placeholder="0x... or decimal", continuous_update=False)
        self.note = W.HTML()
        self.out = W.Output()
        self.result = None
        self.figure = None
        self.diagram = bool(diagram)
        self.message = note
        self.box = W.VBox([W.HBox([self.machine, self.page]), self.address, self.note, self.out])
        self.machine.observe(self._machine_changed, names="value")
        self._busy = False
        self.page.observe(lambda _: self._busy or self.update(), names="value")
        self.address.observe(lambda _: self._busy or self.update(), names="value")
        self.update(note)

    @staticmethod
    def page_options(machine) -> list[str]:
        return [format_size(p) for p in _m(machine).page_sizes]

    def _machine_changed(self, change):
        m = _m(change["new"])
        keep = self.page.value if self.page.value in self.page_options(m.name) else format_size(m.base_page)
        self._busy = True  # the page menu and the address change below: translate once, at the end
        try:
            self.page.options = self.page_options(m.name)
            self.page.value = keep
        finally:
            self._busy = False
        note = ""
        try:
            a, note = fit_address(parse_address(self.address.value), m)
            if note:
                self._busy = True
                try:
                    self.address.value = f"{a:#x}"
                finally:
                    self._busy = False
        except (ValueError, TypeError):
            pass  # update() shows what is wrong with the address
        self.update(note)

    def update(self, note: str = ""):
        """Translate the address shown; an address beyond the machine's space is cut to its low bits
        (the box and the note say so). Text that is not an address gets one line, and the last table
        stays, titled with what it translates."""

        # shown while it works: a machine's first walk compiles its walker's kernel (up to a minute on a small machine)
        self.note.value = "<span style='color:#555'>translating... (the first walk on a machine compiles its kernel: up to a minute)</span>"
        try:
            a, cut = fit_address(parse_address(self.address.value), self.machine.value)
            result = translate(self.machine.value, a, self.page.value)
        except (ValueError, TypeError) as e:
            self.message = str(e) + (f" (the table below is still the last one: {self.result.title})" if self.result is not None else "")
        else:
            if cut:
                self._busy = True
                try:
                    self.address.value = f"{a:#x}"
                finally:
                    self._busy = False
            self.message = cut or note
            self.result = result
            if self.diagram:
                import matplotlib.pyplot as plt  # deferred: matplotlib is slow to import; only figures need it

                self.figure = walk(self.machine.value, a, self.page.value)
                plt.close(self.figure)  # shown once, in the widget's output below
            self.out.clear_output()
            with self.out:
                self._display(self.result)
                if self.figure is not None and self.diagram:
                    self._display(self.figure)
        self.note.value = f"<span style='color:#b35900'>{html.escape(self.message)}</span>" if self.message else ""

    def _ipython_display_(self):
        self._display(self.box)
