"""Random: a hit changes nothing; a miss fills the next empty way, else way ``xorshift64() % ways``
(one generator for every structure, seeded by the run). Sets of any width are scanned."""

from ..sets import RANDOM_WAY
from ..translate import RANDOM_FILL

NAME = "random"
MODE = RANDOM_FILL
WIDE = None
IMPORTS = ""


def allows(ways: int) -> str | None:
    return None


def touch(s) -> list[str]:
    return []


def fill(s) -> list[str]:
    return [*RANDOM_WAY.lines(s.sfx, order="order", osl="osl", rng="rng", ways=str(s.w), out="victim"), f"tags[np.uint64(base + victim)] = {s.tag}"]
