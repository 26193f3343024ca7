"""The tutorials (docs/tutorials/*.py, jupytext percent-format notebooks) execute as notebooks: each is read with
jupytext and run cell by cell in a fresh IPython kernel (nbclient), as a reader would in Jupyter. Each ends with
assertions, so an API change that breaks a tutorial fails here; docs/_hooks/tutorials.py renders them as pages."""

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TUTORIALS = sorted((ROOT / "docs" / "tutorials").glob("*.py"))


def test_the_three_tutorials_are_there_and_rendered_from_their_cells():
    import sys

    sys.path.insert(0, str(ROOT / "docs" / "_hooks"))
    try:
        from tutorials import notebook_markdown
    finally:
        sys.path.remove(str(ROOT / "docs" / "_hooks"))
    assert [p.stem for p in TUTORIALS] == ["add-a-claim", "hf-temperature", "reproduce-a-claim"]
    for path in TUTORIALS:
        page = notebook_markdown(path)
        assert page.startswith("# ") and "```python\n" in page and f"]({path.name})" in page
        assert "# %%" not in page  # cell markers never reach the page


@pytest.mark.slow
@pytest.mark.parametrize("path", TUTORIALS, ids=lambda p: p.stem)
def test_tutorial_executes_as_a_notebook(path, tmp_path, monkeypatch):
    import jupytext
    from nbclient import NotebookClient

    # The kernel inherits the environment: offline, one thread, and this checkout's source first on the path.
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # one torch thread, as in the test process (conftest.py)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]))
    notebook = jupytext.read(path)
    client = NotebookClient(
        notebook, timeout=900, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()  # raises CellExecutionError, with the cell and its traceback, when a cell fails
    code_cells = [c for c in notebook.cells if c.cell_type == "code"]
    assert code_cells and all(c.get("execution_count") for c in code_cells)
    assert not any(o.get("output_type") == "error" for c in code_cells for o in c.get("outputs", []))
