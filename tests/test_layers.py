"""Imports point downwards only, in the documented layer order, and no module import closes a cycle.

Every module under ``src/iclab`` is parsed; every ``import``/``from … import`` counts, function-local ones and
those under ``TYPE_CHECKING`` included, as does every ``lazy("iclab.x:y")`` reference (an import deferred to
call time is still a dependency). A sub-package may import its own modules, the base modules, and sub-packages
of a strictly lower layer. Under ``experiments``, a paper's package imports no other paper's package.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"

# Lowest first. Packages on one line share a layer and may not import each other.
LAYERS = [
    ("errors", "_version"),
    ("domain", "settings", "files"),
    ("config", "budget", "plotting", "stats", "tracking"),
    ("attention",),
    ("data",),
    ("theory",),
    ("estimators",),
    ("models",),
    ("train", "hf"),
    ("runs",),
    ("claims",),
    ("experiments",),
    ("report",),
    ("cli",),
    ("__main__",),
]
RANK = {pkg: i for i, layer in enumerate(LAYERS) for pkg in layer}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path, here: str | None = None) -> set[str]:
    """Every ``iclab`` module that ``path`` (module ``here``) imports or references lazily, as dotted names."""
    tree = ast.parse(path.read_text(), filename=str(path))
    here = here or _module_name(path)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative import
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.add(module)
            found.update(f"{module}.{a.name}" for a in node.names)  # `from pkg import submodule`
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("iclab."):
            if ":" in node.value and " " not in node.value:  # lazy("iclab.x.y:function")
                found.add(node.value.partition(":")[0])
    return {m for m in found if m == "iclab" or m.startswith("iclab.")}


def _graph() -> dict[str, set[str]]:
    modules = {_module_name(p): p for p in SRC.rglob("*.py")}
    graph: dict[str, set[str]] = defaultdict(set)
    for name, path in modules.items():
        for target in _imports(path):
            while target not in modules and "." in target:  # `from iclab.x import name` -> iclab.x
                target = target.rpartition(".")[0]
            if target in modules and target != name:
                graph[name].add(target)
    return graph


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "iclab"


def _paper(module: str) -> str | None:
    parts = module.split(".")
    if len(parts) > 2 and parts[1] == "experiments" and not parts[2].startswith("_"):
        return parts[2]
    return None


def test_every_subpackage_has_a_layer():
    layers = {_layer(m) for m in _graph()} | {_layer(_module_name(p)) for p in SRC.rglob("*.py")}
    assert layers - {"iclab"} <= set(RANK), f"add {sorted(layers - set(RANK) - {'iclab'})} to LAYERS"


def test_imports_point_down():
    upward = []
    for source, targets in sorted(_graph().items()):
        for target in sorted(targets):
            a, b = _layer(source), _layer(target)
            if a == "iclab" or b == "iclab" or a == b:
                continue
            if RANK[b] >= RANK[a]:
                upward.append(f"{source} -> {target} ({a} is layer {RANK[a]}, {b} is layer {RANK[b]})")
    assert not upward, "imports that do not point down:\n" + "\n".join(upward)


def test_paper_packages_import_no_other_paper():
    crossing = [
        f"{s} -> {t}" for s, ts in _graph().items() for t in ts if _paper(s) and _paper(t) and _paper(s) != _paper(t)
    ]
    assert not crossing, "\n".join(crossing)


def _private_crossings(path: Path, here: str) -> list[str]:
    """Imports in ``path`` (module ``here``) of another top-level package's private module or private name: a
    package is used through what its ``__init__`` exports (``iclab._version`` is the one shared private module)."""
    crossings = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if not isinstance(node, ast.ImportFrom) or node.level or not (node.module or "").startswith("iclab."):
            continue
        parts = node.module.split(".")
        if parts[1] == _layer(here) or node.module == "iclab._version":
            continue
        names = [a.name for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]
        if any(p.startswith("_") for p in parts[1:]) or names:
            crossings.append(f"{here}: from {node.module} import {', '.join(a.name for a in node.names)}")
    return crossings


def test_packages_use_each_other_through_their_public_names():
    crossing = [c for p in SRC.rglob("*.py") if p.parts[-2] != "src" for c in _private_crossings(p, _module_name(p))]
    assert not crossing, "private cross-package imports:\n" + "\n".join(crossing)


def test_the_private_import_check_sees_one(tmp_path):
    path = tmp_path / "probe.py"
    path.write_text("def f():\n    from iclab.data._gaussian import as_covariance\nfrom iclab.data import _x\n")
    assert len(_private_crossings(path, "iclab.theory.probe")) == 2
    assert not _private_crossings(path, "iclab.data.probe")  # inside its own package


def test_no_import_cycle():
    graph = _graph()
    state: dict[str, int] = {}  # 1 = on the stack, 2 = done
    cycles: list[list[str]] = []

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append(stack[stack.index(nxt) :] + [nxt])
            elif nxt not in state:
                visit(nxt, stack)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [])
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


@pytest.mark.parametrize(
    "source, expected",
    [
        ("from iclab.report import x\n", "iclab.report"),
        ("def f():\n    from iclab.experiments._run import run_experiment\n", "iclab.experiments._run"),
        ("X = lazy('iclab.experiments.ood.cells:run_cell')\n", "iclab.experiments.ood.cells"),
        ("import iclab.hf\n", "iclab.hf"),
        ("from ..report import x\n", "iclab.report"),
    ],
)
def test_the_parser_sees_every_kind_of_import(tmp_path, source, expected):
    """The checker itself: module-level, function-local, lazy, plain and relative imports are all found."""
    path = tmp_path / "probe.py"
    path.write_text(source)
    assert expected in _imports(path, "iclab.runs.probe")


@pytest.mark.parametrize("package", ["iclab.attention", "iclab.config", "iclab.data", "iclab.hf"])
def test_a_package_built_from_its_modules_exports_each_name_once(package):
    """These packages splice their ``__all__`` from their modules' ``__all__``s (each name listed once, where it is
    defined): every name exists, none comes twice, and every public name the ``__init__`` imports from one of its
    own modules is exported or used there (an import the ``__all__`` misses would hide behind its ``noqa: F401``)."""
    import importlib

    module = importlib.import_module(package)
    exported = list(module.__all__)
    assert len(exported) == len(set(exported)), sorted(n for n in exported if exported.count(n) > 1)
    assert [n for n in exported if not hasattr(module, n)] == []
    tree = ast.parse(Path(module.__file__).read_text())
    imported = {
        alias.asname or alias.name
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(f"{package}._")
        for alias in node.names
        if alias.name != "*" and not alias.name.startswith("_")
    }
    used = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    assert imported - set(exported) - used == set()
