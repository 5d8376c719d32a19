"""Your program's trace (notebook 06): which page size would help it, on every preset.

From a memory trace (valgrind lackey, Dinero din, or hex; recorded with ``pagesim trace record`` or
one of the shipped traces) this module computes

- the footprint: distinct pages touched for every page size a preset offers, and the memory those
  pages would map;
- reuse: each access's LRU stack distance in pages, hence the misses of a fully associative LRU TLB
  of any number of entries (a working-set curve, reach on the x axis);
- every preset x each of its page sizes in one ``sweep`` per preset: walks per 1,000 accesses,
  the modelled translation share, reach beside footprint;
- a recommendation per preset with its reason, and one sentence over all presets;
- how much the answer depends on the part of the trace simulated.

The recommendation rule (stated, so it can be argued with): among page sizes no smaller than the
preset's base page that map at most ``max_bloat`` (2) times the memory the program touches with
base pages, take the smallest whose walks are within 10% (or 0.1 per 1,000 accesses) of the fewest.
Walks are counted by the simulator, not modelled; translation share uses the cost model, whose
parameters are modelling assumptions (``pagesim machines --sources``).
"""

from __future__ import annotations

import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._kernels.reuse import stack_distances
from ..core.check import check_int
from ..core.progress import bar as progress_bar
from ..core.units import format_size, parse_page_size
from ..engine.simulate import simulate
from ..engine.stages import resolve_programmable
from ..engine.sweep import sweep
from ..host import here
from ..host import measure as M
from ..host.linux import why_not_both
from ..host.probe import hypervisor, memory_limit
from ..model.layout import Layout
from ..model.machines import Structure, machine, machines
from ..sources.datasets import data_root
from ..sources.record import count_lines, record, why_not
from ..sources.traces import accesses as trace_accesses
from ..sources.traces import detect_format, read_trace
from ..teaching import plotting

SHIPPED = {
    "ls": "ls-lackey.txt.gz",
    "gups": "gups-lackey.txt.gz",
    "stream": "stream-lackey.txt.gz",
    "chase": "chase-lackey.txt.gz",
}
ABOUT = {  # how each was recorded: datasets/traces/README.md and record.sh
    "ls": "GNU ls listing /, every access (instruction fetches too)",
    "gups": "programs/gups.c: 60,000 random read-modify-writes over a 256 MiB table; data accesses only",
    "stream": "programs/stream.c: STREAM triad over 3 x 1 MiB arrays, 2 passes (AVX2); data accesses only",
    "chase": "programs/chase.c: 60,000 hops of a linked list of 8,192 nodes scattered over 16 MiB; data accesses only",
}
MAX_BLOAT = 2.0
WALK_TOLERANCE = 0.10  # relative
#: what each exact check of this notebook compares: pagesim against itself or the file, never a
#: measurement of a program's speed (these are checks of the tool on the trace in hand)
SELF_CHECK = {
    "count": "a check of pagesim's trace reader against the file's own line count, not a measurement",
    "reuse-vs-simulate": "pagesim against itself by two independent methods (Mattson's stack distances and the TLB kernel): "
    "a check of the engine on this trace, not of a document; equal unless pagesim has a bug (which stops the notebook)",
    "sweep-vs-simulate": "the sweep runs the same kernel as simulate: this checks the sweep's splitting and bookkeeping, not the "
    "model; equal by construction unless pagesim has a bug (which stops the notebook)",
    "footprint": "two counts of the same addresses (numpy's distinct pages and the kernel's pages_touched): a bookkeeping check, "
    "equal by construction unless pagesim has a bug (which stops the notebook)",
}
WALK_TOLERANCE_PER_1000 = 0.1  # absolute, walks per 1,000 accesses


def _traces_dir():

    return data_root().joinpath("traces")


def shipped_traces() -> dict[str, Path]:
    """The traces shipped in datasets/traces/, by name: ls, gups, stream, chase."""
    d = _traces_dir()
    return {k: Path(str(d.joinpath(v))) for k, v in SHIPPED.items()}


def shipped_table():
    """The shipped traces: name, file, compressed size, what each is."""
    import pandas as pd  # deferred: pandas is slow to import; only tables need it

    return pd.DataFrame([{"trace": k, "file": v.name, "MB (gzip)": round(v.stat().st_size / 1e6, 2), "what": ABOUT[k]} for k, v in shipped_traces().items()])


def resolve(trace) -> Path:
    """A shipped trace's name, or the path of a trace file in any format :mod:`pagesim.sources.traces` reads."""
    if isinstance(trace, str) and trace in SHIPPED:
        return shipped_traces()[trace]
    p = Path(trace)
    if not p.is_file():
        raise ValueError(f"trace={str(trace)!r} is neither a shipped trace ({', '.join(SHIPPED)}) nor a file")
    return p


