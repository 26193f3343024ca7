"""The notes of the one-layer ``temperature`` experiment: where arXiv:2511.01292 (Demir & Doğan) and iclab differ,
and why (docs/papers/temperature.md §4, §6), with this run's numbers.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from iclab.claims import part_rows
from iclab.experiments._notes import labelled
from iclab.experiments.temperature.claims import CURVE_PARTS, SIMCHECK, TOL, TOL_NEAR, TOL_TAU, claims
from iclab.experiments.temperature.config import TemperatureConfig

__all__ = ["notes"]

CHECK_N_TEST = TemperatureConfig().simcheck_n_test  # the independent check's prompts per point (note §4.11)


def _surrogate_note(df: pd.DataFrame) -> list[str]:
    """Where the surrogate's τ_opt stops transferring to softmax, per (d, l) of the comparison (note §6.9)."""
    sub = part_rows(df, "surrogate")
    if sub.empty:
        return []
    rows = sorted(sub.itertuples(), key=lambda r: (r.d, r.l))
    cells = "; ".join(
        f"d={r.d}, l={r.l}: softmax best τ {r.tau_best_soft:.3g} vs τ_opt {r.tau_opt_theory:.3g}, G/c "
        f"{r.G_soft_best / r.c:.3f} (best output scale {r.G_soft_scaled_best / r.c:.3f} at τ "
        f"{r.tau_best_soft_scaled:.3g}) vs {r.Ga_opt_mc / r.c:.3f}, spread {r.score_spread:.3g}, outputs "
        f"{r.out_diff_opt:.0%} apart at τ_opt"
        for r in rows
    )
    last = [r for r in rows if r.l == rows[-1].l]
    ok = sorted({r.d for r in rows if abs(math.log(r.tau_best_soft / r.tau_opt_theory)) <= math.log(1 + TOL_TAU)})
    return [
        "**The approximate softmax is not first-order softmax at the weights the theory uses** "
        "(docs/papers/temperature.md §4.12, §6.9). The Lemma 4.1 weights give query scores a_i = x_iᵀM₁₁x_l with "
        "M₁₁ ≈ d·I, whose spread over the keys grows like d^{3/2}; the surrogate's weights (1 + (a_i − ā)/τ)/l "
        "are then far outside the regime |a_i − ā|/τ ≪ 1 where they approximate softmax, and the softmax layer "
        "with the same weights — a convex combination of values u_i = y_i/d — cannot undo the 1/d of v₂₂; even "
        "with the best output scale it stays well above the surrogate, at a τ near the score spread. "
        "Measured (same prompts, same weights; normalised errors G/c; outputs apart: the RMS difference of the "
        "two layers' outputs over the RMS of the surrogate's): " + cells + ". The outputs agree within "
        f"{TOL_NEAR:.0%} only for τ above (at l = {rows[-1].l}) "
        + labelled([r.tau_track for r in last], ".3g", [f"d={r.d}" for r in last], join=": ~")
        + ", where both layers predict ≈ the mean value and G/c ≈ 1. Eq. 15's τ_opt is the softmax layer's best "
        f"τ (within a factor {1 + TOL_TAU:g}) only for d ∈ {{{labelled(ok, 'd')}}} of this grid; beyond, the "
        "softmax's best τ grows with the score spread, not like τ_opt ≈ 1 + d/l.",
        "",
    ]


def _relative_sd(chk: pd.DataFrame) -> float:
    """One prompt's relative SD of the squared error: the check cells' median SE·√n / G (τ = 1 and τ_opt)."""
    n = chk["n_test"].to_numpy(float)
    return float(np.median(np.r_[chk["G1_se"] / chk["G1_mc"], chk["Gopt_se"] / chk["Gopt_mc"]] * np.r_[n, n] ** 0.5))


def _sizes_note(df: pd.DataFrame) -> list[str]:
    """How many prompts a cell needs: one prompt's relative SD of the squared error, from the check cells'
    Monte-Carlo SEs (G at τ = 1 and at τ_opt over ``n_test`` prompts each), and the 95 % half-width it gives at the
    check cells', the curve cells' and the independent check's prompt counts (note §5.1, §6.2, §6.4)."""
    chk = df[df["part"].str.startswith("simcheck")]
    if chk.empty:
        return []
    sd, n = _relative_sd(chk), int(np.median(chk["n_test"]))
    curve = df.loc[df["part"].isin(CURVE_PARTS), "n_test"]
    sizes = [("this run's check cells", n), ("its curve cells", int(np.median(curve)) if len(curve) else 0)]
    sizes += [("the independent check, note §4.11", CHECK_N_TEST)]
    return [
        f"**Sizes.** One prompt's squared error has a relative SD of about {sd:.2g} (the check cells' median), so n "
        f"prompts give a 95 % interval of ±{1.96 * sd:.2g}/√n of G: "
        + ", ".join(f"±{1.96 * sd / k**0.5:.1%} at {k:,} ({where})" for where, k in sizes if k)
        + f". The check cells' finite-l gaps are small against the {TOL:.0%} bound, and their rows say how many "
        "prompts would decide them.",
        "",
    ]


def _check_note(df: pd.DataFrame) -> list[str]:
    """The independent check's Monte-Carlo G (note §4.11) against this run's at the same settings: the difference
    in % of this run's and in standard errors of the difference (the check's from the per-prompt SD; note §6.4)."""
    chk = df[df["part"].str.startswith("simcheck")]
    if chk.empty:
        return []
    sd, out = _relative_sd(chk), []
    for _cid, part, stem, setting, _theory, mc in SIMCHECK:
        row = part_rows(chk, part)
        if row.empty:
            continue
        g, se = float(row[f"{stem}_mc"].mean()), float(row[f"{stem}_se"].mean())
        z = (mc - g) / math.hypot(sd * g / CHECK_N_TEST**0.5, se)
        out.append(f"{setting}: {(mc - g) / g:+.1%} ({z:+.1f} SE)")
    return [
        f"**The independent check against this run.** The check's Monte-Carlo G ({CHECK_N_TEST:,} prompts per "
        "point, docs/papers/temperature.md §4.11, §6.4) minus this run's at the same setting, in % of this run's and "
        "in standard errors of the difference: " + "; ".join(out) + ".",
        "",
    ]


