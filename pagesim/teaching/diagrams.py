"""Pictures of address translation, drawn from the simulator itself.

- ``walk(machine, address, page=None, previous=())``: a page-walk diagram for any machine (radix
  x86-64 and Arm, POWER's hashed page table, SPARC's TSB, Itanium's VHPT). The address's bits are
  coloured by field (each level's index, the page offset), then the TLB lookups, then each table
  entry the walk reads; entries a page-walk cache supplied are hatched. ``previous``: addresses
  accessed first, so the TLBs and page-walk caches are warm. Returns a matplotlib ``Figure`` whose
  attribute ``description`` is a text description of the picture (alt text).
- ``walk_steps(...)``: the data that diagram draws, as a dict.
- ``tlb_states(machine, addresses, page=None, structure=None)``: one dict per access of a short
  sequence: the set it maps to, hit or miss in ``structure``, the entry inserted and the entry
  evicted, and the contents of the sets shown.
- ``tlb_steps(...)``: the same as a step-by-step view: in a notebook a slider with Prev/Next
  buttons over one figure per step; ``.states``, ``.table()`` and ``.figure(step)`` outside one.

Neither computes a translation of its own. Both run pagesim's translation kernel, the one
``simulate`` runs on the same layout (``engine.stages.kernel_inputs``, the generic kernel), one access at
a time, and read its counters (which structure resolved the access, the page-walk caches' hits, the
walk's references, TSB and hashed-table outcomes, faults) and its TLB state after each access. The
bit fields and table indices follow the formulas of ``pagesim.teaching.explain.translate``, the translation
explorer's table (which ``walk_steps(...)["explanation"]`` holds); the tests check that they agree.

Example (in a notebook, the last line shows the slider)::

    from pagesim.teaching import diagrams
    fig = diagrams.walk("skylake", 0x7F12_3456_A000, previous=[0x7F12_3456_789A])  # the PDE cache hits
    print(fig.description)
    diagrams.tlb_steps("skylake", [0x7F00_0000_0000 + k * 0x10000 for k in (0, 1, 2, 3, 4, 0)])
"""

from __future__ import annotations

import html
import io
import textwrap

import numpy as np

from .._kernels import translate as K
from .._kernels.rules import hpt_group, segment_shift, vsid_of
from .._kernels.walks import PRIMARY, SECONDARY
from ..core.check import check_int, check_seed
from ..core.units import format_size, log2, parse_address
from ..engine import stages as E
from ..engine.simulate import check_covered
from ..engine.stages import PROGRAM_THRESHOLD, resolve_programmable
from ..model.layout import Layout
from ..model.machines import machine as get_machine
from ..sources.workloads import Addresses
from .explain import radix_names, translate

# Okabe & Ito's palette, distinguishable with the common colour-vision deficiencies (black left out)
PALETTE = ("#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7")
OFFSET_COLOUR = "#D9D9D9"
UNUSED_COLOUR = "#FFFFFF"
HIT_COLOUR, MISS_COLOUR = "#0072B2", "#D55E00"  # blue and vermillion, always with a word or a mark beside
MAX_STEPS = 500  # tlb_states: a short sequence, shown step by step
MAX_SETS_SHOWN = 16  # a TLB figure shows at most this many sets (the accessed one always)
WRAP_WAYS = 8  # a set of more ways takes several rows of this many


# ---------------------------------------------------------------------------------------- inputs
def _address(value, name: str, m) -> int:
    try:
        a = parse_address(value)
    except (TypeError, ValueError) as e:
        raise type(e)(f"{name}: {e}" if not str(e).startswith(f"{name}=") else str(e)) from None
    if a >= 1 << min(m.va_bits, 63):
        where = f"the {m.va_bits}-bit virtual address space of {m.name!r}" if m.va_bits < 64 else "2**63 (pagesim handles addresses below it)"
        raise ValueError(f"{name}={a:#x} is beyond {where}")
    return a


def _addresses(values, name: str, m, allow_empty: bool = False) -> list[int]:
    if isinstance(values, (str, bytes, int, np.integer)) or not hasattr(values, "__iter__"):
        raise TypeError(f"{name}={values!r}: give a list of addresses, such as [0x7f0000001000, 0x7f0000002000]")
    out = [_address(v, f"{name}[{i}]", m) for i, v in enumerate(values)]
    if not out and not allow_empty:
        raise ValueError(f"{name} is empty: give at least one address")
    if len(out) > MAX_STEPS:
        raise ValueError(f"{name} has {len(out)} addresses: a step-by-step view takes at most {MAX_STEPS}")
    return out


def _page(m, page) -> int:
    return m.check_page_size(page if page is not None else m.base_page, "page")