@dataclass
class Sample:
    """The part of a trace that is analysed: ``addresses`` and ``kinds`` (0 data, 1 instruction)."""

    path: str
    name: str
    format: str
    total: int  # accesses in the file
    start: int
    addresses: np.ndarray
    kinds: np.ndarray

    @property
    def n(self) -> int:
        return int(self.addresses.size)

    @property
    def whole(self) -> bool:
        return self.start == 0 and self.n == self.total

    @property
    def data(self) -> np.ndarray:
        return self.addresses[self.kinds == 0]

    def window(self, lo: int, hi: int) -> "Sample":
        return Sample(self.path, self.name, self.format, self.total, self.start + lo, self.addresses[lo:hi], self.kinds[lo:hi])

    def describe(self) -> str:
        part = "the whole trace" if self.whole else f"accesses {self.start:,} to {self.start + self.n:,} of {self.total:,}"
        ni = int((self.kinds == 1).sum())
        return f"{self.name}: {part} ({self.n:,} accesses: {self.n - ni:,} data, {ni:,} instruction fetches)"


def load(trace, max_accesses: int = 2_000_000, start: int = 0) -> Sample:
    """Read the trace once, checking every line as :func:`pagesim.sources.traces.read_trace` does (a
    malformed line is named with its number), and keep ``max_accesses`` accesses from ``start`` in
    memory (about 9 bytes each)."""
    max_accesses = check_int("max_accesses", max_accesses, 1)
    start = check_int("start", start, 0)
    path = resolve(trace)
    fmt = detect_format(path)
    a_parts, k_parts, seen = [], [], 0
    for a, k in trace_accesses(path, fmt):
        lo, hi = max(start - seen, 0), min(start + max_accesses - seen, a.size)
        if hi > lo:
            a_parts.append(a[lo:hi])
            k_parts.append(k[lo:hi])
        seen += a.size
    if seen == 0:
        raise ValueError(f"trace {str(path)!r} holds no accesses")
    if start >= seen:
        raise ValueError(f"start={start:,} is beyond the trace's {seen:,} accesses")
    name = next((k for k, v in shipped_traces().items() if path.resolve() == v.resolve()), path.name)
    return Sample(str(path), name, fmt, seen, int(start), np.concatenate(a_parts), np.concatenate(k_parts))


# ------------------------------------------------------------------------------ footprint, reuse
def all_page_sizes(names=None) -> list[int]:
    return sorted({p for n in (names or machines()) for p in machine(n).page_sizes})


def _distinct(sorted_pages: np.ndarray, shift: int) -> int:
    """Distinct values of ``sorted_pages >> shift`` (the input sorted and unique)."""
    if sorted_pages.size == 0:
        return 0
    v = sorted_pages >> np.uint64(shift)
    return int(np.count_nonzero(v[1:] != v[:-1])) + 1


def footprint(s: Sample, page_sizes=None):
    """Distinct pages touched, by page size and kind, and the memory they map."""
    import pandas as pd  # deferred: pandas is slow to import; only tables need it

    sizes = [parse_page_size(p) for p in (page_sizes or all_page_sizes())]
    g = min(sizes).bit_length() - 1  # every page size is a power of two: count from the smallest pages
    base = {k: np.unique(a >> np.uint64(g)) for k, a in (("data", s.addresses[s.kinds == 0]), ("instr", s.addresses[s.kinds == 1]), ("all", s.addresses))}
    rows = []
    for p in sizes:
        sh = p.bit_length() - 1 - g
        d, i, a = (_distinct(base[k], sh) for k in ("data", "instr", "all"))
        rows.append({"page_size": p, "page": format_size(p), "data pages": d, "instruction pages": i, "pages": a, "data footprint": d * p, "mapped": a * p})
    df = pd.DataFrame(rows)
    df["mapped vs 4K"] = df["mapped"] / float(df.loc[df["page_size"] == 4096, "mapped"].iloc[0]) if (df["page_size"] == 4096).any() else np.nan
    return df


def reuse_distances(addresses, page_size) -> np.ndarray:
    """LRU stack distance of every access at ``page_size`` granularity (-1: first touch)."""
    p = parse_page_size(page_size)
    a = np.asarray(addresses, dtype=np.uint64)
    if a.ndim != 1:
        raise ValueError(f"addresses must be 1-D, got shape {a.shape}")
    _, ids = np.unique(a >> np.uint64(p.bit_length() - 1), return_inverse=True)
    ids = ids.astype(np.int64).ravel()
    n_ids = int(ids.max()) + 1 if ids.size else 0
    if ids.size and (int(ids.min()) < 0 or n_ids > ids.size):
        raise AssertionError("page ids out of range")  # cannot happen: np.unique's inverse indexes its own output
    return stack_distances(ids, n_ids)


def lru_misses(distances: np.ndarray, entries) -> np.ndarray:
    """Misses of a fully associative LRU TLB with each number of ``entries``: first touches plus
    accesses whose reuse distance is at least the entry count."""
    d = np.asarray(distances)
    cold = int((d < 0).sum())
    warm = np.sort(d[d >= 0])
    e = np.asarray(entries, dtype=np.int64)
    return cold + (warm.size - np.searchsorted(warm, e, side="left"))


