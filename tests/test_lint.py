"""ruff, configured in ``pyproject.toml``: the lint rules hold over the whole tree, and the files listed in
``FORMATTED`` (the whole Python tree) is in ruff's format."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINTED = ["src", "tests", "benchmarks", "examples", "docs"]
FORMATTED = ["src", "tests", "benchmarks", "examples", "docs/_hooks"]


def _ruff(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ruff", *args], cwd=ROOT, capture_output=True, text=True)


def test_ruff_check():
    done = _ruff("check", "--no-cache", *LINTED)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr


def test_ruff_format():
    done = _ruff("format", "--check", "--no-cache", *FORMATTED)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr
