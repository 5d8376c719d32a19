"""The version names the commit: setuptools-scm's at install time, HEAD's in a checkout that moved on."""

import subprocess
from pathlib import Path

import pytest

import pagesim
from pagesim.core import version as V

ROOT = Path(__file__).resolve().parents[2]
HEAD = "4026b3975aa0d3f1c2b4e5f60718293a4b5c6d7e"


@pytest.mark.parametrize(
    "installed, head, want",
    [
        ("0.1.1.dev532+g4026b3975", HEAD, "0.1.1.dev532+g4026b3975"),  # installed at HEAD
        ("0.1.1.dev532+g4026b3975.d20261128", HEAD, "0.1.1.dev532+g4026b3975.d20261128"),  # with changes then
        ("0.1.1.dev532+g1111111", HEAD, "0.1.1.dev532+g4026b3975"),  # the checkout moved on
        ("0.1.0", HEAD, "0.1.0+g4026b3975"),  # built without git, run from a checkout
        ("0.1.1.dev532+g1111111", None, "0.1.1.dev532+g1111111"),  # not a checkout
    ],
)
def test_the_local_part_names_head(installed, head, want):
    assert V.version_of(installed, head) == want


def test_head_is_read_from_refs_packed_refs_and_a_worktree(tmp_path):
    git = tmp_path / "repo" / ".git"
    (git / "refs" / "heads").mkdir(parents=True)
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    assert V.checkout_head(tmp_path / "repo") is None  # the branch has no commit yet
    (git / "packed-refs").write_text(f"# pack-refs with: peeled\n{HEAD} refs/heads/main\n")
    assert V.checkout_head(tmp_path / "repo") == HEAD
    other = "a" * 40
    (git / "refs" / "heads" / "main").write_text(other + "\n")
    assert V.checkout_head(tmp_path / "repo") == other
    wt = git / "worktrees" / "w"
    wt.mkdir(parents=True)
    (wt / "HEAD").write_text("ref: refs/heads/main\n")
    (wt / "commondir").write_text("../..\n")
    (tmp_path / "w").mkdir()
    (tmp_path / "w" / ".git").write_text(f"gitdir: {wt}\n")
    assert V.checkout_head(tmp_path / "w") == other
    (git / "HEAD").write_text(HEAD + "\n")  # detached
    assert V.checkout_head(tmp_path / "repo") == HEAD
    assert V.checkout_head(tmp_path) is None


def test_this_checkouts_version_names_its_head():
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    assert V.checkout_head(ROOT) == head
    assert pagesim.__version__.split("+")[1].startswith("g" + head[:7])
    ds = pagesim.simulate("skylake", "random", working_set="1M", accesses=100)
    assert ds.attrs["pagesim_version"] == pagesim.__version__