def reuse_curve(s: Sample, page_sizes=("4K", "64K", "2M"), data_only: bool = True, max_entries: int = 1 << 18):
    """The working-set curve: misses per 1,000 accesses of a fully associative LRU TLB against its
    entries and reach (entries x page size), for each page size."""
    import pandas as pd  # deferred: pandas is slow to import; only tables need it

    a = s.data if data_only else s.addresses
    entries = np.unique(np.round(2 ** np.arange(0, np.log2(max_entries) + 0.01, 0.25)).astype(np.int64))
    rows = []
    for p in page_sizes:
        p = parse_page_size(p)
        m = lru_misses(reuse_distances(a, p), entries)
        for n, x in zip(entries, m):
            rows.append(
                {"page": format_size(p), "page_size": p, "entries": int(n), "reach": int(n) * p, "misses": int(x), "misses per 1000": 1000 * x / a.size}
            )
    return pd.DataFrame(rows)


def lru_machine(entries: int, page_size="4K", like: str = "skylake"):
    """A machine with one fully associative LRU TLB of ``entries`` entries for ``page_size`` pages
    (data and instructions): its walks must equal :func:`lru_misses` of the reuse distances."""
    p = parse_page_size(page_size)
    s = Structure(
        name=f"TLB {entries}",
        level=1,
        side="unified",
        entries=int(entries),
        ways=int(entries),
        sizes=(p,),
        source="what-if: one fully associative LRU TLB (the reuse-distance check)",
        assumed=("entries", "ways"),
    )
    return machine(like).derive(name=f"lru-{entries}x{format_size(p)}", structures=(s,))


# ------------------------------------------------------------------------------ every preset
def sweep_presets(s: Sample, names=None, progress: bool = False):
    """Every preset x each of its page sizes: one :func:`pagesim.sweep` per preset over its page
    sizes, on the sample's addresses. A tidy DataFrame, one row per (machine, page size). ``reach``
    is the data reach the simulation had: a programmable TLB (UltraSPARC III Cu's T512_1) counts
    where the simulation programmed it (8 or more pages of one of its sizes mapped), and
    ``programmed`` names it."""
    import pandas as pd  # deferred: pandas is slow to import; only tables need it

    fp = footprint(s, all_page_sizes(names)).set_index("page_size")
    rows = []
    names = list(names or machines())
    bar = None
    if progress:
        bar = progress_bar(total=len(names), desc="presets", unit="preset")
    for n in names:
        m = machine(n)
        ds = sweep({"page_size": list(m.page_sizes)}, machine=m, addresses=s.addresses, kinds=s.kinds, specialize=False, progress=False)
        walks = ds["walks"].sum(["side", "mapped_page_size"])
        dwalks = ds["walks"].sel(side="data").sum("mapped_page_size")
        trans = ds["cycles"].sel(component=["tlb_hit_latency", "walk", "slb_miss"]).sum(["component", "mapped_page_size"])
        acc = ds["accesses"].sum(["side", "mapped_page_size"])
        touched = ds["pages_touched"].sum("mapped_page_size")
        for p in m.page_sizes:
            # the reach the simulation had: a programmable TLB (UltraSPARC III Cu's T512_1) programmed as
            # the simulation programs it for this layout (pagesim.engine.stages.resolve_programmable)
            used, programmed = m, {}
            if any(st.programmable for st in m.structures):
                used, programmed = resolve_programmable(m, Layout.covering_addresses(s.addresses, p))
            reach = used.reach(p, "data")
            n_acc = int(acc.sel(page_size=p))
            rows.append(
                {
                    "machine": m.name,
                    "page": format_size(p),
                    "page_size": p,
                    "base": p == m.base_page,
                    "accesses": n_acc,
                    "walks": int(walks.sel(page_size=p)),
                    "data walks": int(dwalks.sel(page_size=p)),
                    "walks per 1000": 1000 * int(walks.sel(page_size=p)) / n_acc,
                    "translation share": float(ds["translation_share"].sel(page_size=p)),
                    "translation cycles per access": float(trans.sel(page_size=p)) / n_acc,
                    "pages touched": int(touched.sel(page_size=p)),
                    "reach": reach,
                    "programmed": ", ".join(programmed),
                    "data footprint": int(fp.loc[p, "data footprint"]),
                    "mapped": int(fp.loc[p, "mapped"]),
                    "covers": reach >= int(fp.loc[p, "data footprint"]),
                }
            )
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    return pd.DataFrame(rows)


def pivot(table, value: str, scale: float = 1.0, digits: int = 2):
    """``value`` by preset (rows, in the table's order) and page size (columns, smallest first);
    blank where a preset lacks the page size."""
    pv = table.pivot_table(index="machine", columns="page_size", values=value, sort=False) * scale
    pv = pv[sorted(pv.columns)].round(digits)
    pv.columns = [format_size(int(c)) for c in pv.columns]
    pv.columns.name = "page"
    return pv.astype(object).where(pv.notna(), "")


