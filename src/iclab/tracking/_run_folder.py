"""Log a run to a tracker: its config when it starts (:func:`log_run_start`), one metrics record per cell as the
cell finishes (:func:`log_cell`), and its figures, report and counts at the end (:func:`log_run_end`);
:func:`log_run_folder` does all three for a finished run folder. A cell's metrics are its numeric scalar columns
(grid coordinates and results alike, ``cell/<name>``), at step = the cell's index in the grid; curves (list
columns) travel in ``cells.csv``."""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path
from typing import Any, Mapping

import pandas as pd

from iclab.tracking._base import Tracker, flat_params, metric_key

__all__ = ["log_run_folder", "log_run_start", "log_cell", "log_run_end", "cell_metrics"]

_RUN_FILES = ("config.json", "summary.json", "report.md")
_RUN_PARAMS = ("experiment", "preset", "config_hash", "iclab_version", "code_hash")


def cell_metrics(row: Mapping[str, Any]) -> dict[str, float]:
    """The numeric, finite scalar entries of a results row as ``cell/<name>``; ``_seconds`` as
    ``cell/seconds``; bookkeeping columns (``_key``, ``_status`` …), text and lists are left out."""
    out = {}
    for key, value in row.items():
        if key == "_seconds":
            key = "seconds"
        elif key.startswith("_"):
            continue
        if isinstance(value, bool):
            value = float(value)
        if isinstance(value, (int, float)) and math.isfinite(value):
            out[metric_key(f"cell/{key}")] = float(value)
    return out


def _summary_metrics(folder: Path, results: pd.DataFrame) -> dict[str, float]:
    """Counts of the run: cells done and failed, and the paper comparisons by verdict (``agrees``,
    ``disagrees``, ``not judged``) from ``summary.json``."""
    out = {"run/cells_done": float(len(results))}
    summary_path = folder / "summary.json"
    if summary_path.exists():
        summary = json.loads(summary_path.read_text())
        out["run/cells_failed"] = float(summary.get("cells", {}).get("failed", 0))
        verdicts = [str(c.get("verdict", "")) for c in summary.get("comparisons", [])]
        for verdict in ("agrees", "disagrees", "not judged"):
            out[metric_key(f"run/claims_{verdict.replace(' ', '_')}")] = float(verdicts.count(verdict))
    return out


def log_run_start(tracker: Tracker, meta: Mapping[str, Any]) -> None:
    """Log a run's settings: ``experiment``, ``preset``, ``config_hash``, ``iclab_version``, ``code_hash`` (those
    ``meta`` has; a run folder's ``config.json`` has all) and every field of ``meta["config"]`` as ``config.<name>``."""
    params = {k: meta[k] for k in _RUN_PARAMS if k in meta}
    tracker.log_params({**params, **flat_params(meta.get("config", {}), "config.")})


def log_cell(tracker: Tracker, step: int, row: Mapping[str, Any]) -> None:
    """Log one finished cell (its results ``row``, :func:`cell_metrics`) at ``step`` and send it at once."""
    tracker.log_metrics(cell_metrics(row), step)
    tracker.flush()


def log_run_end(tracker: Tracker, folder: str | Path, results: pd.DataFrame, step: int) -> None:
    """Log what a run folder holds once its run is done: its counts (cells done and failed, claims by verdict) at
    ``step`` (after every cell's), the figures with their CSVs, ``config.json``, ``summary.json``, ``report.md``
    and the done cells ``results`` as ``cells.csv``. The tracker is not finished here."""
    folder = Path(folder)
    tracker.log_metrics(_summary_metrics(folder, results), step)
    for png in sorted((folder / "figures").glob("*.png")):
        tracker.log_image(png, f"figures/{png.stem}")
        if png.with_suffix(".csv").exists():
            tracker.log_artifact(png.with_suffix(".csv"), "figures")
    for name in _RUN_FILES:
        if (folder / name).exists():
            tracker.log_artifact(folder / name)
    with tempfile.TemporaryDirectory() as tmp:
        table = Path(tmp) / "cells.csv"
        results.to_csv(table, index=False)
        tracker.log_artifact(table)
    tracker.flush()


def log_run_folder(tracker: Tracker, folder: str | Path, meta: Mapping[str, Any], results: pd.DataFrame) -> int:
    """Log run folder ``folder`` (its ``config.json`` contents ``meta`` and its done ``results``, in grid order)
    after the fact: start, each cell at its position in ``results``, end. Return the number of cells logged. The
    tracker is not finished here."""
    log_run_start(tracker, meta)
    rows = results.to_dict("records")
    for step, row in enumerate(rows):
        log_cell(tracker, step, row)
    log_run_end(tracker, folder, results, len(rows))
    return len(rows)
