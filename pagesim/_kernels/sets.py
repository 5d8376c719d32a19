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

from .rules import Rule, inline

HASH_MULT = 0x9E3779B97F4A7C15  # Fibonacci hashing of tags into a structure's hash table
HASH_FACTOR = 8  # a hash table has 8 (tag, way) pairs per entry: at most 1/8 full


RING_TOUCH = Rule(
    "ring_touch",
    ("links", "lb", "head", "w"),
    ("out",),
    """
    h{_} = {head}
    w{_} = {w}
    if w{_} == h{_}:  # the least recent becomes the most recent: the head moves on
        {out} = np.int64({links}[np.uint64({lb} + 2 * w{_} + 1)])
    else:
        t{_} = {links}[np.uint64({lb} + 2 * h{_})]  # the most recent way
        if w{_} != t{_}:
            p{_} = {links}[np.uint64({lb} + 2 * w{_})]
            n{_} = {links}[np.uint64({lb} + 2 * w{_} + 1)]
            {links}[np.uint64({lb} + 2 * p{_} + 1)] = n{_}
            {links}[np.uint64({lb} + 2 * n{_})] = p{_}
            {links}[np.uint64({lb} + 2 * t{_} + 1)] = w{_}
            {links}[np.uint64({lb} + 2 * w{_})] = t{_}
            {links}[np.uint64({lb} + 2 * w{_} + 1)] = h{_}
            {links}[np.uint64({lb} + 2 * h{_})] = w{_}
        {out} = h{_}
    """,
)
ring_touch = RING_TOUCH.function  # an LRU hit on way ``w`` of a ring-kept set (links from ``lb``, least
# recent way ``head``): ``w`` becomes the most recent, just behind the head; returns the head

RING_NEXT = Rule("ring_next", ("links", "base", "head"), ("out",), "{out} = np.int64({links}[np.uint64(2 * ({base} + {head}) + 1)])")
ring_next = RING_NEXT.function  # a miss in a ring-kept set whose slots start at ``base``: the victim is
# ``head``, and this is the new head (the next way round the ring)

DIRECT_FILL = Rule(
    "direct_fill",
    ("tags", "pos", "base", "victim", "idx"),
    (),
    """
    old{_} = {tags}[np.uint64({base} + {victim})]
    if old{_} >= 0:
        {pos}[np.uint64(old{_})] = -1
    {tags}[np.uint64({base} + {victim})] = {idx}
    {pos}[np.uint64({idx})] = {victim}
    """,
)
direct_fill = DIRECT_FILL.function  # a directly indexed set's miss: way ``victim`` gives up its granule's
# slot in ``pos`` and takes granule ``idx`` (such sets hold granule numbers as tags)

RANDOM_WAY = Rule(
    "random_way",
    ("order", "osl", "rng", "ways"),
    ("out",),
    """
    f{_} = np.int64({order}[np.uint64({osl})])
    if f{_} < {ways}:
        {order}[np.uint64({osl})] = np.uint64(f{_} + 1)
        {out} = f{_}
    else:
        x{_} = {rng}[0]
        x{_} ^= x{_} << np.uint64(13)
        x{_} ^= x{_} >> np.uint64(7)
        x{_} ^= x{_} << np.uint64(17)
        {rng}[0] = x{_}
        {out} = np.int64(x{_} % np.uint64({ways}))
    """,
)
random_way = RANDOM_WAY.function  # the way a random-replacement miss fills: the next empty way (the fill
# count is ``order[osl]``), else ``xorshift64() % ways`` (one generator, ``rng[0]``, for every structure)


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
