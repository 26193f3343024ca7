"""``iclab export``: a run's result store as one CSV or Parquet table, and reading it back.

One row per cell (done and failed), columns = cell keys + metrics + ``_key``, ``_status``, ``_seconds``,
``_error``. In Parquet, curves (lists of numbers, nested or not) are native list columns; in CSV, and for dicts
in both formats, they are JSON text. :func:`read_export` turns both back into Python lists, so
``read_export(export_results(d))`` equals ``load_results(d, status=None)``.

Exporting reads the store and writes only the target file, atomically (:func:`iclab.files.atomic_write`): a run
without any cell, or a damaged store, is refused before anything is written, and so is a target that is a folder,
cannot be written, or whose suffix is not the format's (``--format parquet --out x.csv``). An existing target is
replaced only when it is an earlier export of this same run (it has the ``_key`` column and every key in it is a
cell of this run), or with ``force=True`` (``--force``): iclab never overwrites a file it did not write.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from iclab.config import check_choice
from iclab.errors import ConfigError, RunFolderError
from iclab.files import atomic_write, check_out
from iclab.runs._execute import load_results
from iclab.runs._folder import RunFolder

__all__ = ["export_results", "read_export", "EXPORT_FORMATS"]

EXPORT_FORMATS = ("csv", "parquet")
_JSON_PREFIX = ("[", "{")


def export_results(run_dir: str | Path, fmt: str = "csv", out: str | Path | None = None, force: bool = False) -> Path:
    """Write the results of ``run_dir`` to ``out`` (default ``RUN_DIR/results.<fmt>``); return the path.

    An existing ``out`` that is not an earlier export of this run is refused unless ``force``."""
    check_choice("--format", fmt, EXPORT_FORMATS)
    RunFolder.load(run_dir)
    target = Path(out) if out is not None else Path(run_dir) / f"results.{fmt}"
    if target.suffix.lower() != f".{fmt}":  # read_export and the guard below read a file by its suffix
        raise ConfigError("--out", str(target), f"a file name ending in .{fmt} for --format {fmt}")
    if target.is_dir():
        check_out(target, force, lambda p: False, "an export of this run")
    frame = load_results(run_dir, status=None)
    if frame.empty:
        raise RunFolderError(f"{run_dir} holds no finished or failed cell yet: nothing to export (nothing written)")
    check_out(target, force, lambda p: _export_of(p, set(frame["_key"])), "an export of this run")
    frame = _as_table(frame, lists_native=fmt == "parquet")
    try:
        with atomic_write(target) as tmp:  # a crash or a full disk leaves the old export or none, never half
            frame.to_csv(tmp, index=False) if fmt == "csv" else frame.to_parquet(tmp, index=False)
    except OSError as exc:
        raise RunFolderError(f"cannot write {target}: {exc.strerror or exc}") from None
    return target


def _export_of(path: Path, keys: set[str]) -> bool:
    """Whether ``path`` reads as an export (a ``_key`` column) whose every key is one of ``keys``."""
    try:
        if path.suffix == ".parquet":
            column = pd.read_parquet(path, columns=["_key"])["_key"]
        else:
            column = pd.read_csv(path, usecols=["_key"], dtype=str)["_key"]
    except Exception:  # noqa: BLE001 - whatever does not read as an export (any format, any error) is not ours
        return False
    return len(column) > 0 and set(column.dropna()) <= keys and not column.isna().any()


def _as_table(frame: pd.DataFrame, lists_native: bool) -> pd.DataFrame:
    """Nested values as JSON text, except numeric lists when ``lists_native`` (Parquet list columns)."""
    frame = frame.copy()
    for col in frame.columns:
        nested = frame[col].map(lambda v: isinstance(v, (list, dict)))
        if not nested.any():
            continue
        if lists_native and _numeric_lists(frame[col][nested]):
            frame[col] = frame[col].map(lambda v: v if isinstance(v, list) else None)
        else:
            frame[col] = frame[col].map(lambda v: json.dumps(v) if isinstance(v, (list, dict)) else v)
    return frame


def _numeric_lists(values: pd.Series) -> bool:
    """Every value is a list whose leaves are numbers (or None), nested to one common depth."""

    def depth(v: Any) -> int | None:
        if isinstance(v, list):
            inner = {depth(x) for x in v}
            return None if len(inner) > 1 or None in inner else 1 + (inner.pop() if inner else 0)
        return 0 if v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)) else None

    depths = {depth(v) for v in values}
    return len(depths) == 1 and None not in depths and depths.pop() >= 1


def _plain(value: Any) -> Any:
    """NumPy arrays (Parquet list cells) as nested Python lists."""
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)) and getattr(value, "ndim", 0) >= 1:
        return [_plain(v) for v in value]
    return value.item() if hasattr(value, "item") and getattr(value, "ndim", None) == 0 else value


def read_export(path: str | Path) -> pd.DataFrame:
    """Read a file written by :func:`export_results` (CSV or Parquet): list columns and JSON text as lists."""
    path = Path(path)
    frame = pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path)
    for col in frame.columns:
        values = frame[col]
        if values.map(lambda v: hasattr(v, "ndim") and getattr(v, "ndim", 0) >= 1).any():
            frame[col] = values.map(lambda v: float("nan") if v is None else _plain(v))  # as load_results has it
        elif values.map(lambda v: isinstance(v, str) and v.startswith(_JSON_PREFIX)).any():
            frame[col] = values.map(lambda v: json.loads(v) if isinstance(v, str) and v.startswith(_JSON_PREFIX) else v)
    return frame
