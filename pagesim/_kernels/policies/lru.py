"""Least recently used: a hit makes its way the most recent; a miss fills the least recent.

Up to 16 ways, the set's recency order is packed in its order word (``rules.LRU_TOUCH``,
``rules.ORDER_VICTIM``); wider sets keep it as a ring (``sets.ring_touch``)."""

from ..rules import LRU_TOUCH, ORDER_VICTIM
from ..translate import LIST_LRU, ORDER_LRU

NAME = "lru"
MODE = ORDER_LRU
WIDE = LIST_LRU
IMPORTS = "from pagesim._kernels.rules import NIBBLE_HIGHS, NIBBLE_ONES"


def allows(ways: int) -> str | None:
    return None


def touch(s) -> list[str]:
    return LRU_TOUCH.lines(s.sfx, o="order[np.uint64(osl)]", hw="hw", out="order[np.uint64(osl)]")


def fill(s) -> list[str]:
    return [
        *ORDER_VICTIM.lines(s.sfx, o="order[np.uint64(osl)]", ways=str(s.w), victim="victim", out="ow"),
        "order[np.uint64(osl)] = ow",
        f"tags[np.uint64(base + victim)] = {s.tag}",
    ]
