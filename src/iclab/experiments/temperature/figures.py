"""Figures of the one-layer ``temperature`` experiment: Figs. 1–2 and Remark 3.4 of arXiv:2511.01292 (Demir &
Doğan), redrawn from iclab's cells (docs/papers/temperature.md §5.1).

Every figure shows Theorem 4.2 as lines and Monte Carlo as markers with 1-s.e. error bars; errors are given raw
and normalised by c = Tr(AB) + σ², the error of predicting 0 (docs/papers/temperature.md §5.5).
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from iclab.experiments._plot import ci_err, curve, panel
from iclab.plotting import color, new_figure, save_figure, theory_vs_sim

__all__ = ["figures"]

_X_LABELS = {"l": "context length l (incl. query)", "sigma_test": "σ_test"}
#: the CSV columns of a G-vs-x figure, after x
_VS_COLUMNS = [
    "G1_theory",
    "G1_mc",
    "G1_se",
    "Gopt_theory",
    "Gopt_mc",
    "Gopt_se",
    "tau_opt_theory",
    "tau_grid",
    "bayes_test",
    "bayes_train",
    "bayes_mp",
    "c",
]


def _part(df: pd.DataFrame, part: str, by: str = "l") -> pd.DataFrame:
    return df[df["part"] == part].sort_values(by)


def _g(ax, x, sub: pd.DataFrame, col: str, norm, *, label: str, i: int) -> None:
    """G of the columns ``col`` (``G1``: τ = 1, ``Gopt``: τ_opt) over ``norm``: Theorem 4.2 as a line, Monte Carlo as
    markers ± 1 s.e."""
    theory_vs_sim(
        ax, x, sub[f"{col}_theory"] / norm, sub[f"{col}_mc"] / norm, sub[f"{col}_se"] / norm, label=label, i=i
    )


def _fig_vs(df, fig_dir, part, name, title, x, train_bayes):
    """G(1) and G(τ_opt) (theory line + MC markers) and Bayes against ``x`` for the cells of ``part``, raw and
    normalised (two panels); None when ``part`` has no cells."""
    sub = _part(df, part, x)
    if sub.empty:
        return None
    fig, axes = new_figure(2, 1, width=4.6)
    xs = sub[x].to_numpy(float)
    for ax, norm in zip(axes, (1.0, sub["c"].to_numpy())):
        _g(ax, xs, sub, "G1", norm, label="τ = 1", i=0)
        _g(ax, xs, sub, "Gopt", norm, label="τ_opt", i=1)
        bayes, bayes_se = sub["bayes_test"] / norm, sub["bayes_test_se"] / norm
        curve(ax, xs, bayes, bayes_se, fmt="--", color="k", lw=1.2, label="test-Bayes (MC, Eq. 9)")
        if sub["bayes_mp"].notna().any():
            ax.plot(xs, sub["bayes_mp"] / norm, ":", color="0.4", label="Bayes (MP formula)")
        if train_bayes:
            bayes, bayes_se = sub["bayes_train"] / norm, sub["bayes_train_se"] / norm
            curve(ax, xs, bayes, bayes_se, i=4, fmt="-.", lw=1.2, label="train-Bayes (MC)")
    panel(axes[0], yscale="log", ylabel="test error G (raw)", xlabel=_X_LABELS[x], title=title)
    panel(axes[1], yscale="log", ylabel="G / (Tr(AB) + σ²)", xlabel=_X_LABELS[x], title=title, legend=7)
    return save_figure(fig, fig_dir / name, sub[[x, *_VS_COLUMNS]])


def _fig_noise_vs_l(df: pd.DataFrame, fig_dir: Path) -> Path | None:
    """Fig. 2a: noise shift vs l, one colour per σ_test; τ = 1 and τ_opt panels."""
    noise = df[df["part"] == "noise"]
    if noise.empty:
        return None
    fig, axes = new_figure(2, 1, width=4.6)
    for j, (s, sub) in enumerate(noise.groupby("sigma_test")):
        sub = sub.sort_values("l")
        n = sub["c"].to_numpy()
        for ax, col, tag in ((axes[0], "G1", "τ = 1"), (axes[1], "Gopt", "τ_opt")):
            _g(ax, sub["l"], sub, col, n, label=f"σ = {s:g}", i=j)
            ax.plot(sub["l"], sub["bayes_test"] / n, "--", color=color(j), lw=1)
            panel(
                ax, title=f"noise shift, {tag} (Fig. 2a; dashed = test-Bayes)", xlabel="context length l", yscale="log"
            )
    panel(axes[0], ylabel="G / (Tr(AB) + σ²)", legend=7)
    return save_figure(
        fig,
        fig_dir / "fig2a_noise_vs_l",
        noise[["sigma_test", "l", "G1_theory", "G1_mc", "Gopt_theory", "Gopt_mc", "bayes_test", "c"]],
    )


def _fig_tau_vs_sigma(config, df: pd.DataFrame, fig_dir: Path) -> Path | None:
    """Fig. 2c: τ_opt vs σ_test at l = d (Eq. 15, grid search, isotropic formula of note §4.5)."""
    sub = _part(df, "noise_ld", "sigma_test")
    if sub.empty:
        return None
    fig, ax = new_figure()
    theory_vs_sim(
        ax,
        sub["sigma_test"],
        sub["tau_opt_theory"],
        sub["tau_grid"],
        None,
        label="τ_opt: Eq. 15 vs MC grid search",
        i=0,
    )
    ax.plot(sub["sigma_test"], sub["tau_opt_iso"], ":", color=color(1), label="isotropic formula (note §4.5)")
    panel(ax, xlabel="σ_test", ylabel="τ_opt", title=f"τ_opt vs test noise, l = d = {config.d} (Fig. 2c)", legend=7)
    return save_figure(
        fig,
        fig_dir / "fig2c_tau_opt_vs_sigma",
        sub[["sigma_test", "tau_opt_theory", "tau_opt_mc", "tau_grid", "tau_opt_iso"]],
    )


def _fig_formula_vs_grid(config, df: pd.DataFrame, fig_dir: Path) -> Path:
    """τ_opt of Theorem 4.3 against the Monte-Carlo grid search, every cell, with the grid's half step."""
    df = df[df["part"] != "surrogate"]
    fig, ax = new_figure()
    step = (config.tau_max / config.tau_min) ** (1 / (config.n_tau - 1))
    for j, (part, sub) in enumerate(df.groupby("part")):
        ax.scatter(sub["tau_opt_theory"], sub["tau_grid"], s=14, color=color(j), label=part)
    lim = [df["tau_opt_theory"].min() / 1.2, df["tau_opt_theory"].max() * 1.2]
    ax.plot(lim, lim, "k-", lw=1)
    ax.fill_between(
        lim,
        [v / math.sqrt(step) for v in lim],
        [v * math.sqrt(step) for v in lim],
        color="0.85",
        label="± half grid step",
    )
    panel(ax, xscale="log", yscale="log", xlabel="τ_opt, Theorem 4.3 (Eq. 15)", ylabel="τ by MC grid search", legend=6)
    return save_figure(
        fig,
        fig_dir / "fig_tau_formula_vs_grid",
        df[["part", "l", "sigma_test", "tau_opt_theory", "tau_opt_mc", "tau_grid"]],
    )


