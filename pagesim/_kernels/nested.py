"""The host's side of nested (two-dimensional) paging: every guest walk replayed through the host's
nested TLB and page-walk caches, in program order. The replay is written by ``writer.nested`` (with
the host caches' geometry as constants, or read at run time); this module states its model and the
arrays it keeps its state in.

Model (the plain-Python twin, ``tests/twins/reference.py`` with a virtualised machine, must agree on
every counter):

- The translation kernel logs each guest walk as (guest-virtual address a, guest references r x 16
  + page-size index z, index of the access in its chunk): the guest walk read the r lowest levels
  of its table for a page of size z (the guest's page-walk caches skipped the rest).
- Each of those r guest table entries, then the data, is at a guest-physical address (gPA) the
  host translates: r + 1 translations a walk, in that order (top level first, the data last).
- z is the access's page class (``pagesim.engine.stages.MachineParts.classes``): its guest page
  size, and the host page backing its data (the default host page, or a host region's).
- Guest-physical addresses (a modelling assumption, ``rules.guest_frame``): level l's table that
  covers a, number t = a >> (shift[l] + bits[l]), is a table page of 8 x 2**bits[l] bytes at frame
  guest_frame(t, salt l + 1) of guest RAM, and its entry for a is 8 x ((a >> shift[l]) mod
  2**bits[l]) into it; the guest page of a, number a >> page_shift[z], is at frame
  guest_frame(page, salt 0) in pages of that size, and a's offset in its page is kept. Guest RAM
  is 2**ram_bits bytes; the data of class z is in its host page's range of it, the area d_area[z]
  (address d_area[z] x 2**ram_bits onwards; the default host page's is area 0, where the tables are).
- One translation of gPA g backed by host pages of 2**hs bytes (a table entry: the default host
  page; the data: class z's, d_shift[z]) in area ar: the nested TLB (when there is one) looks up key
  (g >> hs) | (ar << 56) in set key mod sets; a hit ends it with no reference, a miss fills it.
  Then the host walks: its references are the host table's levels for that host page (host_levels;
  the data: d_levels[z]), less the levels the deepest hitting host page-walk cache skips (each cache
  whose skip is below that count is looked up with key g >> its shift, in set key mod its sets, and
  filled on a miss).
- Every cache is set-associative with exact LRU (a hit or a fill makes the entry the most recent;
  empty ways fill first, lowest first): kept as each set's packed order of up to 16 ways
  (``rules.lru_touch``, ``rules.order_victim``), or a stamp a way in wider sets; in a specialised
  replay, a page-walk cache of up to 4 ways whose keys fit below ``rules.LANE_EMPTY`` as each set's
  LRU list of its tags in one word (``rules.lane_lookup``; which way holds a tag is not counted, so
  the counts are the same). Counters: host
  references by (kind, page size), nested TLB hits and misses by page size, each host page-walk
  cache's hits and misses by page size.
"""

from collections import namedtuple

# The host's caches: the nested TLB first (when there is one), then its page-walk caches; each
# cache c's sets (and sets - 1 when a power of two, else -1), ways (and padded to a multiple of 4),
# where its ways start in tags and stamps, where its sets start in orders, the shift of its key, the
# levels it skips (-1: the nested TLB) and the key it looked up last. orders: each set's packed LRU
# order (sets of up to 16 ways); stamps: each way's last use (wider sets), clock[0] counting their
# lookups; words: each set's LRU list of the caches kept as lane lists (a specialised replay).
Caches = namedtuple("Caches", ["sets", "mask", "ways", "pways", "base", "sbase", "shift", "skip", "last", "tags", "orders", "stamps", "clock", "words"])
# host references by (kind, page size); nested TLB hits and misses by page size; each page-walk
# cache's hits and misses by page size
Counts = namedtuple("Counts", ["host_refs", "ntlb_hits", "ntlb_misses", "pwc_hits", "pwc_misses"])
