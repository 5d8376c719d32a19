"""Textual inlining of a kernel's lookup closures, for the generated kernels (specialize.py).

numba inlines every call of a closure itself, but slowly: for Skylake's specialised kernel (five
lookup sites, each calling three smaller closures) its closure-inlining pass took 1.8 s of a 6.5 s
compile, and lowering the closures it then dropped took more. Writing each call out in place
before numba sees the source (each callee's locals renamed apart, an argument that is a name or
a constant put in place of its parameter and any other bound to a fresh name in order, its final
``return x`` becoming an assignment) gives numba the same function with no closures to inline:
4.3 s of CPU in all on a quiet machine (4.1-5.2 s with another job on the second core).

Only closures that return at their very end (or never) can be written out; :func:`inline_calls`
refuses any other, and any call whose evaluation the hoisting could reorder (inside ``and``/``or``,
a conditional expression, a loop condition or a comprehension)."""

from __future__ import annotations

import ast
import copy
import gc
import itertools

_NESTED = (ast.BoolOp, ast.IfExp, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def parse(src: str) -> ast.Module:
    """``ast.parse(src)`` with the garbage collector paused. CPython 3.11 keeps one counter for the
    whole interpreter while it converts a syntax tree to Python objects; a collection in the middle
    can run Python callbacks (Dask's workers register some) and so hand the GIL to another thread
    converting a tree of its own (an import calling inspect.signature, a traceback being formatted),
    and one of the two fails with "AST constructor recursion depth mismatch". With no collection the
    conversion runs without a thread switch."""
    was = gc.isenabled()
    gc.disable()
    try:
        return ast.parse(src)
    finally:
        if was:
            gc.enable()


def inline_calls(src: str, names, func: str = "translate_chunk") -> str:
    """``src`` with every call, inside ``func``, of its closures named in ``names`` written out in
    place, and every closure of ``func`` that is then never called removed (numba cannot compile an
    uncalled closure that captures arrays)."""
    tree = parse(src)
    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == func), None)
    if fn is None:
        raise RuntimeError(f"internal error: no function {func} to inline into")
    defs = {d.name: d for d in fn.body if isinstance(d, ast.FunctionDef) and d.name in names}
    if set(defs) != set(names):
        raise RuntimeError(f"internal error: no closure {sorted(set(names) - set(defs))} in {func}")
    for d in defs.values():
        _check_single_exit(d)
    counter = itertools.count()
    fn.body = [s for s in fn.body if not (isinstance(s, ast.FunctionDef) and s.name in defs)]
    fn.body = _block(fn.body, defs, counter)
    _prune(fn)
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def _body(d: ast.FunctionDef) -> list:
    b = d.body
    if b and isinstance(b[0], ast.Expr) and isinstance(b[0].value, ast.Constant) and isinstance(b[0].value.value, str):
        b = b[1:]  # the docstring
    return b


def _check_single_exit(d: ast.FunctionDef):
    body = _body(d)
    returns = [n for n in ast.walk(d) if isinstance(n, ast.Return)]
    tail = body[-1] if body else None
    if any(r is not tail for r in returns) or d.args.vararg or d.args.kwarg or d.args.kwonlyargs or d.args.defaults:
        raise RuntimeError(f"internal error: closure {d.name} cannot be written out in place (a return before its end, or special arguments)")


def _block(stmts: list, defs: dict, counter) -> list:
    out = []
    for s in stmts:
        out.extend(_stmt(s, defs, counter))
    return out


def _stmt(s: ast.stmt, defs: dict, counter) -> list:
    """``s`` with its inlinable calls written out before it (and inside its nested blocks)."""
    for field in ("body", "orelse", "finalbody"):
        if isinstance(getattr(s, field, None), list):
            setattr(s, field, _block(getattr(s, field), defs, counter))
    if isinstance(s, (ast.While, ast.For)) and _calls(s.test if isinstance(s, ast.While) else s.iter, defs):
        raise RuntimeError("internal error: a closure call in a loop header cannot be written out")
    heads = {ast.Expr: "value", ast.Assign: "value", ast.AugAssign: "value", ast.If: "test", ast.Return: "value"}
    field = next((f for t, f in heads.items() if isinstance(s, t)), None)
    if field is None or getattr(s, field) is None:
        return [s]
    pre = []
    expr = getattr(s, field)
    if isinstance(s, ast.Expr) and isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id in defs:
        # a call as a statement, its result unused: calls in its arguments written out first
        args = ast.Call(ast.Name("_args", ast.Load()), expr.args, [])  # hoisted as one argument list, in order
        expr.args = _hoist(args, defs, counter, pre).args
        return pre + _expand(expr, defs, counter)[0]
    setattr(s, field, _hoist(expr, defs, counter, pre))
    return pre + [s]


def _calls(expr, defs) -> bool:
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in defs for n in ast.walk(expr))


def _hoist(expr, defs: dict, counter, pre: list):
    """``expr`` with each inlinable call replaced by the name of its result, whose statements are
    appended to ``pre`` (innermost and leftmost first: Python's order of evaluation)."""
    if isinstance(expr, _NESTED) and _calls(expr, defs):
        raise RuntimeError("internal error: a closure call inside and/or, a conditional expression or a comprehension cannot be written out")
    # the children in Python's order of evaluation; before a child's closure call is written out,
    # each earlier child that is neither a name nor a constant is bound to a fresh name, as Python
    # evaluates it first (``put(a[0], bump(0))`` with ``bump`` writing ``a[0]`` would otherwise
    # read the new ``a[0]``)
    slots = []
    for name, value in ast.iter_fields(expr):
        if isinstance(value, ast.AST):
            slots.append((name, None))
        elif isinstance(value, list):
            slots.extend((name, i) for i, v in enumerate(value) if isinstance(v, ast.AST))

    def get(slot):
        name, i = slot
        return getattr(expr, name) if i is None else getattr(expr, name)[i]

    def put(slot, node):
        name, i = slot
        if i is None:
            setattr(expr, name, node)
        else:
            getattr(expr, name)[i] = node

    for k, slot in enumerate(slots):
        node = get(slot)
        if _calls(node, defs):
            for earlier in slots[:k]:
                e = get(earlier)
                # a call's function (``np.int64``) stays in place: a closure cannot rebind it
                if earlier[0] != "func" and isinstance(e, ast.expr) and not isinstance(e, (ast.Name, ast.Constant)):
                    tmp = f"_arg{next(counter)}"
                    pre.append(ast.Assign([ast.Name(tmp, ast.Store())], e))
                    put(earlier, ast.Name(tmp, ast.Load()))
        put(slot, _hoist(node, defs, counter, pre))
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id in defs:
        stmts, value = _expand(expr, defs, counter)
        if value is None:
            raise RuntimeError(f"internal error: the result of {expr.func.id}, which returns nothing, is used")
        pre.extend(stmts)
        return value
    return expr


def _expand(call: ast.Call, defs: dict, counter) -> tuple[list, ast.expr | None]:
    """The statements of ``call`` written out, and the expression of its result (None if it
    returns nothing): the callee's own renamed local when it returns one, else a fresh name."""
    d = defs[call.func.id]
    if call.keywords or len(call.args) != len(d.args.args):
        raise RuntimeError(f"internal error: call of {d.name} with other than its positional arguments")
    k = next(counter)
    assigned = {n.id for n in ast.walk(d) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    ren = {v: f"{d.name}_{v}{k}" for v in assigned | {a.arg for a in d.args.args}}
    # an argument that is a name or a constant, for a parameter the callee never assigns, is put in
    # place of the parameter (fewer variables to type and lower); any other is bound to a fresh name
    # first, in order (the callee cannot assign a caller's name, so a name put in place is stable)
    subst, stmts = {}, []
    for a, arg in zip(d.args.args, call.args):
        if isinstance(arg, (ast.Name, ast.Constant)) and a.arg not in assigned:
            subst[a.arg] = arg
        else:
            stmts.append(ast.Assign([ast.Name(ren[a.arg], ast.Store())], arg))
    body = [_rename(copy.deepcopy(s), ren, subst) for s in _body(d)]
    value = None
    if body and isinstance(body[-1], ast.Return):
        value = body.pop().value
        if value is not None and not (isinstance(value, ast.Name) and value.id in ren.values()):
            result = f"{d.name}_r{k}"
            body.append(ast.Assign([ast.Name(result, ast.Store())], value))
            value = ast.Name(result, ast.Load())
    return stmts + _block(body, defs, counter), value


def _prune(fn: ast.FunctionDef):
    """Drop the closures of ``fn`` that its other code never reaches (directly or through other closures)."""
    live = _reachable(fn, [s for s in fn.body if isinstance(s, ast.FunctionDef)])
    fn.body = [s for s in fn.body if not (isinstance(s, ast.FunctionDef) and s.name not in live)]


def _reachable(fn: ast.FunctionDef, closures: list) -> set:
    """Names of the closures reachable from the non-closure statements of ``fn``."""
    by_name = {d.name: d for d in closures}

    def refs(nodes):
        return {n.id for s in nodes for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in by_name}

    seen = set()
    todo = refs([s for s in fn.body if not isinstance(s, ast.FunctionDef)])
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo |= refs([by_name[name]]) - seen
    return seen


class _Renamer(ast.NodeTransformer):
    def __init__(self, ren: dict, subst: dict):
        self.ren, self.subst = ren, subst

    def visit_Name(self, n: ast.Name):
        if n.id in self.subst and isinstance(n.ctx, ast.Load):
            return copy.deepcopy(self.subst[n.id])
        if n.id in self.ren:
            n.id = self.ren[n.id]
        return n


def _rename(s: ast.stmt, ren: dict, subst: dict) -> ast.stmt:
    return _Renamer(ren, subst).visit(s)
