"""One virtual address translated step by step, as the simulator models it (for teaching).

``translate(machine, address, page_size)`` returns a pandas DataFrame, a row per step: the page
number and offset; the set and tag each TLB structure of the chain looks at; then the walk: the
index at each radix level, numbered from 1 at the root like the walk's references (which levels a
page-walk cache can skip) and named as its architecture names it (:func:`radix_names`: PML4 to PT on
x86-64, the Arm ARM's level 0 to level 3 tables on Arm), the hashed-page-table groups
POWER probes, the TSB slot SPARC probes, or the entry Itanium's short-format VHPT walker reads (a
linear table of 8-byte entries per region; the hashed VHPT is the long format, which pagesim does
not model: datasets/architecture/NOTES.md §1.5). The numbers are those the kernel computes.

The frame is a :class:`Translation`: it says which machine, page size and address it translates
(``title``), and a notebook shows each step's text whole rather than cut at pandas' 50 characters.
"""

from __future__ import annotations

import html

import numpy as np
import pandas as pd

from .._kernels.rules import SEGMENT_SHIFT, guest_frame, hpt_group, segment_shift, vsid_of
from ..core.check import check_choice
from ..core.units import format_size, log2, parse_address
from ..model.machines import machine as get_machine

X86_NAMES = {4: ["PML4", "PDPT", "PD", "PT"], 5: ["PML5", "PML4", "PDPT", "PD", "PT"]}  # the Intel SDM's and AMD's names
ARM_VENDORS = ("Arm", "Apple")  # presets whose tables are Armv8's


def radix_names(m, walker=None) -> list[str]:
    """The names of the levels of machine ``m``'s radix table (or of ``walker``'s, a table of the same
    architecture: a virtualised machine's host table), root first. An Arm or Apple machine's are the
    Arm ARM's lookup levels, numbered so that the leaf is level 3 (4 levels: level 0 to level 3; a
    3-level table starts at level 1); another machine's 4 or 5 levels are x86-64's (PML4, PDPT, PD,
    PT; PML5 above them); any other table's are level 1, 2, ... from the root."""
    n = len((walker or m.walker).level_bits)
    if m.vendor in ARM_VENDORS:
        return [f"level {3 - n + 1 + i} table" for i in range(n)]
    return list(X86_NAMES.get(n, [f"level {i}" for i in range(1, n + 1)]))


class Translation(pd.DataFrame):
    """The steps of one translation (a DataFrame), titled with the machine, page size and address."""

    _metadata = ["title"]

    @property
    def _constructor(self):
        return Translation

    def __repr__(self) -> str:
        return f"{getattr(self, 'title', '')}\n{self.to_string(index=False, max_colwidth=None)}"

    def _repr_html_(self) -> str:
        styled = (
            self.style.hide(axis="index")
            .set_caption(html.escape(getattr(self, "title", "")))
            .set_properties(**{"text-align": "left", "white-space": "normal"})
            .set_table_styles(
                [
                    {"selector": "caption", "props": "caption-side: top; text-align: left; font-weight: bold"},
                    {"selector": "th", "props": "text-align: left"},
                ]
            )
        )
        return styled.to_html()


