"""The ``multihead`` package's own statistics, named by its claim records (arXiv:2503.12734; docs/papers/multihead.md
§7; the vocabulary: :mod:`iclab.claims._records`): columns read at one prompt length; the seed mean (one seed:
its own SE over the n_eval prompts, normal; several: the SE over seeds, Student t with seeds − 1 dof; two models
are compared paired by seed); values pooled over the trained H ≥ 2 models, seed by seed (the models of a seed share
its batches); sign matching with the seed as the unit (Clopper–Pearson); the multi-task head sharing and task gap; length generalisation; the slack to Thm 1's
Bayes-ratio bound; and the measured texts (the training gates are declared with the records).
"""

from __future__ import annotations

import dataclasses
import math
from functools import partial

import numpy as np
import pandas as pd

from iclab.claims import Estimate, Sample
from iclab.experiments.multihead.conventions import SIGN_MATCH_MIN, ZERO_SUM_MAX
from iclab.experiments.multihead.paper_values import FIG25_PROMPTS, SEED_SUMMARY, SEED_SUMMARY_LENGTHGEN
from iclab.stats import clopper_pearson, clopper_pearson_trials, fmt, mean_se, unit_mean
from iclab.theory import multihead as th

NAN = float("nan")
#: from two seeds on the SE is over seeds (a Student-t band from two is refused: too few units), with one the seed's
#: own SE over prompts (:func:`~iclab.claims._statistics.unit_mean`)
MIN_SEEDS = 2

# --- columns: rows -> (rows,) values -----------------------------------------------------------------------------


def _at(col: str, n: int, plus: float, rows: pd.DataFrame) -> np.ndarray:
    def one(r) -> float:
        lengths = list(r["lengths"])
        return float(r[col][lengths.index(n)]) if n in lengths else NAN

    return np.array([one(r) for _, r in rows.iterrows()], dtype=float) + plus


def at(col: str, n: int, plus: float = 0.0):
    """The list column ``col`` at prompt length ``n`` (NaN where it was not evaluated), plus ``plus``."""
    return partial(_at, col, n, plus)


def scalar(col: str, rows: pd.DataFrame) -> np.ndarray:
    """The scalar column ``col`` (NaN where the rows lack it)."""
    return rows[col].to_numpy(float) if col in rows else np.full(len(rows), NAN)


def _h2(rows: pd.DataFrame) -> np.ndarray:
    """(rows,) bool: the H ≥ 2 models (H read from the unit index or the column, never by copying the frame)."""
    h = rows.index.get_level_values("H") if "H" in rows.index.names else rows["H"]
    return np.asarray(h, dtype=float) >= 2


def h2_trained_steps(rows: pd.DataFrame) -> np.ndarray:
    """The Adam steps each trained H ≥ 2 model ran (NaN for rows from before they were recorded)."""
    return scalar("trained_steps", rows[_h2(rows)])


def multi(col: str, rows: pd.DataFrame) -> np.ndarray:
    """``col`` of the trained H ≥ 2 models (NaN for H = 1: the claims pool every H ≥ 2 model of every seed)."""
    return np.where(_h2(rows), scalar(col, rows), NAN)


def zero_sum(h2: bool, rows: pd.DataFrame) -> np.ndarray:
    """:data:`ZERO_SUM_MAX` − |Σμ|/Σ|μ| per model (of the H ≥ 2 models with ``h2``): > 0 when the OV circuits cancel."""
    return ZERO_SUM_MAX - (multi if h2 else scalar)("diag_ov_zero_sum", rows)


def per_row(f, part: int, rows: pd.DataFrame) -> np.ndarray:
    """Entry ``part`` (0 the value, 1 its SE) of the per-row statistic ``f``."""
    return np.array([f(r)[part] for _, r in rows.iterrows()], dtype=float)


