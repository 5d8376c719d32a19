"""The notebooks in a real browser: JupyterLab on 127.0.0.1, Debian's chromium driven by playwright,
Run All as a student would, then what the student sees is checked in the page itself.

Selected with `pytest -m browser` (the plain `pytest` / `make test` leaves it out); `.ci/run` installs
chromium (apt) and playwright (pip) and runs it. Without a chromium or playwright the test skips
with the reason, unless PAGESIM_BROWSER_REQUIRED=1 (set by `.ci/run` once it has installed both),
where a missing browser is a failure. See tests/README.md.

Everything the server writes stays in a temporary folder: its root, Jupyter's config, data and
runtime folders, IPython's and matplotlib's; the server and its kernels are shut down even when a
test fails.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import nbformat
import pytest

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
REQUIRED = os.environ.get("PAGESIM_BROWSER_REQUIRED", "") not in ("", "0")
RUN_TIMEOUT_S = 900  # Run All of a notebook in quick mode; 00 takes ~1 min cold on a busy 2-core machine
# one widget change: a machine's first translation compiles its kernel, minutes on a loaded 2-core machine
WIDGET_TIMEOUT_S = 240
PLOT_CALLS = re.compile(r"plt\.show\(|plotting\.(?!describe_figures\()\w+\(|\.plot\(|sns\.\w+\(")  # describe_figures draws nothing
TRACEBACK = re.compile(r"Traceback \(most recent call last\)|^-{20,}\s*$|^\w+(Error|Exception)\b", re.M)


def _missing(what: str):
    if REQUIRED:
        pytest.fail(f"{what} (PAGESIM_BROWSER_REQUIRED is set, so this is a failure, not a skip)")
    pytest.skip(what)


def chromium_executable() -> str | None:
    """The chromium to drive: $PAGESIM_CHROMIUM, else Debian's binary (behind its /usr/bin/chromium
    shell wrapper), else whatever `chromium` is on PATH."""
    env = os.environ.get("PAGESIM_CHROMIUM")
    if env:
        return env if os.access(env, os.X_OK) else None
    for cand in ("/usr/lib/chromium/chromium",):
        if os.access(cand, os.X_OK):
            return cand
    return shutil.which("chromium") or shutil.which("chromium-browser")


# --------------------------------------------------------------------------- the server


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _die_with_parent():
    """In the server's process: get SIGTERM when pytest dies, however it dies (Linux)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class Lab:
    """A JupyterLab server of our own: its root folder, token and log."""

    def __init__(self, base: Path):
        self.base = base
        self.root = base / "root"
        self.root.mkdir(parents=True)
        self.port = _free_port()
        self.token = secrets.token_hex(16)
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = base / "jupyterlab.log"
        self.proc: subprocess.Popen | None = None

    def env(self) -> dict:
        env = dict(os.environ)
        for var, sub in (
            ("JUPYTER_CONFIG_DIR", "config"),
            ("JUPYTER_DATA_DIR", "data"),
            ("JUPYTER_RUNTIME_DIR", "runtime"),
            ("IPYTHONDIR", "ipython"),
            ("MPLCONFIGDIR", "matplotlib"),
        ):
            (self.base / sub).mkdir(exist_ok=True)
            env[var] = str(self.base / sub)
        env.pop("JUPYTER_PATH", None)
        env.pop("JUPYTER_CONFIG_PATH", None)
        env["PYTHONUNBUFFERED"] = "1"
        return env

    def write_settings(self):
        """JupyterLab settings for a test: every cell kept in the page (JupyterLab 4 otherwise only
        renders the cells in view), no news or update pop-ups over the notebook."""
        settings = self.base / "config" / "lab" / "user-settings" / "@jupyterlab"
        for ext, name, value in (
            ("notebook-extension", "tracker", {"windowingMode": "none"}),
            ("apputils-extension", "notification", {"fetchNews": "false", "checkForUpdates": False}),
        ):
            (settings / ext).mkdir(parents=True, exist_ok=True)
            (settings / ext / f"{name}.jupyterlab-settings").write_text(json.dumps(value))

    def start(self):
        env = self.env()
        self.write_settings()
        cmd = [
            sys.executable,
            "-m",
            "jupyterlab",
            "--no-browser",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={self.port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={self.token}",
            f"--ServerApp.root_dir={self.root}",
            "--LabApp.news_url=",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            "--LabApp.extension_manager=readonly",
            "--ServerApp.terminals_enabled=False",
        ]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            cmd.append("--allow-root")  # CI and containers run as root
        log = open(self.log_path, "w")
        self.proc = subprocess.Popen(
            cmd, cwd=self.root, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True, preexec_fn=_die_with_parent
        )
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"JupyterLab exited with {self.proc.returncode}:\n{self.log()}")
            try:
                self.api("GET", "/api/status")
                return
            except (urllib.error.URLError, ConnectionError, OSError):
                time.sleep(0.5)
        raise RuntimeError(f"JupyterLab did not answer on {self.url} within 180 s:\n{self.log()}")

    def api(self, method: str, path: str):
        req = urllib.request.Request(self.url + path, method=method, headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(req, timeout=10) as r:
            body = r.read()
            return json.loads(body) if body else None

    def log(self, tail: int = 4000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-tail:]
        except OSError:
            return ""

    def stop(self):
        """Ask the server to shut down (it stops its kernels), then end its process group."""
        if self.proc is None or self.proc.poll() is not None:
            return
        try:
            self.api("POST", "/api/shutdown")
            self.proc.wait(timeout=20)
        except Exception:  # noqa: BLE001 - whatever went wrong, the process group below still ends
            pass
        for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 5)):
            try:
                os.killpg(self.proc.pid, sig)  # the server's own session: it and its kernels
            except ProcessLookupError:
                break
            try:
                self.proc.wait(timeout=wait)
            except subprocess.TimeoutExpired:
                continue
        # kernels are in the same process group; make sure none outlives the server
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


