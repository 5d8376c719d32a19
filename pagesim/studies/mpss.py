"""Multiple Page Size Support on Solaris/UltraSPARC (002_7166aff63bc805c7.txt): trapstat before and
after a 4 MB heap, the pmap -sx view, the UltraSPARC TLB designs, fragmentation and the kernel cage,
large pages for text.

The test program is ours (the document does not describe ./testprog's accesses): uniform random
accesses over a 128 MiB heap (the size of the document's 4M heap mapping in its pmap -sx listing),
with ``WORK`` cycles of other work per access. WORK is a MODELLING ASSUMPTION, CALIBRATED: 100
cycles puts the 8K run near the document's 46.2% in TLB handling (the document does not say what the
program does). The findings that are not calibrated are the after value (0.2% in the document), the
ratio, and every comparison between machines and memory states.
"""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np

from ..core.units import format_size, parse_size
from ..engine.simulate import simulate
from ..model.layout import Layout, Region
from ..model.machines import machine
from ..sources import datasets as D
from ..system.memory import PhysicalMemory
from ..system.trapstat import trapstat
from ..system.trapstat import trapstat as _trapstat
from ..teaching import plotting
from .findings import Findings
from .sensitivity import Holds, holding_range, recost

HEAP = 128 << 20
HEAP_START = 0x400000  # as in the document's pmap -sx listing
WORK = 100.0  # calibrated to the 8K run's 46.2% (see above)


def heap_layout(page: str, policy: str = "base") -> Layout:
    return Layout((Region(0x22000, 3960 << 10, "8K", "[ heap ]"), Region(HEAP_START, HEAP, page, "[ heap ]", policy=policy)))


def testprog(m="ultrasparc-iii-cu", page="8K", accesses=300_000, seed=0, memory=None, compaction=False, policy="base"):
    """The simulated test program: returns the Dataset."""
    lay = heap_layout(page, policy)
    rng = np.random.default_rng(seed)
    addrs = (HEAP_START + rng.integers(0, HEAP, accesses)).astype(np.uint64)
    return simulate(m, addresses=addrs, layout=lay, work_cycles=WORK, memory=memory, compaction=compaction, seed=seed)


def trapstat_before_after(m="ultrasparc-iii-cu", accesses=300_000, seed=0, after="4M"):
    """trapstat -T tables of the test program with an 8K heap and with an ``after`` heap (4M, as
    ``ppgsz -o heap=4M`` in the document; 64K or 512K to try the other sizes)."""
    out = {}
    for run, page in (("before", "8K"), ("after", after)):
        ds = testprog(m, page, accesses, seed)
        out[run] = (ds, trapstat(ds, sizes=["8K", "64K", "512K", "4M"]))
    return out


def total_pct(t) -> float:
    return float(t[(t.cpu == "ttl") & (t.event == "all")]["pct_time"].iloc[0])


def user_dtlb_misses(t) -> dict:
    """User-mode dTLB misses by page size ('8k', '64k', '512k', '4m') of one trapstat -T table: the
    simulation's (:func:`pagesim.system.trapstat.trapstat`) or one run of the document's (``mpss_trapstat``
    rows of one ``output`` and ``run``)."""
    rows = t[(t["mode"] == "u") & (t["event"] == "dtlb-miss")]
    if rows["page_size"].duplicated().any():
        raise ValueError("user_dtlb_misses: give one trapstat -T table (one output and one run)")
    return {str(r.page_size): int(r.count) for r in rows.itertuples()}


STEADY = ["work", "tlb_hit_latency", "walk", "slb_miss"]


def speedup(before, after) -> float:
    """Modelled run time of ``before`` over ``after`` (steady state: work and translation, the
    one-off first-touch faults left out, as in trapstat's time base)."""
    return float(before["cycles"].sel(component=STEADY).sum()) / float(after["cycles"].sel(component=STEADY).sum())


def steady_tsb_misses(ds) -> int:
    """Data TSB misses beyond each page's first touch: ``trapstat -T 1`` samples a program that is
    already running, whose pages have all been touched (and entered in the TSB) before."""
    return int(ds["tsb_misses"].sel(side="data").sum()) - int(ds["faults"].sum())


def tsb_sweep(entries=(512, 2048, 8192, 16384, 32768), accesses=100_000, seed=0, m="ultrasparc-iii-cu"):
    """The test program's 8K heap, and its 4M heap, with TSBs of several sizes (per page size):
    data TSB misses beyond first touch. A TSB sized to the process's pages is what Solaris 10's
    dynamic TSB provides; the smaller fixed sizes stand for a TSB that does not grow (the document
    gives no Solaris 9 size: an assumption)."""
    import pandas as pd  # deferred: pandas is slow to import; only tables need it

    base = machine(m)
    rows = []
    for n in entries:
        mm = base.derive(walker=dataclasses.replace(base.walker, tsb_entries=n))
        ds = testprog(mm, "8K", accesses, seed)
        big = testprog(mm, "4M", accesses, seed)
        rows.append(
            {
                "TSB entries": n,
                "heap pages (8K)": HEAP // 8192,
                "dTSB misses after first touch": steady_tsb_misses(ds),
                "dTLB misses": int(ds["walks"].sel(side="data").sum()),
                "dTSB misses after first touch, 4M heap": steady_tsb_misses(big),
            }
        )
    return pd.DataFrame(rows)


def tsb_holds(tsb, accesses: int) -> str:
    """The TSB sizes of :func:`tsb_sweep` at which the running program takes no dTSB miss beyond first
    touch, with its 8K heap and with its 4M heap (what ``trapstat-tsb`` compares), and the misses of the others."""
    both = tsb["dTSB misses after first touch"] + tsb["dTSB misses after first touch, 4M heap"]
    ok, bad = tsb[both == 0], tsb[both != 0]
    text = (
        f"TSB entries (per page size) of {', '.join(str(x) for x in ok['TSB entries'])}, that is a TSB that holds every heap page "
        f"({HEAP // 8192} 8K pages, {HEAP >> 22} 4M pages); the preset's 32768 is an assumed size, the document gives none"
    )
    if len(bad):
        misses = ", ".join(f"{r['TSB entries']} entries: {int(b)} misses" for (_, r), b in zip(bad.iterrows(), both[both != 0]))
        text += f"; {misses} (sweep of {accesses} accesses)"
    return text


