"""The tutorials of docs/tutorials/ run top to bottom on a fresh install, and are kept in git without outputs.

They are executed once per test session, by the documentation site's build
(myst-nb, in a fresh temporary folder each, as a reader may open them from
anywhere; a cell that raises fails the build), and the executed notebooks the
build keeps are checked here: no error, and the figures are there.
"""

from __future__ import annotations

import pytest

from conftest import ROOT

nbformat = pytest.importorskip("nbformat", reason="the tutorials need the docs extra: pip install -e '.[docs]'")

TUTORIALS = sorted((ROOT / "docs" / "tutorials").glob("*.ipynb"))


def test_there_are_three_tutorials_each_with_its_answers():
    assert [p.stem for p in TUTORIALS] == ["01-table1-three-parties", "02-attacks", "03-costs"]
    for path in TUTORIALS:
        answers = path.with_name(f"{path.stem}-answers.md")
        assert answers.is_file(), answers
        text = nbformat.read(path, as_version=4).cells[-1].source
        assert "## Exercises" in text and answers.name in text


@pytest.mark.parametrize("path", TUTORIALS, ids=[p.stem for p in TUTORIALS])
def test_tutorial_is_stored_without_outputs_and_runs(path, docs_site):
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    code = [c for c in notebook.cells if c.cell_type == "code"]
    assert all(not c.outputs and c.execution_count is None for c in code), "strip the outputs before committing"
    html, build = docs_site
    executed_path = html.parent / "jupyter_execute" / "tutorials" / path.name
    assert executed_path.is_file(), build.stderr[-3000:]
    executed = nbformat.read(executed_path, as_version=4)
    ran = [c for c in executed.cells if c.cell_type == "code"]
    assert len(ran) == len(code) and all(c.execution_count for c in ran), "not every cell ran"
    outputs = [o for c in ran for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    assert any("image/png" in o.get("data", {}) for o in outputs) or path.stem.startswith("01")
