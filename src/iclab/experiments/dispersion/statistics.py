"""The ``dispersion`` experiment's own measured quantities (arXiv:2410.01104; docs/papers/dispersion.md §5.7–5.9, §6):
named pure functions that the claim records of :mod:`iclab.experiments.dispersion.claims` reference where the
vocabulary of :mod:`iclab.claims._records` cannot say the measurement.

A results row of the ``retrieval`` part holds one trained model (seed) with list columns over its ``test_sizes``; a
``real`` row one text segment of one model with ``(L, H, S)`` statistics flattened; a ``lookup`` row one list size
with per-query exact matches, and :func:`lookup_list_rows` derives one row per list from it. Column functions read
such rows (``rows -> (units,) values``; the leading arguments are bound with :func:`functools.partial` when the
records are built for a config); combine rules and measured texts have the signatures ``_records`` documents (the
gates are declared with the records).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from iclab.claims import Estimate, measured_as, Sample
from iclab.experiments.dispersion.config import beta_grid
from iclab.experiments.dispersion.lookup import list_diffs
from iclab.experiments.dispersion.tables import ONSET_N, loglog_slope, stack
from iclab.stats import mean_se
from iclab.theory.dispersion import required_spread

ONSET_TOKENS = 1000  # "dispersion sets in after a few hundred tokens": the bound of the median head < 1/2 by then
BETA_WINDOW = 0.25  # nats: the entropy bins whose centre lies this close to H give β*(H)
MIN_FIT_SETS = 20  # fewer fit sets near H: no β* for the seed


# ---- max retrieval: one row per softmax seed, list columns over test_sizes ----


def _sizes(rows: pd.DataFrame) -> np.ndarray:
    return np.asarray(rows["test_sizes"].iloc[0], float) if len(rows) else np.zeros(0)


def slope_beyond(train_max: int, rows: pd.DataFrame) -> np.ndarray:
    """Per seed: the log–log slope of the mean largest coefficient against n over the test sizes ≥ ``train_max``."""
    grow = _sizes(rows) >= train_max
    return loglog_slope(_sizes(rows)[grow], stack(rows, "max_coef")[:, grow])


def ood_gain(train_max: int, rows: pd.DataFrame) -> np.ndarray:
    """Per seed: the mean over test sizes > ``train_max`` of the paired gain adaptive − softmax (points)."""
    ood = _sizes(rows) > train_max
    return (100 * stack(rows, "acc_adaptive") - 100 * stack(rows, "acc"))[:, ood].mean(1)


def _at(size: int, rows: pd.DataFrame, col: str) -> np.ndarray:
    j = np.flatnonzero(_sizes(rows) == size)
    return 100 * stack(rows, col)[:, j[0]] if len(j) else np.full(len(rows), np.nan)


def acc_at(size: int, rows: pd.DataFrame) -> np.ndarray:
    """Per seed: softmax accuracy (%) at test size ``size``."""
    return _at(size, rows, "acc")


def gain_at(size: int, rows: pd.DataFrame) -> np.ndarray:
    """Per seed: the paired gain adaptive − softmax (points) at test size ``size`` (the same sets)."""
    return _at(size, rows, "acc_adaptive") - _at(size, rows, "acc")


def spread_shortfall(sharp_eps: float, rows: pd.DataFrame) -> np.ndarray:
    """Per seed: ln(required / allowed) — the logit spread (1 − ε)-sharpness at the largest test size needs (Lemma
    2.1) over the spread the trained weights allow (Prop. 3.1); NaN where the row has no allowed spread."""
    if "allowed_spread" not in rows:
        return np.full(len(rows), np.nan)
    need = float(required_spread(_sizes(rows).max(), sharp_eps))
    return np.log(need / rows["allowed_spread"].to_numpy(float))


def slope_measured(cfg, s: Sample, est: Estimate) -> str:
    n = _sizes(s.rows)
    grow = n >= cfg.train_max
    mc = stack(s.rows, "max_coef")[:, grow].mean(0)
    return (
        f"slope {np.mean(s.values):+.3f} (max coef. {mc[0]:.2f} → {mc[-1]:.2f}, n {int(n[grow][0])}–"
        f"{int(n[grow][-1])}, {len(s.rows)} seeds)"
    )


def gain_ood_measured(cfg, s: Sample, est: Estimate) -> str:
    ood = _sizes(s.rows)[_sizes(s.rows) > cfg.train_max]
    return f"{s.values.mean():+.2f} points over n = {int(ood[0])}–{int(ood[-1])} ({len(s.rows)} seeds)"


#: softmax accuracy (%) at the claim's test size over the seeds
softmax_measured = measured_as("{a:.1f} % ({k} seeds)")


def gain_measured(size: int, cfg, s: Sample, est: Estimate) -> str:
    soft, adaptive = acc_at(size, s.rows).mean(), _at(size, s.rows, "acc_adaptive").mean()
    return f"{soft:.1f} → {adaptive:.1f} % ({s.values.mean():+.2f})"


def spread_measured(cfg, s: Sample, est: Estimate) -> str:
    rows, n = s.rows, _sizes(s.rows)
    allowed = rows["allowed_spread"].to_numpy(float) if "allowed_spread" in rows else np.full(len(rows), np.nan)
    if not np.isfinite(allowed).any():
        return "—"
    need = float(required_spread(n.max(), cfg.sharp_eps))
    return (
        f"allowed {np.nanmean(allowed):.3g} vs required {need:.3g} at n = {int(n.max())} "
        f"(δ_sup {np.mean(rows['delta_sup'].to_numpy(float)):.3g})"
    )


# ---- β(H): the grid β with the least readout cross-entropy near entropy H, per seed (docs/papers/dispersion.md §4.7)


def _window(cfg, rows: pd.DataFrame, h: float) -> tuple[np.ndarray, np.ndarray]:
    """Per seed: β*(h) (NaN below :data:`MIN_FIT_SETS` sets) and the number of fit sets near ``h``."""
    if not len(rows) or "fit_loss" not in rows:
        return np.full(len(rows), np.nan), np.zeros(len(rows))
    grid = beta_grid(cfg)
    nb = int(rows["fit_n_bins"].iloc[0])
    sel = np.abs((np.arange(nb) + 0.5) * cfg.entropy_bin - h) <= BETA_WINDOW + 1e-9
    best, counts = [], []
    for loss, cnt in zip(rows["fit_loss"], rows["fit_counts"]):
        c = float(np.asarray(cnt, float)[sel].sum())
        best.append(grid[int(np.argmin(np.asarray(loss, float).reshape(nb, len(grid))[sel].sum(0)))])
        counts.append(c)
    best, counts = np.asarray(best, float), np.asarray(counts)
    return np.where(counts >= MIN_FIT_SETS, best, np.nan), counts


def best_beta(cfg, h: float, rows: pd.DataFrame) -> np.ndarray:
    """Per seed: the grid β minimising the readout's summed cross-entropy over the fit sets whose head entropy lies
    within ±:data:`BETA_WINDOW` nats of ``h``."""
    return _window(cfg, rows, h)[0]


def beta_rise(cfg, lo: float, hi: float, rows: pd.DataFrame) -> np.ndarray:
    """Per seed: β*(hi) − β*(lo)."""
    return best_beta(cfg, hi, rows) - best_beta(cfg, lo, rows)


def grid_mean(cfg, s: Sample) -> Estimate:
    """Mean ± SE of β* over the seeds that have it, Student t (n − 1 dof); values read off a grid of step
    ``beta_step`` are resolved only to step/√12, which the SE adds per seed (seeds that all pick one grid point have
    SE 0: no uncertainty, not certainty)."""
    m, se, n = mean_se(s.values)
    return Estimate(m, math.sqrt(se**2 + cfg.beta_step**2 / 12 / max(n, 1)), dof=n - 1 if n > 1 else None, n=n)


beta_measured = measured_as("β* = {v:.2f} ({n} seeds)", fewest=2)
rise_measured = measured_as("{v:+.2f} ({n} seeds)")


def fit_sets_near(h: float, cfg, s: Sample) -> str:
    """The number of fit sets near ``h`` per seed (why a seed has no β*(h))."""
    return "sets per seed: " + ", ".join(str(int(c)) for c in _window(cfg, s.rows, h)[1])


# ---- CLRS-style tasks: one row per (task, attention, seed), exact match over clrs_sizes ----


def ood_exact(train_max: int, inference: bool, rows: pd.DataFrame) -> np.ndarray:
    """Per row: exact match (%) averaged over the lengths > ``train_max``; with ``inference`` the softmax-trained
    rows are read with adaptive temperature at inference only (``exact_inference_adaptive``)."""
    col = "exact_inference_adaptive" if inference and (rows["attention"] == "softmax").all() else "exact"
    if col not in rows or rows[col].isna().any():
        return np.full(len(rows), np.nan)
    ood = np.asarray(rows["clrs_sizes"].iloc[0], float) > train_max
    return 100 * stack(rows, col)[:, ood].mean(1)


def _per_task(cfg, s: Sample) -> list[float]:
    """The mean paired effect of each task, in the order of ``clrs_tasks``."""
    d = pd.Series(s.values, index=s.units.get_level_values("task"))
    order = [t for t in cfg.clrs_tasks if t in d.index] + [t for t in dict.fromkeys(d.index) if t not in cfg.clrs_tasks]
    return [float(d[[t]].mean()) for t in order]


def over_tasks(cfg, s: Sample) -> Estimate:
    """Mean ± SE over tasks of each task's mean paired effect over seeds, Student t (tasks − 1 dof)."""
    m, se, n = mean_se(_per_task(cfg, s))
    return Estimate(m, se, dof=n - 1 if n > 1 else None, n=n)