def _fig_mean_shift(df: pd.DataFrame, fig_dir: Path) -> Path | None:
    """Remark 3.4: input-mean shift, approximate softmax vs linear attention (and the query-not-a-key variant)."""
    sub = _part(df, "mean", "mu_x")
    if sub.empty:
        return None
    fig, ax = new_figure(width=5.0)
    n = sub["c"].to_numpy()
    _g(ax, sub["mu_x"], sub, "G1", n, label="approx. softmax τ = 1", i=0)
    theory_vs_sim(ax, sub["mu_x"], None, sub["linear_mc"] / n, sub["linear_se"] / n, label="linear attention", i=1)
    theory_vs_sim(
        ax,
        sub["mu_x"],
        None,
        sub["noquery1_mc"] / n,
        sub["noquery1_se"] / n,
        label="approx. softmax, query not a key",
        i=2,
    )
    ax.plot(sub["mu_x"], sub["bayes_test"] / n, "k--", lw=1.2, label="test-Bayes (MC)")
    title = f"input-mean shift, l = {int(sub['l'].iloc[0])} (Remark 3.4)"
    panel(ax, yscale="log", xlabel="‖μx‖ (test input mean)", ylabel="G / (Tr(AB) + σ²)", title=title, legend=7)
    return save_figure(
        fig,
        fig_dir / "fig_mean_shift_linear_vs_approx",
        sub[["mu_x", "G1_theory", "G1_mc", "linear_mc", "noquery1_mc", "bayes_test", "c"]],
    )


def _surrogate_curves(sub: pd.DataFrame) -> pd.DataFrame:
    """One row per (d, l, τ): both layers' normalised errors and the relative output discrepancy."""
    rows = []
    for r in sub.itertuples():
        for t, ga, gs, od in zip(r.taus, r.G_approx_curve, r.G_soft_curve, r.out_diff_curve):
            rows.append(
                {
                    "d": r.d,
                    "l": r.l,
                    "tau": t,
                    "G_approx_norm": ga / r.c,
                    "G_soft_norm": gs / r.c,
                    "out_diff": od,
                    "tau_over_spread": t / r.score_spread,
                }
            )
        for row, gss in zip(rows[-len(r.taus) :], r.G_soft_scaled_curve):
            row["G_soft_scaled_norm"] = gss / r.c
    return pd.DataFrame(rows)


