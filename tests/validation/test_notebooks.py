"""The notebooks: committed clean, parameterised, and every one executes in quick mode with every
finding holding (the same runner as the main job, `pagesim notebooks`)."""

import nbformat
import papermill as pm
import pytest

from pagesim.studies.findings import VERDICTS, regressions
from pagesim.validation.notebooks import REQUIRED_PARAMETERS, execute, list_notebooks, notebooks_dir, report
from pagesim.validation.report import load_baseline

NOTEBOOKS = list_notebooks()


def test_every_document_has_its_notebook():
    names = [p.stem for p in NOTEBOOKS]
    assert len(names) == 8 and names[0] == "00_basics"
    for prefix in ("01_", "02_", "03_", "04_", "05_"):
        assert any(n.startswith(prefix) for n in names)
    assert "06_your_program" in names and "07_your_machine" in names  # the analyst's own trace and machine


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_committed_clean_with_parameters(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    for c in nb.cells:
        if c.cell_type == "code":
            assert c.outputs == [] and c.execution_count is None, f"{path.name}: commit notebooks without outputs"
    tagged = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1, f"{path.name}: exactly one cell tagged 'parameters'"
    assert REQUIRED_PARAMETERS <= set(pm.inspect_notebook(str(path)))
    assert "Learning goals" in nb.cells[1].source  # after the first cell: what it does, how long, Run All (tests/teaching/test_teach.py)
    # 06 and 07 compare a recorded trace and a measured machine, not a document, with the simulation
    heading = {"06_your_program": "Recorded vs simulation", "07_your_machine": "Measured vs simulation"}.get(path.stem, "Document vs simulation")
    assert any(heading in c.source for c in nb.cells if c.cell_type == "markdown")
    assert "F.save(result_path)" in nb.cells[-2].source or "F.save(result_path)" in nb.cells[-1].source


def test_every_committed_notebook_cell_has_its_own_id():
    """nbformat 4.5 cells carry ids; reading one without fills it in with a warning (an error in
    later nbformat versions) on every run of the notebook."""
    import json

    root = notebooks_dir().parent
    paths = sorted(p for d in ("notebooks", "exercises") for p in (root / d).rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
    assert len(paths) > len(NOTEBOOKS)
    for p in paths:
        cells = json.loads(p.read_text())["cells"]
        ids = [c.get("id") for c in cells]
        assert None not in ids and len(set(ids)) == len(ids), f"{p.relative_to(root)}: every cell needs an id of its own"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_executes_in_quick_mode(path, tmp_path):
    rec = execute(path, tmp_path, quick=True)
    assert rec["status"] == "ok", rec.get("error")
    assert rec["findings"], "a notebook must record findings"
    reg = regressions([rec], load_baseline(quick=True))
    assert not reg, f"verdicts worse than notebooks/verdicts.json: {reg}"
    assert (tmp_path / f"{path.stem}.html").is_file()
    text = report([rec])
    assert all(f["id"] and f["verdict"] in VERDICTS for f in rec["findings"])
    assert "0 regressions" in text


def test_a_failing_notebook_is_named_with_its_cell(tmp_path):
    src = nbformat.read(NOTEBOOKS[0], as_version=4)
    src.cells.insert(3, nbformat.v4.new_code_cell("raise RuntimeError('broken on purpose')"))
    bad = tmp_path / "99_broken.ipynb"
    nbformat.write(src, bad)
    rec = execute(bad, tmp_path / "out", quick=True)
    assert rec["status"] == "error" and "cell 3" in rec["error"] and "broken on purpose" in rec["error"]
    assert "99_broken.ipynb" in report([rec])


def test_notebooks_folder_found():
    assert notebooks_dir().name == "notebooks" and all(p.parent == notebooks_dir() for p in NOTEBOOKS)


def test_verdicts_and_regressions():
    from pagesim.studies.findings import FindingFailed, Findings, classify
    from pagesim.validation.report import headline

    assert classify(15, 14, 10, 20) == ("within", 14 / 15)
    assert classify(15, 90, 10, 20) == ("direction", 6.0)
    assert classify(15, -3, 10, 20)[0] == "contradicted"
    F = Findings("x", "doc")
    assert F.exact("a", "count", "s", 256, 256).verdict == "exact"
    assert F.exact("b", "count", "s", 256, 255).verdict == "contradicted"
    f = F.measured("c", "speed-up", "s", 15, 90, rel=0.5, unit="%")
    assert (f.verdict, f.band, round(f.ratio, 1)) == ("direction", "document +-50%: 7.5..22.5%", 6.0)
    g = F.measured("g", "speed-up on two systems", "s", (11.3, 14.4), 24.0, rel=0.5, unit="%")
    assert (g.verdict, g.document, g.band, round(g.ratio, 3)) == ("direction", "11.3..14.4%", "document +-50%: 5.65..21.6%", round(24 / 12.85, 3))
    assert F.measured("d", "slow-down", "s", -1.5, -2.0, points=1, unit="%").verdict == "within"
    assert F.calibrated("e", "share", "s", 46.2, 46.2, parameter="WORK").verdict == "calibrated"
    with pytest.raises(FindingFailed, match="arithmetic of 'f' does not come out"):
        F.arithmetic("f", "16 x 4K = 64K", "s", 65536, 65535, holds=False)
    with pytest.raises(ValueError, match="recorded twice"):
        F.exact("a", "again", "s", 1, 1)
    rec = {"notebook": "x.ipynb", "status": "ok", "findings": [{"id": i.id, "verdict": i.verdict} for i in F.items]}
    assert regressions([rec], {"x": {"a": "exact", "c": "within"}}) == ["x.ipynb: c was within, now direction"]
    assert regressions([rec], {"x": {"b": "contradicted", "zz": "exact"}}) == ["x.ipynb: zz was exact, now missing"]
    assert regressions([rec], {"x": {"e": "exact"}}) == []  # relabelled calibrated: a change, not a regression
    h = headline([rec])
    assert "Every finding" not in h and "1 contradicted" in h and "Reproduced (exact, or within their band): 2 of the 5 that are checked" in h
    own = {"notebook": "06_your_program.ipynb", "status": "ok", "findings": [{"id": "k", "verdict": "exact"}]}
    h = headline([rec, own])
    assert "2 of the 5 that are checked" in h and "Apart: 1 finding measured on the machine" in h


def test_kernel_messages_are_awaited_in_slices():
    """The runner's channels wait at most POLL_SLICE at a time (a missed wakeup is found within it),
    up to the caller's timeout, then raise Empty as before; a message is returned as soon as a
    slice gets it."""
    import asyncio
    from queue import Empty

    from pagesim.validation.notebooks import sliced_get_msg

    now = [0.0]
    asked = []

    def fake(ready_after):
        async def get_msg(self, timeout=None):
            asked.append(timeout)
            if now[0] + timeout >= ready_after:
                now[0] = max(now[0], ready_after)
                return "reply"
            now[0] += timeout
            raise Empty

        return get_msg

    get = sliced_get_msg(fake(3.5), slice_s=1.0, clock=lambda: now[0])
    assert asyncio.run(get(None, timeout=600)) == "reply"
    assert asked == [1.0, 1.0, 1.0, 1.0] and now[0] == 3.5
    now[0], asked[:] = 0.0, []
    with pytest.raises(Empty):
        asyncio.run(sliced_get_msg(fake(10.0), slice_s=1.0, clock=lambda: now[0])(None, timeout=2.5))
    assert asked == [1.0, 1.0, 0.5] and now[0] == 2.5
    now[0], asked[:] = 0.0, []
    assert asyncio.run(sliced_get_msg(fake(7.0), slice_s=1.0, clock=lambda: now[0])(None, timeout=None)) == "reply"
    assert asked == [1.0] * 7
