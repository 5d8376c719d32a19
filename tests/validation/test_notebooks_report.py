"""`pagesim notebooks` never loses what a user produced: a run of some notebooks keeps the others'
outputs and rebuilds the report from every notebook's latest record in the folder, saying what it
holds; each notebook's outputs are written whole once it has run, and a notebook that fails or is
interrupted leaves the earlier outputs as they were beside a marked ``NN_name.failed.ipynb``. Most
tests replace the notebooks by a stand-in ``execute`` or by tiny notebooks (test_notebooks.py
executes the real ones)."""

import builtins
import errno
import io
import json
import os

import nbformat
import pytest

import pagesim.validation.notebooks as N

NBS = N.list_notebooks()


def _record(path, started="2030-01-01T00:00:00+00:00", code=None):
    """A stand-in run that finds what the committed quick-mode baseline says (so it is no regression)."""
    from pagesim.validation.report import load_baseline

    base = load_baseline(quick=True).get(path.stem, {})
    findings = [{"id": i, "finding": i, "source": "", "document": "", "simulation": "", "verdict": v} for i, v in base.items()]
    code = code or {"version": "0.1.0", "commit": "abc", "sources": "s1"}
    return {"notebook": path.name, "quick": True, "started": started, "pagesim": code, "status": "ok", "seconds": 0.1, "findings": findings}


def _stand_in(started="2030-01-01T00:00:00+00:00", code=None, stop_at=None):
    """An ``execute`` that writes what the runner writes after a run (the notebook and its record),
    or raises KeyboardInterrupt at the notebook ``stop_at``."""

    def execute(path, out_dir, quick):
        if path.stem == stop_at:
            raise KeyboardInterrupt
        out_dir.mkdir(parents=True, exist_ok=True)
        rec = _record(path, started, code)
        (out_dir / f"{path.stem}.ipynb").write_text(f"run at {started}")
        (out_dir / f"{path.stem}.json").write_text(json.dumps(rec))
        return rec

    return execute


def test_a_run_of_one_notebook_keeps_the_others(tmp_path, monkeypatch):
    """`pagesim notebooks 02` (as the README suggests) after a full run: the other notebooks' outputs
    stay, and the report holds every notebook, 02 with its new run (was: all deleted)."""
    out = tmp_path / "build"
    monkeypatch.setattr(N, "execute", _stand_in("2030-01-01T00:00:00+00:00"))
    assert N.main(["--out", str(out), "--quick"]) == 0
    (out / "mine.txt").write_text("not pagesim's")
    monkeypatch.setattr(N, "execute", _stand_in("2030-01-02T00:00:00+00:00"))
    assert N.main(["--out", str(out), "--quick", "02"]) == 0
    for p in NBS:
        assert (out / "notebooks" / f"{p.stem}.ipynb").read_text() == f"run at 2030-01-0{2 if p.stem.startswith('02') else 1}T00:00:00+00:00"
    held = {r["notebook"]: r["started"] for r in json.loads((out / "report.json").read_text())}
    assert sorted(held) == [p.name for p in NBS] and held[NBS[2].name].startswith("2030-01-02")
    text = (out / "report.md").read_text()
    assert "A complete validation: all 8 notebooks ran without error in quick mode on the same code" in text
    assert "2030-01-01T00:00:00+00:00 to 2030-01-02T00:00:00+00:00" in text
    assert (out / "mine.txt").read_text() == "not pagesim's"


def test_the_report_says_when_it_is_not_a_complete_validation(tmp_path, monkeypatch):
    """Notebooks not run, or run on other code or in another mode than the newest run: the report
    says so, names them, and never says every finding is reproduced."""
    out = tmp_path / "build"
    old = {"version": "0.1.0", "commit": "abc", "sources": "s1"}
    monkeypatch.setattr(N, "execute", _stand_in("2030-01-01T00:00:00+00:00", old))
    assert N.main(["--out", str(out), "--quick", "00", "01"]) == 0
    text = (out / "report.md").read_text()
    assert "Not a complete validation: results of 2 of the 8 notebooks; not run: 02_opteron_cscs, 03_solaris_mpss" in text
    new = {"version": "0.1.0", "commit": "def+changes", "sources": "s2"}
    monkeypatch.setattr(N, "execute", _stand_in("2030-01-02T00:00:00+00:00", new))
    assert N.main(["--out", str(out), "--quick", "02", "03", "04", "05", "06", "07"]) == 0
    text = (out / "report.md").read_text()
    assert "Not a complete validation: results of 8 of the 8 notebooks; run on other code or in another mode than the newest run" in text
    assert "00_basics (quick mode, pagesim 0.1.0, commit abc, sources s1, at 2030-01-01T00:00:00+00:00)" in text
    assert "Every finding is reproduced" not in text
    monkeypatch.setattr(N, "execute", _stand_in("2030-01-03T00:00:00+00:00", new))
    assert N.main(["--out", str(out), "--quick", "00", "01"]) == 0
    assert "**A complete validation" in (out / "report.md").read_text()


