"""The address-translation model, and the arrays its kernels work on (``Config``, ``State``,
``Counters``). The kernels themselves are written for each run by ``writer.py``.

Model (the plain-Python twin in tests/twins/reference.py must agree on every counter):

- An access of kind k (0 data, 1 instruction) to a page of size index z looks up the structures
  ``chain[k, z, 0..]`` in order. Each lookup either hits (LRU: the entry becomes most recent) or
  misses and fills that structure at once (so every level looked in is filled; levels not looked
  in are untouched). A hit ends the lookups.
- After a miss at the first level, the SLB (if any) is looked up with 256 MiB segment tags.
- A miss everywhere is a walk. The page's first walk is also its fault (first touch).
  Walk references: radix = levels below the leaf, minus the levels skipped by the deepest
  page-walk cache that hits (all applicable caches are looked up and filled); hashed = 1 in the
  primary group, 2 in the secondary group, 2 when the entry is not in the table (then inserted);
  tsb = 1 TSB probe, plus ``sw_walk_refs`` on a TSB miss; vhpt = 1.
- Fast path: an access in the same entry granule as the previous access of its kind is an L1 hit
  that changes no state (LRU: the entry is already most recent; tree pseudo-LRU: its path already
  points away from it; FIFO and random: hits change nothing), so it only counts. When a structure first in one kind's chains appears anywhere in the
  other kind's chains (unified first in both, or a unified L2 that is first for instructions), any
  slow access ends the other kind's fast path.

Replacement is one of the policies in ``policies/`` (exact LRU, FIFO, random, tree pseudo-LRU),
each with its own mode number (the modes below, and plru's 8); empty ways fill first,
lowest-numbered first. Sets of
up to 16 ways keep their recency order packed in one 64-bit word (4 bits a way, most recent in the
low nibble): a miss takes the victim from the top nibble and rotates, a hit finds the way's rank
with a SWAR zero-nibble search and moves it to the front, both O(1). Wider structures (fully
associative TLBs of 32-256 entries, SLBs) keep each set's ways in a ring of links, least recent at
the head: a miss takes the head way and moves the head on to the next way (the victim is then the
most recent, with no link changed), an LRU hit moves its way just behind the head (FIFO: nothing).
The ring starts as way 0, 1, 2, ... so empty ways fill in that order. Where a wide structure's tag
is found:
- DIRECT_LRU, DIRECT_FIFO: each granule an entry can hold (a page, a piece of one, an SLB's segment)
  has a number in the layout, ``key + idx_off[s, region]`` (``engine.stages.granule_offsets``; the
  structures' numbers do not overlap), and ``pos`` holds each number's way or -1: one load finds
  the way, a miss stores two. Chosen when the
  layout has at most ``engine.stages.DIRECT_MAX`` such granules (a random trace's miss in a 64-way
  structure: 2.5 ns, against 11 through the hash table). An LRU SLB so indexed keeps stamps
  instead of a ring (STAMP_LRU): each way's last use, so a hit is one store; a miss takes the
  oldest (an SLB mostly hits, where a ring relinks the way).
- LIST_LRU, LIST_FIFO, otherwise (and always in simulate_processes): a hash table of the
  structure's own holds (tag, way) pairs for the whole structure, since a tag determines its set
  (linear probing, backward-shift deletion). It has ``sets.HASH_FACTOR`` pairs per entry, so it is at most
  1/8 full (probe loops of unpredictable length cost branch mispredictions: a miss in a
64-way structure measured 50 ns at 1/2 full, 16 ns at 1/8). Random fills an empty way if there is one, else way
``xorshift64() % ways``; one generator serves all structures. Every set is padded to a multiple
of 4 ways (padding never matches) so the tag search runs in branch-free groups of 4: with a
run-time way count a plain loop measured 4x slower.
"""

from collections import namedtuple

# How a structure keeps its replacement state (chosen in Python from policy and ways):
ORDER_LRU, ORDER_FIFO, LIST_LRU, LIST_FIFO, RANDOM_FILL, DIRECT_LRU, DIRECT_FIFO, STAMP_LRU = 0, 1, 2, 3, 4, 5, 6, 7
MAX_CHAIN = 4  # structures one access may look up in turn (the deepest preset, POWER8, has 3)

