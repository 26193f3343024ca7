"""Log a finished run folder to a tracker: its config, one metrics record per finished cell, its figures and its
report. A cell's metrics are its numeric scalar columns (grid coordinates and results alike, ``cell/<name>``),
at step = the cell's position in the grid order; curves (list columns) travel in ``cells.csv``."""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path
from typing import Any, Mapping

import pandas as pd

from iclab.tracking._base import Tracker, flat_params, metric_key

__all__ = ["log_run_folder", "cell_metrics"]

_RUN_FILES = ("config.json", "summary.json", "report.md")


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


def log_run_folder(tracker: Tracker, folder: str | Path, meta: Mapping[str, Any], results: pd.DataFrame) -> int:
    """Log run folder ``folder`` (its ``config.json`` contents ``meta`` and its done ``results``) to ``tracker``;
    return the number of cells logged. The tracker is not finished here."""
    folder = Path(folder)
    params = {k: meta[k] for k in ("experiment", "preset", "config_hash", "iclab_version", "code_hash") if k in meta}
    tracker.log_params({**params, **flat_params(meta.get("config", {}), "config.")})
    rows = results.to_dict("records")
    for step, row in enumerate(rows):
        tracker.log_metrics(cell_metrics(row), step)
    tracker.log_metrics(_summary_metrics(folder, results), len(rows))
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
    return len(rows)
