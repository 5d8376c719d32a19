"""`pagesim notebooks` never leaves a report beside outputs of another run: it clears the old
report and outputs when it starts, and writes the report's two files all or nothing. The
notebooks themselves are replaced by a stand-in ``execute`` (test_notebooks.py executes them)."""

import json

import pytest

import pagesim.notebooks as N

NBS = N.list_notebooks()


def _old_run(out):
    """What a finished earlier run leaves in ``out``."""
    (out / "notebooks").mkdir(parents=True)
    (out / "report.md").write_text("# old report: every finding holds\n")
    (out / "report.json").write_text("[]")
    for p in NBS:
        for suffix in (".ipynb", ".html", ".json"):
            (out / "notebooks" / f"{p.stem}{suffix}").write_text("old")
    (out / "mine.txt").write_text("not pagesim's")


def _record(path):
    """A stand-in run that finds what the committed quick-mode baseline says (so it is no regression)."""
    from pagesim.report import load_baseline

    base = load_baseline(quick=True).get(path.stem, {})
    findings = [{"id": i, "finding": i, "source": "", "document": "", "simulation": "", "verdict": v} for i, v in base.items()]
    return {"notebook": path.name, "quick": True, "status": "ok", "seconds": 0.1, "findings": findings}


def test_a_killed_run_leaves_no_old_report(tmp_path, monkeypatch):
    _old_run(tmp_path)
    done = []

    def execute(path, out_dir, quick):
        if done:
            raise KeyboardInterrupt  # the run is stopped while the second notebook executes
        (out_dir / f"{path.stem}.ipynb").write_text("new, partial")
        done.append(path)
        return _record(path)

    monkeypatch.setattr(N, "execute", execute)
    with pytest.raises(KeyboardInterrupt):
        N.main(["--out", str(tmp_path), "--quick"])
    assert not (tmp_path / "report.md").exists() and not (tmp_path / "report.json").exists()  # was: the old report
    left = sorted(p.name for p in (tmp_path / "notebooks").iterdir())
    assert left == [f"{NBS[0].stem}.ipynb"]  # the new partial output only, no stale ones beside it
    assert (tmp_path / "mine.txt").read_text() == "not pagesim's"  # files pagesim does not write are kept


def test_report_files_are_written_all_or_none(tmp_path, monkeypatch):
    _old_run(tmp_path)

    def execute(path, out_dir, quick):
        rec = _record(path)
        rec["seconds"] = object()  # the report cannot be written as JSON
        return rec

    monkeypatch.setattr(N, "execute", execute)
    monkeypatch.setattr(N, "report", lambda records, quick=False: "# new report\n")
    with pytest.raises(TypeError):
        N.main(["--out", str(tmp_path), "--quick", NBS[0].stem])
    # was: the new report.md beside the old report.json
    assert not (tmp_path / "report.md").exists() and not (tmp_path / "report.json").exists()
    assert not [p for p in tmp_path.rglob("*") if p.name.endswith(".tmp")]


def test_a_finished_run_writes_both_files(tmp_path, monkeypatch):
    _old_run(tmp_path)
    monkeypatch.setattr(N, "execute", lambda path, out_dir, quick: _record(path))
    assert N.main(["--out", str(tmp_path), "--quick", NBS[0].stem]) == 0
    assert [r["notebook"] for r in json.loads((tmp_path / "report.json").read_text())] == [NBS[0].name]
    assert NBS[0].name in (tmp_path / "report.md").read_text()
    assert not list((tmp_path / "notebooks").iterdir())  # the stand-in wrote no outputs; the old ones are gone


def test_a_cell_that_never_finishes_is_retried_once_then_named(tmp_path, monkeypatch):
    """A hang (the client never hears the kernel finish) must not block the main job for ever."""
    import nbformat

    src = nbformat.read(NBS[0], as_version=4)
    src.cells.insert(3, nbformat.v4.new_code_cell("import time; time.sleep(60)"))
    slow = tmp_path / "98_slow.ipynb"
    nbformat.write(src, slow)
    monkeypatch.setattr(N, "CELL_TIMEOUT", 2)
    rec = N.execute(slow, tmp_path / "out", quick=True)
    assert rec["status"] == "error" and rec["error"].startswith("a cell ran past 2 s")
    assert rec["retried"] == "attempt 2 timed out after 2 s"


def test_save_baseline_still_names_regressions(tmp_path, monkeypatch, capsys):
    """--save-baseline stores the run's verdicts, but a verdict worse than the baseline the run
    started from is still printed as a REGRESSION (was: compared with the baseline just saved)."""
    import pagesim.report as R

    base = tmp_path / "verdicts.json"
    base.write_text(json.dumps({"quick": {NBS[0].stem: {"x": "exact"}}}))
    monkeypatch.setattr(R, "baseline_path", lambda: base)

    def execute(path, out_dir, quick):
        rec = _record(path)
        rec["findings"] = [{"id": "x", "finding": "x", "source": "", "document": "1", "simulation": "2", "verdict": "direction"}]
        return rec

    monkeypatch.setattr(N, "execute", execute)
    assert N.main(["--out", str(tmp_path / "out"), "--quick", "--save-baseline", NBS[0].stem]) == 1
    assert f"REGRESSION {NBS[0].name}: x was exact, now direction" in capsys.readouterr().err
    assert json.loads(base.read_text())["quick"][NBS[0].stem] == {"x": "direction"}
