"""Tree pseudo-LRU replacement (``replacement="plru"``), as TLBs and caches of Intel and Arm cores
approximate LRU: a set of ``ways`` (a power of two, 1 to 32) keeps one bit per node of a binary
tree over its ways, ``ways - 1`` bits. A hit or a fill sets the bits on the way's path to point
away from it; a miss follows the bits from the root to the victim. Empty ways fill first, lowest
first (a fill count, as hardware's valid bits do).

The set's order word holds the tree, node n (1 the root, 2n and 2n + 1 its children) at bit n - 1,
a 1 meaning "the victim is on the right", and the fill count from bit 32. The written kernel calls
:func:`plru_touch` on a hit and :func:`plru_victim` then :func:`plru_touch` on a miss
(this module's ``touch`` and ``fill``); ``tests/twins/reference.py`` keeps its twin as a list of bits.
"""

from ..rules import Rule

MAX_WAYS = 32  # the tree's 31 bits below the fill count


PLRU_TOUCH = Rule(
    "plru_touch",
    ("o", "w", "ways"),
    ("out",),
    """
    o{_} = {o}
    w{_} = {w}
    n{_} = 1
    half{_} = {ways} >> 1
    while half{_} > 0:
        bit{_} = np.uint64(1) << np.uint64(n{_} - 1)
        if w{_} >= half{_}:  # the way on the right: the victim is to the left
            o{_} &= ~bit{_}
            n{_} = 2 * n{_} + 1
            w{_} -= half{_}
        else:
            o{_} |= bit{_}
            n{_} = 2 * n{_}
        half{_} >>= 1
    {out} = o{_}
    """,
)
plru_touch = PLRU_TOUCH.function  # order word ``o`` with way ``w`` made the most recently used: each
# node on its path points away from it

PLRU_VICTIM = Rule(
    "plru_victim",
    ("o", "ways"),
    ("victim", "out"),
    """
    o{_} = {o}
    f{_} = np.int64(o{_} >> np.uint64(32))
    if f{_} < {ways}:  # the lowest empty way; the fill count goes up
        {victim} = f{_}
        {out} = o{_} + (np.uint64(1) << np.uint64(32))
    else:  # the way the bits lead to from the root
        n{_} = 1
        v{_} = 0
        half{_} = {ways} >> 1
        while half{_} > 0:
            if (o{_} >> np.uint64(n{_} - 1)) & np.uint64(1):
                v{_} += half{_}
                n{_} = 2 * n{_} + 1
            else:
                n{_} = 2 * n{_}
            half{_} >>= 1
        {victim} = np.int64(v{_})
        {out} = o{_}
    """,
)
plru_victim = PLRU_VICTIM.function  # a miss: (the way the tag goes to, the order word)

NAME = "plru"
MODE = 8
WIDE = None
IMPORTS = ""


def allows(ways: int) -> str | None:
    if ways & (ways - 1) or not 1 <= ways <= MAX_WAYS:
        return f"tree pseudo-LRU needs a power of two from 1 to {MAX_WAYS} ways"
    return None


def touch(s) -> list[str]:
    return PLRU_TOUCH.lines(s.sfx, o="order[np.uint64(osl)]", w="hw", ways=str(s.w), out="order[np.uint64(osl)]")


def fill(s) -> list[str]:
    return [
        *PLRU_VICTIM.lines(s.sfx, o="order[np.uint64(osl)]", ways=str(s.w), victim="victim", out="ow"),
        *PLRU_TOUCH.lines(s.sfx, o="ow", w="victim", ways=str(s.w), out="order[np.uint64(osl)]"),
        f"tags[np.uint64(base + victim)] = {s.tag}",
    ]
