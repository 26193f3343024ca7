"""The paper's reported numbers and the measured tables of the ``dispersion`` experiment that its figures and
claims share (arXiv:2410.01104; docs/papers/dispersion.md §1.2, §5, §6).

Every number of the paper here is second-hand (docs/papers/dispersion.md §1.2 explains the tags): [PN] a summary of
the ICML version written by a language model, [keras] a third-party implementation's docstring (maybe from arXiv
v1), [δ-repl] a replication script, [acmrep] a reproducibility page quoting the ICML text. They are marked as such in
every table.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from iclab.claims import one_per_unit
from iclab.experiments.dispersion.config import DIAGNOSTICS, beta_grid
from iclab.theory.dispersion import best_beta_per_bin, fit_beta_polynomial

__all__ = [
    "PAPER_TABLE",
    "PAPER_DELTA",
    "rows",
    "stack",
    "retrieval_table",
    "beta_fit",
    "poly_summary",
    "log_n_slope",
    "loglog_slope",
    "retrieval_seeds",
    "real_tables",
    "global_heads",
    "ONSET_N",
    "DIAGNOSTICS",
]

# n: (softmax %, adaptive %, p-value or None, source tag) — the paper's max-retrieval table, all second-hand
PAPER_TABLE = {
    16: (98.6, 98.6, 0.4, "PN"),
    64: (94.3, 94.5, 0.002, "PN"),
    256: (81.3, 82.1, 2e-4, "PN"),
    512: (70.1, 72.5, None, "keras"),
    1024: (53.8, 57.7, 1e-4, "PN, keras"),
    2048: (35.7, 39.4, None, "keras"),
    4096: (22.6, 24.9, 0.02, "PN"),
    16384: (12.4, 14.0, 4e-3, "PN"),
}
ONSET_N = 1024  # δ of the onset claim (Lemma 2.1) is read at the largest measured context length n ≤ this
PAPER_DELTA = {"Gemma 2B": (2.28, 14.78, 5.69, 2.05), "Gemma 7B": (0.09, 32.74, 5.82, 2.61)}  # [PN; δ-repl]


#: the columns that name a cell (docs/papers/dispersion.md §5): its setting and its unit of replication (seed)
CELL_KEYS = ("part", "normaliser", "model", "task", "n_pairs", "attention", "seed")


def rows(df: pd.DataFrame, **eq) -> pd.DataFrame:
    """The rows of ``df`` whose columns equal ``eq`` (none when a column is missing), one per cell: a repeated row
    of the same cell is one unit, never two (:func:`iclab.claims._cells.one_per_unit`)."""
    sel = df
    for k, v in eq.items():
        if k not in sel.columns:
            return sel.iloc[0:0]
        sel = sel[sel[k] == v]
    return one_per_unit(sel, CELL_KEYS)


def stack(rows: pd.DataFrame, col: str) -> np.ndarray:
    """A list-valued column as an array ``(rows, length)``."""
    return np.array([np.asarray(v, float) for v in rows[col]]) if len(rows) else np.zeros((0, 0))


def _sd(x: np.ndarray, n_sizes: int) -> np.ndarray:
    """Sample sd over seeds (axis 0); zeros for a single seed."""
    return x.std(0, ddof=1) if len(x) > 1 else np.zeros(n_sizes)


def _paired_p_values(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Paired t-test p-value per size (columns) of ``b`` vs ``a`` across seeds; 1 where they are equal everywhere."""
    p = np.full(a.shape[1], np.nan)
    if len(a) > 1:
        with np.errstate(all="ignore"):
            for j in range(a.shape[1]):
                d = b[:, j] - a[:, j]
                p[j] = 1.0 if np.allclose(d, 0) else stats.ttest_rel(b[:, j], a[:, j]).pvalue
    return p


def retrieval_table(df: pd.DataFrame) -> pd.DataFrame:
    """Per test size: mean/sd accuracy (%) of softmax, adaptive (paired, same sets), sigmoid, ssmax; paired t-test."""
    soft = rows(df, part="retrieval", normaliser="softmax")
    if not len(soft):
        return pd.DataFrame()
    sizes = np.asarray(soft["test_sizes"].iloc[0], float).astype(int)
    a, b = 100 * stack(soft, "acc"), 100 * stack(soft, "acc_adaptive")
    out = {
        "n": sizes,
        "softmax": a.mean(0),
        "softmax_sd": _sd(a, len(sizes)),
        "adaptive": b.mean(0),
        "adaptive_sd": _sd(b, len(sizes)),
        "gain": (b - a).mean(0),
        "seeds": np.full(len(sizes), len(a)),
        "p_value": _paired_p_values(a, b),
    }
    for v in ("sigmoid", "ssmax"):
        r = rows(df, part="retrieval", normaliser=v)
        if len(r):
            acc = 100 * stack(r, "acc")
            out[v], out[v + "_sd"] = acc.mean(0), _sd(acc, len(sizes))
    for k in DIAGNOSTICS:
        out[k] = stack(soft, k).mean(0)
    out["delta_sup"] = np.full(len(sizes), float(np.max(soft["delta_sup"])))
    return pd.DataFrame(out)