@dataclass
class Recommendation:
    text: str
    per_machine: object  # DataFrame: machine, base, recommended, reason, walks per 1000 (base, recommended), ...

    def __str__(self):
        return self.text


def human(b) -> str:
    """Bytes as a reader says them: 153 MiB, 548 KiB, 2.5 GiB (three significant figures)."""
    b = int(b)
    for unit, div in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if b >= div:
            v = b / div
            return f"{v:.3g} {unit}" if v < 1000 else f"{v:,.0f} {unit}"
    return f"{b} B"


def _fmt_w(x: float) -> str:
    return f"{x:.3g}" if x < 100 else f"{x:,.0f}"


def _programmed(row) -> str:
    """' (T512_1 programmed to 4M)' where a row's reach counts a programmable TLB the simulation programmed."""
    names = row.get("programmed", "")
    return f" ({names} programmed to {row['page']})" if isinstance(names, str) and names else ""


def recommend(table, max_bloat: float = MAX_BLOAT) -> Recommendation:
    """Per preset, the page size to use and why (the rule is in this module's docstring); and one
    sentence over every preset in ``table`` (a :func:`sweep_presets` result)."""
    import pandas as pd  # deferred: pandas is slow to import; only tables need it

    if not max_bloat >= 1:
        raise ValueError(f"max_bloat={max_bloat!r} must be at least 1 (1: no more memory than base pages map)")
    rows = []
    for name, g in table.groupby("machine", sort=False):
        g = g.sort_values("page_size")
        b = g[g["base"]].iloc[0]
        cand = g[(g["page_size"] >= b["page_size"]) & (g["mapped"] <= max_bloat * b["mapped"])]
        best = cand["walks"].min()
        tol = max(WALK_TOLERANCE * best, WALK_TOLERANCE_PER_1000 * b["accesses"] / 1000)
        r = cand[cand["walks"] <= best + tol].iloc[0]
        bloated = g[(g["page_size"] > b["page_size"]) & (g["mapped"] > max_bloat * b["mapped"])]
        if r["page_size"] == b["page_size"]:
            if b["covers"]:
                why = f"the data footprint {human(b['data footprint'])} fits the {b['page']} reach {human(b['reach'])}{_programmed(b)}"
            elif len(cand) == 1 and len(bloated):
                why = (
                    f"every larger page would map more than {max_bloat:g}x the memory touched "
                    f"({b['page']}: {human(b['mapped'])}, {bloated.iloc[0]['page']}: {human(bloated.iloc[0]['mapped'])})"
                )
            else:
                why = "no allowed larger page cuts walks by more than 10%"
            why += f"; {_fmt_w(b['walks per 1000'])} walks per 1,000 accesses"
        else:
            why = (
                f"walks per 1,000 accesses {_fmt_w(b['walks per 1000'])} -> {_fmt_w(r['walks per 1000'])}; {r['page']} reach "
                f"{human(r['reach'])}{_programmed(r)} {'covers' if r['covers'] else 'does not cover'} the data footprint "
                f"{human(r['data footprint'])}; maps {human(r['mapped'])} "
                f"({r['mapped'] / b['mapped']:.2g}x base pages)"
            )
        # pages ruled out for the memory they would map, when they would have cut walks further: say so
        # (else "no larger page helps" would read as the whole story)
        better = bloated[(bloated["walks"] < 0.9 * r["walks"]) & (bloated["walks"] < r["walks"] - tol)]
        if len(better) and r["walks per 1000"] >= 1:
            x = better.sort_values("page_size").iloc[0]  # the smallest such page
            why += (
                f"; {x['page']} would cut walks to {_fmt_w(x['walks per 1000'])} per 1,000 but maps {human(x['mapped'])} "
                f"({x['mapped'] / b['mapped']:.2g}x base pages, over max_bloat={max_bloat:g})"
            )
        rows.append(
            {
                "machine": name,
                "base page": b["page"],
                "recommended": r["page"],
                "recommended size": int(r["page_size"]),
                "large": bool(r["page_size"] > b["page_size"]),
                "walks per 1000 (base)": b["walks per 1000"],
                "walks per 1000 (recommended)": r["walks per 1000"],
                "translation share (base)": b["translation share"],
                "translation share (recommended)": r["translation share"],
                "base reach": int(b["reach"]),
                "base footprint": int(b["data footprint"]),
                "base covers": bool(b["covers"]),
                "reason": why,
            }
        )
    pm = pd.DataFrame(rows)
    n = len(pm)
    fp4 = table[table["page_size"] == 4096]["data footprint"]
    fp = int(fp4.iloc[0]) if len(fp4) else int(pm["base footprint"].iloc[0])
    k = int(pm["base covers"].sum())
    if k == 0:
        head = f"data footprint {human(fp)} exceeds every base-page reach"
    elif k == n:
        head = f"data footprint {human(fp)} fits the base-page reach of every preset"
    else:
        head = f"data footprint {human(fp)} fits the base-page reach of {k} of {n} presets"
    parts = [head]
    large = pm[pm["large"]]
    if len(large):
        # the most often recommended larger page; a tie goes to the smaller page
        top = large.groupby(["recommended size", "recommended"]).size().reset_index(name="n")
        top = top.sort_values(["n", "recommended size"], ascending=[False, True]).set_index("recommended")["n"]
        L = top.index[0]
        offer = table[table["page"] == L]
        parts.append(f"{L} covers it on {int(offer['covers'].sum())} of {offer['machine'].nunique()} presets with {L} pages")
        counts = ", ".join(f"{p} on {c}" for p, c in top.items())
        rest = n - len(large)
        parts.append(
            f"recommended: larger pages on {len(large)} of {n} presets ({counts})"
            + (f", base pages on {rest}" if rest else "")
            + f"; median walks per 1,000 accesses there {_fmt_w(float(large['walks per 1000 (base)'].median()))} -> "
            f"{_fmt_w(float(large['walks per 1000 (recommended)'].median()))}"
        )
    else:
        parts.append(f"recommended: base pages on all {n} presets (median {_fmt_w(float(pm['walks per 1000 (base)'].median()))} walks per 1,000 accesses)")
    return Recommendation("; ".join(parts), pm)


