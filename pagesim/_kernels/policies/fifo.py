"""First in, first out: a hit changes nothing; a miss fills the way filled longest ago.

Up to 16 ways, the set's fill order is packed in its order word (``rules.order_victim``); wider
sets keep it as a ring."""

from ..translate import LIST_FIFO, ORDER_FIFO
from . import lru

NAME = "fifo"
MODE = ORDER_FIFO
WIDE = LIST_FIFO
IMPORTS = lru.IMPORTS


def allows(ways: int) -> str | None:
    return None


def touch(s) -> list[str]:
    return []


fill = lru.fill  # the oldest way, in the same packed order (only LRU's hits reorder it)
