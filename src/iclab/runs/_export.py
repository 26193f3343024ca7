"""``iclab export``: a run's result store as one CSV or Parquet table, and reading it back.

One row per cell (done and failed), columns = cell keys + metrics + ``_key``, ``_status``, ``_seconds``,
``_error``. Lists (curves) and dicts are stored as JSON text in both formats so that the two files have the
same columns and types; :func:`read_export` parses them back, so ``read_export(export_results(d))`` equals
``load_results(d, status=None)``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from iclab.config import check_choice
from iclab.runs._execute import load_results
from iclab.runs._folder import RunFolder

__all__ = ["export_results", "read_export", "EXPORT_FORMATS"]

EXPORT_FORMATS = ("csv", "parquet")
_JSON_PREFIX = ("[", "{")


def export_results(run_dir: str | Path, fmt: str = "csv", out: str | Path | None = None) -> Path:
    """Write the results of ``run_dir`` to ``out`` (default ``RUN_DIR/results.<fmt>``); return the path."""
    check_choice("--format", fmt, EXPORT_FORMATS)
    RunFolder.load(run_dir)
    frame = load_results(run_dir, status=None)
    for col in frame.columns:  # nested values (curves) as JSON text
        if frame[col].map(lambda v: isinstance(v, (list, dict))).any():
            frame[col] = frame[col].map(lambda v: json.dumps(v) if isinstance(v, (list, dict)) else v)
    target = Path(out) if out is not None else Path(run_dir) / f"results.{fmt}"
    target.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "csv":
        frame.to_csv(target, index=False)
    else:
        frame.to_parquet(target, index=False)
    return target


def read_export(path: str | Path) -> pd.DataFrame:
    """Read a file written by :func:`export_results` (CSV or Parquet), JSON-text columns parsed back."""
    path = Path(path)
    frame = pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path)
    for col in frame.columns:
        values = frame[col]
        if values.map(lambda v: isinstance(v, str) and v.startswith(_JSON_PREFIX)).any():
            frame[col] = values.map(lambda v: json.loads(v) if isinstance(v, str) and v.startswith(_JSON_PREFIX)
                                    else v)
    return frame
