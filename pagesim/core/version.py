"""The package version, which names the commit it was built from.

setuptools-scm derives it from git when the package is built or installed and writes it to
``pagesim/core/scmversion.py``: ``0.1.1.devN+gHASH`` is a development version after 0.1.0, the N-th
commit of the history, at commit HASH (``.dYYYYMMDD`` after it: built with uncommitted changes). A copy built without git says
``0.1.0``, and a source tree never installed ``0.1.0+unknown``.

An editable install (``pip install -e .``, as the Makefile does) keeps the version it was installed
with while the checkout moves on, so in a git checkout whose HEAD is another commit the local part
names HEAD instead: ``0.1.1.devN+gHEAD``, N still the install's count. HEAD is read from the files
under ``.git`` (no git process at import).
"""

from __future__ import annotations

import re
from pathlib import Path

try:
    from .scmversion import version as INSTALLED  # written by setuptools-scm; absent in a bare source tree
except ImportError:
    INSTALLED = None

FALLBACK = "0.1.0+unknown"


def installed_version() -> str:
    """The version written when the package was built or installed (FALLBACK without one)."""
    return FALLBACK if INSTALLED is None else str(INSTALLED)


def checkout_head(root: Path) -> str | None:
    """The commit (40 hex digits) HEAD names in the git checkout ``root``, or None: not a checkout,
    or one whose HEAD cannot be read from its files."""
    git = root / ".git"
    try:
        if git.is_file():  # a worktree: "gitdir: <path>"
            git = (root / git.read_text().split(":", 1)[1].strip()).resolve()
        head = (git / "HEAD").read_text().strip()
        if head.startswith("ref: "):
            ref = head[5:].strip()
            common = git / "commondir"
            base = (git / common.read_text().strip()).resolve() if common.is_file() else git
            for d in (git, base):
                f = d / ref
                if f.is_file():
                    head = f.read_text().strip()
                    break
            else:
                packed = (base / "packed-refs").read_text().splitlines()
                head = next((ln.split()[0] for ln in packed if ln.endswith(" " + ref)), "")
    except (OSError, IndexError, ValueError):
        return None
    return head if re.fullmatch(r"[0-9a-f]{40}", head) else None


def version_of(installed: str, head: str | None) -> str:
    """``installed`` with its local part naming commit ``head`` when it names another (module text)."""
    if head is None:
        return installed
    public, _, local = installed.partition("+")
    if local.startswith("g") and head.startswith(local[1:].split(".")[0]):
        return installed
    return f"{public}+g{head[:9]}"


__version__ = version_of(installed_version(), checkout_head(Path(__file__).resolve().parents[2]))