def translate(machine, address, page_size=None, side: str = "data") -> Translation:
    m = get_machine(machine)
    p = m.check_page_size(page_size if page_size is not None else m.base_page)
    a = parse_address(address, "address")
    if a >= 1 << min(m.va_bits, 63):
        if m.va_bits < 64:
            raise ValueError(f"address={a:#x} is beyond the {m.va_bits}-bit virtual address space of {m.name!r}")
        raise ValueError(f"address={a:#x} is 2**63 or above: pagesim handles addresses below 2**63 (the top half of {m.name!r}'s 64-bit space is not modelled)")
    check_choice("side", side, ("data", "instr"))
    s = log2(p)
    rows = [
        {"step": "split", "what": f"page number (address >> {s})", "value": f"{a >> s:#x}"},
        {"step": "split", "what": f"offset in the {format_size(p)} page (low {s} bits)", "value": f"{a & (p - 1):#x}"},
    ]
    for st in m.chain(side, p):
        es = log2(st.entry_size(p))
        key = a >> es
        rows.append(
            {
                "step": f"TLB L{st.level}",
                "what": f"{st.name}: {st.entries} entries, {st.organisation()}",
                "value": f"set {key % st.sets} of {st.sets}, tag {key:#x}",
            }
        )
    w = m.walker
    if w.kind == "radix":
        names = radix_names(m)
        leaf = w.leaf_refs(p) - 1
        for lvl in range(leaf + 1):  # lvl counts from 0 in the code; the table numbers levels from 1
            shift = w.base_shift + sum(w.level_bits[lvl + 1 :])
            idx = (a >> shift) & ((1 << w.level_bits[lvl]) - 1)
            skippers = [c.name for c in w.pwc if c.skip > lvl]  # a PWC hit skips the first `skip` levels
            rows.append(
                {
                    "step": f"walk level {lvl + 1}",
                    "what": f"{names[lvl]}: bits {shift + w.level_bits[lvl] - 1}..{shift}"
                    + (" (leaf: holds the translation)" if lvl == leaf else "")
                    + (f"; skipped on a hit in {', '.join(skippers)}" if skippers else ""),
                    "value": f"index {idx} (entry at byte {idx * 8} of its table)",
                }
            )
    elif w.kind == "hashed":
        seg_shift = segment_shift.py_func(s)
        vsid = vsid_of.py_func(a, s)
        h = hpt_group.py_func(a, s, w.hpt_ptegs - 1)
        rows += [
            {
                "step": "segment",
                "what": f"ESID (address >> {seg_shift}), looked up in the SLB"
                + (" (256 MiB segments at every address: 1 TiB segments are not modelled, see the preset's SLB source)" if seg_shift == SEGMENT_SHIFT else ""),
                "value": f"{a >> seg_shift:#x}",
            },
            {"step": "segment", "what": "VSID (modelling assumption: a multiplicative scramble of the ESID)", "value": f"{vsid:#x}"},
            {"step": "hash", "what": f"page index in the segment, XOR VSID, mod {w.hpt_ptegs} groups", "value": f"primary PTEG {h}"},
            {"step": "hash", "what": "secondary group: the complement of the hash", "value": f"secondary PTEG {(~h) & (w.hpt_ptegs - 1)}"},
            {
                "step": "walk",
                "what": "references: 1 if the entry is in the primary group (8 entries, one cache line), 2 in the secondary,"
                " 2 if it is not in the table (then inserted)",
                "value": "1 or 2",
            },
        ]
    elif w.kind == "tsb":
        rows += [
            {"step": "trap", "what": "a TLB miss traps to software (UltraSPARC)", "value": ""},
            {"step": "TSB", "what": f"direct-mapped TSB of {w.tsb_entries} entries per page size", "value": f"slot {(a >> s) & (w.tsb_entries - 1)}"},
            {"step": "walk", "what": f"on a TSB miss, a software walk of {w.sw_walk_refs} loads", "value": f"1 or {1 + w.sw_walk_refs} references"},
        ]
    else:
        rows.append(
            {
                "step": "walk",
                "what": "short-format VHPT: the walker reads the page's 8-byte entry in its region's linear table "
                "(one entry per page, indexed by the page number; not hashed)",
                "value": f"entry of page {a >> s:#x}: 1 reference",
            }
        )
    t = Translation(rows)
    t.title = f"{m.name}, {format_size(p)} pages, address {a:#x}" + ("" if side == "data" else f" ({side} side)")
    return t