Config = namedtuple(
    "Config",
    [
        "st_sets",
        "st_ways",
        "st_mask",
        "st_mode",
        "st_base",  # int64[NS]
        "st_pways",
        "st_obase",  # int64[NS]: ways padded to a multiple of 4; first order word
        # int64[sum sets], read at a structure's first set: where its hash table starts in st.htab (LIST_*)
        "set_hash",
        "tag_shift",  # int64[NS, K]
        "idx_off",  # int64[NS, R]: key + idx_off[s, r] is a DIRECT_*/STAMP_LRU structure's granule's slot in st.pos in region r (0 for other modes)
        "chain",  # int64[2, K, L]; -1 ends a chain
        "reg_start",
        "reg_end",
        "reg_size",  # int64[R]: the page class each region's accesses are translated as
        # int64[R]: the page class each region's walks are logged as (the nested replay's: a host
        # region's classes that look up the same chain are translated as one)
        "reg_class",
        "reg_base",  # int64[R]
        "reg_fa",  # int64[R]: pages one fault maps (1: demand paging)
        "page_shift",  # int64[K]
        "walk_kind",
        "radix_refs",  # int64[1], int64[K]
        "pwc_struct",
        "pwc_skip",  # int64[P]
        "slb_struct",  # int64[1]: -1 if none
        "tsb_mask",
        "sw_walk_refs",
        "hpt_mask",  # int64[1] each
        "shared_first",  # int64[1]: 1 if a structure first in one kind's chains is in the other kind's
        "any_fa",  # int64[1]: 1 if a region maps more than one page per fault
        "log_walks",  # int64[1]: 1 to append every walk to st.wlog
    ],
)

State = namedtuple(
    "State",
    [
        "tags",  # int64[S = sum sets*padded ways]: each way's tag, -1 empty
        # int64[2 * S or 1]: LIST_*, DIRECT_* sets' recency rings, (previous way, next way) per
        # slot, -1 none; STAMP_LRU: way w's last use at links[2 * (its set's first slot) + w]
        "links",
        # uint64[sum sets]: packed recency order (ORDER_*), the ring's head (LIST_*, DIRECT_*),
        # the set's clock (STAMP_LRU) or fill count (RANDOM_FILL)
        "order",
        "htab",  # int64[2 * HASH_FACTOR * entries of every LIST_* structure, or 1]: their hash tables, (tag, way) pairs, tag -1 empty
        "pos",  # int16[sum of the DIRECT_* structures' granules, or 1]: each granule's way in its structure, -1 if absent
        "rng",  # uint64[1]
        # uint8[total pages]: 0 unmapped, 1 mapped and touched, 2 prefaulted, not yet touched;
        # written only with fault-around: read it with engine.stages.page_states
        "page_state",
        "mapped",  # uint64[ceil(total pages / 64)]: bit set once a page is mapped (L1-cache sized)
        "page_hpt",  # uint8[total pages or 1]: where the HPT holds the page
        "tsb",  # int64[K * tsb_entries or 1]
        "hpt_slots",  # int64[ptegs * 8 or 1]: global page id + 1, 0 empty
        "hpt_rr",  # uint8[ptegs or 1]: per group, its filled slots (0-8) until full, then 8 + its round-robin eviction pointer
        "memo_addr",
        "memo_shift",
        "memo_z",
        "run",  # int64[2] each (per kind)
        "wlog",
        "wlog_n",  # int64[3 * chunk or 1], int64[1]: walks as (address, refs * 16 + z, access index in the chunk)
    ],
)

Counters = namedtuple(
    "Counters",
    [
        "resolved",  # int64[2, K, L+1]: accesses resolved at chain position j (L: by a walk)
        "hits",
        "misses",  # int64[NS, K]: SLB and page-walk caches only (TLB counts follow from resolved)
        "walk_refs",  # int64[2, K]
        "tsb_hits",
        "tsb_misses",  # int64[2, K]
        "faults",  # int64[K]
        "prefaulted",  # int64[K]: pages mapped by fault-around beside the faulting page
        "hpt_secondary",  # int64[K]: walks resolved in the secondary group
        "hpt_events",  # int64[2]: evictions, refills (entry missing from HPT on a mapped page)
    ],
)


def finish(st, cnt):
    """Attribute the pending fast-path runs; call once after the last chunk. Plain Python: two
    additions, not worth a compiled function (which took 1.2-1.5 s to compile on a cold start)."""
    for k in range(2):
        r = int(st.run[k])
        if r:
            cnt.resolved[k, int(st.memo_z[k]), 0] += r
            st.run[k] = 0
