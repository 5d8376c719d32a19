"""First touches: the order in which an access stream first touches each base page."""

import numpy as np

from ._jit import jit
from .regions import find_region


@jit
def first_touches(addrs, reg_start, reg_end, reg_base, base_shift, seen, out, n_out):
    """Append to ``out`` the layout-wide base-page index of every base page ``addrs`` touches for the
    first time (``seen`` is a bitmap over those indices, ``n_out[0]`` the count so far). Returns -1,
    or the index of the first address outside every region."""
    last = 0
    for i in range(addrs.shape[0]):
        a = addrs[i]
        lo = find_region(a, reg_start, reg_end, last)
        if lo < 0:
            return i
        last = lo
        p = reg_base[lo] + ((a - reg_start[lo]) >> base_shift)
        w = seen[p >> 6]
        b = np.uint64(1) << np.uint64(p & 63)
        if (w & b) == 0:
            seen[p >> 6] = w | b
            out[n_out[0]] = p
            n_out[0] += 1
    return -1
