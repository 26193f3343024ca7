"""One seeding rule: every random draw is keyed by ``(seed, *keys)`` through ``iclab.data`` (``derive_seed``,
``generator_for``, and ``seeded_init`` for model constructors that draw from torch's global RNG).

Every module under ``src/iclab`` is parsed. Nothing but ``iclab/data/_rng.py`` (the home of ``seeded_init``) seeds a
global RNG (``torch.manual_seed``, ``np.random.seed``, ...). Under ``experiments`` no code seeds a generator by hand
(``torch.Generator().manual_seed(seed)``: use ``generator_for``), and no arithmetic touches a seed (``cfg.seed * 1000
+ s``, ``seed + 1``, ``cell["seed"] * 2``: two such streams of different base seeds overlap; use ``derive_seed(seed,
"what", *indices)``). A seed is a name whose last ``_``-part is ``seed`` (``n_seeds`` is a count).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
import torch

from iclab.data import derive_seed, generator_for, seeded_init

SRC = Path(__file__).resolve().parents[1] / "src" / "iclab"
HELPER = SRC / "data" / "_rng.py"
EXPERIMENTS = SRC / "experiments"

# Dotted callees that seed a process-wide RNG.
GLOBAL_SEEDING = {
    "torch.manual_seed",
    "torch.random.manual_seed",
    "torch.cuda.manual_seed",
    "torch.cuda.manual_seed_all",
    "torch.default_generator.manual_seed",
    "np.random.seed",
    "numpy.random.seed",
    "random.seed",
}


def _dotted(node: ast.AST) -> str:
    """``a.b.c`` for a chain of attributes on a name; ``""`` for anything else (a call, a subscript, ...)."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return ""
    return ".".join([node.id, *reversed(parts)])


def _names_a_seed(node: ast.AST) -> bool:
    """A name, attribute or string subscript whose last ``_``-part is ``seed`` (``seed``, ``sgd_seed``, ``seed0``):
    not a count (``n_seeds``) nor a statistic over seeds (``PAPER_SEED_SD``)."""
    if isinstance(node, ast.Name):
        name = node.id
    elif isinstance(node, ast.Attribute):
        name = node.attr
    elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
        name = node.slice.value
    else:
        return False
    return re.fullmatch(r"seed\d*", name.lower().rsplit("_", 1)[-1]) is not None


def _violations(path: Path, experiments: bool) -> list[str]:
    """``"line: what"`` for every seeding that breaks the rule in ``path`` (``experiments``: the stricter rules)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            callee = _dotted(node.func)
            if callee in GLOBAL_SEEDING:
                found.append(f"{node.lineno}: global seeding {callee}(...)")
            elif experiments and node.func.attr in ("manual_seed", "seed"):
                found.append(f"{node.lineno}: a generator seeded by hand (.{node.func.attr}(...))")
        elif experiments and isinstance(node, ast.BinOp) and (_names_a_seed(node.left) or _names_a_seed(node.right)):
            found.append(f"{node.lineno}: seed arithmetic {ast.unparse(node)}")
    return found


def _sources() -> list[Path]:
    return sorted(p for p in SRC.rglob("*.py") if p != HELPER)


def test_the_tree_has_sources_under_experiments():
    """The scan below sees the experiments (a moved tree would otherwise pass vacuously)."""
    assert sum(1 for p in _sources() if EXPERIMENTS in p.parents) > 50


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(SRC)))
def test_every_draw_is_keyed(path):
    bad = _violations(path, EXPERIMENTS in path.parents)
    assert not bad, f"{path.relative_to(SRC)}: " + "; ".join(bad) + " (use derive_seed / generator_for / seeded_init)"


@pytest.mark.parametrize(
    "source, experiments",
    [
        ("import torch\ntorch.manual_seed(0)\n", False),
        ("import torch\ntorch.cuda.manual_seed_all(0)\n", False),
        ("import numpy as np\nnp.random.seed(1)\n", False),
        ("import torch\ng = torch.Generator().manual_seed(3)\n", True),
        ("def f(cfg, s):\n    return cfg.seed * 1000 + s\n", True),
        ("def f(seed):\n    return seed + 1\n", True),
        ("def f(cell):\n    return cell['seed'] * 2\n", True),
        ("def f(cfg, r):\n    return g(sgd_seed=cfg.seed + 1 + 1000 * r)\n", True),
    ],
)
def test_the_checker_sees_every_kind_of_violation(tmp_path, source, experiments):
    """The checker itself: a planted violation is found."""
    path = tmp_path / "probe.py"
    path.write_text(source)
    assert _violations(path, experiments)


@pytest.mark.parametrize(
    "source",
    [
        "from iclab.data import derive_seed\ndef f(cfg, s):\n    return derive_seed(cfg.seed, 'init', s)\n",
        "def f(cfg):\n    return [s + 1 for s in range(cfg.n_seeds)]\n",
        "def f(cfg, p):\n    return 6.0 * cfg.train_seeds * p\n",
        "PAPER_SEED_SD = 0.1\nVAR = PAPER_SEED_SD**2\n",
        "import torch\ntorch.set_rng_state(torch.get_rng_state())\n",
    ],
)
def test_the_checker_passes_keyed_draws_and_counts(tmp_path, source):
    path = tmp_path / "probe.py"
    path.write_text(source)
    assert _violations(path, True) == []


def test_seeded_init_keys_the_initialisation_and_restores_the_global_state():
    """Inside the block the global CPU RNG is ``derive_seed(seed, *keys)``; after it, the state is as before."""
    torch.manual_seed(5)
    expected_next = torch.rand(3)
    torch.manual_seed(5)
    with seeded_init(7, "init", 2):
        w = torch.nn.Linear(4, 3).weight.detach().clone()
    assert torch.equal(torch.rand(3), expected_next)
    with seeded_init(7, "init", 2):
        assert torch.equal(torch.nn.Linear(4, 3).weight.detach(), w)
    with seeded_init(7, "init", 3):
        assert not torch.equal(torch.nn.Linear(4, 3).weight.detach(), w)
    g = torch.Generator()
    g.manual_seed(derive_seed(7, "init", 2))
    assert torch.equal(torch.rand(3, generator=g), torch.rand(3, generator=generator_for(7, "init", 2)))
