"""MkDocs hook: every tutorial notebook ``docs/tutorials/<name>.py`` (jupytext percent format: ``# %%`` code cells,
``# %% [markdown]`` text cells) becomes the page ``tutorials/<name>.md``: its text cells as written, its code cells
as Python blocks, and a link to the notebook file itself. The notebooks are executed by ``tests/test_tutorials.py``,
not at docs build time, so ``mkdocs build`` stays fast.
"""

from __future__ import annotations

from pathlib import Path

from mkdocs.structure.files import File

FOLDER = "tutorials"


def notebook_markdown(path: Path) -> str:
    """The page of one percent-format notebook."""
    import jupytext

    parts = []
    for cell in jupytext.read(path).cells:
        if cell.cell_type == "markdown":
            parts.append(cell.source)
        elif cell.source.strip():
            parts.append(f"```python\n{cell.source}\n```")
    parts.append(
        f'!!! note "Run it yourself"\n    [`{path.name}`]({path.name}) is this page as a notebook (jupytext percent '
        f"format): run it as a script (`python {path.name}`), open it in Jupyter with jupytext installed, or convert "
        f"it (`jupytext --to ipynb {path.name}`). `tests/test_tutorials.py` executes it."
    )
    return "\n\n".join(parts) + "\n"


def on_files(files, config):
    for path in sorted((Path(config["docs_dir"]) / FOLDER).glob("*.py")):
        files.append(File.generated(config, f"{FOLDER}/{path.stem}.md", content=notebook_markdown(path)))
    return files