def heap_sweep(sizes=(4 << 20, 16 << 20, 64 << 20, 256 << 20, 1 << 30), accesses=100_000, seed=0, m="ultrasparc-iii-cu"):
    """%tim in TLB handling of the test program (uniform random accesses, ``WORK`` cycles each) over
    heaps of several sizes, with 8K and with 4M pages."""
    import pandas as pd  # deferred: pandas is slow to import; only tables need it

    rows = []
    for size in sizes:
        r = {"heap MiB": size >> 20}
        for page in ("8K", "4M"):
            lay = Layout((Region(HEAP_START, size, page, "[ heap ]"),))
            rng = np.random.default_rng(seed)
            addrs = (HEAP_START + rng.integers(0, size, accesses)).astype(np.uint64)
            ds = simulate(m, addresses=addrs, layout=lay, work_cycles=WORK, seed=seed)
            r[f"%tim {page} heap"] = total_pct(_trapstat(ds))
        rows.append(r)
    return pd.DataFrame(rows)


THIRD = 0x20000000  # where the third mapping of three_sizes starts


def three_sizes(accesses=100_000, seed=0, m="ultrasparc-iii-cu"):
    """The test program's 128 MiB 4M heap plus a 64 MiB anonymous mapping read as often, the mapping
    in 4M pages (two sizes in the process: 8K and 4M) or in 64K pages (three sizes: 8K, 64K, 4M).
    The second 512-entry dTLB is programmed to the large size with the most pages."""
    import pandas as pd  # deferred: pandas is slow to import; only tables need it

    rows = []
    for label, third in (("8K + 4M", "4M"), ("8K + 64K + 4M", "64K")):
        lay = Layout((Region(0x22000, 3960 << 10, "8K", "[ heap ]"), Region(HEAP_START, HEAP, "4M", "[ heap ]"), Region(THIRD, 64 << 20, third, "[ anon ]")))
        rng = np.random.default_rng(seed)
        addrs = np.concatenate([HEAP_START + rng.integers(0, HEAP, accesses // 2), THIRD + rng.integers(0, 64 << 20, accesses - accesses // 2)])
        rng.shuffle(addrs)
        ds = simulate(m, addresses=addrs.astype(np.uint64), layout=lay, work_cycles=WORK, seed=seed)
        rows.append(
            {
                "page sizes": label,
                "T512_1 programmed for": json.loads(ds.attrs["programmed"]).get("dTLB T512_1", "none"),
                "dTLB misses": int(ds["walks"].sel(side="data").sum()),
                "%tim": total_pct(_trapstat(ds)),
            }
        )
    return pd.DataFrame(rows)


def designs(accesses=200_000, seed=0):
    """%tim in TLB handling with an 8K and a 4M heap on UltraSPARC II, III (750 MHz) and III Cu."""
    import pandas as pd  # deferred: pandas is slow to import; only tables need it

    rows = []
    for m in ("ultrasparc-ii", "ultrasparc-iii", "ultrasparc-iii-cu"):
        r = {"machine": m}
        for page in ("8K", "4M"):
            ds = testprog(m, page, accesses, seed)
            r[f"%tim {page} heap"] = total_pct(trapstat(ds))
            r[f"dTLB misses {page} heap"] = int(ds["walks"].sel(side="data").sum())
            if page == "4M":
                r["programmed"] = ds.attrs["programmed"]
        rows.append(r)
    return pd.DataFrame(rows)


def fragmentation(held=0.3, accesses=100_000, seed=1, ram="2G"):
    """MPSS 4M heap requests on memory 30% held by locked (pinned) small pages, scattered or caged,
    with and without the kernel's page relocation."""
    import pandas as pd  # deferred: pandas is slow to import; only tables need it

    base = PhysicalMemory(ram, frame="8K", max_block="4M")
    cases = [
        ("fresh after boot", base, False),
        ("locked pages scattered", base.fragment(held, "scattered", seed=seed), False),
        ("locked pages scattered, relocation on", base.fragment(held, "scattered", seed=seed), True),
        ("movable pages scattered, relocation on", base.fragment(held, "scattered", movable=1.0, seed=seed), True),
        ("kernel cage (locked pages caged)", base.fragment(held, "caged", seed=seed), False),
    ]
    rows = []
    for label, mem, comp in cases:
        ds = testprog("ultrasparc-iii-cu", "4M", accesses, seed, memory=mem, compaction=comp, policy="mpss")
        b = json.loads(ds.attrs["backing"])
        rows.append(
            {
                "memory": label,
                "4M pages granted": sum(b["huge_granted"].values()),
                "fell back to 8K": sum(b["huge_fallbacks"].values()),
                "pages relocated": int(ds["pages_migrated"]),
                "%tim": total_pct(trapstat(ds)),
            }
        )
    return pd.DataFrame(rows)


def text_pages(m="ultrasparc-iii-cu", text="64M", accesses=200_000, seed=0):
    """Instruction fetches over a large program text: calls to random functions, each running 16
    instructions in sequence; iTLB misses with 8K and 4M text pages."""
    import pandas as pd  # deferred: pandas is slow to import; only tables need it

    size = parse_size(text)
    rng = np.random.default_rng(seed)
    calls = accesses // 16
    entry = rng.integers(0, size // 64, calls) * 64
    addrs = (0x10000000 + (entry[:, None] + np.arange(16) * 4)).ravel().astype(np.uint64)
    kinds = np.ones(addrs.size, dtype=np.uint8)
    rows = []
    for page in ("8K", "4M"):
        lay = Layout((Region(0x10000000, size, page, "text", mode="r-x--"),))
        ds = simulate(m, addresses=addrs, kinds=kinds, layout=lay, work_cycles=WORK)
        rows.append({"text pages": page, "iTLB misses": int(ds["walks"].sel(side="instr").sum()), "%tim": total_pct(trapstat(ds))})
    return pd.DataFrame(rows)


def fragmentation_sweep(held=(0.005, 0.01, 0.02, 0.05, 0.1, 0.3, 0.6, 0.9), accesses=5_000, seed=1, ram="2G"):
    """:func:`fragmentation` over several shares of memory held: the 4M pages granted to the 128 MiB
    heap in each memory state (one row per share held and memory state)."""
    import pandas as pd  # deferred: pandas is slow to import; only tables need it

    return pd.concat([fragmentation(held=h, accesses=accesses, seed=seed, ram=ram).assign(held=h) for h in held], ignore_index=True)


def fragmentation_holds(sw, memory: str, granted) -> str:
    """The shares held of :func:`fragmentation_sweep` at which ``memory`` grants ``granted`` 4M pages
    (a number, or a function of the count), and what the others grant."""
    t = sw[sw.memory == memory]
    ok = t["4M pages granted"].map(granted if callable(granted) else (lambda g: g == granted))
    text = f"held {', '.join(f'{h:g}' for h in t[ok]['held'])} of memory"
    if (~ok).any():
        text += " (at " + ", ".join(f"{r.held:g}: {r._2} of {HEAP >> 22} granted" for r in t[~ok].itertuples()) + ")"
    return text


# ------------------------------------------------------------------- the notebook's findings, by section
# Each ``record_*`` function records the findings of one section of notebooks/03_solaris_mpss.ipynb in
# its ``Findings``; the notebook's appendix lists them. The document's sections are named as in
# 002_7166aff63bc805c7.txt.

AFTER_REL = 0.5  # the band drawn around the document's after figure: +-50% (a stated default)


def doc_totals(doc):
    """The document's trapstat totals (``mpss_trapstat``): one row per output (-t, -T) and run."""
    return doc[(doc.cpu == "ttl") & (doc.event == "all")]


def doc_pct(doc, run: str) -> float:
    """The document's share of time in TLB handling of ``run`` (before, after), from ``trapstat -T``."""
    tot = doc_totals(doc)
    return float(tot[(tot.output == "-T") & (tot.run == run)].pct_time.iloc[0])


def doc_user_pct(doc, run: str) -> float:
    """The document's user-mode share of time in TLB handling of ``run``: its ``trapstat -T`` user rows."""
    rows = doc[(doc.output == "-T") & (doc.run == run) & (doc["mode"] == "u") & (doc.event == "all")]
    return round(float(rows.pct_time.sum()), 6)


def doc_user_dtlb(doc):
    """The document's user dTLB misses of ``trapstat -T``, by page size (rows) and run (columns)."""
    return doc[(doc.output == "-T") & (doc["mode"] == "u") & (doc.event == "dtlb-miss")].pivot(index="page_size", columns="run", values="count")


def after_band(doc) -> tuple[float, float]:
    """The document's after figure +-50% (:data:`AFTER_REL`), computed by the rule :meth:`Findings.measured`
    applies to a band: drawn beside the model's share, which is not compared with it (trapstat-after)."""
    r = Findings._row("", doc_pct(doc, "after"), 0.0, None, AFTER_REL, None, "%", False)
    return (r["low"], r["high"])


def time_base(ba, doc) -> dict:
    """The 8K and 4M runs of :func:`trapstat_before_after` re-costed over ``WORK``: where the 8K share
    lies within 5 points of the document's, and where the 4M share lies within the document's after figure +-50%."""
    dbefore = doc_pct(doc, "before")
    wk = trapstat_work(ba, (dbefore - 5, dbefore + 5))
    wk_after = trapstat_work(ba, after_band(doc), which="after")
    return {"before": wk, "after": wk_after}


def plot_time_base(tb: dict, doc):
    """Both shares against ``WORK``, with the 8K band and the document's after figure +-50%."""
    import pandas as pd  # deferred: pandas is slow to import; only tables need it

    dbefore, band = doc_pct(doc, "before"), after_band(doc)
    cols = ["S.WORK", "%tim before", "%tim after"]
    both = pd.concat([tb["before"].table[cols], tb["after"].table[cols]]).drop_duplicates("S.WORK")
    return plotting.sweep(
        both,
        "S.WORK",
        ["%tim before", "%tim after"],
        band=[(dbefore - 5, dbefore + 5, "8K: document +-5 points"), band + ("4M: document +-50%",)],
        mark=WORK,
        mark_label=f"S.WORK = {WORK:g} (calibrated)",
        logx=True,
        logy=True,
        title="UltraSPARC III Cu: time in TLB handling vs S.WORK (re-costed)",
        xlabel="S.WORK: other cycles per access (cycles)",
        ylabel="%tim in TLB handling (%)",
    )


def plot_trapstat(ba, doc):
    """The document's trapstat -T beside the simulation's (UltraSPARC III Cu model): the share of time
    in TLB handling before and after, and the user dTLB misses by page size (the document's per second
    of a running program, the simulation's over the whole run)."""
    import matplotlib.pyplot as plt  # deferred: matplotlib is slow to import; only figures need it
    import pandas as pd  # deferred: pandas is slow to import; only tables need it

    _, (a, b) = plt.subplots(1, 2, figsize=(11, 3.8))
    pct = pd.DataFrame(
        [
            {"run": f"{run} ({page} heap)", "source": src, "%tim": v}
            for run, page in (("before", "8K"), ("after", "4M"))
            for src, v in (("document", doc_pct(doc, run)), ("simulation", total_pct(ba[run][1])))
        ]
    )
    plotting.bars(pct, x="run", y="%tim", hue="source", log=True, ax=a, annotate=True, title="time in TLB handling", ylabel="%tim (%, log scale)", xlabel="")
    T = doc[doc.output == "-T"]
    rows = []
    for run in ("before", "after"):
        for src, d in (("document", user_dtlb_misses(T[T.run == run])), ("simulation", user_dtlb_misses(ba[run][1]))):
            rows += [{"page size and run": f"{k} {run}", "source": src, "misses": max(v, 0.5)} for k, v in d.items() if k in ("8k", "4m")]
    plotting.bars(
        pd.DataFrame(rows),
        x="page size and run",
        y="misses",
        hue="source",
        log=True,
        ax=b,
        title="user dTLB misses (document: per second; simulation: whole run; 0 drawn as 0.5)",
        ylabel="misses (log scale)",
        xlabel="",
    )
    plt.tight_layout()
    return a, b


def record_trapstat(F, ba, doc, tb):
    """Section 1: trapstat before and after the 4M heap, where the calibrated time base holds, and the
    speed-up of removing the TLB time."""
    before, after = total_pct(ba["before"][1]), total_pct(ba["after"][1])
    dbefore, dafter = doc_pct(doc, "before"), doc_pct(doc, "after")
    # figures: the document's measured trapstat figures each finding covers (the 46.2% of -t and of -T before; the user dTLB
    # misses of the three outputs; in record_left_out, the kernel-mode and the user iTLB rows of the three outputs)
    F.calibrated(
        "trapstat-before",
        "8K heap: share of time in TLB misses",
        "Measuring MMU Overheads",
        f"{dbefore}%",
        f"{before:.1f}%",
        parameter="S.WORK",
        why="S.WORK (other cycles per access) is chosen so this run shows the document's figure",
        figures=2,
    )
    after_t = doc[(doc.output == "-T") & (doc.run == "after") & (doc.event == "dtlb-miss")]
    k_miss = int(after_t[(after_t["mode"] == "k") & (after_t.page_size == "8k")]["count"].sum())
    u_miss = int(doc_user_dtlb(doc).loc["8k", "after"])
    F.not_reproduced(
        "trapstat-after",
        "4M heap: TLB-miss time almost gone",
        "Using Larger MMU Page Sizes",
        f"{dafter:g}%",
        f"{after:.3f}% (shown, not compared)",
        figures=1,
        why=f"what makes the document's figure is not in the model: its {dafter:g}% is its kernel's dTLB misses ({k_miss} on 8k pages, "
        f"{doc_pct(doc, 'after') - doc_user_pct(doc, 'after'):g}%) and user misses on 8k pages ({u_miss}, {doc_user_pct(doc, 'after'):g}%) of "
        "mappings other than the heap, sampled in a program already running; the model's program has no kernel and no other mappings, and its "
        f"share after is the first touch of its 4M pages, which falls with the run's length ({ba['after'][0]['accesses'].sum().item():,} accesses "
        "here; a run ten times shorter gives ten times more), so no run length the document does not state makes it a test of that figure",
    )
    sim_b, sim_a = user_dtlb_misses(ba["before"][1]), user_dtlb_misses(ba["after"][1])
    T = doc[doc.output == "-T"]
    doc_b, doc_a = user_dtlb_misses(T[T.run == "before"]), user_dtlb_misses(T[T.run == "after"])
    pages_4m = heap_kbytes(ba["after"][0]).get("4M", 0) >> 12
    F.arithmetic(
        "trapstat-8k",
        "user dTLB misses: all on 8K pages before; after, over 100 times fewer",
        "trapstat -T, before and after",
        f"before {doc_b['8k']} on 8k; after {doc_a['8k']} on 8k, {doc_a['4m']} on 4m",
        f"before {sim_b['8k']} on 8k; after {sim_a['8k']} on 8k, {sim_a['4m']} on 4m",
        sim_b["8k"] == sum(sim_b.values()) and sim_b["8k"] > 100 * max(sum(sim_a.values()), 1),
        figures=3,
        why="fixed by the set-up, not evidence: before, the model's program touches nothing but its heap, on 8K pages, so every "
        f"miss is on 8k; after, the {pages_4m} 4M pages it touches fit the TLB that holds 4M entries, so the misses left are the first touch of each "
        f"page ({sim_a['4m']}), whatever the run's length, while the 8K run's misses grow with it: the ratio is the run's length "
        "(a run 100 times shorter gives under 100 times fewer). Where the few left fall differs: the document's "
        f"{doc_a['8k']} stay on 8k and {doc_a['4m']} on 4m (a real process has other mappings on 8K pages and counts per "
        f"second, after the first touches), the model's {sim_a['8k']} on 8k and {sim_a['4m']} on 4m",
    )
    lo, hi = after_band(doc)
    F.holds_for("trapstat-before", tb["before"].text(f"8K share within {dbefore:g}% +-5 points"))
    F.holds_for("trapstat-after", tb["after"].text(f"4M share within {dafter:g}% +-50%, {lo:g}..{hi:g}%; the notebook's S.WORK is {WORK:g}"))
    sp = speedup(ba["before"][0], ba["after"][0])
    F.arithmetic(
        "twice-as-fast",
        "eliminating most TLB misses: 'almost twice as fast'",
        "Measuring MMU Overheads",
        f"almost 2 (1 / (1 - {dbefore / 100:.3f}) = {1 / (1 - dbefore / 100):.2f})",
        f"{sp:.2f} times (modelled time, 8K heap over 4M heap)",
        1.5 <= sp <= 2.0,
        why="the 8K run's share of time in TLB handling is calibrated (S.WORK) to the document's "
        "46.2%, so removing it speeds the model up by about 1 / (1 - share): arithmetic",
    )


def heap_kbytes(ds) -> dict:
    """KB of the simulated process's heap mapped with each page size (``8K``, ``4M``)."""
    out = {}
    for r in json.loads(ds.attrs["layout"]):
        key = format_size(r["page_size"])
        out[key] = out.get(key, 0) + r["length"] // 1024
    return out


def plot_pmap(pm, ds):
    """The heap's KB by page size: the document's pmap -sx listing beside the simulated process."""
    import matplotlib.pyplot as plt  # deferred: matplotlib is slow to import; only figures need it
    import pandas as pd  # deferred: pandas is slow to import; only tables need it

    heap = pm[pm.mapped_file == "[ heap ]"]
    rows = [{"page size": str(r.pgsz), "source": "document", "KB": int(r.kbytes)} for r in heap.itertuples()]
    rows += [{"page size": k, "source": "simulation", "KB": v} for k, v in heap_kbytes(ds).items()]
    ax = plotting.bars(
        pd.DataFrame(rows),
        x="page size",
        y="KB",
        hue="source",
        log=True,
        annotate=True,
        title="the heap in pmap -sx: KB mapped with each page size",
        ylabel="KB (log scale)",
    )
    plt.tight_layout()
    return ax


def record_pmap(F, pm, ba):
    """Section 2: the heap of the pmap -sx listing."""
    heap_doc = pm[(pm.mapped_file == "[ heap ]") & (pm.pgsz == "4M")]["kbytes"].iloc[0]
    lay = json.loads(ba["after"][0].attrs["layout"])
    heap_sim = sum(r["length"] for r in lay if r["page_size"] == 4 << 20) // 1024
    F.arithmetic(
        "pmap-heap",
        "heap mapped with 4M pages (KB)",
        "pmap -sx listing",
        heap_doc,
        heap_sim,
        heap_doc == heap_sim,
        why="the study lays its heap out with the size this listing shows (S.HEAP): the value against its own input",
    )


def plot_designs(dz):
    """%tim in TLB handling with an 8K and a 4M heap on each UltraSPARC model."""
    import matplotlib.pyplot as plt  # deferred: matplotlib is slow to import; only figures need it

    t = dz.melt(id_vars="machine", value_vars=["%tim 8K heap", "%tim 4M heap"], var_name="heap", value_name="%tim")
    t["heap"] = t["heap"].str.replace("%tim ", "")
    ax = plotting.bars(
        t,
        x="machine",
        y="%tim",
        hue="heap",
        log=True,
        annotate=True,
        title="time in TLB handling, 8K and 4M heap (UltraSPARC models)",
        ylabel="%tim (%, log scale)",
        xlabel="",
    )
    plt.tight_layout()
    return ax


def record_designs(F, dz):
    """Section 3: which UltraSPARC gains."""
    d = dz.set_index("machine")
    F.arithmetic(
        "us2",
        "UltraSPARC II: 4M pages help (64 entries, all sizes)",
        "Things to watch out for",
        "usable",
        f"{d.loc['ultrasparc-ii', '%tim 8K heap']:.1f}% -> {d.loc['ultrasparc-ii', '%tim 4M heap']:.1f}%",
        d.loc["ultrasparc-ii", "%tim 4M heap"] < d.loc["ultrasparc-ii", "%tim 8K heap"],
        why="fixed by the set-up: the preset's 64 entries take every page size (this document's design), so a heap of 512 times fewer pages "
        "misses less; not evidence",
    )
    red = {mm: 1 - d.loc[mm, "%tim 4M heap"] / d.loc[mm, "%tim 8K heap"] for mm in d.index}
    F.check(
        "us3",
        "UltraSPARC III 750 MHz: 4M pages typically not beneficial",
        "Things to watch out for",
        "typically not beneficial",
        f"TLB time cut by {100 * red['ultrasparc-iii']:.0f}% (II: {100 * red['ultrasparc-ii']:.0f}%, III Cu: {100 * red['ultrasparc-iii-cu']:.0f}%)",
        red["ultrasparc-iii"] < 0.1,
        kind="direction",
        why="not beneficial is read as a cut in TLB time under a tenth; the model's III gains less than II and III Cu "
        f"({'yes' if red['ultrasparc-iii'] < min(red['ultrasparc-ii'], red['ultrasparc-iii-cu']) else 'no'}), but its 16-entry "
        "large-page TLB still cuts the TLB time of this heap, a gain the document says 750 MHz systems typically do not see",
    )
    F.arithmetic(
        "us3cu",
        "UltraSPARC III Cu: the second T512 is programmed for 4M",
        "Things to watch out for",
        "8 or more large pages",
        d.loc["ultrasparc-iii-cu", "programmed"],
        "4M" in d.loc["ultrasparc-iii-cu", "programmed"],
        why="pagesim programs T512_1 by this document's rule (8 or more large pages), so the rule comes back",
    )


#: the four fragmentation findings show the allocator's rules, written from this section of the document, on one scenario
FRAG_WHY = (
    "the allocator's rules (fall back when no 4M block is free; locked pages never move; relocation moves the others; the cage keeps "
    "locked pages together), written from this section of the document, shown on one scenario: they could not have come out "
    "otherwise, so this illustrates the document's account and is not evidence for it"
)
GRANTED = ("4M pages granted", "granted")
#: (id, finding, the document's words, memory state, 4M pages the rule grants, the column shown and its words)
FRAG_CASES = (
    (
        "frag-fallback",
        "locked small pages: the 4M request falls back to 8K, the program still runs",
        "backed by smaller page sizes",
        "locked pages scattered",
        0,
        ("fell back to 8K", "of 32 fell back"),
    ),
    ("frag-relocation", "relocation cannot move locked pages", "works for all but locked pages", "locked pages scattered, relocation on", 0, GRANTED),
    (
        "frag-movable",
        "relocation assembles large pages from movable ones",
        "will attempt to relocate pages",
        "movable pages scattered, relocation on",
        32,
        GRANTED,
    ),
    ("frag-cage", "the kernel cage keeps large pages available", "vastly improve this situation", "kernel cage (locked pages caged)", 32, GRANTED),
)


def plot_fragmentation(fr, fs):
    """Left: the 4M pages granted and the requests that fell back to 8K in each memory state (30% of
    memory held). Right: the 4M pages granted against the share of memory held."""
    import matplotlib.pyplot as plt  # deferred: matplotlib is slow to import; only figures need it

    _, (a, b) = plt.subplots(1, 2, figsize=(12, 4.2))
    t = fr.melt(id_vars="memory", value_vars=["4M pages granted", "fell back to 8K"], var_name="request", value_name="pages")
    plotting.bars(t, x="pages", y="memory", hue="request", ax=a, title="the 128 MiB heap's 32 requests for 4M pages", xlabel="4M pages (of 32)", ylabel="")
    sw = fs.pivot(index="held", columns="memory", values="4M pages granted")
    styles = ["-", "--", ":", "-.", (0, (1, 1))]
    for i, col in enumerate(sw.columns):  # the lines overlap: each its own dash and marker size
        b.plot(sw.index, sw[col], marker="o", ls=styles[i % len(styles)], ms=9 - 1.5 * i, mfc="none", label=col)
    b.set_xscale("log")
    b.axvline(0.3, color="0.4", ls="--", lw=0.8)
    b.set_title("4M pages granted vs memory held (dashed: 0.3, as at left)")
    b.set_xlabel("share of memory held (log scale)")
    b.set_ylabel("4M pages granted (of 32)")
    b.legend(fontsize=7)
    plt.tight_layout()
    return a, b


def record_fragmentation(F, fr, fs):
    """Section 4: fragmentation and the kernel cage, and the shares of memory held where each finding holds."""
    f = fr.set_index("memory")
    for fid, finding, words, memory, want, (column, said) in FRAG_CASES:
        F.arithmetic(fid, finding, "Things to watch out for", words, f"{f.loc[memory, column]} {said}", f.loc[memory, GRANTED[0]] == want, why=FRAG_WHY)
        F.holds_for(fid, fragmentation_holds(fs, memory, want) + "; section 4 holds 0.3")


def plot_text(tx, ts):
    """Left: iTLB misses of the 64 MiB text with 8K and 4M pages. Right: the misses against the text size."""
    import matplotlib.pyplot as plt  # deferred: matplotlib is slow to import; only figures need it

    _, (a, b) = plt.subplots(1, 2, figsize=(12, 3.8), gridspec_kw={"width_ratios": [1, 2.2]})
    plotting.bars(tx, x="text pages", y="iTLB misses", log=True, annotate=True, ax=a, title="64 MiB text", ylabel="iTLB misses (log scale)")
    col = "8K misses / 10 (the finding: 4M below it)"
    tsp = ts.table.assign(**{col: ts.table["iTLB misses 8K"] / 10})
    plotting.sweep(
        tsp,
        "text",
        ["iTLB misses 8K", col, "iTLB misses 4M"],
        mark=64,
        mark_label="this notebook's text (64 MiB)",
        intervals=ts.intervals,
        logx=True,
        logy=True,
        ax=b,
        title="iTLB misses vs text size, 8K and 4M text pages (UltraSPARC III Cu model)",
        xlabel="program text (MiB)",
        ylabel="iTLB misses (whole run)",
    )
    plt.tight_layout()
    return a, b


def record_text(F, tx, ts):
    """Section 5: large pages for program text, and the text sizes where the finding holds."""
    t = tx.set_index("text pages")
    F.arithmetic(
        "text",
        "large text pages cut iTLB misses",
        "Large Pages for Binaries",
        "reduce iTLB misses for text",
        f"{t.loc['8K', 'iTLB misses']} -> {t.loc['4M', 'iTLB misses']}",
        t.loc["4M", "iTLB misses"] < t.loc["8K", "iTLB misses"] / 10,
        why="fixed by a choice: the modelled text is 16 x 4 MiB, which the 16-entry 4M iTLB holds exactly, so it misses only at first touch; a "
        "larger text would miss again (the text size sets the result, below): an illustration, not evidence",
    )
    F.holds_for("text", ts.text("4M text pages cut iTLB misses more than tenfold"))


def plot_tsb(tsb):
    """dTSB misses after first touch against the TSB's entries, with the 8K and the 4M heap."""
    import matplotlib.pyplot as plt  # deferred: matplotlib is slow to import; only figures need it

    col, big = "dTSB misses after first touch", "dTSB misses after first touch, 4M heap"
    fig, ax = plt.subplots(figsize=(7.5, 3.8))
    for c, lab in ((col, "8K heap (16384 pages)"), (big, "4M heap (32 pages)")):
        ax.plot(tsb["TSB entries"], tsb[c].clip(lower=0.5), "o-", ms=4, label=lab)
    ax.axvline(HEAP // 8192, color="0.4", ls="--", lw=0.8, label="8K heap pages")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_title("UltraSPARC III Cu: dTSB misses after first touch vs TSB size (a 0 drawn as 0.5)")
    ax.set_xlabel("TSB entries per page size (log scale)")
    ax.set_ylabel("dTSB misses (log scale)")
    ax.legend(fontsize=8)
    return ax


def record_tsb(F, tsb, ba, doc, accesses: int):
    """Section 6: the running program takes no dTSB miss, and a TSB sized to the process."""
    tsb_doc = doc[(doc["mode"] == "u") & (doc.event == "dtsb-miss")]["count"]
    tsb_sim = steady_tsb_misses(ba["before"][0]) + steady_tsb_misses(ba["after"][0])
    F.arithmetic(
        "trapstat-tsb",
        "user dTSB misses of the running program, before and after: none",
        "trapstat -t and -T",
        int(tsb_doc.sum()),
        tsb_sim,
        tsb_sim == int(tsb_doc.sum()),
        why="fixed by an input: the preset's TSB (an assumed size, the document gives none) holds every heap page, so after each page's first "
        "touch (trapstat samples a program already running) no dTSB miss can occur; the sweep of dynamic-tsb gives the TSB sizes over "
        "which that holds",
    )
    F.holds_for("trapstat-tsb", tsb_holds(tsb, accesses))
    small, big = tsb.iloc[0], tsb.iloc[-1]
    col = "dTSB misses after first touch"
    F.arithmetic(
        "dynamic-tsb",
        "a TSB sized to the process (Solaris 10's dynamic TSB) cuts dTSB misses considerably",
        "Large Pages for Binaries",
        "'reducing the dTSB miss rate considerably'",
        f"{small[col]} with {small['TSB entries']} entries -> {big[col]} with {big['TSB entries']}",
        small[col] > 10 * max(big[col], 1),
        why="fixed by the set-up: the page gives no TSB size, for Solaris 9 or for the dynamic TSB; in the sweep "
        "the misses after first touch fall as the TSB grows and vanish once it holds "
        "every heap page, which is what a TSB that grows with the process provides by definition: an illustration, not evidence",
    )


def plot_heaps(hs):
    """%tim in TLB handling against the heap size, 8K and 4M heap, with the 8K reach of the III Cu."""
    import matplotlib.pyplot as plt  # deferred: matplotlib is slow to import; only figures need it

    ax = plotting.sweep(
        hs,
        "heap MiB",
        ["%tim 8K heap", "%tim 4M heap"],
        mark=machine("ultrasparc-iii-cu").reach("8K") >> 20,
        mark_label="8K TLB reach (III Cu)",
        band=[(10, 10, "10% of the time")],
        logx=True,
        logy=True,
        title="UltraSPARC III Cu: time in TLB handling vs heap size",
        xlabel="heap (MiB)",
        ylabel="%tim in TLB handling (%)",
    )
    plt.tight_layout()
    return ax


def record_heaps(F, hs):
    """Section 7: which working sets benefit, and the TLB's 'few hundred translations'."""
    large = hs[hs["heap MiB"] >= 256]
    starts = hs[hs["%tim 8K heap"] > 10]["heap MiB"].min()
    reach8 = machine("ultrasparc-iii-cu").reach("8K") >> 20
    F.not_reproduced(
        "working-set",
        "applications with working sets above a few hundred MB benefit from MPSS",
        "MPSS and Application Performance",
        "> a few hundred MB",
        f"at {', '.join(str(x) for x in large['heap MiB'])} MiB the 4M heap cuts TLB time "
        f"from {large['%tim 8K heap'].min():.0f}-{large['%tim 8K heap'].max():.0f}% "
        f"to under {large['%tim 4M heap'].max():.1f}%; the gain is above 10% from {starts} MiB",
        why="the document's 'most likely to benefit ... typically have working sets greater than a few hundred megabytes' says which "
        "applications typically gain, not where a gain starts (its own example's heap is 128 MB, below it), so there is no onset to "
        "compare; the sign above any size (a heap of fewer, larger pages misses less) is the model's set-up. The model's gain starts "
        f"as soon as the heap outgrows the 8K TLB reach ({reach8} MiB on III Cu: with only 8K pages the second 512-entry TLB is "
        f"unprogrammed, and the preset leaves it unused, an assumption), above 10% from {starts} MiB; where it starts on a "
        "real machine depends on how the TSB and tables are cached, which pagesim does not time",
    )
    data_entries = {mm: sum(s.entries for s in machine(mm).structures if s.serves("data")) for mm in ("ultrasparc-ii", "ultrasparc-iii", "ultrasparc-iii-cu")}
    F.not_reproduced(
        "tlb-few-hundred",
        "the TLB holds 'a few hundred translations at a time'",
        "MPSS and Application Performance",
        "a few hundred",
        "data TLB entries of the presets: " + ", ".join(f"{mm} {e}" for mm, e in data_entries.items()),
        why="an order of magnitude, not a figure a band could be set around; the presets' entry counts come from the processor manuals and Linux "
        "(pagesim machines --sources) and are shown for comparison",
    )


def plot_three(three):
    """dTLB misses with two page sizes (8K + 4M) and with three (8K + 64K + 4M) in one process."""
    import matplotlib.pyplot as plt  # deferred: matplotlib is slow to import; only figures need it

    t = three.assign(**{"page sizes": three["page sizes"] + " (T512_1: " + three["T512_1 programmed for"] + ")"})
    ax = plotting.bars(
        t,
        x="page sizes",
        y="dTLB misses",
        log=True,
        annotate=True,
        title="UltraSPARC III Cu: dTLB misses with two and with three page sizes",
        ylabel="dTLB misses (log scale)",
        xlabel="",
    )
    plt.tight_layout()
    return ax


def record_three(F, three):
    """Section 8: only two page sizes at once on the UltraSPARC III Cu, and the page sizes of the presets."""
    t2, t3 = three.set_index("page sizes").loc["8K + 4M"], three.set_index("page sizes").loc["8K + 64K + 4M"]
    F.arithmetic(
        "us3cu-two-sizes",
        "UltraSPARC III Cu: use only two page sizes at once (8K and one other)",
        "Things to watch out for",
        "'only two pages sizes should be used concurrently'",
        f"8K + 4M: {t2['dTLB misses']} dTLB misses ({t2['%tim']:.1f}%); with 64K pages added, T512_1 is programmed for {t3['T512_1 programmed for']}: "
        f"{t3['dTLB misses']} misses ({t3['%tim']:.1f}%)",
        t3["dTLB misses"] > 10 * max(t2["dTLB misses"], 1),
        why="fixed by the set-up: pagesim programs the second 512-entry TLB by this document's rule, one large size per process, the one "
        "with the most pages (here 64K); the 4M heap is left to the 16-entry T16 and misses: the rule comes back, not evidence",
    )
    sizes = {mm: "/".join(format_size(p) for p in machine(mm).page_sizes) for mm in ("ultrasparc-ii", "ultrasparc-iii", "ultrasparc-iii-cu")}
    F.arithmetic(
        "us-page-sizes",
        "UltraSPARC supports four page sizes: 8K, 64K, 512K and 4M",
        "Using Larger MMU Page Sizes",
        "8K/64K/512K/4M",
        "; ".join(f"{mm}: {v}" for mm, v in sizes.items()),
        all(v == "8K/64K/512K/4M" for v in sizes.values()),
        why="the presets' page sizes: the model's configuration, shown as a consistency check, not a simulated result",
    )


def record_left_out(F, doc, pm):
    """Section 9: what the document shows that the model leaves out (kernel-mode and iTLB rows of
    trapstat, the default page sizes, the kernel heap, the program's other mappings)."""
    kern = doc[(doc["mode"] == "k") & (doc.event == "dtlb-miss")]
    kern = kern[kern["count"] > 0]
    F.not_reproduced(
        "trapstat-kernel",
        "kernel-mode rows: the kernel's own TLB and TSB misses",
        "trapstat -t and -T",
        f"kernel dTLB misses {', '.join(str(x) for x in kern['count'])} per second, 0.1% of the time",
        "no kernel-mode rows",
        why="pagesim simulates the user program's accesses only; the kernel's own translations are outside the model",
        figures=3,
    )
    itlb = doc[(doc["mode"] == "u") & (doc.event == "itlb-miss")]
    itlb = itlb[itlb["count"] > 0]
    F.not_reproduced(
        "trapstat-itlb",
        "user iTLB misses of the test program",
        "trapstat -t and -T",
        f"{', '.join(str(x) for x in itlb['count'])} per second (0.0% of the time)",
        "0: the simulated program issues data accesses only",
        why="the document does not describe ./testprog's code, so the simulation fetches "
        "no instructions; section 5 simulates instruction fetches over a large text",
        figures=3,
    )
    tlb = D.load("mpss_tlb_designs")
    defaults = tlb[tlb.finding == "defaults"]
    F.not_reproduced(
        "defaults",
        "default page sizes per platform",
        "Default page sizes, and tunables on different platforms",
        "; ".join(f"{r.processor}: {r.statement}" for r in defaults.itertuples()),
        "not simulated",
        why="Solaris's default page-size policy (use_text_pgsz4m and the other /etc/system tunables) is an OS setting: pagesim has no default policy, "
        "each study states the page size of each mapping",
    )
    mf = D.load("mpss_findings")
    kh = [*mf[mf.finding == "kernel-heap"].statement, *tlb[tlb.finding == "kernel-heap"].statement]
    F.not_reproduced(
        "kernel-heap",
        "the kernel heap in large pages (Solaris 10 Update 2)",
        "Support for Large Pages within the Kernel's Address Space",
        " / ".join(kh),
        "not simulated",
        why="pagesim simulates user address spaces only: the model has no kernel heap (segkmem) and no preset for the UltraSPARC IIi",
    )
    others = pm[pm.mapped_file != "[ heap ]"]
    F.not_reproduced(
        "pmap-other",
        "the test program's other mappings: text, libraries, stack",
        "pmap -sx listing",
        f"{len(others)} mappings, {others.kbytes.sum()} KB",
        "the simulated process maps its heap only",
        why="the document does not say what ./testprog does with its text, libraries and stack; the simulated program reads its heap only",
    )


def text_point(text_mib: int, quick: bool = False, seed: int = 0) -> dict:
    n = (60_000 if quick else 300_000) // 2  # the notebook's accesses for section 5
    t = text_pages(text=f"{int(text_mib)}M", accesses=n, seed=seed).set_index("text pages")
    m8, m4 = int(t.loc["8K", "iTLB misses"]), int(t.loc["4M", "iTLB misses"])
    return {
        "iTLB misses 8K": m8,
        "iTLB misses 4M": m4,
        # the finding: 4M misses < 8K misses / 10, i.e. this ratio above 10
        "8K / 4M misses": m8 / m4 if m4 else math.inf,
    }


def text_sizes(quick: bool = False, seed: int = 0, values=None) -> Holds:
    """iTLB misses with 8K and 4M text pages over the text size (MiB, whole 4 MiB pages), and the
    sizes at which 4M pages still cut them more than tenfold."""
    if values is None:
        values = [8, 16, 32, 64, 128, 256] if quick else [8, 16, 32, 48, 64, 80, 96, 128, 192, 256]
    return holding_range(
        lambda s: text_point(int(s), quick, seed),
        values,
        (np.nextafter(10.0, math.inf), math.inf),
        key="8K / 4M misses",
        parameter="text",
        unit=" MiB",
        quantum=4,
    )


def trapstat_work(runs: dict, band, values=None, which: str = "before") -> Holds:
    """%tim in TLB handling (trapstat's total) of the before and after runs of
    ``mpss.trapstat_before_after``, re-costed over work cycles per access (``S.WORK``); where the
    ``which`` run's share lies in ``band``."""
    base = {}
    for run, (ds, t) in runs.items():
        steady = float(ds["cycles"].sel(component=["work", "tlb_hit_latency", "walk", "slb_miss"]).sum())
        base[run] = (total_pct(t) / 100 * steady, steady, int(ds["accesses"].sum()), float(ds.attrs["work_cycles_per_access"]))
    if values is None:
        values = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000]

    def one(w):
        out = {}
        for run, (trap, steady, n, w0) in base.items():
            out[f"%tim {run}"] = 100 * trap / recost(steady, w0, n, w)
        return out

    return holding_range(one, values, band, key=f"%tim {which}", parameter="S.WORK", resolution=0.5, fmt="{:.4g}", max_evals=200)
