"""The figure of ``scaling-rules``: retrieval accuracy against context length, one line per rule, one panel per
model (pooled over the run's tasks; error bars: SE across prompts)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from iclab.experiments.scaling.config import STOCK, ScalingConfig
from iclab.experiments.scaling.tables import accuracy_table, prompt_rows
from iclab.plotting import MARKERS, color, new_figure, save_figure

__all__ = ["figures"]


def figures(cfg: ScalingConfig, results: pd.DataFrame, figure_dir: Path) -> list[Path]:
    table = accuracy_table(prompt_rows(results))
    if not len(table):
        return []
    models = list(dict.fromkeys(table["model"]))
    fig, axes = new_figure(ncols=len(models))
    for ax, model in zip([axes] if len(models) == 1 else axes, models):
        for i, rule in enumerate((STOCK, *cfg.rules)):
            r = table[(table["model"] == model) & (table["rule"] == rule)].sort_values("tokens")
            ax.errorbar(
                r["tokens"],
                r["accuracy"],
                yerr=r["se"],
                marker=MARKERS[i % len(MARKERS)],
                color=color(i),
                label=rule,
                linestyle="-" if rule == STOCK else "--",
                capsize=2,
            )
        ax.set(xscale="log", xlabel="context tokens", ylabel="exact match", ylim=(-0.05, 1.05), title=model)
        ax.legend(fontsize=7)
    return [save_figure(fig, Path(figure_dir) / "accuracy_vs_length.png", table)]
