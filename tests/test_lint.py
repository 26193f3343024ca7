"""ruff, configured in ``pyproject.toml``: the lint rules hold over the whole tree, and the files listed in
``FORMATTED`` are in ruff's format (widen it to the whole tree once the tree has been formatted)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINTED = ["src", "tests", "benchmarks", "examples", "docs"]
FORMATTED = [
    "examples",
    "docs/_hooks",
    "src/iclab/tracking",
    "src/iclab/cli/_show.py",
    "src/iclab/cli/_plan.py",
    "src/iclab/cli/_tracking.py",
    "src/iclab/cli/_global_options.py",
    "tests/test_lint.py",
]


def _ruff(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ruff", *args], cwd=ROOT, capture_output=True, text=True)


def test_ruff_check():
    done = _ruff("check", "--no-cache", *LINTED)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr


def test_ruff_format():
    done = _ruff("format", "--check", "--no-cache", *FORMATTED)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr
