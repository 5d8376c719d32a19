"""Nested (two-dimensional) paging: the host's side of a virtualised machine's walks.

``simulate`` on a machine made by :meth:`pagesim.Machine.virtualised` runs the translation kernel as
for any machine (its TLBs already cache at most host-page-sized entries) with the walk log on, and
after each chunk :class:`NestedStage` replays the chunk's guest walks through the host's nested TLB
and page-walk caches (``pagesim/_kernels/nested.py`` states the model), on a second thread while the
next chunk is translated when a core is free for it. The Dataset then counts
``walk_refs`` as every memory reference of the two-dimensional walks, the host's among them in
``host_walk_refs``, and the host caches' hits and misses.
"""

from __future__ import annotations

import json
import os
import queue
import threading
import warnings
import weakref
from functools import lru_cache

import numpy as np

from .._kernels import nested as N
from .._kernels import specialize as S
from .._kernels.rules import LANE_EMPTY, LANE_ONES, LANE_WAYS
from ..core.check import usable_cores
from ..core.units import format_size, log2
from ..model.machines import Machine, machine, machines
from .stages import SPECIALIZE_MIN_ACCESSES, machine_parts


class NestedStage:
    """The chunk hook of a virtualised run: its host caches, kept across chunks, and its counters.
    The replay has the host caches' and the guest levels' geometry written in as constants
    (``_kernels/writer.py``'s ``nested``; compiled once per :attr:`shape`, seconds of CPU, then
    cached on disk) when ``specialize`` is True, or "auto" and the run has at least
    ``SPECIALIZE_MIN_ACCESSES`` accesses or a preset's :func:`replay_shape`
    (:func:`preset_shapes`, compiled by ``pagesim warm``);
    otherwise the generic replay reads the geometry at run time. Both count the same.

    Pipelined (:func:`pipelined`): each chunk's replay (of ``PIPELINE_MIN_WALKS`` walks or more)
    runs on a thread of its own while the translation kernel runs the next chunk into the other of
    two walk logs; a chunk's replay starts only when the one before has ended, so the host caches
    see the walks in program order and the counts are the same.
    :meth:`finish` waits for the last replay (``run_chunks`` calls it, also when a chunk fails)."""

    def __init__(self, m: Machine, specialize="auto", n_accesses: int = 0, chunk_size: int = 0):
        host = m.host
        if host is None:
            raise ValueError(f"machine {m.name!r} is not virtualised (Machine.virtualised makes one)")
        self.m, self.host = m, host
        g = m.walker
        ram_bits = log2(host.guest_ram)
        levels = guest_shape(m)
        self.g_shift = np.array([s for s, _ in levels], dtype=np.int64)
        self.g_bits = np.array([b for _, b in levels], dtype=np.int64)
        # by page class (engine.stages.MachineParts.classes): its guest page and its data's host page
        self.parts = parts = machine_parts(m)
        pages = [p for p, _ in parts.classes]
        hosts = [host.page_size if h is None else h for _, h in parts.classes]
        hw = host.walker
        self.g_leaf = np.array([g.leaf_refs(p) - 1 for p in pages], dtype=np.int64)
        self.t_frame_bits = np.array([max(0, ram_bits - 3 - b) for _, b in levels], dtype=np.int64)
        self.page_shift = np.array([log2(p) for p in pages], dtype=np.int64)
        self.d_frame_bits = np.array([max(0, ram_bits - log2(p)) for p in pages], dtype=np.int64)
        self.d_area = np.array([host.page_sizes.index(h) for h in hosts], dtype=np.int64)
        self.d_levels = np.array([hw.leaf_refs(h) for h in hosts], dtype=np.int64)
        self.d_shift = np.array([log2(h) for h in hosts], dtype=np.int64)
        self.ram_bits = ram_bits
        self.host_levels = hw.leaf_refs(host.page_size)
        caches = host_caches(host)
        self.ntlb = 1 if host.nested_tlb else 0
        self.pwc_names = [p.name for p in hw.pwc]
        arr = lambda i: np.array([c[i] for c in caches], dtype=np.int64)  # noqa: E731
        self.c_sets, self.c_ways, self.c_shift, self.c_skip = arr(0), arr(1), arr(2), arr(3)
        self.c_pways = -(-self.c_ways // 4) * 4
        self.c_base = np.concatenate(([0], np.cumsum(self.c_sets * self.c_pways)[:-1])).astype(np.int64) if caches else np.zeros(0, dtype=np.int64)
        self.c_sbase = np.concatenate(([0], np.cumsum(self.c_sets)[:-1])).astype(np.int64) if caches else np.zeros(0, dtype=np.int64)
        size = int((self.c_sets * self.c_pways).sum())
        self.tags = np.full(max(1, size), -1, dtype=np.int64)
        self.stamps = np.zeros(max(1, size), dtype=np.int64)
        # each set's packed LRU order (sets of up to 16 ways), least recent in the top nibble of its
        # ways: way 0 first, so empty ways fill lowest first
        self.orders = np.zeros(max(1, int(self.c_sets.sum())), dtype=np.uint64)
        for sb, sets, ways in zip(self.c_sbase.tolist(), self.c_sets.tolist(), self.c_ways.tolist()):
            if ways <= 16:
                self.orders[sb : sb + sets] = sum(w << 4 * (ways - 1 - w) for w in range(ways))
        self.clock = np.zeros(1, dtype=np.int64)
        self.shape = replay_shape(m)
        lanes = sum(sets for sets, _, _, kept in self.shape[1] if kept)
        self.words = np.full(max(1, lanes), LANE_ONES * np.uint64(LANE_EMPTY), dtype=np.uint64)  # every lane empty
        nk = parts.nc
        self.host_refs = np.zeros((2, nk), dtype=np.int64)
        self.ntlb_hits = np.zeros(nk, dtype=np.int64)
        self.ntlb_misses = np.zeros(nk, dtype=np.int64)
        self.pwc_hits = np.zeros((len(hw.pwc), nk), dtype=np.int64)
        self.pwc_misses = np.zeros((len(hw.pwc), nk), dtype=np.int64)
        self.c_mask = np.array([x - 1 if x & (x - 1) == 0 else -1 for x in self.c_sets.tolist()], dtype=np.int64)
        self.last = np.full(len(caches), -1, dtype=np.int64)
        self.caches = N.Caches(
            self.c_sets,
            self.c_mask,
            self.c_ways,
            self.c_pways,
            self.c_base,
            self.c_sbase,
            self.c_shift,
            self.c_skip,
            self.last,
            self.tags,
            self.orders,
            self.stamps,
            self.clock,
            self.words,
        )
        self.counts = N.Counts(self.host_refs, self.ntlb_hits, self.ntlb_misses, self.pwc_hits, self.pwc_misses)
        specialised = specialize is True or (specialize == "auto" and (n_accesses >= SPECIALIZE_MIN_ACCESSES or self.shape in preset_shapes()))
        self.kernel = S.nested(self.shape if specialised else None)
        self.pipeline = pipelined(chunk_size, n_accesses)
        self._spare = None  # the walk log the next chunk is translated into, while the other is replayed
        self._worker = None  # the thread replaying, made for the first chunk replayed beside the next
        self._dropped = None  # what ends the worker if the stage is dropped before finish
        self._pending = None  # the replay under way there

    def __call__(self, a, ka, kcfg, kst):
        """Replay the chunk's walk log (``kst.wlog``) and empty it; pipelined, start its replay and
        return the translation kernel's state with the other walk log, for the next chunk."""
        nlog = int(kst.wlog_n[0])
        kst.wlog_n[0] = 0
        self._wait()  # the chunks before, first
        handed = self.pipeline and nlog >= 3 * PIPELINE_MIN_WALKS
        if handed and self._worker is None:
            self._replay(kst.wlog, 0, ka)  # compiled here if it is not yet: Ctrl-C need not wait for it
            self._worker = _ReplayThread()  # kept before it starts: finish ends it, however the start ends
            self._dropped = weakref.finalize(self, self._worker.submit, None)  # and a stage dropped unfinished
            try:
                self._worker.start()
            except RuntimeError:  # no thread can start (the interpreter is shutting down)
                self._dropped.detach()
                self._worker, self.pipeline, handed = None, False, False
        if not handed:
            self._replay(kst.wlog, nlog, ka)
            return None
        log = kst.wlog
        if self._spare is None:
            self._spare = np.empty_like(log)
        spare, self._spare = self._spare, log
        # the chunk's kinds are copied: a workload may fill the same buffer with the next chunk's
        self._pending = self._worker.submit(self._replay, log, nlog, ka.copy())
        return kst._replace(wlog=spare)

    def finish(self) -> None:
        """Wait for the replay under way, if any (raising the error it ended with), and end the
        worker thread; a KeyboardInterrupt meanwhile is raised once both are done."""
        try:
            self._wait()
        finally:
            worker, self._worker = self._worker, None
            if worker is not None:
                self._dropped.detach()
                worker.close()

    def _wait(self) -> None:
        job, self._pending = self._pending, None
        if job is not None:
            job.result()

    def _replay(self, wlog, nlog: int, kinds) -> None:
        used = self.kernel(
            wlog,
            nlog,
            kinds,
            self.g_shift,
            self.g_bits,
            self.g_leaf,
            self.t_frame_bits,
            self.page_shift,
            self.d_frame_bits,
            self.d_area,
            self.d_levels,
            self.d_shift,
            self.ram_bits,
            self.host_levels,
            self.ntlb,
            self.caches,
            self.counts,
        )
        if used != nlog:
            raise RuntimeError(f"internal error: the nested replay used {used} of {nlog} walk-log words")

    def add_to(self, dv: dict, coords: dict, attrs: dict) -> None:
        """The host's counters into a Dataset's parts: ``walk_refs`` gains the host's references."""
        dims, guest, wattrs = dv["walk_refs"]
        dv["walk_refs"] = (dims, guest + self.parts.fold(self.host_refs), {**wattrs, "long_name": "page-table memory references, the guest's and the host's"})
        dv["host_walk_refs"] = (
            ("side", "page_size"),
            self.parts.fold(self.host_refs),
            {"units": "memory references", "long_name": "the host's page-table references of nested walks (translating guest-physical addresses)"},
        )
        if self.ntlb:
            dv["nested_tlb_hits"] = (
                ("page_size",),
                self.parts.fold(self.ntlb_hits),
                {"units": "lookups", "long_name": "guest-physical translations found in the nested TLB"},
            )
            dv["nested_tlb_misses"] = (
                ("page_size",),
                self.parts.fold(self.ntlb_misses),
                {"units": "lookups", "long_name": "guest-physical translations that walked the host's table"},
            )
        if self.pwc_names:
            coords["host_pwc"] = ("host_pwc", np.array(self.pwc_names))
            fold = self.parts.fold
            dv["host_pwc_hits"] = (("host_pwc", "page_size"), fold(self.pwc_hits), {"units": "lookups", "long_name": "host page-walk cache hits"})
            dv["host_pwc_misses"] = (("host_pwc", "page_size"), fold(self.pwc_misses), {"units": "lookups", "long_name": "host page-walk cache misses"})
        h = self.host
        attrs["host"] = json.dumps(
            {
                "page_size": format_size(h.page_size),
                "level_bits": list(h.walker.level_bits),
                "pwc": [(p.name, p.skip, p.entries, p.ways) for p in h.walker.pwc],
                "nested_tlb": h.nested_tlb,
                "nested_tlb_ways": h.nested_tlb_ways,
                "guest_ram": format_size(h.guest_ram),
                "regions": [[a, b, format_size(p)] for a, b, p in h.regions],
                "assumed": list(h.assumed),
            }
        )


class _Job:
    """Work handed to the worker thread (``fn`` None: the worker's last). :meth:`result` waits for
    its end through Ctrl-C (a replay is at most one chunk's) and raises the error it ended with, or
    the first KeyboardInterrupt meanwhile (that error as its context). The wait uses a bare lock and
    a flag, never a Condition: an interrupt between two of a Condition's steps can leave its lock
    held, and a wait after that never ends."""

    def __init__(self, fn, args):
        self.fn, self.args, self.error, self.ended = fn, args, None, False
        self._lock = threading.Lock()
        self._lock.acquire()  # released by the worker when the job ends

    def end(self, error=None) -> None:
        """The worker's last word on the job."""
        self.error, self.fn, self.args = error, None, None  # holding nothing of the run (its stage)
        self.ended = True
        self._lock.release()

    def result(self) -> None:
        interrupted = None
        while not self.ended:
            try:
                self._lock.acquire(timeout=0.1)  # whether it acquires is not used: the flag decides
            except KeyboardInterrupt as e:
                interrupted = interrupted or e
        if interrupted is not None:
            if self.error is not None:
                interrupted.__context__ = self.error
            raise interrupted
        if self.error is not None:
            raise self.error


class _ReplayThread:
    """One daemon thread running the work handed to it, in order; :meth:`close` ends it."""

    def __init__(self):
        self._jobs = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._serve, name="pagesim nested replay", daemon=True)

    def start(self) -> None:
        self._thread.start()  # RuntimeError at interpreter shutdown

    def _serve(self) -> None:
        while True:
            job = self._jobs.get()
            last = job.fn is None
            try:
                if not last:
                    job.fn(*job.args)
            except BaseException as e:  # raised in the calling thread by _Job.result
                job.end(e)
            else:
                job.end()
            job = None  # nothing of the run is held while it waits
            if last:
                return

    def submit(self, fn, *args) -> _Job:
        job = _Job(fn, args)
        self._jobs.put(job)
        return job

    def close(self) -> None:
        """End the thread after the work handed to it. A thread whose start was interrupted
        before it ran ends by itself when it reaches the last job."""
        last = self.submit(None)
        if self._thread.is_alive():
            last.result()


