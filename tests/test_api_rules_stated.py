"""Every public function of the API that ``tests/test_api_properties.py`` covers states its argument rule (issue 42):
its docstring ends with a paragraph ``Arguments: …`` that names each of its parameters as ````name```` (or says
``none``), and the API pages of the docs render those docstrings (a ``:::`` directive for each module).

A parameter may also be covered by a reference, ``Arguments: as :func:`other`; …``: the names that ``other``'s own
rule states count for this one (``dispersion.entropy_beta_derivative`` takes the rule of ``softmax_entropy``).
"""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path

import pytest

from test_api_properties import NEEDS_A_TOKENIZER, _public_functions

ROOT = Path(__file__).resolve().parents[1]
API_DOCS = ROOT / "docs" / "api"

# short module name (as test_api_properties names functions) -> the module iclab exports it from
MODULES = {
    "temperature": "iclab.theory.temperature",
    "multihead": "iclab.theory.multihead",
    "ood": "iclab.theory.ood",
    "dispersion": "iclab.theory.dispersion",
    "categorical": "iclab.theory.categorical",
    "stats": "iclab.stats",
    "budget": "iclab.budget",
    "attention": "iclab.attention",
    "hf": "iclab.hf",
}
_REFERENCE = re.compile(r":func:`~?([\w.]+?)(?:\(\))?`")
_NAMED = re.compile(r"``(\w+)``")


def _functions() -> dict[str, object]:
    """``module.name -> function`` for every public function the property tests cover (and those they leave out)."""
    names = _public_functions() | set(NEEDS_A_TOKENIZER)
    return {n: getattr(importlib.import_module(MODULES[n.split(".")[0]]), n.split(".")[1]) for n in sorted(names)}


def _rule(fn) -> str | None:
    """The last paragraph of ``fn``'s docstring that starts with ``Arguments:`` (None without one)."""
    paragraphs = re.split(r"\n\s*\n", inspect.getdoc(fn) or "")
    rules = [p.strip() for p in paragraphs if p.strip().startswith("Arguments:")]
    return rules[-1] if rules else None


def _parameters(fn) -> list[str]:
    """Parameter names of ``fn`` (a registered normaliser's are those of the function it wraps), without ``self``
    and ``*args``/``**kwargs`` catch-alls."""
    kinds = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    return [p.name for p in inspect.signature(fn).parameters.values() if p.name != "self" and p.kind not in kinds]


def _named(fn, depth: int = 0) -> set[str]:
    """The names the rule of ``fn`` states, with those of the rules it refers to (``as :func:`other```)."""
    rule = _rule(fn) or ""
    names = set(_NAMED.findall(rule))
    if depth < 3:
        for ref in _REFERENCE.findall(rule):
            target = _resolve(ref) if ref.startswith("iclab.") else _resolve(f"{fn.__module__}.{ref}")
            if callable(target) and target is not fn:
                names |= _named(target, depth + 1)
    return names


def _resolve(path: str):
    """The object at a dotted path whose head is a module (None when there is none)."""
    parts = path.split(".")
    for i in range(len(parts) - 1, 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for part in parts[i:]:
            obj = getattr(obj, part, None)
        return obj
    return None


def _gaps() -> dict[str, set[str]]:
    """``module.name -> parameters its rule does not name`` (``{"<none>"}``: a function without parameters whose rule
    does not say ``none``)."""
    gaps = {}
    for name, fn in _functions().items():
        rule = _rule(fn)
        if rule is None:
            continue  # the first test reports it
        params = _parameters(fn)
        if not params:
            if not re.search(r"\bnone\b", rule, re.IGNORECASE):
                gaps[name] = {"<none>"}
            continue
        missing = {p for p in params if p not in _named(fn)}
        if missing:
            gaps[name] = missing
    return gaps


def test_every_public_function_states_its_argument_rule():
    functions = _functions()
    assert len(functions) >= 160, f"only {len(functions)} public functions found: is the list in test_api_properties?"
    missing = [name for name, fn in functions.items() if _rule(fn) is None]
    assert not missing, (
        f"{len(missing)} of {len(functions)} public functions have no docstring paragraph starting with "
        "'Arguments:': " + ", ".join(missing)
    )


def test_every_rule_names_every_parameter():
    gaps = _gaps()
    assert not gaps, "argument rules that leave parameters unnamed (as ``name``, or 'none' for no parameter): " + (
        "; ".join(f"{name}: {', '.join(sorted(params))}" for name, params in sorted(gaps.items()))
    )


def _directives() -> dict[str, tuple[Path, list[str]]]:
    """``module path -> (page, option lines)`` of every ``::: module`` directive under docs/api."""
    found = {}
    for page in sorted(API_DOCS.glob("*.md")):
        lines = page.read_text().splitlines()
        for i, line in enumerate(lines):
            m = re.match(r"^:::\s+(\S+)\s*$", line)
            if m:
                options = []
                for following in lines[i + 1 :]:
                    if not following.startswith((" ", "\t")):
                        break
                    options.append(following.strip())
                found[m.group(1)] = (page, options)
    return found


PAGES = [  # (group, short module names): each module needs a `::: iclab.…` directive on a docs/api page
    pytest.param("attention", ["attention"]),
    pytest.param("hf", ["hf"]),
    pytest.param("theory", ["temperature", "multihead", "ood", "dispersion", "categorical"]),
    pytest.param("stats", ["stats"]),
    pytest.param("budget", ["budget"]),
]


@pytest.mark.parametrize(("group", "modules"), PAGES)
def test_the_api_pages_render_every_rule(group, modules):
    import griffe  # installed with the docs tools by `make test`

    directives = _directives()
    package = griffe.load("iclab", search_paths=[str(ROOT / "src")], resolve_aliases=True, resolve_external=False)
    functions = _functions()
    problems = []
    for m in modules:
        path = MODULES[m]
        if path not in directives:
            problems.append(f"no '::: {path}' directive in docs/api/*.md")
            continue
        page, options = directives[path]
        members = next((o.split(":", 1)[1] for o in options if o.startswith("members:")), None)
        loaded = package[path.removeprefix("iclab.")]
        exports = {str(e) for e in loaded.exports or ()}
        for name in (n.split(".")[1] for n in functions if n.split(".")[0] == m):
            if members is not None and f'"{name}"' not in members and f"'{name}'" not in members:
                problems.append(f"{page.name}: {path}.{name} is left out by its 'members:' option")
                continue
            member = loaded.members.get(name)
            doc = member.docstring.value if member is not None and member.docstring is not None else ""
            if name not in exports or not re.search(r"(^|\n\s*\n)\s*Arguments:", doc):
                problems.append(f"{page.name}: {path}.{name} is not rendered with its 'Arguments:' paragraph")
    assert not problems, f"{group}: " + "; ".join(problems)