# ------------------------------------------------------------------------------ sampling
def sensitivity(s: Sample, names=("skylake", "power8", "ultrasparc-iii"), parts: int = 4, max_bloat: float = MAX_BLOAT):
    """The same analysis on ``parts`` consecutive windows of the sample and on the whole: each
    preset's recommended page, and walks per 1,000 accesses at base and recommended pages."""
    import pandas as pd  # deferred: pandas is slow to import; only tables need it

    parts = check_int("parts", parts, 1, 64)
    bounds = np.linspace(0, s.n, parts + 1).astype(int)
    rows = []
    for i in range(parts + 1):
        w = s if i == parts else s.window(int(bounds[i]), int(bounds[i + 1]))
        label = "whole sample" if i == parts else f"part {i + 1} of {parts}"
        if w.n == 0:
            continue
        rec = recommend(sweep_presets(w, names), max_bloat).per_machine
        fp = footprint(w, [4096])
        for _, r in rec.iterrows():
            rows.append(
                {
                    "window": label,
                    "first access": w.start,
                    "accesses": w.n,
                    "data footprint (4K)": int(fp["data footprint"].iloc[0]),
                    "machine": r["machine"],
                    "recommended": r["recommended"],
                    "walks per 1000 (base)": r["walks per 1000 (base)"],
                    "walks per 1000 (recommended)": r["walks per 1000 (recommended)"],
                }
            )
    return pd.DataFrame(rows)


def prefix_curve(s: Sample, name: str = "skylake", fractions=(0.125, 0.25, 0.5, 1.0)):
    """Walks per 1,000 accesses at each page size of ``name`` on growing prefixes of the sample:
    how long a sample must be before cold misses stop dominating."""
    import pandas as pd  # deferred: pandas is slow to import; only tables need it

    rows = []
    for f in fractions:
        w = s.window(0, max(1, int(round(f * s.n))))
        t = sweep_presets(w, [name])
        for _, r in t.iterrows():
            rows.append({"fraction": f, "accesses": w.n, "page": r["page"], "walks per 1000": r["walks per 1000"]})
    return pd.DataFrame(rows)


def direct_points(path, table, points) -> list[dict]:
    """For each (machine, page) in ``points``: the sweep's walks beside a direct
    ``simulate(machine, read_trace(path), page_size=page)``, which reads the file again."""
    tr = read_trace(path)
    out = []
    for name, page in points:
        p = parse_page_size(page)
        row = table[(table["machine"] == name) & (table["page_size"] == p)]
        if row.empty:
            raise ValueError(f"({name!r}, {page!r}) is not in the sweep")
        ds = simulate(name, tr, page_size=p)
        out.append(
            {
                "machine": name,
                "page": format_size(p),
                "sweep walks": int(row["walks"].iloc[0]),
                "simulate walks": int(ds["walks"].sum()),
                "sweep accesses": int(row["accesses"].iloc[0]),
                "simulate accesses": int(ds["accesses"].sum()),
            }
        )
    return out


# ------------------------------------------------------------------- the notebook's findings and figures
# Each ``record_*`` function records the findings of one section of notebooks/06_your_program.ipynb in
# its ``Findings``; the notebook's appendix lists them. Every finding is about the trace and this machine.


def load_or_record(trace, command: str = "", record_to="../build/traces", data_only: bool = True, max_accesses: int = 2_000_000, start: int = 0):
    """The :class:`Sample` to analyse and the recording (None when nothing was recorded): ``command``
    recorded first with valgrind when it is given and valgrind is there (only what is analysed: the
    program is stopped after ``start + max_accesses`` accesses), else the trace ``trace``."""
    recorded = None
    if command:
        reason = why_not()
        if reason:
            print(f"cannot record {command!r} here: {reason}\nanalysing the shipped trace {trace!r} instead")
        else:
            Path(record_to).mkdir(parents=True, exist_ok=True)
            argv = shlex.split(command)
            recorded = record(
                argv,
                out=Path(record_to) / f"{Path(argv[0]).name}-lackey.txt.gz",
                data_only=data_only,
                limit=start + max_accesses,
                program_output=subprocess.DEVNULL,
            )
            print(recorded)
            trace = recorded.path
    return load(trace, max_accesses=max_accesses, start=start), recorded