def sharing(r: pd.Series) -> tuple[float, float]:
    """The smaller share of the two tasks for the head the weights say serves both most, and its SE."""
    serve = np.asarray(r["serve"], float)  # (H, N)
    h = int(np.argmax((serve / serve.max(0, keepdims=True)).min(1)))
    err = np.asarray(r["err_per_task"], float)
    share = np.asarray(r["ablation_rise"], float)[h] / err  # (N,)
    n = int(np.argmin(share))
    return float(share[n]), float(np.asarray(r["ablation_rise_se"], float)[h][n] / err[n])


def task_gap(r: pd.Series) -> tuple[float, float]:
    """The model's error minus per-task debiased GD's, averaged over the tasks, and its SE: paired per prompt over
    both tasks (``dgd_diff_mean``) when the row has it; else (older results) the per-task SEs as if independent."""
    se = r.get("dgd_diff_mean_se", NAN)
    if se is not None and math.isfinite(float(se)):
        return float(r["dgd_diff_mean"]), float(se)
    d, s = np.asarray(r["dgd_diff_per_task"], float), np.asarray(r["dgd_diff_se_per_task"], float)
    return float(d.mean()), float(np.sqrt((s**2).sum()) / len(s))


def dgd_level(rows: pd.DataFrame) -> np.ndarray:
    """Per-task debiased GD's error on the task's support, averaged over the tasks."""
    return np.array([np.mean(r["err_dgd_per_task"]) for _, r in rows.iterrows()], dtype=float)


def mt_error(rows: pd.DataFrame) -> np.ndarray:
    """The multi-task model's mean task error: per-task debiased GD's plus the paired :func:`task_gap`."""
    return dgd_level(rows) + per_row(task_gap, 0, rows)


def finite_mean(x: np.ndarray) -> float:
    x = x[np.isfinite(x)]
    return float(x.mean()) if x.size else NAN


def dgd_risk(cfg, n: int) -> float:
    """The exact risk of debiased GD at η* (d, n_train, σ² of ``cfg``) at prompt length n."""
    return float(th.gd_risk(th.eta_star(cfg.d, cfg.n_train, cfg.sigma2), cfg.d, n, cfg.sigma2))


# --- combine rules: (config, Sample) -> Estimate -----------------------------------------------------------------


def _seed_means(values: np.ndarray, rows: pd.DataFrame) -> np.ndarray:
    """``(seeds,)`` the mean of each seed's finite per-model ``values`` (``rows`` indexed by a unit with a ``seed``
    level): the models of one seed (every H, every activation) train on the same batches, drawn by seed and step, so
    they move together and are one replicate, not several."""
    v = pd.Series(np.asarray(values, float), index=rows.index.get_level_values("seed"))
    return v[np.isfinite(v.to_numpy())].groupby(level=0).mean().to_numpy()


def over_seeds(cfg, s: Sample) -> Estimate:
    """Mean ± SE over seeds of each seed's mean over its models, Student t with seeds − 1 dof: the models of one seed
    (every H, every activation) train on the same batches, drawn by seed and step, so they move together and are
    one replicate, not several (their spread holds the initialisations only, not the batches'). The report's test
    text is this sentence (:func:`~iclab.claims._rule.combine_phrase`); :func:`_seed_means` groups them."""
    m, se, n = mean_se(_seed_means(s.values, s.rows))
    models = int(np.isfinite(s.values).sum())
    how = f"{models} models of {n} seed(s); a seed's models share its batches: one replicate"
    return Estimate(m, se, dof=n - 1 if n > 1 else None, n=n, how=how)


def seed_mean(se, cfg, s: Sample, drop_nan=True, below=None, plus=0.0) -> Estimate:
    """Mean over seeds of the measure (the finite ones, all with ``drop_nan`` False) and its SE: over seeds (Student
    t, seeds − 1 dof) from two seeds on, else the one seed's own SE over prompts ``se(rows)`` (``se`` None: the
    sample's per-unit SEs, ``Measure.se_column``, paired ones combined; normal). ``below``: the estimate is
    ``below`` − the mean; ``plus``: + a level."""
    m, sd, dof = unit_mean(s.values, se(s.rows) if se is not None else s.ses, MIN_SEEDS, drop_nan)
    m = below - m if below is not None else m + plus
    return Estimate(m, sd, dof=dof, n=len(s.values))


