"""The package's layers (docs/design.md): each module imports only from its own layer or the layers
below; there is no import cycle; no function-local import of a pagesim module outside the few listed
here with their reason; no private name (``_x``) of one module used by another. The import graph is
read from the source with ``ast`` (tests/import_graph.py): module-level and function-local imports,
``from . import x``, ``from ..x import y``, ``import pagesim.x``."""

from __future__ import annotations

import pytest
from import_graph import ROOT, cycles, edges, modules, private_uses

# bottom to top: a layer holds the modules of its packages (the top, the modules named)
LAYERS = (
    ("core", ("pagesim.core",)),
    ("kernels", ("pagesim._kernels",)),
    ("model", ("pagesim.model",)),
    ("sources", ("pagesim.sources",)),
    ("system", ("pagesim.system",)),
    ("engine", ("pagesim.engine",)),
    ("host", ("pagesim.host",)),
    ("teaching", ("pagesim.teaching",)),
    ("studies", ("pagesim.studies",)),
    ("validation", ("pagesim.validation",)),
    ("top", ("pagesim.cli", "pagesim.__main__", "pagesim")),
)

# (importing module, imported module): why the import may point upward or sit inside a function
ALLOWED: dict = {}

# (importing module, private name): why another module's private name may be used
ALLOWED_PRIVATE: dict = {}


def layer_of(module: str) -> int:
    for i, (_, packages) in enumerate(LAYERS):
        if module in packages or any(module.startswith(p + ".") for p in packages if p != "pagesim"):
            return i
    raise KeyError(module)


def name(i: int) -> str:
    return LAYERS[i][0]


def test_every_module_has_a_layer():
    missing = []
    for m in modules(ROOT):
        try:
            layer_of(m)
        except KeyError:
            missing.append(m)
    assert missing == [], f"modules in no layer (add their package to LAYERS and docs/design.md): {missing}"


def test_no_module_name_is_private_outside_the_kernels():
    """Modules of the layers have public names; only the kernels' package is internal (``_kernels``)."""
    private = [m for m in modules(ROOT) if not m.startswith("pagesim._kernels") and any(p.startswith("_") and not p.startswith("__") for p in m.split("."))]
    assert private == []


def test_imports_point_down():
    up = []
    for e in edges(ROOT):
        if (e.source, e.target) in ALLOWED:
            continue
        src, dst = layer_of(e.source), layer_of(e.target)
        if dst > src:
            up.append(f"{e.source}:{e.line} ({name(src)}) imports {e.target} ({name(dst)})")
    assert up == [], "imports from a layer above:\n" + "\n".join(up)


def test_no_import_cycle():
    graph: dict[str, set[str]] = {m: set() for m in modules(ROOT)}
    for e in edges(ROOT):
        if e.source != e.target and (e.source, e.target) not in ALLOWED:
            graph[e.source].add(e.target)
    assert cycles(graph) == []


def test_function_local_imports_are_the_listed_ones():
    local = [f"{e.source}:{e.line} in {e.function}(): {e.target}" for e in edges(ROOT) if e.function and (e.source, e.target) not in ALLOWED]
    assert local == [], "function-local imports of pagesim modules (import at module level; a cycle means a function is in the wrong layer):\n" + "\n".join(
        local
    )


def test_no_private_name_crosses_modules():
    used = [f"{m}:{line} uses {n}" for m, line, n in private_uses(ROOT) if (m, n) not in ALLOWED_PRIVATE]
    assert used == [], "private names of other modules (make them public with a docstring, or stop needing them):\n" + "\n".join(used)


@pytest.mark.parametrize("allowed", [ALLOWED, ALLOWED_PRIVATE], ids=["imports", "private names"])
def test_every_exception_is_still_needed(allowed):
    """An exception whose import or use is gone is removed from its list."""
    es = {(e.source, e.target) for e in edges(ROOT)}
    uses = {(m, n) for m, _, n in private_uses(ROOT)}
    stale = [k for k in allowed if k not in es and k not in uses]
    assert stale == []


def test_the_public_api_is_the_top_package():
    import pagesim

    for n in pagesim.__all__:
        assert not isinstance(getattr(pagesim, n), type(pagesim)), f"pagesim.{n} is a module"
