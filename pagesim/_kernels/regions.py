"""The region lookup the OS-stage kernels share (the translation kernel keeps its own copy inline:
its source is also the template of the specialised kernels)."""
from ._jit import jit


@jit
def find_region(a, reg_start, reg_end, last):
    """Index of the region holding address ``a`` (``last`` first, then a binary search over the
    sorted starts), or -1 when no region holds it."""
    if reg_start[last] <= a and a < reg_end[last]:
        return last
    lo = 0
    hi = reg_start.shape[0] - 1
    while lo < hi:
        mid = (lo + hi + 1) >> 1
        if reg_start[mid] <= a:
            lo = mid
        else:
            hi = mid - 1
    if reg_start[lo] <= a and a < reg_end[lo]:
        return lo
    return -1
