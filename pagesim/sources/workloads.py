"""Workloads: named generators of virtual addresses, produced in chunks from a seed.

Each workload names the arrays it touches (``spans``: name and length in bytes); ``simulate``
places them as regions of a layout and the workload then yields absolute addresses, chunk by
chunk, so 10**9 accesses need no more memory than 10**6. The same seed gives the same addresses
whatever the chunk size.

>>> import pagesim
>>> w = pagesim.workload("random", working_set="1G", accesses=1_000_000)
"""

from __future__ import annotations

import collections.abc
import dataclasses
import json
from dataclasses import dataclass

import numpy as np

from .._kernels.workloads import gen_blocked_matrix, gen_hot_cold, gen_md, gen_planes, gen_pointer_chase, gen_sequential, gen_triad, gen_uniform_random
from ..core.check import check_choice, check_fraction, check_int, check_number, check_seed, warn
from ..core.units import format_size, parse_size

#: the parameters ``workload(name, accesses=...)`` can set, in the order it tries them
ACCESS_FIELDS = ("accesses", "max_accesses", "passes", "steps")
MAX_ACCESSES = 1 << 40  # about 10**12: beyond that a run takes days
ELEMENT = 8  # bytes of one double / pointer


def _count(name, value, lo=1, hi=MAX_ACCESSES) -> int:
    if isinstance(value, float) and value.is_integer():  # accesses=1e6
        value = int(value)
    return check_int(name, value, lo, hi)


def _bytes(name, value, lo=ELEMENT, hi=1 << 46) -> int:
    v = parse_size(value, name)
    if not lo <= v <= hi:
        raise ValueError(f"{name}={format_size(v)} is out of range: allowed {format_size(lo)}..{format_size(hi)}")
    return v


@dataclass(frozen=True)
class Workload:
    """Base class. Subclasses define ``spans()`` and ``_chunks(bases, chunk, seed)``."""

    name = "workload"
    #: non-translation work per access, in cycles (modelling assumption used by the cost model)
    work_cycles: float = 1.0

    def __post_init__(self):
        if self.work_cycles is None and type(self).work_cycles_later:
            return  # the subclass settles it (a heap: from its workload's parameters), then checks it
        check_number("work_cycles", self.work_cycles, 0, 1e6)

    #: True for a workload whose work_cycles defaults to None, settled by its own __post_init__
    work_cycles_later = False

    def __init_subclass__(cls, **kw):
        # every workload checks work_cycles first, whatever its own __post_init__ checks
        super().__init_subclass__(**kw)
        own = cls.__dict__.get("__post_init__")
        if own is not None:

            def post_init(self, _own=own):
                Workload.__post_init__(self)
                _own(self)

            post_init.__doc__ = own.__doc__
            cls.__post_init__ = post_init

    def spans(self) -> list[tuple[str, int]]:
        raise NotImplementedError

    @property
    def n_accesses(self) -> int:
        raise NotImplementedError

    @property
    def working_set(self) -> int:
        return sum(n for _, n in self.spans())

    def chunks(self, bases, chunk: int = 1 << 20, seed: int = 0):
        """Yield (addresses uint64, kinds or None) with at most ``chunk`` accesses each."""
        for a in self._chunks(*self._checked(bases, chunk, seed)):
            yield a, None

    def _checked(self, bases, chunk, seed) -> tuple[list, int, int]:
        """``bases`` (an address per span, each where its span ends at or below 2**63, as the kernels hold
        addresses as signed 64-bit integers; more are ignored), ``chunk`` (>= 1) and ``seed``
        (0..2**63-1), checked before they reach a generator."""
        spans = self.spans()
        if not isinstance(bases, (list, tuple, np.ndarray)) or len(bases) < len(spans):
            raise ValueError(
                f"bases={bases!r} must give a base address for each span of {self.name}: {len(spans)} ({', '.join(n for n, _ in spans)}); more are ignored"
            )
        out = [check_int(f"bases[{i}]", b, 0, MAX_ADDRESS - n) for i, (b, (_, n)) in enumerate(zip(bases, spans))]
        return out, check_int("chunk", chunk, 1), check_seed(seed)

    def params(self) -> dict:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    @property
    def label(self) -> str:
        return f"{self.name}({format_size(self.working_set)})"


