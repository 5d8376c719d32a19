"""First touches: the order in which an access stream first touches each base page."""
import numpy as np

from ._jit import jit


@jit
def first_touches(addrs, reg_start, reg_end, reg_base, base_shift, seen, out, n_out):
    """Append to ``out`` the layout-wide base-page index of every base page ``addrs`` touches for the
    first time (``seen`` is a bitmap over those indices, ``n_out[0]`` the count so far). Returns -1,
    or the index of the first address outside every region."""
    nreg = reg_start.shape[0]
    last = 0
    for i in range(addrs.shape[0]):
        a = addrs[i]
        lo = last
        if not (reg_start[lo] <= a and a < reg_end[lo]):
            lo = 0
            hi = nreg - 1
            while lo < hi:
                mid = (lo + hi + 1) >> 1
                if reg_start[mid] <= a:
                    lo = mid
                else:
                    hi = mid - 1
            if not (reg_start[lo] <= a and a < reg_end[lo]):
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
