"""The one-layer ``temperature`` experiment's own statistics (arXiv:2511.01292, Demir & Doğan; docs/papers/
temperature.md §5.1, §6): the named pure functions its claim records (:mod:`.claims`) reference where the
vocabulary of :mod:`iclab.claims._records` cannot say the measurement.

A cell is one row of one seed with prompt-level SEs (``*_se``); a paired difference of two cells (independent
prompts) has the hypot of theirs (:func:`prompt_se`). Errors are divided by the cell's ``c`` = Tr(AB) + σ² (the
error of predicting 0) or by its theory value: "within ε of theory" is the ratio within ε of 1 (:func:`ratio`).
"""

from __future__ import annotations

import dataclasses
import math
from functools import partial
from typing import Any, Callable

import numpy as np
import pandas as pd

from iclab.claims import across_units_or, Estimate, Sample, within_units
from iclab.experiments.temperature.cells import cells as grid
from iclab.stats import fmt, grid_floor_ci, quantile

__all__ = [
    "CURVE_CELL",
    "CURVE_PARTS",
    "curve_cells",
    "TOL",
    "ratio",
    "rel_gap",
    "prompt_se",
    "excess_mean_square",
    "log_tau_interval",
]

TOL = 0.05  # Theorem 4.2/4.3 against simulation: the independent check's "1–5 %" (note §4.11)
CURVE_PARTS = ("none", "cov", "task", "noise", "noise_ld", "mean")


def ratio(num: str, den: str | None, rows: pd.DataFrame) -> np.ndarray:
    """Per row ``num / den`` (``den`` None: ``num`` itself): an error over the cell's c, or over its theory."""
    value = rows[num].to_numpy(float)
    return value if den is None else value / rows[den].to_numpy(float)


def rel_gap(num: str, den: str, rows: pd.DataFrame) -> np.ndarray:
    """Per row ``num / den − 1``: the relative difference of one measured error from another."""
    return ratio(num, den, rows) - 1


def lin_minus_approx(rows: pd.DataFrame) -> np.ndarray:
    """(linear − approximate-softmax error)/c per row: paired on ‖μx‖, the rise of linear minus that of approx."""
    return (rows["linear_mc"].to_numpy(float) - rows["G1_mc"].to_numpy(float)) / rows["c"].to_numpy(float)


def prompt_ses(se_cols: tuple[str, ...], den: str | None, cfg, s: Sample) -> np.ndarray:
    """Per seed the prompt-level SE: the hypot of the ``se_cols`` over ``den``, the baseline's added in quadrature
    (other prompts); the within-run SE of :func:`prompt_se`."""

    def ses(rows: pd.DataFrame) -> np.ndarray:
        se = np.sqrt(sum(rows.loc[s.units, c].to_numpy(float) ** 2 for c in se_cols))
        return se if den is None else se / rows.loc[s.units, den].to_numpy(float)

    return ses(s.rows) if s.base is None else np.hypot(ses(s.rows), ses(s.base))


def prompt_se(se_cols: tuple[str, ...], den: str | None) -> Callable[[Any, Sample], Estimate]:
    """Mean of the per-seed values with the prompt-level SE of :func:`prompt_ses` (normal, from the cell's ``n_test``
    prompts): a run has one seed (``config.seed``), so the design's SE is within it
    (:func:`~iclab.claims._statistics.across_units_or` with one planned unit)."""
    return across_units_or(
        partial(prompt_ses, se_cols, den),
        planned=1,
        n_column="n_test",
        within_text="prompt-level SEs over their n_test prompts",
    )


