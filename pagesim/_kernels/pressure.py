"""Memory pressure: which pages stay resident under a RAM limit, with clock or LRU reclaim.

Model (tests/twins/reference_pressure.py is the plain twin that must agree on every counter):

- A page is the unit the backing layout maps (a huge page is resident or swapped as a whole).
- Touching a page that is not resident faults: a *minor* fault the first time (zero-fill), a
  *major* fault (swap-in) when it was swapped out. Before the page comes in, pages are evicted
  until it fits in ``cap`` bytes; every evicted page is written to swap (a swap-out).
- ``lru``: the victim is the least recently touched resident page.
- ``clock`` (second chance): resident pages sit in a queue in the order they came in, each with a
  referenced bit, set by every touch (and by the faulting touch). The victim is found at the
  head: a page whose bit is set has it cleared and goes to the tail; the first page with a clear
  bit is evicted. Each page examined counts one scan.
- Consecutive touches of one page are one touch (they change nothing in either policy).
"""

from collections import namedtuple

import numpy as np

from ._jit import jit
from .regions import find_region

NEVER, RESIDENT, SWAPPED = 0, 1, 2
# counter slots
MINOR, MAJOR, SWAP_OUT, SCANS, USED, PEAK, HEAD, TAIL, LAST = range(9)

PressureConfig = namedtuple(
    "PressureConfig",
    [
        "reg_start",
        "reg_end",
        "reg_base",
        "reg_shift",  # int64[R]: region bounds, first page, log2 page size
        "page_shift",  # uint8[total pages or 1]: log2 of page g's size
        "cap",  # int64[1]: bytes the program may hold
        "lru",  # int64[1]: 1 for LRU reclaim, 0 for clock
    ],
)

PressureState = namedtuple(
    "PressureState",
    [
        "state",  # uint8[total pages or 1]: NEVER, RESIDENT or SWAPPED
        "ref",  # uint8[total pages, or 1 with LRU]: clock's referenced bits
        "queue",  # int32[total pages + 1, or 1 with LRU]: the clock ring
        "prev",
        "nxt",  # int32[total pages + 1, or 1 with clock]: the LRU list, sentinel total pages
        "c",  # int64[9]: the counters above
    ],
)


@jit
def _unlink(prev, nxt, g):
    p = prev[g]
    q = nxt[g]
    nxt[p] = q
    prev[q] = p


@jit
def _push_front(prev, nxt, sent, g):
    f = nxt[sent]
    nxt[sent] = g
    prev[g] = sent
    nxt[g] = f
    prev[f] = g


@jit
def pressure_chunk(addrs, cfg, ps):
    """Apply one chunk of accesses (``cfg``: a PressureConfig, ``ps``: a PressureState).
    ``page_shift[g]``: log2 of page g's size. ``prev``/``nxt``: a doubly linked LRU list over pages
    with sentinel ``n_pages`` (most recent after the sentinel). ``queue``: the clock ring,
    ``n_pages + 1`` slots. Returns -1 or the index of the first address outside every region."""
    reg_start, reg_end, reg_base, reg_shift, page_shift = cfg.reg_start, cfg.reg_end, cfg.reg_base, cfg.reg_shift, cfg.page_shift
    cap = cfg.cap[0]
    lru = cfg.lru[0] != 0
    state, ref, queue, prev, nxt, c = ps.state, ps.ref, ps.queue, ps.prev, ps.nxt, ps.c
    sent = prev.shape[0] - 1
    qn = queue.shape[0]
    last_reg = 0
    for i in range(addrs.shape[0]):
        a = addrs[i]
        lo = find_region(a, reg_start, reg_end, last_reg)
        if lo < 0:
            return i
        last_reg = lo
        g = reg_base[lo] + ((a - reg_start[lo]) >> reg_shift[lo])
        if g == c[LAST]:
            continue
        c[LAST] = g
        if state[g] == RESIDENT:
            if lru:
                _unlink(prev, nxt, g)
                _push_front(prev, nxt, sent, g)
            else:
                ref[g] = 1
            continue
        if state[g] == NEVER:
            c[MINOR] += 1
        else:
            c[MAJOR] += 1
        need = np.int64(1) << page_shift[g]
        while c[USED] + need > cap:
            if lru:
                v = prev[sent]
                _unlink(prev, nxt, v)
            else:
                while True:
                    v = queue[c[HEAD]]
                    c[HEAD] = (c[HEAD] + 1) % qn
                    c[SCANS] += 1
                    if ref[v]:
                        ref[v] = 0
                        queue[c[TAIL]] = v
                        c[TAIL] = (c[TAIL] + 1) % qn
                    else:
                        break
            state[v] = SWAPPED
            c[USED] -= np.int64(1) << page_shift[v]
            c[SWAP_OUT] += 1
        state[g] = RESIDENT
        c[USED] += need
        if c[USED] > c[PEAK]:
            c[PEAK] = c[USED]
        if lru:
            _push_front(prev, nxt, sent, g)
        else:
            ref[g] = 1
            queue[c[TAIL]] = g
            c[TAIL] = (c[TAIL] + 1) % qn
    return -1
