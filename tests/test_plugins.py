"""A paper package outside the repository: ``examples/plugin-onestep-gd`` installed with pip (into a folder of its
own, offline) registers its experiment through the entry-point group ``iclab.experiments``; ``iclab list`` shows it
with where it comes from, ``iclab run`` computes it on worker processes that find it the same way, the one judge
judges its records (its deliberately false claim disagrees) and ``iclab report`` rewrites its report. A plugin that
cannot be imported is one clear error naming it, never an experiment silently missing."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PLUGIN = Path(__file__).resolve().parents[1] / "examples" / "plugin-onestep-gd"


def _pip_install(source: Path, target: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index"]
        + ["--target", str(target), str(source)],
        check=True,
        capture_output=True,
    )


def _iclab(args: list[str], site: Path, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    env.pop("ICLAB_EXPERIMENT_MODULES", None)
    env["PYTHONPATH"] = os.pathsep.join([str(site)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    return subprocess.run([sys.executable, "-m", "iclab", *args], env=env, cwd=cwd, capture_output=True, text=True)


def install_example_plugin(tmp_path_factory) -> Path:
    """The example plugin installed by pip, as a user would, into a site folder of its own (to put on PYTHONPATH).
    pip builds from a copy, so no ``build/`` or ``*.egg-info`` folder appears inside the repository. Shared with
    ``tests/test_plugin_docs.py``."""
    source = tmp_path_factory.mktemp("source") / PLUGIN.name
    shutil.copytree(PLUGIN, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    target = tmp_path_factory.mktemp("site")
    _pip_install(source, target)
    return target


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    return install_example_plugin(tmp_path_factory)


def test_an_installed_plugin_is_listed_with_where_it_comes_from(site, tmp_path):
    out = _iclab(["list"], site, tmp_path)
    assert out.returncode == 0, out.stderr
    lines = {line.split()[0]: line for line in out.stdout.splitlines()}
    assert "[plugin iclab-onestep-gd 0.1.0]" in lines["onestep-gd"]
    assert lines["temperature"].endswith("[iclab]")


def test_a_plugin_runs_is_judged_and_reported_like_a_paper_package(site, tmp_path):
    run = tmp_path / "run"
    out = _iclab(["run", "onestep-gd", "--quick", "--out", str(run), "--workers", "2"], site, tmp_path)
    assert out.returncode == 0, out.stderr
    summary = json.loads((run / "summary.json").read_text())
    verdicts = {c["id"]: c["verdict"] for c in summary["comparisons"]}
    assert verdicts == {"gd-step-beats-zero": "agrees", "gd-step-matches-ols": "disagrees"}
    assert not summary["errors"]
    assert (run / "figures" / "risks.png").stat().st_size > 0
    (run / "report.md").unlink()
    again = _iclab(["report", str(run)], site, tmp_path)
    assert again.returncode == 0, again.stderr
    report = (run / "report.md").read_text()
    assert "One GD step is as good as least squares" in report and "**disagrees**" in report


def test_a_plugin_that_cannot_be_imported_is_one_clear_error(tmp_path):
    source = tmp_path / "broken"
    (source / "broken_plugin").mkdir(parents=True)
    (source / "broken_plugin" / "__init__.py").write_text("raise RuntimeError('the plugin is broken')\n")
    (source / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=64"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "broken-plugin"\nversion = "1.2"\n'
        '[project.entry-points."iclab.experiments"]\nbroken = "broken_plugin"\n'
        '[tool.setuptools]\npackages = ["broken_plugin"]\n'
    )
    site = tmp_path / "site"
    _pip_install(source, site)
    out = _iclab(["list"], site, tmp_path)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "plugin 'broken' (plugin broken-plugin 1.2)" in out.stderr and "the plugin is broken" in out.stderr


def test_the_example_plugins_identity_holds_exactly():
    """What the plugin's claims do not judge: the linear self-attention layer *is* the GD step (a test, not a
    claim), on odd sizes."""
    sys.path.insert(0, str(PLUGIN))
    try:
        from iclab_onestep_gd.cells import run_cell
        from iclab_onestep_gd.config import OneStepConfig

        row = run_cell(OneStepConfig(d=3, n=7, prompts=11), {"part": "risk", "seed": 5}, None)
    finally:
        sys.path.remove(str(PLUGIN))
        for name in [m for m in sys.modules if m.startswith("iclab_onestep_gd")]:
            del sys.modules[name]
    assert row["max_gap"] < 1e-12 and row["risk_attention"] == pytest.approx(row["risk_gd"], rel=1e-12)
    assert row["risk_ols"] < row["risk_gd"] < row["risk_zero"]


def test_a_package_missing_a_function_or_a_file_says_which_and_what_a_package_defines(tmp_path, monkeypatch):
    from iclab.errors import ConfigError
    from iclab.experiments import lazy

    (tmp_path / "half_package").mkdir()
    (tmp_path / "half_package" / "__init__.py").write_text("")
    (tmp_path / "half_package" / "cells.py").write_text("def cells(config):\n    return []\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert lazy("half_package.cells:cells")(None) == []
    with pytest.raises(ConfigError, match=r"half_package\.cells defines no function shared\(\): an experiment"):
        lazy("half_package.cells:shared")(None)
    with pytest.raises(ConfigError, match=r"experiment module half_package\.figures is missing: .*figures\.py"):
        lazy("half_package.figures:figures")(None)
