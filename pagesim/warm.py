"""``pagesim warm``: compile the kernels the notebooks use into the on-disk cache, so a fresh
session loads them instead of compiling (numba caches compiled kernels in the directory chosen in
``pagesim._kernels._jit``; the first call of each kernel in a new environment otherwise compiles
it, seconds each).

Stages, each a tiny run through the code path that compiles its kernels:
  - the generic translation kernel of each walker (radix, hashed, TSB, VHPT; with and without
    fault-around) and every workload generator;
  - raw addresses laid out (``simulate(m, addresses=a)``), the OS stage with a PhysicalMemory, a
    RAM limit, several processes with the data-cache model (the generic kernel with its walk log),
    reuse distances, the pointer chase;
  - with ``specialised``: every preset at each of its page sizes with ``specialize='auto'``, which
    compiles the specialised copy of each preset's chain shape (20 shapes for the 56 pairs, 3-6 s
    of CPU each), the kernel ``'auto'`` runs for presets at any length.

numba keys its cache on the CPU model, so kernels warmed on one CPU are compiled again on another
unless ``NUMBA_CPU_NAME=generic`` is set both when warming and when running (binder/postBuild and
binder/start do so).
"""

from __future__ import annotations

import time
import warnings


def stages(specialised: bool = True):
    """(name, function) pairs in the order ``warm`` runs them."""
    return [
        ("generic translation kernels and workload generators", _generic),
        ("address layout, OS stage, RAM limit, processes, reuse, chase", _os_and_extras),
    ] + ([("specialised kernels of every preset's chain shapes", _presets)] if specialised else [])


def warm(specialised: bool = True, out=print) -> dict[str, float]:
    """Run every stage; returns seconds per stage."""
    times = {}
    for name, fn in stages(specialised):
        t = time.perf_counter()
        n = fn()
        times[name] = time.perf_counter() - t
        out(f"pagesim warm: {name}: {times[name]:.1f} s" + (f" ({n})" if n else ""))
    return times


def _generic():
    import numpy as np

    from .simulate import simulate
    from .workloads import WORKLOADS

    with warnings.catch_warnings():  # whole-pass workloads run one pass, more than 2000: only compiling matters here
        warnings.simplefilter("ignore", UserWarning)
        for name in WORKLOADS:
            simulate("skylake", name, accesses=2000, specialize=False)
    a = (np.arange(2000, dtype=np.uint64) * np.uint64(4096)) + np.uint64(1 << 40)
    simulate("skylake", addresses=a, kinds=(np.arange(2000) % 2).astype(np.uint8), specialize=False)
    for name in ("power6", "ultrasparc-iii", "itanium2"):  # the hashed, TSB and VHPT walkers
        simulate(name, "random", working_set="16M", accesses=1000, specialize=False)
    for name in ("skylake", "power6"):  # fault-around (page-cache and file mappings)
        simulate(name, "touch", size="1M", pattern="random", accesses=8, fault_around=16, specialize=False)
    return f"{len(WORKLOADS)} workloads"


def _os_and_extras():
    import numpy as np

    from .memory import PhysicalMemory
    from .pressure import Ram
    from .processes import simulate_processes
    from .simulate import simulate

    a = (np.random.default_rng(0).integers(0, 1 << 30, 70_000, dtype=np.uint64)) + np.uint64(1 << 40)
    simulate("skylake", addresses=a)  # laying out: both the bitmap and the hash-set path
    simulate("skylake", "random", working_set="64M", accesses=2000, policy="thp", memory=PhysicalMemory("1G"), compaction=True)
    simulate("skylake", "random", working_set="64M", accesses=2000, ram=Ram(limit="80M"))
    simulate("skylake", "random", working_set="64M", accesses=2000, ram=Ram(limit="80M", reclaim="lru"))
    simulate_processes("skylake", "random", processes=2, quantum=500, working_set="8M", accesses=1000)
    from ._kernels.chase import chase
    from ._kernels.reuse import stack_distances

    stack_distances(np.arange(10, dtype=np.int64) % 3, 3)
    words = np.zeros(8, dtype=np.int64)
    chase(words, 0, 4)
    return None


def _presets():
    """Every preset at each of its page sizes: compiles (once, cached) the specialised copy of each
    chain shape, which ``specialize='auto'`` uses for presets at any run length."""
    from ._kernels import specialize as S
    from .machines import machine, machines
    from .simulate import simulate

    before = len(S._loaded)
    n = 0
    for name in machines():
        for p in machine(name).page_sizes:
            simulate(name, "random", working_set="16M", accesses=1000, page_size=p)
            n += 1
    return f"{n} machine and page-size pairs, {len(S._loaded) - before} kernels loaded"
