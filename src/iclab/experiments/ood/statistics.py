"""The ``ood`` experiment's own statistics, named by its claim records (arXiv:2609.36448; docs/papers/ood.md §5.10).

A cell of this experiment is one row whose replicates are lists (SGD runs, features, γ2 points, θ, target domains),
so each record reads its estimate from its cells' rows: a reading rule ``read(config, sample) -> (Estimate, measured
text)`` (:func:`reading` hands the two halves to the one judge). SGD quantities are the mean over SGD runs with a
Student-t band (:func:`_runs`; runs that agree exactly have SE 0, which the judge refuses); a
target read from the row (population GD or the exact formula at N) is judged as the ratio measured / target
against 1 (the SE divided by |target|: the equivalence test decides as on the raw scale); Monte-Carlo and
evaluation-set quantities carry their standard errors (independent differences combine by hypot); a share of points
that follow a rule its Clopper–Pearson SE (:func:`share`); attention masses with exact counts float64 rounding.
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np
import pandas as pd

from iclab.experiments._records import Estimate, Sample
from iclab.experiments._statistics import whole_rows
from iclab.experiments.ood.tables import forget_table, within_target_spearman
from iclab.stats import clopper_pearson, mean_se

__all__ = ["ROUNDING", "reading", "share"]

ROUNDING = 1e-15  # relative float64 rounding: the uncertainty of a deterministic quantity
_NAN = Estimate(float("nan"), float("nan")), "—"


def _combine(read, config, s: Sample) -> Estimate:
    return read(config, s)[0]


def _measured(read, config, s: Sample, est: Estimate) -> str:
    return read(config, s)[1]


def reading(read) -> dict:
    """The ``Measure`` fields of the reading rule ``read``: the placeholder column (it reads the rows itself), its
    estimate (``combine``) and its measured text (``measured``)."""
    return {"column": whole_rows, "combine": partial(_combine, read), "measured": partial(_measured, read)}


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


def share(hits: int, n: int) -> tuple[Estimate, str]:
    """The share ``hits / n`` with the SE read off its Clopper–Pearson 95 % interval (the interval in the tail)."""
    if n == 0:
        return Estimate(float("nan"), float("nan"), n=0), "—"
    p, (lo, hi) = hits / n, clopper_pearson(hits, n)
    est = Estimate(p, max(p - lo, hi - p) / 1.959964, n=n, tail=f"Clopper–Pearson 95 % [{lo:.3f}, {hi:.3f}]")
    return est, f"{hits}/{n} = {p:.1%}"


def _at(s: Sample, *degs: float):
    """The row and the indices of the angles ``degs`` in its ``theta_deg`` (None when one is missing)."""
    r = s.rows.iloc[0]
    th = [float(t) for t in r["theta_deg"]]
    return r, None if any(float(d) not in th for d in degs) else [th.index(float(d)) for d in degs]


def _forget(s: Sample) -> pd.DataFrame:
    """One row per (γ1, γ2) of the selected forget cells (:func:`~iclab.experiments.ood.tables.forget_table`)."""
    return forget_table(s.rows.copy().reset_index())


def beta_symmetry(cfg, s: Sample):
    dev = s.rows.iloc[0]["rep_beta_dev"]
    est, _, n = _runs([1 + v for v in dev])
    return est, f"1 + {np.mean(dev):.2e} (largest relative deviation, {n} runs)"


def alpha_star(cfg, s: Sample):
    r = s.rows.iloc[0]
    est, m, n = _runs(r["rep_alpha_star"], r["theory_alpha_star"])
    gd = f"{r['theory_alpha_star']:.4f} (large N {r['largeN_alpha_star']:.4f})"
    return est, f"{m:.4f} (SGD, {n} runs) vs population GD {gd}"


def stop_steps(cfg, s: Sample):
    """Against population GD's step on the check grid; the grid's quantisation adds log_every²/12 per run."""
    r, every = s.rows.iloc[0], cfg.log_every
    n, grid = len(r["rep_steps"]), every * math.ceil(r["theory_steps"] / every)
    est, m, _ = _runs(r["rep_steps"], grid, every**2 / 12 / n)
    gd = f"population GD {int(r['theory_steps'])} (→ {grid})"
    return est, f"{m:.1f} steps (SGD, {n} runs, checked every {every}) vs {gd}"


def ood_formula(deg: int, cfg, s: Sample):
    r, i = _at(s, deg)
    if i is None:
        return _NAN
    mc, se, th = r["L_mc"][i[0]], r["L_se"][i[0]], r["L_theory"][i[0]]
    return Estimate(mc / th, se / abs(th)), f"{mc:.4f} (MC) vs exact at N {th:.4f}"


def ood_error(deg: int, cfg, s: Sample):
    r, i = _at(s, deg)
    if i is None:
        return _NAN
    return Estimate(r["L_mc"][i[0]], r["L_se"][i[0]]), f"{r['L_mc'][i[0]]:.4f} (MC, N = {cfg.n_tokens})"


def ood_growth(cfg, s: Sample):
    r, i = _at(s, 30, 60)
    if i is None:
        return _NAN
    (a, b), se = (r["L_mc"][j] for j in i), math.hypot(*(r["L_se"][j] for j in i))
    return Estimate(b - a, se), f"{a:.4f} → {b:.4f} (Δ {b - a:+.4f})"


def closed_form(cfg, s: Sample):
    r = s.rows.iloc[0]
    ratios = np.asarray(r["randomM_alpha_u"]) / np.asarray(r["randomM_alpha_u_closed"])
    return _runs(ratios)[0], f"ratio {ratios.mean():.4f} (max |closed − UᵀQU| = {r['randomM_closed_vs_exact']:.1e})"


def inspan(cfg, s: Sample):
    r = s.rows.iloc[0]
    mc, se, th = (np.concatenate([r[f"inspan30_{k}"], r[f"inspan60_{k}"]]) for k in ("mc", "se", "theory"))
    rbar, rse = float(np.mean(mc / th)), float(np.sqrt(np.sum((se / th) ** 2)) / len(th))
    return Estimate(rbar, rse), f"MC / exact = {rbar:.4f} over {len(th)} per-feature errors"


def vbar_attention(cfg, s: Sample):
    r = s.rows.iloc[0]
    mass = r["query_vbar_sgd_attn_max_mean"]
    est = Estimate(mass, ROUNDING * max(1.0, 1 / cfg.K), how="uncertainty: float64 rounding")
    return est, f"largest mass {mass:.4f} (SGD Q; symmetric Q*: max|A − 1/K| {r['query_vbar_closed_attn_maxdev']:.0e})"


def vbar_error(cfg, s: Sample):
    r = s.rows.iloc[0]
    return Estimate(r["query_vbar_sgd_err"], r["query_vbar_sgd_err_se"]), f"{r['query_vbar_sgd_err']:.1e}"


def sign_rule(cfg, s: Sample):
    ft = _forget(s)
    return share(int((ft["forgot1"] == ft["pred1"]).sum() + (ft["forgot2"] == ft["pred2"]).sum()), 2 * len(ft))


def alpha_rises(cfg, s: Sample):
    ft = _forget(s)
    pairs = zip(list(ft["gamma1"]) + list(ft["gamma2"]), list(ft["dAlphaV1"]) + list(ft["dAlphaV2"]))
    rises = [float(a) > 0 for g, a in pairs if abs(g) > 1e-9]
    return share(sum(rises), len(rises))


def forgetting_vs_gd(cfg, s: Sample):
    ft = _forget(s)
    on = [np.isclose(g, cfg.gamma1_table).any() and np.isclose(h, cfg.gamma2_table).any() for g, h in ft.values[:, :2]]
    table = ft[on] if len(ft) else ft
    table = table[np.abs(table["F_theory"]) >= 1e-5]
    ratios = (table["F"] / table["F_theory"]).to_numpy()
    return _runs(ratios)[0], f"F / F_theory = {ratios.mean():.4f} over {len(ratios)} table points"


def forgetting_runs(g2: float, cfg, s: Sample):
    """F at the table point (γ1, ``g2``) over the SGD fine-tunings (the cell's own first)."""
    r = s.rows.iloc[0]
    at = [i for i, g in enumerate(r.get("rep_gamma2") or []) if np.isclose(g, g2)]
    if not at:
        return _NAN
    m, se, n = mean_se(r["rep_F"][at[0]])
    return Estimate(m, se, dof=n - 1 if n > 1 else None, n=n), f"{m:+.2e} ({n} SGD fine-tunings)"


def _tiny_at(r, g2: float) -> tuple[float, float]:
    g2s = [float(g) for g in r["gamma2_list"]]
    return (r["F"][g2s.index(g2)], r["F_se"][g2s.index(g2)]) if g2 in g2s else (float("nan"), float("nan"))


def tiny_F(g2: float, cfg, s: Sample):
    """F at ``g2`` (with a baseline depth: F here minus F there, the SEs combined as independent)."""
    f, se = _tiny_at(s.rows.iloc[0], g2)
    if s.base is None:
        return Estimate(f, se), f"F = {f:+.4f}"
    b, bse = _tiny_at(s.base.iloc[0], g2)
    return Estimate(f - b, math.hypot(bse, se)), f"{b:+.4f} → {f:+.4f}"


def minilm_drop(cfg, s: Sample):
    r, i = _at(s, 90)
    if i is None:
        return _NAN
    ce = r["ood_ce"][i[0]]
    est = Estimate(ce - r["source_ce"], r["ood_ce_se"][i[0]], n=int(r["n_test"]))
    return est, f"CE {r['source_ce']:.2f} → {ce:.2f} at 90°"


def minilm_F(deg: int, cfg, s: Sample):
    r, i = _at(s, deg)
    if i is None:
        return _NAN
    return Estimate(r["F_ce"][i[0]], r["F_ce_se"][i[0]], n=int(r["n_test"])), f"F = {r['F_ce'][i[0]]:+.3f}"


def second_peak(key: str, cfg, s: Sample):
    """Second-peak excess of scenario ``key`` (gap1, gap2) with its bootstrap interval over test sentences."""
    r = s.rows.iloc[0]
    est = Estimate(r[f"{key}_excess"], ci=(r[f"{key}_excess_lo"], r[f"{key}_excess_hi"]), n=int(r["gap_n_test"]))
    prom = ", ".join(f"{p:.3f}" for p in r[f"{key}_prominences"])
    planes = f"{int(r['gap_planes'])} planes, mean gap {r[f'{key}_mean_gap']:.3f}"
    return est, f"excess {r[f'{key}_excess']:+.3f} (peak prominences {prom}; {planes})"


def domain_similarity(cfg, s: Sample):
    """Mean over target domains of the within-target Spearman ρ (t). Targets that are all equally monotone have no
    spread: SE 0, which the judge refuses ("no uncertainty") rather than reading as certainty."""
    r = s.rows.iloc[0]
    if not (isinstance(r.get("domain_sim"), list) and len(r["domain_sim"]) > 3):
        return _NAN
    m, se, n = mean_se(within_target_spearman(r["domain_sim"], r["domain_ce"]))
    se = _spread(se, m)
    return Estimate(m, se, dof=n - 1 if n > 1 else None, n=n), f"mean ρ = {m:+.2f} over {n} target domains"
