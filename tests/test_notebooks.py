"""The notebooks: committed clean, parameterised, and every one executes in quick mode with every
finding holding (the same runner as the main job, `pagesim notebooks`)."""

import nbformat
import papermill as pm
import pytest

from pagesim.notebooks import REQUIRED_PARAMETERS, execute, list_notebooks, notebooks_dir, report

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
    assert "Learning goals" in nb.cells[0].source
    # 06 and 07 compare a recorded trace and a measured machine, not a document, with the simulation
    heading = {"06_your_program": "Recorded vs simulation", "07_your_machine": "Measured vs simulation"}.get(path.stem, "Document vs simulation")
    assert any(heading in c.source for c in nb.cells if c.cell_type == "markdown")
    assert "F.save(result_path)" in nb.cells[-2].source or "F.save(result_path)" in nb.cells[-1].source


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_executes_in_quick_mode(path, tmp_path):
    rec = execute(path, tmp_path, quick=True)
    assert rec["status"] == "ok", rec.get("error")
    assert rec["findings"], "a notebook must record findings"
    failing = [f["finding"] for f in rec["findings"] if f["holds"] is False]
    assert not failing
    assert (tmp_path / f"{path.stem}.html").is_file()
    assert "| yes |" in report([rec])


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
