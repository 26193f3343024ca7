"""The built wheel works outside the checkout: it declares its dependencies, installs into a fresh virtual
environment from the package index (pinned by the lock, so torch is the 2.13.0 CPU build), and `iclab --version`,
`iclab list`, `iclab theory tau-opt` and `iclab report --reference` (the shipped reference runs, package data) run
from another folder. Metadata: licence, py.typed, one version."""

import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

import iclab

ROOT = Path(__file__).resolve().parents[1]


def _build_wheel(tmp_path: Path) -> Path:
    """Build the wheel from a copy of the source (the build writes nothing into the checkout)."""
    source = tmp_path / "source"
    shutil.copytree(ROOT / "src", source / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    for name in ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, source / name)
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(tmp_path / "dist"), str(source)],
        check=True,
        capture_output=True,
        text=True,
    )
    (wheel,) = (tmp_path / "dist").glob("iclab-*.whl")
    return wheel


def _clean_env() -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "ICLAB_EXPERIMENT_MODULES")}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    return env


def test_the_version_has_one_source():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in meta["project"] and meta["project"]["dynamic"] == ["version"]
    assert meta["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "iclab.__version__"}
    assert iclab.__version__.count(".") == 2 and (ROOT / "src" / "iclab" / "py.typed").exists()


def test_the_lock_pins_every_package_and_the_cpu_torch():
    lines = [line.split("#")[0].strip() for line in (ROOT / "requirements.txt").read_text().splitlines()]
    pins = [line for line in lines if line and not line.startswith("-")]
    assert pins and all("==" in pin for pin in pins), [p for p in pins if "==" not in p]
    names = {pin.split("==")[0].lower() for pin in pins}
    assert "torch==2.13.0+cpu" in pins and not any(n.startswith("nvidia") for n in names)
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    for requirement in declared:  # every runtime dependency is in the lock
        name = requirement.split(">")[0].split("<")[0].split("=")[0].split("[")[0].strip().lower()
        assert name in names, name


@pytest.mark.slow
def test_wheel_installs_into_a_fresh_venv_and_runs_outside_the_checkout(tmp_path):
    wheel = _build_wheel(tmp_path)
    with zipfile.ZipFile(wheel) as archive:
        files = archive.namelist()
        metadata = archive.read(next(f for f in files if f.endswith(".dist-info/METADATA"))).decode()
    assert "iclab/py.typed" in files and any(f.endswith("licenses/LICENSE") for f in files)
    # The shipped reference runs (package data): every file of src/iclab/reference, at the same place.
    shipped = {p.relative_to(ROOT / "src").as_posix() for p in (ROOT / "src/iclab/reference").rglob("*") if p.is_file()}
    assert shipped <= set(files), sorted(shipped - set(files))
    assert {f for f in files if f.startswith("iclab/reference/")} == shipped
    # `lm_eval --model iclab-hf`: the .pth at the wheel's root imports the hook module when Python starts.
    assert "iclab_lm_eval.pth" in files and "_iclab_lm_eval_hook.py" in files
    assert "License-Expression: MIT" in metadata and "Requires-Dist: typer" in metadata
    assert f"Version: {iclab.__version__}" in metadata
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    bindir = venv / ("Scripts" if os.name == "nt" else "bin")
    # The lock as constraints: exactly the tested versions, torch the 2.13.0 CPU build (never a CUDA one).
    pip = [str(bindir / "python"), "-m", "pip", "install", "-q", "--no-compile"]
    subprocess.run(
        [*pip, "-c", str(ROOT / "requirements.txt"), str(wheel)],
        check=True,
        env=_clean_env(),
        capture_output=True,
        text=True,
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    def iclab_cli(*args: str) -> str:
        done = subprocess.run(
            [str(bindir / "iclab"), *args], cwd=elsewhere, env=_clean_env(), capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    assert iclab_cli("--version").strip() == f"iclab {iclab.__version__}"
    assert "temperature" in iclab_cli("list") and "multihead" in iclab_cli("list")
    out = iclab_cli(
        "theory", "tau-opt", "--d", "50", "--l", "100", "--cov-scale", "2", "--sigma", "0.5", "--train-sigma", "0.1"
    )
    assert "tau_opt = " in out and float(out.split("tau_opt = ")[1].split()[0]) > 1
    # The paper-settings report from the installed reference runs, judged by the installed code.
    assert "paper-settings report:" in iclab_cli("report", "--reference", "--root", "out")
    assert (elsewhere / "out" / "reference" / "index.html").is_file()
    where = subprocess.run(
        [str(bindir / "python"), "-c", "import iclab, torch; print(iclab.__file__, torch.__version__)"],
        cwd=elsewhere,
        env=_clean_env(),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert str(venv) in where and "+cpu" in where  # the installed copy, on the CPU build of torch
    hook = "import sys; print([type(f).__name__ for f in sys.meta_path][0], 'iclab' in sys.modules)"
    started = subprocess.run(
        [str(bindir / "python"), "-c", hook], cwd=elsewhere, env=_clean_env(), capture_output=True, text=True
    )
    assert started.stdout.split() == ["LmEvalModelsFinder", "False"], started.stderr  # installed, imports no iclab