def fig25(se_col: str, n: int, exact: bool, cfg, s: Sample) -> Estimate:
    """A baseline value at L = n; SE_paper: iclab's per-prompt spread over the authors' prompts. A closed form is exact:
    its band is the paper's Monte Carlo error alone, carried as the SE of the difference (the vocabulary has no
    exact value)."""
    se_mc = float(at(se_col, n)(s.rows)[0])
    paper_se = se_mc * math.sqrt(cfg.n_mc / FIG25_PROMPTS)
    if exact:
        return Estimate(float(s.values[0]), paper_se, paper_se=0.0, how="closed form (exact): the band is SE_paper")
    return Estimate(float(s.values[0]), se_mc, paper_se=paper_se)


def fig24(prompts: int, ref: float, n: int, cfg, s: Sample) -> Estimate:
    """The paired difference model − debiased GD at L' = n (seed mean); SE_paper: the authors' ``prompts`` with the
    per-prompt spread iclab measures (err_sd / err, of the error ``ref``, not of the gap)."""
    est = seed_mean(at("dgd_diff_se", n), cfg, s)
    cv = finite_mean(at("err_sd", n)(s.rows)) / finite_mean(at("err", n)(s.rows))
    return Estimate(est.value, est.se, dof=est.dof, n=est.n, paper_se=cv * ref / math.sqrt(prompts))


def _sign_counts(rows: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """The live heads and the matching fraction (:func:`_matching`) of each H ≥ 2 model with live heads."""
    frac = _matching(rows)
    keep = np.isfinite(frac)
    return (rows["diag_n_plus"] + rows["diag_n_minus"]).to_numpy(float)[keep], frac[keep]


def _matching(rows: pd.DataFrame) -> np.ndarray:
    """``(rows,)`` each H ≥ 2 model's matching fraction of its live heads; NaN for H = 1 or no live head."""
    live = (rows["diag_n_plus"] + rows["diag_n_minus"]).to_numpy(float)
    return np.where(_h2(rows) & (live > 0), rows["diag_sign_match"].to_numpy(float), NAN)


def sign_matching(cfg, s: Sample) -> Estimate:
    """Fraction of matching live heads − :data:`SIGN_MATCH_MIN` with the seed as the unit (heads of one model are not
    independent, nor are the models of one seed, which share its batches): each seed with live heads is one trial
    scoring its models' mean fraction; Clopper–Pearson 95 %."""
    frac = _seed_means(_matching(s.rows), s.rows)  # (seeds,)
    n, k = float(frac.size), float(frac.sum())
    if n == 0:
        return Estimate(NAN, n=0)
    lo, hi = clopper_pearson(k, n)
    ci = (lo - SIGN_MATCH_MIN, hi - SIGN_MATCH_MIN)
    return Estimate(k / n - SIGN_MATCH_MIN, ci=ci, n=int(n), needs=seeds_to_decide(k, int(n)))


def _sign_matching_at(cfg, s: Sample, truth: float, rng: np.random.Generator) -> Sample:
    """The rows of ``s`` redrawn where :func:`sign_matching`'s estimate is ``truth`` in expectation (the row-level
    calibration's least favourable truth, :func:`iclab.claims._resample.placed_rate`): each seed with live heads one
    Bernoulli trial at :data:`SIGN_MATCH_MIN` + ``truth`` — all its models' live heads match, or none does — the
    law the Clopper–Pearson interval states."""
    p = SIGN_MATCH_MIN + truth
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"a matching share of {p:g} is outside [0, 1]")
    rows = s.rows.copy()
    live = np.isfinite(_matching(rows))
    seeds = rows.index.get_level_values("seed")
    hit = {seed: float(rng.random() < p) for seed in pd.unique(seeds[live])}
    rows["diag_sign_match"] = np.where(live, [hit.get(seed, NAN) for seed in seeds], rows["diag_sign_match"])
    return dataclasses.replace(s, rows=rows)


