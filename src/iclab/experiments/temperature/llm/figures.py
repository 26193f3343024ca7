"""Figures of ``temperature-llm``: EM vs τ per noise ratio, best τ and EM vs noise ratio (Fig. 3b of
arXiv:2511.01292), and EM vs #demonstrations (Fig. 3a); docs/papers/temperature.md §5.3–5.4."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from iclab.experiments.temperature.llm.config import TemperatureLLMConfig
from iclab.experiments.temperature.llm.tables import demo_curve, noise_table
from iclab.plotting import color, log_tau_axis, new_figure, save_figure

__all__ = ["figures"]


def _fig_em_vs_tau(cfg: TemperatureLLMConfig, noise: pd.DataFrame, fig_dir: Path) -> Path:
    """One panel per task: mean EM vs τ for each noise ratio, bars 0.33 sd over repeats."""
    tasks = sorted(noise["task"].unique())
    fig, axes = new_figure(ncols=len(tasks), width=3.8)
    axes = np.atleast_1d(axes)
    rows = []
    for ax, task in zip(axes, tasks):
        for i, (r, g) in enumerate(noise[noise["task"] == task].groupby("noise_ratio")):
            curve = np.array(g["em_tau"].tolist())  # (R, T)
            err = 0.33 * curve.std(0, ddof=1) if len(curve) > 1 else np.zeros(curve.shape[1])
            ax.errorbar(cfg.taus, curve.mean(0), yerr=err, marker="o", ms=3, capsize=2, color=color(i),
                        label=f"noise {r:g}")
            rows += [{"task": task, "noise_ratio": r, "tau": t, "em": m, "err_033sd": e}
                     for t, m, e in zip(cfg.taus, curve.mean(0), err)]
        log_tau_axis(ax, cfg.taus)
        ax.set_xlabel("attention temperature τ (all layers)")
        ax.set_ylabel("exact match")
        ax.set_title(f"{task}, {cfg.n_demos} demos")
        ax.legend(fontsize=6)
    return save_figure(fig, fig_dir / "llm_em_vs_tau", pd.DataFrame(rows))


def _fig_best_tau_vs_noise(cfg: TemperatureLLMConfig, df: pd.DataFrame, fig_dir: Path) -> Path:
    """Left: grid-best, held-out and moment-rule τ vs noise ratio; right: EM at τ = 1 and at the held-out τ."""
    tab = noise_table(cfg, df)
    fig, axes = new_figure(ncols=2, width=4.2)
    for i, (task, g) in enumerate(tab.groupby("task")):
        axes[0].plot(g["noise_ratio"], g["best_tau"], "o-", color=color(i), label=f"{task} grid best")
        axes[0].plot(g["noise_ratio"], g["heldout_tau_gmean"], "s:", color=color(i), mfc="white",
                     label=f"{task} held-out pick")
        if "mean_layer_tau" in g:
            axes[0].plot(g["noise_ratio"], g["mean_layer_tau"], "^--", color=color(i), alpha=0.7,
                         label=f"{task} moment rule (gmean τ_ℓ)")
        axes[1].errorbar(g["noise_ratio"], g["em_tau1"], yerr=g["em_tau1_err"], fmt="o-", color=color(i),
                         capsize=2, label=f"{task} τ=1")
        axes[1].errorbar(g["noise_ratio"], g["em_heldout"], yerr=g["em_heldout_err"], fmt="s--", color=color(i),
                         mfc="white", capsize=2, label=f"{task} held-out τ")
    axes[0].set_ylim(0.9 * min(cfg.taus), 1.1 * max(cfg.taus))  # the grid's range
    axes[0].set_xlabel("noise ratio")
    axes[0].set_ylabel("best τ")
    axes[1].set_xlabel("noise ratio")
    axes[1].set_ylabel("exact match (bars 0.33 sd)")
    for ax in axes:
        ax.legend(fontsize=5)
    return save_figure(fig, fig_dir / "llm_best_tau_vs_noise", tab)


def _fig_em_vs_demos(cfg: TemperatureLLMConfig, demos: pd.DataFrame, fig_dir: Path) -> Path:
    """EM at τ = 1 and at the held-out τ vs the number of demonstrations at ``demo_noise``."""
    fig, ax = new_figure()
    for i, (task, g) in enumerate(demos.groupby("task")):
        ax.errorbar(g["n_demos"], g["em_tau1"], yerr=g["em_tau1_err"], fmt="o-", color=color(i), capsize=2,
                    label=f"{task} τ=1")
        ax.errorbar(g["n_demos"], g["em_heldout"], yerr=g["em_heldout_err"], fmt="s--", color=color(i),
                    mfc="white", capsize=2, label=f"{task} held-out τ")
    ax.set_xlabel(f"in-context examples (noise ratio {cfg.demo_noise:g})")
    ax.set_ylabel("exact match (bars 0.33 sd)")
    ax.legend(fontsize=6)
    return save_figure(fig, fig_dir / "llm_em_vs_demos", demos)


def figures(cfg: TemperatureLLMConfig, df: pd.DataFrame, fig_dir: Path) -> list[Path]:
    paths = []
    noise = df[df["part"] == "noise"]
    if not noise.empty:
        paths.append(_fig_em_vs_tau(cfg, noise, fig_dir))
        paths.append(_fig_best_tau_vs_noise(cfg, df, fig_dir))
    demos = demo_curve(cfg, df)
    if not demos.empty and demos["n_demos"].nunique() > 1:
        paths.append(_fig_em_vs_demos(cfg, demos, fig_dir))
    return paths
