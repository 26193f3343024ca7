"""Reading the ``multihead`` results frame (one row per cell) for the figures and comparisons: rows of one part,
the baseline row, seed-averaged curves and values at one length."""

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
    "seed_estimate",
    "pooled",
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


def seed_estimate(rows: pd.DataFrame, key: str, se_key: str | None, n) -> tuple[float, float, float | None]:
    """Mean over seeds of the list column ``key`` at length ``n`` (or of a scalar column when ``n`` is None), and its
    uncertainty: the standard error over seeds (with its degrees of freedom) when there are two or more, else the
    single seed's own standard error over prompts ``se_key`` (dof None: normal). NaN when nothing is there."""
    vals, ses = [], []
    for _, r in rows.iterrows():
        if n is None:
            vals.append(float(r[key]))
            ses.append(float(r[se_key]) if se_key else float("nan"))
        else:
            vals.append(value_at(r["lengths"], r[key], n))
            ses.append(value_at(r["lengths"], r[se_key], n) if se_key else float("nan"))
    v, s = np.asarray(vals, float), np.asarray(ses, float)
    keep = np.isfinite(v)
    v, s = v[keep], s[keep]
    if v.size == 0:
        return float("nan"), float("nan"), None
    if v.size == 1:
        return float(v[0]), float(s[0]), None
    return float(v.mean()), float(v.std(ddof=1) / np.sqrt(v.size)), float(v.size - 1)


def pooled(rows: pd.DataFrame, key: str) -> tuple[float, float, int]:
    """Mean of the scalar column ``key`` over the models in ``rows`` (e.g. every H ≥ 2 model of every seed, the
    paper's claim being the same for all of them), its standard error over models and their count."""
    v = np.asarray(rows[key], float) if key in rows else np.array([])
    v = v[np.isfinite(v)]
    if v.size == 0:
        return float("nan"), float("nan"), 0
    return float(v.mean()), (float(v.std(ddof=1) / np.sqrt(v.size)) if v.size > 1 else float("nan")), int(v.size)


def mean_curve(rows: pd.DataFrame, key: str = "err") -> tuple[np.ndarray, np.ndarray]:
    """Mean over seeds of the list column ``key`` and its standard error (0 for one seed), each (lengths,)."""
    arr = np.array([list(v) for v in rows[key]], dtype=float)  # (seeds, lengths)
    return arr.mean(0), (arr.std(0, ddof=1) / np.sqrt(len(arr)) if len(arr) > 1 else np.zeros(arr.shape[1]))


def value_at(lengths, values, n) -> float:
    """``values`` at length ``n`` (NaN when ``n`` is not among ``lengths``)."""
    lengths = list(lengths)
    return float(values[lengths.index(n)]) if n in lengths else float("nan")
