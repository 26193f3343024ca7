"""The paper-vs-iclab table and the notes of the one-layer ``temperature`` experiment: arXiv:2511.01292 (Demir &
Doğan), Theorems 4.2–4.3, Figs. 1–2, Remark 3.4 (docs/papers/temperature.md §5.1, §6).

Each ``_..._rows`` function is one group of rows of the table; :func:`compare` lists them in report order.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from iclab.experiments import Comparison

__all__ = ["compare", "notes"]

_TOL = 0.05  # theory vs Monte Carlo (the 5 %)

_SIMCHECK = (  # the independent check (note §4.11): (part, at τ_opt?, theory, MC, τ_opt or None, label)
    ("simcheck_none", False, 25.01, 24.93, None, "a=1, b=1, σ=0.1, l=100, τ=1"),
    ("simcheck_none", True, 16.68, 16.40, 1.50, "same, τ_opt"),
    ("simcheck_cov", False, 299.95, 299.90, None, "a=2 (cov. shift), l=100, τ=1"),
    ("simcheck_cov", True, 33.35, 33.63, 3.00, "same, τ_opt"),
    ("simcheck_noise", True, 36.06, 35.19, 2.18, "σ_test=3, l=50, τ_opt"),
    ("simcheck_mean", False, 27.01, 27.43, None, "‖μx‖=1, ‖μw‖=1, σ_tr=1, l=100, τ=1"),
)


def _part(df: pd.DataFrame, part: str, by: str = "l") -> pd.DataFrame:
    return df[df["part"] == part].sort_values(by)


def _rel(a: float, b: float) -> float:
    return abs(a - b) / abs(b)


def _fmt(v: float, se: float | None = None) -> str:
    return f"{v:.2f}" if se is None else f"{v:.2f} ± {se:.2f}"


def _grid_step(config) -> float:
    """Ratio of neighbouring τ of the log grid."""
    return (config.tau_max / config.tau_min) ** (1 / (config.n_tau - 1))


def _simcheck_rows(df: pd.DataFrame) -> list[Comparison]:
    """The independent check's G values (theory and MC) against iclab's, at τ = 1 or τ_opt."""
    rows = []
    for part, at_opt, th, mc, tau, label in _SIMCHECK:
        sub = df[df["part"] == part]
        if sub.empty:
            continue
        r = sub.iloc[0]
        g_th, g_mc, se = (r["Gopt_theory"], r["Gopt_mc"], r["Gopt_se"]) if at_opt else (r["G1_theory"], r["G1_mc"], r["G1_se"])
        tau_txt = f", τ_opt = {r['tau_opt_theory']:.2f} (check {tau:.2f})" if tau else ""
        ok = _rel(g_th, th) <= _TOL and _rel(g_mc, mc) <= max(_TOL, 2 * se / mc)
        rows.append(Comparison(f"[independent check] G, {label}", f"theory {th} / MC {mc}",
                               f"theory {g_th:.2f} / MC {_fmt(g_mc, se)}{tau_txt}; G/c = {g_th / r['c']:.3f}", ok,
                               f"independent check (note §4.11), d=50, m=5000; iclab MC on {int(r['n_test'])} "
                               f"prompts (tolerance 5 % or 2 s.e.); c = Tr(AB)+σ² = {r['c']:.2f}"))
    return rows


def _theory_vs_mc_rows(main: pd.DataFrame) -> list[Comparison]:
    """Theorem 4.2 against Monte Carlo at τ = 1 and τ_opt, for cells with l ≥ d and l < d."""
    rows = []
    for col, tag in (("G1", "τ = 1"), ("Gopt", "τ = τ_opt")):
        for name, sub in (("l ≥ d", main[main["l"] >= main["d"]]), ("l < d", main[main["l"] < main["d"]])):
            if sub.empty:
                continue
            gap = (sub[f"{col}_mc"] - sub[f"{col}_theory"]).abs() / sub[f"{col}_theory"]
            worst = sub.loc[gap.idxmax()]
            rows.append(Comparison(f"Theorem 4.2 vs Monte Carlo, {tag}, cells with {name}",
                                   "\"closely match\" (independent check: 1–5 %)",
                                   f"median gap {100 * gap.median():.1f} %, max {100 * gap.max():.1f} % "
                                   f"({worst['part']}, l={int(worst['l'])}; MC s.e. "
                                   f"{100 * worst[f'{col}_se'] / worst[f'{col}_mc']:.1f} %)",
                                   bool(gap.median() <= _TOL) if name == "l ≥ d" else None,
                                   "finite-l effects O(1/l) in a₁, a₂ (see notes), amplified near τ_opt where G is a "
                                   "small difference; tolerance on the median"))
    return rows


def _tau_formula_row(config, main: pd.DataFrame) -> Comparison:
    """τ_opt of Eq. 15 against the grid search and the exact MC minimiser."""
    rel = (main["tau_grid"] - main["tau_opt_theory"]).abs() / main["tau_opt_theory"]
    rel_mc = (main["tau_opt_mc"] - main["tau_opt_theory"]).abs() / main["tau_opt_theory"]
    half = math.sqrt(_grid_step(config)) - 1
    return Comparison("τ_opt: Eq. (15) vs MC grid search", "\"nearly coincide\" (v2)",
                      f"max |Δτ|/τ = {100 * rel.max():.1f} % (grid half-step {100 * half:.1f} %); vs exact MC "
                      f"minimiser E[r²]/E[(y−b)r]: median {100 * rel_mc.median():.1f} %, max {100 * rel_mc.max():.1f} %",
                      bool(rel.median() <= half + 0.02), f"{config.n_tau}-point log grid on "
                      f"[{config.tau_min}, {config.tau_max}]; tolerance: median within half a step + 2 %")


def _no_shift_tau_row(none: pd.DataFrame) -> Comparison:
    """Without shift, τ_opt of Eq. 15 (and the MC minimiser) against 1 + d/l (note §4.6)."""
    pred = 1 + none["d"] / none["l"]
    rel = ((none["tau_opt_theory"] - pred) / pred).abs()
    rel_mc = ((none["tau_opt_mc"] - pred) / pred).abs()
    pairs = "; ".join(f"l={int(r.l)}: {r.tau_opt_theory:.2f} (MC {r.tau_opt_mc:.2f}) vs {1 + r.d / r.l:.2f}"
                      for r in none.itertuples())
    return Comparison("τ_opt without shift: Eq. (15) (and MC) vs 1 + d/l",
                      "paper (Cor. 4.4): τ = 1 emulates Bayes; iclab's derivation (note §4.6): τ_opt ≈ 1 + d/l", pairs,
                      bool(rel.max() < _TOL),
                      f"max deviation of Eq. (15) from 1 + d/l: {100 * rel.max():.1f} % (σ_tr²/l and Σ̂ "
                      f"noise; tolerance 5 %); of the MC minimiser: {100 * rel_mc.max():.1f} % (finite-l "
                      "effects, see notes)")


def _emulates_bayes_row(none: pd.DataFrame) -> Comparison:
    """Corollary 4.4 at the longest context without shift."""
    big = none.iloc[-1]
    return Comparison(f"Cor. 4.4: emulates Bayes with no shift (l = {int(big.l)})",
                      "G(τ=1) ≈ Bayes error",
                      f"G(1) = {big.G1_mc:.3g}, G(τ_opt) = {big.Gopt_mc:.3g}, test-Bayes = "
                      f"{big.bayes_test:.3g} (normalised: {big.G1_mc / big.c:.3f} / {big.Gopt_mc / big.c:.3f} / "
                      f"{big.bayes_test / big.c:.4f})", None,
                      "only as l/d → ∞: a fixed M11 cannot invert the in-context C_xx (note §6.1)")


def _mp_row(none: pd.DataFrame) -> Comparison:
    """The Marchenko–Pastur Bayes error (note §4.7) against the Monte-Carlo posterior means."""
    ok = none.dropna(subset=["bayes_mp"])
    gap = ((ok["bayes_exact"] - ok["bayes_mp"]) / ok["bayes_mp"]).abs()
    gap_c = ((ok["bayes_test"] - ok["bayes_mp"]) / ok["bayes_mp"]).abs()
    big = ok[ok["l"] > 2 * ok["d"]]
    gap_big = ((big["bayes_exact"] - big["bayes_mp"]) / big["bayes_mp"]).abs()
    return Comparison("Bayes error: Marchenko–Pastur formula (note §4.7) vs MC",
                      "independent check: 0.020 vs 0.021 (d=50, n=99)",
                      f"exact posterior mean: median gap {100 * gap.median():.1f} %, max "
                      f"{100 * gap.max():.1f} %; centred Eq. (9): max {100 * gap_c.max():.1f} %",
                      bool(gap_big.max() <= _TOL) if len(big) else None,
                      "MP is the d, n → ∞ limit of the uncentred posterior mean (tolerance 5 % at "
                      "l > 2d); Eq. (9) centres the context and loses one degree of freedom")


def _no_shift_rows(df: pd.DataFrame) -> list[Comparison]:
    none = _part(df, "none")
    if none.empty:
        return []
    rows = [_no_shift_tau_row(none), _emulates_bayes_row(none)]
    if none["bayes_mp"].notna().any():
        rows.append(_mp_row(none))
    return rows


def _shift_vs_l_rows(df: pd.DataFrame) -> list[Comparison]:
    """Figs. 1a–1c: normalised error at τ = 1, τ_opt and Bayes at the shortest and longest l."""
    rows = []
    for part, label in (("cov", "Fig. 1b: τ_opt restores Bayes alignment under Σx shift"),
                        ("task", "Fig. 1c: task-shift harm shrinks with l"),
                        ("none", "Fig. 1a: converges to Bayes as l grows")):
        sub = _part(df, part)
        if len(sub) < 2:
            continue
        lo, hi = sub.iloc[0], sub.iloc[-1]
        rows.append(Comparison(label, "qualitative",
                               f"(G/c) at τ=1 → τ_opt, Bayes: l={int(lo.l)}: {lo.G1_mc / lo.c:.3f} → {lo.Gopt_mc / lo.c:.3f}, "
                               f"{lo.bayes_test / lo.c:.3f}; l={int(hi.l)}: {hi.G1_mc / hi.c:.3f} → {hi.Gopt_mc / hi.c:.3f}, "
                               f"{hi.bayes_test / hi.c:.3f}", None, "normalised error G/(Tr(AB)+σ²)"))
    return rows


def _noise_rows(config, df: pd.DataFrame) -> list[Comparison]:
    """Figs. 2b–2c: τ_opt grows with σ_test at l = d, and τ_opt closes the gap to Bayes at large σ_test."""
    sub = _part(df, "noise_ld", "sigma_test")
    if len(sub) < 2:
        return []
    step = _grid_step(config)
    inc = bool(np.all(np.diff(sub["tau_opt_theory"].to_numpy()) > 0))
    grid = sub["tau_grid"].to_numpy()
    inc_mc = bool(np.all(grid[1:] >= grid[:-1] / step * (1 - 1e-9)))  # non-decreasing up to one grid step
    hi = sub.iloc[-1]
    return [Comparison("Fig. 2c: τ_opt increases with σ_test (l = d)", "increasing",
                       ", ".join(f"σ={r.sigma_test:g}: {r.tau_opt_theory:.2f} (grid {r.tau_grid:.2f}, iso "
                                 f"{r.tau_opt_iso:.2f})" for r in sub.itertuples()), inc and inc_mc,
                       "theory strictly increasing; grid search non-decreasing up to one grid step (its resolution)"),
            Comparison("Fig. 2b: τ_opt closes the gap to Bayes at large σ_test", "qualitative",
                       f"σ={hi.sigma_test:g}: G/c τ=1 {hi.G1_mc / hi.c:.3f}, τ_opt {hi.Gopt_mc / hi.c:.3f}, "
                       f"test-Bayes {hi.bayes_test / hi.c:.3f}, train-Bayes {hi.bayes_train / hi.c:.3f}", None, "")]


def _mean_shift_rows(df: pd.DataFrame) -> list[Comparison]:
    """Remark 3.4: the input-mean shift harms linear attention, not the approximate softmax."""
    sub = _part(df, "mean", "mu_x")
    if len(sub) < 2:
        return []
    lo, hi = sub.iloc[0], sub.iloc[-1]
    worse = hi.linear_mc / hi.c > hi.G1_mc / hi.c
    return [Comparison("Remark 3.4: input-mean shift harms linear, not approx. softmax",
                       "approx. softmax insensitive; linear attention harmed",
                       f"G/c at ‖μx‖ = {lo.mu_x:g} → {hi.mu_x:g}: approx {lo.G1_mc / lo.c:.3f} → {hi.G1_mc / hi.c:.3f}, "
                       f"linear {lo.linear_mc / lo.c:.3f} → {hi.linear_mc / hi.c:.3g}, query-not-a-key "
                       f"{lo.noquery1_mc / lo.c:.3f} → {hi.noquery1_mc / hi.c:.3f}", bool(worse),
                       "normalised by Tr(AB)+σ², which itself grows with ‖μx‖")]


def compare(config, df: pd.DataFrame) -> list[Comparison]:
    """Every row of the paper-vs-iclab table, in report order."""
    main = df[~df["part"].str.startswith("simcheck")]
    return [*_simcheck_rows(df), *_theory_vs_mc_rows(main), _tau_formula_row(config, main), *_no_shift_rows(df),
            *_shift_vs_l_rows(df), *_noise_rows(config, df), *_mean_shift_rows(df)]


def notes(config, df: pd.DataFrame) -> str:
    """The disagreements with the paper and why (docs/papers/temperature.md §6.1–6.3), with this run's numbers."""
    main = df[~df["part"].str.startswith("simcheck")]
    ratio_a1 = (main["mc_a1"] / main["a1"]).to_numpy()
    ratio_l = ((1 - 1 / main["l"]) ** 2).to_numpy()
    none = _part(df, "none")
    lines = [
        "**Corollary 4.4 (\"emulates Bayes\") holds only as l/d → ∞.** With no shift the model at τ = 1 is far "
        "from the Bayes error at finite l/d (see the table), and the optimal temperature is not 1 but ≈ 1 + d/l "
        "(docs/papers/temperature.md §4.6, §6.1): a fixed M11 ≈ d·Σ̂⁻¹ cannot invert the in-context C_xx, whose "
        "fluctuation adds the (1/l)·Tr(B̂Σx) term of F₁. iclab measures this directly: τ_opt(theory) = "
        + ", ".join(f"{r.tau_opt_theory:.2f} at l={int(r.l)}" for r in none.itertuples()) + ".",
        "",
        "**Theorem 4.2 is asymptotic; at finite l its coefficients are off by O(1/l).** Only l − 1 columns carry a "
        "label and the centring includes the query column, so E[C_xy] = (1 − 1/l)²Σx w exactly, not Σx w "
        "(docs/papers/temperature.md §4.8). Measured "
        f"E[2 y r]/a₁ over the cells: median {np.median(ratio_a1):.3f} vs (1 − 1/l)² median {np.median(ratio_l):.3f}. "
        "G = c − a₁/τ + a₂/τ² is a small difference of large terms near τ_opt, so these 1–2 % shifts in a₁, a₂ become "
        "several % in G(τ_opt) at l ≈ d (largest gaps at the shortest l). τ_opt = 2a₂/a₁ is a ratio and is much more "
        "accurate than G_min.",
        "",
        "**Input-mean shift is not exactly harmless in this model.** The query column is a key (Eq. 5 sums over all "
        "l columns) with label 0 and self-score x_lᵀM₁₁x_l ≈ d·Tr Σx; after centring, its zero label pulls the "
        "prediction by ≈ −(d/l)·wᵀμx (docs/papers/temperature.md §4.9). This is O(‖μx‖²) in the error, negligible "
        "against G = O(d) as d → ∞ (so consistent with the theorem), but visible at finite d for large ‖μx‖: see "
        "the 'query not a key' curve, which removes it. Linear attention (no centring) is harmed far more, as "
        "Remark 3.4 says. What holds *exactly* for every prompt is that ŵ_Att, the τ-dependent regression vector "
        "of Eq. 10, depends only on centred statistics: shifting all inputs (label row fixed) leaves it unchanged "
        "to machine precision, while b_Att and the query point itself move (tested in "
        "tests/test_models_icl_attention.py).",
        "",
        "**Bayes curves.** 'test-Bayes' is Eq. (9) with the test prior and noise, centred over the n context pairs "
        "as the paper writes it; the exact posterior mean (uncentred, column `bayes_exact`) is slightly better "
        "(one degree of freedom). 'train-Bayes' uses the train prior/noise. The MP formula "
        "(docs/papers/temperature.md §4.7) is for the isotropic zero-mean case.",
        "",
        "**Errors are raw G** (units where Tr(AB) = abd, so Var(y) ≈ d) **and G/(Tr(AB)+σ²)** (1 = predicting 0); "
        "the paper's normalisation is unknown (docs/papers/temperature.md §5.5).",
    ]
    return "\n".join(lines)