def tasks_measured(cfg, s: Sample, est: Estimate) -> str:
    d = _per_task(cfg, s)
    each = ", ".join(f"{x:+.1f}" for x in d)
    return f"{np.mean(d):+.1f} points averaged over {len(d)} tasks (per task {each})"


paired_measured = measured_as("{b:.1f} → {a:.1f} % ({d:+.1f}, {k} paired seed(s))")


# ---- real transformers: one row per (model, text segment) ----


def _real(row) -> dict | None:
    """One available row's ``n`` and global-head mask and its statistics as ``(L, H, S)``."""
    if row.get("available") != 1:
        return None
    n = np.asarray(row["real_n"], float)
    L, H = int(row["real_layers"]), int(row["real_heads"])
    g = (np.asarray(row["real_global"], float) > 0.5) | (float(row["real_window"]) >= n.max())
    return {
        "n": n,
        "g": g,
        "H": H,
        **{k: np.asarray(row["real_" + k], float).reshape(L, H, len(n)) for k in ("max_coef", "delta")},
    }


def real_slope(rows: pd.DataFrame) -> np.ndarray:
    """Per segment: the mean over global heads of the log–log slope of the head's mean largest coefficient
    against n (Thm 2.2: −1 for Θ(1/n)); NaN for a model that could not be loaded."""
    out = []
    for _, r in rows.iterrows():
        t = _real(r)
        out.append(np.nan if t is None else float(loglog_slope(t["n"], t["max_coef"][t["g"]]).mean()))
    return np.asarray(out, float)


