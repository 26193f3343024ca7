"""The tests behind the ``multihead`` verdicts (arXiv:2503.12734; docs/papers/multihead.md §7): the settings gates
of the trained-model claims (:data:`TRAINED_MIN_STEPS`, stage II), the paired difference to debiased GD and the
Welch–Satterthwaite degrees of freedom of a difference of two estimates, values pooled over models, sign matching
with the model as the unit (Clopper–Pearson), zero-sum OV, the multi-task head sharing and task gap, and the slack to
Thm 1's Bayes-ratio bound. :mod:`.comparisons` applies them claim by claim.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd

from iclab.experiments._judge import downgrade
from iclab.experiments.multihead.conventions import SIGN_MATCH_MIN, STAGE_II_STEPS, TRAINED_MIN_STEPS, ZERO_SUM_MAX
from iclab.experiments.multihead.results import pooled, seed_estimate
from iclab.stats import Verdict, judge_direction, judge_equivalence, judge_value, not_judged
from iclab.theory import multihead as th

__all__ = [
    "training_gate",
    "stage2_gate",
    "with_text",
    "gap_to",
    "welch_dof",
    "equal_to_dgd",
    "pooled_value",
    "sign_matching",
    "zero_sum",
    "sharing",
    "task_gap",
    "bound_slack",
]


def training_gate(cfg, verdict: Verdict) -> Verdict:
    """``verdict``, or "not judged (settings differ)" when the run trained fewer than TRAINED_MIN_STEPS steps."""
    if cfg.steps >= TRAINED_MIN_STEPS:
        return verdict
    why = (
        f"settings differ: steps = {cfg.steps} (a trained-model claim needs ≥ {TRAINED_MIN_STEPS:,} Adam steps, "
        "stage I finished; the paper trains 5·10⁵)"
    )
    return downgrade(verdict, why)


def stage2_gate(cfg, rows: pd.DataFrame, verdict: Verdict) -> Verdict:
    """``verdict``, or "not judged (settings differ)" when a pooled model trained fewer than the paper's 5·10⁵ steps."""
    steps = rows["trained_steps"] if "trained_steps" in rows else pd.Series([cfg.steps] * len(rows))
    fewest = int(steps.min())
    if fewest >= STAGE_II_STEPS:
        return verdict
    return downgrade(verdict, f"settings differ: the H ≥ 2 models trained {fewest} steps (paper {STAGE_II_STEPS})")


def with_text(verdict: Verdict, measured: str | None = None, uncertainty: str | None = None) -> Verdict:
    return dataclasses.replace(
        verdict,
        **({"measured": measured} if measured is not None else {}),
        **({"uncertainty": uncertainty} if uncertainty is not None else {}),
    )


def gap_to(rows: pd.DataFrame, n: int) -> tuple[float, float, float | None]:
    """Paired difference to debiased GD at length ``n`` (seed mean), its SE and the SE's degrees of freedom (None:
    one seed, SE over prompts, normal; else seeds − 1, Student t)."""
    return seed_estimate(rows, "dgd_diff", "dgd_diff_se", n)


def welch_dof(*parts: tuple[float, float | None]) -> float | None:
    """Welch–Satterthwaite degrees of freedom of a sum or difference of independent estimates, each given as
    ``(se, dof)`` (dof None: normal, infinite); None when every part is normal."""
    if all(dof is None for _, dof in parts):
        return None
    num = sum(se**2 for se, _ in parts) ** 2
    den = sum(se**4 / dof for se, dof in parts if dof is not None)
    return num / den if den > 0 else None


def equal_to_dgd(cfg, rows: pd.DataFrame, n: int, rel_tol: float) -> Verdict:
    """Equivalence of the model's risk (exact debiased GD + paired difference) with debiased GD's at η*."""
    target = float(th.gd_risk(th.eta_star(cfg.d, cfg.n_train, cfg.sigma2), cfg.d, n, cfg.sigma2))
    diff, se, dof = gap_to(rows, n)
    return judge_equivalence(target + diff, se, target, rel_tol=rel_tol, n=cfg.n_eval, dof=dof)


