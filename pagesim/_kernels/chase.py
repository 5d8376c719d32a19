"""The latency probe's kernel: follow a cycle of indices, each load's address the previous load's value."""

from ._jit import jit


@jit
def chase(buf, start, loads):
    """Follow ``buf`` from index ``start`` for ``loads`` dependent loads; returns where it stopped
    (so the loop cannot be optimised away). Every value in ``buf`` on the cycle must be a valid
    index of ``buf``: pagesim.probe builds and checks the cycle before calling this."""
    i = start
    for _ in range(loads):
        i = buf[i]
    return i