sign_matching.at_truth = _sign_matching_at  # type: ignore[attr-defined]
sign_matching.bounds = (-SIGN_MATCH_MIN, 1.0 - SIGN_MATCH_MIN)  # type: ignore[attr-defined]


def seeds_to_decide(k: float, n: int, most: int = 10_000) -> str:
    """What would decide :func:`sign_matching` (its interval is exact, so the judge's normal approximation of the
    count would not hold): the fewest seeds m ≥ n at which the Clopper–Pearson bound of (k + m − n)/m clears
    :data:`SIGN_MATCH_MIN`, every added seed matching (:func:`iclab.stats.clopper_pearson_trials`; one seed that
    matches: m = 36)."""
    m = clopper_pearson_trials(k, n, SIGN_MATCH_MIN, most)
    if m is None:
        return f"more than {most:,} seeds, even with every added one matching (now {n:,})"
    return f"at least {m:,} seeds, every added one matching (now {n:,})"


def _lengthgen(train: int, n_eval: int, rows: pd.DataFrame, sign: int):
    Ls = list(rows.iloc[0]["lengths"])
    a_n, b_n = train, max(Ls)
    a, b, sa, sb = (np.array([float(r[c][Ls.index(k)]) if k in Ls else NAN for _, r in rows.iterrows()])
                    for c, k in (("err", a_n), ("err", b_n), ("err_sd", a_n), ("err_sd", b_n)))  # fmt: skip
    return sign * (b - a), np.hypot(sa, sb) / math.sqrt(n_eval), a, b, b_n


def lengthgen_change(sign: int, train: int, n_eval: int, part: int, rows: pd.DataFrame) -> np.ndarray:
    """Per seed: ``part`` 0: ``sign``·(error at the longest test length − at the training length ``train``); 1: its
    SE, √(sd_a² + sd_b²)/√n_eval over the two independent prompt sets. The claims combine the seeds with
    :func:`seed_mean` (one seed: this SE, normal; several: the SE over seeds, Student t)."""
    return _lengthgen(train, n_eval, rows, sign)[part]


def _ratio_index(which: str, d: int, n_train: int, r: pd.Series) -> int | None:
    sweep, ds, Ls = list(r["ratio_sweep"]), list(r["ratio_d"]), list(r["ratio_L"])
    if which == "d":  # the largest d of the sweep at fixed ξ
        big = [i for i, w in enumerate(sweep) if w == "d"]
        return max(big, key=lambda j: ds[j]) if big else None
    return next((i for i, w in enumerate(sweep) if w == "L" and ds[i] == d and Ls[i] == n_train), None)


def ratio_slack(which: str, d: int, n_train: int, part: int, rows: pd.DataFrame) -> np.ndarray:
    """Per ``ratio`` cell: ``part`` 0: Thm 1's bound − E(debiased GD)/Bayes at the sweep's largest d (``which`` =
    "d") or at (d, n_train); 1: its SE (delta method); NaN where the sweep lacks that point."""
    out = []
    for _, r in rows.iterrows():
        i = _ratio_index(which, d, n_train, r)
        out.append(NAN if i is None else (r["ratio_bound"][i] - r["ratio_ratio"][i], r["ratio_ratio_se"][i])[part])
    return np.array(out, dtype=float)


def bayes_slack(cfg, s: Sample) -> Estimate:
    """Thm 1's bound at (d, n_train) − the trained model's error over the Bayes error (:func:`seed_mean` at n_train)."""
    est = seed_mean(at("bayes_ratio_se", cfg.n_train), cfg, s)
    return Estimate(th.bayes_ratio_bound(cfg.d / cfg.n_train, cfg.sigma2) - est.value, est.se, dof=est.dof)