def test_an_interrupted_run_keeps_the_earlier_outputs(tmp_path, monkeypatch):
    """Ctrl-C during the second notebook: the first notebook's new outputs, every other notebook's
    earlier outputs, and a report of what the folder holds (was: the earlier outputs deleted)."""
    out = tmp_path / "build"
    monkeypatch.setattr(N, "execute", _stand_in("2030-01-01T00:00:00+00:00"))
    assert N.main(["--out", str(out), "--quick"]) == 0
    monkeypatch.setattr(N, "execute", _stand_in("2030-01-02T00:00:00+00:00", stop_at=NBS[1].stem))
    with pytest.raises(KeyboardInterrupt):
        N.main(["--out", str(out), "--quick"])
    assert (out / "notebooks" / f"{NBS[0].stem}.ipynb").read_text() == "run at 2030-01-02T00:00:00+00:00"
    for p in NBS[1:]:
        assert (out / "notebooks" / f"{p.stem}.ipynb").read_text() == "run at 2030-01-01T00:00:00+00:00"
    held = {r["notebook"]: r["started"] for r in json.loads((out / "report.json").read_text())}
    assert len(held) == 8 and held[NBS[0].name].startswith("2030-01-02") and held[NBS[1].name].startswith("2030-01-01")


class _FullDisk:
    """A file of a full disk: a write stores the first half of the data, then fails."""

    def __init__(self, f):
        self._f = f

    def write(self, data):
        self._f.write(data[: len(data) // 2])
        self._f.flush()
        raise OSError(errno.ENOSPC, "No space left on device")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._f.close()

    def __getattr__(self, name):
        return getattr(self._f, name)


def _fill_disk(monkeypatch, folder, named=""):
    """Every file opened for writing under ``folder`` (whose name contains ``named``) from now on is
    on a full disk."""
    real = builtins.open

    def fake_open(file, mode="r", *a, **kw):
        f = real(file, mode, *a, **kw)
        full = any(m in mode for m in "wax") and str(file).startswith(str(folder)) and named in str(file).rsplit("/", 1)[-1]
        return _FullDisk(f) if full else f

    monkeypatch.setattr(builtins, "open", fake_open)
    monkeypatch.setattr(io, "open", fake_open)


def test_a_full_disk_leaves_the_report_as_it_was_and_names_it(tmp_path, monkeypatch):
    out = tmp_path / "build"
    monkeypatch.setattr(N, "execute", _stand_in())
    assert N.main(["--out", str(out), "--quick"]) == 0
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    _fill_disk(monkeypatch, out, named="report")
    with pytest.raises(OSError) as e:
        N.main(["--out", str(out), "--quick", "02"])
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file() and not p.stem.startswith("02")} == {
        p: b for p, b in before.items() if not p.stem.startswith("02")
    }  # report.md and report.json whole, as before, and no temporary files
    assert e.value.errno == errno.ENOSPC and f"cannot write the report to {out / 'report.'}" in str(e.value), e.value


def _tiny(folder, name="00_tiny", cells=("x = 1", "y = x + 1")):
    """A notebook of a few quick cells that writes an empty findings file, like the real ones."""
    p = nbformat.v4.new_code_cell('quick = False\nresult_path = ""')
    p.metadata["tags"] = ["parameters"]
    save = 'import json\nif result_path:\n    json.dump({"document": "tiny", "findings": []}, open(result_path, "w"))'
    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_markdown_cell("# tiny"), p, *[nbformat.v4.new_code_cell(c) for c in cells], nbformat.v4.new_code_cell(save)],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    )
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.ipynb"
    nbformat.write(nb, path)
    return path