def excess_mean_square(gaps: np.ndarray, ses: np.ndarray, n: int | None, what: str) -> Estimate:
    """Mean over cells of gap² − SE² (each term unbiased for the squared true relative gap) minus TOL², with its SE:
    the RMS gap is within TOL when this is < 0. ``gaps``/``ses``: ``(cells, per_cell)`` relative gaps and SEs; the
    terms of one cell come from the same prompts, so their SDs add (conservative). A cell without a finite positive
    SE: that SE (refused: no uncertainty), never a zero-width interval."""
    if not gaps.size:
        return Estimate(float("nan"), how="no curve cells")
    bad = float(np.min(ses)) if np.isfinite(ses).all() else float("nan")
    sd = np.sqrt(4 * gaps**2 * ses**2 + 2 * ses**4)  # (cells, per_cell): SD of each term
    ms = float(np.nanmean(gaps**2 - np.nan_to_num(ses) ** 2))  # finite without an SE: the refusal names the SE
    se = float(np.sqrt((sd.sum(1) ** 2).sum()) / gaps.size) if bad > 0 else bad
    z = quantile(0.95)
    rms, lo, hi = (math.sqrt(max(x, 0.0)) if math.isfinite(x) else x for x in (ms, ms - z * se, ms + z * se))
    worst = int(np.nanargmax(np.abs(gaps).max(1))) if np.isfinite(gaps).any() else 0
    ci = f"95 % CI [{lo:.2%}, {hi:.2%}]" if se > 0 else "no CI (a cell without a standard error)"
    how = (
        f"RMS gap {rms:.2%}, {ci} vs allowed {TOL:.0%}, over {gaps.shape[0]} cells ({what}); raw RMS "
        f"{math.sqrt(float((gaps**2).mean())):.2%}, worst |gap| {np.abs(gaps[worst]).max():.1%} ± "
        f"{ses[worst].max():.1%} (SE); tested: mean square − {TOL:.0%}² < 0"
    )
    return Estimate(ms - TOL**2, se, n=n, how=how)


def _curve_mask(rows: pd.DataFrame, long: bool) -> np.ndarray:
    """Which ``rows`` are curve cells at l ≥ d (``long``) or l < d."""
    return (rows["part"].isin(CURVE_PARTS) & ((rows["l"] >= rows["d"]) == long)).to_numpy()


def _curves(s: Sample, long: bool) -> pd.DataFrame:
    rows = s.rows.reset_index()
    return rows[_curve_mask(rows, long)]


#: the (simulated, theory, SE) columns whose relative gaps the curve claims read
_SHORT = (("G1_mc", "G1_theory", "G1_se"), ("Gopt_mc", "Gopt_theory", "Gopt_se"))
_LONG = (("tau_opt_mc", "tau_opt_theory", "tau_opt_mc_se"),)


def _gaps(sub: pd.DataFrame, columns) -> tuple[np.ndarray, np.ndarray]:
    """``(cells, per_cell)`` relative gaps simulated/theory − 1 and their SEs SE/theory."""
    mc, th, se = ([sub[c[i]].to_numpy(float) for c in columns] for i in range(3))
    th = np.stack(th, 1)
    return np.stack(mc, 1) / th - 1, np.stack(se, 1) / th


def short_curves(cfg, s: Sample) -> Estimate:
    """Theorem 4.2 along the curves at l < d, τ = 1 and τ_opt: :func:`excess_mean_square`."""
    sub = _curves(s, False)
    ls = sorted(set(sub["l"])) or ["—"]
    return excess_mean_square(*_gaps(sub, _SHORT), sub["n_test"].min() if len(sub) else None, f"l = {ls[0]}…{ls[-1]}")


def minimiser(cfg, s: Sample) -> Estimate:
    """Eq. 15's τ_opt against the Monte-Carlo minimiser at l ≥ d: :func:`excess_mean_square`."""
    sub = _curves(s, True)
    return excess_mean_square(*_gaps(sub, _LONG), sub["n_test"].min() if len(sub) else None, "cells with l ≥ d")


def _curves_at(long: bool, columns, cfg, s: Sample, truth: float, rng: np.random.Generator) -> Sample:
    r"""The curve cells of ``s`` redrawn where the claim's estimate, mean square − TOL², is ``truth`` in expectation
    (the row-level calibration's least favourable truth, :func:`iclab.claims._resample.placed_rate`): true relative
    gaps :math:`\gamma = c\,\hat g` — the run's own pattern of gaps, scaled so that mean γ² = TOL² + truth (all
    equal when the run's gaps are all 0) — and each cell's simulated value drawn as theory·(1 + γ + SE·ε), ε
    standard normal: the sampling noise the cell's SE states."""
    flat = s.rows.reset_index()
    at = _curve_mask(flat, long)
    gaps, ses = _gaps(flat[at], columns)
    target, raw = max(TOL**2 + truth, 0.0), float(np.mean(gaps**2)) if gaps.size else 0.0
    true = gaps * math.sqrt(target / raw) if raw > 0 else np.full_like(gaps, math.sqrt(target))
    drawn = true + np.nan_to_num(ses) * rng.standard_normal(gaps.shape)
    for j, (mc, th, _) in enumerate(columns):
        flat.loc[at, mc] = flat.loc[at, th].to_numpy(float) * (1 + drawn[:, j])
    return dataclasses.replace(s, rows=flat.set_index(list(s.rows.index.names)))