def beta_fit(config, df: pd.DataFrame) -> dict | None:
    """Pool the fit data of all softmax models; β*(bin) = argmin summed CE over the β grid; degree-4 fit
    (docs/papers/dispersion.md §4.7)."""
    soft = rows(df, part="retrieval", normaliser="softmax")
    if not len(soft) or "fit_loss" not in soft.columns:
        return None
    grid = beta_grid(config)
    nb = int(soft["fit_n_bins"].iloc[0])
    loss = sum(np.asarray(v, float).reshape(nb, len(grid)) for v in soft["fit_loss"])
    counts = sum(np.asarray(v, float) for v in soft["fit_counts"])
    centres = (np.arange(nb) + 0.5) * config.entropy_bin
    best = best_beta_per_bin(loss, counts, grid)
    # only bins above the gate (the polynomial is never used at H <= 0.5; there sharpening a correct head always
    # lowers the loss, so the best grid β is the grid's edge) with enough rows
    use = (counts >= max(20, 0.001 * counts.sum())) & (centres > 0.5)
    coeffs = fit_beta_polynomial(centres[use], best[use], counts[use]) if use.sum() >= 5 else None
    rng = (
        (float(centres[use].min() - config.entropy_bin / 2), float(centres[use].max() + config.entropy_bin / 2))
        if use.any()
        else (float("nan"), float("nan"))
    )
    return {
        "centres": centres,
        "best": best,
        "counts": counts,
        "use": use,
        "coeffs": coeffs,
        "grid": grid,
        "range": rng,
    }


def poly_summary(coeffs) -> str:
    """Polynomial coefficients as ``[c4, c3, …]`` with 3 significant digits."""
    return "[" + ", ".join(f"{c:.3g}" for c in coeffs) + "]"


# ---- per-seed tables (docs/papers/dispersion.md §5.7–5.9) ----


def log_n_slope(n, y) -> np.ndarray:
    """Least-squares slope of y against log n along the last axis of ``y`` (its change per nat of n)."""
    x = np.log(np.asarray(n, float))
    xc = x - x.mean()
    return (np.asarray(y, float) * xc).sum(-1) / (xc**2).sum()


def loglog_slope(n, y) -> np.ndarray:
    """Least-squares slope of log y against log n along the last axis of ``y`` (NaN where any y <= 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return log_n_slope(n, np.log(np.asarray(y, float)))  # (..., S) -> (...)


def retrieval_seeds(df: pd.DataFrame) -> dict | None:
    """Per softmax seed (rows) and test size (columns): accuracies (%), max coefficient; per seed: δ_sup and the
    weight-allowed spread (Prop. 3.1). None without softmax retrieval cells."""
    soft = rows(df, part="retrieval", normaliser="softmax")
    if not len(soft):
        return None
    out = {
        "n": np.asarray(soft["test_sizes"].iloc[0], float),
        "acc": 100 * stack(soft, "acc"),
        "acc_adaptive": 100 * stack(soft, "acc_adaptive"),
        "max_coef": stack(soft, "max_coef"),
        "delta_sup": soft["delta_sup"].to_numpy(float),
    }
    for k in ("allowed_spread", "sigma_q", "sigma_k", "hq_max", "hx_max"):
        out[k] = soft[k].to_numpy(float) if k in soft.columns else np.full(len(soft), np.nan)
    return out


def real_tables(df: pd.DataFrame) -> dict:
    """Per real model with measurements: ``n (S,)``, ``global (L,)`` bool, ``window``, ``source`` and each statistic
    as ``(segments, L, H, S)``; models that could not be loaded map to ``{"reason": …}``."""
    rl = rows(df, part="real")
    out: dict = {}
    for model in dict.fromkeys(rl["model"]) if len(rl) else []:
        r = rl[rl["model"] == model].sort_values("seed")
        ok = r[r["available"] == 1]
        if not len(ok):
            out[model] = {"reason": str(r["reason"].iloc[0])}
            continue
        L, H = int(ok["real_layers"].iloc[0]), int(ok["real_heads"].iloc[0])
        n = np.asarray(ok["real_n"].iloc[0], float)
        t = {
            "n": n,
            "global": np.asarray(ok["real_global"].iloc[0], float) > 0.5,
            "window": float(ok["real_window"].iloc[0]),
            "source": str(ok["source"].iloc[0]),
            "causal": bool(ok["causal"].iloc[0]),
            "segments": len(ok),
        }
        for k in ("max_coef", "first_coef", "rest_max_coef", "delta", "delta_max"):
            t[k] = stack(ok, "real_" + k).reshape(len(ok), L, H, len(n))
        out[model] = t
    return out


def global_heads(t: dict) -> np.ndarray:
    """Bool ``(L,)``: the layers whose heads see every previous key at every measured n (global layers, and
    sliding-window layers whose window is at least the largest n)."""
    return t["global"] | (t["window"] >= t["n"].max())
