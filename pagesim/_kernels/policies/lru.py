"""Least recently used: a hit makes its way the most recent; a miss fills the least recent.

Up to 16 ways, the set's recency order is packed in its order word (``rules.lru_touch``,
``rules.order_victim``); wider sets keep it as a ring (``sets.ring_touch``)."""

from ..translate import LIST_LRU, ORDER_LRU

NAME = "lru"
MODE = ORDER_LRU
WIDE = LIST_LRU
IMPORTS = "from pagesim._kernels.rules import lru_touch, order_victim"


def allows(ways: int) -> str | None:
    return None


def touch(s) -> list[str]:
    return ["order[np.uint64(osl)] = lru_touch(order[np.uint64(osl)], hw)"]


def fill(s) -> list[str]:
    return [f"victim, ow = order_victim(order[np.uint64(osl)], {s.w})", "order[np.uint64(osl)] = ow", f"tags[np.uint64(base + victim)] = {s.tag}"]
