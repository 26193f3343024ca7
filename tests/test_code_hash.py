"""The split of iclab's source into code that computes cells and code that only judges and presents them
(:mod:`iclab.runs._code`): a run folder is refused only when the first changed, re-judged when the second did.

The split is safe only if no cell can reach a judging file: the test follows the imports (function-local ones
included, names resolved through the packages that re-export them) from every paper experiment's cell module."""

import ast
import json
import subprocess
import sys
from pathlib import Path, PurePosixPath

import pytest

from iclab.experiments import paper_experiments
from iclab.runs import _folder
from iclab.runs._code import ROOT, code_hash, is_judging, judging_hash, source_files

#: an edge a cell never takes: ``judged`` (an experiment's ``compare``) is defined beside the contract and calls the judge
_GLUE = {("iclab.experiments._contract", "iclab.claims")}


def _file(module: str) -> Path | None:
    parts = module.split(".")[1:]
    for path in (ROOT.joinpath(*parts).with_suffix(".py"), ROOT.joinpath(*parts, "__init__.py")):
        if parts and path.is_file() or not parts and path.name == "__init__.py" and path.is_file():
            return path
    return None


def _absolute(module: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = module if _file(module).name == "__init__.py" else module.rpartition(".")[0]
    base = package.split(".")[: len(package.split(".")) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _reexported(package: str, name: str) -> str:
    """The module that defines ``name`` as ``package`` exports it (through its ``__init__``'s imports)."""
    for node in ast.walk(ast.parse(_file(package).read_text())):
        if isinstance(node, ast.ImportFrom) and any((a.asname or a.name) == name for a in node.names):
            source = _absolute(package, node)
            return _reexported(source, name) if _file(source).name == "__init__.py" else source
    return package


def _imports(module: str) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(_file(module).read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("iclab")}
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(module, node)
            if not base.startswith("iclab"):
                continue
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                if _file(sub) is not None:
                    out.add(sub)
                elif _file(base).name == "__init__.py":
                    out.add(_reexported(base, alias.name))
                else:
                    out.add(base)
    return {m for m in out if _file(m) is not None}


def _relative(module: str) -> PurePosixPath:
    return PurePosixPath(_file(module).relative_to(ROOT).as_posix())


def _reached_from(start: str) -> dict[str, str]:
    """Every iclab module ``start`` reaches through imports, each with the module that imports it."""
    seen, todo = {start: ""}, [start]
    while todo:
        here = todo.pop()
        for dep in _imports(here):
            if dep not in seen and (here, dep) not in _GLUE:
                seen[dep] = here
                todo.append(dep)
    return seen


@pytest.mark.parametrize("exp", paper_experiments(), ids=lambda e: e.name)
def test_no_cell_reaches_a_judging_file(exp):
    module = exp.run_cell.target.partition(":")[0]
    reached = _reached_from(module)
    judging = {m: by for m, by in reached.items() if is_judging(_relative(m))}
    assert not judging, f"{exp.name}'s cells reach judging files (module: imported by): {judging}"
    assert len(reached) > 10  # the walk follows the imports (models, data, theory, ...), not only the cell module


def test_every_source_file_is_on_exactly_one_side_and_the_judging_side_holds_claims_notes_figures():
    files = source_files()
    judging = {str(f) for f in files if is_judging(f)}
    assert {"experiments/ood/claims.py", "experiments/temperature/llm/notes.py", "report/_html.py"} <= judging
    assert {"experiments/ood/claims_common.py", "experiments/ood/claims_finetune.py"} <= judging  # split in parts
    assert {"claims/_judge.py", "experiments/multihead/figures.py", "cli/_runs.py"} <= judging
    assert not {"experiments/ood/cells.py", "experiments/_contract.py", "attention/_softmax.py"} & judging
    assert 0 < len(judging) < len(files)
    assert code_hash() != judging_hash() and len(code_hash()) == len(judging_hash()) == 16


def _fixture_run(tmp_path: Path) -> Path:
    from fixtures_experiments import fixture_env

    run = tmp_path / "run"
    done = subprocess.run(
        [sys.executable, "-m", "iclab", "run", "fx_sweep", "--quick", "--executor", "serial", "--out", str(run)],
        env=fixture_env(),
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    return run


def _report(run: Path) -> subprocess.CompletedProcess:
    from fixtures_experiments import fixture_env

    return subprocess.run(
        [sys.executable, "-m", "iclab", "report", str(run)], env=fixture_env(), capture_output=True, text=True
    )


def _edit_meta(run: Path, **changes) -> None:
    meta = json.loads((run / "config.json").read_text())
    meta.update(changes)
    (run / "config.json").write_text(json.dumps(meta))


def test_a_change_to_judging_code_alone_re_judges_the_run_and_says_so(tmp_path):
    run = _fixture_run(tmp_path)
    assert json.loads((run / "config.json").read_text())["judging_hash"] == judging_hash()
    _edit_meta(run, judging_hash="0123456789abcdef")  # the claims or the report changed since the run
    out = _report(run)
    assert out.returncode == 0, out.stderr
    report = (run / "report.md").read_text()
    assert "**Re-judged:** the cells were computed by the same code; judging code 0123456789abcdef (now" in report
    assert "Written by another iclab" not in report


def test_a_change_to_the_code_that_computes_cells_still_refuses_the_folder(tmp_path):
    run = _fixture_run(tmp_path)
    _edit_meta(run, code_hash="0123456789abcdef", judging_hash="0123456789abcdef")
    out = _report(run)
    assert out.returncode == 2 and "the source changed since" in out.stderr and "--force" in out.stderr
    assert _folder.RunFolder.rejudged({"judging_hash": judging_hash()}) == ""
    assert _folder.RunFolder.rejudged({}) == ""  # a record from before the split: judged by its code hash alone
