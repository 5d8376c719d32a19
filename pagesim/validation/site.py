"""The published site: a Jupyter Book (version 1, built by Sphinx) of the notebooks as the main job
executed them, the validation report, START_HERE as the landing page and an API reference from
the docstrings, with a Binder launch button on every notebook page.

``build(out)`` stages the book in ``out/book`` from what ``pagesim notebooks --out OUT`` wrote
(``OUT/notebooks/NN_*.ipynb`` with their outputs, ``OUT/report.md``), without executing anything
again, and builds it into ``out/site`` (``out/site/_build/html/index.html``). The build fails on
any Sphinx warning (``--warningiserror``): a broken cross-reference, a missing figure or page.
Before it, every link of every page is checked: a link to another page of the book stays, a link
to another file of the repository becomes its address on GitHub (``REPOSITORY``), and a link to a
file that does not exist is an error naming the page and the target. Every image a notebook
output holds needs its alt text in the output's metadata (figures get it from
``pagesim.teaching.plotting.describe_figures``); the book's own Sphinx extension (:func:`setup`)
puts it on the page's image, and an image without one is an error naming the notebook and cell.

    python -m pagesim.validation.site --out build        # after pagesim notebooks --out build
"""

from __future__ import annotations

import argparse
import functools
import importlib
import inspect
import json
import re
import shutil
import subprocess
import sys
import urllib.parse
from pathlib import Path

from ..teaching.plotting import IMAGE_TYPES
from .report import notebooks_dir

#: where the repository is published (the address the README's Binder link assumes)
REPOSITORY = "https://github.com/pagesim/pagesim"
BRANCH = "main"
BINDER = "https://mybinder.org"
#: the modules whose public names the API reference lists, in order
API_MODULES = ("pagesim", "pagesim.engine.timing", "pagesim.sources.traces", "pagesim.sources.datasets", "pagesim.host.here", "pagesim.teaching.explain")
LINK = re.compile(r"(\]\()([^)\s]+)(\))|((?:href|src)=\")([^\"]+)(\")")
CODE = re.compile(r"```.*?```|`[^`\n]*`", re.S)  # fenced blocks and code spans: their text is not a link
ANSI = re.compile(r"\x1b\[[0-9;]*m")
#: the staged table of the notebooks' image outputs' alt text (page -> texts in order)
ALT_FILE = "_alt.json"
OUTPUT_IMAGE = re.compile(r"[0-9a-f]{64}")  # MyST-NB's name for an output's image file


class SiteError(RuntimeError):
    """The site cannot be built as it stands: a page is missing or links to nothing."""


def jupyter_slug(text: str) -> str:
    """A heading's anchor as JupyterLab makes it: its text, spaces as hyphens, case kept."""
    return text.strip().replace(" ", "-")


def _root() -> Path:
    return notebooks_dir().parent