def record_count(F, s: Sample, recorded) -> None:
    """Section 1: the accesses read equal the file's lackey access lines (and the recorder's count)."""
    if s.format == "lackey":
        lines = count_lines(s.path)
        want = recorded.accesses if recorded is not None else lines
        F.arithmetic(
            "count",
            "accesses read from the trace equal its lackey access lines" + (" and the recorder's count" if recorded else ""),
            Path(s.path).name,
            f"{want:,} lines" + (f" (recorder {recorded.accesses:,})" if recorded else ""),
            f"{s.total:,} accesses read",
            s.total == lines == want,
            why=SELF_CHECK["count"],
        )
    else:
        F.shown("count", "accesses read from the trace", Path(s.path).name, "-", f"{s.total:,}", f"a {s.format} file: the lackey line count does not apply")


def footprint_table(fp):
    """:func:`footprint` with sizes as a reader says them."""
    show = fp.assign(**{"data footprint": fp["data footprint"].map(human), "mapped": fp["mapped"].map(human), "mapped vs 4K": fp["mapped vs 4K"].round(2)})
    return show.drop(columns="page_size")


def plot_footprint(s: Sample, fp):
    """The memory the pages touched would map, by page size."""
    import matplotlib.pyplot as plt  # deferred: matplotlib is slow to import; only figures need it

    ax = plotting.bars(
        fp.assign(**{"mapped MiB": fp["mapped"] / 2**20}),
        x="page",
        y="mapped MiB",
        log=True,
        annotate=True,
        title=f"{s.name}: memory mapped by the pages touched, by page size",
    )
    ax.tick_params(axis="x", rotation=45)
    plt.tight_layout()
    return ax


REUSE_MARKS = ("opteron-k8", "skylake", "zen4", "power5+")


def plot_reuse(s: Sample, rc):
    """The working-set curve of :func:`reuse_curve` (reach on the x axis), the presets' 4 KiB reach marked."""
    rc = rc.assign(**{"reach MiB": rc["reach"] / 2**20})
    ax = plotting.lines(
        rc[rc["misses per 1000"] > 0],
        x="reach MiB",
        y="misses per 1000",
        hue="page",
        logx=True,
        logy=True,
        marker=None,
        title=f"{s.name}: misses per 1,000 data accesses of a fully associative LRU TLB",
    )
    plotting.mark_sizes(ax, [(n, machine(n).reach("4K")) for n in REUSE_MARKS if 4096 in machine(n).page_sizes])
    return ax


def reuse_needs(s: Sample, rc) -> str:
    """The first touches (misses no TLB avoids) and the entries needed for at most one further miss
    per 1,000 data accesses, by page size."""
    cold = rc.groupby("page")["misses"].min()
    need = {p: int(g[g["misses"] <= cold[p] + len(s.data) / 1000]["entries"].min()) for p, g in rc.groupby("page")}
    first = {p: int(c) for p, c in cold.items()}
    return f"first touches (misses no TLB avoids): {first}\nentries needed for at most 1 further miss per 1,000 data accesses: {need}"


def record_reuse(F, s: Sample) -> None:
    """Section 3: a 64-entry fully associative LRU TLB walks as often as the reuse distances say."""
    lru = lru_machine(64, "4K")
    ds = simulate(lru, addresses=s.data, page_size="4K", specialize=False)
    curve64 = int(lru_misses(reuse_distances(s.data, "4K"), [64])[0])
    F.arithmetic(
        "reuse-vs-simulate",
        "misses of a 64-entry fully associative LRU TLB: reuse distances vs the simulator",
        "this notebook (section 3)",
        f"{curve64:,} from reuse distances",
        f"{int(ds['walks'].sum()):,} walks simulated",
        curve64 == int(ds["walks"].sum()),
        why=SELF_CHECK["reuse-vs-simulate"],
    )


def plot_reach_footprint(s: Sample, table):
    """Walks per 1,000 accesses against reach / data footprint, every preset and page size."""
    import matplotlib.pyplot as plt  # deferred: matplotlib is slow to import; only figures need it

    pts = table.assign(**{"reach / data footprint": table["reach"].clip(lower=1) / table["data footprint"]})
    ax = plotting.points(
        pts,
        x="reach / data footprint",
        y="walks per 1000",
        hue="page",
        hue_order=list(dict.fromkeys(pts.sort_values("page_size")["page"])),
        title=f"{s.name}: walks per 1,000 accesses against reach / footprint (every preset and page size)",
    )
    ax.axvline(1, color="0.4", ls="--", lw=0.8)
    plt.tight_layout()
    return ax


DIRECT_POINTS = (("skylake", "4K"), ("skylake", "2M"), ("power8", "64K"))