# --- measured texts: (config, Sample, Estimate) -> str -------------------------------------------------------------


def fig24_text(n: int, cfg, s: Sample, est: Estimate) -> str:
    return f"{est.value:+.4f} (error {finite_mean(at('err', n)(s.rows)):.4f})"


def dgd_level_text(risk: float, cfg, s: Sample, est: Estimate) -> str:
    return f"{fmt(est.value)} (paired difference {est.value - risk:+.4f})"


def h2_text(cfg, s: Sample, est: Estimate) -> str:
    rel = finite_mean(scalar("dgd_rel_fit", s.rows))
    gap = est.value - dgd_risk(cfg, cfg.n_train)
    return f"{fmt(est.value)} (paired difference {gap:+.4f}; relative distance of ŷ to debiased GD {rel:.4f})"


def eta_text(cfg, s: Sample, est: Estimate) -> str:
    w = float(s.b.mean())
    return f"fitted step {est.value + w:.4f} vs 2C_f‖ω‖∞‖μ‖∞ = {w:.4f}"


def zero_sum_text(cfg, s: Sample, est: Estimate) -> str:
    return f"|Σμ|/Σ|μ| = {ZERO_SUM_MAX - est.value:.4f} ({est.n} seed(s))" if math.isfinite(est.value) else "—"


def sign_text(cfg, s: Sample, est: Estimate) -> str:
    live, frac = _sign_counts(s.rows)
    heads = f"{int(round(float((frac * live).sum())))} of {int(live.sum())} live heads match"
    return (
        f"{est.value + SIGN_MATCH_MIN:.3f} per seed ({heads}; {frac.size} models of {est.n} seed(s))"
        if frac.size
        else "—"
    )


def lengthgen_text(sign: int, cfg, s: Sample, est: Estimate) -> str:
    _, _, a, b, b_n = _lengthgen(cfg.lengthgen_train, cfg.n_eval, s.rows, sign)
    return f"{np.mean(a):.4f} (L = {cfg.lengthgen_train}) → {np.mean(b):.4f} (L = {b_n})"


def slack_text(which: str, cfg, s: Sample, est: Estimate) -> str:
    r = s.rows.iloc[0]
    i = _ratio_index(which, cfg.d, cfg.n_train, r)
    out = f"ratio {r['ratio_ratio'][i]:.4f} vs bound {r['ratio_bound'][i]:.4f} (slack {est.value:+.4f})"
    return f"d = {r['ratio_d'][i]}, L = {r['ratio_L'][i]}: {out}" if which == "d" else out


def bayes_text(cfg, s: Sample, est: Estimate) -> str:
    bound = th.bayes_ratio_bound(cfg.d / cfg.n_train, cfg.sigma2)
    return f"ratio {bound - est.value:.4f} vs bound {bound:.4f} (slack {est.value:+.4f})"


def below_bayes(key: str, cfg, rec) -> str:
    """Why a second-hand row is never judged, with iclab's theory at its (d, n) (``ClaimRecord.not_run``)."""
    s2 = cfg.sigma2
    if key == "lengthgen":
        d, ltr, lte, *_ = SEED_SUMMARY_LENGTHGEN
        e = th.eta_star(d, ltr, s2)
        dgd, frozen = float(th.gd_risk(e, d, lte, s2)), float(th.gd_risk(e * lte / ltr, d, lte, s2, False))
        why = "its values lie below the noise floor σ² = 0.1"
        return why + f" (theory: debiased GD {dgd:.3f}; frozen-1/L GD {frozen:.2f})"
    d, L, *_ = SEED_SUMMARY[key]
    dgd, bayes = float(th.gd_risk(th.eta_star(d, L, s2), d, L, s2)), th.bayes_risk(d, L, s2, n_mc=500)[0]
    return f"its values lie below iclab's Bayes risk (theory: debiased GD {dgd:.3f}, Bayes {bayes:.3f})"