@pytest.fixture(scope="module")
def chromium():
    exe = chromium_executable()
    if exe is None:
        _missing("no chromium: install Debian's `chromium` (apt-get install chromium) or set PAGESIM_CHROMIUM")
    return exe


@pytest.fixture(scope="module")
def browser(chromium):
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("playwright is not installed: pip install playwright (its browsers are not needed, Debian's chromium is used)")
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"])
        try:
            yield b
        finally:
            b.close()


@pytest.fixture(scope="module")
def lab(tmp_path_factory, browser):
    server = Lab(tmp_path_factory.mktemp("lab"))

    def interrupted(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")  # so that pytest tears down, stopping the server

    previous = signal.signal(signal.SIGTERM, interrupted)
    try:
        server.start()
        yield server
    finally:
        server.stop()
        signal.signal(signal.SIGTERM, previous)


# --------------------------------------------------------------------------- the notebook page


def quick_copy(src: Path, dest: Path, **params) -> nbformat.NotebookNode:
    """`src` with a cell setting `params` after its parameters cell (as papermill injects them)."""
    nb = nbformat.read(src, as_version=4)
    at = next((i for i, c in enumerate(nb.cells) if "parameters" in c.metadata.get("tags", [])), -1)
    if params:
        cell = nbformat.v4.new_code_cell("\n".join(f"{k} = {v!r}" for k, v in params.items()))
        cell.metadata["tags"] = ["injected-parameters"]
        nb.cells.insert(at + 1, cell)
    nbformat.write(nb, dest)
    return nb


class NotebookPage:
    def __init__(self, lab: Lab, browser, name: str, shots: Path):
        self.lab, self.name, self.shots = lab, name, shots
        self.context = browser.new_context(viewport={"width": 1400, "height": 1000})
        self.page = self.context.new_page()
        self.js_errors: list[str] = []
        self.page.on("pageerror", lambda e: self.js_errors.append(str(e)))

    def close(self):
        try:
            self.page.screenshot(path=str(self.shots / f"{Path(self.name).stem}.png"), full_page=True)
        except Exception:  # noqa: BLE001 - a screenshot is a help, not a result
            pass
        self.context.close()
        # stop this notebook's kernel: the next notebook gets the machine's cores to itself
        try:
            for sess in self.lab.api("GET", "/api/sessions") or []:
                if sess.get("path") == self.name:
                    self.lab.api("DELETE", f"/api/sessions/{sess['id']}")
        except Exception:  # noqa: BLE001 - the server's shutdown stops it anyway
            pass

    def where(self) -> str:
        return f"(screenshot {self.shots}; server log {self.lab.log_path}; page errors {self.js_errors[:3]})"

    def open(self, n_cells: int):
        """Open the notebook and wait until all its cells are in the page and its kernel is idle
        (the status bar reads "| Idle"; before that Run All would run nothing)."""
        p = self.page
        # a workspace of its own, reset: only this notebook open (JupyterLab restores a workspace's tabs)
        workspace = re.sub(r"\W", "-", self.name)
        p.goto(f"{self.lab.url}/lab/workspaces/{workspace}/tree/{self.name}?reset&token={self.lab.token}", wait_until="domcontentloaded")
        p.wait_for_function(
            """n => {
                const nb = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook');
                const bar = document.querySelector('#jp-main-statusbar') || document.body;
                return nb && nb.querySelectorAll('.jp-Cell').length === n && /\\|\\s*Idle\\b/.test(bar.innerText);
            }""",
            arg=n_cells,
            timeout=180_000,
            polling=500,
        )

    def run_all(self):
        """Run > Run All Cells from the menu bar, then wait until every code cell has run."""
        p = self.page
        p.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
        p.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()
        p.wait_for_function(
            """() => {
                const nb = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook');
                const prompts = [...nb.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')].map(e => e.innerText.trim());
                const status = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) [data-status]');
                // done when nothing is queued or running and the kernel is idle: either every cell
                // ran, or Run All stopped at an error (the checks below then name the cell)
                return prompts.length > 0 && prompts.some(t => /^\\[\\d+\\]:$/.test(t)) && !prompts.some(t => t.includes('*'))
                       && status && status.getAttribute('data-status') === 'idle';
            }""",
            timeout=RUN_TIMEOUT_S * 1000,
            polling=1000,
        )

    def run_clean(self, nb) -> list[dict]:
        """Open the notebook ``nb`` (as written to the server), Run All, and check that no cell shows or
        saved an error (:func:`assert_ran_clean`); returns what each code cell shows (:meth:`code_cells`)."""
        self.open(len(nb.cells))
        self.run_all()
        cells = self.code_cells()
        assert_ran_clean(self, nb, cells)
        return cells

    def code_cells(self) -> list[dict]:
        """What the page shows for each code cell, in order: prompt, output text, its stderr/error
        texts, and the rendered images/svgs/canvases in its outputs."""
        return self.page.evaluate(
            """() => {
                const nb = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook');
                return [...nb.querySelectorAll('.jp-CodeCell')].map(cell => {
                    const outs = [...cell.querySelectorAll('.jp-OutputArea-output')];
                    const graphics = [...cell.querySelectorAll('.jp-OutputArea-output img, .jp-OutputArea-output svg, .jp-OutputArea-output canvas')]
                        .filter(e => !e.closest('.jupyter-widgets') || e.closest('.widget-output'))
                        .map(e => ({tag: e.tagName.toLowerCase(),
                                    w: e.tagName === 'IMG' ? (e.complete ? e.naturalWidth : 0) : e.getBoundingClientRect().width,
                                    h: e.tagName === 'IMG' ? (e.complete ? e.naturalHeight : 0) : e.getBoundingClientRect().height}));
                    return {
                        prompt: (cell.querySelector('.jp-InputArea-prompt') || {}).innerText || '',
                        text: outs.map(o => o.innerText).join('\\n'),
                        stderr: outs.filter(o => o.getAttribute('data-mime-type') === 'application/vnd.jupyter.stderr'
                                                 || o.querySelector('[data-mime-type="application/vnd.jupyter.stderr"]'))
                                    .map(o => o.innerText),
                        graphics,
                        widgets: cell.querySelectorAll('.jp-OutputArea-output .jupyter-widgets').length,
                    };
                });
            }"""
        )

    def save(self):
        """File > Save, so the outputs can also be read from the .ipynb as the kernel produced them."""
        p = self.page
        path = self.lab.root / self.name
        before = path.stat().st_mtime_ns
        p.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^File$")).click()
        p.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Save( Notebook)?$")).first.click()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and path.stat().st_mtime_ns == before:
            time.sleep(0.2)
        assert path.stat().st_mtime_ns != before, f"{self.name}: File > Save did not write the notebook {self.where()}"
        # the new mtime can show before the content is written (a CI run read an empty file once):
        # read again until the file parses (for up to 10 s more)
        deadline = time.monotonic() + 10
        while True:
            try:
                return nbformat.read(path, as_version=4)
            except nbformat.reader.NotJSONError:
                if time.monotonic() >= deadline:
                    raise
                time.sleep(0.2)


def assert_ran_clean(nbp: NotebookPage, nb, cells: list[dict]):
    """No error in any cell, in the page and in the saved notebook."""
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert len(cells) == len(code), f"{nbp.name}: the page shows {len(cells)} code cells, the notebook has {len(code)} {nbp.where()}"
    for i, (c, shown) in enumerate(zip(code, cells)):
        bad = [t for t in shown["stderr"] if TRACEBACK.search(t)]
        assert not bad, f"{nbp.name}: code cell {i} shows an error:\n{bad[0][:2000]}\n--- cell source:\n{c.source[:500]} {nbp.where()}"
    for i, shown in enumerate(cells):
        assert re.fullmatch(r"\[\d+\]:", shown["prompt"].strip()), f"{nbp.name}: code cell {i} did not run (prompt {shown['prompt']!r}) {nbp.where()}"
    saved = nbp.save()
    for i, c in enumerate(x for x in saved.cells if x.cell_type == "code"):
        errs = [o for o in c.outputs if o.output_type == "error"]
        assert not errs, f"{nbp.name}: code cell {i} saved an error output {errs[0].ename}: {errs[0].evalue}"
    return saved


def assert_plots_rendered(nbp: NotebookPage, nb, cells: list[dict]) -> int:
    """Every cell that draws shows at least one rendered image (img/svg/canvas of non-zero size)."""
    code = [c for c in nb.cells if c.cell_type == "code"]
    plot_cells = [i for i, c in enumerate(code) if PLOT_CALLS.search(c.source)]
    for i in plot_cells:
        drawn = [g for g in cells[i]["graphics"] if g["w"] > 0 and g["h"] > 0]
        assert drawn, (
            f"{nbp.name}: code cell {i} draws a plot but the page shows no rendered image in its output "
            f"(found {cells[i]['graphics']}; output text {cells[i]['text'][:300]!r}) {nbp.where()}"
        )
    return len(plot_cells)


# --------------------------------------------------------------------------- the tests


@pytest.fixture
def shots(tmp_path):
    return tmp_path


def test_basics_runs_in_the_browser(lab, browser, shots):
    """00_basics in quick mode: Run All, no error, every plot drawn, and the translation widget
    answers a change of machine and of page size with a new translation."""
    name = "00_basics.ipynb"
    nb = quick_copy(REPO / "notebooks" / name, lab.root / name, quick=True)
    nbp = NotebookPage(lab, browser, name, shots)
    try:
        cells = nbp.run_clean(nb)
        n_plots = assert_plots_rendered(nbp, nb, cells)
        assert n_plots >= 2, f"00_basics: expected its reach and walks plots, found {n_plots} plot cells"
        check_widget(nbp, cells)
    finally:
        nbp.close()


def _labelled(scope, kind: str, label: str):
    """The `kind` control (select, input) of the ipywidget whose description matches `label`."""
    rx = re.compile(label, re.I)
    return scope.locator(".jupyter-widgets.widget-inline-hbox", has=scope.page.locator(".widget-label", has_text=rx)).locator(kind)


def check_widget(nbp: NotebookPage, cells: list[dict]):
    p = nbp.page
    widget_cells = [i for i, c in enumerate(cells) if c["widgets"]]
    assert widget_cells, f"00_basics: no cell shows a widget (is the ipywidgets extension loaded?) {nbp.where()}"
    cell = p.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell").nth(widget_cells[0])
    machine = _labelled(cell, "select", r"^\s*machine")
    assert machine.count() == 1, f"00_basics: the widget has no 'machine' drop-down {nbp.where()}"

    def shown() -> str:
        out = cell.locator(".widget-output")
        return "\n".join(out.all_inner_texts()) if out.count() else cell.locator(".jp-OutputArea").inner_text()

    def change(control, value, what: str):
        before = shown()
        control.select_option(value)
        # the widget clears its output, then draws the new one; with an empty kernel cache the new
        # machine's kernel compiles in between (seconds), so wait for output that is new and not empty
        deadline = time.monotonic() + WIDGET_TIMEOUT_S
        while time.monotonic() < deadline and (shown() == before or not shown().strip()):
            time.sleep(0.25)
        after = shown()
        assert after != before, f"00_basics: the widget's output did not change after {what} {nbp.where()}"
        assert not TRACEBACK.search(after), f"00_basics: after {what} the widget shows an error:\n{after[:1500]}"
        return after

    options = [o for o in machine.locator("option").all_inner_texts()]
    current = machine.evaluate("e => e.options[e.selectedIndex].text")
    # a machine with another walker than the default: the translation must look different
    target = next((m for m in ("power8", "neoverse-n1", "opteron-k8") if m in options and m != current), None)
    target = target or next(m for m in options if m != current)
    after = change(machine, target, f"choosing machine {target!r}")
    # the translation is a table; a printed message instead would be the widget refusing the choice
    assert cell.locator(".widget-output table, .jp-OutputArea-output table").count() > 0, (
        f"00_basics: after choosing {target!r} the widget shows no translation table:\n{after[:1500]}"
    )

    page_sel = _labelled(cell, "select", r"^\s*page")
    assert page_sel.count() == 1, f"00_basics: the widget has no 'page size' drop-down {nbp.where()}"
    pages = page_sel.locator("option").all_inner_texts()
    cur = page_sel.evaluate("e => e.options[e.selectedIndex].text")
    others = [x for x in pages if x != cur]
    if others:
        change(page_sel, others[-1], f"choosing page size {others[-1]!r} on {target!r}")
        assert cell.locator(".widget-output table, .jp-OutputArea-output table").count() > 0, (
            f"00_basics: page size {others[-1]!r} on {target!r} shows no translation table {nbp.where()}"
        )

    # the address box: typed in hex where it is a text box (a number box takes decimal); every
    # page size keeps the low 12 bits, so the translation's offset ends in ...678
    addr = _labelled(cell, "input", r"^\s*address")
    assert addr.count() == 1, f"00_basics: the widget has no 'address' box {nbp.where()}"
    typed = "0x12345678" if addr.get_attribute("type") != "number" else str(0x12345678)
    before = shown()
    addr.fill(typed)
    addr.press("Enter")
    # the widget clears its output before it shows the new translation: wait for output that is new and not empty
    deadline = time.monotonic() + WIDGET_TIMEOUT_S
    while time.monotonic() < deadline and (shown() == before or not shown().strip()):
        time.sleep(0.25)
    after = shown()
    assert re.search(r"0x[0-9a-f]*678\b", after), (
        f"00_basics: after typing address {typed} the translation shows no offset ending in 678:\n{after[:1500]} {nbp.where()}"
    )


# --------------------------------------------------------------------------- an exercise

ASSIGNMENT = "00_basics"
CHECK_CALL = re.compile(r"""grader\.check\(\s*["'](\w+)["']\s*\)""")


@pytest.fixture(scope="module")
def built_assignment(tmp_path_factory) -> Path:
    """The student version of an assignment, built as an instructor would (`pagesim exercises
    build`, which runs `otter assign`); its solutions are not re-checked here (tests/ of the
    exercises do that)."""
    out = tmp_path_factory.mktemp("exercises")
    r = subprocess.run(
        [sys.executable, "-m", "pagesim", "exercises", "build", ASSIGNMENT[:2], "--no-check", "--out", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, f"pagesim exercises build failed:\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}"
    student = out / ASSIGNMENT / "student" / f"{ASSIGNMENT}.ipynb"
    assert student.is_file(), f"pagesim exercises build wrote no {student}"
    return student


def run_exercise(lab: Lab, browser, shots: Path, src: Path, folder: str, expect: str):
    """Run All on an exercise notebook in its own folder (otter.Notebook finds it by its name) and
    check what every `grader.check("qN")` cell shows a student: `expect` is "form OK" for answers of
    the right form (a solution, or a wrong answer: the checks see the form only, the values are
    graded after submission), "not OK" for a blank notebook. No cell ever says "passed"."""
    (lab.root / folder).mkdir()
    name = f"{folder}/{ASSIGNMENT}.ipynb"
    nb = quick_copy(src, lab.root / name)
    nbp = NotebookPage(lab, browser, name, shots)
    try:
        cells = nbp.run_clean(nb)
        assert_plots_rendered(nbp, nb, cells)
        code = [c for c in nb.cells if c.cell_type == "code"]
        checks = [(i, CHECK_CALL.search(c.source).group(1)) for i, c in enumerate(code) if CHECK_CALL.search(c.source)]
        assert len(checks) >= 4, f"{name}: expected a grader.check cell per autograded question, found {checks}"
        for i, q in checks:
            shown = cells[i]["text"]
            assert not re.search(r"\bpass(ed)?\b", shown, re.I), f"{name}: grader.check({q!r}) says passed: {shown[:800]!r}"
            if expect == "form OK":
                ok = re.search(rf"\b{q}\b: form OK\b[^\n]*graded after submission", shown)
            else:  # a blank answer: what is missing, no "form OK"
                ok = re.search(rf"\b{q}\b: ", shown) and not re.search(rf"\b{q}\b: form OK", shown)
            assert ok, f"{name}: grader.check({q!r}) should show {expect!r}, the page shows:\n{shown[:1500]!r} {nbp.where()}"
        # the closing grader.check_all() reports every question, and says the values are graded later
        all_cells = [i for i, c in enumerate(code) if "grader.check_all()" in c.source]
        for i in all_cells:
            text = cells[i]["text"]
            assert not re.search(r"\bpass(ed)?\b", text, re.I), f"{name}: grader.check_all() says passed: {text[:800]!r}"
            for _, q in checks:
                assert re.search(rf"\b{q}\b", text), f"{name}: grader.check_all() does not report {q} {nbp.where()}"
        return checks
    finally:
        nbp.close()


def test_exercise_student_version_runs_in_the_browser(lab, browser, shots, built_assignment):
    """The student version as handed out, answers blank: it runs without error and every
    grader.check cell says what is missing."""
    run_exercise(lab, browser, shots, built_assignment, "student", expect="not OK")


def test_exercise_solution_shows_form_ok_in_the_browser(lab, browser, shots):
    """The sample solution: every grader.check cell says the form is right and the values are
    graded after submission."""
    src = REPO / "exercises" / "samples" / ASSIGNMENT / "solution.ipynb"
    run_exercise(lab, browser, shots, src, "solution", expect="form OK")


def test_a_wrong_answer_is_not_called_passed_in_the_browser(lab, browser, shots):
    """The sample with a wrong answer (of the right form): the student sees "form OK; graded after
    submission" for it, never "passed"."""
    src = REPO / "exercises" / "samples" / ASSIGNMENT / "wrong.ipynb"
    run_exercise(lab, browser, shots, src, "wrong", expect="form OK")


def test_the_checks_catch_an_error_and_a_missing_plot(lab, browser, shots):
    """The checks above can fail: a notebook whose second cell raises stops Run All there, and the
    error is reported with its cell; a cell that calls plt.show() without drawing is reported too."""
    name = "broken.ipynb"
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [
        nbformat.v4.new_code_cell("import matplotlib.pyplot as plt\nplt.show()  # nothing drawn"),
        nbformat.v4.new_code_cell("raise ValueError('broken on purpose')"),
        nbformat.v4.new_code_cell("print('never reached')"),
    ]
    nbformat.write(nb, lab.root / name)
    nbp = NotebookPage(lab, browser, name, shots)
    try:
        nbp.open(len(nb.cells))
        nbp.run_all()
        cells = nbp.code_cells()
        with pytest.raises(AssertionError, match=r"code cell 1 shows an error:[\s\S]*ValueError[\s\S]*broken on purpose"):
            assert_ran_clean(nbp, nb, cells)
        with pytest.raises(AssertionError, match=r"code cell 0 draws a plot but the page shows no rendered image"):
            assert_plots_rendered(nbp, nb, cells)
        assert cells[2]["prompt"].strip() == "[ ]:", "Run All should have stopped at the error"
    finally:
        nbp.close()