def onset_delta(rows: pd.DataFrame) -> np.ndarray:
    """Per segment: the median over global heads of the mean δ at the largest measured n ≤ ``ONSET_N``."""
    out = []
    for _, r in rows.iterrows():
        t = _real(r)
        small = np.flatnonzero(t["n"] <= ONSET_N) if t is not None else []
        out.append(np.median(t["delta"][t["g"]][..., int(small[-1])]) if len(small) else np.nan)
    return np.asarray(out, float)


def onset_margin(rows: pd.DataFrame) -> np.ndarray:
    """Per segment: ln :data:`ONSET_TOKENS` − δ (> 0: the median head's Lemma 2.1 bound e^δ/(e^δ + n − 1) falls
    below 1/2 by n = ONSET_TOKENS)."""
    return math.log(ONSET_TOKENS) - onset_delta(rows)


def real_measured(cfg, s: Sample, est: Estimate) -> str:
    ok = [t for _, r in s.rows.iterrows() if (t := _real(r)) is not None]
    if not ok:
        return "—"
    v = s.values[(s.rows["available"] == 1).to_numpy()]
    g = int(ok[0]["g"].sum() * ok[0]["H"])
    return f"slope {v.mean():+.3f} ({g} global heads, n {int(ok[0]['n'][0])}–{int(ok[0]['n'][-1])}, {len(v)} segments)"


def onset_measured(cfg, s: Sample, est: Estimate) -> str:
    d = onset_delta(s.rows)[(s.rows["available"] == 1).to_numpy()]
    return f"median δ {d.mean():.2f} → onset e^δ ≈ {math.exp(d.mean()):.3g} tokens" if len(d) else "—"


# ---- key–value lookup on pretrained LMs: one row per (task, model, n_pairs) ----


LIST = "list"  # the view of the per-list lookup rows (:func:`lookup_list_rows`)


def lookup_list_rows(df: pd.DataFrame) -> pd.DataFrame:
    """One row per list of every lookup cell (issue 43: units are rows; a list's queries share its context, so the
    list is the unit), marked ``view`` = :data:`LIST`: the cell's keys, ``list``, ``queries`` (the list's) and
    ``diff``, adaptive − softmax greedy exact match paired per query, averaged over the list's queries
    (:func:`.lookup.list_diffs`, which the table's band reads too). The claims
    combine the lists with :func:`iclab.claims.binary_units` (a band across lists, at least ±3/queries wide)."""
    rows = []
    for _, r in df[df["part"] == "lookup"].iterrows() if "part" in df else []:
        keys = {k: r[k] for k in ("part", "task", "model", "n_pairs", "tokens", "seed") if k in r}
        rows += [{**keys, "view": LIST, "list": int(g), "queries": int(n), "diff": float(d)}
                 for g, n, d in zip(*list_diffs(r))]  # fmt: skip
    return pd.DataFrame(rows)


def lookup_measured(cfg, s: Sample, est: Estimate) -> str:
    if est.ci is None or not math.isfinite(est.value):
        return "—"
    r = s.rows.iloc[-1]
    lo, hi = est.ci
    return (
        f"gain {est.value:+.3f}, 95 % CI [{lo:+.3f}, {hi:+.3f}] at {int(r['n_pairs'])} lines, {int(r['tokens'])} tokens"
    )
