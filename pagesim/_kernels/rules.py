"""The model's shared rules, each written once: every kernel, view and exercise that applies one
imports it from here.

- walker kinds (``RADIX`` ... ``VHPT``, and :data:`WALKERS` by name);
- the hashed page table's group of a page (:func:`hpt_group`, :func:`vsid_of`), with the segment constants;
- a set's tag search in groups of four padded ways (:func:`find_tag`);
- packed LRU order, up to 16 ways in one 64-bit word (:func:`lru_touch`, :func:`order_victim`);
- an LRU list of up to 4 tags of 16 bits in one 64-bit word (:func:`lane_lookup`);
- stamp LRU for wider sets (:func:`stamp_victim`);
- the region holding an address (:func:`region_of`);
- where a virtualised guest's pages and page tables sit in its physical memory (:func:`guest_frame`).

Each is a numba function inlined where a kernel calls it (``inline="always"``). A view in plain
Python calls the same rule through its ``py_func`` (for example ``hpt_group.py_func(a, 16, 2047)``),
so an explanation cannot disagree with the kernel. The state updates on a lookup's hot path are
:class:`Rule` s: written once as source, both a numba function and the lines the kernel writer
writes in place (numba's inlining of a function that takes arrays kept reference-count updates and
reloads around it: POWER8's specialised kernel on a random trace ran 56 ns an access calling the
ring updates, 19-20 written in place). The reference models in ``tests/`` share the constants, not
the logic: they are the oracle the kernels are checked against.
"""

import textwrap

import numba
import numpy as np

inline = numba.njit(inline="always", nogil=True)


class Rule:
    """A rule written once as source: ``body`` names its parameters and its results as ``{name}``
    and ends each temporary's name with ``{_}``. :attr:`function` is the numba function (results
    returned), :meth:`lines` the body for the kernel writer, with expressions for the parameters,
    names for the results and a suffix that keeps the temporaries of each place it is written
    apart. ``globals_`` are the names the body reads besides ``np``."""

    def __init__(self, name: str, params: tuple, outs: tuple, body: str, globals_: dict | None = None):
        self.name, self.params, self.outs, self.body = name, params, outs, textwrap.dedent(body).strip("\n")
        names = {p: p for p in params} | {o: f"_{o}" for o in outs} | {"_": "_"}
        ret = ("\n    return " + ", ".join(f"_{o}" for o in outs)) if outs else ""
        src = f"def {name}({', '.join(params)}):\n" + textwrap.indent(self.body.format(**names), "    ") + ret + "\n"
        ns = {"np": np, **(globals_ or {})}
        exec(compile(src, f"<rule {name}>", "exec"), ns)  # noqa: S102 - our own source, above
        self.function = inline(ns[name])

    def lines(self, sfx: str, **names) -> list[str]:
        """The body with each parameter and result replaced by the expression given for it
        (parenthesised unless a name or a number) and ``sfx`` ending its temporaries."""
        missing = set(self.params) | set(self.outs)
        missing -= set(names)
        if missing:
            raise TypeError(f"internal error: {self.name}.lines() without {sorted(missing)}")
        put = {k: v if v.replace("_", "").isalnum() else f"({v})" for k, v in names.items()}
        return self.body.format(**put, _=f"_{sfx}").split("\n")


# walker kinds, as the kernels number them
RADIX, HASHED, TSB, VHPT = 0, 1, 2, 3
WALKERS = {"radix": RADIX, "hashed": HASHED, "tsb": TSB, "vhpt": VHPT}

# The hashed page table's hash (POWER): a page's effective segment (ESID) is its address >> 28
# (256 MiB segments), or >> 40 (1 TiB segments) for pages of 256 MiB or more; its VSID is the ESID
# scrambled by a multiply (VSID_MULT, a modelling assumption standing in for the OS's VSID
# allocator), 36 bits; the primary group is (VSID XOR page index in the segment) mod the groups,
# the secondary group its complement.
SEGMENT_SHIFT = 28
LARGE_SEGMENT_SHIFT = 40
VSID_MULT = 0x5DEECE66D
VSID_MASK = 0xFFFFFFFFF

# packed LRU order: 16 nibbles, way numbers, most recent in the low nibble
NIBBLE_ONES = np.uint64(0x1111111111111111)
NIBBLE_HIGHS = np.uint64(0x8888888888888888)


@inline
def segment_shift(page_shift):
    """The segment size (log2) a page of 2**page_shift bytes lives in: 256 MiB, or 1 TiB for pages
    of 256 MiB or more."""
    return SEGMENT_SHIFT if page_shift < SEGMENT_SHIFT else LARGE_SEGMENT_SHIFT


@inline
def vsid_of(a, page_shift):
    """The VSID of the segment holding address ``a`` (pages of 2**page_shift bytes)."""
    return ((a >> segment_shift(page_shift)) * VSID_MULT) & VSID_MASK


@inline
def hpt_group(a, page_shift, mask):
    """The primary page-table entry group of address ``a`` on pages of 2**page_shift bytes, in a
    table of ``mask + 1`` groups (a power of two); the secondary group is ``~group & mask``."""
    seg = segment_shift(page_shift)
    pidx = (a & ((1 << seg) - 1)) >> page_shift
    return (vsid_of(a, page_shift) ^ pidx) & mask