short_curves.at_truth = partial(_curves_at, False, _SHORT)  # type: ignore[attr-defined]
minimiser.at_truth = partial(_curves_at, True, _LONG)  # type: ignore[attr-defined]


def rms_measured(cfg, s: Sample, est: Estimate) -> str:
    """The noise-corrected RMS relative gap, √max(mean square, 0) ("—" when the test is refused)."""
    ms = est.value + TOL**2
    return f"{math.sqrt(max(ms, 0.0)):.2%}" if math.isfinite(ms) and (est.se or 0) > 0 else "—"


def log_tau_interval(cfg, s: Sample) -> Estimate:
    """log(softmax's grid-best τ / Eq. 15's τ_opt), its 95 % bootstrap interval at least ± half a step of the cell's
    τ grid (a grid argmin has no finer resolution; :func:`iclab.stats.grid_floor_ci`)."""
    r = s.rows.iloc[0]
    est, target = math.log(r.tau_best_soft), math.log(r.tau_opt_theory)
    lo, hi = math.log(r.tau_best_soft_lo), math.log(r.tau_best_soft_hi)
    if isinstance(taus := r.get("taus"), (list, tuple, np.ndarray)):
        lo, hi = grid_floor_ci(est, lo, hi, np.log(taus))
    how = (
        f"softmax's best τ {fmt(r.tau_best_soft, 3)}, 95 % bootstrap interval [{fmt(math.exp(lo), 3)}, "
        f"{fmt(math.exp(hi), 3)}] vs τ_opt {fmt(r.tau_opt_theory, 3)}; ratio {r.tau_best_soft / r.tau_opt_theory:.3g}"
    )
    return Estimate(est - target, ci=(lo - target, hi - target), n=int(r.n_test), how=how)


def _log_tau_at(cfg, s: Sample, truth: float, rng: np.random.Generator) -> Sample:
    """The one cell of ``s`` redrawn where log(softmax's best τ / τ_opt) is ``truth`` plus its sampling noise (normal,
    its SD the half-width of the run's interval over 1.96): the best τ and its bootstrap interval move together, so
    the interval keeps its width (the row-level calibration's least favourable truth)."""
    est = log_tau_interval(cfg, s)
    move = truth + rng.normal(0.0, (est.ci[1] - est.ci[0]) / (2 * quantile(0.95))) - est.value
    rows = s.rows.copy()
    for col in ("tau_best_soft", "tau_best_soft_lo", "tau_best_soft_hi"):
        rows[col] = rows[col].to_numpy(float) * math.exp(move)
    return dataclasses.replace(s, rows=rows)


log_tau_interval.at_truth = _log_tau_at  # type: ignore[attr-defined]


def pair_note(cfg, s: Sample, est: Estimate) -> str:
    """The two cells' own values (``a``, baseline ``b``), each named by the settings that tell them apart."""
    r, b = s.rows.iloc[0], s.base.iloc[0]
    keys = [k for k in ("part", "l", "sigma_test", "mu_x") if k in s.rows and k in s.base and r[k] != b[k]]
    name = lambda x: ", ".join(f"{k} = {x[k]:g}" if isinstance(x[k], float) else f"{k} = {x[k]}" for k in keys)  # noqa: E731
    return f"per cell: {fmt(float(s.a.mean()))} at {name(r)} vs {fmt(float(s.b.mean()))} at {name(b)}"


def simcheck_note(stem: str, cfg, s: Sample, est: Estimate) -> str:
    r = s.rows.iloc[0]
    tau = f" (τ_opt = {r['tau_opt_theory']:.3g})" if stem == "Gopt" else ""
    resolved = abs(r[f"{stem}_mc"] - r[f"{stem}_theory"]) > quantile(0.95) * r[f"{stem}_se"]
    gap = "" if resolved else " (finite-l gap not resolved from 0)"
    return f"theory {r[f'{stem}_theory']:.4g}{tau}, MC on {int(r['n_test']):,} prompts{gap}"