# A chunk of fewer walks is replayed on the calling thread: handing a chunk over and waiting for it
# costs tens of microseconds, and so short a replay would overlap little of the next translation.
PIPELINE_MIN_WALKS = 8192


# A pipelined run's chunks are at most this long: its first chunk's translation and its last chunk's
# replay are not overlapped with anything.
PIPELINE_CHUNK = 1 << 18


def pipelined(chunk_size: int, n_accesses: int) -> bool:
    """Whether a run's nested replay runs on a thread of its own beside the translation: when the
    run has more than one chunk of ``chunk_size`` accesses (at most ``PIPELINE_CHUNK``, what a
    pipelined run's chunks are), this process may keep two cores busy (:func:`usable_cores`), the
    run is called from the main thread (a sweep's threads, or a caller's own, keep the cores busy
    already) and the environment variable ``PAGESIM_PIPELINE`` is not "0" (set it so when the
    cores are kept busy otherwise, e.g. by a pool of processes each running simulations)."""
    flag = os.environ.get("PAGESIM_PIPELINE") or "1"  # set empty: as unset
    if flag not in ("0", "1"):
        raise ValueError(f"PAGESIM_PIPELINE={flag!r}: allowed are '1' (the default: the replay beside the translation when a core is free) and '0' (never)")
    return flag == "1" and 0 < min(chunk_size, PIPELINE_CHUNK) < n_accesses and usable_cores() > 1 and threading.current_thread() is threading.main_thread()


