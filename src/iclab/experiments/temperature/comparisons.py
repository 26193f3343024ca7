"""Verdicts on the declared claims of the one-layer ``temperature`` experiment (arXiv:2511.01292, Demir & Doğan;
docs/papers/temperature.md §5.1, §6): :func:`compare` judges every claim of :mod:`.claims` with :mod:`iclab.stats`
from the cells' per-prompt means and standard errors (theory vs simulation: equivalence within a stated relative
tolerance; effect direction: a confidence interval that excludes zero); :func:`notes` (from :mod:`.notes`) says
where the paper and iclab differ.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd

from iclab.experiments._judge import unmeasured
from iclab.experiments.temperature.cells import claim_cells
from iclab.experiments.temperature.claims import (
    CURVE_PARTS,
    SIMCHECK,
    SMALLEST,
    SURROGATE_DL,
    TOL,
    TOL_NEAR,
    TOL_TAU,
    claims,
)
from iclab.experiments.temperature.notes import notes
from iclab.experiments.temperature.tables import part_rows
from iclab.stats import grid_floor_ci, refusal
from iclab.stats import AGREES, DISAGREES, NOT_JUDGED, Verdict, fmt, judge_direction, judge_equivalence, quantile
from iclab.stats import judge_every_cell  # "at every l" (thm4.2-vs-mc/curves-l>=d)

__all__ = ["claims", "compare", "notes"]


def _with_text(v: Verdict, prefix: str = "", suffix: str = "", target: str | None = None) -> Verdict:
    """``v`` with text around its statistic, and "of theory" renamed to what the ``target`` of an equivalence is."""
    stat = v.statistic if target is None else v.statistic.replace("of theory", f"of {target}")
    return dataclasses.replace(v, statistic=prefix + stat + suffix)


def _equivalent(estimate, se, target, tol, n, what: str, prefix: str = "") -> Verdict:
    return _with_text(
        judge_equivalence(float(estimate), float(se), float(target), rel_tol=tol, n=int(n)), prefix, target=what
    )


def _simcheck_verdicts(df: pd.DataFrame) -> dict[str, Verdict]:
    """Each check cell's MC G against Theorem 4.2's, and whether the finite-l gap is resolved from zero."""
    out = {}
    z = quantile(0.95)
    for cid, part, at_opt, _, th_check, mc_check in SIMCHECK:
        sub = part_rows(df, part)
        if sub.empty:
            continue
        r = sub.iloc[0]
        col = "Gopt" if at_opt else "G1"
        th, mc, se = r[f"{col}_theory"], r[f"{col}_mc"], r[f"{col}_se"]
        resolved = abs(mc - th) > z * se
        v = judge_equivalence(float(mc), float(se), float(th), rel_tol=TOL, n=int(r["n_test"]))
        tau = f" (τ_opt = {r['tau_opt_theory']:.3g})" if at_opt else ""
        gap = "; finite-l gap resolved from 0" if resolved else "; finite-l gap not resolved from 0 (CI contains 0)"
        out[cid] = _with_text(
            v,
            f"theory {th:.4g}{tau}, MC on {int(r['n_test']):,} prompts; ",
            gap + f"; the independent check: {th_check} / {mc_check}",
        )
    return out


def _rms_verdict(gaps: np.ndarray, ses: np.ndarray, per_cell: int, tol: float, n_test: int, what: str) -> Verdict:
    """Equivalence of the noise-corrected RMS relative gap with 0 (see the claim's test).

    ``gaps``/``ses`` are ``(cells, per_cell)`` relative gaps and their relative SEs; the terms of one cell come from
    the same prompts, so their variances are combined as if perfectly correlated (conservative)."""
    if (refused := refusal(float(np.min(ses)) if np.isfinite(ses).all() else float("nan"))) is not None:
        return refused  # a cell without a standard error: no zero-width interval
    terms = gaps**2 - ses**2  # (cells, per_cell): unbiased for the squared true gap
    sd = np.sqrt(4 * gaps**2 * ses**2 + 2 * ses**4)  # (cells, per_cell): SD of each term
    k = terms.size
    ms, se = float(terms.sum() / k), float(np.sqrt((sd.sum(1) ** 2).sum()) / k)
    z = quantile(0.95)
    lo, hi = ms - z * se, ms + z * se
    rms = math.sqrt(max(ms, 0.0))
    r_lo, r_hi = math.sqrt(max(lo, 0.0)), math.sqrt(max(hi, 0.0))
    worst = int(np.argmax(np.abs(gaps).max(1)))
    stat = (
        f"RMS gap {rms:.2%}, 95 % CI [{r_lo:.2%}, {r_hi:.2%}] vs allowed {tol:.0%}, over {gaps.shape[0]} cells "
        f"({what}); raw RMS {math.sqrt(float((gaps**2).mean())):.2%}, worst |gap| "
        f"{np.abs(gaps[worst]).max():.1%} ± {ses[worst].max():.1%} (SE)"
    )
    unc = f"95 % CI [{r_lo:.2%}, {r_hi:.2%}]"
    if r_hi <= tol:
        return Verdict(AGREES, f"{rms:.2%}", unc, stat)
    if r_lo > tol:
        return Verdict(DISAGREES, f"{rms:.2%}", unc, stat)
    return Verdict(
        NOT_JUDGED,
        f"{rms:.2%}",
        unc,
        stat,
        f"too little power: the interval straddles {tol:.0%}; more test prompts per cell (now {n_test:,}) narrow it",
    )


def _curve_cells(df: pd.DataFrame, long: bool) -> pd.DataFrame:
    sub = df[df["part"].isin(CURVE_PARTS)] if "part" in df else df.iloc[:0]
    return sub[(sub["l"] >= sub["d"]) == long]


def _setting(r) -> str:
    """What tells apart the cells of one part at one l: σ_test (noise parts) or ‖μx‖ (mean part)."""
    return f" σ_test={r.sigma_test:g}" if "noise" in r.part else f" ‖μx‖={r.mu_x:g}" if r.part == "mean" else ""


def _curve_verdicts(df: pd.DataFrame) -> dict[str, Verdict]:
    out = {}
    for cid, long in (("thm4.2-vs-mc/curves-l>=d", True), ("thm4.2-vs-mc/curves-l<d", False)):
        sub = _curve_cells(df, long)
        if sub.empty:
            continue
        if long:  # "at every l": each cell against the tolerance (judge_every_cell), never an average
            cells = [
                (f"{r.part} l={int(r.l)}{_setting(r)} τ={t}", r[f"{c}_mc"], r[f"{c}_se"], r[f"{c}_theory"])
                for _, r in sub.iterrows()
                for c, t in (("G1", "1"), ("Gopt", "τ_opt"))
            ]
            out[cid] = judge_every_cell(cells, rel_tol=TOL, n=int(sub["n_test"].min()))
            continue
        gaps = np.stack([(sub[f"{c}_mc"] - sub[f"{c}_theory"]) / sub[f"{c}_theory"] for c in ("G1", "Gopt")], 1)
        ses = np.stack([sub[f"{c}_se"] / sub[f"{c}_theory"] for c in ("G1", "Gopt")], 1)
        ls = sorted(set(sub["l"]))
        out[cid] = _rms_verdict(gaps, ses, 2, TOL, int(sub["n_test"].min()), f"l = {ls[0]}…{ls[-1]}, τ = 1 and τ_opt")
    sub = _curve_cells(df, True)
    if len(sub):
        gaps = ((sub["tau_opt_mc"] - sub["tau_opt_theory"]) / sub["tau_opt_theory"]).to_numpy()[:, None]
        ses = (sub["tau_opt_mc_se"] / sub["tau_opt_theory"]).to_numpy()[:, None]
        out["thm4.3-vs-mc-minimiser"] = _rms_verdict(gaps, ses, 1, TOL, int(sub["n_test"].min()), "cells with l ≥ d")
    return out


def _norm(r, col: str, c: float | None = None) -> tuple[float, float]:
    """``col`` and its SE (``col_se``, or the ``se`` column of G values) divided by ``c`` (default: the row's own
    c = Tr(AB) + σ²)."""
    se_col = {"G1_mc": "G1_se", "Gopt_mc": "Gopt_se", "linear_mc": "linear_se"}.get(col, f"{col}_se")
    c = float(r["c"]) if c is None else c
    return float(r[col] / c), float(r[se_col] / c)


def _difference(a: tuple[float, float], b: tuple[float, float]) -> tuple[float, float]:
    """``a − b`` for two independent (value, SE) pairs."""
    return a[0] - b[0], math.hypot(a[1], b[1])


def _fades(shifted: pd.DataFrame) -> Verdict | None:
    """The shift's harm at τ = 1 (normalised, paired within a cell) at the shortest minus at the longest l."""
    if len(shifted) < 2 or "harm1" not in shifted:
        return None
    lo, hi = shifted.iloc[0], shifted.iloc[-1]
    a, b = _norm(lo, "harm1"), _norm(hi, "harm1")
    est, se = _difference(a, b)
    v = judge_direction(est, se, smallest=SMALLEST, n=int(hi["n_test"]))
    return _with_text(v, f"harm/c l = {int(lo.l)}: {a[0]:.4f} ± {a[1]:.4f}, l = {int(hi.l)}: {b[0]:.4f} ± {b[1]:.4f}; ")


def _no_shift_verdicts(df: pd.DataFrame) -> dict[str, Verdict]:
    none = part_rows(df, "none")
    if len(none) < 2 or "excess1" not in none:
        return {}
    lo, hi = none.iloc[0], none.iloc[-1]
    est, se = _difference(_norm(lo, "excess1"), _norm(hi, "excess1"))
    n = int(hi["n_test"])
    conv = _with_text(
        judge_direction(est, se, smallest=SMALLEST, n=n),
        f"(G(1) − Bayes)/c: l = {int(lo.l)} {lo.excess1 / lo.c:.3f} → l = {int(hi.l)} {hi.excess1 / hi.c:.4f}; ",
    )
    emul = _equivalent(
        hi.G1_mc,
        hi.excess1_se,
        hi.bayes_test,
        TOL_NEAR,
        n,
        "test-Bayes",
        f"l = {int(hi.l)}: G(1) = {hi.G1_mc:.4g}, test-Bayes {hi.bayes_test:.4g} (G/c "
        f"{hi.G1_mc / hi.c:.3f} vs {hi.bayes_test / hi.c:.4f}; τ_opt = {hi.tau_opt_theory:.3g}); ",
    )
    return {"fig1a-converges-to-bayes": conv, "cor4.4-emulates-bayes": emul}


def _cov_verdicts(df: pd.DataFrame) -> dict[str, Verdict]:
    none, cov = part_rows(df, "none"), part_rows(df, "cov")
    out = {}
    if cov.empty:
        return out
    c = cov.iloc[-1]
    n = int(c["n_test"])
    gain, gain_se = c.gain_opt / c.c, c.gain_opt_se / c.c
    out["fig1b-tau-opt-repairs"] = _with_text(
        judge_direction(gain, gain_se, smallest=SMALLEST, n=n),
        f"l = {int(c.l)}: G/c {c.G1_mc / c.c:.3f} at τ = 1 → {c.Gopt_mc / c.c:.3f} at τ_opt = {c.tau_opt_theory:.3g}"
        + (f" (test-Bayes {c.bayes_test / c.c:.4f})" if "bayes_test" in c else "")
        + "; ",
    )
    match = none[none["l"] == c.l]
    if len(match):
        r = match.iloc[0]
        est, se = _difference(_norm(c, "G1_mc"), _norm(r, "G1_mc"))
        text = f"l = {int(c.l)}: G(1)/c {c.G1_mc / c.c:.3f} vs {r.G1_mc / r.c:.3f}; "
        out["fig1b-cov-shift-harms"] = _with_text(judge_direction(est, se, smallest=SMALLEST, n=n), text)
    return out


def _fade_verdicts(config, df: pd.DataFrame) -> dict[str, Verdict]:
    out = {}
    task = _fades(part_rows(df, "task"))
    if task is not None:
        out["fig1c-task-harm-fades"] = task
    noise = part_rows(df, "noise")
    if len(noise):
        noise = _fades(noise[noise["sigma_test"] == noise["sigma_test"].max()].sort_values("l"))
        if noise is not None:
            out["fig2a-noise-harm-fades"] = noise
    return out


def _noise_ld_verdicts(df: pd.DataFrame) -> dict[str, Verdict]:
    sub = part_rows(df, "noise_ld", "sigma_test")
    if len(sub) < 2:
        return {}
    lo, hi = sub.iloc[0], sub.iloc[-1]
    n = int(hi["n_test"])
    gap = hi.G1_mc - hi.bayes_test
    closed = hi.gain_opt / gap if gap > 0 else float("nan")
    close = _with_text(
        judge_direction(hi.gain_opt / hi.c, hi.gain_opt_se / hi.c, smallest=SMALLEST, n=n),
        f"σ_test = {hi.sigma_test:g}: G/c {hi.G1_mc / hi.c:.3f} → {hi.Gopt_mc / hi.c:.3f}, test-Bayes "
        f"{hi.bayes_test / hi.c:.3f} ({closed:.0%} of the gap closed); ",
    )
    est, se = _difference((hi.tau_opt_mc, hi.tau_opt_mc_se), (lo.tau_opt_mc, lo.tau_opt_mc_se))
    grows = _with_text(
        judge_direction(est, se, smallest=0.05, n=n),
        "MC minimiser "
        + ", ".join(f"σ={r.sigma_test:g}: {r.tau_opt_mc:.3g} (Eq. 15 {r.tau_opt_theory:.3g})" for r in sub.itertuples())
        + "; ",
    )
    return {"fig2b-tau-opt-closes-gap": close, "fig2c-tau-opt-grows-with-noise": grows}


def _mean_verdicts(df: pd.DataFrame) -> dict[str, Verdict]:
    sub = part_rows(df, "mean", "mu_x")
    if len(sub) < 2 or "linear_mc" not in sub:
        return {}
    lo, hi = sub.iloc[0], sub.iloc[-1]
    n = int(hi["n_test"])
    d_lin = _difference(_norm(hi, "linear_mc"), _norm(lo, "linear_mc"))
    d_app = _difference(_norm(hi, "G1_mc"), _norm(lo, "G1_mc"))
    est, se = _difference(d_lin, d_app)
    text = (
        f"G/c at ‖μx‖ = {lo.mu_x:g} → {hi.mu_x:g}: approx. softmax {lo.G1_mc / lo.c:.3f} → {hi.G1_mc / hi.c:.3f}, "
        f"linear {lo.linear_mc / lo.c:.3f} → {hi.linear_mc / hi.c:.4g}; "
    )
    # the raw error, in units of the unshifted c: the row's own c grows with ‖μx‖² and would hide a proportional rise
    app_hi, app_lo = _norm(hi, "G1_mc", float(lo.c)), _norm(lo, "G1_mc")
    text += f"raw error in units of the unshifted c: {app_lo[0]:.3f} → {app_hi[0]:.3f}; "
    return {
        "rem3.4-linear-harmed-more": _with_text(judge_direction(est, se, smallest=SMALLEST, n=n), text),
        "rem3.4-approx-insensitive": _equivalent(
            app_hi[0], math.hypot(app_hi[1], app_lo[1]), app_lo[0], TOL_NEAR, n, "the unshifted error", text
        ),
    }


def _interval_verdict(est: float, lo: float, hi: float, target: float, factor: float, taus=None) -> Verdict:
    """Is the interval ``[lo, hi]`` of ``est`` (a grid argmin: at least ± half a step of ``taus``) inside
    ``[target/factor, target·factor]``?"""
    if isinstance(taus, (list, tuple, np.ndarray)):
        lo, hi = np.exp(grid_floor_ci(math.log(est), math.log(lo), math.log(hi), np.log(taus)))
    if (refused := refusal(ci=(lo, hi), measured=fmt(est, 3))) is not None:
        return refused
    band = (target / factor, target * factor)
    stat = (
        f"softmax's best τ {fmt(est, 3)}, 95 % bootstrap interval [{fmt(lo, 3)}, {fmt(hi, 3)}] vs τ_opt "
        f"{fmt(target, 3)} (band [{fmt(band[0], 3)}, {fmt(band[1], 3)}]); ratio {est / target:.3g}"
    )
    unc = f"95 % interval [{fmt(lo, 3)}, {fmt(hi, 3)}]"
    if band[0] <= lo and hi <= band[1]:
        return Verdict(AGREES, fmt(est, 3), unc, stat)
    if hi < band[0] or lo > band[1]:
        return Verdict(DISAGREES, fmt(est, 3), unc, stat)
    return Verdict(
        NOT_JUDGED,
        fmt(est, 3),
        unc,
        stat,
        "too little power: the interval straddles the band; more test prompts narrow it",
    )


def _surrogate_verdicts(df: pd.DataFrame) -> dict[str, Verdict]:
    sub = part_rows(df, "surrogate")
    sub = sub[(sub["d"] == SURROGATE_DL[0]) & (sub["l"] == SURROGATE_DL[1])]
    if sub.empty:
        return {}
    r = sub.iloc[0]
    track = _equivalent(
        r.Gs_opt_mc,
        r.soft_minus_approx_opt_se,
        r.Ga_opt_mc,
        TOL_NEAR,
        r.n_test,
        "the approximate-softmax error",
        f"at τ_opt = {r.tau_opt_theory:.3g}: G/c softmax {r.Gs_opt_mc / r.c:.3f}, approx. "
        f"{r.Ga_opt_mc / r.c:.3f}; output discrepancy {r.out_diff_opt:.0%}; score spread "
        f"{r.score_spread:.3g}; ",
    )
    return {
        "surrogate-tracks-softmax": track,
        "surrogate-tau-opt-transfers": _interval_verdict(
            r.tau_best_soft, r.tau_best_soft_lo, r.tau_best_soft_hi, r.tau_opt_theory, 1 + TOL_TAU, r.get("taus")
        ),
    }


def compare(config, df: pd.DataFrame) -> dict[str, Verdict]:
    """The verdict of every claim the cells measured (the others are "not measured" in the report); a claim whose
    named cells failed is "not measured", naming them (:func:`~iclab.experiments.temperature.cells.claim_cells`)."""
    return {
        **_simcheck_verdicts(df),
        **_curve_verdicts(df),
        **_no_shift_verdicts(df),
        **_cov_verdicts(df),
        **_fade_verdicts(config, df),
        **_noise_ld_verdicts(df),
        **_mean_verdicts(df),
        **_surrogate_verdicts(df),
        **unmeasured(df, claim_cells(config)),
    }
