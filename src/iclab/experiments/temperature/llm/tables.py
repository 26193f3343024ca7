r"""Statistics of ``temperature-llm`` (arXiv:2511.01292 §5.2, Fig. 3; docs/papers/temperature.md §5.4), shared by its
figures and claims. Questions of one demonstration group are not independent: the group is the unit of replication.

- gains (held-out τ, spread rule, adaptive τ over τ = 1; the screen's harm of noise): one row per group
  (:func:`group_rows`, what the claims read), its value the group's mean paired EM change; the gain is the mean
  over groups with its Student-t band across them, at least ±3/Q wide for Q questions
  (:func:`iclab.stats.binary_unit_band`, the claims' combine rule :func:`iclab.claims.binary_units`; the screen's
  harm is read from these rows alone);
- held-out gain: τ chosen on the even groups and scored on the odd ones and vice versa (2-fold cross-fitting),
  minus EM(τ = 1) on the same questions;
- best τ: the grid τ of highest EM (ties to the τ closest to 1), its interval a percentile bootstrap of that argmax
  that resamples whole groups, paired across τ (for counts :math:`c_g` the EM of τ is
  :math:`\sum_g c_g S_{g\tau} / \sum_g c_g n_g`, ``S`` the group's EM sum);
- trend: the least-squares slope of :math:`\log\tau^*` on the noise ratio, per bootstrap draw (each noise cell
  resampled independently).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from iclab.data import derive_seed
from iclab.stats import binary_unit_band, grid_floor_ci

__all__ = ["BOOT", "GROUP", "cell_summary", "summary_table", "group_rows", "trend", "best_index"]

GROUP = "group"  # the view of the per-group rows (:func:`group_rows`); the stored cells are the view "cell"
_KEYS = ("part", "model", "task", "noise_ratio", "n_demos")

BOOT = 1000  # bootstrap draws


def best_index(taus, scores: np.ndarray) -> np.ndarray:
    """Argmax over the last axis of ``scores (..., T)``; ties go to the τ closest to 1 (log scale)."""
    tie = 1e-9 * np.abs(np.log(np.asarray(taus, dtype=float)))  # EM steps are >= 1/Q >> 1e-9
    return np.argmax(np.asarray(scores, dtype=float) - tie, axis=-1)


def _counts(n_groups: int, seed: int, boot: int = BOOT) -> np.ndarray:
    """``(boot, G)`` multinomial resampling counts of the groups."""
    rng = np.random.default_rng(seed)
    return rng.multinomial(n_groups, np.full(n_groups, 1.0 / n_groups), size=boot).astype(float)


def _group_sums(x: np.ndarray, group: np.ndarray) -> np.ndarray:
    """``(..., G)`` sums of ``x (..., Q)`` per group."""
    G = int(group.max()) + 1
    return np.stack([x[..., group == g].sum(-1) for g in range(G)], -1)


def _ci(draws: np.ndarray) -> tuple[float, float]:
    return float(np.quantile(draws, 0.025)), float(np.quantile(draws, 0.975))


def _group_means(x: np.ndarray, group: np.ndarray) -> np.ndarray:
    """``(G,)`` means of ``x (Q,)`` per group."""
    return _group_sums(x, group) / np.bincount(group)


def _band(d: np.ndarray, group: np.ndarray) -> tuple[float, float, float]:
    """The mean over groups of the paired EM changes ``d (Q,)`` (each group's mean over its questions) and its band
    across the groups, at least ±3/Q wide (:func:`iclab.stats.binary_unit_band`): what the claims' combine rule
    gives from :func:`group_rows`."""
    m, lo, hi, _ = binary_unit_band(_group_means(d, group), len(d))
    return m, lo, hi


def _held_out(taus, em: np.ndarray, group: np.ndarray) -> tuple[np.ndarray, list[float]]:
    """Per-question EM ``(Q,)`` of the τ chosen on the other half of the groups (even/odd), and the two picks."""
    half = group % 2 == 0
    out, picks = np.zeros(em.shape[1]), []
    for chosen_on in (half, ~half):
        j = int(best_index(taus, em[:, chosen_on].mean(1))) if chosen_on.any() else list(taus).index(1.0)
        out[~chosen_on] = em[j, ~chosen_on]
        picks.append(float(taus[j]))
    return out, picks


def cell_summary(taus, row: pd.Series, seed: int = 0) -> dict:
    """One cell: EM(τ=1), best τ with its interval, held-out / moment / adaptive gains over τ = 1 with intervals."""
    em, group = np.asarray(row["em"], dtype=float), np.asarray(row["group"])  # (T, Q), (Q,)
    counts = _counts(int(group.max()) + 1, seed)
    i1 = list(taus).index(1.0)
    sums, n = _group_sums(em, group), np.bincount(group).astype(float)  # (T, G), (G,)
    curve = em.mean(1)
    j = int(best_index(taus, curve))
    boot_best = np.asarray(taus)[best_index(taus, (counts @ sums.T) / (counts @ n)[:, None])]  # (B,)
    out = {
        "n_questions": em.shape[1],
        "groups": len(n),
        "em_tau1": curve[i1],
        "curve": curve.tolist(),
        "best_tau": float(taus[j]),
        "best_tau_lo": float(np.quantile(boot_best, 0.025)),
        "best_tau_hi": float(np.quantile(boot_best, 0.975)),
        "best_em": curve[j],
    }
    gains, out["heldout_picks"] = _gains(taus, row)
    for gain, d in gains.items():  # the band the claims give from group_rows
        name = gain.removesuffix("_gain")
        out[gain], out[f"{name}_lo"], out[f"{name}_hi"] = _band(d, group)
    if isinstance(row.get("layer_tau"), list):
        out["moment_tau"] = float(np.exp(np.mean(np.log(row["layer_tau"]))))
    return out


def summary_table(cfg, df: pd.DataFrame) -> pd.DataFrame:
    """:func:`cell_summary` of every finished noise and demos cell, with its keys (indexed as its row of ``df``)."""
    rows = {}
    for i, r in df.iterrows():
        if r["part"] == "screen":
            continue
        keys = {k: r[k] for k in ("part", "model", "task", "noise_ratio", "n_demos")}
        rows[i] = {**keys, **cell_summary(cfg.taus, r, derive_seed(cfg.seed, "summary"))}
    return pd.DataFrame.from_dict(rows, orient="index")


def trend(cfg, df: pd.DataFrame) -> tuple[float, float, float, int]:
    """Slope of log(best τ) on the noise ratio over the noise sweep rows of ``df`` (one model and task):
    ``(slope, low, high, noise cells)``; each noise cell's groups are resampled independently. Each best τ is a grid
    argmin, known to ± half a step h of log τ: the interval is at least ± h·Σ|r − r̄| / Σ(r − r̄)² wide (the slope's
    largest move under such errors; :func:`iclab.stats.grid_floor_ci`), never zero-width."""
    d = df[df["part"] == "noise"].sort_values("noise_ratio")
    if len(d) < 2:
        return float("nan"), float("nan"), float("nan"), len(d)
    r = d["noise_ratio"].to_numpy(dtype=float)
    logs, draws = [], []
    for k, (_, row) in enumerate(d.iterrows()):
        em, group = np.asarray(row["em"], dtype=float), np.asarray(row["group"])
        counts = _counts(int(group.max()) + 1, derive_seed(cfg.seed, "trend", k))
        sums, n = _group_sums(em, group), np.bincount(group).astype(float)
        logs.append(np.log(cfg.taus[int(best_index(cfg.taus, em.mean(1)))]))
        draws.append(np.log(np.asarray(cfg.taus)[best_index(cfg.taus, (counts @ sums.T) / (counts @ n)[:, None])]))
    rc = r - r.mean()
    slope = float(rc @ (np.asarray(logs) - np.mean(logs)) / (rc @ rc))
    boot = np.stack(draws, 1)  # (B, R)
    slopes = (boot - boot.mean(1, keepdims=True)) @ rc / (rc @ rc)
    return slope, *grid_floor_ci(slope, *_ci(slopes), np.log(cfg.taus) * np.abs(rc).sum() / (rc @ rc)), len(d)


def _gains(taus, row: pd.Series) -> tuple[dict[str, np.ndarray], list[float]]:
    """Per question, the paired EM changes a claim reads from one stored cell: the screen's harm (clean − noisy at
    τ = 1); a noise or demonstrations cell's gains over τ = 1 of the held-out τ, the spread rule and the adaptive τ
    (the last two where the cell has them); and the held-out τ's two picks ([] for the screen)."""
    if row["part"] == "screen":
        return {"harm": np.asarray(row["em_clean"], dtype=float) - np.asarray(row["em_noisy"], dtype=float)}, []
    em, group = np.asarray(row["em"], dtype=float), np.asarray(row["group"])
    tau1 = em[list(taus).index(1.0)]
    held, picks = _held_out(taus, em, group)
    out = {"heldout_gain": held - tau1}
    for name in ("moment", "adaptive"):
        if isinstance(row.get(f"em_{name}"), list):
            out[f"{name}_gain"] = np.asarray(row[f"em_{name}"], dtype=float) - tau1
    return out, picks


def group_rows(cfg, df: pd.DataFrame) -> pd.DataFrame:
    """One row per demonstration group of every stored cell (issue 43: units are rows), marked ``view`` =
    :data:`GROUP`: the cell's keys, ``group``, ``questions`` (the group's size) and each paired EM change of
    :func:`_gains` as the group's mean over its questions. The claims select, count and combine these units."""
    rows = []
    for _, r in df.iterrows():
        group = np.asarray(r["group"])
        keys = {k: r[k] for k in _KEYS if k in r}
        means = {name: _group_means(d, group) for name, d in _gains(cfg.taus, r)[0].items()}
        sizes = np.bincount(group)
        for g in range(len(sizes)):
            rows.append({**keys, "view": GROUP, "group": g, "questions": int(sizes[g]),
                         **{name: float(v[g]) for name, v in means.items()}})  # fmt: skip
    return pd.DataFrame(rows)
