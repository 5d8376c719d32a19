"""pagesim.engine.xrdata: Datasets built by xarray's internal structures only where this process has
checked them, and the same Datasets by the public paths everywhere else."""

from __future__ import annotations

import ast
import itertools
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

import pagesim
from pagesim.engine import xrdata as X
from pagesim.engine.sweep import _point

ROOT = Path(__file__).resolve().parents[2]

# What xarray keeps private: a module under xarray.core or xarray.structure, a Dataset's or a
# Variable's underscored attributes, the constructor's fast path.
PRIVATE_ATTRS = {"_construct_direct", "_variables", "_indexes", "_coord_names", "_encoding", "_dims", "_data", "_attrs"}


@pytest.fixture
def public(monkeypatch):
    """The public paths only, as on an xarray the probe refused."""
    monkeypatch.setattr(X, "_VERIFIED", {"dataset": False, "concat": False})


def test_the_direct_paths_are_verified_on_this_xarray():
    """On the xarray installed here the probe accepts both direct paths: if a release changes
    what they rely on, pagesim falls back to the public paths (slower), and this test says so."""
    assert X._probe("dataset"), f"xarray {xr.__version__}: the direct Dataset path differs from the constructor"
    assert X._probe("concat"), f"xarray {xr.__version__}: the numpy concatenation differs from xr.concat"


def test_the_probe_refuses_a_direct_path_that_differs(monkeypatch):
    """A direct path that loses an attribute, or raises, is refused: the probe can fail."""
    real = X._direct

    def lossy(xr_, dv, coords, attrs, order=None):
        return real(xr_, dv, coords, {k: v for k, v in attrs.items() if k != "seed"}, order)

    monkeypatch.setattr(X, "_direct", lossy)
    with pytest.warns(UserWarning, match=r"xarray .* differs from what pagesim's fast path for Datasets expects"):
        assert not X._probe("dataset")

    def broken(*a, **k):
        raise AttributeError("no such internal")

    monkeypatch.setattr(X, "_concat_arrays", broken)
    with pytest.warns(UserWarning, match="for a sweep's runs"):
        assert not X._probe("concat")


def test_the_environment_keeps_to_the_public_paths(monkeypatch):
    monkeypatch.setenv("PAGESIM_XARRAY", "public")
    assert not X._probe("dataset") and not X._probe("concat")


@pytest.mark.parametrize("name", ["skylake", "power6", "ultrasparc-iii"])
def test_simulate_gives_the_same_dataset_by_the_public_paths(name, monkeypatch):
    """simulate() and the timing model's Dataset (rebuilt from simulate's): the same by either path."""
    from pagesim.engine.timing import simulate_timed

    kw = dict(working_set="8M", accesses=3000)
    hier = None if name == "power6" else "opteron-k8"  # a machine without its own data caches borrows one
    fast, fast_t = pagesim.simulate(name, "random", **kw), simulate_timed(name, "random", hierarchy=hier, **kw)
    assert X.verified("dataset")
    monkeypatch.setattr(X, "_VERIFIED", {"dataset": False, "concat": False})
    assert X.same(fast, pagesim.simulate(name, "random", **kw))
    assert X.same(fast_t, simulate_timed(name, "random", hierarchy=hier, **kw))


def test_sweep_concatenates_the_same_by_the_public_path(public):
    """Runs of different machines and page sizes (labels that differ, aux coordinates that
    disagree): one public xr.concat gives what the numpy concatenation gives."""
    axes = {"machine": ["skylake", "power6", "zen4"], "seed": [0, 1]}
    names = list(axes)
    parts = [_point({"workload": "random", "working_set": "4M", "accesses": 500, **dict(zip(names, c))}, names) for c in itertools.product(*axes.values())]
    aux = X._aux_coords(parts)
    want = X.concat_runs(parts, xr)  # public: the fixture refused the direct paths
    got = X._concat_arrays(parts, aux, xr)
    assert got is not None and X.same(got, want)
    assert X.same(X._concat_xarray(parts, aux, xr, grouped=True), want)


def test_same_tells_datasets_apart():
    """X.same, the probe's comparison, is not a bare identical(): variable order and index dtype count."""
    a = xr.Dataset({"x": ("d", np.arange(3)), "y": ("d", np.ones(3))}, coords={"d": [1, 2, 3]})
    assert X.same(a, a.copy())
    assert not X.same(a, a[["y", "x"]])
    assert not X.same(a, a.assign_coords(d=np.array([1, 2, 3], dtype=np.int32)))
    assert not X.same(a, a.assign_attrs(note="n"))


def _private_uses(path: Path) -> list[str]:
    """Where ``path`` imports from xarray.core / xarray.structure or reads an underscored
    attribute xarray keeps private, or passes ``fastpath=``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[:2] in (["xarray", "core"], ["xarray", "structure"]):
            found.append(f"{path.name}:{node.lineno} from {node.module}")
        elif isinstance(node, ast.Import) and any(a.name.startswith(("xarray.core", "xarray.structure")) for a in node.names):
            found.append(f"{path.name}:{node.lineno} import xarray internals")
        elif isinstance(node, ast.Attribute) and node.attr in PRIVATE_ATTRS:
            found.append(f"{path.name}:{node.lineno} .{node.attr}")
        elif isinstance(node, ast.keyword) and node.arg == "fastpath":
            found.append(f"{path.name}:{node.lineno} fastpath=")
    return found


def test_xarray_internals_are_used_only_in_xrdata():
    """Every use of xarray's private structures is in pagesim/engine/xrdata.py, behind its probe."""
    outside = []
    for path in sorted((ROOT / "pagesim").rglob("*.py")):
        if path.name != "xrdata.py":
            outside += _private_uses(path)
    assert not outside, outside
    assert _private_uses(ROOT / "pagesim" / "engine" / "xrdata.py"), "the check finds nothing even where the internals are used"
