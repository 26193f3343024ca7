"""Figures, the paper-vs-iclab table and the notes of the ``temperature`` experiment (spec §3.5, §4.1).

Every figure shows Theorem 4.2 as lines and Monte Carlo as markers with 1-s.e. error bars; errors are given raw
and normalised by c = Tr(AB) + σ² (spec open detail 2).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from iclab.experiments import Comparison

__all__ = ["figures", "compare", "notes"]

_TOL = 0.05  # theory vs Monte Carlo (the 5 %)


def _sub(df: pd.DataFrame, scenario: str, by: str = "l") -> pd.DataFrame:
    return df[df["scenario"] == scenario].sort_values(by)


def _vs_x(axes, sub: pd.DataFrame, x: str, i0: int = 0, tag: str = "", bayes: bool = True, train_bayes=False):
    """G(1) and G(τ_opt) (theory line + MC markers) and Bayes on ``axes = (raw, normalised)``."""
    from iclab.plotting import color, theory_vs_sim

    xs = sub[x].to_numpy(float)
    for ax, norm in zip(axes, (1.0, sub["c"].to_numpy())):
        theory_vs_sim(ax, xs, sub["G1_theory"] / norm, sub["G1_mc"] / norm, sub["G1_se"] / norm,
                      label=f"τ = 1{tag}", i=i0)
        theory_vs_sim(ax, xs, sub["Gopt_theory"] / norm, sub["Gopt_mc"] / norm, sub["Gopt_se"] / norm,
                      label=f"τ_opt{tag}", i=i0 + 1)
        if bayes:
            ax.errorbar(xs, sub["bayes_test"] / norm, sub["bayes_test_se"] / norm, fmt="k--", lw=1.2, capsize=2,
                        label=f"test-Bayes{tag} (MC, Eq. 9)")
            if sub["bayes_mp"].notna().any():
                ax.plot(xs, sub["bayes_mp"] / norm, ":", color="0.4", label="Bayes (MP formula)")
            if train_bayes:
                ax.errorbar(xs, sub["bayes_train"] / norm, sub["bayes_train_se"] / norm, fmt="-.", color=color(4),
                            lw=1.2, capsize=2, label=f"train-Bayes{tag} (MC)")
        ax.set_yscale("log")
    axes[0].set_ylabel("test error G (raw)")
    axes[1].set_ylabel("G / (Tr(AB) + σ²)")


def _fig_vs(df, scenario, fig_dir, name, title, x="l", xlabel="context length l (incl. query)", train_bayes=False):
    from iclab.plotting import new_figure, save_figure

    sub = _sub(df, scenario, x)
    if sub.empty:
        return None
    fig, axes = new_figure(2, 1, width=4.6)
    _vs_x(axes, sub, x, train_bayes=train_bayes)
    for ax in axes:
        ax.set_xlabel(xlabel)
        ax.set_title(title)
    axes[1].legend(fontsize=7)
    cols = [x, "G1_theory", "G1_mc", "G1_se", "Gopt_theory", "Gopt_mc", "Gopt_se", "tau_opt_theory", "tau_grid",
            "bayes_test", "bayes_train", "bayes_mp", "c"]
    return save_figure(fig, fig_dir / name, sub[cols])


def figures(config, df: pd.DataFrame, fig_dir: Path) -> list[Path]:
    from iclab.plotting import color, new_figure, save_figure, theory_vs_sim

    out = [_fig_vs(df, "none", fig_dir, "fig1a_no_shift", "no shift (Fig. 1a)"),
           _fig_vs(df, "cov", fig_dir, "fig1b_input_cov_shift", f"Σx = {config.cov_scale}·I (Fig. 1b)"),
           _fig_vs(df, "task", fig_dir, "fig1c_task_shift",
                   f"Σw = {config.task_scale}·I, ‖μw‖ = {config.task_mean} (Fig. 1c)", train_bayes=True),
           _fig_vs(df, "noise_ld", fig_dir, "fig2b_noise_vs_sigma", f"noise shift at l = d = {config.d} (Fig. 2b)",
                   x="sigma_test", xlabel="σ_test", train_bayes=True)]
    # Fig. 2a: noise shift vs l, one colour per σ_test.
    noise = df[df["scenario"] == "noise"]
    if not noise.empty:
        fig, axes = new_figure(2, 1, width=4.6)
        for j, (s, sub) in enumerate(noise.groupby("sigma_test")):
            sub = sub.sort_values("l")
            n = sub["c"].to_numpy()
            for ax, col, tag in ((axes[0], "G1", "τ = 1"), (axes[1], "Gopt", "τ_opt")):
                theory_vs_sim(ax, sub["l"], sub[f"{col}_theory"] / n, sub[f"{col}_mc"] / n, sub[f"{col}_se"] / n,
                              label=f"σ = {s:g}", i=j)
                ax.plot(sub["l"], sub["bayes_test"] / n, "--", color=color(j), lw=1)
                ax.set_title(f"noise shift, {tag} (Fig. 2a; dashed = test-Bayes)")
                ax.set_xlabel("context length l")
                ax.set_yscale("log")
        axes[0].set_ylabel("G / (Tr(AB) + σ²)")
        axes[0].legend(fontsize=7)
        out.append(save_figure(fig, fig_dir / "fig2a_noise_vs_l", noise[["sigma_test", "l", "G1_theory", "G1_mc",
                                                                        "Gopt_theory", "Gopt_mc", "bayes_test", "c"]]))
    # Fig. 2c: tau_opt vs sigma_test.
    sub = _sub(df, "noise_ld", "sigma_test")
    if not sub.empty:
        fig, ax = new_figure()
        theory_vs_sim(ax, sub["sigma_test"], sub["tau_opt_theory"], sub["tau_grid"], None,
                      label="τ_opt: Eq. 15 vs MC grid search", i=0)
        ax.plot(sub["sigma_test"], sub["tau_opt_iso"], ":", color=color(1), label="isotropic formula (§3.6)")
        ax.set_xlabel("σ_test")
        ax.set_ylabel("τ_opt")
        ax.set_title(f"τ_opt vs test noise, l = d = {config.d} (Fig. 2c)")
        ax.legend(fontsize=7)
        out.append(save_figure(fig, fig_dir / "fig2c_tau_opt_vs_sigma",
                               sub[["sigma_test", "tau_opt_theory", "tau_opt_mc", "tau_grid", "tau_opt_iso"]]))
    # tau_opt formula vs grid search, every cell.
    fig, ax = new_figure()
    step = (config.tau_max / config.tau_min) ** (1 / (config.n_tau - 1))
    for j, (scen, sub) in enumerate(df.groupby("scenario")):
        ax.scatter(sub["tau_opt_theory"], sub["tau_grid"], s=14, color=color(j), label=scen)
    lim = [df["tau_opt_theory"].min() / 1.2, df["tau_opt_theory"].max() * 1.2]
    ax.plot(lim, lim, "k-", lw=1)
    ax.fill_between(lim, [v / math.sqrt(step) for v in lim], [v * math.sqrt(step) for v in lim], color="0.85",
                    label="± half grid step")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("τ_opt, Theorem 4.3 (Eq. 15)")
    ax.set_ylabel("τ by MC grid search")
    ax.legend(fontsize=6)
    out.append(save_figure(fig, fig_dir / "fig_tau_formula_vs_grid",
                           df[["scenario", "l", "sigma_test", "tau_opt_theory", "tau_opt_mc", "tau_grid"]]))
    # Remark 3.4: input-mean shift, approximate softmax vs linear attention.
    sub = _sub(df, "mean", "mu_x")
    if not sub.empty:
        fig, ax = new_figure(width=5.0)
        n = sub["c"].to_numpy()
        theory_vs_sim(ax, sub["mu_x"], sub["G1_theory"] / n, sub["G1_mc"] / n, sub["G1_se"] / n,
                      label="approx. softmax τ = 1", i=0)
        theory_vs_sim(ax, sub["mu_x"], None, sub["linear_mc"] / n, sub["linear_se"] / n, label="linear attention", i=1)
        theory_vs_sim(ax, sub["mu_x"], None, sub["noquery1_mc"] / n, sub["noquery1_se"] / n,
                      label="approx. softmax, query not a key", i=2)
        ax.plot(sub["mu_x"], sub["bayes_test"] / n, "k--", lw=1.2, label="test-Bayes (MC)")
        ax.set_yscale("log")
        ax.set_xlabel("‖μx‖ (test input mean)")
        ax.set_ylabel("G / (Tr(AB) + σ²)")
        ax.set_title(f"input-mean shift, l = {int(sub['l'].iloc[0])} (Remark 3.4)")
        ax.legend(fontsize=7)
        out.append(save_figure(fig, fig_dir / "fig_mean_shift_linear_vs_approx",
                               sub[["mu_x", "G1_theory", "G1_mc", "linear_mc", "noquery1_mc", "bayes_test", "c"]]))
    return [p for p in out if p is not None]


def _rel(a: float, b: float) -> float:
    return abs(a - b) / abs(b)


def _fmt(v: float, se: float | None = None) -> str:
    return f"{v:.2f}" if se is None else f"{v:.2f} ± {se:.2f}"


_SIMCHECK = (  # spec §3.5 [sim-check] table: (scenario, at τ_opt?, theory, MC, τ_opt or None, label)
    ("simcheck_none", False, 25.01, 24.93, None, "a=1, b=1, σ=0.1, l=100, τ=1"),
    ("simcheck_none", True, 16.68, 16.40, 1.50, "same, τ_opt"),
    ("simcheck_cov", False, 299.95, 299.90, None, "a=2 (cov. shift), l=100, τ=1"),
    ("simcheck_cov", True, 33.35, 33.63, 3.00, "same, τ_opt"),
    ("simcheck_noise", True, 36.06, 35.19, 2.18, "σ_test=3, l=50, τ_opt"),
    ("simcheck_mean", False, 27.01, 27.43, None, "‖μx‖=1, ‖μw‖=1, σ_tr=1, l=100, τ=1"),
)


def compare(config, df: pd.DataFrame) -> list[Comparison]:
    rows: list[Comparison] = []
    for scen, at_opt, th, mc, tau, label in _SIMCHECK:
        sub = df[df["scenario"] == scen]
        if sub.empty:
            continue
        r = sub.iloc[0]
        g_th, g_mc, se = (r["Gopt_theory"], r["Gopt_mc"], r["Gopt_se"]) if at_opt else (r["G1_theory"], r["G1_mc"], r["G1_se"])
        tau_txt = f", τ_opt = {r['tau_opt_theory']:.2f} (spec {tau:.2f})" if tau else ""
        ok = _rel(g_th, th) <= _TOL and _rel(g_mc, mc) <= max(_TOL, 2 * se / mc)
        rows.append(Comparison(f"[sim-check] G, {label}", f"theory {th} / MC {mc}",
                               f"theory {g_th:.2f} / MC {_fmt(g_mc, se)}{tau_txt}; G/c = {g_th / r['c']:.3f}", ok,
                               f"spec's independent check, d=50, m=5000; iclab MC on {int(r['n_test'])} prompts "
                               f"(tolerance 5 % or 2 s.e.); c = Tr(AB)+σ² = {r['c']:.2f}"))
    main = df[~df["scenario"].str.startswith("simcheck")]
    # Theory vs simulation (issue: 5 %).
    for col, tag in (("G1", "τ = 1"), ("Gopt", "τ = τ_opt")):
        for name, sub in (("l ≥ d", main[main["l"] >= main["d"]]), ("l < d", main[main["l"] < main["d"]])):
            if sub.empty:
                continue
            gap = (sub[f"{col}_mc"] - sub[f"{col}_theory"]).abs() / sub[f"{col}_theory"]
            worst = sub.loc[gap.idxmax()]
            rows.append(Comparison(f"Theorem 4.2 vs Monte Carlo, {tag}, cells with {name}",
                                   "\"closely match\" (spec [sim-check]: 1–5 %)",
                                   f"median gap {100 * gap.median():.1f} %, max {100 * gap.max():.1f} % "
                                   f"({worst['scenario']}, l={int(worst['l'])}; MC s.e. "
                                   f"{100 * worst[f'{col}_se'] / worst[f'{col}_mc']:.1f} %)",
                                   bool(gap.median() <= _TOL) if name == "l ≥ d" else None,
                                   "finite-l effects O(1/l) in a₁, a₂ (see notes), amplified near τ_opt where G is a "
                                   "small difference; tolerance on the median"))
    # tau_opt formula vs grid search.
    step = (config.tau_max / config.tau_min) ** (1 / (config.n_tau - 1))
    rel = (main["tau_grid"] - main["tau_opt_theory"]).abs() / main["tau_opt_theory"]
    rel_mc = (main["tau_opt_mc"] - main["tau_opt_theory"]).abs() / main["tau_opt_theory"]
    half = math.sqrt(step) - 1
    rows.append(Comparison("τ_opt: Eq. (15) vs MC grid search", "\"nearly coincide\" [PN]",
                           f"max |Δτ|/τ = {100 * rel.max():.1f} % (grid half-step {100 * half:.1f} %); vs exact MC "
                           f"minimiser E[r²]/E[(y−b)r]: median {100 * rel_mc.median():.1f} %, max {100 * rel_mc.max():.1f} %",
                           bool(rel.median() <= half + 0.02), f"{config.n_tau}-point log grid on "
                           f"[{config.tau_min}, {config.tau_max}]; tolerance: median within half a step + 2 %"))
    # Finding: tau_opt ~ 1 + d/l without shift.
    none = _sub(df, "none")
    if not none.empty:
        pred = 1 + none["d"] / none["l"]
        rel = ((none["tau_opt_theory"] - pred) / pred).abs()
        rel_mc = ((none["tau_opt_mc"] - pred) / pred).abs()
        pairs = "; ".join(f"l={int(r.l)}: {r.tau_opt_theory:.2f} (MC {r.tau_opt_mc:.2f}) vs {1 + r.d / r.l:.2f}"
                          for r in none.itertuples())
        rows.append(Comparison("τ_opt without shift: Eq. (15) (and MC) vs 1 + d/l",
                               "paper (Cor. 4.4): τ = 1 emulates Bayes; spec finding: τ_opt ≈ 1 + d/l", pairs,
                               bool(rel.max() < _TOL),
                               f"max deviation of Eq. (15) from 1 + d/l: {100 * rel.max():.1f} % (σ_tr²/l and Σ̂ "
                               f"noise; tolerance 5 %); of the MC minimiser: {100 * rel_mc.max():.1f} % (finite-l "
                               "effects, see notes)"))
        big = none.iloc[-1]
        rows.append(Comparison(f"Cor. 4.4: emulates Bayes with no shift (l = {int(big.l)})",
                               "G(τ=1) ≈ Bayes error",
                               f"G(1) = {big.G1_mc:.3g}, G(τ_opt) = {big.Gopt_mc:.3g}, test-Bayes = "
                               f"{big.bayes_test:.3g} (normalised: {big.G1_mc / big.c:.3f} / {big.Gopt_mc / big.c:.3f} / "
                               f"{big.bayes_test / big.c:.4f})", None,
                               "only as l/d → ∞: a fixed M11 cannot invert the in-context C_xx (spec §3.3 caveat)"))
        if none["bayes_mp"].notna().any():
            ok = none.dropna(subset=["bayes_mp"])
            gap = ((ok["bayes_exact"] - ok["bayes_mp"]) / ok["bayes_mp"]).abs()
            gap_c = ((ok["bayes_test"] - ok["bayes_mp"]) / ok["bayes_mp"]).abs()
            big = ok[ok["l"] > 2 * ok["d"]]
            gap_big = ((big["bayes_exact"] - big["bayes_mp"]) / big["bayes_mp"]).abs()
            rows.append(Comparison("Bayes error: Marchenko–Pastur formula (§3.2) vs MC", "spec: 0.020 vs 0.021 (d=50, n=99)",
                                   f"exact posterior mean: median gap {100 * gap.median():.1f} %, max "
                                   f"{100 * gap.max():.1f} %; centred Eq. (9): max {100 * gap_c.max():.1f} %",
                                   bool(gap_big.max() <= _TOL) if len(big) else None,
                                   "MP is the d, n → ∞ limit of the uncentred posterior mean (tolerance 5 % at "
                                   "l > 2d); Eq. (9) centres the context and loses one degree of freedom"))
    for scen, label in (("cov", "Fig. 1b: τ_opt restores Bayes alignment under Σx shift"),
                        ("task", "Fig. 1c: task-shift harm shrinks with l"),
                        ("none", "Fig. 1a: converges to Bayes as l grows")):
        sub = _sub(df, scen)
        if len(sub) < 2:
            continue
        lo, hi = sub.iloc[0], sub.iloc[-1]
        rows.append(Comparison(label, "qualitative",
                               f"(G/c) at τ=1 → τ_opt, Bayes: l={int(lo.l)}: {lo.G1_mc / lo.c:.3f} → {lo.Gopt_mc / lo.c:.3f}, "
                               f"{lo.bayes_test / lo.c:.3f}; l={int(hi.l)}: {hi.G1_mc / hi.c:.3f} → {hi.Gopt_mc / hi.c:.3f}, "
                               f"{hi.bayes_test / hi.c:.3f}", None, "normalised error G/(Tr(AB)+σ²)"))
    sub = _sub(df, "noise_ld", "sigma_test")
    if len(sub) >= 2:
        step = (config.tau_max / config.tau_min) ** (1 / (config.n_tau - 1))
        inc = bool(np.all(np.diff(sub["tau_opt_theory"].to_numpy()) > 0))
        grid = sub["tau_grid"].to_numpy()
        inc_mc = bool(np.all(grid[1:] >= grid[:-1] / step * (1 - 1e-9)))  # non-decreasing up to one grid step
        rows.append(Comparison("Fig. 2c: τ_opt increases with σ_test (l = d)", "increasing",
                               ", ".join(f"σ={r.sigma_test:g}: {r.tau_opt_theory:.2f} (grid {r.tau_grid:.2f}, iso "
                                         f"{r.tau_opt_iso:.2f})" for r in sub.itertuples()), inc and inc_mc,
                               "theory strictly increasing; grid search non-decreasing up to one grid step (its resolution)"))
        hi = sub.iloc[-1]
        rows.append(Comparison("Fig. 2b: τ_opt closes the gap to Bayes at large σ_test", "qualitative",
                               f"σ={hi.sigma_test:g}: G/c τ=1 {hi.G1_mc / hi.c:.3f}, τ_opt {hi.Gopt_mc / hi.c:.3f}, "
                               f"test-Bayes {hi.bayes_test / hi.c:.3f}, train-Bayes {hi.bayes_train / hi.c:.3f}", None, ""))
    sub = _sub(df, "mean", "mu_x")
    if len(sub) >= 2:
        lo, hi = sub.iloc[0], sub.iloc[-1]
        worse = hi.linear_mc / hi.c > hi.G1_mc / hi.c
        rows.append(Comparison("Remark 3.4: input-mean shift harms linear, not approx. softmax",
                               "approx. softmax insensitive; linear attention harmed",
                               f"G/c at ‖μx‖ = {lo.mu_x:g} → {hi.mu_x:g}: approx {lo.G1_mc / lo.c:.3f} → {hi.G1_mc / hi.c:.3f}, "
                               f"linear {lo.linear_mc / lo.c:.3f} → {hi.linear_mc / hi.c:.3g}, query-not-a-key "
                               f"{lo.noquery1_mc / lo.c:.3f} → {hi.noquery1_mc / hi.c:.3f}", bool(worse),
                               "normalised by Tr(AB)+σ², which itself grows with ‖μx‖"))
    return rows


def notes(config, df: pd.DataFrame) -> str:
    main = df[~df["scenario"].str.startswith("simcheck")]
    ratio_a1 = (main["mc_a1"] / main["a1"]).to_numpy()
    ratio_l = ((1 - 1 / main["l"]) ** 2).to_numpy()
    none = _sub(df, "none")
    lines = [
        "**Corollary 4.4 (\"emulates Bayes\") holds only as l/d → ∞.** With no shift the model at τ = 1 is far "
        "from the Bayes error at finite l/d (see the table), and the optimal temperature is not 1 but ≈ 1 + d/l "
        "(spec §3.3/§3.6, [derived]): a fixed M11 ≈ d·Σ̂⁻¹ cannot invert the in-context C_xx, whose fluctuation adds "
        "the (1/l)·Tr(B̂Σx) term of F₁. iclab measures this directly: τ_opt(theory) = "
        + ", ".join(f"{r.tau_opt_theory:.2f} at l={int(r.l)}" for r in none.itertuples()) + ".",
        "",
        "**Theorem 4.2 is asymptotic; at finite l its coefficients are off by O(1/l).** Only l − 1 columns carry a "
        "label and the centring includes the query column, so E[C_xy] = (1 − 1/l)²Σx w exactly, not Σx w. Measured "
        f"E[2 y r]/a₁ over the cells: median {np.median(ratio_a1):.3f} vs (1 − 1/l)² median {np.median(ratio_l):.3f}. "
        "G = c − a₁/τ + a₂/τ² is a small difference of large terms near τ_opt, so these 1–2 % shifts in a₁, a₂ become "
        "several % in G(τ_opt) at l ≈ d (largest gaps at the shortest l). τ_opt = 2a₂/a₁ is a ratio and is much more "
        "accurate than G_min.",
        "",
        "**Input-mean shift is not exactly harmless in this model.** The query column is a key (spec Eq. 5, open "
        "detail 3) with label 0 and self-score x_lᵀM₁₁x_l ≈ d·Tr Σx; after centring, its zero label pulls the "
        "prediction by ≈ −(d/l)·wᵀμx. This is O(‖μx‖²) in the error, negligible against G = O(d) as d → ∞ (so "
        "consistent with the theorem), but visible at finite d for large ‖μx‖: see the 'query not a key' curve, "
        "which removes it. Linear attention (no centring) is harmed far more, as Remark 3.4 says. What holds "
        "*exactly* for every prompt is that ŵ_Att, the τ-dependent regression vector of spec §1.5, depends only on "
        "centred statistics: shifting all inputs (label row fixed) leaves it unchanged to machine precision, while "
        "b_Att and the query point itself move (tested in tests/test_models_icl_attention.py).",
        "",
        "**Bayes curves.** 'test-Bayes' is Eq. (9) with the test prior and noise, centred over the n context pairs "
        "as the paper writes it; the exact posterior mean (uncentred, column `bayes_exact`) is slightly better "
        "(one degree of freedom). 'train-Bayes' uses the train prior/noise. The MP formula (§3.2) is for the "
        "isotropic zero-mean case.",
        "",
        "**Errors are raw G** (units where Tr(AB) = abd, so Var(y) ≈ d) **and G/(Tr(AB)+σ²)** (1 = predicting 0); "
        "the paper's normalisation is unknown (open detail 2).",
    ]
    return "\n".join(lines)
