"""Figures of ``temperature-gpt2-regression``: error vs inference temperature per shift (all layers, first layer
only) and the grid-best τ against the one-layer theory of arXiv:2511.01292 (docs/papers/temperature.md §5.2)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from iclab.experiments.temperature.gpt2.config import TemperatureGPT2Config
from iclab.experiments.temperature.gpt2.shifts import theory_tau
from iclab.experiments._plot import curve, panel
from iclab.plotting import color, log_ticks, new_figure, save_figure

__all__ = ["figures"]


def _curves(cfg, df: pd.DataFrame, key: str) -> pd.DataFrame:
    """Mean error per (shift, τ) over trained models; ``sd`` across models, or the prompt s.e. with one model."""
    rows = []
    for shift, g in df.groupby("shift", sort=False):
        arr = np.array(g[key].tolist())  # (seeds, taus)
        se = np.array(g[key.replace("err", "se")].tolist())  # (seeds, taus): prompt-level standard errors
        for j, tau in enumerate(cfg.taus):
            rows.append(
                {
                    "shift": shift,
                    "tau": tau,
                    "err": arr[:, j].mean(),
                    "sd": arr[:, j].std(ddof=1) if len(arr) > 1 else float(se[0, j]),
                }
            )
    return pd.DataFrame(rows)


def _fig_error_vs_tau(cfg: TemperatureGPT2Config, df: pd.DataFrame, fig_dir: Path, key: str, label: str) -> Path:
    """Normalised error vs τ, one curve per shift, the one-layer theory τ_opt dotted."""
    cur = _curves(cfg, df, key)
    fig, ax = new_figure(width=5.5, height=3.8)
    for i, (shift, g) in enumerate(cur.groupby("shift", sort=False)):
        curve(ax, g["tau"], g["err"], g["sd"], i=i, ms=3, label=shift)
        ax.axvline(theory_tau(cfg, shift), color=color(i), ls=":", lw=1)
    log_ticks(ax, cfg.taus)
    panel(
        ax,
        yscale="log",
        xlabel="inference temperature τ (dotted: one-layer theory τ_opt)",
        ylabel="normalised query error",
        title=f"GPT-2 ({cfg.n_layer}L/{cfg.n_head}H/{cfg.n_embd}) regression, τ in {label}",
        legend=7,
    )
    return save_figure(fig, fig_dir / f"gpt2_error_vs_tau_{key.split('_')[1]}", cur)


def _fig_best_vs_theory(df: pd.DataFrame, fig_dir: Path) -> Path:
    """Grid-best τ (all layers, first layer) against the one-layer theory τ_opt, one point per shift."""
    summ = df.groupby("shift", sort=False)[["theory_tau", "best_tau_all", "best_tau_first"]].mean().reset_index()
    fig, ax = new_figure()
    lim = [0.3, max(4.5, float(summ[["theory_tau", "best_tau_all"]].max().max()) * 1.1)]
    ax.plot(lim, lim, "-", color="0.6", lw=1, label="τ_best = τ_theory")
    ax.scatter(summ["theory_tau"], summ["best_tau_all"], color=color(0), label="all layers")
    ax.scatter(summ["theory_tau"], summ["best_tau_first"], color=color(1), marker="s", label="first layer")
    for _, r in summ.iterrows():
        ax.annotate(r["shift"], (r["theory_tau"], r["best_tau_all"]), fontsize=6)
    panel(ax, xscale="log", yscale="log", xlabel="one-layer theory τ_opt", ylabel="grid-best τ for GPT-2", legend=7)
    return save_figure(fig, fig_dir / "gpt2_best_tau_vs_theory", summ)


def figures(cfg: TemperatureGPT2Config, df: pd.DataFrame, fig_dir: Path) -> list[Path]:
    return [
        _fig_error_vs_tau(cfg, df, fig_dir, "err_all", "all layers"),
        _fig_error_vs_tau(cfg, df, fig_dir, "err_first", "first layer only"),
        _fig_best_vs_theory(df, fig_dir),
    ]