def _earlier(out_dir, stem):
    """Outputs of an earlier run of ``stem`` in ``out_dir``; returns their contents."""
    out_dir.mkdir(parents=True, exist_ok=True)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("an earlier run")])
    nbformat.write(nb, out_dir / f"{stem}.ipynb")
    (out_dir / f"{stem}.json").write_text("{}")
    return {p.name: p.read_bytes() for p in out_dir.iterdir()}


def test_a_full_disk_never_leaves_a_half_written_notebook(tmp_path, monkeypatch):
    """The executed notebook cannot be written: the earlier one stays whole (was: papermill wrote
    it in place, and a full disk left it cut off, invalid JSON), no temporary file is left, and
    the error names the file."""
    src = _tiny(tmp_path / "src")
    out = tmp_path / "out"
    before = _earlier(out, src.stem)
    _fill_disk(monkeypatch, out)
    with pytest.raises(OSError) as e:
        N.execute(src, out, quick=True)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    nbformat.validate(nbformat.read(out / "00_tiny.ipynb", as_version=4))
    assert e.value.errno == errno.ENOSPC and f"cannot write the outputs of 00_tiny to {out}/00_tiny." in str(e.value), e.value


def test_an_interrupted_notebook_is_kept_apart_and_marked(tmp_path, monkeypatch):
    """Ctrl-C in the middle of a cell: the earlier outputs stay; 00_tiny.failed.ipynb holds the
    run so far, with a banner saying where it stopped, that cell 'failed' and the later cells
    'pending' (was: written over the earlier notebook, every cell 'completed')."""
    import nbclient

    src = _tiny(tmp_path / "src", cells=("x = 1", "y = 2  # STOP", "z = 3"))
    out = tmp_path / "out"
    before = _earlier(out, src.stem)
    run_cell = nbclient.NotebookClient.execute_cell

    def interrupted(self, cell, cell_index, *a, **kw):
        if "STOP" in cell.source:
            raise KeyboardInterrupt
        return run_cell(self, cell, cell_index, *a, **kw)

    monkeypatch.setattr(nbclient.NotebookClient, "execute_cell", interrupted)
    with pytest.raises(KeyboardInterrupt):
        N.execute(src, out, quick=True)
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.name in before} == before
    assert sorted(p.name for p in out.iterdir() if p.name not in before)[:3] == ["00_tiny.failed.html", "00_tiny.failed.ipynb", "00_tiny.failed.json"]
    nb = nbformat.read(out / "00_tiny.failed.ipynb", as_version=4)
    assert "This run stopped in cell 3: interrupted (Ctrl-C)" in nb.cells[0].source
    status = [c.metadata.papermill["status"] for c in nb.cells[1:]]
    # the markdown, the parameters, the injected parameters, x = 1, the stopped cell, z = 3, the save
    assert status == ["completed"] * 4 + ["failed", "pending", "pending"]
    rec = json.loads((out / "00_tiny.failed.json").read_text())
    assert rec["status"] == "interrupted" and rec["error"] == "interrupted (Ctrl-C) in cell 3" and rec["output"] == "00_tiny.failed.ipynb"


def test_ctrl_c_is_one_line(tmp_path):
    """Ctrl-C on `pagesim notebooks` prints one line (was: the kernel's zmq traceback first, 20
    lines, and the kernel's warnings on every run)."""
    import signal
    import subprocess
    import sys
    import time

    mark = tmp_path / "started"
    _tiny(tmp_path / "nbs", cells=(f"open({str(mark)!r}, 'w').close()\nimport time\ntime.sleep(120)",))
    code = (
        "import sys; from pathlib import Path; import pagesim.validation.notebooks as N; from pagesim.cli import main; "
        f"N.notebooks_dir = lambda: Path({str(tmp_path / 'nbs')!r}); sys.exit(main(['notebooks', '--out', {str(tmp_path / 'out')!r}]))"
    )
    p = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL)
    )
    deadline = time.monotonic() + 120
    while not mark.exists() and time.monotonic() < deadline and p.poll() is None:
        time.sleep(0.2)
    assert mark.exists(), p.communicate()
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=120)
    assert p.returncode == 130 and err == "pagesim: interrupted\n", err
    assert (tmp_path / "out" / "notebooks" / "00_tiny.failed.ipynb").is_file()


