"""The product carries no lab log: history (issue numbers, commit ids, sessions, dates of runs, who
found what) lives in git, not in code, comments, docstrings, tests, benchmarks, exercises,
notebooks, the README, docs/, the Makefile or binder/. A measured figure says how to measure it
again (its command), not when or at which commit it was measured.

Allowed, and listed here so that each allowance is visible: another project's issue or commit cited
as a source, as a URL (``https://github.com/owner/repo/issues/N``), as ``owner/repo@abc1234``, or
by that project's name (``otter-grader's issue 931``); a file's digest (sha256, the datasets'
16-hex-digit names)."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FILES = [
    *ROOT.glob("pagesim/**/*.py"),
    *ROOT.glob("pagesim/data/*.toml"),
    *ROOT.glob("tests/**/*.py"),
    *ROOT.glob("benchmarks/*.py"),
    *ROOT.glob("exercises/**/*.py"),
    *ROOT.glob("exercises/**/*.md"),
    *ROOT.glob("notebooks/*.ipynb"),
    *ROOT.glob("notebooks/*.md"),
    *ROOT.glob("*.md"),
    *ROOT.glob("docs/**/*.md"),
    *ROOT.glob("binder/*"),
    ROOT / "Makefile",
    ROOT / "pyproject.toml",
]
#: a short commit id: 7-12 hex digits with at least one letter and one digit
HEX = r"(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,12}"
PATTERNS = {
    "an issue of this project": re.compile(r"(?<![-\w])issues? #?\d+", re.I),
    "who found it": re.compile(r"outside tester|found by an? (reviewer|tester|audit)", re.I),
    "a commit id of this project": re.compile(rf"\b(commit|at) {HEX}\b|\({HEX}\)"),
    "a commit id next to the word commit": re.compile(r"\bcommits?\W{1,3}(id\W{1,3})?[0-9a-f]{7,40}\b|\b[0-9a-f]{7,40}\W{1,3}commit\b", re.I),
    "a work session": re.compile(r"\b(last|this|previous|earlier|later|next|that|same) session|\bsessions? \d+", re.I),
}
#: in the prose pages (docs/, the READMEs, the Makefile, binder/), where measured figures are reported:
#: the date of a run. Code and data cite their sources with the date of the page read, which stays.
PROSE_PATTERNS = {"the date of a run": re.compile(r"\b20\d\d-[01]\d-[0-3]\d\b")}
PROSE = re.compile(r"(\.md|Makefile|binder/\w+)$")
#: other projects' issues and commits, cited as sources: by URL, as owner/repo@commit, or by name
EXTERNAL = re.compile(
    r"https?://\S+/(issues|pull|commit)/\w+"
    r"|[\w.-]+/[\w.-]+@[0-9a-f]{7,40}"
    r"|(otter-grader's|otter-grader|numba|jupyter|xarray|papermill|pandas|numpy)[ #\w-]*issue",
    re.I,
)
#: a file's digest is not a commit id
DIGEST = re.compile(r"sha256|digest|[0-9a-f]{16}\.txt|_[0-9a-f]{16}")


def violations(text: str, prose: bool = True) -> list[tuple[int, str, str]]:
    """(line number, what, the match) for each line of ``text`` that carries history; ``prose``: a
    page where dates of runs are looked for too."""
    patterns = {**PATTERNS, **PROSE_PATTERNS} if prose else PATTERNS
    found = []
    for n, line in enumerate(text.splitlines(), 1):
        for what, rx in patterns.items():
            m = rx.search(line)
            if m and not EXTERNAL.search(line) and not DIGEST.search(line):
                found.append((n, what, m.group(0)))
    return found


def test_no_history_in_the_product():
    bad = []
    for p in FILES:
        if p == Path(__file__).resolve() or not p.is_file():
            continue
        text = p.read_text(encoding="utf-8")
        for n, what, m in violations(text, prose=bool(PROSE.search(p.relative_to(ROOT).as_posix()))):
            line = text.splitlines()[n - 1]
            bad.append(f"{p.relative_to(ROOT)}:{n}: {what}: {m!r} in {line.strip()[:120]!r}")
    assert not bad, "\n".join(bad[:40])


def test_the_patterns_catch_a_lab_log_and_spare_citations():
    """What the patterns catch, and the allowances, on examples of both."""
    log = [
        "measured at commit b7a9270, 2026-11-27",
        "at 0e4ba8b the ratio was 2.9x",
        "(commit 0e4ba8b2c1d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7)",
        "fixed in issue 12",
        "last session's 1.65x",
        "Since then (2026-11-23):",
    ]
    for line in log:
        assert violations(line), line
    cited = [
        "away from tests/ (https://github.com/ucbds-infra/otter-grader/issues/931)",
        "the layout of numba-stats (HDembinski/numba-stats@0a1b2c3, src/_util.py)",
        "otter-grader's issue 931",
        "binder/start sets the cache directory for every session",
        "grade each notebook in a session of their own",
        "file 001_ec4ce787d7978bc9.txt",
        "without it a session on a node with another CPU compiles every kernel again",
    ]
    for line in cited:
        assert not violations(line), line
    assert not violations("(sites.utexas.edu/jdm4372, 2010-10-01)", prose=False)
