"""Reference runs: the ``paper`` preset of every experiment, run once on one commit and shipped with the package,
re-judged by the installed code.

A reference run is a run folder stripped to what judging needs, under ``iclab/reference/<experiment>-paper/``:

- ``config.json`` — the run's own record (config, config hash, seed, iclab version, git revision, code hash);
- ``results.sqlite`` — its result store (every finished and failed cell; the ``sweeps`` log with wall times);
- ``reference.json`` — how it was made: commit, date, machine, wall and CPU seconds, cells done and failed.

Nothing is recomputed: :func:`reference_summary` loads the cells and judges every declared claim with the installed
``claims``/``compare`` (:func:`iclab.report._run_report.rejudged_summary`), so a change of the judge shows up as a
change of a reference verdict (guarded by ``tests/test_reference.py`` against a committed snapshot).
:func:`ship_reference` makes one from a finished run folder.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import sqlite3
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from iclab.errors import RunFolderError
from iclab.experiments import get_experiment
from iclab.report._run_report import rejudged_summary

__all__ = ["REFERENCE_DIR", "reference_runs", "reference_summary", "reference_meta", "ship_reference"]

#: Where the shipped reference runs live (package data of ``iclab``).
REFERENCE_DIR = Path(__file__).resolve().parents[1] / "reference"
_PRESET = "paper"
_FILES = ("config.json", "results.sqlite")


def reference_runs(root: Path | None = None) -> dict[str, Path]:
    """``{experiment: folder}`` of every shipped reference run (``<experiment>-paper`` with a ``config.json``)."""
    root = REFERENCE_DIR if root is None else Path(root)
    if not root.is_dir():
        return {}
    out = {}
    for folder in sorted(root.iterdir()):
        if folder.is_dir() and (folder / "config.json").is_file():
            out[json.loads((folder / "config.json").read_text())["experiment"]] = folder
    return out


def reference_meta(folder: Path) -> dict[str, Any]:
    """``reference.json`` of a reference folder (commit, date, machine, wall and CPU seconds, cell counts)."""
    path = Path(folder) / "reference.json"
    return json.loads(path.read_text()) if path.is_file() else {}


def reference_summary(experiment: str, root: Path | None = None) -> dict[str, Any] | None:
    """The shipped ``paper`` run of ``experiment`` re-judged by the installed code: ``{"comparisons": [...],
    "errors": [...], "meta": reference.json, "path": folder}``; ``None`` when none is shipped."""
    folder = reference_runs(root).get(experiment)
    if folder is None:
        return None
    summary = rejudged_summary(folder, get_experiment(experiment))
    return {**summary, "meta": reference_meta(folder), "path": str(folder)}


def ship_reference(run_dir: str | Path, root: Path | None = None, *, cpu_seconds: float | None = None) -> Path:
    """Copy the finished ``paper`` run ``run_dir`` into ``root/<experiment>-paper/`` (default: the package's
    reference folder): ``config.json``, a compacted single-file copy of ``results.sqlite`` (WAL folded in, no side
    files) and ``reference.json`` (commit, date, machine, wall time summed over the sweep log, ``cpu_seconds`` if
    measured, cells done/failed). An existing reference of the same experiment is replaced."""
    run_dir = Path(run_dir)
    meta = json.loads((run_dir / "config.json").read_text())
    if meta.get("preset") != _PRESET:
        raise RunFolderError(f"{run_dir}: preset {meta.get('preset')!r}; a reference run is a {_PRESET!r} run")
    root = REFERENCE_DIR if root is None else Path(root)
    dest = root / f"{meta['experiment']}-{_PRESET}"
    tmp = dest.with_name(dest.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    shutil.copy2(run_dir / "config.json", tmp / "config.json")
    src = sqlite3.connect(f"file:{run_dir / 'results.sqlite'}?mode=ro", uri=True)
    try:
        src.execute(f"VACUUM INTO '{tmp / 'results.sqlite'}'")
        done, failed = (
            src.execute("SELECT count(*) FROM cells WHERE status = ?", (status,)).fetchone()[0]
            for status in ("done", "failed")
        )
        sweeps = src.execute("SELECT started, finished FROM sweeps").fetchall()
    finally:
        src.close()
    wall = sum((f - s) for s, f in sweeps if f is not None)
    ref = {
        "experiment": meta["experiment"],
        "preset": _PRESET,
        "commit": meta.get("git_revision"),
        "code_hash": meta.get("code_hash"),
        "iclab_version": meta.get("iclab_version"),
        "shipped": datetime.now(timezone.utc).strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, {_cpu_name()}, {_cores()} CPU cores",
        "device": str(meta["config"].get("device") or "cpu"),
        "wall_seconds": round(wall, 1),
        "cpu_seconds": None if cpu_seconds is None else round(float(cpu_seconds), 1),
        "invocations": len(sweeps),
        "cells_done": done,
        "cells_failed": failed,
    }
    (tmp / "reference.json").write_text(json.dumps(ref, indent=2) + "\n")
    shutil.rmtree(dest, ignore_errors=True)
    tmp.rename(dest)
    return dest


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