def test_saved_progress_bars_show_their_final_state(tmp_path):
    """A progress bar in an executed notebook reads 100% 18/18 once done (was: the widget's text
    when first shown, 0/18)."""
    src = _tiny(tmp_path / "src", cells=("from pagesim.core.progress import steps\nfor i in steps(range(18), 'work'):\n    pass",))
    rec = N.execute(src, tmp_path / "out", quick=True)
    assert rec["status"] == "ok", rec.get("error")
    nb = nbformat.read(tmp_path / "out" / "00_tiny.ipynb", as_version=4)
    shown = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if "work" in str(o)]
    assert len(shown) == 1 and shown[0]["data"]["text/plain"].startswith("work: 100%|██████████| 18/18 ["), shown


def test_a_finished_run_writes_both_files(tmp_path, monkeypatch):
    monkeypatch.setattr(N, "execute", _stand_in())
    assert N.main(["--out", str(tmp_path), "--quick", NBS[0].stem]) == 0
    assert [r["notebook"] for r in json.loads((tmp_path / "report.json").read_text())] == [NBS[0].name]
    assert NBS[0].name in (tmp_path / "report.md").read_text()
    assert not [p for p in tmp_path.rglob("*") if p.name.endswith(".tmp")]


def test_a_cell_that_never_finishes_is_retried_once_then_named(tmp_path, monkeypatch):
    """A hang (the client never hears the kernel finish) must not block the main job for ever."""
    src = nbformat.read(NBS[0], as_version=4)
    src.cells.insert(3, nbformat.v4.new_code_cell("import time; time.sleep(60)"))
    slow = tmp_path / "98_slow.ipynb"
    nbformat.write(src, slow)
    monkeypatch.setattr(N, "CELL_TIMEOUT", 2)
    rec = N.execute(slow, tmp_path / "out", quick=True)
    assert rec["status"] == "error" and rec["error"].startswith("a cell ran past 2 s (cell 3): ")
    assert rec["retried"] == "attempt 2 timed out after 2 s"
    nb = nbformat.read(tmp_path / "out" / "98_slow.failed.ipynb", as_version=4)
    assert "This run stopped in cell 3: it ran past 2 s" in nb.cells[0].source
    assert {c.metadata.papermill["status"] for c in nb.cells[6:]} == {"pending"}


def test_save_baseline_still_names_regressions(tmp_path, monkeypatch, capsys):
    """--save-baseline stores the run's verdicts, but a verdict worse than the baseline the run
    started from is still printed as a REGRESSION (was: compared with the baseline just saved)."""
    import pagesim.validation.report as R

    base = tmp_path / "verdicts.json"
    base.write_text(json.dumps({"quick": {NBS[0].stem: {"x": "exact"}}}))
    monkeypatch.setattr(R, "baseline_path", lambda: base)

    def execute(path, out_dir, quick):
        rec = _record(path)
        rec["findings"] = [{"id": "x", "finding": "x", "source": "", "document": "1", "simulation": "2", "verdict": "direction"}]
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / f"{path.stem}.json").write_text(json.dumps(rec))
        return rec

    monkeypatch.setattr(N, "execute", execute)
    assert N.main(["--out", str(tmp_path / "out"), "--quick", "--save-baseline", NBS[0].stem]) == 1
    assert f"REGRESSION {NBS[0].name}: x was exact, now direction" in capsys.readouterr().err
    assert json.loads(base.read_text())["quick"][NBS[0].stem] == {"x": "direction"}


