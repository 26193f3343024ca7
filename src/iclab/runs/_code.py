"""Which of iclab's own source files compute cells and which only judge and present them, and a hash of each.

A run folder records both hashes. Only a change to the code that computes cells (:func:`code_hash`) makes a run
folder another run's: its cells could differ, so it is never resumed or reported without ``--force``. A change to
the claims, notes, figures, the judge, the report or the command line (:func:`judging_hash`) leaves every cell as
it was: ``iclab report`` re-judges the run with the code as it is now, and says so (:meth:`RunFolder.rejudged`).

The split is by file: :func:`is_judging` names the judging files; every other ``.py`` file of the package computes.
``tests/test_code_hash.py`` follows the imports of every experiment's cell functions and checks that none reaches a
judging file, so the split cannot hide a change to what a cell computes.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path, PurePosixPath

__all__ = ["code_hash", "judging_hash", "is_judging", "source_files"]

ROOT = Path(__file__).resolve().parents[1]  # the iclab package
#: top-level sub-packages (and modules) that only judge or present results, or drive the rest (the command line)
_JUDGING_PACKAGES = ("cli", "report", "claims", "__main__.py")
#: file names that, in an experiment package, hold its claims, statistics for them, the tables they read from the
#: results, notes and figures
_JUDGING_NAMES = ("claims.py", "statistics.py", "tables.py", "results.py", "notes.py", "figures.py")
#: a judging module split in parts: ``claims_finetune.py`` beside ``claims.py``
_JUDGING_PREFIXES = ("claims_", "statistics_", "notes_", "figures_")
#: the report helpers inside ``iclab.experiments`` (the judge core is the package ``iclab.claims``)
_JUDGING_CORE = ("_notes.py", "_plot.py")


def is_judging(relative: str | PurePosixPath) -> bool:
    """Whether the source file at ``relative`` (to the iclab package, e.g. ``experiments/ood/claims.py``) only judges
    or presents results: the command line, the report, an experiment package's claims, statistics, notes and
    figures, and the judge core (``iclab.claims``). Every other file computes cells."""
    parts = PurePosixPath(relative).parts
    if parts[0] in _JUDGING_PACKAGES:
        return True
    if parts[0] != "experiments":
        return False
    if len(parts) == 2:
        return parts[-1] in _JUDGING_CORE
    return parts[-1] in _JUDGING_NAMES or parts[-1].startswith(_JUDGING_PREFIXES)


def source_files() -> list[PurePosixPath]:
    """Every ``.py`` file of the iclab package, relative to it, sorted."""
    return sorted(PurePosixPath(p.relative_to(ROOT).as_posix()) for p in ROOT.rglob("*.py"))


def _digest(judging: bool) -> str:
    digest = hashlib.sha256()
    for rel in source_files():
        if is_judging(rel) == judging:
            digest.update(str(rel).encode())
            digest.update((ROOT / rel).read_bytes())
    return digest.hexdigest()[:16]


@lru_cache(maxsize=1)
def code_hash() -> str:
    """SHA-256 (16 hex) of the iclab source files that compute cells (every file :func:`is_judging` does not name):
    a run folder written by other such code is never resumed.

    Unlike the version string (fixed between releases) or the git revision (absent outside a checkout,
    blind to uncommitted edits), it changes exactly when the code that computes cells changes."""
    return _digest(judging=False)


@lru_cache(maxsize=1)
def judging_hash() -> str:
    """SHA-256 (16 hex) of the files :func:`is_judging` names: a change re-judges a run, never refuses it."""
    return _digest(judging=True)
