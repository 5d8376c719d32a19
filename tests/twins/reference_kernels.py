"""Plain-Python twins of the small kernels: each written the obvious way, one element at a time."""

from __future__ import annotations


def reference_chase(buf, start: int, loads: int) -> int:
    """Where ``loads`` dependent loads from ``start`` stop (``pagesim._kernels.chase.chase``)."""
    i = start
    for _ in range(loads):
        i = int(buf[i])
    return i


def reference_scatter(buf, idx, vals) -> list:
    """The buffer after ``buf[idx[k]] = vals[k]`` for k in order (``pagesim._kernels.chase.scatter_counted``)."""
    out = [int(v) for v in buf]
    for i, v in zip(idx, vals):
        out[int(i)] = int(v)
    return out


def reference_cache_lines(lines, is_data, caches) -> tuple[list, list, list, list]:
    """Lines through LRU set-associative levels ``caches`` [(sets, ways)]: a hit ends the lookups, a
    miss fills the level it missed in. (hits, misses, data hits, data misses) per level, as
    ``pagesim._kernels.dcache.cache_lines_by_class`` counts them."""
    sets = [[[] for _ in range(s)] for s, _ in caches]  # each set most recent first
    out = [[0] * len(caches) for _ in range(4)]
    for line, data in zip(lines, is_data):
        line = int(line)
        for c, (nsets, ways) in enumerate(caches):
            lst = sets[c][line % nsets]
            if line in lst:
                lst.remove(line)
                lst.insert(0, line)
                out[2 if data else 0][c] += 1
                break
            out[3 if data else 1][c] += 1
            lst.insert(0, line)
            del lst[ways:]
    return tuple(out)


def reference_blocks(addrs, shift: int) -> list[int]:
    """The sorted distinct blocks ``a >> shift`` (``pagesim._kernels.regions.distinct_blocks``)."""
    return sorted({int(a) >> shift for a in addrs})


def reference_distances(pages) -> list[int]:
    """LRU stack distance by brute force: position of the page in a most-recent-first list (-1: first
    touch), as ``pagesim._kernels.reuse.stack_distances`` computes it."""
    stack, out = [], []
    for p in pages:
        if p in stack:
            i = stack.index(p)
            out.append(i)
            stack.pop(i)
        else:
            out.append(-1)
        stack.insert(0, p)
    return out


MASK = (1 << 64) - 1


def splitmix64(x: int) -> int:
    x = (x + 0x9E3779B97F4A7C15) & MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK
    return x ^ (x >> 31)


def reference_uniform_random(base: int, slots: int, n: int, seed: int, element: int, start: int = 0) -> list[int]:
    """The uniform random workload's addresses: splitmix64 of (seed key ^ counter) mod slots, in
    Python integers (``pagesim._kernels.workloads.gen_uniform_random``)."""
    key = splitmix64(seed)
    return [base + (splitmix64(key ^ (start + i)) % slots) * element for i in range(n)]


def reference_sequential(base: int, per_pass: int, stride: int, n: int) -> list[int]:
    """The sequential workload's addresses: ``per_pass`` strided accesses, again and again."""
    return [base + (i % per_pass) * stride for i in range(n)]