# ---------------------------------------------------------------------------------------- the engine
class _Stepper:
    """The translation kernel run one access at a time on the layout ``simulate`` makes for these
    addresses; ``step(i)`` returns what access ``i`` did, read from the kernel's counters."""

    def __init__(self, m, addresses: list[int], p: int, seed: int = 0):
        w = Addresses(addresses=np.array(addresses, dtype=np.uint64))
        layout = Layout.covering_addresses(w.addresses, p, range_error=w.range_error, check_top=lambda top: check_covered(w, m, top, p))
        layout.check_machine(m)
        self.m, self.programmed = resolve_programmable(m, layout)
        self.layout = layout
        self.cfg, self.st, self.cnt, self.structs, self.pwcs = E.kernel_inputs(self.m, layout, seed)
        self.run = E.choose_kernel(False, self.cfg, w)
        self.addrs, self.kinds = E.kernel_arrays(w.addresses, None)
        self.z = E.machine_parts(self.m).zidx[p]
        self.p = p
        self.nt = len(self.structs)  # TLBs and the SLB; the page-walk caches follow
        self.chain = [int(s) for s in self.cfg.chain[0, self.z] if s >= 0]

    def _counters(self):
        c, z = self.cnt, self.z
        return {
            "resolved": c.resolved[0, z].copy(),
            "hits": c.hits[:, z].copy(),
            "misses": c.misses[:, z].copy(),
            "refs": int(c.walk_refs[0, z]),
            "tsb_hits": int(c.tsb_hits[0, z]),
            "tsb_misses": int(c.tsb_misses[0, z]),
            "faults": int(c.faults[z]),
            "secondary": int(c.hpt_secondary[z]),
            "refills": int(c.hpt_events[1]),
        }

    def step(self, i: int) -> dict:
        before = self._counters()
        bad = self.run(self.addrs[i : i + 1], self.kinds, self.cfg, self.st, self.cnt)
        if bad >= 0:
            raise RuntimeError(f"internal error: access {i} fell outside the layout made for it")
        K.finish(self.st, self.cnt)  # a fast-path hit is counted at once
        after = self._counters()
        d = {k: after[k] - before[k] for k in after}
        pos = int(np.flatnonzero(d["resolved"])[0])  # the chain position that resolved it; len(chain): a walk
        lookups = []
        for j, s in enumerate(self.chain):
            lookups.append({"structure": self.structs[s].name, "result": "hit" if j == pos else "miss" if j < pos else "not looked up"})
        slb = int(self.cfg.slb_struct[0])
        if slb >= 0:
            r = "hit" if d["hits"][slb] else "miss" if d["misses"][slb] else "not looked up"
            lookups.insert(1, {"structure": self.structs[slb].name, "result": r})
        pwc = []
        for j, c in enumerate(self.pwcs):
            s = self.nt + j
            pwc.append({"cache": c.name, "skip": c.skip, "result": "hit" if d["hits"][s] else "miss" if d["misses"][s] else "not looked up"})
        return {
            "address": int(self.addrs[i]),
            "position": pos,
            "walked": pos == len(self.chain),
            "lookups": lookups,
            "pwc": pwc,
            "refs": d["refs"],
            "fault": d["faults"] > 0,
            "tsb": "hit" if d["tsb_hits"] else "miss" if d["tsb_misses"] else None,
            "secondary": d["secondary"] > 0,
            "refill": d["refills"] > 0,
        }

    # a structure's contents as the kernel keeps them
    def geometry(self, s: int):
        c = self.cfg
        return int(c.st_sets[s]), int(c.st_ways[s]), int(c.st_pways[s]), int(c.st_base[s]), int(c.st_mode[s]), int(c.tag_shift[s, self.z]), int(c.st_mask[s])

    def contents(self, s: int, sets) -> dict[int, list]:
        """The entry numbers (address >> the entry's shift) each way of ``sets`` holds, None if empty."""
        _, ways, pw, base, mode, h, _ = self.geometry(s)
        out = {}
        for q in sets:
            raw = self.st.tags[base + q * pw : base + q * pw + ways]
            out[q] = [None if t < 0 else self._decode(s, int(t), mode, h) for t in raw]
        return out

    def _decode(self, s, tag, mode, h):
        if mode not in (K.DIRECT_LRU, K.DIRECT_FIFO, K.STAMP_LRU):
            return tag >> 4  # the tag is key * 16 + page-size index
        for r, reg in enumerate(self.layout.regions):  # a granule number: key + its region's offset
            key = tag - int(self.cfg.idx_off[s, r])
            if reg.start >> h <= key <= (reg.end - 1) >> h:
                return key
        raise RuntimeError(f"internal error: granule {tag} of structure {s} is in no region")

    def hpt_group(self, address: int) -> str:
        """Where the hashed page table holds the page of ``address`` now: primary, secondary or none."""
        reg = next(r for r in self.layout.regions if r.start <= address < r.end)
        rb = sum(r.pages for r in self.layout.regions[: self.layout.regions.index(reg)])
        gid = rb + ((address - reg.start) >> log2(reg.page_size))
        return {PRIMARY: "primary", SECONDARY: "secondary"}.get(int(self.st.page_hpt[gid]), "none")


