"""Your machine's translation, measured: a pointer-chase latency probe over growing working sets,
with 4 KiB pages and with transparent huge pages (``MADV_HUGEPAGE``).

A probe writes a random cyclic permutation of elements into the first working-set bytes of an
anonymous mapping (aligned to 2 MiB, as pagesim.host.linux does), and times a numba loop in which every
load's address is the value the previous load returned: nothing overlaps, so the time per load is
the latency of one access, translation included. One mapping per page kind serves the working sets
in increasing order, each size's cycle written over the smaller ones' (it reads only its own
elements): the pages are zeroed and faulted once, not once per size, which took half the probe's
time when every size had a fresh mapping. Two element layouts:

  page stride   one element per 4 KiB page, at a random 64-byte line inside the page: every load
                touches a new page, while the data-cache footprint is only size/64 (one line per
                page). Run with 4 KiB pages and with THP, the two curves share the same data
                cache behaviour and differ in translation only: where the 4 KiB curve rises and
                the THP curve does not, a 4 KiB TLB level has run out.
  line stride   one element per 64-byte line (every line of the region): the classic latency
                curve, whose knees are the data caches (run with THP where available, so the TLB
                stays out of the way up to the THP reach).

For every size the 4 KiB and THP mappings hold the same cycle; up to 256 MiB each they exist at once
and are timed in alternation, so both see the same interference (larger ones are measured one after
the other: every larger size with THP, then every one with 4 KiB pages, to keep the peak memory near
the largest working set). A chase follows a fixed path, the first loads of the cycle from its first
element (all of a small cycle, twice or more; 2**17 elements of a large one): one untimed warm-up
follows the whole path, then ``repeats`` timed runs. Runs of a mapping timed alone (the larger
sizes, the line stride) follow half of the path each, its first half and its second in turn: the
warm-up's loads again, in the same order, at half the time of whole-path runs; runs in alternation
follow the whole path, so the other mapping disturbs each run once, as it always did. Each run is
timed with the thread's CPU clock, so time the scheduler gives to other processes is not counted.
Medians and quartiles are reported. The minor faults taken while the cycles are written
(getrusage of this thread) are reported beside pagesim's simulation of the same touches, as
``pagesim host`` does: for each size, the faults its mapping took up to and including that size's
cycle, which are those of populating the size's pages (every page below a size is touched by its
cycle and by every smaller one's).

What a probe cannot tell: it measures latency, not TLB misses (no hardware counters are read, and
in a virtual machine there usually are none); a knee is where latency rises, which a TLB level, a
data cache, a page-walk cache or the host's paging can each cause; in a virtual machine every guest
TLB miss walks the guest's and the host's page tables (two-dimensional walk), and a guest huge page
gives huge TLB entries only where the host also backs it with a huge page; timings on a shared
machine are noisy, so only medians and directions are reported, never a check on absolute time.
"""

from __future__ import annotations

import mmap
import os
import platform
import time
from dataclasses import dataclass, field

import numpy as np

from .._kernels.chase import chase
from ..core.check import check_int, check_seed
from ..core.progress import bar as progress_bar
from ..core.units import format_size, parse_size
from ..engine.simulate import simulate
from ..model.layout import Layout
from ..model.machines import machine
from .linux import HUGE, aligned_mapping, anon_huge_kib, close_mapping, thp_mode, touch_faults, whole_huge, why_not

PAGE = 4096
LINE = 64
MIN_SIZE = 16 << 10
MAX_SIZE = 4 << 30
RISE = 0.15  # a knee: median latency rises by more than 15% from one size to the next


@dataclass(frozen=True)
class Knee:
    """A transition of one latency curve: flat up to ``start`` bytes, higher from ``end`` on."""

    curve: str
    start: int
    end: int
    before_ns: float
    after_ns: float
    meaning: str = ""

    @property
    def rise(self) -> float:
        return self.after_ns / self.before_ns

    def __str__(self):
        return f"{self.curve}: {format_size(self.start)} -> {format_size(self.end)} ({self.before_ns:.1f} -> {self.after_ns:.1f} ns, x{self.rise:.2f})" + (
            f": {self.meaning}" if self.meaning else ""
        )


