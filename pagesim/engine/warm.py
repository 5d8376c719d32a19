"""``pagesim warm``: compile the kernels the notebooks use into the on-disk cache, so a fresh
session loads them instead of compiling (numba caches compiled kernels in the directory chosen in
``pagesim._kernels._jit``; the first call of each kernel in a new environment otherwise compiles
it, seconds each).

Stages, each a tiny run through the code path that compiles its kernels:
  - the generic translation kernel of each walker (radix, hashed, TSB, VHPT; with and without
    fault-around) and every workload generator;
  - raw addresses laid out (``simulate(m, addresses=a)``), the OS stage with a PhysicalMemory, a
    RAM limit, several processes with the data-cache model (the generic kernel with its walk log),
    reuse distances, the pointer chase, the trace reader's byte parser;
  - the timing model's kernels (``simulate_timed`` with each cache hierarchy);
  - with ``specialised``: every preset at each of its page sizes with ``specialize='auto'``, which
    compiles the specialised copy of each preset's chain shape (``stages.preset_shapes()``;
    3-6 s of CPU each), the kernel ``'auto'`` runs for presets at
    any length; then the other
    translation kernels the notebooks load (their documents' own machines, the walk log of the
    data-cache model: ``pagesim/data/kernels.json``, which ``pagesim warm --record`` rewrites by
    running every notebook). Without them a first ``make run`` after ``pagesim warm`` compiled
    nine kernels, 30 s of CPU, inside the notebooks.

numba keys its cache on the CPU model, so kernels warmed on one CPU are compiled again on another
unless ``NUMBA_CPU_NAME=generic`` is set both when warming and when running (binder/postBuild and
binder/start do so).
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from importlib.resources import files
from pathlib import Path

import numpy as np

from .._kernels import _jit
from .._kernels import specialize as S
from .._kernels.chase import chase
from .._kernels.reuse import stack_distances
from .._kernels.textparse import parse_text
from ..model.machines import machine, machines
from ..sources.workloads import ACCESS_FIELDS, WORKLOADS
from ..system.memory import PhysicalMemory
from ..system.pressure import Ram
from .nested import preset_hosts
from .processes import simulate_processes
from .simulate import simulate
from .timing import hierarchies, simulate_timed

# What each stage compiles, and about how long it takes in an empty cache: seconds of wall time
# measured with `pagesim warm` on this project's 2-core machine with other jobs running (a warm cache
# loads each stage in seconds): 97, 61, 110 and 219 s, 8 minutes in all, with other jobs keeping both
# cores busy. Shown as "about", never checked; once a stage has run, the time it took on this machine
# is shown instead (kept in the cache directory).
_ABOUT = {
    "generic translation kernels and workload generators": ("the generic kernel of each walker and every workload generator", 100),
    "address layout, OS stage, RAM limit, processes, reuse, chase": ("the layout, OS, reclaim, multi-process, reuse and chase kernels", 60),
    "specialised kernels of every preset's chain shapes": ("one specialised kernel per chain shape of the presets, 3-6 s each", 110),
    "the other kernels the notebooks load": ("the kernels listed in pagesim/data/kernels.json", 220),
}


def stages(specialised: bool = True):
    """(name, function) pairs in the order ``warm`` runs them."""
    return [
        ("generic translation kernels and workload generators", _generic),
        ("address layout, OS stage, RAM limit, processes, reuse, chase", _os_and_extras),
    ] + ([("specialised kernels of every preset's chain shapes", _presets), ("the other kernels the notebooks load", _recorded)] if specialised else [])


def _jit_dir():

    return _jit


def _times_file():
    d = _jit_dir().CACHE_DIR
    return None if d is None else d / "warm-times.json"


def _last_times() -> dict:

    f = _times_file()
    try:
        return json.loads(f.read_text(encoding="utf-8")) if f is not None else {}
    except (OSError, ValueError):
        return {}


def _keep_times(times: dict) -> None:

    f = _times_file()
    if f is None:
        return
    try:
        tmp = f.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps({**_last_times(), **times}), encoding="utf-8")
        os.replace(tmp, f)
    except OSError:  # only a hint for the next run
        pass


def warm(specialised: bool = True, out=print) -> dict[str, float]:
    """Run every stage, saying before each what it compiles and about how long it takes; returns
    seconds per stage."""
    times = {}
    todo = stages(specialised)
    last = _last_times()
    if not last:
        minutes = sum(_ABOUT[name][1] for name, _ in todo) / 60
        out(f"pagesim warm: {len(todo)} stages; in an empty cache they compile for about {minutes:.0f} minutes, after that they load in seconds")
    for i, (name, fn) in enumerate(todo, 1):
        what, about = _ABOUT[name]
        hint = f"{last[name]:.0f} s the last time here" if name in last else f"about {about} s in an empty cache"
        out(f"pagesim warm: [{i}/{len(todo)}] {what} ({hint}) ...")
        t = time.perf_counter()
        n = fn()
        times[name] = time.perf_counter() - t
        _keep_times({name: times[name]})
        out(f"pagesim warm: [{i}/{len(todo)}] done in {times[name]:.1f} s" + (f" ({n})" if n else ""))
    return times


def _generic():

    with warnings.catch_warnings():  # whole-pass workloads run one pass, more than 2000: only compiling matters here
        warnings.simplefilter("ignore", UserWarning)
        for name, cls in WORKLOADS.items():
            sized = {f.name for f in dataclasses.fields(cls)} & set(ACCESS_FIELDS)
            simulate("skylake", name, **(dict(accesses=2000) if sized else {}), specialize=False)  # the others at their defaults
    a = (np.arange(2000, dtype=np.uint64) * np.uint64(4096)) + np.uint64(1 << 40)
    simulate("skylake", addresses=a, kinds=(np.arange(2000) % 2).astype(np.uint8), specialize=False)
    for name in ("power6", "ultrasparc-iii", "itanium2"):  # the hashed, TSB and VHPT walkers
        simulate(name, "random", working_set="16M", accesses=1000, specialize=False)
    for name in ("skylake", "power6"):  # fault-around (page-cache and file mappings)
        simulate(name, "touch", size="1M", pattern="random", accesses=8, fault_around=16, specialize=False)
    simulate(machine("skylake").virtualised("4K"), "random", working_set="16M", accesses=1000, specialize=False)  # the generic nested replay
    return f"{len(WORKLOADS)} workloads"


def _os_and_extras():

    a = (np.random.default_rng(0).integers(0, 1 << 30, 70_000, dtype=np.uint64)) + np.uint64(1 << 40)
    simulate("skylake", addresses=a)  # laying out: both the bitmap and the hash-set path
    simulate("skylake", "random", working_set="64M", accesses=2000, policy="thp", memory=PhysicalMemory("1G"), compaction=True)
    simulate("skylake", "random", working_set="64M", accesses=2000, ram=Ram(limit="80M"))
    simulate("skylake", "random", working_set="64M", accesses=2000, ram=Ram(limit="80M", reclaim="lru"))
    simulate_processes("skylake", "random", processes=2, quantum=500, working_set="8M", accesses=1000)

    for name in hierarchies():  # the general and the power-of-two timing kernels
        simulate_timed("skylake", "random", working_set="16M", accesses=1000, hierarchy=name)

    stack_distances(np.arange(10, dtype=np.int64) % 3, 3)
    words = np.zeros(8, dtype=np.int64)
    chase(words, 0, 4)
    # the trace reader's byte parser, on the read-only bytes it is given
    parse_text(np.frombuffer(b"0x1000\n", dtype=np.uint8), 0, 2, 64, np.zeros(2, dtype=np.uint64), np.zeros(2, dtype=np.uint8), 0)
    return None


def _presets():
    """Every preset at each of its page sizes: compiles (once, cached) the specialised copy of each
    chain shape, which ``specialize='auto'`` uses for presets at any run length; then the nested
    replay of each radix preset's replay shape (``nested.preset_hosts``)."""
    before = len(S.loaded())
    n = 0
    for name in machines():
        for p in machine(name).page_sizes:
            simulate(name, "random", working_set="16M", accesses=1000, page_size=p)
            n += 1
    hosts = preset_hosts()
    for _, vm in hosts:
        simulate(vm, "random", working_set="16M", accesses=1000)
    return f"{n} machine and page-size pairs, {len(hosts)} nested replay shapes, {len(S.loaded()) - before} kernels loaded"


