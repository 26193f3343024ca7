"""Reading the ``multihead`` results frame (one row per cell) for the figures and comparisons: rows of one part,
the baseline row, seed-averaged curves and values at one length."""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["part_rows", "baseline_row", "mean_curve", "value_at", "format_number"]


def part_rows(df: pd.DataFrame, part: str, attention: str | None = None) -> pd.DataFrame:
    """Rows of ``part`` (and of ``attention`` when given), with ``H`` as int."""
    if "part" not in df:
        return df.iloc[0:0]
    out = df[df["part"] == part].copy()
    if "H" in out and len(out) and out["H"].notna().all():
        out["H"] = out["H"].astype(int)
    if attention is not None:
        out = out[out["attention"] == attention] if "attention" in out else out.iloc[0:0]
    return out


def baseline_row(df: pd.DataFrame) -> pd.Series | None:
    b = part_rows(df, "baseline")
    return None if b.empty else b.iloc[0]


def mean_curve(rows: pd.DataFrame, key: str = "err") -> tuple[np.ndarray, np.ndarray]:
    """Mean over seeds of the list column ``key`` and its standard error (0 for one seed), each (lengths,)."""
    arr = np.array([list(v) for v in rows[key]], dtype=float)  # (seeds, lengths)
    return arr.mean(0), (arr.std(0, ddof=1) / np.sqrt(len(arr)) if len(arr) > 1 else np.zeros(arr.shape[1]))


def value_at(lengths, values, n) -> float:
    """``values`` at length ``n`` (NaN when ``n`` is not among ``lengths``)."""
    lengths = list(lengths)
    return float(values[lengths.index(n)]) if n in lengths else float("nan")


def format_number(x) -> str:
    return "—" if x is None or (isinstance(x, float) and not np.isfinite(x)) else f"{x:.4g}"