@dataclass
class ProbeResult:
    runs: object  # DataFrame: size, page, stride, rep, ns
    medians: object  # DataFrame: size, page, stride, median_ns, q1_ns, q3_ns, loads (per timed run)
    faults: object  # DataFrame: size, page, stride, real_faults, simulated_faults, huge_pages, huge_pages_expected
    knees: list = field(default_factory=list)
    thp: str | None = None  # None: THP measured; else why not
    cpu: str = ""
    seconds: float = 0.0
    presets: list = field(default_factory=list)
    dropped: list = field(default_factory=list)
    repeats: int = 0
    one_at_a_time: list = field(default_factory=list)  # sizes whose 4K and THP mappings were measured one after the other

    def curve(self, page: str, stride: str = "page"):
        """Median ns per load by size for one curve (a pandas Series; empty if not measured)."""
        m = self.medians
        c = m[(m["page"] == page) & (m["stride"] == stride)]
        return c.set_index("size")["median_ns"]


# ------------------------------------------------------------------------------------ sizes
def probe_sizes(min_size="16K", max_size="1G", per_octave: int = 2) -> list[int]:
    """Working sets from ``min_size`` to ``max_size``, ``per_octave`` per doubling, whole 4 KiB pages."""
    lo, hi = parse_size(min_size, "min_size"), parse_size(max_size, "max_size")
    if not MIN_SIZE <= lo <= MAX_SIZE:
        raise ValueError(f"min_size={format_size(lo)} is out of range: allowed {format_size(MIN_SIZE)}..{format_size(MAX_SIZE)}")
    if not lo <= hi <= MAX_SIZE:
        raise ValueError(f"max_size={format_size(hi)} is out of range: allowed {format_size(lo)} (min_size)..{format_size(MAX_SIZE)}")
    per_octave = check_int("per_octave", per_octave, 1, 8)
    out, k = [], 0
    while True:
        s = int(round(lo * 2 ** (k / per_octave) / PAGE)) * PAGE
        if s > hi:
            break
        if not out or s > out[-1]:
            out.append(s)
        k += 1
    if out[-1] != hi // PAGE * PAGE and hi // PAGE * PAGE > out[-1]:
        out.append(hi // PAGE * PAGE)
    return out


def memory_limit() -> int:
    """Bytes a probe may map at once: half of what this machine (or its cgroup) has available."""
    avail = None
    try:
        for ln in open("/proc/meminfo"):
            if ln.startswith("MemAvailable:"):
                avail = int(ln.split()[1]) * 1024
    except OSError:
        pass
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            txt = open(path).read().strip()
        except OSError:
            continue
        if txt.isdigit() and int(txt) < (1 << 60):
            avail = min(avail or int(txt), int(txt))
    return (avail or (2 << 30)) // 2


HYPERVISOR_VENDORS = ("kvm", "qemu", "vmware", "virtualbox", "xen", "microsoft corporation", "amazon ec2", "google compute", "bochs", "parallels")


def hypervisor(cpuinfo: str | None = None, root: str = "/sys") -> str | None:
    """What says this machine is a virtual machine, or None: the ``hypervisor`` CPU flag (set by
    every x86 hypervisor for its guests), ``/sys/hypervisor/type`` (Xen), or the firmware's vendor
    naming one (DMI). ``cpuinfo``/``root``: the text and the sysfs root to read (tests)."""
    if cpuinfo is None:
        try:
            cpuinfo = open("/proc/cpuinfo").read()
        except OSError:
            cpuinfo = ""
    flags = next((ln.split(":", 1)[1].split() for ln in cpuinfo.splitlines() if ln.startswith(("flags", "Features"))), [])
    found = []
    if "hypervisor" in flags:
        found.append("the 'hypervisor' CPU flag is set")
    try:
        found.append(f"/sys/hypervisor/type says {open(os.path.join(root, 'hypervisor', 'type')).read().strip()}")
    except OSError:
        pass
    for f in ("sys_vendor", "product_name"):
        try:
            v = open(os.path.join(root, "class", "dmi", "id", f)).read().strip()
        except OSError:
            continue
        if any(
            k in v.lower()
            for k in ("kvm", "qemu", "vmware", "virtualbox", "xen", "microsoft corporation", "amazon ec2", "google compute", "bochs", "parallels")
        ):
            found.append(f"the firmware's {f} is {v!r}")
    return "; ".join(found) or None


def cpu_description() -> str:
    model = platform.processor() or platform.machine()
    try:
        for ln in open("/proc/cpuinfo").read().splitlines():
            if ln.startswith("model name"):
                model = ln.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    why = hypervisor()
    return model + (f" (virtual machine: {why})" if why else "")


def closest_presets(cpu: str | None = None) -> list[str]:
    """The presets nearest this machine's processor family (by vendor and architecture)."""
    cpu = (cpu or cpu_description()).lower()
    arch = platform.machine().lower()
    if "amd" in cpu or "epyc" in cpu or "ryzen" in cpu:
        return ["zen4", "opteron-k8"]
    if arch in ("aarch64", "arm64"):
        return ["neoverse-n1", "apple-m1"]
    if arch.startswith("ppc"):
        return ["power8", "power6"]
    if arch.startswith("sparc"):
        return ["ultrasparc-t1", "ultrasparc-iii"]
    return ["golden-cove", "skylake"]


def preset_reach(names) -> object:
    """Data-side reach of each TLB level of ``names`` for their 4K and 2M pages (a DataFrame)."""
    import pandas as pd  # deferred: pandas is slow to import; only tables need it

    rows = []
    for n in names:
        m = machine(n)
        for p in (PAGE, HUGE):
            if p not in m.page_sizes:
                continue
            by_level: dict[int, list] = {}
            for s in m.chain("data", p):
                by_level.setdefault(s.level, []).append(s)
            for lvl, ss in sorted(by_level.items()):
                rows.append(
                    {
                        "preset": m.name,
                        "page": format_size(p),
                        "level": lvl,
                        "structures": " + ".join(f"{s.name} ({s.entries})" for s in ss),
                        "entries": sum(s.entries for s in ss),
                        "reach": sum(s.entries * s.entry_size(p) for s in ss),
                    }
                )
    return pd.DataFrame(rows)


# ------------------------------------------------------------------------------------ one mapping
class _Region:
    """An anonymous mapping of at least ``size`` bytes whose usable part starts 2 MiB-aligned and
    spans whole 2 MiB blocks, advised MADV_HUGEPAGE (thp) or MADV_NOHUGEPAGE. Cycles are written
    into its first bytes, for sizes in increasing order (``write``)."""

    def __init__(self, size: int, thp: bool):
        self.size = size
        self.written = 0  # the largest size whose cycle was written
        self.faults = 0  # minor faults this thread took writing cycles into it (None after restart)
        self.span = whole_huge(size)
        self.mm, self.off, self.start = aligned_mapping(self.span, thp)  # start: the aligned part's address
        self.words = np.frombuffer(self.mm, dtype=np.int64)[self.off // 8 : (self.off + self.span) // 8]

    def write(self, order: np.ndarray, succ: np.ndarray, size: int) -> int | None:
        """Write a cycle built for ``size`` bytes (words[order] = succ); returns the minor faults
        taken by every write into this mapping so far: those of populating its first ``size``
        bytes, as a fresh mapping of the size would take (each cycle touches every page below its
        size, and sizes come in increasing order)."""
        if not self.written <= size <= self.size:
            raise ValueError(f"size={size} after {self.written} in a mapping of {self.size}: sizes must increase and fit")
        if int(order.max()) >= size // 8 or int(order.min()) < 0:
            raise RuntimeError("internal error: probe cycle outside its mapping")  # the cycle is built for this size
        taken = touch_faults(self.words, order, succ)
        if self.faults is not None:
            self.faults += taken
        self.written = size
        return self.faults

    def restart(self, keep: int):
        """Take sizes from the smallest again, up to ``keep`` bytes (another stride's cycles): the
        pages beyond are given back (MADV_DONTNEED), and faults are no longer those of populating a
        size, so they are not counted (write returns None)."""
        keep = min(whole_huge(keep), self.span)
        if keep < self.span:
            self.mm.madvise(mmap.MADV_DONTNEED, self.off + keep, self.span - keep)
        self.size = keep
        self.written = 0
        self.faults = None

    def close(self):
        self.words = None
        close_mapping(self.mm)


def _cycle(size: int, stride: str, rng) -> tuple[np.ndarray, np.ndarray]:
    """Word indices of the elements in visiting order, and each element's successor."""
    if stride == "page":
        n = size // PAGE
        pos = np.arange(n, dtype=np.int64) * (PAGE // 8) + rng.integers(0, PAGE // LINE, n) * (LINE // 8)
    else:
        n = size // LINE
        pos = np.arange(n, dtype=np.int64) * (LINE // 8)
    order = pos[rng.permutation(n)]
    return order, np.roll(order, -1)


def _simulated_faults(offsets_bytes: np.ndarray, span: int, page: int) -> int:

    start = 1 << 40
    lay = Layout.single(span, page, start=start, name="[ probe ]")
    ds = simulate("skylake", addresses=(start + offsets_bytes).astype(np.uint64), layout=lay, specialize=False)
    return int(ds["faults"].values.sum())  # numpy's sum: xarray's first reduction imports dask where installed (0.24 s)


def _loads(n_elements: int, quick: bool) -> int:
    return int(min(max(2 * n_elements, 1 << 16), 1 << 17))


def _ns_per_load(words, start: int, loads: int) -> tuple[float, int]:
    """CPU time of this thread per load (time the scheduler gave another process is not counted),
    and the index where the chase stopped."""
    t0 = time.thread_time_ns()
    end = chase(words, start, loads)
    return (time.thread_time_ns() - t0) / loads, int(end)


def measure_size(
    size: int, stride: str, pages, repeats: int, rng, quick: bool = False, faults: bool = True, together: bool = True, regions=None, cycle=None
) -> list[dict]:
    """One working set: the same random cycle written into one mapping per page kind in ``pages``
    ('4K', 'THP'), then ``repeats`` rounds timing each mapping in turn (the order alternating), so
    that the kinds compared see the same interference. ``together=False`` measures one kind after
    the other (one mapping at a time: half the memory). ``regions``: page kind -> a _Region to
    write into (at least ``size`` bytes, earlier sizes' cycles in it smaller; left open), instead
    of a fresh mapping per kind; ``cycle``: the (order, successor) to write, instead of drawing
    one from ``rng``. Returns one record per kind."""
    order, succ = cycle if cycle is not None else _cycle(size, stride, rng)
    if order.size == 0:
        raise ValueError(f"size={size} holds no element with stride {stride!r}")
    recs = {}
    start = int(order[0])
    span = whole_huge(size)
    for group in [list(pages)] if together else [[p] for p in pages]:
        regs, own = {}, []
        try:
            for page in group:
                if regions is not None and page in regions:
                    reg = regs[page] = regions[page]
                else:
                    reg = regs[page] = _Region(size, page == "THP")
                    own.append(reg)
                real = reg.write(order, succ, size)
                # huge pages granted (of the whole mapping: only its first ``span`` bytes are touched); page stride only, where they are reported
                huge = anon_huge_kib(reg.start, reg.start + span) if page == "THP" and stride == "page" else 0
                recs[page] = {
                    "size": size,
                    "page": page,
                    "stride": stride,
                    "ns": [],
                    "path": _loads(order.size, quick),
                    "real_faults": real,
                    "huge_pages": None if huge is None else huge // 2048,
                    "huge_pages_expected": span // HUGE if page == "THP" else 0,
                    "alternated": together,
                }
            # The path: ``path`` loads from the cycle's first element (all of a small cycle, twice or
            # more; the first 2**17 elements of a large one). The warm-up follows it once (caches, TLBs,
            # first compilation). A mapping timed alone follows it again and again, each timed run half
            # of it, the first half and the second in turn: the same loads in the same order as
            # whole-path runs, at half the cost. Mappings timed in alternation follow the whole path
            # each run, so that each run follows the other mapping's as before (halves would double
            # how often the other mapping's lines and translations disturb a run).
            parts = {}
            for page in group:
                rec = recs[page]
                rec["loads"] = rec["path"] // 2 if len(group) == 1 else rec["path"]
                _, mid = _ns_per_load(regs[page].words, start, rec["loads"])
                if rec["loads"] < rec["path"]:
                    _ns_per_load(regs[page].words, mid, rec["path"] - rec["loads"])
                    parts[page] = ((start, rec["loads"]), (mid, rec["path"] - rec["loads"]))
                else:
                    parts[page] = ((start, rec["loads"]),) * 2
            for r in range(repeats):
                for page in group if r % 2 == 0 else group[::-1]:
                    begin, n = parts[page][r % 2]
                    recs[page]["ns"].append(_ns_per_load(regs[page].words, begin, n)[0])
        finally:
            for reg in own:
                reg.close()
    if faults:
        offs = np.sort(order) * 8
        for page in pages:
            recs[page]["simulated_faults"] = _simulated_faults(offs, span, HUGE if page == "THP" else PAGE)
    return [recs[p] for p in pages]


# ------------------------------------------------------------------------------------ knees
def find_knees(sizes, ns, curve: str = "", rise: float = RISE) -> list[Knee]:
    """Transitions of a latency curve: a run of consecutive steps in which the median rises, starting
    with a rise of more than ``rise`` (15%) and continuing while each step still rises by more than a
    third of that. The knee is the last size before the run (where the smaller level runs out). A
    rise that the next size does not keep (a single high point: noise) is not a knee."""
    s = [int(x) for x in sizes]
    v = [float(x) for x in ns]
    if len(s) != len(v):
        raise ValueError(f"sizes ({len(s)}) and ns ({len(v)}) differ in length")
    if any(b <= a for a, b in zip(s, s[1:])):
        raise ValueError("sizes must increase")
    if any(not np.isfinite(x) or x <= 0 for x in v):
        raise ValueError("latencies must be positive and finite")
    out, i = [], 0
    while i < len(v) - 1:
        if v[i + 1] > v[i] * (1 + rise):
            j = i + 1
            while j < len(v) - 1 and v[j + 1] > v[j] * (1 + rise / 3):
                j += 1
            if j + 1 < len(v) and v[j + 1] <= v[i] * (1 + rise):
                i += 1  # the curve falls back: a spike, not a transition
                continue
            out.append(Knee(curve, s[i], s[j], v[i], v[j]))
            i = j
        else:
            i += 1
    return out


def cache_sizes() -> list[tuple[str, int]]:
    """This machine's data and unified caches as Linux reports them (sysfs): [('L1d cache', bytes), ...]."""
    out = []
    root = "/sys/devices/system/cpu/cpu0/cache"
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return out
    for d in names:
        if not d.startswith("index"):
            continue
        try:
            kind = open(f"{root}/{d}/type").read().strip()
            level = open(f"{root}/{d}/level").read().strip()
            size = parse_size(open(f"{root}/{d}/size").read().strip(), "cache size")
        except (OSError, ValueError):
            continue
        if kind in ("Data", "Unified"):
            out.append((f"L{level}{'d' if kind == 'Data' else ''} cache", size))
    return out


def candidates(page: str, stride: str, presets) -> list[tuple[str, int]]:
    """What could make a curve rise, and at which working set: this machine's caches (at 64 times
    their size for a page-stride curve, which uses one line per page) and the closest presets'
    TLB reach by level (4K entries; for THP also 2M entries)."""
    out = []
    for name, size in cache_sizes():
        out.append(
            (
                f"{name} {format_size(size)}" + (f" (one line per page: {format_size(size * (PAGE // LINE))})" if stride == "page" else ""),
                size * (PAGE // LINE if stride == "page" else 1),
            )
        )
    pr = preset_reach(presets)
    for _, r in pr.iterrows():
        if r["page"] == "4K" or page == "THP":
            note = " (huge pages held as 4K entries)" if page == "THP" and r["page"] == "4K" else ""
            out.append((f"{r['preset']} L{r['level']} TLB, {r['page']} pages: {format_size(int(r['reach']))}{note}", int(r["reach"])))
    return out


def explain(knee: Knee, cands) -> str:
    """The candidates whose size lies in the knee's transition: from start/sqrt(2) up to its end."""
    hit = [name for name, c in cands if knee.start / 2**0.5 <= c <= knee.end]
    return "; ".join(hit) if hit else "nothing known at this size (noise, host paging, or a structure not listed)"


def name_knees(res: ProbeResult) -> list[Knee]:
    """Every knee of every curve, with the candidates that lie in its transition."""
    out = []
    for (page, stride), g in res.medians.groupby(["page", "stride"], sort=False):
        g = g.sort_values("size")
        if len(g) < 2:
            continue
        cands = candidates(page, stride, res.presets)
        for k in find_knees(g["size"], g["median_ns"], f"{page} pages, {stride} stride"):
            out.append(Knee(k.curve, k.start, k.end, k.before_ns, k.after_ns, explain(k, cands)))
    return out


# ------------------------------------------------------------------------------------ the probe
PAIR_BUDGET = 512 << 20  # the 4K and THP mappings are held at once (and alternated) up to this much in all


def measure(
    min_size="16K",
    max_size="1G",
    per_octave: int = 2,
    repeats: int = 7,
    line_max="64M",
    quick: bool = False,
    seed: int = 0,
    faults: bool = True,
    progress: bool = False,
    presets=None,
    pair_budget=PAIR_BUDGET,
) -> ProbeResult:
    """Measure this machine: page-stride curves with 4 KiB pages and THP (timed in alternation), a
    line-stride curve up to ``line_max``; the knees found, beside the caches Linux reports and the
    closest presets' TLB reach. ``quick``: at most 64 MiB and 5 repeats. The 4K and THP mappings
    of one size are held at once and timed in alternation while together they fit in
    ``pair_budget`` (512 MiB); larger sizes are measured one mapping after the other, so the peak
    memory is about the largest size. Sizes whose mapping would not fit in half the available
    memory are left out. Raises RuntimeError off Linux."""
    import pandas as pd  # deferred: pandas is slow to import; only tables need it

    reason = why_not(False)
    if reason:
        raise RuntimeError(f"the probe cannot run here: {reason}")
    repeats = check_int("repeats", repeats, 1, 101)
    seed = check_seed(seed)
    presets = list(presets) if presets is not None else closest_presets()
    preset_reach(presets)  # an unknown preset fails here, before anything is measured
    if quick:
        max_size = min(parse_size(max_size, "max_size"), 64 << 20)
        repeats = min(repeats, 5)
    sizes = probe_sizes(min_size, max_size, per_octave)
    thp_reason = why_not(True)
    pages = ["4K"] + (["THP"] if thp_reason is None else [])
    cap = memory_limit()
    budget = parse_size(pair_budget, "pair_budget")
    kept = [s for s in sizes if (-(-s // HUGE) + 1) * HUGE <= cap]
    if not kept:
        raise RuntimeError(f"not even {format_size(sizes[0])} fits in half the available memory ({format_size(cap)})")
    dropped = sizes[len(kept) :]
    sizes = kept
    lmax_given = parse_size(line_max, "line_max")
    if lmax_given < sizes[0]:
        raise ValueError(f"line_max={line_max!r} is out of range: allowed {format_size(sizes[0])} (the smallest working set) or more")
    lmax = min(lmax_given, sizes[-1])
    line_page = "THP" if thp_reason is None else "4K"
    jobs = [(s, "page", pages) for s in sizes] + [(s, "line", [line_page]) for s in sizes if s <= lmax]
    rng = np.random.default_rng(seed)
    bar = None
    if progress:
        bar = progress_bar(total=len(jobs), desc="probe", unit="size")
    t0 = time.perf_counter()
    done = {}  # (size, stride, page) -> record

    def paired_ok(s, kinds):  # whether mappings of ``kinds`` of size s fit in the budget together
        return len(kinds) * (-(-s // HUGE) + 1) * HUGE <= budget

    def run(sizes_, stride, pg, regions, cycles=None):
        for s in sizes_:
            cycle = None if cycles is None else (cycles[s], np.roll(cycles[s], -1))
            together = paired_ok(s, pages if stride == "page" else pg)  # as every size of the page stride: False for the sizes measured alone
            kw = dict(quick=quick, faults=faults and stride == "page", together=together, regions=regions, cycle=cycle)
            for r in measure_size(s, stride, pg, repeats, rng, **kw):
                done[s, stride, r["page"]] = r
            if bar is not None:
                bar.update(len(pg) / len(pages) if stride == "page" else 1)

    def mapped(size, page_kinds):
        return {p: _Region(size, p == "THP") for p in page_kinds}

    def close(regions):
        for reg in regions.values():
            reg.close()

    # One mapping per page kind, grown by the sizes written into it (the memory in use stays within
    # the pair budget or about the largest size), in this order:
    #   1. page stride, the sizes whose 4K and THP mappings fit in the budget together, alternated;
    #   2. the larger sizes, one kind at a time: first line_page's (THP), the same mapping on, the
    #      other kind's closed;
    #   3. line stride, in that mapping again (its pages are there already: no faults are reported);
    #   4. the larger sizes with the other kind (4K), in a new mapping.
    # Every page is zeroed and faulted once per kind: huge pages cost most (2-6 ms each on a virtual
    # machine whose host must back them), and those a closed mapping freed are not at hand for the next.
    paired = [s for s in sizes if paired_ok(s, pages)]
    alone = sizes[len(paired) :]
    line_sizes = [s for s in sizes if s <= lmax]
    regs = mapped(sizes[-1], pages)  # address space only: memory is taken as the cycles are written
    try:
        if paired:
            run(paired, "page", pages, regs)
        for p in pages:
            if p != line_page:
                regs.pop(p).close()
        # drawn in the order of the sizes, as the paired ones; kept for both kinds (the visiting order: the successors are its roll)
        cycles = {s: _cycle(s, "page", rng)[0] for s in alone}
        if alone:
            run(alone, "page", [line_page], regs, cycles)
        regs[line_page].restart(line_sizes[-1])
        run(line_sizes, "line", [line_page], regs)
    finally:
        close(regs)
    for p in pages if alone else []:
        if p != line_page:
            regs = mapped(alone[-1], [p])
            try:
                run(alone, "page", [p], regs, cycles)
            finally:
                close(regs)
    if bar is not None:
        bar.close()
    recs = [done[s, st, p] for s, st, pg in jobs for p in pg]
    runs = pd.DataFrame([{"size": r["size"], "page": r["page"], "stride": r["stride"], "rep": i, "ns": t} for r in recs for i, t in enumerate(r["ns"])])
    med = (
        runs.groupby(["size", "page", "stride"], sort=False)["ns"]
        .agg(median_ns="median", q1_ns=lambda x: x.quantile(0.25), q3_ns=lambda x: x.quantile(0.75), min_ns="min")
        .reset_index()
    )
    loads = {(r["size"], r["page"], r["stride"]): r["loads"] for r in recs}
    med["loads"] = [loads[k] for k in zip(med["size"], med["page"], med["stride"])]
    fl = pd.DataFrame(
        [{k: r.get(k) for k in ("size", "page", "real_faults", "simulated_faults", "huge_pages", "huge_pages_expected")} for r in recs if r["stride"] == "page"]
    )
    alone = sorted({r["size"] for r in recs if not r["alternated"] and len(pages) > 1 and r["stride"] == "page"})
    res = ProbeResult(
        runs=runs,
        medians=med,
        faults=fl,
        thp=thp_reason,
        cpu=cpu_description(),
        seconds=time.perf_counter() - t0,
        presets=presets,
        dropped=dropped,
        repeats=repeats,
        one_at_a_time=alone,
    )
    res.knees = name_knees(res)
    return res


def l2_reach_4k(presets) -> tuple[int, str]:
    """The 4 KiB reach of the largest TLB level among ``presets``, and which structure it is: software
    cannot read this machine's TLB sizes portably, so the closest presets stand in for them."""
    pr = preset_reach(presets)
    four = pr[pr["page"] == "4K"]
    top = four.loc[four.groupby("preset")["level"].idxmax()]
    r = top.loc[top["reach"].idxmax()]
    return int(r["reach"]), f"{r['preset']} {r['structures']}: {format_size(int(r['reach']))}"


def thp_direction(res: ProbeResult) -> dict:
    """The direction check: beyond the 4 KiB L2 TLB reach (the largest of the closest presets'), the
    THP curve's median latency is no higher than the 4 KiB curve's. Single sizes are noisy on a shared
    machine (4K and THP may differ by less than the noise just past the reach), so the check is on
    the median, over the sizes beyond the reach, of the ratio of the two medians (4K / THP >= 1);
    every size is reported. Returns the reach, its source, the (size, 4K ns, THP ns) compared, the
    median ratio and whether it holds (None: cannot be checked, with why)."""
    if res.thp is not None:
        return {"holds": None, "why": f"THP not measured: {res.thp}", "pairs": []}
    reach, source = l2_reach_4k(res.presets)
    p4, pt = res.curve("4K", "page"), res.curve("THP", "page")
    beyond = [s for s in p4.index if s > reach and s in pt.index]
    if not beyond:
        return {
            "holds": None,
            "why": f"no measured size beyond the 4K L2 TLB reach {format_size(reach)} ({source})",
            "reach": reach,
            "source": source,
            "pairs": [],
        }
    pairs = [(int(s), float(p4[s]), float(pt[s])) for s in beyond]
    ratio = float(np.median([f / t for _, f, t in pairs]))
    return {
        "holds": ratio >= 1.0,
        "ratio": ratio,
        "reach": reach,
        "source": source,
        "pairs": pairs,
        "sizes_holding": sum(t <= f for _, f, t in pairs),
        "worst": max(pairs, key=lambda x: x[2] / x[1]),
        "why": "",
    }


def table(res: ProbeResult) -> str:
    """The probe as text: one row per working set, the knees, the closest presets' reach, the check."""
    p4, pt = res.curve("4K", "page"), res.curve("THP", "page")
    line_page = "THP" if res.thp is None else "4K"
    ln = res.curve(line_page, "line")
    fl = res.faults.set_index(["size", "page"]) if len(res.faults) else None

    def faults(s, page):
        if fl is None or (s, page) not in fl.index:
            return "-"
        r = fl.loc[(s, page)]
        sim = r.get("simulated_faults")
        return f"{int(r['real_faults']):,}/{int(sim):,}" if sim is not None and sim == sim else f"{int(r['real_faults']):,}/-"

    out = [
        f"pointer-chase latency on {res.cpu}",
        f"median CPU ns per dependent load over {res.repeats} runs; transparent huge pages: {thp_mode() or 'not available'}"
        + (f" (THP not measured: {res.thp})" if res.thp else ""),
        "page stride: one 64-byte line per 4 KiB page (translation-bound); line stride: every line (the caches)",
        "",
        f"{'working set':>11}  {'4K page':>8}  {'THP page':>8}  {'4K/THP':>6}  {line_page + ' line':>8}  "
        f"{'faults 4K real/sim':>19}  {'faults THP real/sim':>19}",
    ]
    for s in p4.index:
        t = f"{pt[s]:8.1f}" if s in pt.index else f"{'-':>8}"
        ratio = f"{p4[s] / pt[s]:6.2f}" if s in pt.index else f"{'-':>6}"
        lv = f"{ln[s]:8.1f}" if s in ln.index else f"{'':>8}"
        out.append(f"{format_size(int(s)):>11}  {p4[s]:8.1f}  {t}  {ratio}  {lv}  {faults(s, '4K'):>19}  {faults(s, 'THP'):>19}")
    if res.one_at_a_time:
        out.append(
            f"(from {format_size(res.one_at_a_time[0])} on, 4K and THP were measured one after the other, not in alternation: "
            "both mappings at once would exceed the memory budget)"
        )
    if res.dropped:
        out.append(f"(left out, beyond half the available memory: {', '.join(map(format_size, res.dropped))})")
    out += ["", "knees (median latency rises by more than 15% from one size to the next, and stays up), with what lies there:"]
    out += [f"  {k}" for k in res.knees] or ["  none found"]
    out += [
        "",
        f"caches Linux reports: {', '.join(f'{n} {format_size(s)}' for n, s in cache_sizes()) or 'none'}",
        f"closest presets ({', '.join(res.presets)}), data TLB reach by level:",
    ]
    for _, r in preset_reach(res.presets).iterrows():
        out.append(f"  {r['preset']:<12} {r['page']:>3}  L{r['level']}: {r['structures']:<28} reach {format_size(int(r['reach']))}")
    d = thp_direction(res)
    if d["holds"] is None:
        out.append(f"\nTHP vs 4K beyond the 4K L2 TLB reach: not checked: {d['why']}")
    else:
        s, f4, ft = d["worst"]
        out.append(
            f"\nTHP vs 4K beyond the 4K L2 TLB reach ({d['source']}): median 4K/THP {d['ratio']:.2f} over {len(d['pairs'])} sizes "
            f"({'holds' if d['holds'] else 'DOES NOT HOLD'}: THP no slower); THP no slower at {d['sizes_holding']} of them; "
            f"closest: {format_size(s)}, 4K {f4:.1f} ns, THP {ft:.1f} ns"
        )
    out.append(
        f"({res.seconds:.0f} s; CPU time per load, so time given to other processes is not counted, but their use of "
        "shared caches and memory is: read directions, not digits)"
    )
    return "\n".join(out)