def nested_walk(machine, address, page_size=None) -> Translation:
    """One two-dimensional walk of a virtualised machine (:meth:`pagesim.Machine.virtualised`), step
    by step, as it goes with no walk cache and no nested TLB: each guest table entry's
    guest-physical address, the host walk that translates it, the guest entry read, then the host
    walk for the data's guest-physical address. ``refs`` counts the memory references as they add
    up (4 + 4 levels: 24). With the host's page-walk caches, even empty at the start, the first
    host walk fills them and the later ones in the same walk skip the levels they share (the
    simulator counts that: Skylake's first walk on 4K host pages makes 20). The guest-physical
    addresses are those the simulator uses (``rules.guest_frame``: a modelling assumption,
    docs/nested.md)."""
    m = get_machine(machine)
    if m.host is None:
        raise ValueError(
            f"machine {m.name!r} is not virtualised: nested_walk needs one made by Machine.virtualised (e.g. pagesim.machine('skylake').virtualised('4K'))"
        )
    p = m.check_page_size(page_size if page_size is not None else m.base_page)
    a = parse_address(address, "address")
    if a >= 1 << min(m.va_bits, 63):
        raise ValueError(f"address={a:#x} is beyond the {min(m.va_bits, 63)}-bit address space pagesim simulates for {m.name!r}")
    g, h = m.walker, m.host
    ram = log2(h.guest_ram)
    host_levels = h.walker.leaf_refs(h.page_size)
    gnames = radix_names(m)
    hnames = radix_names(m, h.walker)  # the host's table is of the guest's architecture (EPT, NPT, Arm's stage 2)
    rows: list[dict] = []
    refs = 0

    def host_walk(gpa: int, what: str, hp: int) -> None:
        nonlocal refs
        host_levels = h.walker.leaf_refs(hp)
        where = f"{what}: guest-physical {gpa:#x}, host {format_size(hp)} page {gpa >> log2(hp):#x}"
        rows.append({"step": "translate", "what": where, "value": "", "refs": refs})
        for lv in range(host_levels):
            shift = h.walker.base_shift + sum(h.walker.level_bits[lv + 1 :])
            idx = (gpa >> shift) & ((1 << h.walker.level_bits[lv]) - 1)
            refs += 1
            leaf = " (leaf: the host-physical page)" if lv == host_levels - 1 else ""
            rows.append({"step": f"host level {lv + 1}", "what": f"{hnames[lv]}{leaf}", "value": f"index {idx}", "refs": refs})

    top = g.leaf_refs(p) - 1
    with np.errstate(over="ignore"):
        for lv in range(top + 1):
            shift = g.base_shift + sum(g.level_bits[lv + 1 :])
            bits = g.level_bits[lv]
            frame = int(guest_frame.py_func(a >> (shift + bits), lv + 1, ram - 3 - bits))
            gpa = (frame << (3 + bits)) | (((a >> shift) & ((1 << bits) - 1)) << 3)
            host_walk(gpa, f"guest level {lv + 1} entry ({gnames[lv]})", h.page_size)
            refs += 1
            rows.append(
                {"step": f"guest level {lv + 1}", "what": f"read the guest's {gnames[lv]} entry" + (" (leaf)" if lv == top else ""), "value": "", "refs": refs}
            )
        s = log2(p)
        frame = int(guest_frame.py_func(a >> s, 0, max(0, ram - s)))
    # the data's host page: that of the host region holding its guest page, else the default
    hp = h.page_for(a - a % p, a - a % p + p, f"the {format_size(p)} guest page of {a:#x}")
    area = h.page_sizes.index(hp) << ram  # its range of guest-physical memory
    host_walk(area | (frame << s) | (a & (p - 1)), f"the data, in its {format_size(p)} guest page", hp)
    t = Translation(rows)
    data_levels = h.walker.leaf_refs(hp)
    t.title = (
        f"{m.name}: a {format_size(p)} guest page on {format_size(hp)} host pages"
        + (f" (the guest's tables on {format_size(h.page_size)} ones)" if hp != h.page_size else "")
        + f", address {a:#x}: "
        f"{refs} references without walk caches ({top + 1} guest levels x ({host_levels} + 1) + {data_levels})"
    )
    return t
