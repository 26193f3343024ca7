"""The figure of ``onestep-gd``: the risk of each predictor, per seed (markers), in iclab's figure style."""

from pathlib import Path

import pandas as pd

from iclab.plotting import MARKERS, color, new_figure, save_figure

RISKS = ("risk_zero", "risk_attention", "risk_gd", "risk_ols")


def figures(config, results: pd.DataFrame, figure_dir: Path) -> list[Path]:
    rows = results[results["part"] == "risk"].sort_values("seed")
    fig, ax = new_figure()
    for i, name in enumerate(RISKS):
        ax.plot(rows["seed"], rows[name], MARKERS[i], color=color(i), label=name.removeprefix("risk_"))
    ax.set(xlabel="seed", ylabel="query squared error", yscale="log", title=f"d = {config.d}, n = {config.n}")
    ax.legend()
    return [save_figure(fig, Path(figure_dir) / "risks.png", rows[["seed", *RISKS]])]
