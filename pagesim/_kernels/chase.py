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


@jit
def scatter(buf, idx, vals):
    """``buf[idx[k]] = vals[k]`` for every k, allocating nothing: a first touch timed by the fault
    counter then counts only the faults of ``buf``'s pages (numpy's fancy indexing may take a
    fresh page of the heap for its buffers). The callers check every index is inside ``buf``."""
    for k in range(idx.shape[0]):
        buf[idx[k]] = vals[k]
