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


def test_no_control_characters_in_sources_and_docs():
    """A stray control character (a "\\a" that a non-raw docstring turned into BEL in ``\\arg``) passes ruff but
    breaks the rendered math of the API pages: no text file of the tree holds one (tab, newline, CR allowed)."""
    bad = {chr(c) for c in range(32)} - {"\t", "\n", "\r"}
    found = []
    for top in LINTED:
        for path in (ROOT / top).rglob("*"):
            if path.suffix in (".py", ".md") and path.is_file():
                text = path.read_text(encoding="utf-8")
                found += [
                    f"{path.relative_to(ROOT)}:{n}" for n, line in enumerate(text.splitlines(), 1) if bad & set(line)
                ]
    assert not found, found
