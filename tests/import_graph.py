"""The import graph of the ``pagesim`` package, read from its source with ``ast`` (nothing is imported).

Every ``import pagesim...``, ``from pagesim... import x``, ``from . import x`` and
``from ..x import y`` is an edge, at module level or inside a function (``Edge.function`` names it).
``python tests/import_graph.py [ROOT]`` prints each module's imports, function-local ones marked
``*``, then the function-local imports one a line; ROOT is a checkout (default: this one).
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Edge:
    source: str  # the importing module, "pagesim.engine.simulate"
    target: str  # the imported module
    name: str | None  # the name taken from it (``from target import name``), None for ``import target``
    line: int
    function: str | None  # the enclosing function, None at module level


def modules(root: Path = ROOT) -> dict[str, Path]:
    """{dotted name: file} of every module of the package under ``root``."""
    out = {}
    for p in sorted((root / "pagesim").rglob("*.py")):
        parts = list(p.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = p
    return out


def _absolute(module: str, is_package: bool, level: int, name: str | None) -> str:
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([name] if name else []))


def _enclosing(tree: ast.AST) -> dict[ast.AST, str | None]:
    """{node: name of the innermost function holding it, or None}."""
    out: dict[ast.AST, str | None] = {}

    def visit(node, fn):
        for child in ast.iter_child_nodes(node):
            out[child] = fn
            visit(child, child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else fn)

    visit(tree, None)
    return out


def edges(root: Path = ROOT) -> list[Edge]:
    mods = modules(root)
    out = []
    for mod, path in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        where = _enclosing(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                target = _absolute(mod, path.name == "__init__.py", node.level, node.module) if node.level else node.module
                if not target or not (target == "pagesim" or target.startswith("pagesim.")):
                    continue
                for a in node.names:
                    sub = f"{target}.{a.name}"
                    if sub in mods:  # from . import machines: the module itself
                        out.append(Edge(mod, sub, None, node.lineno, where[node]))
                    else:
                        out.append(Edge(mod, target, a.name, node.lineno, where[node]))
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.name == "pagesim" or a.name.startswith("pagesim."):
                        out.append(Edge(mod, a.name, None, node.lineno, where[node]))
    return out


def private_uses(root: Path = ROOT) -> list[tuple[str, int, str]]:
    """(module, line, "other.module._name") for each private name of another pagesim module that a
    module imports (``from .x import _y``) or reads as an attribute of a module it imported
    (``E._y`` after ``from . import x as E``). Dunder names are not private."""
    mods = modules(root)
    out = []
    for e in edges(root):
        if e.name and e.name.startswith("_") and not e.name.startswith("__") and e.target != e.source:
            out.append((e.source, e.line, f"{e.target}.{e.name}"))
    for mod, path in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        bound = {}  # local name -> pagesim module it is bound to
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                target = _absolute(mod, path.name == "__init__.py", node.level, node.module) if node.level else node.module
                for a in node.names:
                    if target and f"{target}.{a.name}" in mods:
                        bound[a.asname or a.name] = f"{target}.{a.name}"
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.asname and a.name in mods:
                        bound[a.asname] = a.name
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in bound:
                target = bound[node.value.id]
                if node.attr.startswith("_") and not node.attr.startswith("__") and target != mod:
                    out.append((mod, node.lineno, f"{target}.{node.attr}"))
    return sorted(set(out))


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (or a module importing itself)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in graph.get(v, ()):
                out.append(sorted(comp))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in sorted(graph):
        if v not in index:
            strong(v)
    return out


def main(argv: list[str]) -> int:
    root = Path(argv[0]) if argv else ROOT
    es = edges(root)
    deps: dict[str, set[str]] = {m: set() for m in modules(root)}
    for e in es:
        if e.target != e.source:
            deps[e.source].add(e.target + ("*" if e.function else ""))
    for m, d in deps.items():
        print(m, "->", " ".join(sorted(d)))
    print(f"\nfunction-local imports of pagesim modules: {sum(1 for e in es if e.function)}")
    for e in es:
        if e.function:
            print(f"  {e.source}:{e.line} in {e.function}(): {e.target}" + (f" ({e.name})" if e.name else ""))
    print("\ncycles:", cycles({m: {t.rstrip("*") for t in d} for m, d in deps.items()}))
    print("private names used across modules:")
    for mod, line, name in private_uses(root):
        print(f"  {mod}:{line} {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