def direct_check(s: Sample, table, names):
    """:func:`direct_points` at :data:`DIRECT_POINTS` (those among ``names``), or None when only part of
    the trace is analysed."""
    import pandas as pd  # deferred: pandas is slow to import; only tables need it

    return pd.DataFrame(direct_points(s.path, table, [p for p in DIRECT_POINTS if p[0] in names])) if s.whole else None


def record_sweep(F, s: Sample, table, fp, direct) -> None:
    """Section 4: the sweep's walks equal a direct simulation of the file, and its pages touched the
    footprint of section 2."""
    if direct is not None:
        F.arithmetic(
            "sweep-vs-simulate",
            "sweep walks equal a direct simulate(read_trace(file)) at the same points",
            Path(s.path).name,
            ", ".join(f"{r.machine} {r.page}: {r._4:,}" for r in direct.itertuples()),
            ", ".join(f"{r.machine} {r.page}: {r._3:,}" for r in direct.itertuples()),
            bool((direct["sweep walks"] == direct["simulate walks"]).all() and (direct["sweep accesses"] == direct["simulate accesses"]).all()),
            why=SELF_CHECK["sweep-vs-simulate"],
        )
    else:  # nothing to compare
        F.not_reproduced(
            "sweep-vs-simulate",
            "sweep vs a direct simulate of the file",
            Path(s.path).name,
            "-",
            "-",
            "only a part of the trace is analysed: the file holds more",
        )
    pages4 = int(fp.loc[fp.page == "4K", "pages"].iloc[0])
    sim4 = int(table[(table.machine == "skylake") & (table.page == "4K")]["pages touched"].iloc[0])
    F.arithmetic(
        "footprint",
        "4K pages touched: counted from the addresses vs the simulator's pages_touched",
        "section 2",
        f"{pages4:,}",
        f"{sim4:,}",
        pages4 == sim4,
        why=SELF_CHECK["footprint"],
    )


def plot_recommendation(s: Sample, rec):
    """Walks per 1,000 accesses of each preset with its base page and with the recommended page."""
    import matplotlib.pyplot as plt  # deferred: matplotlib is slow to import; only figures need it

    pm = rec.per_machine
    t = pm.melt(id_vars="machine", value_vars=["walks per 1000 (base)", "walks per 1000 (recommended)"], var_name="page", value_name="walks per 1000")
    t["page"] = t["page"].str.extract(r"\((.*)\)")[0].map({"base": "base page", "recommended": "recommended page"})
    t["walks per 1000"] = t["walks per 1000"].astype(float).clip(lower=1e-3)
    _, ax = plt.subplots(figsize=(9, 3.8))
    plotting.bars(
        t, x="machine", y="walks per 1000", hue="page", log=True, ax=ax, title=f"{s.name}: walks per 1,000 accesses, base page and recommended page", xlabel=""
    )
    ax.tick_params(axis="x", rotation=45)
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)
    plt.tight_layout()
    return ax


def record_recommendation(F, s: Sample, rec) -> None:
    """Section 5: the recommendation (a note: nothing to check it against)."""
    F.shown(
        "recommendation",
        f"recommendation for {s.name}",
        Path(s.path).name,
        f"{s.n:,} accesses",
        rec.text,
        "a recommendation from simulated walks with a stated rule; no measurement to check it against",
    )


def plot_prefix(s: Sample, pc, name: str = "skylake"):
    """Walks per 1,000 accesses on growing prefixes of the sample (:func:`prefix_curve`)."""
    return plotting.lines(
        pc,
        x="accesses",
        y="walks per 1000",
        hue="page",
        logx=True,
        logy=True,
        title=f"{s.name} on {name}: walks per 1,000 accesses on growing prefixes of the sample",
    )


def record_sampling(F, sens) -> str:
    """Section 6: how often the recommendation on a part agrees with the whole sample's (a note)."""
    whole = sens[sens.window == "whole sample"].set_index("machine")["recommended"]
    parts = sens[sens.window != "whole sample"]
    agree = int((parts["recommended"].values == whole.loc[parts["machine"]].values).sum())
    base = parts["walks per 1000 (base)"]
    F.shown(
        "sampling",
        "the recommendation on parts of the sample",
        f"{len(parts)} (preset, part) pairs",
        f"whole sample: {', '.join(f'{k} {v}' for k, v in whole.items())}",
        f"same page in {agree} of {len(parts)}; base-page walks per 1,000 from {base.min():.3g} to {base.max():.3g}",
        "shows how far a partial trace can mislead; nothing to check it against",
    )
    return f"the recommendation on a part agrees with the whole sample's in {agree} of {len(parts)} (preset, part) pairs"


def shipped_recommendations(s: Sample, names, max_bloat: float = MAX_BLOAT) -> dict:
    """The recommendation for each shipped trace: {name: (Sample, Recommendation)} (``s`` reused when it
    is that whole trace)."""
    out = {}
    for name in SHIPPED:
        t = s if (name == s.name and s.whole) else load(name)
        out[name] = (t, recommend(sweep_presets(t, names), max_bloat=max_bloat))
    return out


