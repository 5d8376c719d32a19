"""A small set-associative data-cache model for page-walk references.

Each line address looks up the levels in order; a hit ends the lookups and a miss fills the level
it missed in (every level looked in is filled, as the TLB chain does). Replacement is LRU by
stamps; empty ways fill first, lowest first. tests/engine/test_processes.py checks it against a plain
list-based model."""

from ._jit import jit
from .rules import stamp_victim


@jit
def cache_lines_by_class(lines, is_data, sets, ways, base, tags, stamps, clock, hits, misses, dhits, dmisses):
    """``lines`` through the cache levels in turn (one state), in two classes: a line whose
    ``is_data`` flag is set counts in ``dhits``/``dmisses``, any other in ``hits``/``misses`` (pass
    the same arrays twice, and all flags clear, for one class)."""
    nlev = sets.shape[0]
    for i in range(lines.shape[0]):
        line = lines[i]
        data = is_data[i]
        for c in range(nlev):
            b = base[c] + (line % sets[c]) * ways[c]
            clock[0] += 1
            found = -1
            for w in range(b, b + ways[c]):
                if tags[w] == line:
                    found = w
                    break
            if found >= 0:
                stamps[found] = clock[0]
                if data:
                    dhits[c] += 1
                else:
                    hits[c] += 1
                break
            if data:
                dmisses[c] += 1
            else:
                misses[c] += 1
            victim = stamp_victim(stamps, b, ways[c])
            tags[victim] = line
            stamps[victim] = clock[0]