@pytest.mark.parametrize(("names", "said"), [([""], "'' is empty"), (["0"], "'0' matches 8 notebooks"), (["00", "nope"], "'nope' matches no notebook")])
def test_every_name_must_match_exactly_one_notebook(tmp_path, monkeypatch, capsys, names, said):
    """An empty name, one that matches no notebook or several: one line naming it and listing the
    notebooks, exit 2, nothing run (was: '' and '0' ran all eight, 'nope' was ignored)."""

    def execute(path, out_dir, quick):
        raise AssertionError(f"{path.name} ran")

    monkeypatch.setattr(N, "execute", execute)
    assert N.main(["--out", str(tmp_path / "out"), "--quick", *names]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("pagesim notebooks: error: notebook name ") and said in err, err
    assert "a name is the start of one notebook's file name" in err and ", ".join(p.stem for p in NBS) in err
    assert not (tmp_path / "out").exists()


def test_names_are_the_start_of_a_file_name(tmp_path, monkeypatch):
    ran = []
    monkeypatch.setattr(N, "execute", lambda path, out_dir, quick: ran.append(path.name) or _stand_in()(path, out_dir, quick))
    assert N.main(["--out", str(tmp_path), "--quick", NBS[2].name, "00", NBS[0].stem]) == 0
    assert ran == [NBS[0].name, NBS[2].name]


def _no_run(monkeypatch):
    def execute(path, out_dir, quick):
        raise AssertionError(f"{path.name} ran")

    monkeypatch.setattr(N, "execute", execute)


@pytest.mark.parametrize("how", ["the repository", "a symlink to it", "empty", "dot", "a symlinked notebooks/"])
def test_an_output_folder_over_the_source_notebooks_is_refused(tmp_path, monkeypatch, capsys, how):
    """--out whose notebooks/ subfolder is the source notebooks' folder (`--out .` or `--out ""` in
    the repository, or by a symlink): one line naming --out, exit 2, the source notebook as it was,
    nothing written (was: the executed notebook written over the source one, the report beside)."""
    repo = tmp_path / "repo"
    src = _tiny(repo / "notebooks")
    before = {p: p.read_bytes() for p in repo.rglob("*") if p.is_file()}
    monkeypatch.setattr(N, "notebooks_dir", lambda: repo / "notebooks")
    monkeypatch.setattr(N, "execute", _stand_in())  # it writes OUT/notebooks/00_tiny.ipynb
    (tmp_path / "link").symlink_to(repo)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notebooks").symlink_to(repo / "notebooks")
    monkeypatch.chdir(repo)
    outs = {"the repository": str(repo), "a symlink to it": str(tmp_path / "link"), "empty": "", "dot": "."}
    out = outs.get(how, str(tmp_path / "other"))
    assert N.main(["--out", out, "--quick", src.stem]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and captured.err.startswith(f"pagesim notebooks: error: --out {out!r}"), captured
    assert ("is empty" if how == "empty" else "is the folder of the source notebooks") in captured.err
    assert {p: p.read_bytes() for p in repo.rglob("*") if p.is_file()} == before


@pytest.mark.parametrize("how", ["a file", "below a file", "in /proc"])
def test_an_unusable_output_folder_is_named_before_anything_runs(tmp_path, monkeypatch, capsys, how):
    """--out a file, below a file, or where no folder can be made: one line naming --out, the path
    and the reason, before any notebook is announced, exit 2 (was: 'running ...' and then a raw
    '[Errno 20] Not a directory')."""
    (tmp_path / "afile").write_text("mine")
    out, why = {
        "a file": (str(tmp_path / "afile"), f"{tmp_path / 'afile'} is a file, not a folder"),
        "below a file": (str(tmp_path / "afile" / "sub"), f"{tmp_path / 'afile'} is a file, not a folder"),
        "in /proc": ("/proc/pagesim-nope", "cannot create or write /proc/pagesim-nope"),
    }[how]
    _no_run(monkeypatch)
    assert N.main(["--out", out, "--quick", NBS[0].stem]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and captured.err.startswith(f"pagesim notebooks: error: --out {out!r}: "), captured
    assert why in captured.err, captured.err
    assert (tmp_path / "afile").read_text() == "mine" and sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


def test_the_output_folder_is_checked_by_writing(tmp_path, monkeypatch, capsys):
    """A folder that cannot be written (a probe file fails): refused before anything runs, and the
    folders made for it removed."""
    real = builtins.open

    def read_only(file, mode="r", *a, **kw):
        if "w" in mode and str(file).startswith(str(tmp_path)):
            raise PermissionError(errno.EACCES, "Permission denied", str(file))
        return real(file, mode, *a, **kw)

    monkeypatch.setattr(builtins, "open", read_only)
    _no_run(monkeypatch)
    out = tmp_path / "new" / "out"
    assert N.main(["--out", str(out), "--quick", NBS[0].stem]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"pagesim notebooks: error: --out {str(out)!r}: cannot create or write {out}/.pagesim-probe.") and "Permission denied" in err, err
    assert list(tmp_path.iterdir()) == []


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_a_signal_stops_the_run_with_its_clean_up(tmp_path, sig):
    """SIGTERM (timeout, a CI cancel) stops `pagesim notebooks` as Ctrl-C does: one line at once,
    the kernel killed, no temporary file left, the notebook recorded as failed with its banner, the
    report rebuilt, exit 143 (was: killed at once, leaving the kernel running, its hidden log, no
    record). For either signal the kernel is killed rather than waited for: here it ignores both
    signals, as a cell in compiled code does, and the kernel manager would wait an hour for it to
    shut down (was: up to shutdown_wait_time, 5 s by default, before `pagesim: interrupted`)."""
    import signal
    import subprocess
    import sys
    import time

    mark = tmp_path / "started"
    ignore = "import os, signal, time\nfor s in (signal.SIGINT, signal.SIGTERM):\n    signal.signal(s, signal.SIG_IGN)\n"
    cell = ignore + f"open({str(mark)!r}, 'w').write(str(os.getpid()))\ntime.sleep(600)"
    _tiny(tmp_path / "nbs", cells=(cell,))
    code = (
        "import sys; from pathlib import Path; import pagesim.validation.notebooks as N; from pagesim.cli import main; "
        "from jupyter_client.manager import KernelManager; KernelManager.shutdown_wait_time.default_value = 3600.0; "
        f"N.notebooks_dir = lambda: Path({str(tmp_path / 'nbs')!r}); sys.exit(main(['notebooks', '--out', {str(tmp_path / 'out')!r}]))"
    )
    p = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL)
    )
    kernel, left = None, False
    try:
        deadline = time.monotonic() + 120
        while not (mark.exists() and mark.read_text()) and time.monotonic() < deadline and p.poll() is None:
            time.sleep(0.2)
        assert mark.exists(), p.communicate()
        kernel = int(mark.read_text())
        p.send_signal(getattr(signal, sig))
        _, err = p.communicate(timeout=120)  # a hang here is the kernel waited for
    finally:
        p.kill()
        left = kernel is not None and _running(kernel)
        if left:
            os.kill(kernel, signal.SIGKILL)
    assert not left, "the kernel was left running"
    assert p.returncode == 128 + getattr(signal, sig) and err == "pagesim: interrupted\n", (p.returncode, err)
    nb_out = tmp_path / "out" / "notebooks"
    assert sorted(q.name for q in nb_out.iterdir())[:3] == ["00_tiny.failed.html", "00_tiny.failed.ipynb", "00_tiny.failed.json"]
    assert not [q.name for q in nb_out.iterdir() if q.name.startswith(".")]
    why = "interrupted (Ctrl-C)" if sig == "SIGINT" else "terminated (SIGTERM)"
    assert f"This run stopped in cell 2: {why}" in nbformat.read(nb_out / "00_tiny.failed.ipynb", as_version=4).cells[0].source
    rec = json.loads((nb_out / "00_tiny.failed.json").read_text())
    assert rec["status"] == "interrupted" and rec["error"] == f"{why} in cell 2"
    assert [r["error"] for r in json.loads((tmp_path / "out" / "report.json").read_text())] == [rec["error"]]


def test_the_line_is_printed_when_the_signal_arrives(capsys):
    """Within a run, SIGTERM raises KeyboardInterrupt where the program is, the one line already
    printed (the clean-up after it runs silently); the old handlers are back after the run."""
    import signal

    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    with pytest.raises(KeyboardInterrupt) as e:
        with N._signals_stop_the_run():
            os.kill(os.getpid(), signal.SIGTERM)
            for _ in range(10**7):  # the handler runs at the next bytecode boundary
                pass
    assert capsys.readouterr().err == "pagesim: interrupted\n" and e.value.signum == signal.SIGTERM and e.value.said
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == before


@pytest.mark.parametrize("how", ["python -m pagesim", "the console script"])
def test_ctrl_c_while_the_command_starts_is_one_line(tmp_path, how):
    """Ctrl-C while `pagesim` is still importing its dependencies (here: a KeyboardInterrupt raised
    when numba is imported) is the one line and exit 130 of any Ctrl-C (was: a 45-line traceback)."""
    import subprocess
    import sys
    from pathlib import Path

    import tomllib

    root = Path(N.__file__).resolve().parents[2]
    (tmp_path / "sitecustomize.py").write_text(
        "import sys\n"
        "class CtrlC:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'numba':\n"
        "            raise KeyboardInterrupt\n"
        "sys.meta_path.insert(0, CtrlC())\n"
    )
    entry = tomllib.loads((root / "pyproject.toml").read_text())["project"]["scripts"]["pagesim"]
    module, func = entry.split(":")
    script = tmp_path / "bin" / "pagesim"  # what pip writes for the entry point
    script.parent.mkdir()
    script.write_text(f"import sys\nfrom {module} import {func}\nif __name__ == '__main__':\n    sys.exit({func}())\n")
    cmd = [sys.executable, "-m", "pagesim"] if how == "python -m pagesim" else [sys.executable, str(script)]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(root)]))
    p = subprocess.run([*cmd, "machines"], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert p.returncode == 130 and p.stderr == "pagesim: interrupted\n" and p.stdout == "", (p.returncode, p.stderr[-2000:])
    # the same interrupt in a program importing pagesim is that program's KeyboardInterrupt
    p = subprocess.run([sys.executable, "-c", "import pagesim"], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert p.returncode == -2 and p.stderr.rstrip().endswith("KeyboardInterrupt"), (p.returncode, p.stderr[-2000:])  # died of SIGINT


def test_the_baseline_keeps_a_robust_within(tmp_path, monkeypatch, capsys):
    """A within that survived its sweeps is stored as 'within (robust)', so the next identical run
    shows no change, and a run where it is only 'within' is a regression (was: stored as 'within',
    so every run listed the robust finding as changed and a loss of robustness went unseen)."""
    import pagesim.validation.report as R

    base = tmp_path / "verdicts.json"
    base.write_text(json.dumps({"quick": {}}))
    monkeypatch.setattr(R, "baseline_path", lambda: base)
    robust = {"verdict": "within", "robust": True}

    def execute(path, out_dir, quick):
        rec = _record(path)
        rec["findings"] = [{"id": "x", "finding": "x", "source": "", "document": "1", "simulation": "1", **robust}]
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / f"{path.stem}.json").write_text(json.dumps(rec))
        return rec

    monkeypatch.setattr(N, "execute", execute)
    N.main(["--out", str(tmp_path / "out"), "--quick", "--save-baseline", NBS[0].stem])
    assert json.loads(base.read_text())["quick"][NBS[0].stem] == {"x": "within (robust)"}
    capsys.readouterr()
    assert N.main(["--out", str(tmp_path / "out2"), "--quick", NBS[0].stem]) == 0
    assert "0 regressions, 0 changes" in (tmp_path / "out2" / "report.md").read_text()
    robust = {"verdict": "within", "robust": False}
    assert N.main(["--out", str(tmp_path / "out3"), "--quick", NBS[0].stem]) == 1
    assert f"REGRESSION {NBS[0].name}: x was within (robust), now within" in capsys.readouterr().err


def _run_with(tmp_path, monkeypatch, baseline: dict, findings: list, notebook: str, *, save=False):
    """`pagesim notebooks --quick` on one notebook whose run records ``findings``, against ``baseline``."""
    import pagesim.validation.report as R

    base = tmp_path / "verdicts.json"
    base.write_text(json.dumps({"quick": baseline}))
    monkeypatch.setattr(R, "baseline_path", lambda: base)
    assert notebook in {p.stem for p in NBS}

    def execute(path, out_dir, quick):
        rec = _record(path)
        rec["findings"] = [{"finding": f["id"], "source": "", "document": "1", "simulation": "2", **f} for f in findings]
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / f"{path.stem}.json").write_text(json.dumps(rec))
        return rec

    monkeypatch.setattr(N, "execute", execute)
    args = ["--out", str(tmp_path / "out"), "--quick", notebook] + (["--save-baseline"] if save else [])
    return N.main(args), json.loads(base.read_text())["quick"]