# ---------------------------------------------------------------------------------------- a walk
def _fields(m, a: int, p: int) -> list[dict]:
    """The address's bit fields, high to low: name, hi, lo, value and role (index: a level's or a
    table's index; offset; unused; rest: the page number's bits above the TSB slot)."""
    w = m.walker
    s = log2(p)
    va = m.va_bits
    f = []

    def add(name, hi, lo, role="index"):
        hi = min(hi, va - 1)
        if hi >= lo:
            f.append({"name": name, "hi": hi, "lo": lo, "value": (a >> lo) & ((1 << (hi - lo + 1)) - 1), "role": role})

    if w.kind == "radix":
        names = radix_names(m)
        top = w.base_shift + sum(w.level_bits)
        add("unused (copies of the top bit)", va - 1, top, "unused")
        for lvl in range(w.leaf_refs(p)):
            shift = w.base_shift + sum(w.level_bits[lvl + 1 :])
            add(f"{names[lvl]} index", shift + w.level_bits[lvl] - 1, shift)
    elif w.kind == "hashed":
        seg_shift = segment_shift.py_func(s)
        add("ESID (segment)", va - 1, seg_shift)
        add("page in segment", seg_shift - 1, s)
    elif w.kind == "tsb":
        tb = log2(w.tsb_entries)
        add("page number (rest)", va - 1, s + tb, "rest")
        add("TSB slot", s + tb - 1, s)
    else:
        add("page number", va - 1, s)
    add(f"offset in the {format_size(p)} page", s - 1, 0, "offset")
    return f


def walk_steps(machine, address, page=None, previous=(), seed: int = 0) -> dict:
    """What ``walk`` draws, computed by the translation kernel: the address's bit fields
    (``fields``), the TLB lookups (``lookups``), the walk's entries (``walk``: one dict per entry or
    step, with its ``state``: read, cached, hit, miss or not needed), the page-walk caches
    (``pwc``), the memory references (``refs``), whether the access faulted, ``explanation`` (the
    table of ``pagesim.teaching.explain.translate``) and ``description`` (a text description of the
    picture). ``previous``: addresses accessed first, in order (they warm the TLBs and caches)."""
    m = get_machine(machine)
    p = _page(m, page)
    a = _address(address, "address", m)
    prev = _addresses(previous, "previous", m, allow_empty=True)
    seed = check_seed(seed)
    explanation = translate(m, a, p)
    st = _Stepper(m, [*prev, a], p, seed)
    for i in range(len(prev)):
        st.step(i)
    r = st.step(len(prev))
    w = m.walker
    s = log2(p)
    fields = _fields(m, a, p)
    steps = []
    walked = r["walked"]
    if w.kind == "radix":
        names = radix_names(m)
        leaf = w.leaf_refs(p) - 1
        best = max([c["skip"] for c in r["pwc"] if c["result"] == "hit"], default=0)
        by_skip = {c["skip"]: c["cache"] for c in r["pwc"] if c["result"] == "hit"}
        for lvl in range(leaf + 1):
            shift = w.base_shift + sum(w.level_bits[lvl + 1 :])
            idx = (a >> shift) & ((1 << w.level_bits[lvl]) - 1)
            if not walked:
                state, how = "not needed", "not read: TLB hit"
            elif lvl < best:
                state, how = "cached", f"from the {by_skip[best]} (hit)"
            else:
                state, how = "read", "read from memory"
            steps.append(
                {
                    "name": names[lvl] + (" (leaf)" if lvl == leaf else ""),
                    "entry": idx,
                    "detail": f"entry {idx}",
                    "state": state,
                    "how": how,
                    "field": lvl,
                }
            )
        if walked and r["refs"] != leaf + 1 - best:
            raise RuntimeError(f"internal error: the walk read {r['refs']} entries, the diagram {leaf + 1 - best}")
    elif w.kind == "hashed":
        vsid = vsid_of.py_func(a, s)
        h = hpt_group.py_func(a, s, w.hpt_ptegs - 1)
        h2 = (~h) & (w.hpt_ptegs - 1)
        now = st.hpt_group(a)
        nw = "not read: TLB hit"
        slb = next((x["result"] for x in r["lookups"] if m.slb is not None and x["structure"] == m.slb.name), None)
        how = {"hit": "the SLB's entry for the ESID", "miss": "SLB miss: reloaded by software"}.get(slb, nw)
        steps.append({"name": "VSID", "entry": vsid, "detail": f"{vsid:#x}", "state": "read" if walked else "not needed", "how": how, "field": 0})
        if not walked:
            prim = sec = ("not needed", nw)
        elif r["fault"] or r["refill"]:
            why = "first touch" if r["fault"] else "evicted earlier"
            here = "; the entry is inserted here"
            prim = ("miss", f"read: not there ({why})" + (here if now == "primary" else ""))
            sec = ("miss", "read: not there" + (here if now == "secondary" else ""))
        elif r["secondary"]:
            prim, sec = ("miss", "read: not there"), ("hit", "read: the entry is here")
        else:
            prim, sec = ("hit", "read: the entry is here"), ("not needed", "not read")
        steps.append({"name": "primary PTEG", "entry": h, "detail": f"group {h} (8 entries)", "state": prim[0], "how": prim[1], "field": 1})
        steps.append({"name": "secondary PTEG", "entry": h2, "detail": f"group {h2}", "state": sec[0], "how": sec[1], "field": 1})
    elif w.kind == "tsb":
        slot = (a >> s) & (w.tsb_entries - 1)
        nw = "not needed: TLB hit"
        steps.append(
            {
                "name": "trap",
                "entry": None,
                "detail": "TLB miss handler",
                "state": "read" if walked else "not needed",
                "how": "software" if walked else nw,
                "field": None,
            }
        )
        tstate = {"hit": ("hit", "read: the entry is here"), "miss": ("miss", "read: not there (refilled)"), None: ("not needed", nw)}[r["tsb"]]
        steps.append({"name": "TSB", "entry": slot, "detail": f"slot {slot} of {w.tsb_entries}", "state": tstate[0], "how": tstate[1], "field": 0})
        sw = ("read", f"{w.sw_walk_refs} loads") if r["tsb"] == "miss" else ("not needed", "not needed: TSB hit" if walked else nw)
        steps.append({"name": "software walk", "entry": None, "detail": "the OS's page tables", "state": sw[0], "how": sw[1], "field": None})
    else:
        steps.append(
            {
                "name": "VHPT entry",
                "entry": a >> s,
                "detail": f"entry of page {a >> s:#x}",
                "state": "read" if walked else "not needed",
                "how": "read from memory" if walked else "not read: TLB hit",
                "field": 0,
            }
        )
    if walked and w.kind != "radix":  # the references the kernel counted are those the diagram shows
        if w.kind == "hashed":
            shown = 1 if steps[1]["state"] == "hit" else 2
        else:
            shown = 1 + (w.sw_walk_refs if r["tsb"] == "miss" else 0)
        if r["refs"] != shown:
            raise RuntimeError(f"internal error: the walk made {r['refs']} references, the diagram {shown}")
    out = {
        "machine": m.name,
        "title": m.title or m.name,
        "address": a,
        "page": p,
        "previous": prev,
        "va_bits": m.va_bits,
        "walker": w.kind,
        "fields": fields,
        "lookups": r["lookups"],
        "walk": steps,
        "pwc": r["pwc"],
        "walked": walked,
        "refs": r["refs"],
        "fault": r["fault"],
        "programmed": {k: format_size(v) for k, v in st.programmed.items()},
        "explanation": explanation,
    }
    out["description"] = _walk_description(out)
    return out