#: the claim whose row shows the Monte-Carlo G/c at τ = 1 at its two ‖μx‖ (:func:`.claims.claims`)
INSENSITIVE = "rem3.4-approx-insensitive"


def _claimed_mu_x(config) -> set[float]:
    """The ‖μx‖ whose Monte-Carlo G/c at τ = 1 the :data:`INSENSITIVE` row shows: its cells' and its baseline's."""
    m = {r.id: r for r in claims(config)}[INSENSITIVE].measure
    return {m.where["mu_x"], m.base["mu_x"]}


def _mean_shift_line(config, df: pd.DataFrame) -> str:
    """G/c of the theorem, the Monte Carlo and the Monte Carlo without the query as a key, per ‖μx‖ (note §4.9); the
    Monte Carlo at τ = 1 at the two ‖μx‖ the :data:`INSENSITIVE` row compares is that row's, named instead."""
    sub = part_rows(df, "mean").sort_values("mu_x")
    if sub.empty or "noquery1_mc" not in sub:
        return ""
    claimed = _claimed_mu_x(config)
    cells = "; ".join(
        f"‖μx‖={r.mu_x:g}: {r.G1_theory / r.c:.3f}, "
        + (f"`{INSENSITIVE}`" if r.mu_x in claimed else f"{r.G1_mc / r.c:.3f}")
        + f", {r.noquery1_mc / r.c:.3f} / {r.Gopt_theory / r.c:.3f}, {r.Gopt_mc / r.c:.3f}, "
        f"{r.noquery_opt_mc / r.c:.3f}"
        for r in sub.itertuples()
    )
    return (
        f" Measured at l = {int(sub['l'].iloc[0])}, as G/c at τ = 1 / at τ_opt (the theorem, the Monte Carlo or the "
        f"claim row that gives it, the Monte Carlo with the query not a key): {cells}. In G/c the theorem does not "
        "move with ‖μx‖; the raw G grows with c = Tr(AB) + σ², and Tr A = Tr Σx + ‖μx‖²."
    )


def notes(config, df: pd.DataFrame) -> str:
    """The disagreements with the paper and why (docs/papers/temperature.md §6), with this run's numbers."""
    main = df[df["part"].isin(CURVE_PARTS)]
    ratio_a1 = (main["mc_a1"] / main["a1"]).to_numpy()
    ratio_l = ((1 - 1 / main["l"]) ** 2).to_numpy()
    none = part_rows(df, "none").sort_values("l")
    lines = [
        *_sizes_note(df),
        "**Theorem 4.2 is asymptotic; at finite l its coefficients are off by O(1/l).** Only l − 1 columns carry a "
        "label and the centring includes the query column, so E[C_xy] = (1 − 1/l)²Σx w exactly, not Σx w "
        "(docs/papers/temperature.md §4.8). Measured E[2 f r]/a₁ over the curve cells: median "
        f"{np.median(ratio_a1) if len(ratio_a1) else float('nan'):.3f} vs (1 − 1/l)² median "
        f"{np.median(ratio_l) if len(ratio_l) else float('nan'):.3f}. Near τ_opt, G = c − a₁/τ + a₂/τ² is a small "
        "difference of large terms, so these shifts in a₁, a₂ are amplified in G(τ_opt), most at the shortest l.",
        "",
        '**Corollary 4.4 ("emulates Bayes") holds only as l/d → ∞.** Without shift the model at τ = 1 is far '
        "from the Bayes error at finite l/d, and its optimal temperature is ≈ 1 + d/l, not 1 "
        "(docs/papers/temperature.md §4.6, §6.1): a fixed M₁₁ ≈ d·Σ̂⁻¹ cannot invert the in-context C_xx. Eq. 15: "
        + labelled(none["tau_opt_theory"], ".2f", [f"l={int(x)}" for x in none["l"]])
        + ".",
        "",
        "**Input-mean shift is not exactly harmless in this model.** The query column is a key with label 0 and "
        "self-score x_lᵀM₁₁x_l ≈ d·Tr Σx; after centring its zero label pulls the prediction by ≈ −(d/l)·wᵀμx "
        "(docs/papers/temperature.md §4.9): O(‖μx‖²) in the error, negligible against G = O(d) as d → ∞ but "
        "visible at finite d for large ‖μx‖ (the 'query not a key' curve removes it). Linear attention (no "
        "centring) is harmed far more, as Remark 3.4 says; what holds exactly is that ŵ_Att is unchanged."
        + _mean_shift_line(config, df),
        "",
        *_check_note(df),
        *_surrogate_note(df),
        "**Bayes curves and units.** 'test-Bayes' is Eq. (9) with the test prior and noise, centred over the n "
        "context pairs as the paper writes it (`bayes_exact`, uncentred, is slightly better); 'train-Bayes' uses "
        "the train prior and noise. Errors are raw G (Var y ≈ d) and G/(Tr(AB) + σ²) (1 = predicting 0); the "
        "paper's normalisation is unknown (docs/papers/temperature.md §5.5). The independent check of "
        "docs/papers/temperature.md §4.11 is not the paper: its numbers appear in the check rows' paper value only.",
    ]
    return "\n".join(lines)