def test_a_check_measured_on_the_build_machine_is_never_a_gate(tmp_path, monkeypatch, capsys):
    """A build node without huge pages turns a host check: the run (Binder's postBuild runs it)
    still exits 0, while a document finding that got worse still fails it."""
    host_turned = [{"id": "host-True-random", "verdict": "contradicted", "host": True}, {"id": "doc", "verdict": "exact"}]
    rc, _ = _run_with(tmp_path, monkeypatch, {"04_power8_mmap": {"doc": "exact"}}, host_turned, "04_power8_mmap")
    assert rc == 0 and "REGRESSION" not in capsys.readouterr().err
    # a document finding of the baseline that turns into a host check cannot slip out of the gate
    rc, _ = _run_with(tmp_path, monkeypatch, {"04_power8_mmap": {"doc": "exact", "host-True-random": "exact"}}, host_turned, "04_power8_mmap")
    assert rc == 1 and "host-True-random was exact, now a check measured on this machine" in capsys.readouterr().err
    # a notebook about this machine: every finding is measured here, missing ones too
    rc, _ = _run_with(
        tmp_path,
        monkeypatch,
        {"07_your_machine": {"faults-THP": "exact", "gone": "exact"}},
        [{"id": "faults-THP", "verdict": "contradicted"}],
        "07_your_machine",
    )
    assert rc == 0
    doc_turned = [{"id": "host-True-random", "verdict": "exact", "host": True}, {"id": "doc", "verdict": "direction"}]
    rc, _ = _run_with(tmp_path, monkeypatch, {"04_power8_mmap": {"doc": "exact"}}, doc_turned, "04_power8_mmap")
    assert rc == 1 and "REGRESSION 04_power8_mmap.ipynb: doc was exact, now direction" in capsys.readouterr().err


