"""The documents' kernels timed on this machine with 4 KiB pages and with transparent huge pages,
beside pagesim's prediction for this machine.

Each kernel (``pagesim._kernels.native``: STREAM's triad, RandomAccess, a blocked DGEMM, the
strided solver's sweep, the MD neighbour loop) runs on buffers in anonymous mappings aligned to
2 MiB, one set advised ``MADV_NOHUGEPAGE`` and one ``MADV_HUGEPAGE``, with the same contents. The
buffers are written before any timing, so page faults are not timed: what differs between the two
is translation. Runs alternate between the two sets (4K first in one pair, THP first in the next),
each timed with the process's CPU clock; the gain is the median over pairs of t(4K) / t(THP) - 1,
with its quartiles.

The prediction simulates the trace the kernel makes: the kernel is run once more recording the
address of each access (the first ``record`` of them), and pagesim simulates it with 4 KiB and
with 2 MiB pages on the preset nearest this processor, virtualised when a hypervisor is detected.
The predicted time with 4 KiB pages is the measured THP time plus the simulated difference in
translation cycles (TLB hit latency, walks, SLB misses) per access, at this processor's clock,
with walks overlapped up to the preset's walkers (``machine(name).walker.walkers``): none of these
kernels is a chain of dependent loads (no access waits for the one before it to find its address),
so a processor runs their walks side by side:

    predicted gain = (t_THP + (c_4K - c_2M) / f) / t_THP - 1      (per access)

so the prediction takes the measured THP time as its base and adds only what the model says about
translation; the cycle costs are the preset's (most of them assumptions, listed by
``machine(name).costs.assumed``), and the walkers' overlap is the most a processor can reach (its
other limits, the reorder buffer and miss buffers, are not modelled). A virtual machine's host page size cannot be seen from inside:
the prediction assumes the host backs the guest with 4 KiB pages (notebook 07 fits which host
page size explains this machine's probe best). The clock is the largest ``cpu MHz`` in
/proc/cpuinfo (2.5 GHz, an assumption, where it gives none).

A measurement here is evidence about this machine, never about a document; on a shared machine
its spread is wide, so nothing fails on it.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field

import numpy as np

from .._kernels import native
from ..core.check import check_bool, check_choice, check_int, check_number, check_seed
from ..core.units import format_size, parse_size
from ..engine.simulate import simulate
from ..model.layout import Layout
from ..model.machines import machine as get_machine
from ..sources.workloads import MolecularDynamics
from .linux import HUGE, aligned_mapping, anon_huge_kib, close_mapping, whole_huge, why_not
from .probe import closest_presets, hypervisor, memory_limit

START = 1 << 40  # where the recorded trace's buffers start (whole 2 MiB blocks each)
TRANSLATION = ("tlb_hit_latency", "walk", "slb_miss")  # the cost components that translation makes
COMPONENTS = (*TRANSLATION, "fault", "swap")  # the cost components simulated() can add
ASSUMED_HZ = 2.5e9
PLANE = 1040 << 10  # the strided solver's plane, as notebook 02's (1 MiB + 16 KiB)


@dataclass(frozen=True)
class Kernel:
    """One kernel as run here: its buffers (name, bytes), the accesses of one timed run, how to run
    it (``run(buffers, bases, log)``), and the pagesim workload that makes the same accesses
    (``workload``, ``params``)."""

    name: str
    buffers: tuple
    accesses: int
    run: object
    workload: str
    params: dict = field(default_factory=dict)
    load: object = None  # runs the compiled code over no work: loads it from the cache (or compiles it)

    @property
    def size(self) -> int:
        return sum(b for _, b in self.buffers)

    def execute(self, bufs, bases, log) -> None:
        """Run the kernel once on ``bufs`` (one 8-byte-element array per buffer, each at least the
        buffer's size), recording into ``log`` (an int64 array; empty: no record), after checking
        them: the numba code does not check bounds."""
        if len(bufs) != len(self.buffers):
            raise ValueError(f"bufs: {self.name} takes {len(self.buffers)} arrays ({', '.join(n for n, _ in self.buffers)}), got {len(bufs)}")
        for b, (name, size) in zip(bufs, self.buffers):
            if not isinstance(b, np.ndarray) or b.ndim != 1 or b.dtype.itemsize != 8 or not b.flags.c_contiguous or b.nbytes < size:
                raise ValueError(f"bufs: {self.name}'s {name} must be a contiguous 1-D array of 8-byte elements, {format_size(size)} at least")
        if len(bases) != len(self.buffers):
            raise ValueError(f"bases: one per buffer of {self.name}, got {len(bases)}")
        if not isinstance(log, np.ndarray) or log.dtype != np.int64 or log.ndim != 1:
            raise ValueError("log must be a 1-D int64 array (empty: no record)")
        self.run(bufs, [check_int("bases", int(b), 0, (1 << 62)) for b in bases], log)


MIN_TABLE = 16 << 20  # RandomAccess's smallest table


def kernels(quick: bool = False, plane=PLANE, limit=None, seed: int = 0) -> dict:
    """The kernels by name, sized for ``quick`` or full runs. RandomAccess's table (a power of two,
    at least 16 MiB) is halved until its two copies (4K and THP) fit in ``limit`` bytes (default:
    :func:`probe.memory_limit`); the other kernels' sizes are fixed (``run`` skips a kernel whose two
    copies do not fit). ``plane``: the strided solver's plane in bytes, a multiple of 8 from 8 bytes
    to 64 MiB. ``seed`` draws RandomAccess's updates and where MD's atoms are stored, as the
    workloads' seeds do."""
    quick = check_bool("quick", quick)
    plane = parse_size(plane, "plane")
    if not 8 <= plane <= 64 << 20 or plane % native.ELEMENT:
        raise ValueError(f"plane={plane!r}: a plane is a whole number of 8-byte elements, 8 bytes to 64 MiB")
    seed = check_seed(seed)
    limit = memory_limit() if limit is None else parse_size(limit, "limit")
    if 2 * MIN_TABLE > limit:
        raise ValueError(f"limit={format_size(limit)}: RandomAccess needs two copies of its smallest table, {format_size(2 * MIN_TABLE)} at least")
    n = (2 << 20) if quick else (8 << 20)
    passes = 2 if quick else 4
    table = (256 << 20) if quick else (1 << 30)
    while table > MIN_TABLE and 2 * table > limit:
        table //= 2
    updates = (1 << 20) if quick else (4 << 20)
    dn, tile = (256, 64) if quick else (512, 64)
    n_planes, sweeps = 64, 1 if quick else 2
    per_plane = plane // native.ELEMENT
    md = MolecularDynamics(atoms=((8 << 20) if quick else (32 << 20)) // 256, atom_bytes=256, atoms_per_cell=8, shuffle=1.0)
    slot = md.slots(seed)
    cpd = md.cells_per_side
    words = md.atom_bytes // native.ELEMENT

    def f64(bufs):
        return [b.view(np.float64) for b in bufs]

    one, nothing = np.zeros(1, dtype=np.uint64), np.zeros(0, dtype=np.int64)  # the arguments of a call with no work
    f1 = one.view(np.float64)

    out = [
        Kernel(
            "STREAM triad",
            (("a", n * 8), ("b", n * 8), ("c", n * 8)),
            3 * n * passes,
            lambda bufs, bases, log: native.triad(*f64(bufs), 3.0, passes, *bases, log),
            "stream",
            dict(n=n, passes=passes),
            lambda: native.triad(f1, f1, f1, 3.0, 0, 0, 0, 0, nothing),
        ),
        Kernel(
            "RandomAccess",
            (("table", table),),
            updates,
            lambda bufs, bases, log: native.gups(bufs[0], updates, seed, bases[0], log),
            "random",
            dict(size=table, accesses=updates),
            lambda: native.gups(one, 0, seed, 0, nothing),
        ),
        Kernel(
            "DGEMM",
            (("A", dn * dn * 8), ("B", dn * dn * 8), ("C", dn * dn * 8)),
            2 * dn**3 + dn * dn * (-(-dn // tile)),
            lambda bufs, bases, log: native.dgemm(*f64(bufs), dn, tile, *bases, log),
            "blocked_matrix",
            dict(n=dn, block=tile),
            lambda: native.dgemm(f1, f1, f1, 0, tile, 0, 0, 0, nothing),
        ),
        Kernel(
            "strided solver",
            (("grid", n_planes * plane),),
            n_planes * per_plane * sweeps,
            lambda bufs, bases, log: native.planes(f64(bufs)[0], n_planes, per_plane, 1, per_plane, sweeps, bases[0], log),
            "planes",
            dict(planes=n_planes, plane=plane, accesses=n_planes * per_plane * sweeps),
            lambda: native.planes(f1, 0, per_plane, 1, per_plane, 0, 0, nothing),
        ),
        Kernel(
            "MD",
            (("atoms", md.spans()[0][1]),),
            md.n_accesses,
            lambda bufs, bases, log: native.md(f64(bufs)[0], slot, cpd, md.atoms_per_cell, words, 1, bases[0], log),
            "md",
            dict(atoms=md.atoms, atom_bytes=md.atom_bytes, atoms_per_cell=md.atoms_per_cell, shuffle=md.shuffle),
            lambda: native.md(f1, slot, cpd, md.atoms_per_cell, words, 0, 0, nothing),
        ),
    ]
    return {k.name: k for k in out}


def bases(k: Kernel) -> list[int]:
    """Where the recorded trace puts each buffer: from START, each on whole 2 MiB blocks."""
    out, at = [], START
    for _, size in k.buffers:
        out.append(at)
        at += whole_huge(size)
    return out


def trace_span(k: Kernel) -> int:
    """The bytes from START that the recorded trace's buffers cover."""
    return bases(k)[-1] + whole_huge(k.buffers[-1][1]) - START


class Buffers:
    """One anonymous mapping per buffer of ``k``, its usable part 2 MiB-aligned, advised
    MADV_HUGEPAGE (``thp``) or MADV_NOHUGEPAGE, written with the same values for both kinds."""

    def __init__(self, k: Kernel, thp: bool):
        self.maps, self.arrays, self.spans = [], [], []
        for i, (_, size) in enumerate(k.buffers):
            span = whole_huge(size)
            mm, off, start = aligned_mapping(span, thp)
            words = np.frombuffer(mm, dtype=np.uint64)[off // 8 : (off + size) // 8]
            words.view(np.float64)[:] = 1.0 + np.arange(words.size) * (1e-9 * (i + 1))  # every page written, normal doubles
            self.maps.append(mm)
            self.arrays.append(words)
            self.spans.append((start, start + span))

    def huge_fraction(self) -> float | None:
        """The share of the buffers' bytes in huge pages (AnonHugePages), None where it cannot be read."""
        got = [anon_huge_kib(lo, hi) for lo, hi in self.spans]
        if any(g is None for g in got):
            return None
        return min(1.0, sum(got) * 1024 / sum(hi - lo for lo, hi in self.spans))

    def close(self):
        self.arrays = []
        for mm in self.maps:
            close_mapping(mm)
        self.maps = []


def cpu_hz() -> tuple[float, str]:
    """This processor's clock in Hz and where it came from."""
    try:
        mhz = [float(ln.split(":", 1)[1]) for ln in open("/proc/cpuinfo") if ln.lower().startswith("cpu mhz")]
    except (OSError, ValueError):
        mhz = []
    if mhz and max(mhz) > 0:
        return max(mhz) * 1e6, "/proc/cpuinfo"
    return ASSUMED_HZ, "assumed (no cpu MHz in /proc/cpuinfo)"


def models(preset: str | None = None, vm: str | None = None) -> list[tuple[str, object]]:
    """The machine models a prediction uses: ``preset`` (default: the preset nearest this processor)
    on bare metal and, when ``vm`` (a hypervisor's name) is given, virtualised on 4 KiB host pages
    (an assumption). The preset must have 4 KiB and 2 MiB pages (THP's)."""
    if preset is not None and (not isinstance(preset, str) or not preset):
        raise ValueError(f"preset={preset!r}: give a preset name, or None for the one nearest this processor")
    name = preset or closest_presets()[0]
    try:
        base = get_machine(name)
        base.check_page_size(4096)
        base.check_page_size(HUGE)
        out = [("bare metal", base)]
        if vm:
            out.append(("VM, host 4K pages", base.virtualised("4K")))
    except ValueError as e:
        raise ValueError(f"preset={name!r} cannot model this machine's 4K and THP runs: {e}") from None
    return out


def simulated(m, trace: np.ndarray, page: int, span: int, components=TRANSLATION, overlap: int = 1) -> tuple[float, int]:
    """(cycles per access of ``components``, page faults) of ``trace`` on ``m`` with ``page``-byte
    pages, in a fresh mapping of ``span`` bytes from START. ``components``: translation's by
    default; add "fault" for the first touches' faults. ``overlap``: walks that run at once (the
    walk component is divided by it; 1: one after the other)."""
    overlap = check_int("overlap", overlap, 1, 64)
    if isinstance(components, str) or not hasattr(components, "__iter__") or not components:
        raise TypeError(f"components={components!r}: give a tuple of cost components such as {TRANSLATION!r}")
    for c in components:
        check_choice("components", c, COMPONENTS)
    ds = simulate(m, addresses=trace, layout=Layout.single(span, page, start=START, name="[ here ]"))
    cyc = ds["cycles"].sel(component=[c for c in components if c != "walk"]).values.sum()
    if "walk" in components:
        cyc = cyc + ds["cycles"].sel(component="walk").values.sum() / overlap
    return float(cyc) / trace.size, int(ds["faults"].values.sum())


def predict(k: Kernel, trace: np.ndarray, thp_ns: float, hz: float, mods) -> dict:
    """Each model's predicted gain (%) of THP over 4 KiB pages for ``k``, from its recorded
    ``trace`` and the measured THP time per access ``thp_ns`` (module text)."""
    thp_ns = check_number("thp_ns", thp_ns)
    hz = check_number("hz", hz, 1e6, 1e11)  # a processor's clock: 1 MHz to 100 GHz
    if thp_ns <= 0:
        raise ValueError(f"thp_ns={thp_ns!r}: a time per access above 0 ns")
    span = trace_span(k)
    out = {}
    for name, m in mods:
        c4, c2 = (simulated(m, trace, p, span, overlap=m.walker.walkers)[0] for p in (4096, HUGE))
        out[name] = ((thp_ns + (c4 - c2) / hz * 1e9) / thp_ns - 1) * 100
    return out


def record(k: Kernel, bufs: Buffers, n: int) -> np.ndarray:
    """The addresses of the first ``n`` accesses ``k`` makes (fewer if it makes fewer)."""
    log = np.zeros(min(check_int("n", n, 1), k.accesses), dtype=np.int64)
    k.execute(bufs.arrays, bases(k), log)
    return log.view(np.uint64)


def time_pairs(k: Kernel, small: Buffers, huge: Buffers, repeats: int) -> list[tuple[float, float]]:
    """``repeats`` pairs of (4K, THP) CPU seconds of one run each, alternating which runs first,
    after one untimed run of each (it compiles the kernel and warms the caches)."""
    empty = np.zeros(0, dtype=np.int64)
    for b in (small, huge):
        k.execute(b.arrays, bases(k), empty)
    pairs = []
    for r in range(repeats):
        got = {}
        for which in ("4K", "THP") if r % 2 == 0 else ("THP", "4K"):
            b = small if which == "4K" else huge
            t0 = time.process_time()
            k.execute(b.arrays, bases(k), empty)
            got[which] = time.process_time() - t0
        pairs.append((got["4K"], got["THP"]))
    return pairs


@dataclass
class Result:
    """The runs of :func:`run`: one row per kernel (``table``), and what they rest on."""

    table: object  # DataFrame, one row per kernel
    pairs: dict  # kernel -> [(4K s, THP s), ...]
    models: list  # model names, the first the one a prediction is judged by
    preset: str
    vm: str | None
    hz: float
    hz_source: str
    thp: str | None  # None: THP available; else why not


def run(names=None, quick: bool = False, repeats: int = 5, record_n: int | None = None, seed: int = 0, preset: str | None = None, progress=None) -> Result:
    """Time each kernel of ``names`` (default: all of :func:`kernels`) here with 4 KiB pages and with
    THP, ``repeats`` pairs each, and predict each gain with pagesim (module text). ``record_n``
    accesses of each are simulated (default: 2**20 quick, 2**22 full). ``progress(text)`` is
    called as each kernel starts. Where THP cannot be used here the table says why and has no
    measured gain."""
    import pandas as pd  # deferred: pandas is slow to import; only tables need it

    repeats = check_int("repeats", repeats, 1, 1000)
    check_seed(seed)
    if progress is not None and not callable(progress):
        raise TypeError(f"progress={progress!r}: give a function of one text, or None")
    ks = kernels(quick, seed=seed)
    if names is not None and (isinstance(names, str) or not hasattr(names, "__iter__")):
        raise TypeError(f"names={names!r}: give a list of kernel names (from {', '.join(ks)}), or None for all")
    names = list(ks) if names is None else list(names)
    if not names or len(set(names)) != len(names):
        raise ValueError(f"names={names!r}: give one or more kernel names, each once")
    for nm in names:
        check_choice("names", nm, tuple(ks))
    n_rec = check_int("record_n", record_n if record_n is not None else (1 << 20 if quick else 1 << 22), 1000, 1 << 26)
    cannot = why_not(False)
    if cannot:
        raise RuntimeError(f"the kernels cannot be timed here: {cannot}")
    vm = hypervisor()
    mods = models(preset, vm)  # checked before anything is timed
    room = memory_limit()
    hz, hz_src = cpu_hz()
    no_thp = why_not(True)
    rows, pairs = [], {}
    for nm in names:
        k = ks[nm]
        if 2 * k.size > room:
            if progress:
                progress(f"{nm}: not run, its two copies need {format_size(2 * k.size)} and {format_size(room)} may be used here")
            continue
        if progress:
            progress(f"{nm}: {format_size(k.size)}, {k.accesses:,} accesses a run")
        small = Buffers(k, thp=False)
        huge = Buffers(k, thp=True) if no_thp is None else None
        try:
            row = {"kernel": nm, "buffers": format_size(k.size), "accesses a run": k.accesses}
            if huge is not None:
                p = time_pairs(k, small, huge, repeats)
                trace = record(k, small, n_rec)  # after the timed runs, which see the same contents in both sets
                pairs[nm] = p
                ratios = np.array([a / b for a, b in p])
                q1, med, q3 = np.percentile(ratios, [25, 50, 75])
                thp_ns = float(np.median([b for _, b in p])) / k.accesses * 1e9
                row.update(
                    {
                        "4K ns/access": float(np.median([a for a, _ in p])) / k.accesses * 1e9,
                        "THP ns/access": thp_ns,
                        "THP backed": huge.huge_fraction(),
                        "measured gain %": (med - 1) * 100,
                        "measured q1..q3 %": f"{(q1 - 1) * 100:+.1f}..{(q3 - 1) * 100:+.1f}",
                    }
                )
                for model, gain in predict(k, trace, thp_ns, hz, mods).items():
                    row[f"predicted gain % ({model})"] = gain
                row["prediction error (points)"] = row[f"predicted gain % ({mods[-1][0]})"] - row["measured gain %"]
            else:
                row["not measured"] = no_thp
            rows.append(row)
        finally:
            small.close()
            if huge is not None:
                huge.close()
    return Result(pd.DataFrame(rows, columns=None if rows else ["kernel"]), pairs, [name for name, _ in mods][::-1], mods[0][1].name, vm, hz, hz_src, no_thp)


# ------------------------------------------------------------------- one kernel as a program
def program(name: str = "RandomAccess", quick: bool = True, seed: int = 0, limit: int | None = None, start_only: bool = False) -> list[str]:
    """The command that runs kernel ``name`` once as a program of its own, on numpy arrays (what
    notebook 06 gives ``pagesim measure``). Its memory comes from numpy and malloc, unadvised by
    pagesim: whether it gets huge pages is up to the system and the program's environment (numpy
    advises huge pages for large arrays; ``pagesim measure`` turns THP off for the child or asks
    malloc for it). ``limit``: as :func:`kernels`' (give the same to :func:`predict_program`, so
    both size RandomAccess's table alike)."""
    check_choice("name", name, tuple(kernels(True)))
    limit = memory_limit() if limit is None else parse_size(limit, "limit")
    kernels(quick, limit=limit, seed=seed)  # checks the sizes here, not in the child
    only = ["--start-only"] if check_bool("start_only", start_only) else []
    return [sys.executable, "-m", "pagesim.host.here", name, "--seed", str(check_seed(seed)), "--limit", str(limit)] + (["--quick"] if quick else []) + only


def numpy_buffers(k: Kernel) -> list[np.ndarray]:
    """The kernel's buffers as fresh numpy arrays of zeros (pages faulted at first touch)."""
    return [np.zeros(size // 8, dtype=np.uint64) for _, size in k.buffers]


def predict_program(name: str, quick: bool, on_seconds: float, mods, hz: float, seed: int = 0, record_n: int = 1 << 22, limit: int | None = None) -> list[dict]:
    """For each model: the predicted time off / on of :func:`program` (THP off: 4 KiB pages; on:
    2 MiB), from its recorded trace, the measured time with THP on (``on_seconds``) and the
    simulated difference in translation and fault cycles (first touches fault: the arrays start
    unfaulted, as the program's do), and the faults simulated with each page size. Where the trace
    is longer than ``record_n`` the cycles of its first ``record_n`` accesses are scaled to the run."""
    on_seconds = check_number("on_seconds", on_seconds, 0)
    if on_seconds <= 0:
        raise ValueError(f"on_seconds={on_seconds!r}: a run time above 0")
    k = kernels(quick, limit=limit, seed=seed)[name]
    trace = np.zeros(min(check_int("record_n", record_n, 1), k.accesses), dtype=np.int64)
    bufs = numpy_buffers(k)
    k.execute(bufs, bases(k), trace)
    del bufs
    trace = trace.view(np.uint64)
    span = trace_span(k)
    rows = []
    for model, m in mods:
        (c4, f4), (c2, f2) = (simulated(m, trace, p, span, (*TRANSLATION, "fault"), overlap=m.walker.walkers) for p in (4096, HUGE))
        extra = (c4 - c2) * k.accesses / hz
        rows.append({"model": model, "time off / on": (on_seconds + extra) / on_seconds, "faults off": f4, "faults on": f2, "accesses simulated": trace.size})
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m pagesim.host.here", description="run one of the documents' kernels once on numpy arrays, as a program (for pagesim measure)"
    )
    ap.add_argument("kernel", choices=list(kernels(True)))
    ap.add_argument("--quick", action="store_true", help="the quick sizes")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--limit", type=int, default=None, help="bytes both copies of RandomAccess's table may take (default: half of what is available)")
    ap.add_argument(
        "--start-only", action="store_true", help="only what comes before the arrays: the imports, the sizes and the compiled kernel loaded (its start-up)"
    )
    a = ap.parse_args(argv)
    k = kernels(a.quick, limit=a.limit, seed=check_seed(a.seed))[a.kernel]
    if a.start_only:
        k.load()
        print(f"{k.name}: start-up only (no arrays, no run)")
        return 0
    bufs = numpy_buffers(k)
    t0 = time.perf_counter()
    k.execute(bufs, bases(k), np.zeros(0, dtype=np.int64))
    print(f"{k.name}: {format_size(k.size)}, {k.accesses:,} accesses in {time.perf_counter() - t0:.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