def closes_note(cfg, s: Sample, est: Estimate) -> str:
    r = s.rows.iloc[0]
    closed = r.gain_opt / (r.G1_mc - r.bayes_test) if r.G1_mc > r.bayes_test else float("nan")
    return f"G/c {r.G1_mc / r.c:.3f} → {r.Gopt_mc / r.c:.3f}, test-Bayes {r.bayes_test / r.c:.3f} ({closed:.0%} closed)"


def grows_note(cfg, s: Sample, est: Estimate) -> str:
    rows = (s.base.iloc[0], s.rows.iloc[0])
    return "MC minimiser " + ", ".join(f"σ={r.sigma_test:g}: {r.tau_opt_mc:.3g} (Eq. 15 {r.tau_opt_theory:.3g})" for r in rows)  # fmt: skip


#: the ``part`` of the rows :func:`curve_cells` derives: one per curve cell with l ≥ d and τ ∈ {1, τ_opt}
CURVE_CELL = "curve-cell"


def curve_cells(df: pd.DataFrame) -> pd.DataFrame:
    """The curve cells with l ≥ d, one row per (cell, τ = 1 or τ_opt), for ``thm4.2-vs-mc/curves-l>=d`` ("at every
    l", :func:`iclab.stats.judge_every_cell` through its record): ``part`` = :data:`CURVE_CELL`, ``curve`` the cell's label,
    ``G``/``G_se``/``G_theory`` the simulated error, its prompt-level SE and Theorem 4.2's value, and the cell's own
    ``curve_part``, ``l``, ``sigma_test``, ``mu_x`` (the cells :func:`curve_cell_grid` names); the
    cell's other columns ride along with their types (the judged rows are the results and these)."""
    sub = df[df["part"].isin(CURVE_PARTS)] if "part" in df else df.iloc[:0]
    sub = sub[sub["l"] >= sub["d"]]

    def what(r) -> str:
        return f" σ_test={r.sigma_test:g}" if "noise" in r.part else f" ‖μx‖={r.mu_x:g}" if r.part == "mean" else ""

    rows = [
        {
            **r.to_dict(),
            "part": CURVE_CELL,
            "curve": f"{r.part} l={int(r.l)}{what(r)} τ={t}",
            "curve_part": r.part,
            "l": r.l,
            "sigma_test": r.sigma_test,
            "mu_x": r.mu_x,
            "G": r[f"{c}_mc"],
            "G_se": r[f"{c}_se"],
            "G_theory": r[f"{c}_theory"],
        }  # fmt: skip
        for _, r in sub.iterrows()
        for c, t in (("G1", "1"), ("Gopt", "τ_opt"))
    ]
    return pd.DataFrame(rows)


#: one curve cell's simulated error with its prompt-level SE (one row: nothing to combine)
one_cell = within_units()


def curve_grid(long: bool, cfg) -> list[dict]:
    """The curve cells of the config's grid at l ≥ d (``long``) or l < d, each as ``{part, l, sigma_test, mu_x}``:
    the cells ``thm4.2-vs-mc/curves-l<d`` and ``thm4.3-vs-mc-minimiser`` need (``Measure.cells``; a failed one makes
    the claim "not measured: n of N cells", never judged on the cells left)."""
    keys = ("part", "l", "sigma_test", "mu_x")
    return [{k: c[k] for k in keys} for c in grid(cfg) if c["part"] in CURVE_PARTS and (c["l"] >= c["d"]) == long]


def curve_cell_grid(cfg) -> list[dict]:
    """The rows of :func:`curve_cells` the config's grid gives at l ≥ d, as ``{curve_part, l, sigma_test, mu_x}``:
    the cells ``thm4.2-vs-mc/curves-l>=d`` ("at every l") needs (``Measure.cells``)."""
    return [
        {"curve_part": c["part"], "l": c["l"], "sigma_test": c["sigma_test"], "mu_x": c["mu_x"]}
        for c in curve_grid(True, cfg)
    ]
