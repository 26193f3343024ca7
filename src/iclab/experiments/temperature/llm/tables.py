"""Summaries over repeats of ``temperature-llm`` (arXiv:2511.01292 §5.2, Fig. 3; docs/papers/temperature.md §5.4),
shared by its figures and comparisons. Error bars are 0.33 sd over repeats, the paper's convention."""

from __future__ import annotations

import numpy as np
import pandas as pd

from iclab.hf import best_tau_index

__all__ = ["sd033", "noise_table", "demo_curve"]


def sd033(x) -> float:
    """0.33 × the sample standard deviation (0 for a single value)."""
    x = np.asarray(x, dtype=float)
    return 0.33 * float(x.std(ddof=1)) if len(x) > 1 else 0.0


def noise_table(cfg, df: pd.DataFrame) -> pd.DataFrame:
    """Per (task, noise ratio): mean over repeats of EM(τ=1), best-τ EM, held-out EM, moment EM, τs."""
    d = df[df["part"] == "noise"]
    rows = []
    for (task, r), g in d.groupby(["task", "noise_ratio"]):
        curve = np.array(g["em_tau"].tolist())  # (R, T)
        mean_curve = curve.mean(0)
        j = best_tau_index(cfg.taus, mean_curve)
        row = {"task": task, "noise_ratio": r, "repeats": len(g), "em_tau1": g["em_tau1"].mean(),
               "em_tau1_err": sd033(g["em_tau1"]), "best_tau": cfg.taus[j], "best_em": mean_curve[j],
               "em_heldout": g["em_heldout"].mean(), "em_heldout_err": sd033(g["em_heldout"]),
               "heldout_tau_gmean": float(np.exp(np.mean(np.log(np.array(g["heldout_taus"].tolist()))))),
               "best_tau_per_repeat_gmean": float(np.exp(np.mean(np.log([cfg.taus[best_tau_index(cfg.taus, c)] for c in curve]))))}
        for col in ("em_moment", "mean_layer_tau", "em_adaptive"):
            if col in g:
                row[col] = g[col].mean()
        rows.append(row)
    return pd.DataFrame(rows)


def demo_curve(cfg, df: pd.DataFrame) -> pd.DataFrame:
    """Per (task, #demos) at ``demo_noise``: mean EM(τ=1), held-out EM and the grid-best τ over repeats."""
    d = df[(df["noise_ratio"] == cfg.demo_noise) & ((df["part"] == "demos") | (df["n_demos"] == cfg.n_demos))]
    rows = []
    for (task, k), g in d.groupby(["task", "n_demos"]):
        rows.append({"task": task, "n_demos": k, "em_tau1": g["em_tau1"].mean(), "em_tau1_err": sd033(g["em_tau1"]),
                     "em_heldout": g["em_heldout"].mean(), "em_heldout_err": sd033(g["em_heldout"]),
                     "best_tau": cfg.taus[best_tau_index(cfg.taus, np.array(g["em_tau"].tolist()).mean(0))]})
    return pd.DataFrame(rows, columns=["task", "n_demos", "em_tau1", "em_tau1_err", "em_heldout", "em_heldout_err",
                                       "best_tau"])
