"""The metrics stream of a training run: ``metrics.jsonl`` (one JSON record per logged step) and helpers to
read it as a DataFrame or export it to Parquet.

Every record has ``step`` (optimiser steps done), ``loss``, ``lr``, ``seconds`` (wall time since the start of
this session), ``group/<name>`` for per-group losses, ``<probe>/<key>`` for probes and ``eval/<metric>``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable

import pandas as pd

__all__ = ["METRICS", "read_metrics", "metrics_to_parquet", "write_metrics"]

METRICS = "metrics.jsonl"


def _path(run_dir_or_file: str | Path) -> Path:
    p = Path(run_dir_or_file)
    return p / METRICS if p.is_dir() else p


def write_metrics(path: Path, records: Iterable[dict[str, Any]], *, append: bool = True) -> None:
    """Append (or rewrite) JSONL records; values that are not JSON-native are written as floats."""
    with path.open("a" if append else "w") as fh:
        for rec in records:
            fh.write(json.dumps(rec, default=float) + "\n")


def read_metrics(run_dir_or_file: str | Path) -> pd.DataFrame:
    """The metrics stream of a run folder (or a ``metrics.jsonl`` path) as a DataFrame, one row per record.

    A truncated last line (a run killed mid-write) is skipped.
    """
    rows = []
    with _path(run_dir_or_file).open() as fh:
        for line in fh:
            line = line.strip()
            if not line:
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return pd.DataFrame(rows)


def metrics_to_parquet(run_dir_or_file: str | Path, out: str | Path | None = None) -> Path:
    """Export the metrics stream to Parquet (``metrics.parquet`` beside it unless ``out`` is given).

    List-valued columns (e.g. per-head probe values) are kept as Parquet lists.
    """
    src = _path(run_dir_or_file)
    out = Path(out) if out is not None else src.with_suffix(".parquet")
    read_metrics(src).to_parquet(out, index=False)
    return out
