"""Random: a hit changes nothing; a miss fills the next empty way, else way ``xorshift64() % ways``
(one generator for every structure, seeded by the run). Sets of any width are scanned."""

from ..translate import RANDOM_FILL

NAME = "random"
MODE = RANDOM_FILL
WIDE = None
IMPORTS = "from pagesim._kernels.sets import random_way"


def allows(ways: int) -> str | None:
    return None


def touch(s) -> list[str]:
    return []


def fill(s) -> list[str]:
    return [f"tags[np.uint64(base + random_way(order, osl, rng, {s.w}))] = {s.tag}"]
