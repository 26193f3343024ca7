"""Figures of ``temperature-llm``: EM vs τ per noise ratio, best τ (with its bootstrap CI) vs noise ratio (Fig. 3b of
arXiv:2511.01292), and EM vs #demonstrations (Fig. 3a); docs/papers/temperature.md §5.3–5.4."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from iclab.experiments.temperature.llm.config import TemperatureLLMConfig
from iclab.experiments.temperature.llm.tables import summary_table
from iclab.experiments._plot import ci_err, curve, panel
from iclab.plotting import color, log_ticks, new_figure, save_figure

__all__ = ["figures"]


def _fig_em_vs_tau(cfg: TemperatureLLMConfig, tab: pd.DataFrame, fig_dir: Path) -> Path:
    """One panel per (model, task): EM vs τ for each noise ratio."""
    keys = sorted({(m, t) for m, t in zip(tab["model"], tab["task"])})
    fig, axes = new_figure(ncols=len(keys), width=3.6)
    rows = []
    for ax, (m, t) in zip(np.atleast_1d(axes), keys):
        g = tab[(tab["model"] == m) & (tab["task"] == t)].sort_values("noise_ratio")
        for i, (_, r) in enumerate(g.iterrows()):
            ax.plot(cfg.taus, r["curve"], "o-", ms=3, color=color(i), label=f"noise {r['noise_ratio']:g}")
            rows += [
                {"model": m, "task": t, "noise_ratio": r["noise_ratio"], "tau": x, "em": y}
                for x, y in zip(cfg.taus, r["curve"])
            ]
        log_ticks(ax, cfg.taus)
        panel(ax, xlabel="attention temperature τ (all layers)", ylabel="exact match", legend=6)
        ax.set_title(f"{m}: {t}, {cfg.n_demos} demos", fontsize=8)
    return save_figure(fig, fig_dir / "llm_em_vs_tau", pd.DataFrame(rows))


def _fig_best_tau_vs_noise(cfg: TemperatureLLMConfig, tab: pd.DataFrame, fig_dir: Path) -> Path:
    """Left: grid-best τ (95% bootstrap CI) and the spread rule's gmean τ_ℓ vs noise; right: held-out EM gain."""
    fig, axes = new_figure(ncols=2, width=4.2)
    for i, ((m, t), g) in enumerate(tab.groupby(["model", "task"])):
        g = g.sort_values("noise_ratio")
        err = ci_err(g, "best_tau", "best_tau_lo", "best_tau_hi")
        curve(axes[0], g["noise_ratio"], g["best_tau"], err, i=i, label=f"{m} {t}")
        if "moment_tau" in g:
            axes[0].plot(g["noise_ratio"], g["moment_tau"], "^--", color=color(i), alpha=0.6)
        gerr = ci_err(g, "heldout_gain", "heldout_lo", "heldout_hi")
        curve(axes[1], g["noise_ratio"], g["heldout_gain"], gerr, i=i, fmt="s-", label=f"{m} {t}")
    axes[1].axhline(0, color="0.5", lw=0.8)
    panel(axes[0], xlabel="noise ratio", ylabel="best τ (grid; ▲ spread rule)", legend=5)
    panel(axes[1], xlabel="noise ratio", ylabel="held-out EM gain over τ = 1", legend=5)
    cols = [c for c in tab.columns if c != "curve"]
    return save_figure(fig, fig_dir / "llm_best_tau_vs_noise", tab[cols])


def _fig_em_vs_demos(cfg: TemperatureLLMConfig, tab: pd.DataFrame, fig_dir: Path) -> Path:
    """EM at τ = 1 and at the best τ vs the number of demonstrations at ``demo_noise``."""
    fig, ax = new_figure()
    for i, ((m, t), g) in enumerate(tab.groupby(["model", "task"])):
        g = g.sort_values("n_demos")
        ax.plot(g["n_demos"], g["em_tau1"], "o-", color=color(i), label=f"{m} {t} τ=1")
        ax.plot(g["n_demos"], g["best_em"], "s--", color=color(i), mfc="white", label=f"{m} {t} best τ")
    panel(ax, xlabel=f"in-context examples (noise ratio {cfg.demo_noise:g})", ylabel="exact match", legend=5)
    return save_figure(fig, fig_dir / "llm_em_vs_demos", tab[[c for c in tab.columns if c != "curve"]])


def figures(cfg: TemperatureLLMConfig, df: pd.DataFrame, fig_dir: Path) -> list[Path]:
    tab = summary_table(cfg, df)
    paths: list[Path] = []
    if tab.empty:  # only screening cells finished
        return paths
    noise = tab[tab["part"] == "noise"]
    if not noise.empty:
        paths += [_fig_em_vs_tau(cfg, noise, fig_dir), _fig_best_tau_vs_noise(cfg, noise, fig_dir)]
    demos = tab[(tab["noise_ratio"] == cfg.demo_noise)]
    if demos["n_demos"].nunique() > 1:
        paths.append(_fig_em_vs_demos(cfg, demos, fig_dir))
    return paths
