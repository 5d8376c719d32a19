"""How a TLB set keeps its ways: the state updates the translation kernel's lookups call.

Sets of up to 16 ways keep their recency (LRU) or fill (FIFO) order packed in one 64-bit word
(``rules.lru_touch``, ``rules.order_victim``). Wider sets keep a ring of links, least recent way at
the head: a miss takes the head way and moves the head on (the victim is then the most recent, no
link changed); an LRU hit moves its way just behind the head. The ring starts as way 0, 1, 2, ...
so empty ways fill in that order. Where a wide set's tag is found: through the layout's direct
index (``pos``: each granule's way or -1) or through the structure's own hash table of (tag, way)
pairs (linear probing, backward-shift deletion). Random replacement fills an empty way if there
is one, else way ``xorshift64() % ways``.

Every function is inlined where it is called (``rules.inline``); indices are unsigned, so numba
adds no negative-index wraparound to each array access.
"""

import numpy as np

from .rules import inline

HASH_MULT = 0x9E3779B97F4A7C15  # Fibonacci hashing of tags into a structure's hash table
HASH_FACTOR = 8  # a hash table has 8 (tag, way) pairs per entry: at most 1/8 full


@inline
def ring_touch(links, lb, head, w):
    """An LRU hit on way ``w`` of a ring-kept set (its links from ``lb``, its least recent way
    ``head``): ``w`` becomes the most recent, just behind the head. Returns the head."""
    if w == head:  # the least recent becomes the most recent: the head moves on
        return np.int64(links[np.uint64(lb + 2 * w + 1)])
    t = links[np.uint64(lb + 2 * head)]  # the most recent way
    if w != t:
        p = links[np.uint64(lb + 2 * w)]
        n = links[np.uint64(lb + 2 * w + 1)]
        links[np.uint64(lb + 2 * p + 1)] = n
        links[np.uint64(lb + 2 * n)] = p
        links[np.uint64(lb + 2 * t + 1)] = w
        links[np.uint64(lb + 2 * w)] = t
        links[np.uint64(lb + 2 * w + 1)] = head
        links[np.uint64(lb + 2 * head)] = w
    return head


@inline
def ring_next(links, base, head):
    """A miss in a ring-kept set whose slots start at ``base``: the victim is ``head``, and this is
    the new head (the next way round the ring)."""
    return np.int64(links[np.uint64(2 * (base + head) + 1)])


@inline
def direct_fill(tags, pos, base, victim, idx):
    """A directly indexed set's miss: way ``victim`` of the set at ``base`` gives up its granule's
    slot in ``pos`` and takes granule ``idx`` (such sets hold granule numbers as tags)."""
    old = tags[np.uint64(base + victim)]
    if old >= 0:
        pos[np.uint64(old)] = -1
    tags[np.uint64(base + victim)] = idx
    pos[np.uint64(idx)] = victim


@inline
def random_way(order, osl, rng, ways):
    """The way a random-replacement miss fills: the next empty way (the set's fill count is
    ``order[osl]``), else ``xorshift64() % ways`` (one generator, ``rng[0]``, for every structure)."""
    filled = np.int64(order[np.uint64(osl)])
    if filled < ways:
        order[np.uint64(osl)] = np.uint64(filled + 1)
        return filled
    x = rng[0]
    x ^= x << np.uint64(13)
    x ^= x >> np.uint64(7)
    x ^= x << np.uint64(17)
    rng[0] = x
    return np.int64(x % np.uint64(ways))


@inline
def hash_home(tag, cap):
    """Where ``tag`` starts its probe in a table of ``cap`` pairs: the high bits of a Fibonacci hash
    scaled to ``cap`` (a multiply, no division; ``cap`` need not be a power of two)."""
    h = (np.uint64(tag) * np.uint64(HASH_MULT)) >> np.uint64(32)
    return np.int64((h * np.uint64(cap)) >> np.uint64(32))


@inline
def hash_delete(htab, hb, cap, tag):
    """Remove ``tag`` (present) from the table of ``cap`` pairs at ``hb``; each later entry of its
    run moves back into the gap unless that would put it before its home."""
    i = hash_home(tag, cap)
    while htab[np.uint64(hb + 2 * i)] != tag:
        i += 1
        if i == cap:
            i = 0
    j = i
    while True:
        j += 1
        if j == cap:
            j = 0
        t = htab[np.uint64(hb + 2 * j)]
        if t < 0:
            break
        k = hash_home(t, cap)
        if (i < k <= j) if i <= j else (i < k or k <= j):
            continue  # its home lies after the gap: it stays
        htab[np.uint64(hb + 2 * i)] = t
        htab[np.uint64(hb + 2 * i + 1)] = htab[np.uint64(hb + 2 * j + 1)]
        i = j
    htab[np.uint64(hb + 2 * i)] = -1


@inline
def hash_lookup(tags, links, order, htab, hb, cap, base, osl, tag, lru):
    """Look ``tag`` up in a ring-kept set (slots from ``base``, head in ``order[osl]``) through its
    structure's hash table (``cap`` pairs at ``hb``); on a miss the least recent way takes it.
    True on a hit. O(1): the table is at most 1/8 full."""
    i = hash_home(tag, cap)
    while True:
        t = htab[np.uint64(hb + 2 * i)]
        if t == tag:
            if lru:
                order[np.uint64(osl)] = np.uint64(ring_touch(links, 2 * base, np.int64(order[np.uint64(osl)]), htab[np.uint64(hb + 2 * i + 1)]))
            return True
        if t < 0:
            break
        i += 1
        if i == cap:
            i = 0
    # a miss: the tag goes into the empty pair i (before the victim's tag leaves, so the pair stays
    # valid whatever the deletion moves), and into the least recent way
    victim = np.int64(order[np.uint64(osl)])
    order[np.uint64(osl)] = np.uint64(ring_next(links, base, victim))
    old = tags[np.uint64(base + victim)]
    htab[np.uint64(hb + 2 * i)] = tag
    htab[np.uint64(hb + 2 * i + 1)] = victim
    tags[np.uint64(base + victim)] = tag
    if old >= 0:
        hash_delete(htab, hb, cap, old)
    return False
