"""A set's tag search as one vector compare: ``find_way(tags, base, ways, tag)``, the way of ``tag``
among ``tags[base : base + ways]`` or -1.

When ``ways`` is a compile-time constant (the specialised kernels write each chain position's
padded ways in as one), the search is LLVM vector code: load the set's tags as one vector, compare
every lane with ``tag`` at once, turn the lanes' results into a bit mask and take its lowest set
bit (sets wider than 32 ways, which only random replacement scans, 32 lanes at a time; they
would not compile otherwise). numba does not vectorise the scalar search (a branch per group of four ways), and the
vector compare measured 1.0 ns less per access of a random trace on the benchmark TLB (5.5-5.8 ->
4.4-4.6 ns, 1e7 addresses, alternating processes). ``ways``
must be a constant (from 1 to ``MAX_LANES``), else compiling fails: the generic kernel, where
widths are known only at run time, keeps its scalar search written in place (the same search
compiled apart and called ran a random trace at 31 ns an access, against 10.7).

Sets are padded to a multiple of four ways and padding holds -1, which no tag equals (tags are
non-negative), so every lane compared is inside the set. Only the way found matters, so both
searches give the same result whatever the target's vector width (lanes the hardware lacks are
split by LLVM). writer.py puts this file's digest into every generated kernel's source, so a
change here compiles every kernel again (numba's cache would not see it)."""

from llvmlite import ir
from numba.core import cgutils, errors, types
from numba.extending import intrinsic

MAX_LANES = 1024  # the widest set a machine may have (machines.MAX_WAYS); compared 32 lanes at a time
CHUNK = 32


@intrinsic(prefer_literal=True)
def find_way(typingctx, tags, base, ways, tag):
    if not (isinstance(tags, types.Array) and tags.ndim == 1 and tags.dtype == types.int64 and tags.layout == "C"):
        return None  # a typing error: only the kernels' int64 tag arrays
    lanes = ways.literal_value if isinstance(ways, types.IntegerLiteral) else 0
    if not 1 <= lanes <= MAX_LANES:
        raise errors.TypingError(f"find_way: ways must be a constant from 1 to {MAX_LANES}, got {ways} (the generic kernel keeps its scalar search)")
    sig = types.int64(tags, base, ways, tag)

    def vector(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        i32, i64 = ir.IntType(32), ir.IntType(64)
        first = context.cast(builder, args[1], signature.args[1], types.int64)
        t = context.cast(builder, args[3], signature.args[3], types.int64)
        cttz = cgutils.get_or_insert_function(builder.module, ir.FunctionType(i64, [i64, ir.IntType(1)]), "llvm.cttz.i64")
        # sets wider than 32 ways (random replacement keeps the scan): 32-lane compares, the lowest
        # chunk with a match wins (taken last, branch-free)
        found = i64(-1)
        for c0 in reversed(range(0, lanes, CHUNK)):
            n = min(CHUNK, lanes - c0)
            ptr = builder.bitcast(builder.gep(ary.data, [builder.add(first, i64(c0))]), ir.VectorType(i64, n).as_pointer())
            row = builder.load(ptr, align=8)
            splat = builder.insert_element(ir.Constant(ir.VectorType(i64, n), ir.Undefined), t, i32(0))
            splat = builder.shuffle_vector(splat, splat, ir.Constant(ir.VectorType(i32, n), [0] * n))
            mask = builder.zext(builder.bitcast(builder.icmp_signed("==", row, splat), ir.IntType(n)), i64)
            low = builder.add(builder.call(cttz, [builder.or_(mask, i64(1 << n)), ir.IntType(1)(1)]), i64(c0))
            found = builder.select(builder.icmp_unsigned("==", mask, i64(0)), found, low)
        return found

    return sig, vector


MAX_MIN_LANES = 64  # min_way: one vector for sets up to this many (padded) ways


@intrinsic(prefer_literal=True)
def min_way(typingctx, arr, base, ways):
    """The lowest lane holding the minimum of ``arr[base : base + ways]`` (int64, ``ways`` a
    constant from 1 to ``MAX_MIN_LANES``): one vector load, LLVM's signed-minimum reduction, a
    compare of every lane with it and the lowest set bit. The STAMP_LRU lookup's victim (the way
    used longest ago); the generic kernel keeps a scalar loop."""
    if not (isinstance(arr, types.Array) and arr.ndim == 1 and arr.dtype == types.int64 and arr.layout == "C"):
        return None
    lanes = ways.literal_value if isinstance(ways, types.IntegerLiteral) else 0
    if not 1 <= lanes <= MAX_MIN_LANES:
        raise errors.TypingError(f"min_way: ways must be a constant from 1 to {MAX_MIN_LANES}, got {ways} (the generic kernel keeps its scalar loop)")
    sig = types.int64(arr, base, ways)

    def vector(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        i32, i64 = ir.IntType(32), ir.IntType(64)
        vec = ir.VectorType(i64, lanes)
        first = context.cast(builder, args[1], signature.args[1], types.int64)
        row = builder.load(builder.bitcast(builder.gep(ary.data, [first]), vec.as_pointer()), align=8)
        smin = cgutils.get_or_insert_function(builder.module, ir.FunctionType(i64, [vec]), f"llvm.vector.reduce.smin.v{lanes}i64")
        low = builder.call(smin, [row])
        splat = builder.insert_element(ir.Constant(vec, ir.Undefined), low, i32(0))
        splat = builder.shuffle_vector(splat, splat, ir.Constant(ir.VectorType(i32, lanes), [0] * lanes))
        bits = builder.bitcast(builder.icmp_signed("==", row, splat), ir.IntType(lanes))
        mask = bits if lanes == 64 else builder.zext(bits, i64)
        cttz = cgutils.get_or_insert_function(builder.module, ir.FunctionType(i64, [i64, ir.IntType(1)]), "llvm.cttz.i64")
        return builder.call(cttz, [mask, ir.IntType(1)(1)])  # never zero: the minimum is in some lane

    return sig, vector