def pooled_value(rows: pd.DataFrame, key: str, paper: float, paper_se: float, digits: int, tol: float) -> Verdict:
    m, se, n = pooled(rows, key)
    v = judge_value(m, se, paper, paper_se=paper_se, tol=tol, n=n, dof=n - 1 if n > 1 else None, unit="models")
    return with_text(v, f"{m:.{digits}g} ({n} models)")


def sign_matching(rows: pd.DataFrame) -> Verdict:
    """Fraction of matching live heads with the model as the unit (heads of one model are not independent): each
    model with live heads is one trial whose outcome is its fraction of matching heads; Clopper–Pearson 95 % interval
    on that count, against :data:`SIGN_MATCH_MIN`."""
    from scipy import stats

    live = (rows["diag_n_plus"] + rows["diag_n_minus"]).to_numpy(float)  # live heads per model
    frac = rows["diag_sign_match"].to_numpy(float)  # matching fraction of its live heads, per model
    keep = (live > 0) & np.isfinite(frac)
    live, frac = live[keep], frac[keep]
    n = float(frac.size)
    if n == 0:
        return not_judged("not measured (no live heads)")
    k = float(frac.sum())
    lo = float(stats.beta.ppf(0.025, k, n - k + 1)) if k > 0 else 0.0
    hi = float(stats.beta.ppf(0.975, k + 1, n - k)) if k < n else 1.0
    v = judge_direction(k / n - SIGN_MATCH_MIN, ci=(lo - SIGN_MATCH_MIN, hi - SIGN_MATCH_MIN), n=int(n))
    heads = f"{int(round(float((frac * live).sum())))} of {int(live.sum())} live heads match"
    return with_text(v, f"{k / n:.3f} per model ({heads}; {int(n)} models)")


def zero_sum(rows: pd.DataFrame) -> Verdict:
    """|Σμ|/Σ|μ| pooled over the models of ``rows`` below :data:`ZERO_SUM_MAX` (Student-t CI over models)."""
    z = rows.assign(zero_sum_effect=ZERO_SUM_MAX - rows["diag_ov_zero_sum"]) if "diag_ov_zero_sum" in rows else rows
    m, se, n = pooled(z, "zero_sum_effect")
    return with_text(
        judge_direction(m, se, n=n, dof=n - 1 if n > 1 else None),
        f"|Σμ|/Σ|μ| = {ZERO_SUM_MAX - m:.4f} ({n} models)",
    )


def sharing(r: pd.Series) -> tuple[float, float]:
    """The smaller share of the two tasks for the head the weights say serves both most, and its SE."""
    serve = np.asarray(r["serve"], float)  # (H, N)
    h = int(np.argmax((serve / serve.max(0, keepdims=True)).min(1)))
    err = np.asarray(r["err_per_task"], float)
    share = np.asarray(r["ablation_rise"], float)[h] / err  # (N,)
    se = np.asarray(r["ablation_rise_se"], float)[h] / err
    n = int(np.argmin(share))
    return float(share[n]), float(se[n])


def task_gap(r: pd.Series) -> tuple[float, float]:
    """The model's error minus per-task debiased GD's, averaged over the tasks, and its SE: paired per prompt over
    both tasks (``dgd_diff_mean``, scored on the same prompts) when the row has it; else (results written before
    it) the per-task SEs combined as if the tasks were independent."""
    se = r.get("dgd_diff_mean_se", float("nan"))
    if se is not None and math.isfinite(float(se)):
        return float(r["dgd_diff_mean"]), float(se)
    d, s = np.asarray(r["dgd_diff_per_task"], float), np.asarray(r["dgd_diff_se_per_task"], float)
    return float(d.mean()), float(np.sqrt((s**2).sum()) / len(s))


def bound_slack(ratio: float, se: float, bound: float, n: int, dof: float | None = None) -> Verdict:
    v = judge_direction(bound - ratio, se, n=n, dof=dof)
    return with_text(v, f"ratio {ratio:.4f} vs bound {bound:.4f} (slack {bound - ratio:+.4f})")
