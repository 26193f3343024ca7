"""The documentation site builds with ``mkdocs build --strict``: a broken link, a page missing from the nav or a
docstring that disagrees with its signature fails. Every public name of the API has a docstring, and every paper
note in ``docs/papers/`` is in the nav."""

import importlib
import inspect
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
API = ["iclab", "iclab.attention", "iclab.data", "iclab.theory.temperature", "iclab.theory.multihead",
       "iclab.theory.ood", "iclab.theory.dispersion", "iclab.theory.categorical", "iclab.estimators",
       "iclab.models", "iclab.train", "iclab.hf", "iclab.runs", "iclab.experiments", "iclab.report",
       "iclab.tracking", "iclab.config", "iclab.errors", "iclab.stats", "iclab.plotting"]


def _nav_files(nav) -> list[str]:
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, dict):
        return [f for v in nav.values() for f in _nav_files(v)]
    return [f for item in nav for f in _nav_files(item)]


def _mkdocs_config() -> dict:
    class _Loader(yaml.SafeLoader):
        pass

    _Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)
    return yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=_Loader)


def test_every_page_and_paper_note_is_in_the_nav():
    nav = set(_nav_files(_mkdocs_config()["nav"]))
    pages = {str(p.relative_to(ROOT / "docs")) for p in (ROOT / "docs").rglob("*.md") if "_hooks" not in p.parts}
    assert pages - nav == set(), "pages missing from the nav of mkdocs.yml"
    assert {f"papers/{p.name}" for p in (ROOT / "docs" / "papers").glob("*.md")} <= nav


def test_every_public_name_has_a_docstring():
    missing = []
    for module_name in API:
        module = importlib.import_module(module_name)
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name)
            if (inspect.isfunction(obj) or inspect.isclass(obj)) and not inspect.getdoc(obj):
                missing.append(f"{module_name}.{name}")
    assert not missing, "public names without a docstring: " + ", ".join(missing)


@pytest.mark.slow
def test_mkdocs_build_strict(tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
           "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
    site = tmp_path / "site"
    cli = (site / "cli" / "index.html").read_text()
    assert "iclab run" in cli and "--dry-run" in cli and "--tracker" in cli
    configs = (site / "configs" / "index.html").read_text()
    assert "l_values" in configs and "cov_scale" in configs
    assert "with_temperature" in (site / "api" / "hf" / "index.html").read_text()


# Packages whose whole public API is annotated. Not yet: iclab.hf (issue 13 rewrites it), iclab.attention and
# iclab.runs (issue 15 changes their checks), iclab.report (issue 12 rewrites the comparison report).
TYPED = ["iclab.data", "iclab.theory.temperature", "iclab.theory.multihead", "iclab.theory.ood",
         "iclab.theory.dispersion", "iclab.theory.categorical", "iclab.estimators", "iclab.models", "iclab.train",
         "iclab.experiments", "iclab.tracking", "iclab.config", "iclab.stats", "iclab.plotting"]


def test_public_functions_have_type_hints():
    missing = []
    for module_name in TYPED:
        module = importlib.import_module(module_name)
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name)
            if not inspect.isfunction(obj):
                continue
            signature = inspect.signature(obj)
            bare = [p.name for p in signature.parameters.values()
                    if p.annotation is inspect.Parameter.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
            if bare or signature.return_annotation is inspect.Signature.empty:
                missing.append(f"{module_name}.{name}({', '.join(bare)}){'' if bare else ' -> ?'}")
    assert not missing, "public functions without complete type hints: " + "; ".join(missing)