def _hexfield(f) -> str:
    return f"{f['value']:#x}" if f["role"] in ("offset", "rest") or f["hi"] - f["lo"] >= 16 else str(f["value"])


def _walk_description(d) -> str:
    when = "with nothing cached" if not d["previous"] else f"after {len(d['previous'])} earlier access{'es' if len(d['previous']) > 1 else ''}"
    parts = [f"Page-walk diagram for {d['title']}: address {d['address']:#x} with {format_size(d['page'])} pages, {when}."]
    parts.append(
        f"Its {d['va_bits']} bits, high to low: "
        + "; ".join(f"{f['name']} bits {f['hi']}-{f['lo']} = {_hexfield(f)}" for f in d["fields"] if f["role"] != "unused")
        + "."
    )
    parts.append("TLB lookups: " + ", ".join(f"{x['structure']} {x['result']}" for x in d["lookups"]) + ".")
    if d["pwc"]:
        parts.append("Page-walk caches: " + ", ".join(f"{c['cache']} {c['result']}" for c in d["pwc"]) + ".")
    if d["walked"]:
        parts.append("Walk: " + "; ".join(f"{s['name']} {s['detail']}: {s['how']}" for s in d["walk"]) + ".")
        parts.append(f"{d['refs']} memory reference{'s' if d['refs'] != 1 else ''}" + (", and a page fault (first touch)." if d["fault"] else "."))
    else:
        parts.append("No walk: a TLB holds the translation.")
    return " ".join(parts)


def _ink(colour: str) -> str:
    """Black or white text, whichever reads better on ``colour``."""
    from matplotlib.colors import to_rgb  # deferred: matplotlib is slow to import; only figures need it

    r, g, b = to_rgb(colour)
    return "black" if 0.299 * r + 0.587 * g + 0.114 * b > 0.5 else "white"


def _field_colour(f, i: int) -> str:
    if f["role"] == "offset":
        return OFFSET_COLOUR
    if f["role"] == "unused":
        return UNUSED_COLOUR
    if f["role"] == "rest":
        return PALETTE[6]
    return PALETTE[i % 5]


def _new_figure(width, height):
    import matplotlib.pyplot as plt  # deferred: matplotlib is slow to import; only figures need it

    fig = plt.figure(figsize=(width, height))
    plt.close(fig)  # shown once, as the value a cell returns, not again by the inline backend
    return fig


