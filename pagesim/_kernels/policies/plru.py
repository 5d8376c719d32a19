"""Tree pseudo-LRU replacement (``replacement="plru"``), as TLBs and caches of Intel and Arm cores
approximate LRU: a set of ``ways`` (a power of two, 1 to 32) keeps one bit per node of a binary
tree over its ways, ``ways - 1`` bits. A hit or a fill sets the bits on the way's path to point
away from it; a miss follows the bits from the root to the victim. Empty ways fill first, lowest
first (a fill count, as hardware's valid bits do).

The set's order word holds the tree, node n (1 the root, 2n and 2n + 1 its children) at bit n - 1,
a 1 meaning "the victim is on the right", and the fill count from bit 32. The written kernel calls
:func:`plru_touch` on a hit and :func:`plru_victim` then :func:`plru_touch` on a miss
(``writer.POLICIES["plru"]``); ``tests/reference.py`` keeps its twin as a list of bits.
"""

import numpy as np

from ..rules import inline

MAX_WAYS = 32  # the tree's 31 bits below the fill count


@inline
def plru_touch(o, w, ways):
    """Order word ``o`` with way ``w`` made the most recently used: each node on its path points
    away from it."""
    n = 1
    half = ways >> 1
    while half > 0:
        bit = np.uint64(1) << np.uint64(n - 1)
        if w >= half:  # w on the right: the victim is to the left
            o &= ~bit
            n = 2 * n + 1
            w -= half
        else:
            o |= bit
            n = 2 * n
        half >>= 1
    return o


@inline
def plru_victim(o, ways):
    """A miss: (the way the tag goes to, the order word). The lowest empty way while the set is not
    full (its fill count goes up), else the way the bits lead to from the root."""
    filled = np.int64(o >> np.uint64(32))
    if filled < ways:
        return filled, o + (np.uint64(1) << np.uint64(32))
    n = 1
    w = 0
    half = ways >> 1
    while half > 0:
        if (o >> np.uint64(n - 1)) & np.uint64(1):
            w += half
            n = 2 * n + 1
        else:
            n = 2 * n
        half >>= 1
    return np.int64(w), o


NAME = "plru"
MODE = 8
WIDE = None
IMPORTS = "from pagesim._kernels.policies.plru import plru_touch, plru_victim"


def allows(ways: int) -> str | None:
    if ways & (ways - 1) or not 1 <= ways <= MAX_WAYS:
        return f"tree pseudo-LRU needs a power of two from 1 to {MAX_WAYS} ways"
    return None


def touch(s) -> list[str]:
    return [f"order[np.uint64(osl)] = plru_touch(order[np.uint64(osl)], hw, {s.w})"]


def fill(s) -> list[str]:
    return [
        f"victim, ow = plru_victim(order[np.uint64(osl)], {s.w})",
        f"order[np.uint64(osl)] = plru_touch(ow, victim, {s.w})",
        f"tags[np.uint64(base + victim)] = {s.tag}",
    ]