def _fig_surrogate(config, df: pd.DataFrame, fig_dir: Path) -> Path | None:
    """Approximate softmax against softmax with the same (Lemma 4.1) weights (v2 Fig. 1; note §4.12): errors vs τ
    at the longest l, the softmax layer's best τ against Eq. 15's τ_opt vs d, and the output discrepancy against
    τ / score spread."""
    sub = df[df["part"] == "surrogate"].sort_values(["d", "l"])
    if sub.empty:
        return None
    from iclab.experiments.temperature.surrogate import TRACK_TOL

    cur = _surrogate_curves(sub)
    fig, (ax_g, ax_t, ax_o) = new_figure(3, 1, width=4.6)
    l_max = int(sub["l"].max())
    for j, (d, g) in enumerate(cur[cur["l"] == l_max].groupby("d")):
        ax_g.plot(g["tau"], g["G_approx_norm"], "-", color=color(j), label=f"d = {d}")
        ax_g.plot(g["tau"], g["G_soft_norm"], "--", color=color(j))
        ax_g.plot(g["tau"], g["G_soft_scaled_norm"], ":", color=color(j))
    for j, r in enumerate(sub[sub["l"] == l_max].itertuples()):
        ax_g.plot([r.tau_opt_theory], [r.Ga_opt_mc / r.c], "o", color=color(j), ms=4)
    panel(ax_g, xscale="log", yscale="log", ylim=(0.01, 3), xlabel="τ", ylabel="G / (Tr(AB) + σ²)", legend=6)
    ax_g.set_title(
        f"l = {l_max}: approx. softmax (solid, ● τ_opt), softmax (dashed; dotted: best output scale)", fontsize=7
    )
    for j, (l, g) in enumerate(sub.groupby("l")):
        err = ci_err(g, "tau_best_soft", "tau_best_soft_lo", "tau_best_soft_hi")
        curve(ax_t, g["d"], g["tau_best_soft"], err, i=j, fmt="s", label=f"softmax best τ, l = {l}")
        ax_t.plot(g["d"], g["tau_opt_theory"], "-", color=color(j), lw=1, label=f"Eq. 15 τ_opt, l = {l}")
    spread = sub.groupby("d")["score_spread"].mean()
    ax_t.plot(spread.index, spread.values, ":", color="0.3", label="score spread")
    panel(ax_t, xscale="log", yscale="log", xlabel="d", ylabel="τ", legend=5)
    ax_t.set_title("where τ_opt stops transferring to softmax", fontsize=8)
    dims = sorted(cur["d"].unique())
    for (d, l), g in cur.groupby(["d", "l"]):
        ax_o.plot(
            g["tau_over_spread"],
            g["out_diff"],
            "-" if l == l_max else "--",
            color=color(dims.index(d)),
            lw=1,
            label=f"d = {d}" if l == l_max else None,
        )
    ax_o.axhline(TRACK_TOL, color="k", ls=":", lw=1)
    xlabel = f"τ / score spread (solid l = {l_max}, dashed other l)"
    ylabel = "RMS(ŷ_soft − ŷ_approx) / RMS(ŷ_approx)"
    panel(ax_o, xscale="log", yscale="log", ylim=(1e-4, 2), xlabel=xlabel, ylabel=ylabel, legend=5)
    ax_o.set_title(f"outputs agree (< {TRACK_TOL:.0%}, dotted) only for τ ≫ spread", fontsize=8)
    return save_figure(fig, fig_dir / "fig_surrogate_vs_softmax", cur)


def figures(config, df: pd.DataFrame, fig_dir: Path) -> list[Path]:
    """Figs. 1a–1c, 2a–2c, τ formula vs grid search, the input-mean shift, and the surrogate against softmax
    (PNG + CSV each)."""
    vs = [  # (part, figure, title, x, train-Bayes curve)
        ("none", "fig1a_no_shift", "no shift (Fig. 1a)", "l", False),
        ("cov", "fig1b_input_cov_shift", f"Σx = {config.cov_scale}·I (Fig. 1b)", "l", False),
        ("task", "fig1c_task_shift", f"Σw = {config.task_scale}·I, ‖μw‖ = {config.task_mean} (Fig. 1c)", "l", True),
        ("noise_ld", "fig2b_noise_vs_sigma", f"noise shift at l = d = {config.d} (Fig. 2b)", "sigma_test", True),
    ]
    out = [_fig_vs(df, fig_dir, *spec) for spec in vs] + [
        _fig_noise_vs_l(df, fig_dir),
        _fig_tau_vs_sigma(config, df, fig_dir),
        _fig_formula_vs_grid(config, df, fig_dir),
        _fig_mean_shift(df, fig_dir),
        _fig_surrogate(config, df, fig_dir),
    ]
    return [p for p in out if p is not None]
