"""Reading the ``multihead`` results frame (one row per cell) for the figures and notes: rows of one part, the
baseline row, seed-averaged curves and values at one length."""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = [
    "part_rows",
    "baseline_row",
    "ratio_row",
    "lengthgen_rows",
    "mean_curve",
    "value_at",
]


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


def ratio_row(df: pd.DataFrame) -> pd.Series | None:
    r = part_rows(df, "ratio")
    return None if r.empty else r.iloc[0]


def lengthgen_rows(cfg, df: pd.DataFrame) -> pd.DataFrame:
    """The length-generalisation models: the ``lengthgen`` part, or, when it was trained at ``n_train`` (the
    paper's setting), the ``iso`` softmax model with ``lengthgen_heads`` heads and the ``iso`` linear model."""
    lg = part_rows(df, "lengthgen")
    if not lg.empty or cfg.lengthgen_train != cfg.n_train:
        return lg
    iso = part_rows(df, "iso")
    if iso.empty:
        return iso
    keep = ((iso["attention"] == "softmax") & (iso["H"] == cfg.lengthgen_heads)) | (iso["attention"] == "linear")
    return iso[keep]


def mean_curve(rows: pd.DataFrame, key: str = "err") -> tuple[np.ndarray, np.ndarray]:
    """Mean over seeds of the list column ``key`` and its standard error (0 for one seed), each (lengths,)."""
    arr = np.array([list(v) for v in rows[key]], dtype=float)  # (seeds, lengths)
    return arr.mean(0), (arr.std(0, ddof=1) / np.sqrt(len(arr)) if len(arr) > 1 else np.zeros(arr.shape[1]))


def value_at(lengths, values, n) -> float:
    """``values`` at length ``n`` (NaN when ``n`` is not among ``lengths``)."""
    lengths = list(lengths)
    return float(values[lengths.index(n)]) if n in lengths else float("nan")
