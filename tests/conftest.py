import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

from hypothesis import settings  # noqa: E402

settings.register_profile("ci", max_examples=150, deadline=None, derandomize=True)
settings.register_profile("dev", max_examples=60, deadline=None)
# a one-off deep run: HYPOTHESIS_PROFILE=thorough pytest tests/kernels/test_differential.py tests/engine/test_processes.py ...
settings.register_profile("thorough", max_examples=2000, deadline=None, derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


# A test that runs for long without a word is most often numba compiling kernels on a first run
# (a cold cache: the tests compile kernels `pagesim warm` does not, random machines' shapes among
# them). Say so once, after NOTICE_AFTER seconds, instead of leaving the terminal silent.
NOTICE_AFTER = 20.0
_notice = {"timer": None, "said": set()}


def _say_still_running(config, nodeid):
    tr = config.pluginmanager.get_plugin("terminalreporter")
    capman = config.pluginmanager.get_plugin("capturemanager")
    module = nodeid.split("::")[0]
    if tr is None or module in _notice["said"]:
        return
    _notice["said"].add(module)
    line = f"[{module}: a test still running after {NOTICE_AFTER:.0f} s; on a first run, numba compiling kernels takes most of it (cached for later runs)]"
    if capman is None:
        tr.write_line(line)
        return
    with capman.global_and_fixture_disabled():  # the test's output is captured; this line is not
        tr.write_line(line)


def pytest_runtest_call(item):
    import threading

    timer = threading.Timer(NOTICE_AFTER, _say_still_running, (item.config, item.nodeid))
    timer.daemon = True
    _notice["timer"] = timer
    timer.start()


def pytest_runtest_teardown(item):
    timer = _notice["timer"]
    if timer is not None:
        timer.cancel()
        _notice["timer"] = None


@pytest.fixture(scope="session")
def quick_findings(tmp_path_factory):
    """The findings of a notebook run in quick mode, by id: ``quick_findings("05_shared_page_tables")``.
    Each notebook runs once per test session, whichever test files ask for it."""
    from pagesim.validation.notebooks import execute, notebooks_dir

    out, done = tmp_path_factory.mktemp("quick_findings"), {}

    def get(stem):
        if stem not in done:
            rec = execute(notebooks_dir() / f"{stem}.ipynb", out / stem, quick=True)
            assert rec["status"] == "ok", rec.get("error")
            done[stem] = {f["id"]: f for f in rec["findings"]}
        return done[stem]

    return get
