"""The one place that sets numba options for every pagesim kernel."""
import numba

# cache=True: compiled kernels persist between sessions (NUMBA_CACHE_DIR must be writable; Binder
#   sets it). nogil=True: a kernel releases the GIL, so sweeps can run in threads.
# error_model="numpy": no Python-style division checks in the hot loop (divisors are validated
#   non-zero before a kernel is called).
OPTIONS = dict(cache=True, nogil=True, error_model="numpy")


def jit(fn):
    return numba.njit(**OPTIONS)(fn)

