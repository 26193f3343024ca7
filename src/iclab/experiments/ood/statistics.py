"""The ``ood`` experiment's own statistics, named by its claim records (arXiv:2609.36448; docs/papers/ood.md §5.10).

A cell of this experiment is one row whose replicates are lists (SGD runs, features, γ2 points, θ, target domains);
:func:`~iclab.experiments.ood.tables.unit_rows` derives one row per unit from them (the judged rows,
``claims.judged_rows``), so the records read their units through the one judge:

- SGD quantities are per-run rows (unit ``run``) combined by the judge's default (mean ± SE across runs, Student t);
  a target read from the cell (population GD, the exact formula at N) is a per-row ratio measured / target judged
  against 1 (the SE divided by |target|: the equivalence test decides as on the raw scale); the stopping step adds
  its check grid's quantisation (:func:`across_runs_and_grid`).
- Monte-Carlo and evaluation-set quantities are one unit (the trained model, ``seed``) with their own standard error
  (``Measure.se_column``, :data:`own_se`; independent differences are paired by the judge, their SEs combined by
  hypot); the weight-gap excess carries its own bootstrap interval (:func:`own_interval`); attention masses with
  exact counts float64 rounding (:func:`rounding_only`).
- Shares of forget points that follow a rule are the judge's :func:`iclab.claims.binomial_share` over the points.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from iclab.claims import Estimate, Sample, within_units
from iclab.stats import mean_se

__all__ = ["ROUNDING", "across_runs_and_grid", "own_interval", "own_se", "rounding_only"]

ROUNDING = 1e-15  # relative float64 rounding: the uncertainty of a deterministic quantity


def _runs(values, target: float = 1.0, extra_var: float = 0.0) -> tuple[Estimate, float, int]:
    """Mean ± SE over runs (t, n − 1 dof) as a ratio to ``target``; ``extra_var`` adds a known variance of the mean.
    Runs that agree exactly give SE 0, which the judge refuses ("no uncertainty"): identical runs are not
    replicates. Also returns the mean and the number of runs."""
    m, se, n = mean_se(values)
    se = math.sqrt(_spread(se, m) ** 2 + extra_var)
    return Estimate(m / target, se / abs(target), dof=n - 1 if n > 1 else None, n=n), m, n


def _spread(se: float, mean: float) -> float:
    """The SE of units that agree to float64 rounding (``se`` ≤ 1e-12·max(1, |mean|): identical units) is 0 — no
    spread to estimate an uncertainty from, which the judge refuses — rather than a zero-width interval."""
    return 0.0 if math.isfinite(se) and se <= 1e-12 * max(1.0, abs(mean)) else se


# --- combine rules ------------------------------------------------------------------------------------------------


def across_runs_and_grid(config, s: Sample) -> Estimate:
    """The mean over SGD runs with its SE across them (Student t, n − 1 dof), the runs' own quantisation SE of the
    check grid (log_every/√12 each) added as √(Σ se²)/n.

    A shift of every run's value moves the mean and leaves both SEs as they are."""
    n = int(np.isfinite(s.values).sum())
    own = float(np.nansum(s.ses**2)) / n**2 if s.ses is not None and n else 0.0
    return _runs(s.values, 1.0, own)[0]


across_runs_and_grid.describe = lambda units: (  # type: ignore[attr-defined]
    f"mean ± SE over {units}, Student t with n − 1 dof, the check grid's quantisation (log_every/√12 per run) added "
    "as √(Σ se²)/n"
)


def _own_se_phrase(units: str) -> str:
    return "its own standard error over prompts or test sentences, normal band (several units: their mean, √(Σ se²)/k)"


#: the combine rule of one Monte-Carlo or evaluation-set estimate with its own SE (``Measure.se_column``): the value
#: and that SE, normal (several units: :func:`~iclab.claims._statistics.within_units`)
own_se = within_units()
own_se.describe = _own_se_phrase  # type: ignore[attr-defined]
#: :data:`own_se` with the test sentences behind the SE (``n_test``) as the estimate's n
own_se_sentences = within_units(n_column="n_test")
own_se_sentences.describe = _own_se_phrase  # type: ignore[attr-defined]


def own_interval(config, s: Sample) -> Estimate:
    """The one unit's estimate with its own bootstrap 95 % interval over test sentences (``excess_lo``,
    ``excess_hi``, moved with the value).

    Several units have no interval (theirs do not combine): the SE is NaN, which the judge refuses."""
    if len(s.values) != 1:
        return Estimate(float(np.mean(s.values)) if len(s.values) else math.nan, math.nan, n=len(s.values))
    r, v = s.rows.iloc[0], float(s.values[0])
    shift = v - float(r["excess"])
    return Estimate(v, ci=(float(r["excess_lo"]) + shift, float(r["excess_hi"]) + shift), n=int(r["n_test"]))


own_interval.describe = lambda units: "its own bootstrap 95 % interval over test sentences"  # type: ignore[attr-defined]