def walk(machine, address, page=None, previous=(), seed: int = 0):
    """A page-walk diagram of ``address`` on ``machine`` with ``page`` pages (default: its base
    page): the address's bits coloured by field, the TLB lookups, and each table entry the walk
    reads (hatched: supplied by a page-walk cache, or not needed). ``previous``: addresses
    accessed first, so caches are warm. Returns a matplotlib Figure; ``fig.description`` is a
    text description of it (alt text), ``fig.steps`` the dict of ``walk_steps``."""
    from matplotlib.patches import Rectangle  # deferred: matplotlib is slow to import; only figures need it

    d = walk_steps(machine, address, page, previous, seed)
    nb = d["va_bits"]
    stagger = any(f["hi"] - f["lo"] < 6 and g["hi"] - g["lo"] < 6 for f, g in zip(d["fields"], d["fields"][1:]))
    low = -2.5 if stagger else -1.5
    fig = _new_figure(13, 5.3 - low * 0.3)
    ax, bx = fig.subplots(2, 1, height_ratios=[1.9 - low, 4.3])
    fig.subplots_adjust(left=0.02, right=0.98, top=0.87, bottom=0.03, hspace=0.05)
    when = "nothing cached" if not d["previous"] else "after " + ("..., " if len(d["previous"]) > 3 else "") + ", ".join(f"{x:#x}" for x in d["previous"][-3:])
    fig.suptitle(f"{d['title']}: translating {d['address']:#x} with {format_size(d['page'])} pages\n({when})", fontsize=12)
    # the address's bits
    colours = {}
    k = 0
    for f in d["fields"]:
        colours[id(f)] = _field_colour(f, k)
        k += f["role"] == "index"
    ax.set_xlim(-0.5, nb + 0.5)
    ax.set_ylim(low, 1.9)
    ax.axis("off")
    x_of = lambda bit: nb - 1 - bit  # noqa: E731 - bit 0 at the right
    for f in d["fields"]:
        c = colours[id(f)]
        for bit in range(f["lo"], f["hi"] + 1):
            ax.add_patch(Rectangle((x_of(bit), 0), 1, 1, facecolor=c, edgecolor="0.45", lw=0.5, hatch="..." if f["role"] == "unused" else None))
            ax.text(x_of(bit) + 0.5, 0.5, str((d["address"] >> bit) & 1), ha="center", va="center", fontsize=7, color=_ink(c))
    for q in range(0, nb, 4):  # hexadecimal digits over each group of 4 bits
        hi = min(q + 3, nb - 1)
        ax.text(
            (x_of(hi) + x_of(q) + 1) / 2, 1.3, f"{(d['address'] >> q) & ((1 << (hi - q + 1)) - 1):X}", ha="center", va="center", fontsize=8, family="monospace"
        )
        if q:
            ax.plot([x_of(q) + 1, x_of(q) + 1], [1.05, 1.55], color="0.7", lw=0.6)
    ax.text(-0.4, 1.3, "hex", fontsize=7, color="0.4", ha="right", va="center")
    row = 0
    for f in d["fields"]:
        x0, x1 = x_of(f["hi"]), x_of(f["lo"]) + 1
        ax.plot([x0 + 0.1, x1 - 0.1], [-0.15, -0.15], color="0.3", lw=1.2)
        narrow = f["hi"] - f["lo"] < 6
        y = -0.35 - (0.95 if narrow and row % 2 else 0)
        row = row + 1 if narrow else 0
        bits = f"bits {f['hi']}-{f['lo']}" if f["hi"] != f["lo"] else f"bit {f['hi']}"
        label = f"{f['name']}\n{bits}" + ("" if f["role"] == "unused" else f"\n= {_hexfield(f)}")
        ax.text((x0 + x1) / 2, y, label, ha="center", va="top", fontsize=8)
    # the lookups and the walk
    bx.set_xlim(0, 12)
    bx.set_ylim(0, 4.2)
    bx.axis("off")
    mark = {"hit": "\u2713 hit", "miss": "\u2717 miss", "not looked up": "not looked up"}
    bx.text(0, 3.85, "TLB lookups", fontsize=10, weight="bold", va="center")
    n = len(d["lookups"])
    width = min(2.6, 10.4 / max(n, 1))
    for i, x in enumerate(d["lookups"]):
        r = x["result"]
        ec = HIT_COLOUR if r == "hit" else MISS_COLOUR if r == "miss" else "0.6"
        bx.add_patch(
            Rectangle(
                (1.5 + i * width, 3.3),
                width - 0.15,
                0.9,
                facecolor="white",
                edgecolor=ec,
                lw=2 if r != "not looked up" else 1,
                ls="-" if r != "not looked up" else "--",
            )
        )
        bx.text(
            1.5 + i * width + (width - 0.15) / 2,
            3.75,
            f"{x['structure']}\n{mark[r]}",
            ha="center",
            va="center",
            fontsize=8,
            color="black" if r != "not looked up" else "0.45",
        )
    if d["pwc"]:
        bx.text(0, 2.75, "walk caches", fontsize=10, weight="bold", va="center")
        bx.text(
            1.5,
            2.75,
            "   ".join(f"{c['cache']} (skips {c['skip']}): {mark[c['result']]}" for c in d["pwc"]),
            fontsize=8,
            va="center",
            color="black" if d["walked"] else "0.45",
        )
    bx.text(0, 1.45, "walk" if d["walker"] != "tsb" else "refill", fontsize=10, weight="bold", va="center")
    steps = d["walk"]
    width = min(2.6, 10.4 / max(len(steps), 1))
    index_colours = [colours[id(f)] for f in d["fields"] if f["role"] == "index"]
    for i, s in enumerate(steps):
        x0 = 1.5 + i * width
        c = index_colours[s["field"]] if s["field"] is not None and s["field"] < len(index_colours) else "#BBBBBB"
        st = s["state"]
        if st in ("read", "hit"):
            fc, hatch, ink = c, None, _ink(c)
        elif st == "miss":
            fc, hatch, ink = c, None, _ink(c)
        else:  # cached or not needed: shaded
            fc, hatch, ink = "#EEEEEE", "///", "black"
        bx.add_patch(
            Rectangle((x0, 0.75), width - 0.15, 1.4, facecolor=fc, edgecolor=c if st == "cached" else "0.3", lw=2.5 if st == "cached" else 1, hatch=hatch)
        )
        if i:
            bx.annotate("", xy=(x0, 1.45), xytext=(x0 - 0.15, 1.45), arrowprops={"arrowstyle": "->", "color": "0.3"})
        extra = {"hit": " \u2713", "miss": " \u2717"}.get(st, "")
        bx.text(
            x0 + (width - 0.15) / 2,
            1.45,
            f"{s['name']}\n{s['detail']}\n" + textwrap.fill(s["how"] + extra, max(12, int(width * 14))),
            ha="center",
            va="center",
            fontsize=8,
            color=ink,
            bbox={"facecolor": "white", "alpha": 0.85, "edgecolor": "none", "pad": 1} if st in ("cached", "not needed") else None,
        )
    if d["walked"]:
        result = f"{d['refs']} page-table memory reference{'s' if d['refs'] != 1 else ''}" + ("; a page fault: the page's first touch" if d["fault"] else "")
    else:
        result = "no walk: a TLB holds the translation"
    if any(x["state"] in ("cached", "not needed") for x in steps):
        result += ".   Hatched: supplied by a page-walk cache, or not needed"
    bx.text(1.5, 0.3, result + ".", fontsize=9, va="center")
    fig.description = d["description"]
    fig.steps = d
    return fig


