"""Verdicts on the declared claims of the ``ood`` experiment (arXiv:2609.36448; docs/papers/ood.md §6): one test of
:mod:`iclab.stats` per claim of :mod:`iclab.experiments.ood.claims`, on the measured results table.

Deterministic quantities (attention masses with exact counts) are judged with the float64
rounding as their uncertainty; shares of points that follow a rule with a Clopper–Pearson interval; SGD quantities
with the spread over SGD runs (Student's t); Monte-Carlo and evaluation-set quantities with their standard errors
(paired where the same prompts or sentences are scored twice).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd

from iclab.experiments.ood.claims import claims
from iclab.experiments.ood.notes import notes
from iclab.experiments.ood.reference import PAPER_ENCODER_F, PAPER_F, PAPER_OOD, PAPER_TINY
from iclab.experiments.ood.tables import first_row, forget_repeats, forget_table, part_rows, within_target_spearman
from iclab.stats import AGREES, DISAGREES, Verdict, judge_direction, judge_equivalence, judge_value, mean_se

__all__ = ["claims", "compare", "notes", "share_verdict", "exact_verdict"]

_ROUNDING = 1e-15  # relative float64 rounding: the uncertainty of a deterministic quantity


def _say(verdict: Verdict, measured: str) -> Verdict:
    """``verdict`` with a measured value that says what was measured."""
    return dataclasses.replace(verdict, measured=measured)


def exact_verdict(value: float, target: float, rel_tol: float) -> Verdict:
    """A deterministic quantity against a target (equivalence within ``rel_tol``, uncertainty float64 rounding)."""
    v = judge_equivalence(value, _ROUNDING * max(1.0, abs(target)), target, rel_tol=rel_tol)
    return dataclasses.replace(v, uncertainty="float64 rounding (deterministic)")


def share_verdict(hits: int, n: int, rel_tol: float = 0.05) -> Verdict:
    """The share ``hits / n`` of cases that follow a rule against 1 (every case): equivalence within ``rel_tol``,
    the standard error read off the Clopper–Pearson 95 % interval."""
    from scipy.stats import beta

    if n == 0:
        return judge_equivalence(float("nan"), float("nan"), 1.0, rel_tol=rel_tol)
    p = hits / n
    lo = float(beta.ppf(0.025, hits, n - hits + 1)) if hits > 0 else 0.0
    hi = float(beta.ppf(0.975, hits + 1, n - hits)) if hits < n else 1.0
    v = judge_equivalence(p, max(p - lo, hi - p) / 1.959964, 1.0, rel_tol=rel_tol, n=n)
    return dataclasses.replace(
        v, measured=f"{hits}/{n} = {p:.1%}", uncertainty=f"Clopper–Pearson 95 % [{lo:.3f}, {hi:.3f}]"
    )


def _t_equivalence(values, target: float, rel_tol: float, extra_var: float = 0.0) -> Verdict:
    """Mean ± SE over runs (Student's t) against ``target``; ``extra_var`` adds a known variance of the mean, and the
    float64 rounding is the floor of the SE (runs that agree exactly)."""
    m, se, n = mean_se(values)
    se = max(math.sqrt(se**2 + extra_var), _ROUNDING * max(1.0, abs(target))) if math.isfinite(se) else se
    return judge_equivalence(m, se, target, rel_tol=rel_tol, n=n, dof=n - 1 if n > 1 else None)


def _combined_values(pairs, measured: str) -> Verdict:
    """Several paper values judged together (the statistic lists them): disagrees when any ``judge_value``
    disagrees, agrees when all agree, else not judged with the first undecided value's reason."""
    verdicts = [judge_value(m, se, p) for m, se, p in pairs]
    stat = "; ".join(v.statistic for v in verdicts)
    unc = ", ".join(v.uncertainty for v in verdicts)
    if any(v.verdict == DISAGREES for v in verdicts):
        return Verdict(DISAGREES, measured, unc, stat)
    if all(v.verdict == AGREES for v in verdicts):
        return Verdict(AGREES, measured, unc, stat)
    first = next(v for v in verdicts if v.verdict not in (AGREES, DISAGREES))
    return dataclasses.replace(first, measured=measured, statistic=stat, uncertainty=unc)


def _pretraining(cfg, r) -> dict:
    n = len(r["rep_alpha_star"])
    grid = cfg.log_every * math.ceil(r["theory_steps"] / cfg.log_every)  # population GD's step on the check grid
    return {
        "beta-symmetric": _say(
            _t_equivalence([1 + v for v in r["rep_beta_dev"]], 1.0, 0.05),
            f"1 + {np.mean(r['rep_beta_dev']):.2e} (largest relative deviation, {n} runs)",
        ),
        "alpha-star-vs-gd": _say(
            _t_equivalence(r["rep_alpha_star"], r["theory_alpha_star"], 0.02),
            f"{np.mean(r['rep_alpha_star']):.4f} (SGD, {n} runs) vs population GD "
            f"{r['theory_alpha_star']:.4f} (large N {r['largeN_alpha_star']:.4f})",
        ),
        "stop-steps-vs-gd": _say(
            _t_equivalence(r["rep_steps"], grid, 0.05, cfg.log_every**2 / 12 / n),
            f"{np.mean(r['rep_steps']):.1f} steps (SGD, {n} runs, checked every "
            f"{cfg.log_every}) vs population GD {int(r['theory_steps'])} (→ {grid})",
        ),
    }


def _theta(r, deg: float):
    th = [float(t) for t in r["theta_deg"]]
    return th.index(float(deg)) if float(deg) in th else None


def _rotation(cfg, r) -> dict:
    out = {}
    idx = {deg: _theta(r, deg) for deg in (30, 60)}
    for deg, i in idx.items():
        if i is None:
            continue
        mc, se, th = r["L_mc"][i], r["L_se"][i], r["L_theory"][i]
        out[f"ood-error-formula-{deg}"] = _say(
            judge_equivalence(mc, se, th, rel_tol=0.1, n=cfg.ood_prompts), f"{mc:.4f} (MC) vs exact at N {th:.4f}"
        )
        out[f"ood-error-paper-{deg}"] = _say(judge_value(mc, se, PAPER_OOD[deg]), f"{mc:.4f} (MC, N = {cfg.n_tokens})")
    if None not in idx.values():
        i30, i60 = idx[30], idx[60]
        d = r["L_mc"][i60] - r["L_mc"][i30]
        out["ood-error-grows"] = _say(
            judge_direction(
                d, math.hypot(r["L_se"][i30], r["L_se"][i60]), sign=+1, smallest=cfg.threshold, n=cfg.ood_prompts
            ),
            f"{r['L_mc'][i30]:.4f} → {r['L_mc'][i60]:.4f} (Δ {d:+.4f})",
        )
    ratios = np.asarray(r["randomM_alpha_u"]) / np.asarray(r["randomM_alpha_u_closed"])
    out["ood-closed-form"] = _say(
        _t_equivalence(ratios, 1.0, 0.05),
        f"ratio {ratios.mean():.4f} (max |closed − UᵀQU| = {r['randomM_closed_vs_exact']:.1e})",
    )
    mc = np.concatenate([r["inspan30_mc"], r["inspan60_mc"]])
    se = np.concatenate([r["inspan30_se"], r["inspan60_se"]])
    th = np.concatenate([r["inspan30_theory"], r["inspan60_theory"]])
    rbar, rse = float(np.mean(mc / th)), float(np.sqrt(np.sum((se / th) ** 2)) / len(th))
    out["inspan-formula"] = _say(
        judge_equivalence(rbar, rse, 1.0, rel_tol=0.1, n=cfg.ood_prompts),
        f"MC / exact = {rbar:.4f} over {len(th)} per-feature errors",
    )
    return out


def _collapse(cfg, r) -> dict:
    vbar, vbar_se = r["query_vbar_sgd_err"], r["query_vbar_sgd_err_se"]
    return {
        "query-vbar-uniform": _say(
            exact_verdict(r["query_vbar_sgd_attn_max_mean"], 1 / cfg.K, 0.01),
            f"largest mass {r['query_vbar_sgd_attn_max_mean']:.4f} (SGD Q; symmetric Q*: "
            f"max|A − 1/K| {r['query_vbar_closed_attn_maxdev']:.0e})",
        ),
        "query-vbar-error-paper": _say(judge_value(vbar, vbar_se, 0.375), f"{vbar:.1e}"),
    }


def _forgetting(cfg, ft: pd.DataFrame, reps: pd.DataFrame) -> dict:
    hits = int(((ft["forgot1"] == ft["pred1"]).sum() + (ft["forgot2"] == ft["pred2"]).sum()))
    rises = [
        (float(a) > 0)
        for g, a in zip(list(ft["gamma1"]) + list(ft["gamma2"]), list(ft["dAlphaV1"]) + list(ft["dAlphaV2"]))
        if abs(g) > 1e-9
    ]
    table = ft[
        [
            any(np.isclose(g1, t1) and np.isclose(g2, t2) for t1 in cfg.gamma1_table for t2 in cfg.gamma2_table)
            for g1, g2 in zip(ft["gamma1"], ft["gamma2"])
        ]
    ]
    table = table[np.abs(table["F_theory"]) >= 1e-5]
    ratios = (table["F"] / table["F_theory"]).to_numpy()
    out = {
        "forget-sign-rule": share_verdict(hits, 2 * len(ft)),
        "forget-alpha-rises": share_verdict(sum(rises), len(rises)),
        "forget-F-vs-gd": _say(
            _t_equivalence(ratios, 1.0, 0.1), f"F / F_theory = {ratios.mean():.4f} over {len(ratios)} table points"
        ),
    }
    values = []
    for (g1, g2), ref in PAPER_F.items():
        row = reps[np.isclose(reps["gamma1"], g1) & np.isclose(reps["gamma2"], g2)]
        if row.empty:
            continue
        runs = row.iloc[0]["F_runs"]
        m, se, n = mean_se(runs)
        values.append((m, se, ref))
        if ref:
            out[f"forget-sign-paper-{g2:g}"] = _say(
                judge_direction(m, se, sign=1 if ref > 0 else -1, n=n, dof=n - 1 if n > 1 else None),
                f"{m:+.2e} ({n} SGD fine-tunings)",
            )
    if len(values) == len(PAPER_F):
        out["forget-paper-values"] = _combined_values(values, " / ".join(f"{m:+.5f}" for m, _, _ in values))
    return out


def _tiny_F(tiny: pd.DataFrame, layers: int, g2: float):
    rows = tiny[tiny["layers"] == layers]
    if rows.empty:
        return None
    r = rows.iloc[0]
    g2s = [float(g) for g in r["gamma2_list"]]
    return (r["F"][g2s.index(g2)], r["F_se"][g2s.index(g2)]) if g2 in g2s else None


def _tiny(cfg, tiny: pd.DataFrame) -> dict:
    out = {}
    anti, orth, deep = _tiny_F(tiny, 1, -0.75), _tiny_F(tiny, 1, 0.0), _tiny_F(tiny, 3, -0.75)
    if anti:
        out["tiny-forgets-anti"] = _say(judge_direction(*anti, sign=+1, n=cfg.tiny_eval), f"F = {anti[0]:+.4f}")
    if orth:
        out["tiny-bwt-orthogonal"] = _say(judge_direction(*orth, sign=-1, n=cfg.tiny_eval), f"F = {orth[0]:+.4f}")
    if anti and deep:
        out["tiny-depth-amplifies"] = _say(
            judge_direction(deep[0] - anti[0], math.hypot(anti[1], deep[1]), sign=+1, n=cfg.tiny_eval),
            f"{anti[0]:+.4f} → {deep[0]:+.4f}",
        )
    values = [
        (*f, ref)
        for n, refs in PAPER_TINY.items()
        for g2, ref in zip((-0.75, 0.0, 0.75), refs)
        if (f := _tiny_F(tiny, n, g2))
    ]
    if len(values) == 9:
        out["tiny-paper-values"] = _combined_values(values, " / ".join(f"{m:+.3f}" for m, _, _ in values))
    return out


def _minilm(r) -> dict:
    out = {}
    i90, i180 = _theta(r, 90), _theta(r, 180)
    if i90 is not None:
        drop = r["ood_ce"][i90] - r["source_ce"]
        out["minilm-ood-drop"] = _say(
            judge_direction(drop, r["ood_ce_se"][i90], sign=+1, n=int(r["n_test"])),
            f"CE {r['source_ce']:.2f} → {r['ood_ce'][i90]:.2f} at 90°",
        )
        out["minilm-protect-half-pi"] = _say(
            judge_direction(
                r["F_ce"][i90], r["F_ce_se"][i90], sign=-1, smallest=abs(PAPER_ENCODER_F[90]), n=int(r["n_test"])
            ),
            f"F = {r['F_ce'][i90]:+.3f}",
        )
    if i180 is not None:
        out["minilm-forget-pi"] = _say(
            judge_direction(r["F_ce"][i180], r["F_ce_se"][i180], sign=+1, n=int(r["n_test"])),
            f"F = {r['F_ce'][i180]:+.3f}",
        )
    return out


def _minilm_shift(r) -> dict:
    out = {}
    for cid, key, sign in (("minilm-gap-single-peak", "gap1", -1), ("minilm-gap-two-peaks", "gap2", +1)):
        v = judge_direction(
            r[f"{key}_excess"], ci=(r[f"{key}_excess_lo"], r[f"{key}_excess_hi"]), sign=sign, n=int(r["gap_n_test"])
        )
        prom = ", ".join(f"{p:.3f}" for p in r[f"{key}_prominences"])
        out[cid] = _say(
            v,
            f"excess {r[f'{key}_excess']:+.3f} (peak prominences {prom}; {int(r['gap_planes'])} "
            f"planes, mean gap {r[f'{key}_mean_gap']:.3f})",
        )
    if isinstance(r.get("domain_sim"), list) and len(r["domain_sim"]) > 3:
        rho = within_target_spearman(r["domain_sim"], r["domain_ce"])
        m, se, n = mean_se(rho)
        se = max(se, _ROUNDING) if math.isfinite(se) else se  # every target equally monotone: no spread
        out["minilm-domain-similarity"] = _say(
            judge_direction(m, se, sign=-1, smallest=0.2, n=n, dof=n - 1 if n > 1 else None),
            f"mean ρ = {m:+.2f} over {n} target domains",
        )
    return out


def compare(cfg, df: pd.DataFrame) -> dict[str, Verdict]:
    """A verdict for every declared claim whose part is in ``df`` (the others stay "not measured")."""
    out: dict[str, Verdict] = {}
    if (r := first_row(df, "pretrain")) is not None:
        out.update(_pretraining(cfg, r))
    if (r := first_row(df, "ood")) is not None:
        out.update(_rotation(cfg, r))
        out.update(_collapse(cfg, r))
    ft = forget_table(df)
    if len(ft):
        out.update(_forgetting(cfg, ft, forget_repeats(df)))
    tiny = part_rows(df, "tiny")
    if not tiny.empty:
        out.update(_tiny(cfg, tiny))
    if (r := first_row(df, "minilm")) is not None:
        out.update(_minilm(r))
    if (r := first_row(df, "minilm_shift")) is not None:
        out.update(_minilm_shift(r))
    return out
