"""Reuse (LRU stack) distances of a stream of page numbers, in O(n log n) with a Fenwick tree."""

import numpy as np

from ._jit import jit


@jit
def stack_distances(ids, n_ids):
    """For each access t to page ``ids[t]`` (0 <= id < n_ids): the number of distinct other pages
    accessed since the previous access to the same page, or -1 for a first access. A fully
    associative LRU TLB of N entries hits exactly the accesses with 0 <= distance < N.

    The tree marks, at each earlier time, whether that access is still the latest one to its page;
    the distance is the number of marks strictly between the previous access and now."""
    n = ids.shape[0]
    last = np.full(n_ids, -1, np.int64)
    tree = np.zeros(n + 1, np.int64)
    out = np.empty(n, np.int64)
    for t in range(n):
        p = ids[t]
        prev = last[p]
        if prev < 0:
            out[t] = -1
        else:
            # marks in positions prev+1 .. t-1 (0-based) = prefix(t) - prefix(prev + 1) in 1-based sums
            s = 0
            k = t
            while k > 0:
                s += tree[k]
                k -= k & -k
            k = prev + 1
            while k > 0:
                s -= tree[k]
                k -= k & -k
            out[t] = s
            k = prev + 1
            while k <= n:
                tree[k] -= 1
                k += k & -k
        k = t + 1
        while k <= n:
            tree[k] += 1
            k += k & -k
        last[p] = t
    return out
