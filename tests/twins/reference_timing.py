"""A plain-Python reference model of the timing model's cache replay (pagesim/_kernels/timing.py).

Written for clarity: the translation comes from the reference translation model (reference.py),
whose walk log is tagged here with the index of the access that walked; every cache set is a list
ordered most recent first; page-table entries get their addresses from the walker's definition.
If this and the kernel disagree, this file is the specification.
"""

from __future__ import annotations

from .reference import LARGE_SEGMENT_SHIFT, SEGMENT_SHIFT, VSID_MULT, reference_simulate

PT_SPACE = 1 << 62
FRAME_MULT = 0x5851F42D4C957F2D


def frame(t: int, bits: int = 44) -> int:
    """The pseudo-random frame of page-table page ``t`` (a bijection on ``bits``-bit numbers)."""
    return (t * FRAME_MULT) % (1 << bits)


class RefLevel:
    def __init__(self, sets: int, ways: int):
        self.nsets, self.ways = sets, ways
        self.sets = [[] for _ in range(sets)]

    def access(self, line: int) -> bool:
        s = self.sets[line % self.nsets]
        if line in s:
            s.remove(line)
            s.insert(0, line)
            return True
        if len(s) == self.ways:
            s.pop()
        s.insert(0, line)
        return False


def _log2(v: int) -> int:
    return v.bit_length() - 1


def pt_lines(machine, a: int, z: int, refs: int, line: int) -> list[int]:
    """The cache lines of one walk's page-table references, in the order the walk reads them."""
    w = machine.walker
    p = machine.page_sizes[z]
    shift = _log2(line)
    out = []
    if w.kind == "radix":
        bits = list(w.level_bits)
        leaf = w.leaf_refs(p) - 1
        for lvl in range(leaf - refs + 1, leaf + 1):  # top first, leaf last
            sh = w.base_shift + sum(bits[lvl + 1 :])
            table = a >> (sh + bits[lvl])
            entry = (a >> sh) % (1 << bits[lvl])
            byte = frame(table, min(62, max(0, 63 - sh - bits[lvl]))) * (8 << bits[lvl]) + 8 * entry
            out.append(PT_SPACE + (lvl << 55) + (byte >> shift))
    elif w.kind == "hashed":
        ps = _log2(p)
        seg_shift = SEGMENT_SHIFT if ps < SEGMENT_SHIFT else LARGE_SEGMENT_SHIFT
        vsid = ((a >> seg_shift) * VSID_MULT) % (1 << 36)
        pidx = (a % (1 << seg_shift)) >> ps
        mask = w.hpt_ptegs - 1
        h = (vsid ^ pidx) & mask
        for g in (h, (~h) & mask)[:refs]:
            out.append(PT_SPACE + (1 << 59) + ((g * 128) >> shift))
    elif w.kind == "tsb":
        vpn = a >> _log2(p)
        slot = z * w.tsb_entries + vpn % w.tsb_entries
        out.append(PT_SPACE + (2 << 59) + ((slot * 16) >> shift))
        sw = refs - 1
        for j in range(sw):
            entry = vpn >> (9 * (sw - 1 - j))
            byte = frame(entry // 512) * 4096 + (entry % 512) * 8
            out.append(PT_SPACE + (3 << 59) + ((z * 8 + j) << 55) + (byte >> shift))
    else:
        vpn = a >> _log2(p)
        byte = frame(vpn // 512) * 4096 + (vpn % 512) * 8
        out.append(PT_SPACE + (4 << 59) + (z << 55) + (byte >> shift))
    return out


def reference_timing(machine, layout, accesses, kinds, hierarchy, seed=0):
    """(data_hits, walk_hits): dicts {(serving level, page-size index): count}, non-zero only;
    level len(hierarchy.levels) is memory."""
    index = [0]

    def tracked():
        for i, a in enumerate(accesses):
            index[0] = i
            yield a

    class Log(list):
        def append(self, item):
            super().append((index[0], *item))

    log = Log()
    reference_simulate(machine, layout, tracked(), kinds, seed, walk_log=log)
    levels = [RefLevel(c.sets, c.ways) for c in hierarchy.levels]
    line = hierarchy.line
    sizes = list(machine.page_sizes)
    regions = layout.regions
    data, walk = {}, {}

    def serve_noninclusive(ln):
        for c, lv in enumerate(levels):
            if lv.access(ln):
                return c
        return len(levels)

    def serve_exclusive(ln):
        l1 = levels[0].sets[ln % levels[0].nsets]
        if ln in l1:
            l1.remove(ln)
            l1.insert(0, ln)
            return 0
        served = len(levels)
        for c in range(1, len(levels)):
            s = levels[c].sets[ln % levels[c].nsets]
            if ln in s:
                s.remove(ln)  # the line moves to L1
                served = c
                break
        moving, c = ln, 0
        while moving is not None and c < len(levels):
            s = levels[c].sets[moving % levels[c].nsets]
            s.insert(0, moving)
            moving = s.pop() if len(s) > levels[c].ways else None
            c += 1
        return served

    serve = serve_exclusive if hierarchy.inclusion == "exclusive" else serve_noninclusive

    walks_at = {}
    for i, a, refs, z in log:
        walks_at.setdefault(i, []).append((a, refs, z))
    for i, a in enumerate(accesses):
        for wa, refs, z in walks_at.get(i, ()):
            for ln in pt_lines(machine, wa, z, refs, line):
                c = serve(ln)
                walk[(c, z)] = walk.get((c, z), 0) + 1
        if kinds is not None and kinds[i] != 0:
            continue
        r = next(r for r in regions if r.start <= a < r.end)
        z = sizes.index(r.page_size)
        c = serve(a >> _log2(line))
        data[(c, z)] = data.get((c, z), 0) + 1
    return data, walk