def test_the_baseline_keeps_no_host_check(tmp_path, monkeypatch):
    fs = [{"id": "host-True-random", "verdict": "exact", "host": True}, {"id": "doc", "verdict": "exact"}]
    _, saved = _run_with(tmp_path, monkeypatch, {}, fs, "04_power8_mmap", save=True)
    assert saved == {"04_power8_mmap": {"doc": "exact"}}
    committed = json.loads((N.notebooks_dir() / "verdicts.json").read_text())
    for mode in committed.values():
        assert mode.get("06_your_program") == {} and mode.get("07_your_machine") == {}
        assert not [k for k in mode["04_power8_mmap"] if k.startswith("host-")]


def test_a_host_check_is_not_listed_as_a_change(tmp_path, monkeypatch):
    """The baseline keeps no host check, so a host check is not 'new' in every run's list of
    changes (was: the report listed all 27 of them as 'new -> exact' and the like on every run);
    a document finding the baseline lacks still is."""
    fs = [{"id": "host-True-random", "verdict": "exact", "host": True}, {"id": "doc", "verdict": "exact"}, {"id": "fresh", "verdict": "exact"}]
    rc, _ = _run_with(tmp_path, monkeypatch, {"04_power8_mmap": {"doc": "exact"}}, fs, "04_power8_mmap")
    text = (tmp_path / "out" / "report.md").read_text()
    assert rc == 0 and "0 regressions, 1 changes." in text and "changed: 04_power8_mmap.ipynb: fresh new -> exact" in text
    assert "host-True-random" not in text.split("Against the committed baseline")[1].split("\n\n")[0]
    (tmp_path / "b").mkdir()
    rc, _ = _run_with(tmp_path / "b", monkeypatch, {"07_your_machine": {}}, [{"id": "faults-THP", "verdict": "exact"}], "07_your_machine")
    text = (tmp_path / "b" / "out" / "report.md").read_text()
    assert rc == 0 and "0 regressions, 0 changes." in text


def test_the_headline_names_each_finding_within_its_band(tmp_path, monkeypatch):
    """A reader of the headline sees which findings are within, not only how many (was: a count
    alone, so '1 within and robust' did not say which, nor point to the band it rests on)."""
    fs = [{"id": "ra", "verdict": "within", "robust": True}, {"id": "fft", "verdict": "within"}, {"id": "x", "verdict": "contradicted"}]
    rc, _ = _run_with(tmp_path, monkeypatch, {}, fs, "02_opteron_cscs")
    head = (tmp_path / "out" / "report.md").read_text().split("Verdicts:")[0]
    assert rc == 0 and "Within: 02_opteron_cscs:ra (within (robust)); 02_opteron_cscs:fft (within) (each note gives its band" in head
    assert "02_opteron_cscs:x" not in head