# ---------------------------------------------------------------------------------------- a TLB
def _structure(m, p: int, structure, programmed: dict):
    """The structure to show: ``structure`` if ``m`` (as programmed for the run) looks it up for
    data in pages of ``p``, else a ValueError naming the ones it does look up."""
    names = [s.name for s in m.chain("data", p)]
    if not names:
        raise ValueError(f"page={format_size(p)}: {m.name} holds no {format_size(p)} data translations in a TLB")
    if structure is None:
        return names[0]
    if structure not in names:
        why = ""
        if any(s.name == structure and s.programmable for s in m.structures) and structure not in programmed:
            why = f" ({structure} is programmed for a page size only when the accesses touch at least {PROGRAM_THRESHOLD} pages of it)"
        raise ValueError(
            f"structure={structure!r} is not a data TLB that {m.name} looks up for {format_size(p)} pages{why}: choose one of {', '.join(map(repr, names))}"
        )
    return structure


def tlb_states(machine, addresses, page=None, structure=None, seed: int = 0) -> list[dict]:
    """Each access of ``addresses`` (a short sequence, data accesses) on ``machine`` with ``page``
    pages, seen from one TLB ``structure`` (default: the first one the data side looks up): one
    dict per access with ``step`` (1, 2, ...), ``address``, ``entry`` (the number of the entry it needs:
    address >> the entry's shift), ``set``, ``result`` (hit, miss, or not looked up when a TLB
    before it hit), ``way``, ``inserted`` and ``evicted`` (entry numbers or None),
    ``resolved_by`` (the structure that held it, or walk), ``hits`` and ``misses`` so far, and
    ``sets``: each shown set's ways after the access (entry numbers, None when empty). The sets
    shown are all of them up to 16, else those the sequence touches."""
    m = get_machine(machine)
    p = _page(m, page)
    if structure is not None and not isinstance(structure, str):
        raise TypeError(f"structure={structure!r}: give a structure's name, such as 'L1 DTLB 4K'")
    addrs = _addresses(addresses, "addresses", m)
    seed = check_seed(seed)
    st = _Stepper(m, addrs, p, seed)
    name = _structure(st.m, p, structure, st.programmed)
    s = next(i for i, x in enumerate(st.structs) if x.name == name)
    sets, ways, pw, base, mode, h, mask = st.geometry(s)
    keys = [a >> h for a in addrs]
    set_of = lambda key: key & mask if mask >= 0 else key % sets  # noqa: E731 - the kernel's set index
    shown = list(range(sets)) if sets <= 16 else sorted({set_of(k) for k in keys})
    hits = misses = 0
    out = []
    held = st.contents(s, shown)
    for i, (a, key) in enumerate(zip(addrs, keys)):
        q = set_of(key)
        r = st.step(i)
        res = next(x["result"] for x in r["lookups"] if x["structure"] == name)
        now = st.contents(s, shown)
        way = inserted = evicted = None
        changed = [w for w in range(ways) if now[q][w] != held[q][w]]
        if res == "hit":
            hits += 1
            way = held[q].index(key)
        elif res == "miss":
            misses += 1
            if len(changed) != 1 or now[q][changed[0]] != key:
                raise RuntimeError(f"internal error: a miss at step {i} changed ways {changed} of set {q}")
            way, inserted, evicted = changed[0], key, held[q][changed[0]]
        if res != "miss" and changed:
            raise RuntimeError(f"internal error: step {i} ({res}) changed set {q}")
        out.append(
            {
                "step": i + 1,
                "address": a,
                "entry": key,
                "set": q,
                "result": res,
                "way": way,
                "inserted": inserted,
                "evicted": evicted,
                "resolved_by": _resolved_name(st, r),
                "hits": hits,
                "misses": misses,
                "sets": {k: list(v) for k, v in now.items()},
            }
        )
        held = now
    for o in out:
        o.update(structure=name, machine=m.name, page=p, ways=ways, n_sets=sets, entry_shift=h)
    return out