@inline
def find_tag(tags, base, pw, tag):
    """The way of ``tag`` in the set whose ``pw`` ways (a multiple of 4, padding holds -1) start at
    ``base``, or -1: four ways compared at a time, branch-free within a group."""
    hw = -1
    for gi in range(pw >> 2):
        g = base + 4 * gi
        if (tags[np.uint64(g)] == tag) | (tags[np.uint64(g + 1)] == tag) | (tags[np.uint64(g + 2)] == tag) | (tags[np.uint64(g + 3)] == tag):
            for w in range(g, g + 4):
                if tags[np.uint64(w)] == tag:
                    hw = w - base
                    break
            break
    return hw


LRU_TOUCH = Rule(
    "lru_touch",
    ("o", "hw"),
    ("out",),
    """
    x{_} = {o} ^ (np.uint64({hw}) * NIBBLE_ONES)
    t{_} = (x{_} - NIBBLE_ONES) & ~x{_} & NIBBLE_HIGHS
    b{_} = (t{_} & (~t{_} + np.uint64(1))) >> np.uint64(3)
    {out} = ({o} & ~((b{_} << np.uint64(4)) - np.uint64(1))) | (({o} & (b{_} - np.uint64(1))) << np.uint64(4)) | np.uint64({hw})
    """,
    {"NIBBLE_ONES": NIBBLE_ONES, "NIBBLE_HIGHS": NIBBLE_HIGHS},
)
lru_touch = LRU_TOUCH.function  # packed order ``o`` with way ``hw`` made most recent: its rank found
# by a SWAR zero-nibble search, the nibbles below it shifted up by one, ``hw`` put in the low nibble

ORDER_VICTIM = Rule(
    "order_victim",
    ("o", "ways"),
    ("victim", "out"),
    """
    o{_} = {o}
    {victim} = np.int64((o{_} >> np.uint64(4 * ({ways} - 1))) & np.uint64(15))
    if {ways} < 16:
        {out} = ((o{_} << np.uint64(4)) | np.uint64({victim})) & ((np.uint64(1) << np.uint64(4 * {ways})) - np.uint64(1))
    else:
        {out} = (o{_} << np.uint64(4)) | np.uint64({victim})
    """,
)
order_victim = ORDER_VICTIM.function  # a miss in a set of ``ways`` (at most 16) kept as packed order
# ``o``: (the least recent way, in the top nibble; the order with it made most recent)


# an LRU list in one 64-bit word: up to 4 lanes of 16 bits, each a tag, the most recent in the low
# lane; an empty lane holds LANE_EMPTY (tags are below it), and lanes beyond the ways stay empty
LANE_ONES = np.uint64(0x0001000100010001)
LANE_HIGHS = np.uint64(0x8000800080008000)
LANE_EMPTY = 0xFFFF
LANE_WAYS = 4

LANE_LOOKUP = Rule(
    "lane_lookup",
    ("w", "key", "ways"),
    ("hit", "out"),
    """
    k{_} = np.uint64({key})
    x{_} = {w} ^ (k{_} * LANE_ONES)
    t{_} = (x{_} - LANE_ONES) & ~x{_} & LANE_HIGHS
    {hit} = t{_} != np.uint64(0)
    b{_} = (t{_} & (~t{_} + np.uint64(1))) if {hit} else (np.uint64(1) << np.uint64(16 * {ways} - 1))
    {out} = ({w} & ~((b{_} << np.uint64(1)) - np.uint64(1))) | (({w} & ((b{_} >> np.uint64(15)) - np.uint64(1))) << np.uint64(16)) | k{_}
    """,
    {"LANE_ONES": LANE_ONES, "LANE_HIGHS": LANE_HIGHS},
)
lane_lookup = LANE_LOOKUP.function  # the lookup of ``key`` (below LANE_EMPTY) in a set of ``ways``
# (at most 4) kept as an LRU list in one word ``w``: (hit; the list with ``key`` most recent). Branch
# free: the lane that matches (a SWAR zero-lane search) or, on a miss, the least recent lane is taken
# out, the more recent lanes shift up one, and the key goes in the low lane


@inline
def stamp_victim(stamps, base, ways):
    """The slot of the way with the smallest stamp among ``stamps[base : base + ways]``, the lowest
    on a tie (empty ways hold the smallest stamps, so they fill first, lowest first)."""
    victim = base
    for w in range(base + 1, base + ways):
        if stamps[w] < stamps[victim]:
            victim = w
    return victim


@inline
def region_of(a, reg_start):
    """The index of the last region starting at or before ``a`` (binary search over the sorted
    starts; 0 when ``a`` lies before every region). The caller checks that it holds ``a``."""
    lo = 0
    hi = reg_start.shape[0] - 1
    while lo < hi:
        mid = (lo + hi + 1) >> 1
        if reg_start[mid] <= a:
            lo = mid
        else:
            hi = mid - 1
    return lo


# Guest-physical frames of a virtualised guest (a modelling assumption): a multiplicative hash's
# top bits, salted per table level, so pages and table pages spread over guest RAM as an OS's
# allocator hands frames out after a while (two may share a frame: then they share its host
# translation too).
FRAME_MULT = 0x5851F42D4C957F2D
SALT_MULT = 0x9E3779B97F4A7C15


@inline
def guest_frame(n, salt, bits):
    """The frame, below 2**bits, of page or table number ``n`` (``salt``: 0 a data page, l + 1 a
    table of guest level l): the top ``bits`` bits of (n xor salt x SALT_MULT) x FRAME_MULT mod 2**64."""
    if bits <= 0:
        return 0
    h = (np.uint64(n) ^ (np.uint64(salt) * np.uint64(SALT_MULT))) * np.uint64(FRAME_MULT)
    return np.int64(h >> np.uint64(64 - bits))