@dataclass(frozen=True)
class Sequential(Workload):
    """Read every ``stride`` bytes of one array from start to end, ``passes`` times (memset when stride=8)."""

    name = "sequential"
    size: int = 1 << 20
    stride: int = ELEMENT
    passes: int = 1

    def __post_init__(self):
        object.__setattr__(self, "size", _bytes("size", self.size))
        object.__setattr__(self, "stride", _bytes("stride", self.stride, 1, self.size))
        object.__setattr__(self, "passes", _count("passes", self.passes, 1, 1 << 20))

    def spans(self):
        return [("array", self.size)]

    @property
    def per_pass(self):
        return -(-self.size // self.stride)

    @property
    def n_accesses(self):
        return self.per_pass * self.passes

    def _chunks(self, bases, chunk, seed):
        per = self.per_pass
        for start in range(0, self.n_accesses, chunk):
            out = np.empty(min(chunk, self.n_accesses - start), dtype=np.int64)
            gen_sequential(out, start, per, bases[0], self.stride)
            yield out.view(np.uint64)


@dataclass(frozen=True)
class Strided(Sequential):
    """Like :class:`Sequential` with a large stride: one access per ``stride`` bytes (strided solvers)."""

    name = "strided"
    stride: int = 4096


@dataclass(frozen=True)
class Planes(Workload):
    """A solver sweeping the slow dimension of a 3-D array: ``planes`` planes of ``plane`` bytes; for
    each position in a plane (every ``step`` bytes), touch that position in every plane in turn.
    Consecutive accesses are ``plane`` bytes apart (the "large memory strides in a solver" of the
    CSCS paper): the pages in use are one per plane, revisited at the next position."""

    name = "planes"
    planes: int = 64
    plane: int = 1 << 20
    step: int = ELEMENT
    accesses: int = 1_000_000

    def __post_init__(self):
        object.__setattr__(self, "planes", _count("planes", self.planes, 1, 1 << 16))
        object.__setattr__(self, "plane", _bytes("plane", self.plane))
        object.__setattr__(self, "step", _bytes("step", self.step, 1, self.plane))
        object.__setattr__(self, "accesses", _count("accesses", self.accesses))

    def spans(self):
        return [("grid", self.planes * self.plane)]

    @property
    def n_accesses(self):
        return self.accesses

    def _chunks(self, bases, chunk, seed):
        per_plane = -(-self.plane // self.step)
        for start in range(0, self.accesses, chunk):
            out = np.empty(min(chunk, self.accesses - start), dtype=np.int64)
            gen_planes(out, start, self.planes, per_plane, bases[0], self.plane, self.step)
            yield out.view(np.uint64)


@dataclass(frozen=True)
class StreamTriad(Workload):
    """STREAM triad a[i] = b[i] + q*c[i] over three arrays of ``n`` doubles: loads b[i], c[i], stores a[i]."""

    name = "stream"
    n: int = 1 << 17
    passes: int = 1

    def __post_init__(self):
        object.__setattr__(self, "n", _count("n", self.n, 1, 1 << 40))
        object.__setattr__(self, "passes", _count("passes", self.passes, 1, 1 << 20))

    def spans(self):
        return [("a", self.n * ELEMENT), ("b", self.n * ELEMENT), ("c", self.n * ELEMENT)]

    @property
    def n_accesses(self):
        return 3 * self.n * self.passes

    def _chunks(self, bases, chunk, seed):
        for start in range(0, self.n_accesses, chunk):
            out = np.empty(min(chunk, self.n_accesses - start), dtype=np.int64)
            gen_triad(out, start, self.n, bases[1], bases[2], bases[0], ELEMENT)  # loads b, c; stores a
            yield out.view(np.uint64)


@dataclass(frozen=True)
class UniformRandom(Workload):
    """``accesses`` uniformly random 8-byte accesses over ``size`` bytes (GUPS / RandomAccess)."""

    name = "random"
    size: int = 1 << 30
    accesses: int = 1_000_000

    def __post_init__(self):
        object.__setattr__(self, "size", _bytes("size", self.size))
        object.__setattr__(self, "accesses", _count("accesses", self.accesses))

    def spans(self):
        return [("table", self.size)]

    @property
    def n_accesses(self):
        return self.accesses

    def _chunks(self, bases, chunk, seed):
        slots = self.size // ELEMENT
        for start in range(0, self.accesses, chunk):
            out = np.empty(min(chunk, self.accesses - start), dtype=np.int64)
            gen_uniform_random(out, start, seed, slots, bases[0], ELEMENT)
            yield out.view(np.uint64)


@dataclass(frozen=True)
class HotCold(Workload):
    """Random 8-byte accesses with locality: a fraction ``hot_fraction`` of them falls uniformly in
    the first ``hot`` bytes of the region (a live set: a Java heap's young objects, a solver's
    current planes), the rest uniformly anywhere in ``size`` bytes. hot_fraction=0 is GUPS; 1 is
    GUPS over ``hot`` bytes."""

    name = "hot_cold"
    size: int = 1 << 30
    hot: int = 4 << 20
    hot_fraction: float = 0.5
    accesses: int = 1_000_000

    def __post_init__(self):
        object.__setattr__(self, "size", _bytes("size", self.size))
        object.__setattr__(self, "hot", _bytes("hot", self.hot))
        if self.hot > self.size:
            raise ValueError(f"hot={format_size(self.hot)} must not exceed size={format_size(self.size)}")
        object.__setattr__(self, "hot_fraction", check_fraction("hot_fraction", self.hot_fraction))
        object.__setattr__(self, "accesses", _count("accesses", self.accesses))

    def spans(self):
        return [("heap", self.size)]

    @property
    def n_accesses(self):
        return self.accesses

    def _chunks(self, bases, chunk, seed):
        slots = self.size // ELEMENT
        hot = max(1, self.hot // ELEMENT)
        thr = min((1 << 64) - 1, int(float(self.hot_fraction) * (1 << 64)))
        for start in range(0, self.accesses, chunk):
            out = np.empty(min(chunk, self.accesses - start), dtype=np.int64)
            gen_hot_cold(out, start, seed, slots, hot, np.uint64(thr), bases[0], ELEMENT)
            yield out.view(np.uint64)


@dataclass(frozen=True)
class PointerChase(Workload):
    """Follow a random cycle through ``size / node`` nodes of ``node`` bytes, ``accesses`` steps.

    The cycle is a full-period linear congruential sequence over the next power of two, skipping
    values past the last node, so it needs no permutation table (memory stays flat)."""

    name = "pointer_chase"
    size: int = 1 << 30
    accesses: int = 1_000_000
    node: int = 64

    def __post_init__(self):
        object.__setattr__(self, "size", _bytes("size", self.size))
        object.__setattr__(self, "node", _bytes("node", self.node, ELEMENT))
        if self.node > self.size:
            raise ValueError(
                f"size={format_size(self.size)} is smaller than one node of node={format_size(self.node)}: "
                f"the minimum size is {format_size(self.node)} (or give a smaller node)"
            )
        object.__setattr__(self, "accesses", _count("accesses", self.accesses))

    def spans(self):
        return [("nodes", self.size)]

    @property
    def n_accesses(self):
        return self.accesses

    def _chunks(self, bases, chunk, seed):
        nodes = self.size // self.node
        bits = max(2, int(nodes - 1).bit_length())
        rng = np.random.default_rng(seed)
        a = int(rng.integers(0, 1 << 20)) * 4 + 1  # a = 1 mod 4 and c odd: full period mod 2**bits
        c = int(rng.integers(0, 1 << 20)) * 2 + 1
        state = np.array([int(rng.integers(0, nodes))], dtype=np.int64)
        for start in range(0, self.accesses, chunk):
            out = np.empty(min(chunk, self.accesses - start), dtype=np.int64)
            gen_pointer_chase(out, state, a, c, bits, nodes, bases[0], self.node)
            yield out.view(np.uint64)


@dataclass(frozen=True)
class BlockedMatrix(Workload):
    """Tiled matrix multiply C += A B on n x n doubles with b x b tiles (DGEMM / HPL-like):
    for each tile triple, for i, for k: load A[i,k]; for j: load B[k,j], update C[i,j]."""

    name = "blocked_matrix"
    n: int = 256
    block: int = 32
    max_accesses: int = 0

    def __post_init__(self):
        object.__setattr__(self, "n", _count("n", self.n, 1, 1 << 16))
        object.__setattr__(self, "block", _count("block", self.block, 1, self.n))
        object.__setattr__(self, "max_accesses", _count("max_accesses", self.max_accesses, 0))

    def spans(self):
        m = self.n * self.n * ELEMENT
        return [("A", m), ("B", m), ("C", m)]

    @property
    def full_accesses(self):
        tiles = -(-self.n // self.block)
        return self.n * self.n * tiles + 2 * self.n**3

    @property
    def n_accesses(self):
        return min(self.full_accesses, self.max_accesses) if self.max_accesses else self.full_accesses

    def _chunks(self, bases, chunk, seed):
        state = np.zeros(7, dtype=np.int64)  # ii, jj, kk, i, k, j, phase
        left = self.n_accesses
        while left:
            out = np.empty(min(chunk, left), dtype=np.int64)
            gen_blocked_matrix(out, state, self.n, self.block, bases[0], bases[1], bases[2])
            left -= out.shape[0]
            yield out.view(np.uint64)


@dataclass(frozen=True)
class MolecularDynamics(Workload):
    """Neighbour access of a cell-list MD code: ``atoms`` records of ``atom_bytes`` in a cubic grid
    of cells (``atoms_per_cell`` each); cells are visited in order and every atom of a cell is
    compared with every atom of the 27 neighbouring cells, ``steps`` times. ``shuffle`` is the
    fraction of atoms stored at a random place in memory instead of in cell order (1.0: atoms
    'distributed in a pseudo-random fashion in memory', as the CSCS paper says)."""

    name = "md"
    atoms: int = 32768
    atom_bytes: int = 64
    atoms_per_cell: int = 8
    shuffle: float = 1.0
    steps: int = 1

    def __post_init__(self):
        object.__setattr__(self, "atoms", _count("atoms", self.atoms, 27, 1 << 26))
        object.__setattr__(self, "atom_bytes", _bytes("atom_bytes", self.atom_bytes, ELEMENT, 1 << 20))
        object.__setattr__(self, "atoms_per_cell", _count("atoms_per_cell", self.atoms_per_cell, 1, 1024))
        object.__setattr__(self, "steps", _count("steps", self.steps, 1, 1 << 20))
        object.__setattr__(self, "shuffle", check_fraction("shuffle", self.shuffle))

    @property
    def cells_per_side(self):
        return max(3, round((self.atoms / self.atoms_per_cell) ** (1 / 3)))

    @property
    def n_cells(self):
        return self.cells_per_side**3

    def spans(self):
        return [("atoms", self.n_cells * self.atoms_per_cell * self.atom_bytes)]

    @property
    def n_accesses(self):
        per_cell = self.atoms_per_cell * (1 + 27 * self.atoms_per_cell)
        return self.n_cells * per_cell * self.steps

    def slots(self, seed: int) -> np.ndarray:
        """Where each atom is stored, in cell order (atom k of the cell list at slot[k]): a fraction
        ``shuffle`` of them moved to random places, drawn from ``seed``."""
        total_atoms = self.n_cells * self.atoms_per_cell
        rng = np.random.default_rng(seed)
        slot = np.arange(total_atoms, dtype=np.int64)
        moved = rng.random(total_atoms) < float(self.shuffle)
        idx = np.flatnonzero(moved)
        slot[idx] = slot[rng.permutation(idx)]
        return slot

    def _chunks(self, bases, chunk, seed):
        slot = self.slots(seed)
        state = np.zeros(4, dtype=np.int64)  # cell, atom in cell, neighbour, neighbour atom
        left = self.n_accesses
        while left:
            out = np.empty(min(chunk, left), dtype=np.int64)
            gen_md(out, state, slot, self.cells_per_side, self.atoms_per_cell, self.atom_bytes, bases[0])
            left -= out.shape[0]
            yield out.view(np.uint64)


@dataclass(frozen=True)
class Touch(Workload):
    """Touch a freshly mapped region: ``pattern='memset'`` writes every 8 bytes in order;
    ``pattern='random'`` touches ``accesses`` random 8-byte offsets; ``pattern='per-step'`` stores
    once in each ``step`` bytes (8 bytes or more, dividing ``size``; ``accesses`` is not used), in
    address order, at a random byte offset within it (the POWER8
    mmap study's random test, normal_memory_analysis_random.c: ``addr[i + rand() % PAGE_SIZE] = 1``
    for i in steps of its 64 KiB page)."""

    name = "touch"
    size: int = 16 << 20
    pattern: str = "memset"
    accesses: int = 4096
    step: int = 64 << 10

    def __post_init__(self):
        object.__setattr__(self, "size", _bytes("size", self.size))
        check_choice("pattern", self.pattern, ("memset", "random", "per-step"))
        object.__setattr__(self, "accesses", _count("accesses", self.accesses))
        object.__setattr__(self, "step", _bytes("step", self.step))
        if self.pattern == "per-step" and (self.step == 0 or self.size % self.step):
            raise ValueError(f"step={format_size(self.step)} must divide size={format_size(self.size)} for pattern='per-step' (one store in each step)")

    def spans(self):
        return [("buffer", self.size)]

    @property
    def n_accesses(self):
        return {"memset": self.size // ELEMENT, "random": self.accesses, "per-step": self.size // max(1, self.step)}[self.pattern]

    def _chunks(self, bases, chunk, seed):
        if self.pattern == "per-step":
            n = self.n_accesses
            for start in range(0, n, chunk):
                out = np.empty(min(chunk, n - start), dtype=np.int64)
                gen_uniform_random(out, start, seed, self.step, 0, 1)  # the byte offset in each step
                out += bases[0] + np.arange(start, start + out.size, dtype=np.int64) * self.step
                yield out.view(np.uint64)
            return
        inner = Sequential(size=self.size) if self.pattern == "memset" else UniformRandom(size=self.size, accesses=self.accesses)
        yield from inner._chunks(bases, chunk, seed)


MAX_ADDRESS = 1 << 63  # kernels hold addresses as signed 64-bit integers


def _in_order(name: str, raw) -> None:
    """Refuse what is not an array or a sequence in access order (a generator, a set, a dict's keys)."""
    if raw is None or isinstance(raw, np.ndarray) or hasattr(raw, "__array__") or isinstance(raw, collections.abc.Sequence):
        return
    if hasattr(raw, "__iter__"):
        raise TypeError(
            f"{name} must be an array or a list in access order, got a {type(raw).__name__}: make one with "
            f"np.fromiter(..., dtype={'np.uint8' if name == 'kinds' else 'np.uint64'}) or list(...)"
            + (" (a set has no order)" if isinstance(raw, collections.abc.Set) else "")
        )


@dataclass(frozen=True)
class Addresses(Workload):
    """Any array of virtual addresses (and optionally kinds: 0 data, 1 instruction)."""

    name = "addresses"
    addresses: np.ndarray = None
    kinds: np.ndarray = None

    def __post_init__(self):
        raw = self.addresses
        _in_order("addresses", raw)
        a = np.asarray(raw)
        if a.ndim != 1 or a.size == 0:
            raise ValueError(f"addresses must be a non-empty 1-D array, got shape {a.shape}")
        if a.dtype.kind in "fO" and not isinstance(raw, np.ndarray) and all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in raw):
            # a list of integers that numpy made float64 or object (some beyond int64, or numpy's
            # signed and unsigned integers mixed): out-of-range ones named, the rest kept exact
            bad = next(((i, int(v)) for i, v in enumerate(raw) if not 0 <= int(v) < MAX_ADDRESS), None)
            if bad is None:
                a = np.array([int(v) for v in raw], dtype=np.uint64)
            elif bad[1] < 0:
                raise ValueError(f"addresses must be non-negative, found {bad[1]} at index {bad[0]}")
            else:
                raise ValueError(f"addresses[{bad[0]}]={bad[1]:#x} is out of range: pagesim simulates addresses below 2**63 ({MAX_ADDRESS:#x})")
        if a.dtype.kind not in "iu":
            raise TypeError(f"addresses must be integers, got dtype {a.dtype}")
        # int64 and uint64 arrays are kept as they are: a view, never a copy. Their range (below
        # 2**63; non-negative for signed dtypes) is not checked here: a pass over the array cost
        # ~0.7 ns an access. The translation kernel stops at the first address of 2**63 or above
        # (negative as int64) and Layout.covering_addresses finds one among its blocks; both then
        # raise range_error(i). Stages that read the addresses any other way call check_range().
        object.__setattr__(self, "addresses", a.view(np.uint64) if a.dtype == np.int64 else a.astype(np.uint64, copy=False))
        object.__setattr__(self, "_signed", a.dtype.kind == "i")
        if self.kinds is not None:
            _in_order("kinds", self.kinds)
            k = np.asarray(self.kinds)
            if k.shape != a.shape:
                raise ValueError(f"kinds has shape {k.shape}, addresses {a.shape}: give one kind per address")
            if k.dtype.kind not in "biu":
                raise TypeError(f"kinds must be integers 0 (data) or 1 (instruction), got dtype {k.dtype}")
            if k.size and (int(k.min()) < 0 or int(k.max()) > 1):
                i = int(k.argmin()) if int(k.min()) < 0 else int(k.argmax())
                raise ValueError(f"kinds[{i}]={int(k[i])} is not allowed: kinds are 0 (data) or 1 (instruction)")
            object.__setattr__(self, "kinds", k.astype(np.uint8, copy=False))

    def range_error(self, i: int) -> ValueError:
        """The error for ``addresses[i]``, which is 2**63 or above (negative, for a signed dtype)."""
        v = int(self.addresses[i])
        if self._signed:
            return ValueError(f"addresses must be non-negative, found {v - (1 << 64)} at index {i}")
        return ValueError(f"addresses[{i}]={v:#x} is out of range: pagesim simulates addresses below 2**63 ({MAX_ADDRESS:#x})")

    def check_range(self):
        """Raise ``range_error`` for the first address of 2**63 or above (a pass over the array)."""
        high = self.addresses.view(np.int64) < 0
        if high.any():
            raise self.range_error(int(high.argmax()))

    def spans(self):
        return []

    @property
    def working_set(self):
        return int(np.unique(self.addresses >> np.uint64(12)).size) << 12

    @property
    def n_accesses(self):
        return int(self.addresses.size)

    def params(self):
        return {"n": self.n_accesses}

    @property
    def label(self):
        return f"addresses({self.n_accesses})"

    def chunks(self, bases, chunk=1 << 20, seed=0):
        """The addresses as given, ``chunk`` at a time (``bases`` and ``seed`` are not used)."""
        chunk = check_int("chunk", chunk, 1)
        check_seed(seed)
        for s in range(0, self.addresses.size, chunk):
            yield self.addresses[s : s + chunk], (None if self.kinds is None else self.kinds[s : s + chunk])


WORKLOADS = {
    "sequential": Sequential,
    "strided": Strided,
    "planes": Planes,
    "stream": StreamTriad,
    "random": UniformRandom,
    "gups": UniformRandom,
    "hot_cold": HotCold,
    "pointer_chase": PointerChase,
    "blocked_matrix": BlockedMatrix,
    "dgemm": BlockedMatrix,
    "md": MolecularDynamics,
    "touch": Touch,
}


def workload(name, working_set=None, accesses=None, **params) -> Workload:
    """Make a workload by name. ``working_set`` (bytes or '1G') and ``accesses`` are mapped onto each
    workload's own parameters where they have one; other keywords go to the workload itself. A workload
    that sweeps its whole working set (sequential, strided, stream, md) runs whole passes (steps):
    ``accesses`` is rounded up to them, with a warning when it is less than one."""
    if isinstance(name, Workload):
        if working_set is not None or accesses is not None or params:
            raise ValueError("give either a Workload object or a workload name with parameters, not both")
        return name
    if not isinstance(name, str) or name not in WORKLOADS:
        raise ValueError(f"workload={name!r} is not known: choose one of {', '.join(sorted(WORKLOADS))}")
    cls = WORKLOADS[name]
    fields = {f.name for f in dataclasses.fields(cls)}
    bad = sorted(set(params) - fields)  # before any parameter is used (a workload is made below to count a pass)
    if bad:
        raise ValueError(f"workload {name!r} has no parameter(s) {bad}; it takes {sorted(fields)}")
    if working_set is not None:
        ws = parse_size(working_set, "working_set")
        if ws <= 0:
            raise ValueError(f"working_set={working_set!r} must be more than 0 bytes")
        target = {StreamTriad: "n", BlockedMatrix: "n", MolecularDynamics: "atoms", Planes: "plane"}.get(cls, "size")
        if target in params:
            raise ValueError(f"workload {name!r}: give working_set={working_set!r} or {target}={params[target]!r}, not both (working_set sets {target})")
        if cls is StreamTriad:
            params.setdefault("n", max(1, ws // (3 * ELEMENT)))
        elif cls is BlockedMatrix:
            params.setdefault("n", max(1, int((ws / (3 * ELEMENT)) ** 0.5)))
            b = params.get("block", BlockedMatrix.block)
            if isinstance(b, int) and not isinstance(b, bool) and 1 <= b <= 1 << 16 and params["n"] < b:
                raise ValueError(
                    f"working_set={format_size(ws)} gives matrices of n={params['n']} (three n x n of {ELEMENT}-byte elements), "
                    f"smaller than a tile of block={b}: give working_set of at least {format_size(3 * ELEMENT * b * b)} or a smaller block"
                )
        elif cls is MolecularDynamics:
            params.setdefault("atoms", max(27, ws // params.get("atom_bytes", 64)))
        elif cls is Planes:  # working_set = planes * plane
            planes = _count("planes", params.get("planes", Planes.planes), 1, 1 << 16)
            params.setdefault("plane", max(ELEMENT, ws // planes))
        elif "size" not in fields:
            raise ValueError(f"workload {name!r} has no working_set: its size comes from its own parameters {sorted(fields)} (give those instead)")
        else:
            params.setdefault("size", _bytes("working_set", ws))  # checked here, so the error names working_set
            node = params.get("node", PointerChase.node) if cls is PointerChase else None
            if isinstance(node, (int, str)) and not isinstance(node, bool) and ws < parse_size(node, "node"):
                raise ValueError(
                    f"working_set={format_size(ws)} is too small for one node of {format_size(parse_size(node, 'node'))}: "
                    f"the minimum working_set of workload {name!r} is {format_size(parse_size(node, 'node'))} (or give a smaller node=)"
                )
    if accesses is not None:
        acc = _count("accesses", accesses)
        for target in ACCESS_FIELDS:
            if target in params:
                raise ValueError(f"workload {name!r}: give accesses={accesses!r} or {target}={params[target]!r}, not both (accesses sets {target})")
        if "accesses" in fields:
            params.setdefault("accesses", acc)
        elif cls is BlockedMatrix:
            params.setdefault("max_accesses", acc)
        elif "passes" in fields or "steps" in fields:  # whole passes (steps): rounded up
            rep = "passes" if "passes" in fields else "steps"
            one = cls(**params).n_accesses
            params.setdefault(rep, max(1, -(-acc // one)))
            if acc < one:
                warn(
                    f"workload {name!r}: accesses={acc:,} is less than one of its {rep} ({one:,} accesses over its working set): "
                    f"it runs 1 ({one:,} accesses); a smaller working_set gives a shorter run",
                )
        else:
            raise ValueError(f"workload {name!r} takes no accesses=: its length comes from its own parameters {sorted(fields)} (give those instead)")
    w = cls(**params)
    n = w.n_accesses
    if n > MAX_ACCESSES:  # one whole pass over a large working set
        raise ValueError(
            f"workload {name!r} makes {n:,} accesses (one pass over its working set), more than pagesim runs ({MAX_ACCESSES:,}): give a smaller working_set"
        )
    if accesses is not None and cls is Touch and w.pattern == "memset" and acc != n:
        warn(
            f"workload 'touch' with pattern='memset' writes every 8 bytes of its size once ({n:,} accesses): "
            f"accesses={acc:,} counts only with pattern='random'",
        )
    return w


# ---------------------------------------------------------------- kernels of the CSCS study's codes


@dataclass(frozen=True)
class FFT(Workload):
    """The butterflies of an in-place radix-2 FFT over ``size`` bytes of complex doubles (16 bytes
    each; ``size / 16`` a power of two): stage s pairs element a with a + 2**s, so the distance
    between the two elements of a butterfly doubles from one stage to the next (16 bytes in the
    first, half the array in the last). Two accesses per butterfly, a then b (the stores back to
    them touch the same lines and pages). The bit-reversal permutation is left out.

    ``accesses``: 0 runs every butterfly of every stage; otherwise ``accesses / (2 x stages)``
    consecutive butterflies of each stage (the same number in each, as a whole transform has),
    starting at a place that moves through the array from stage to stage, so no stage reuses the
    lines the previous one left in a cache."""

    name = "fft"
    size: int = 64 << 20
    accesses: int = 0

    def __post_init__(self):
        object.__setattr__(self, "size", _bytes("size", self.size, 32))
        n = self.size // 16
        if self.size % 16 or n & (n - 1):
            raise ValueError(f"size={format_size(self.size)} must be a power of two number of 16-byte complex elements")
        object.__setattr__(self, "accesses", _count("accesses", self.accesses, 0))

    def spans(self):
        return [("x", self.size)]

    @property
    def points(self) -> int:
        return self.size // 16

    @property
    def stages(self) -> int:
        return self.points.bit_length() - 1

    @property
    def per_stage(self) -> int:
        """Butterflies simulated in each stage."""
        half = self.points // 2
        return half if not self.accesses else max(1, min(half, self.accesses // (2 * self.stages)))

    @property
    def n_accesses(self):
        return 2 * self.per_stage * self.stages

    def _chunks(self, bases, chunk, seed):
        half_n, per = self.points // 2, self.per_stage
        # the first butterfly of each stage's run: evenly spread over the butterflies of a stage
        starts = [(s * half_n // self.stages) // per * per if per < half_n else 0 for s in range(self.stages)]
        for start in range(0, self.n_accesses, chunk):
            idx = np.arange(start, min(start + chunk, self.n_accesses), dtype=np.int64)
            stage, k = idx // (2 * per), (idx // 2) % per
            t = (np.asarray(starts, dtype=np.int64)[stage] + k) % half_n
            h = np.left_shift(np.int64(1), stage)
            a = (t // h) * (2 * h) + t % h
            yield (bases[0] + 16 * (a + h * (idx % 2))).astype(np.int64).view(np.uint64)


def _check_grid(w) -> None:
    """A stencil's radius (1..8) and its nx, ny, nz (from one point and its neighbours on each side to 65,536)."""
    object.__setattr__(w, "radius", _count("radius", w.radius, 1, 8))
    for d in ("nx", "ny", "nz"):
        object.__setattr__(w, d, _count(d, getattr(w, d), 2 * w.radius + 1, 1 << 16))


@dataclass(frozen=True)
class Stencil(Workload):
    """A finite-difference sweep over ``arrays`` fields of nx x ny x nz doubles (x fastest), stored
    one after another in one allocation: at each interior point, for each field, the point itself
    and its ``radius`` neighbours on each side in x, y and z (6 radius + 1 accesses). The z
    neighbours are a plane (nx ny 8 bytes) apart: the strided accesses of a 3-D solver.
    ``accesses``: 0 sweeps every interior point once; otherwise the first ``accesses``."""

    name = "stencil"
    nx: int = 64
    ny: int = 64
    nz: int = 64
    arrays: int = 5
    radius: int = 2
    accesses: int = 0

    def __post_init__(self):
        _check_grid(self)
        object.__setattr__(self, "arrays", _count("arrays", self.arrays, 1, 64))
        object.__setattr__(self, "accesses", _count("accesses", self.accesses, 0))

    @property
    def field_bytes(self) -> int:
        return self.nx * self.ny * self.nz * ELEMENT

    def spans(self):
        return [("fields", self.arrays * self.field_bytes)]

    @property
    def per_point(self) -> int:
        return self.arrays * (6 * self.radius + 1)

    @property
    def interior(self) -> int:
        r = self.radius
        return (self.nx - 2 * r) * (self.ny - 2 * r) * (self.nz - 2 * r)

    @property
    def n_accesses(self):
        whole = self.interior * self.per_point
        return min(whole, self.accesses) if self.accesses else whole

    def _offsets(self) -> np.ndarray:
        """Byte offsets of one point's accesses from the point, field by field."""
        r, row, plane = self.radius, self.nx * ELEMENT, self.nx * self.ny * ELEMENT
        d = np.arange(1, r + 1, dtype=np.int64)
        one = np.concatenate([[0], -d * ELEMENT, d * ELEMENT, -d * row, d * row, -d * plane, d * plane])
        return np.concatenate([v * self.field_bytes + one for v in range(self.arrays)])

    def _chunks(self, bases, chunk, seed):
        r, off = self.radius, self._offsets()
        ix, iy = self.nx - 2 * r, self.ny - 2 * r
        for start in range(0, self.n_accesses, chunk):
            idx = np.arange(start, min(start + chunk, self.n_accesses), dtype=np.int64)
            p, q = idx // self.per_point, idx % self.per_point
            x, y, z = p % ix + r, (p // ix) % iy + r, p // (ix * iy) + r
            point = ((z * self.ny + y) * self.nx + x) * ELEMENT
            yield (bases[0] + point + off[q]).astype(np.int64).view(np.uint64)


WORKLOADS.update(fft=FFT, stencil=Stencil)


# --------------------------------------------------- HPC Challenge's FFT (FFTE) and a compressible DNS step


def _fft235_pass(src: int, dst: int, tw: int, length: int) -> np.ndarray:
    """Byte offsets of one radix-8 Stockham pass of FFTE's fft235 over ``length`` complex points: per
    butterfly b, the 8 inputs ``length / 8`` apart from ``src``, 7 twiddles from the table at ``tw``,
    then the 8 outputs side by side in ``dst`` (the pass reads one buffer and writes the other)."""
    q = length // 8
    b = np.arange(q, dtype=np.int64)[:, None]
    s = np.arange(8, dtype=np.int64)[None, :]
    reads = src + 16 * (b + s * q)
    twid = tw + 16 * ((s[:, 1:] * b) % length)
    writes = dst + 16 * (8 * b + s)
    return np.concatenate([reads, twid, writes], axis=1).ravel()


@dataclass(frozen=True)
class FFTE(Workload):
    """FFTE's 1-D complex FFT (zfft1d, D. Takahashi; the FFT of HPC Challenge, whose FFT/zfft1d.c is its C
    port) on ``size`` bytes of complex doubles (``size / 16`` = n, a power of two), as its six-step
    algorithm runs for a vector larger than the L2 cache: n = n1 x n2 (n1 = 2**ceil(p/2)), the vector
    A seen as an n1 x n2 matrix (n1 fastest), B the work vector, C a block buffer, D the FFT's work row.

    Step 1, per block of ``nblk`` rows of A: copy the block into C tile by tile (nblk x nblk tiles,
    reading A(i, j) with j innermost: n1 x 16 bytes apart); an n2-point FFT on each row of C (radix-8
    Stockham passes between the row and D, twiddles from W2); multiply by the twiddle factors (tables
    WW1, WW2) and store into B(i, j), j outermost (each j a column of B, n1 x 16 bytes apart). Step 2,
    per block of ``nblk`` columns of B: an n1-point FFT on each (passes between the column and C, W1),
    then the transpose A(j, i) = B(i, j), i outermost (n2 x 16 bytes apart). Last, HPC Challenge's
    wrapper copies the result to its output vector (here B), in order.

    ``blocks``: 0 runs the whole transform; otherwise ``blocks`` step-1 blocks and the same share of
    step-2 blocks and of the final copy, spread evenly over the vector. Sources: FFTE's zfft1d.f and
    param.h (NBLK = 16 'for ... Opteron', NP = 8, L2SIZE = 1 MiB); HPC Challenge FFT/wrapfftw.c
    (HPCC_fftw_one: zfft1d, then the copy)."""

    name = "ffte"
    size: int = 256 << 20
    blocks: int = 0
    nblk: int = 16
    pad: int = 8

    def __post_init__(self):
        object.__setattr__(self, "size", _bytes("size", self.size, 16 << 10))
        n = self.size // 16
        if self.size % 16 or n & (n - 1):
            raise ValueError(f"size={format_size(self.size)} must be a power of two number of 16-byte complex elements")
        object.__setattr__(self, "nblk", _count("nblk", self.nblk, 8, 64))
        object.__setattr__(self, "pad", _count("pad", self.pad, 0, 64))
        object.__setattr__(self, "blocks", _count("blocks", self.blocks, 0, self.n1 // self.nblk))
        if self.n2 < self.nblk:
            raise ValueError(f"size={format_size(self.size)} is too small for the six-step algorithm with nblk={self.nblk}")

    @property
    def points(self) -> int:
        return self.size // 16

    @property
    def n1(self) -> int:
        p = self.points.bit_length() - 1
        return 1 << ((p + 1) // 2)

    @property
    def n2(self) -> int:
        return self.points // self.n1

    @staticmethod
    def passes(length: int) -> int:
        """Radix-8 passes of an FFT of ``length`` (a power of two): ceil(log2(length) / 3)."""
        return -(-(length.bit_length() - 1) // 3)

    @property
    def m1(self) -> int:
        return min(self.n1, max(self.nblk, 1 << ((self.n1.bit_length() - 1) // 2)))

    @property
    def m2(self) -> int:
        return min(self.n2, max(self.nblk, 1 << ((self.n2.bit_length() - 1) // 2)))

    def spans(self):
        big = max(self.n1, self.n2) + self.pad
        return [
            ("A", self.size),
            ("B", self.size),
            ("C", 16 * (big * (self.nblk + 1) + self.pad)),
            ("D", 16 * big),
            ("W1", 16 * self.n1),
            ("W2", 16 * self.n2),
            ("WW", 16 * (self.m1 * self.m2 + self.m1 * (self.n2 // self.m2) + self.m2 * (self.n1 // self.m1) + (self.n1 // self.m1) * (self.n2 // self.m2))),
        ]

    @property
    def step1_blocks(self) -> list[int]:
        total = self.n1 // self.nblk
        k = total if not self.blocks else self.blocks
        return [(i * total // k) * self.nblk for i in range(k)]

    @property
    def step2_blocks(self) -> list[int]:
        total = self.n2 // self.nblk
        k = total if not self.blocks else max(1, round(self.blocks * self.n2 / self.n1))
        return [(i * total // k) * self.nblk for i in range(k)]

    @property
    def copy_points(self) -> int:
        return self.points if not self.blocks else self.points * self.blocks * self.nblk // self.n1

    def _fft(self, row: int, work: int, tw: int, length: int) -> list[np.ndarray]:
        out, src, dst = [], row, work
        for _ in range(self.passes(length)):
            out.append(_fft235_pass(src, dst, tw, length))
            src, dst = dst, src
        if src != row:  # an odd number of passes leaves the result in the work row: copied back
            k = 16 * np.arange(length, dtype=np.int64)
            out.append(np.stack([src + k, row + k], axis=1).ravel())
        return out

    def phase_accesses(self) -> dict:
        """Accesses of each phase in this run: {'copy': transposes and the final copy, 'fft': the
        Stockham passes, 'twiddle': step 1's multiply by the twiddle factors}."""
        nb, n1, n2 = self.nblk, self.n1, self.n2

        def fft(length):
            p = self.passes(length)
            return p * (length // 8) * 23 + (2 * length if p % 2 else 0)

        k1, k2 = len(self.step1_blocks), len(self.step2_blocks)
        return {
            "copy": k1 * 2 * nb * n2 + k2 * 2 * nb * n1 + 2 * self.copy_points,
            "fft": k1 * nb * fft(n2) + k2 * nb * fft(n1),
            "twiddle": k1 * n2 * (2 + 4 * nb),
        }

    @property
    def n_accesses(self):
        return sum(self.phase_accesses().values())

    def _blocks(self, bases):
        a, b, c, d, w1, w2, ww = bases
        nb, n1, n2, ld = self.nblk, self.n1, self.n2, self.n2 + self.pad
        e = 16
        r, j = np.meshgrid(np.arange(nb, dtype=np.int64), np.arange(nb, dtype=np.int64), indexing="ij")
        for ii in self.step1_blocks:
            for jj in range(0, n2, nb):  # the tiles of C(j, i - ii) = A(ii + i, j), j innermost
                reads = a + e * ((ii + r) + (jj + j) * n1)
                writes = c + e * ((jj + j) + r * ld)
                yield np.stack([reads, writes], axis=-1).ravel()
            for i in range(nb):
                yield from self._fft(c + e * i * ld, d, w2, n2)
            ww2, ww3 = ww + e * self.m1 * self.m2, ww + e * (self.m1 * self.m2 + self.m1 * (n2 // self.m2))
            ww4 = ww3 + e * self.m2 * (n1 // self.m1)
            for jc in range(n2):  # B(ii + i, jc) = C(jc, i) * WW1 * WW2 * TEMP, i innermost
                ik, is_ = jc % self.m2, jc // self.m2
                i = np.arange(nb, dtype=np.int64)
                ij = (ii + i) % self.m1
                per = np.stack(
                    [c + e * (jc + i * ld), ww + e * (ij + ik * self.m1), ww2 + e * (ij + is_ * self.m1), b + e * ((ii + i) + jc * n1)], axis=1
                ).ravel()
                ir = ii // self.m1  # TEMP = WW3(ik, ir) x WW4(ir, is), once per column
                yield np.concatenate([[ww3 + e * (ik + ir * self.m2), ww4 + e * (ir + is_ * (n1 // self.m1))], per])
        for jj in self.step2_blocks:
            for jc in range(jj, jj + nb):
                yield from self._fft(b + e * jc * n1, c, w1, n1)
            jv = jj + np.arange(nb, dtype=np.int64)
            for i0 in range(0, n1, 256):  # A(j, i) = B(i, j), i outermost, j innermost
                i = np.arange(i0, min(i0 + 256, n1), dtype=np.int64)[:, None]
                yield np.stack([b + e * (i + jv[None, :] * n1), a + e * (jv[None, :] + i * n2)], axis=-1).ravel()
        start = (self.points - self.copy_points) // 2
        for k0 in range(0, self.copy_points, 1 << 16):  # the wrapper's copy of the result, in order
            k = start + np.arange(k0, min(k0 + (1 << 16), self.copy_points), dtype=np.int64)
            yield np.stack([a + e * k, b + e * k], axis=1).ravel()

    def _chunks(self, bases, chunk, seed):
        buf, held = [], 0
        for part in self._blocks(bases):
            buf.append(part)
            held += part.shape[0]
            while held >= chunk:
                allp = np.concatenate(buf)
                yield allp[:chunk].astype(np.int64).view(np.uint64)
                buf, held = [allp[chunk:]], allp.shape[0] - chunk
        if held:
            yield np.concatenate(buf).astype(np.int64).view(np.uint64)


@dataclass(frozen=True)
class StencilRK(Workload):
    """One Runge-Kutta stage of an explicit finite-difference code with low-storage (2N) Runge-Kutta:
    ``fields`` solution arrays U and as many register arrays R of nx x ny x nz doubles (x fastest), each
    its own allocation. The residual sweep visits every interior point and, for each field, reads
    U at the point and its ``radius`` neighbours on each side in x, y and z (6 radius + 1 accesses),
    then reads and writes R there (R = a R + dt L(U)); the update sweep then reads R and U and writes
    U at every interior point (U = U + b R). ``accesses``: 0 runs both sweeps whole; otherwise the
    first points of each sweep in their proportion (the same number of points from each)."""

    name = "stencil_rk"
    nx: int = 64
    ny: int = 64
    nz: int = 64
    fields: int = 5
    radius: int = 2
    accesses: int = 0

    def __post_init__(self):
        _check_grid(self)
        object.__setattr__(self, "fields", _count("fields", self.fields, 1, 32))
        object.__setattr__(self, "accesses", _count("accesses", self.accesses, 0))

    @property
    def field_bytes(self) -> int:
        return self.nx * self.ny * self.nz * ELEMENT

    @property
    def arrays(self) -> int:
        return 2 * self.fields

    def spans(self):
        return [(f"U{v}", self.field_bytes) for v in range(self.fields)] + [(f"R{v}", self.field_bytes) for v in range(self.fields)]

    @property
    def residual_per_point(self) -> int:
        return self.fields * (6 * self.radius + 3)

    @property
    def update_per_point(self) -> int:
        return self.fields * 3

    @property
    def interior(self) -> int:
        r = self.radius
        return (self.nx - 2 * r) * (self.ny - 2 * r) * (self.nz - 2 * r)

    @property
    def points(self) -> int:
        """Interior points each sweep visits in this run."""
        per = self.residual_per_point + self.update_per_point
        return self.interior if not self.accesses else max(1, min(self.interior, self.accesses // per))

    @property
    def n_accesses(self):
        return self.points * (self.residual_per_point + self.update_per_point)

    def _point_offsets(self, ps):
        r = self.radius
        ix, iy = self.nx - 2 * r, self.ny - 2 * r
        x, y, z = ps % ix + r, (ps // ix) % iy + r, ps // (ix * iy) + r
        return ((z * self.ny + y) * self.nx + x) * ELEMENT

    def _chunks(self, bases, chunk, seed):
        r, row, plane = self.radius, self.nx * ELEMENT, self.nx * self.ny * ELEMENT
        d = np.arange(1, r + 1, dtype=np.int64)
        one = np.concatenate([[0], -d * ELEMENT, d * ELEMENT, -d * row, d * row, -d * plane, d * plane])
        u, reg = np.asarray(bases[: self.fields], dtype=np.int64), np.asarray(bases[self.fields :], dtype=np.int64)
        res = np.concatenate([np.concatenate([u[v] + one, [reg[v], reg[v]]]) for v in range(self.fields)])
        upd = np.concatenate([[reg[v], u[v], u[v]] for v in range(self.fields)])
        out = []
        for off in (res, upd):  # the residual sweep, then the update sweep
            per = off.shape[0]
            for p0 in range(0, self.points, max(1, chunk // per)):
                ps = np.arange(p0, min(p0 + max(1, chunk // per), self.points), dtype=np.int64)
                out.append((self._point_offsets(ps)[:, None] + off[None, :]).ravel())
                if sum(o.shape[0] for o in out) >= chunk:
                    allp = np.concatenate(out)
                    while allp.shape[0] >= chunk:
                        yield allp[:chunk].view(np.uint64)
                        allp = allp[chunk:]
                    out = [allp]
        allp = np.concatenate(out) if out else np.empty(0, dtype=np.int64)
        while allp.shape[0]:
            yield allp[:chunk].view(np.uint64)
            allp = allp[chunk:]


WORKLOADS.update(ffte=FFTE, stencil_rk=StencilRK)


@dataclass(frozen=True)
class HPLUpdate(Workload):
    """A window of High-Performance Linpack's trailing update C -= L U on one process, done as a packed
    DGEMM (the GotoBLAS/OpenBLAS scheme): the process's local matrix is column-major with leading
    dimension ``lda`` doubles (HPL's local rows, about N / P), the panel is ``nb`` columns wide.

    Order of the references: pack the ``nb`` x ``nc`` block of U (the panel's rows of the window's
    ``nc`` trailing columns) into a buffer, in ``nr``-column slivers; then for each of ``row_blocks``
    blocks of ``mc`` rows: pack that block of the panel L (``mc`` x ``nb``, read column by column, an
    ``lda`` stride apart) into a buffer in ``mr``-row slivers, and run the register-blocked kernel: for
    each ``nr`` columns, for each ``mr`` rows, for each of the ``nb`` steps, ``mr`` loads of packed L and
    ``nr`` of packed U, then the ``mr`` x ``nr`` tile of C (one reference per element). Each pack reads
    an element and writes it (two references). ``accesses``: 0 runs the whole window, else its first
    ``accesses`` references."""

    name = "hpl_update"
    lda: int = 4096
    nb: int = 64
    mc: int = 256
    nc: int = 64
    mr: int = 4
    nr: int = 4
    row_blocks: int = 1
    accesses: int = 0

    def __post_init__(self):
        for f, hi in (("lda", 1 << 22), ("nb", 1 << 14), ("mc", 1 << 16), ("nc", 1 << 16), ("mr", 32), ("nr", 32), ("row_blocks", 1 << 12)):
            object.__setattr__(self, f, _count(f, getattr(self, f), 1, hi))
        object.__setattr__(self, "accesses", _count("accesses", self.accesses, 0))
        if self.mc % self.mr or self.nc % self.nr:
            raise ValueError(f"mc={self.mc} must be a multiple of mr={self.mr} and nc={self.nc} of nr={self.nr}")
        if self.nb + self.mc * self.row_blocks > self.lda:
            raise ValueError(f"nb + mc x row_blocks = {self.nb + self.mc * self.row_blocks} rows do not fit in lda={self.lda}")

    def spans(self):
        return [("A", self.lda * (self.nb + self.nc) * ELEMENT), ("Lpack", self.mc * self.nb * ELEMENT), ("Upack", self.nb * self.nc * ELEMENT)]

    @property
    def kernel_per_block(self) -> int:
        """References of the kernel over one block of ``mc`` rows."""
        return (self.nc // self.nr) * (self.mc // self.mr) * (self.nb * (self.mr + self.nr) + self.mr * self.nr)

    @property
    def full_accesses(self) -> int:
        return 2 * self.nb * self.nc + self.row_blocks * (2 * self.mc * self.nb + self.kernel_per_block)

    @property
    def n_accesses(self):
        return min(self.full_accesses, self.accesses) if self.accesses else self.full_accesses

    def _segments(self, bases):
        """The window's references in order, as arrays of byte addresses (one pack or one column sliver of the kernel each)."""
        a0, l0, u0 = (np.int64(b) for b in bases)
        lda, nb, mc, nc, mr, nr = self.lda, self.nb, self.mc, self.nc, self.mr, self.nr
        k = np.arange(nb, dtype=np.int64)
        # pack U: column j of the window, rows 0..nb of the matrix, into sliver j // nr
        j = np.arange(nc, dtype=np.int64)[:, None]
        src = a0 + ((nb + j) * lda + k[None, :]) * ELEMENT
        dst = u0 + ((j // nr) * nr * nb + k[None, :] * nr + j % nr) * ELEMENT
        yield np.stack([src, dst], axis=-1).ravel()
        # the kernel's reference pattern within one mr x nr tile: nb steps of mr L loads then nr U loads
        li = (np.arange(mr, dtype=np.int64)[None, :] + k[:, None] * mr) * ELEMENT  # nb x mr
        ui = (np.arange(nr, dtype=np.int64)[None, :] + k[:, None] * nr) * ELEMENT  # nb x nr
        for ib in range(self.row_blocks):
            ic = nb + ib * mc  # first matrix row of the block (the panel's rows start below U's nb rows)
            i = np.arange(mc, dtype=np.int64)[None, :]
            src = a0 + (k[:, None] * lda + ic + i) * ELEMENT
            dst = l0 + ((i // mr) * mr * nb + k[:, None] * mr + i % mr) * ELEMENT
            yield np.stack([src, dst], axis=-1).ravel()
            ir = np.arange(mc // mr, dtype=np.int64)[:, None, None]
            tile_c = (np.arange(nr, dtype=np.int64)[:, None] * lda + np.arange(mr, dtype=np.int64)[None, :]).ravel()
            for jr in range(nc // nr):
                lo = np.broadcast_to(l0 + ir * mr * nb * ELEMENT + li[None], (mc // mr, nb, mr))
                up = np.broadcast_to(u0 + jr * nr * nb * ELEMENT + ui[None], (mc // mr, nb, nr))
                lu = np.concatenate([lo, up], axis=2)
                c = a0 + (((nb + jr * nr) * lda + ic) + ir[:, :, 0] * mr + tile_c[None, :]) * ELEMENT
                yield np.concatenate([lu.reshape(mc // mr, -1), c], axis=1).ravel()

    def _chunks(self, bases, chunk, seed):
        left, buf = self.n_accesses, []
        have = 0
        for seg in self._segments(bases):
            seg = seg[: left - have] if have + seg.size > left else seg
            buf.append(seg)
            have += seg.size
            while have >= chunk or (have == left and have):
                out = np.concatenate(buf)
                head, rest = out[:chunk], out[chunk:]
                yield head.view(np.uint64)
                left -= head.size
                have -= head.size
                buf = [rest] if rest.size else []
            if left == 0:
                return


WORKLOADS.update(hpl_update=HPLUpdate)


#: bytes a heap aligns each array to: what glibc's malloc guarantees on x86-64 (MALLOC_ALIGNMENT,
#: 2 x sizeof(size_t)); Catamount's malloc is not described in the documents (an assumption there)
HEAP_ALIGN = 16


@dataclass(frozen=True)
class Heap(Workload):
    """The arrays of another workload laid out as one program's heap lays them: one after another,
    each at the next multiple of ``align`` bytes after the end of the one before, in one region
    (span ``heap``). A layout of separate regions starts every array on a page (and by default on a
    1 GiB boundary), so the same element of every array of one size falls in one set of a
    set-associative TLB or cache. In a heap they line up only when an array's size is a multiple of
    that structure's set span (sets x page or line size: 512 KiB for a 128-set TLB of 4 KiB pages).
    glibc's chunk headers and its separate mappings for large arrays are not modelled.

    ``of``: the workload's name; ``parameters``: its parameters as a JSON object (a string, so the
    workload stays hashable and its parameters serialisable)."""

    name = "heap"
    of: str = "stream"
    parameters: str = "{}"
    align: int = HEAP_ALIGN
    #: the workload's own (from ``parameters``) unless given; 1.0 when neither gives it
    work_cycles: float | None = None
    work_cycles_later = True

    def __post_init__(self):
        if not isinstance(self.of, str) or self.of not in WORKLOADS or WORKLOADS[self.of] in (Heap, Addresses):
            names = ", ".join(sorted(k for k, c in WORKLOADS.items() if c not in (Heap, Addresses)))
            raise ValueError(f"of={self.of!r} is not a workload a heap can hold: choose one of {names}")
        if not isinstance(self.parameters, str):
            raise TypeError(
                f"parameters must be a JSON string of the workload's parameters, e.g. '{{\"n\": 1000000}}', "
                f"got {type(self.parameters).__name__} {self.parameters!r}" + (" (json.dumps it)" if isinstance(self.parameters, dict) else "")
            )

        twice = []  # keys given more than once (json keeps the last silently)

        def unique(pairs):
            keys = [k for k, _ in pairs]
            twice.extend(k for k in dict.fromkeys(keys) if keys.count(k) > 1)
            return dict(pairs)

        try:
            kw = json.loads(self.parameters, object_pairs_hook=unique)
        except ValueError as e:
            raise ValueError(f"parameters={self.parameters!r} is not JSON: {e}") from None
        if twice:
            raise ValueError(f"parameters={self.parameters!r} gives {twice[0]!r} more than once")
        if not isinstance(kw, dict):
            raise ValueError(f"parameters={self.parameters!r} must be a JSON object of the workload's parameters, e.g. '{{\"n\": 1000000}}'")
        align = _count("align", self.align, 1, 1 << 30)
        if align & (align - 1):
            raise ValueError(f"align={self.align!r} must be a power of two (bytes)")
        object.__setattr__(self, "align", align)
        cls = WORKLOADS[self.of]
        if "name" in kw:
            raise ValueError(f"parameters={self.parameters!r}: 'name' is not a parameter of {self.of!r} (the heap's of= names the workload)")
        try:
            if "accesses" in kw and set(kw) <= {f.name for f in dataclasses.fields(cls)}:
                inner = cls(**kw)  # the workload's own accesses (0: whole, for some), not workload()'s count
            else:
                inner = workload(self.of, **kw)
        except (TypeError, ValueError) as e:
            raise type(e)(f"parameters={self.parameters!r} of heap(of={self.of!r}): {e}") from None
        # the work per access is the heap's (given, or the parameters', else 1.0), held as a float by
        # the heap and its workload alike, and kept out of the parameters' text
        if "work_cycles" in kw:
            if self.work_cycles is not None and check_number("work_cycles", self.work_cycles, 0, 1e6) != float(inner.work_cycles):
                raise ValueError(f"work_cycles={self.work_cycles!r} and the parameters' work_cycles={inner.work_cycles!r} differ: give one")
            wc = float(inner.work_cycles)
        else:
            wc = Workload.work_cycles if self.work_cycles is None else check_number("work_cycles", self.work_cycles, 0, 1e6)
        object.__setattr__(self, "work_cycles", wc)
        if inner.work_cycles != wc or not isinstance(inner.work_cycles, float):
            inner = dataclasses.replace(inner, work_cycles=wc)
        # one text for one workload: each parameter as the workload holds it (64.0 is n=64), in key order
        held = {k: getattr(inner, k) for k in kw if k != "work_cycles"}
        object.__setattr__(self, "parameters", json.dumps({k: v.item() if isinstance(v, np.generic) else v for k, v in held.items()}, sort_keys=True))
        offsets, at = [], 0
        for _, n in inner.spans():
            at = -(-at // align) * align
            offsets.append(at)
            at += n
        object.__setattr__(self, "_inner", inner)
        object.__setattr__(self, "_offsets", tuple(offsets))
        object.__setattr__(self, "_length", at)

    @property
    def inner(self) -> Workload:
        """The workload whose arrays the heap holds."""
        return self._inner

    @property
    def offsets(self) -> tuple[int, ...]:
        """Each array's offset from the heap's start, in the order of the workload's spans."""
        return self._offsets

    def spans(self):
        return [("heap", self._length)]

    @property
    def n_accesses(self):
        return self._inner.n_accesses

    @property
    def label(self) -> str:
        return f"heap({self._inner.label})"

    def chunks(self, bases, chunk: int = 1 << 20, seed: int = 0):
        (b,), chunk, seed = self._checked(bases, chunk, seed)
        yield from self._inner.chunks([b + o for o in self._offsets], chunk, seed)


WORKLOADS.update(heap=Heap)