def _resolved_name(st, r) -> str:
    if r["walked"]:
        return "walk"
    return st.structs[st.chain[r["position"]]].name


class TLBSteps:
    """A short access sequence seen step by step in one TLB structure. In a notebook it shows a
    slider with Prev/Next buttons over one figure per step (without ipywidgets: the table and the
    last step's figure). Steps are numbered from 1. ``states``: the dicts of ``tlb_states``;
    ``table()``: one row per step; ``figure(step)``: that step's matplotlib Figure (default: the
    last; ``.description`` is a text description of it); ``description(step)``: the text alone."""

    def __init__(self, states: list[dict]):
        self.states = states
        first = states[0]
        self.machine, self.structure, self.page = first["machine"], first["structure"], first["page"]
        names = {}
        for s in states:
            names.setdefault(s["entry"], None)
        self.labels = {e: _label(i, len(names)) for i, e in enumerate(names)}

    def __len__(self) -> int:
        return len(self.states)

    def table(self):
        """One row per step: the address, the entry it needs (its letter and number), the set,
        hit or miss, the way, the entries inserted and evicted, and what resolved the access."""
        import pandas as pd  # deferred: pandas is slow to import; only tables need it

        rows = []
        for s in self.states:
            rows.append(
                {
                    "step": s["step"],
                    "address": f"{s['address']:#x}",
                    "entry": f"{self._name(s['entry'])} ({s['entry']:#x})",
                    "set": s["set"],
                    f"in {self.structure}": s["result"],
                    "way": "" if s["way"] is None else s["way"],
                    "inserted": "" if s["inserted"] is None else self._name(s["inserted"]),
                    "evicted": "" if s["evicted"] is None else self._name(s["evicted"]),
                    "resolved by": s["resolved_by"],
                }
            )
        return pd.DataFrame(rows).set_index("step")

    def _name(self, e) -> str:
        return self.labels.get(e, f"{e:#x}")

    def _state(self, step):
        n = len(self.states)
        return self.states[check_int("step", n if step is None else step, 1, n) - 1]

    def description(self, step: int | None = None) -> str:
        """What step ``step`` (1..n; default the last) shows, in words."""
        s = self._state(step)
        text = (
            f"Step {s['step']} of {len(self.states)} in {self.structure} of {self.machine} ({_geometry(s)}, "
            f"{format_size(self.page)} pages): address {s['address']:#x} needs entry {self._name(s['entry'])} ({s['entry']:#x}), "
            f"set {s['set']}: {s['result']}"
        )
        if s["result"] == "hit":
            text += f" in way {s['way']}"
        elif s["result"] == "miss":
            text += f"; {self._name(s['inserted'])} inserted in way {s['way']}"
            text += f", {self._name(s['evicted'])} evicted" if s["evicted"] is not None else " (an empty way)"
        else:
            text += f" ({s['resolved_by']} held it first)"
        return text + f". So far {s['hits']} hits and {s['misses']} misses."

    def figure(self, step: int | None = None):
        """Step ``step`` (1..n; default the last): the sets shown as rows of ways, each way's entry
        (letter, number, the step that last used it), the way this access used outlined."""
        from matplotlib.patches import Rectangle  # deferred: matplotlib is slow to import; only figures need it

        s = self._state(step)
        step, n = s["step"], len(self.states)
        ways = s["ways"]
        wrap = min(ways, WRAP_WAYS)
        per_set = -(-ways // wrap)
        if len(s["sets"]) <= MAX_SETS_SHOWN:
            sets = sorted(s["sets"])
        else:
            nonempty = [q for q, v in s["sets"].items() if any(e is not None for e in v) and q != s["set"]]
            sets = sorted(nonempty[: MAX_SETS_SHOWN - 1] + [s["set"]])
        last = {}  # the step that last used each way (a hit or a fill)
        for t in self.states[:step]:
            if t["way"] is not None:
                last[(t["set"], t["way"])] = t["step"]
        rows = len(sets) * per_set
        small = rows > 8
        row_h = 0.34 if small else 0.5
        height = 1.5 + row_h * rows
        fig = _new_figure(min(1.6 + 1.25 * wrap, 13), height)
        ax = fig.subplots()
        fig.subplots_adjust(left=0.1 if wrap > 2 else 0.2, right=0.98, top=1 - 1.05 / height, bottom=0.4 / height)
        mark = {"hit": "\u2713 hit", "miss": "\u2717 miss", "not looked up": "not looked up"}[s["result"]]
        head = f"{self.machine}, {self.structure} ({_geometry(s)}, {format_size(self.page)} pages): step {step} of {n}"
        what = f"{s['address']:#x} \u2192 entry {self._name(s['entry'])}, set {s['set']}: {mark}"
        if s["result"] == "miss":
            what += f"; {self._name(s['inserted'])} into way {s['way']}" + (f", evicting {self._name(s['evicted'])}" if s["evicted"] is not None else "")
        elif s["result"] == "not looked up":
            what += f" ({s['resolved_by']} hit first)"
        if n <= 40:
            what += "\nsequence: " + " ".join(f"[{self._name(t['entry'])}]" if t["step"] == step else self._name(t["entry"]) for t in self.states)
        fig.suptitle(f"{head}\n{what}", fontsize=10 if wrap > 4 else 9)
        ax.set_xlim(-0.1, wrap)
        ax.set_ylim(rows, -0.05)
        ax.axis("off")
        for r, q in enumerate(sets):
            for w in range(ways):
                y, x = r * per_set + w // wrap, w % wrap
                e = s["sets"][q][w]
                current = q == s["set"] and w == s["way"]
                ec = (HIT_COLOUR if s["result"] == "hit" else MISS_COLOUR) if current else "0.55"
                fc = "#FFFFFF" if e is None else ("#CFE6F5" if current and s["result"] == "hit" else "#FBE0C8" if current else "#F2F2F2")
                ax.add_patch(Rectangle((x + 0.04, y + 0.06), 0.92, 0.88, facecolor=fc, edgecolor=ec, lw=3 if current else 0.8))
                used = last.get((q, w))
                if e is None:
                    ax.text(x + 0.5, y + 0.5, "empty", ha="center", va="center", fontsize=7, color="0.6")
                elif small:
                    ax.text(x + 0.5, y + 0.5, self._name(e) + ("" if used is None else f"  (step {used})"), ha="center", va="center", fontsize=8)
                else:
                    ax.text(x + 0.5, y + 0.33, self._name(e), ha="center", va="center", fontsize=11, weight="bold")
                    ax.text(x + 0.5, y + 0.7, f"{e:#x}" + ("" if used is None else f", step {used}"), ha="center", va="center", fontsize=6.5)
            if r and per_set > 1:
                ax.axhline(r * per_set + 0.01, color="0.3", lw=0.8)
            ax.text(-0.12, r * per_set + per_set / 2, f"set {q}", ha="right", va="center", fontsize=9, weight="bold" if q == s["set"] else "normal")
        hidden = s["n_sets"] - len(sets)
        foot = f"{s['hits']} hits, {s['misses']} misses so far" + (f"; {hidden} other sets not shown" if hidden > 0 else "")
        fig.text(0.02, 0.12 / height, foot + ". Bold border: the way this access used; (step k): the step that last used a way.", fontsize=7.5)
        fig.description = self.description(step)
        return fig

    def _png(self, step: int) -> bytes:
        """Step ``step``'s figure as PNG, drawn once (a slider moved back shows it at once)."""
        cache = self.__dict__.setdefault("_pngs", {})
        if step not in cache:
            buf = io.BytesIO()
            self.figure(step).savefig(buf, format="png", dpi=90)
            cache[step] = buf.getvalue()
        return cache[step]

    def widget(self):
        """A slider and Prev/Next buttons over the steps' figures (ipywidgets), with each step's
        text description under its figure."""
        import ipywidgets as W  # deferred: ipywidgets, only in a notebook

        n = len(self.states)
        slider = W.IntSlider(value=1, min=1, max=n, description="step", continuous_update=False)
        prev = W.Button(description="\u25c0 Prev", layout=W.Layout(width="90px"))
        nxt = W.Button(description="Next \u25b6", layout=W.Layout(width="90px"))
        image = W.Image(format="png")
        text = W.HTML()

        def show(_=None):
            i = slider.value
            image.value = self._png(i)
            text.value = f"<small>{html.escape(self.description(i))}</small>"
            prev.disabled, nxt.disabled = i == 1, i == n

        prev.on_click(lambda _: setattr(slider, "value", max(1, slider.value - 1)))
        nxt.on_click(lambda _: setattr(slider, "value", min(n, slider.value + 1)))
        slider.observe(show, names="value")
        show()
        self.slider, self.buttons, self.image, self.text = slider, (prev, nxt), image, text
        return W.VBox([W.HBox([prev, slider, nxt]), image, text])

    def _ipython_display_(self):
        from IPython.display import display  # deferred: IPython, only in a notebook

        try:
            box = self.widget()
        except ImportError:
            display(self.table())
            display(self.figure())
            return
        display(box)


def _geometry(s) -> str:
    sets, ways = s["n_sets"], s["ways"]
    if sets == 1:
        return f"fully associative, {ways} entries"
    return f"{sets} sets x {ways} way{'s' if ways > 1 else ''}"


def _label(i: int, n: int) -> str:
    """A, B, ..., Z for up to 26 entries, else p1, p2, ..."""
    return chr(ord("A") + i) if n <= 26 else f"p{i + 1}"


def tlb_steps(machine, addresses, page=None, structure=None, seed: int = 0) -> TLBSteps:
    """A step-by-step view of ``addresses`` in one TLB ``structure`` (see ``tlb_states``); displayed
    in a notebook, a slider and Prev/Next buttons step through one figure per access."""
    return TLBSteps(tlb_states(machine, addresses, page, structure, seed))