@functools.lru_cache(maxsize=1)
def _tracked() -> frozenset | None:
    """The files git tracks in the repository (None outside a checkout): a link to any other file
    would point at nothing on GitHub."""
    try:
        r = subprocess.run(["git", "ls-files", "-z"], cwd=_root(), capture_output=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    if r.returncode != 0:
        return None
    return frozenset(x for x in r.stdout.decode().split("\0") if x)


def _relink(text: str, page: Path, book: Path, where: str) -> str:
    """``text`` (a page's Markdown, the page's path in the repository ``page``) with every relative
    link checked, outside code: one to a page of the book kept, one to another repository file
    (tracked by git) made absolute."""
    parts, last = [], 0
    for m in CODE.finditer(text):
        parts += [_relink_prose(text[last : m.start()], page, book, where), m.group(0)]
        last = m.end()
    return "".join(parts + [_relink_prose(text[last:], page, book, where)])


def _relink_prose(text: str, page: Path, book: Path, where: str) -> str:
    root = _root()
    tracked = _tracked()

    def fix(m):
        pre, target, post = (m.group(1), m.group(2), m.group(3)) if m.group(1) else (m.group(4), m.group(5), m.group(6))
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            return m.group(0)
        path, _, anchor = target.partition("#")
        dest = (page.parent / urllib.parse.unquote(path)).resolve()
        if not dest.exists():
            raise SiteError(f"{where}: a link to {target!r}, which does not exist ({dest})")
        try:
            rel = dest.relative_to(root)
        except ValueError:
            raise SiteError(f"{where}: a link to {target!r}, outside the repository") from None
        if (book / rel).exists():
            return m.group(0)
        if tracked is not None and not dest.is_dir() and rel.as_posix() not in tracked:
            raise SiteError(f"{where}: a link to {target!r}, a file git does not track (it would not be on GitHub)")
        kind = "tree" if dest.is_dir() else "blob"
        return f"{pre}{REPOSITORY}/{kind}/{BRANCH}/{rel.as_posix()}{'#' + anchor if anchor else ''}{post}"

    return LINK.sub(fix, text)


def _notebook(src: Path, dest: Path, book: Path, repo_path: Path) -> list:
    """Stage one notebook (its links checked); returns the alt text of its image outputs, in order
    (one an output, whichever of its image types the page shows). An image without alt text is an
    error."""
    nb = json.loads(src.read_text(encoding="utf-8"))
    alts = []
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "markdown":
            text = "".join(cell["source"])
            cell["source"] = _relink(text, repo_path, book, f"{repo_path.name}, cell {i}").splitlines(True)
        for out in cell.get("outputs", ()):
            kinds = [m for m in IMAGE_TYPES if m in out.get("data", {})]
            if not kinds:
                continue
            meta = out.get("metadata", {})
            found = {meta.get(m, {}).get("alt", "").strip() for m in kinds} - {""}
            if len(found) != 1:
                what = "no alt text" if not found else f"different alt texts for its {' and '.join(kinds)} ({sorted(found)})"
                raise SiteError(
                    f"{src}, cell {i}: an image with {what}: a matplotlib figure gets its alt text from "
                    'pagesim.teaching.plotting.describe_figures(), any other image from {"alt": ...} in its output\'s metadata for each image type'
                )
            alts.append(found.pop())
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return alts


def _set_alt(app, doctree) -> None:
    """Sphinx: each notebook image's alt text, from the staged ``ALT_FILE`` (the page's image
    outputs in order; MyST-NB names each output's image file by the SHA-256 of its data)."""
    from docutils import nodes as docutils_nodes  # deferred: only the site build (the site extra) has docutils
    from sphinx.util import logging as sphinx_logging

    path = Path(app.srcdir) / ALT_FILE
    alts = json.loads(path.read_text(encoding="utf-8")).get(app.env.docname) if path.is_file() else None
    if alts is None:
        return
    images = [n for n in doctree.findall(docutils_nodes.image) if OUTPUT_IMAGE.fullmatch(Path(str(n.get("uri", ""))).stem)]
    if len(images) != len(alts):
        sphinx_logging.getLogger(__name__).warning(f"{app.env.docname}: {len(images)} output images on the page, {len(alts)} alt texts staged")
        return
    for node, alt in zip(images, alts):
        node["alt"] = alt


def setup(app):
    """The book's own Sphinx extension: figures' alt text (:func:`_set_alt`)."""
    app.connect("doctree-read", _set_alt)
    return {"parallel_read_safe": True}


def api_page() -> str:
    """The API reference: each public name of :data:`API_MODULES` with its signature and docstring,
    as written (a literal block, so a docstring is shown, never parsed)."""
    lines = [
        "# API reference",
        "",
        "The public functions and classes, with their signatures and docstrings as the code has them",
        f"(the source: [{REPOSITORY}]({REPOSITORY})).",
        "",
    ]
    for modname in API_MODULES:
        mod = importlib.import_module(modname)
        names = list(getattr(mod, "__all__", None) or [n for n, v in vars(mod).items() if not n.startswith("_") and getattr(v, "__module__", "") == modname])
        lines += [f"## `{modname}`", "", "```text", inspect.getdoc(mod) or "", "```", ""]
        for name in names:
            obj = getattr(mod, name)
            if not (inspect.isfunction(obj) or inspect.isclass(obj)):
                continue
            try:
                sig = str(inspect.signature(obj))
            except (TypeError, ValueError):
                sig = ""
            lines += [f"### `{modname}.{name}`", "", "```text", f"{name}{sig}", "", inspect.getdoc(obj) or "(no docstring)", "```", ""]
    return "\n".join(lines) + "\n"


def stage(out: Path, partial: bool = False) -> Path:
    """The book's sources in ``out/book``, from the executed notebooks and the report in ``out``.
    ``partial``: a notebook with no executed copy is taken as committed, without outputs (a
    preview; the published site has every notebook executed)."""
    out = Path(out)
    src = notebooks_dir()
    executed = sorted((out / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    executed = [p for p in executed if not p.name.endswith(".failed.ipynb")]
    wanted = sorted(p.name for p in src.glob("[0-9][0-9]_*.ipynb"))
    missing = sorted(set(wanted) - {p.name for p in executed})
    if missing and not partial:
        raise SiteError(f"{out / 'notebooks'}: no executed copy of {', '.join(missing)}: run pagesim notebooks --out {out} first")
    report = out / "report.md"
    if not report.is_file():
        raise SiteError(f"{report}: no validation report: run pagesim notebooks --out {out} first")
    book = out / "book"
    if book.exists():
        shutil.rmtree(book)
    (book / "notebooks").mkdir(parents=True)
    # the pages first (so links between them resolve), then their text with the links checked
    names = ["START_HERE.ipynb", *wanted, "glossary.ipynb"]
    for name in names:
        (book / "notebooks" / name).touch()
    (book / "report.md").touch()
    alts = {}
    for name in names:
        origin = next((p for p in executed if p.name == name), src / name)
        alts[f"notebooks/{name.removesuffix('.ipynb')}"] = _notebook(origin, book / "notebooks" / name, book, src / name)
    (book / ALT_FILE).write_text(json.dumps(alts, indent=1) + "\n", encoding="utf-8")
    binder = f"{BINDER}/v2/gh/{REPOSITORY.split('github.com/')[1]}/{BRANCH}?urlpath=lab/tree/notebooks/START_HERE.ipynb"
    head = f"[![Launch in Binder]({BINDER}/badge_logo.svg)]({binder})\n\n"
    (book / "report.md").write_text(head + _relink(report.read_text(encoding="utf-8"), _root() / "report.md", book, "report.md"), encoding="utf-8")
    (book / "api.md").write_text(head + api_page(), encoding="utf-8")
    toc = ["format: jb-book", "root: notebooks/START_HERE", "chapters:"]
    toc += [f"- file: notebooks/{n.removesuffix('.ipynb')}" for n in names[1:]]
    toc += ["- file: report", "- file: api"]
    (book / "_toc.yml").write_text("\n".join(toc) + "\n", encoding="utf-8")
    config = {
        "title": "pagesim",
        "author": "The pagesim developers",
        "only_build_toc_files": True,
        "execute": {"execute_notebooks": "off"},
        "repository": {"url": REPOSITORY, "branch": BRANCH, "path_to_book": ""},
        "launch_buttons": {"binderhub_url": BINDER, "notebook_interface": "jupyterlab"},
        "html": {"use_repository_button": True},
        # headings are link targets as JupyterLab makes them (notebooks link [TLB](glossary.ipynb#TLB))
        "sphinx": {
            "config": {"myst_heading_anchors": 4, "myst_heading_slug_func": "pagesim.validation.site.jupyter_slug"},
            "extra_extensions": ["pagesim.validation.site"],  # figures' alt text (setup below)
        },
    }
    (book / "_config.yml").write_text(json.dumps(config, indent=1) + "\n", encoding="utf-8")  # JSON is YAML
    return book


def build(out, quiet: bool = True, partial: bool = False) -> Path:
    """Stage (:func:`stage`) and build the site in ``out/site``; returns its index page. Any Sphinx
    warning fails it."""
    out = Path(out)
    book = stage(out, partial)
    site = out / "site"
    if site.exists():
        shutil.rmtree(site)
    jb = "import sys; from jupyter_book.cli.main import main; sys.exit(main())"  # the jupyter-book command, in this Python
    cmd = [sys.executable, "-c", jb, "build", str(book), "--path-output", str(site), "--warningiserror", "--keep-going", "--builder", "html"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        log = (r.stdout + r.stderr).strip().splitlines()
        log = [ANSI.sub("", ln) for ln in log]
        warn = [ln for ln in log if "WARNING" in ln or "ERROR" in ln or "Error" in ln]
        raise SiteError("the site did not build:\n" + "\n".join((warn or log)[-40:]))
    index = site / "_build" / "html" / "index.html"
    if not index.is_file():
        raise SiteError(f"the site built no {index}")
    if not quiet:
        print(f"site: {index}")
    return index


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pagesim.validation.site", description="build the site from the executed notebooks")
    ap.add_argument("--out", default="build", help="the folder pagesim notebooks wrote (default build/)")
    ap.add_argument("--partial", action="store_true", help="take the notebooks not executed yet as committed (a preview)")
    args = ap.parse_args(argv)
    try:
        build(args.out, quiet=False, partial=args.partial)
    except SiteError as e:
        print(f"pagesim site: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
