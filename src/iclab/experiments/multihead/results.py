"""Reading the ``multihead`` results frame (one row per cell) for the figures and notes: rows of one part, the
baseline row, seed-averaged curves and values at one length."""

from __future__ import annotations

import numpy as np
import pandas as pd

from iclab.claims import part_rows

__all__ = [
    "INTS",
    "baseline_row",
    "ratio_row",
    "lengthgen_rows",
    "mean_curve",
    "value_at",
]

#: the integer columns of multihead's parts (read back as floats where other parts leave them empty)
INTS = ("H",)


def baseline_row(df: pd.DataFrame) -> pd.Series | None:
    b = part_rows(df, "baseline", ints=INTS)
    return None if b.empty else b.iloc[0]


def ratio_row(df: pd.DataFrame) -> pd.Series | None:
    r = part_rows(df, "ratio", ints=INTS)
    return None if r.empty else r.iloc[0]


def lengthgen_rows(cfg, df: pd.DataFrame) -> pd.DataFrame:
    """The length-generalisation models: the ``lengthgen`` part, or, when it was trained at ``n_train`` (the
    paper's setting), the ``iso`` softmax model with ``lengthgen_heads`` heads and the ``iso`` linear model."""
    lg = part_rows(df, "lengthgen", ints=INTS)
    if not lg.empty or cfg.lengthgen_train != cfg.n_train:
        return lg
    iso = part_rows(df, "iso", ints=INTS)
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