def rounding_only(config, s: Sample) -> Estimate:
    """The mean of the units' values with float64 rounding as its uncertainty (exact counts: every prompt has the
    same counts).

    The judge never judges it: an SE of float64 rounding is no uncertainty (an exact identity is a test)."""
    m = float(np.mean(s.values)) if len(s.values) else math.nan
    return Estimate(m, ROUNDING * max(1.0, 1 / config.K), how="uncertainty: float64 rounding")


rounding_only.describe = lambda units: "its value, float64 rounding as its uncertainty"  # type: ignore[attr-defined]


# --- measured texts -----------------------------------------------------------------------------------------------


def _mean(s: Sample, col: str, base: bool = False) -> float:
    return float(pd.to_numeric((s.base if base else s.rows)[col], errors="coerce").mean())


def _first(s: Sample, col: str, base: bool = False) -> float:
    rows = s.base if base else s.rows
    return float(rows[col].iloc[0])


def beta_text(cfg, s: Sample, est: Estimate) -> str:
    return f"1 + {_mean(s, 'beta_dev'):.2e} (largest relative deviation, {est.n} runs)"


def alpha_text(cfg, s: Sample, est: Estimate) -> str:
    gd = f"{_first(s, 'theory_alpha_star'):.4f} (large N {_first(s, 'largeN_alpha_star'):.4f})"
    return f"{_mean(s, 'alpha_star'):.4f} (SGD, {est.n} runs) vs population GD {gd}"


def steps_text(cfg, s: Sample, est: Estimate) -> str:
    gd = f"population GD {int(_first(s, 'theory_steps'))} (→ {int(_first(s, 'steps_grid'))})"
    return f"{_mean(s, 'steps'):.1f} steps (SGD, {est.n} runs, checked every {cfg.log_every}) vs {gd}"


def formula_text(cfg, s: Sample, est: Estimate) -> str:
    return f"{_first(s, 'L_mc'):.4f} (MC) vs exact at N {_first(s, 'L_theory'):.4f}"


def error_text(cfg, s: Sample, est: Estimate) -> str:
    return f"{_first(s, 'L_mc'):.4f} (MC, N = {cfg.n_tokens})"


def growth_text(cfg, s: Sample, est: Estimate) -> str:
    a, b = _first(s, "L_mc", base=True), _first(s, "L_mc")
    return f"{a:.4f} → {b:.4f} (Δ {b - a:+.4f})"


def closed_form_text(cfg, s: Sample, est: Estimate) -> str:
    exact = _first(s, "randomM_closed_vs_exact")
    return f"ratio {_mean(s, 'alpha_u_ratio'):.4f} (max |closed − UᵀQU| = {exact:.1e})"


def inspan_text(cfg, s: Sample, est: Estimate) -> str:
    return f"MC / exact = {_mean(s, 'inspan_ratio'):.4f} over {len(s.values)} per-feature errors"


def vbar_attention_text(cfg, s: Sample, est: Estimate) -> str:
    mass, dev = _first(s, "query_vbar_sgd_attn_max_mean"), _first(s, "query_vbar_closed_attn_maxdev")
    return f"largest mass {mass:.4f} (SGD Q; symmetric Q*: max|A − 1/K| {dev:.0e})"


def vbar_error_text(cfg, s: Sample, est: Estimate) -> str:
    return f"{_first(s, 'query_vbar_sgd_err'):.1e}"


def forgetting_vs_gd_text(cfg, s: Sample, est: Estimate) -> str:
    ratios = pd.to_numeric(s.rows["F_ratio"], errors="coerce").dropna()
    return f"F / F_theory = {ratios.mean():.4f} over {len(ratios)} table points"


def forgetting_runs_text(cfg, s: Sample, est: Estimate) -> str:
    return f"{_mean(s, 'F_run'):+.2e} ({est.n} SGD fine-tunings)"


def tiny_text(cfg, s: Sample, est: Estimate) -> str:
    """F (or F at the base depth → here), averaged over the trained networks."""
    k = len(s.rows)
    nets = f" ({k} trained network{'s' if k != 1 else ''})"
    if s.base is None:
        return f"F = {_mean(s, 'F'):+.4f}{nets}"
    return f"{_mean(s, 'F', base=True):+.4f} → {_mean(s, 'F'):+.4f}{nets}"


def minilm_drop_text(cfg, s: Sample, est: Estimate) -> str:
    r = s.rows.iloc[0]
    return f"CE {r['source_ce']:.2f} → {r['ood_ce']:.2f} at {r['theta_deg']:g}°"


def minilm_F_text(cfg, s: Sample, est: Estimate) -> str:
    return f"F = {_first(s, 'F_ce'):+.3f}"


def second_peak_text(cfg, s: Sample, est: Estimate) -> str:
    r = s.rows.iloc[0]
    prom = ", ".join(f"{p:.3f}" for p in r["prominences"])
    planes = f"{int(r['planes'])} planes, mean gap {r['mean_gap']:.3f}"
    return f"excess {r['excess']:+.3f} (peak prominences {prom}; {planes})"


def domain_text(cfg, s: Sample, est: Estimate) -> str:
    return f"mean ρ = {est.value:+.2f} over {est.n} target domains"