def shipped_text(shipped: dict) -> str:
    return "\n".join(f"{name} ({ABOUT[name]}, {t.n:,} accesses):\n    {r.text}" for name, (t, r) in shipped.items())


def record_shipped(F, shipped: dict) -> None:
    """Section 7: each shipped trace's recommendation (notes)."""
    for name, (t, r) in shipped.items():
        F.shown(
            f"shipped-{name}",
            f"recommendation for the shipped trace {name}",
            SHIPPED[name],
            f"{t.n:,} accesses",
            r.text,
            "a recommendation from simulated walks with a stated rule",
        )


# ------------------------------------------------------------------------- section 8: measured here
#: the program section 8 measures: a kernel of pagesim.host.here run once as a program of its own
MEASURED_KERNEL = "RandomAccess"


def measured_program(quick: bool = False, repeat: int | None = None, seed: int = 0, preset: str | None = None):
    """Section 8: a shipped program (:data:`MEASURED_KERNEL` as a program, ``pagesim.host.here.program``)
    run here with THP off and on by ``pagesim measure``, beside pagesim's prediction of its time off /
    on for this machine (``pagesim.host.here.predict_program``: its recorded trace simulated with
    4 KiB and 2 MiB pages, faults included, added to the measured time with THP on).

    The measured faults are the whole process's: the interpreter's, numpy's and pagesim's start-up
    as well as the program's arrays. The predicted ones are the traced data's pages only. So the
    program's start-up alone (``--start-only``: the imports, the sizes and the compiled kernel
    loaded, no arrays and no run) is measured too, once with THP off and once on, and the table
    sets the measured faults less the start-up's beside the prediction. Returns (the measurement,
    a table: the measured rows, then one per model; ``faults count`` says what each row's faults
    count), or None with the reason printed where it cannot run here. A measurement of this
    machine, not evidence about a document."""
    import pandas as pd  # deferred: pandas is slow to import; only tables need it

    repeat = check_int("repeat", repeat if repeat is not None else (2 if quick else 5), 1, 100)
    reason = why_not_both()
    if reason:
        print(f"Not measured here: {reason}")
        return None
    mods = here.models(preset, hypervisor())  # checked before anything runs
    limit = memory_limit()
    cmd = here.program(MEASURED_KERNEL, quick=quick, seed=seed, limit=limit)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)  # untimed: loads (or compiles) the kernel once
    meas = M.measure(cmd, repeat=repeat)
    print(meas.summary())
    if meas.interrupted:  # the pairs run so far are printed above; nothing is predicted
        raise KeyboardInterrupt
    pairs = meas.pairs()
    on = float(np.median([b.seconds for _, b in pairs]))
    ratios = meas.ratios()
    start = M.measure(here.program(MEASURED_KERNEL, quick=quick, seed=seed, limit=limit, start_only=True), repeat=1)
    if start.interrupted:
        raise KeyboardInterrupt
    if start.failed:  # its faults would be a failed run's, not the start-up's
        raise RuntimeError("the program's start-up alone (--start-only) failed:\n" + start.summary())
    (s_off, s_on) = start.pairs()[0]
    faults = {"faults off": int(np.median([a.minor_faults for a, _ in pairs])), "faults on": int(np.median([b.minor_faults for _, b in pairs]))}
    rows = [
        {
            "": "measured here",
            "time off / on": float(np.median(ratios)),
            "spread": f"{min(ratios):.3f}..{max(ratios):.3f}",
            **faults,
            "AnonHugePages on": format_size(max(b.anon_huge_peak for _, b in pairs)),
            "faults count": "the whole process: its start-up (Python, numpy, pagesim) and the program's arrays",
        },
        {
            "": "measured here: start-up only",
            "faults off": s_off.minor_faults,
            "faults on": s_on.minor_faults,
            "faults count": "the same process without its arrays and its run (--start-only)",
        },
        {
            "": "measured here less start-up",
            "faults off": faults["faults off"] - s_off.minor_faults,
            "faults on": faults["faults on"] - s_on.minor_faults,
            "faults count": "the program's arrays: what the prediction counts",
        },
    ]
    hz, _ = here.cpu_hz()
    for r in here.predict_program(MEASURED_KERNEL, quick, on, mods, hz, seed=seed, limit=limit):
        row = {"": f"predicted: {r['model']}", "time off / on": r["time off / on"], "spread": ""}
        rows.append(row | {"faults off": r["faults off"], "faults on": r["faults on"], "faults count": "the traced data's pages (first touches)"})
    t = pd.DataFrame(rows).set_index("")
    t["time off / on"] = t["time off / on"].round(3)
    t = t[[c for c in t.columns if c != "faults count"] + ["faults count"]]
    text = [c for c in t.columns if not pd.api.types.is_numeric_dtype(t[c])]
    t[text] = t[text].fillna("")  # a row without the figure: blank (a time: NaN, as pandas shows a missing number)
    return meas, t
