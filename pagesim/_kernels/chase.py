"""The latency probe's kernels: follow a cycle of indices, each load's address the previous load's
value; and write a buffer's first touches with the minor faults they take counted around the loop."""

import ctypes

import numba

from ._jit import jit

#: ``getrusage(2)`` from the C library, called from compiled code (``scatter_counted``)
_getrusage = ctypes.CDLL(None).getrusage
_getrusage.argtypes = [ctypes.c_int, ctypes.c_void_p]
_getrusage.restype = ctypes.c_int


@jit
def chase(buf, start, loads):
    """Follow ``buf`` from index ``start`` for ``loads`` dependent loads; returns where it stopped
    (so the loop cannot be optimised away). Every value in ``buf`` on the cycle must be a valid
    index of ``buf``: pagesim.probe builds and checks the cycle before calling this."""
    i = start
    for _ in range(loads):
        i = buf[i]
    return i


@numba.njit(cache=False, nogil=True)  # it calls a C function by its address in this process: nothing to cache
def scatter_counted(buf, idx, vals, who, before, after):
    """``buf[idx[k]] = vals[k]`` for every k, allocating nothing, between two ``getrusage(who, ...)`` calls that fill ``before``
    and ``after`` (each a buffer the size of ``struct rusage``); returns 0, or -1 when a call
    failed. Nothing runs between the readings but the loop, so the minor faults they differ by are
    the faults of ``buf``'s pages alone: no interpreter object is made or freed in between. The
    callers check every index is inside ``buf``."""
    a = _getrusage(who, before.ctypes.data)
    for k in range(idx.shape[0]):
        buf[idx[k]] = vals[k]
    b = _getrusage(who, after.ctypes.data)
    return -1 if a != 0 or b != 0 else 0