KERNELS_FILE = "data/kernels.json"


def _recorded():
    """The kernels listed in ``pagesim/data/kernels.json`` (what the notebooks load), each compiled
    for the one signature every kernel of its kind is called with, or loaded from the cache if it
    is there."""
    simulate("skylake", "random", working_set="16M", accesses=1000)  # one kernel of each kind called: its signature
    simulate(machine("skylake").virtualised("4K"), "random", working_set="16M", accesses=1000, specialize=False)
    jitted = lambda fn: "replay" if "replay" in fn.__globals__ else "translate_chunk"  # noqa: E731 - a module's numba function
    sigs = {}
    for fn in S.loaded():
        sigs.setdefault(jitted(fn), set()).update(fn.__globals__[jitted(fn)].signatures)
    keys = json.loads(files("pagesim").joinpath(KERNELS_FILE).read_text(encoding="utf-8"))
    for kind, key in keys:
        fn = S.by_key(kind, S.key_from_json(key))
        for sig in sigs[jitted(fn)]:
            fn.__globals__[jitted(fn)].compile(sig)
    return f"{len(keys)} kernels"


def record(out=print) -> int:
    """Run every notebook, full and quick, recording the translation kernels they load, and write
    the ones the stages before ``_recorded`` do not already compile to ``pagesim/data/kernels.json``
    (a maintainer's command: run it after a notebook or a study changes its machines)."""
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "kernels.jsonl"
        env = dict(os.environ, PAGESIM_RECORD_KERNELS=str(log))
        for flag in ([], ["--quick"]):
            subprocess.run([sys.executable, "-m", "pagesim", "notebooks", "--out", str(Path(tmp) / "nb"), *flag], env=env, check=True)
        used = {(kind, S.key_from_json(key)) for kind, key in map(json.loads, log.read_text(encoding="utf-8").splitlines())}
        # what the other stages compile, recorded the same way in a child process
        env["PAGESIM_RECORD_KERNELS"] = str(Path(tmp) / "stages.jsonl")
        code = "from pagesim import warm as w\nfor name, fn in w.stages()[:-1]: fn()"
        subprocess.run([sys.executable, "-c", code], env=env, check=True)
        staged = {(kind, S.key_from_json(key)) for kind, key in map(json.loads, Path(env["PAGESIM_RECORD_KERNELS"]).read_text(encoding="utf-8").splitlines())}
    rest = sorted(used - staged, key=repr)
    path = Path(__file__).resolve().parents[1] / KERNELS_FILE
    tmp_path = path.with_suffix(".tmp")
    tmp_path.write_text(json.dumps([[kind, key] for kind, key in rest], indent=1) + "\n", encoding="utf-8")
    os.replace(tmp_path, path)
    out(f"pagesim warm --record: the notebooks load {len(used)} translation kernels, {len(rest)} beyond the other stages; written to {path}")
    return 0