def untimed_error(m: Machine) -> ValueError:
    """The error of a timed run on virtualised machine ``m``."""
    return ValueError(f"machine {m.name!r} is virtualised: the timing model does not replay nested walks through caches (simulate() counts them)")


def host_caches(host) -> list[tuple[int, int, int, int]]:
    """The host's caches as (sets, ways, key shift, levels skipped): the nested TLB first (when
    there is one; it skips nothing: -1), then the host's page-walk caches."""
    hw = host.walker
    caches = [(host.nested_tlb // host.nested_tlb_ways, host.nested_tlb_ways, log2(host.page_size), -1)] if host.nested_tlb else []
    return caches + [(p.entries // p.ways, p.ways, hw.pwc_shift(p.skip), p.skip) for p in hw.pwc]


def host_shape(host) -> tuple:
    """The host's part of a :func:`replay_shape`: 1 with a nested TLB, else 0; each cache's sets, ways,
    levels skipped, and whether it is kept as lane lists (``rules.lane_lookup``: a page-walk cache
    of up to ``LANE_WAYS`` ways whose every key, a guest-physical address in one of the host page
    sizes' areas of guest RAM shifted by the cache's shift, lies below ``LANE_EMPTY``). The key
    shifts are read at run time, so the host page changes it only through that test."""
    top = (len(host.page_sizes) << log2(host.guest_ram)) - 1  # the highest guest-physical address (nested.py)
    return (
        1 if host.nested_tlb else 0,
        tuple((sets, ways, skip, skip >= 0 and ways <= LANE_WAYS and top >> shift < LANE_EMPTY) for sets, ways, shift, skip in host_caches(host)),
    )


def guest_shape(m: Machine) -> tuple:
    """Each guest level's (shift, bits), top level first: the shift of the address bits that index
    its tables and their count (``NestedStage``'s ``g_shift`` and ``g_bits``). Guest RAM is not
    part of it (a table's frame bits are read at run time): ``guest_ram`` changes a replay shape
    only through :func:`host_shape`'s test of which caches' keys fit lane lists."""
    g = m.walker
    bits = list(g.level_bits)
    return tuple((g.base_shift + sum(bits[lv + 1 :]), b) for lv, b in enumerate(bits))


def replay_shape(m: Machine) -> tuple:
    """What a specialised replay of virtualised machine ``m`` compiles in (``writer.nested``): its
    host caches' :func:`host_shape`, then its guest levels' :func:`guest_shape`."""
    return (*host_shape(m.host), guest_shape(m))


@lru_cache(maxsize=None)
def preset_hosts() -> tuple:
    """(shape, machine) for each distinct replay shape (:func:`replay_shape`) of the radix presets
    virtualised, with and without a nested TLB: ``pagesim warm`` compiles their replays."""
    hosts = {}
    with warnings.catch_warnings():  # a preset whose processor had no nested paging warns: not the caller's
        warnings.simplefilter("ignore", UserWarning)
        for name in machines():
            m = machine(name)
            if m.walker.kind == "radix":
                for entries in (0, 32):
                    vm = m.virtualised(m.base_page, nested_tlb=entries)
                    hosts.setdefault(replay_shape(vm), vm)
    return tuple(hosts.items())


def preset_shapes() -> frozenset:
    """The replay shapes of :func:`preset_hosts`."""
    return frozenset(shape for shape, _ in preset_hosts())
