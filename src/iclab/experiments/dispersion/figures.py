"""Figures of the ``dispersion`` experiment (arXiv:2410.01104; docs/papers/dispersion.md §5): max-retrieval accuracy
against the paper's table, dispersion against Lemma 2.1, the β(H) refit against the paper's Fig. 4 polynomial, the
logit spread of pretrained models against Gemma's, and the CLRS-style size generalisation. One function per figure;
each returns the PNG path (a CSV of its data beside it) or None when the results lack its part.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from iclab.experiments.dispersion.config import DELTA_BINS
from iclab.experiments.dispersion.tables import PAPER_DELTA, PAPER_TABLE, beta_fit, retrieval_table, rows, stack
from iclab.plotting import new_figure, save_figure, theory_vs_sim
from iclab.theory.dispersion import beta_of_entropy, top_coefficient_bound

__all__ = ["figures"]


def figures(config, df: pd.DataFrame, fig_dir: Path) -> list:
    """Every figure the results allow, in report order."""
    tab = retrieval_table(df)
    paths = []
    if len(tab):
        paths += [_retrieval_accuracy(config, tab, fig_dir), _retrieval_dispersion(tab, fig_dir)]
    paths += [_beta_fit(config, df, fig_dir), _logit_spread(df, fig_dir), _clrs(config, df, fig_dir)]
    return [p for p in paths if p is not None]


def _retrieval_accuracy(config, tab: pd.DataFrame, fig_dir: Path) -> Path:
    """Accuracy vs items n for every normaliser, with the paper's (second-hand) softmax and adaptive curves."""
    fig, ax = new_figure(width=5.2, height=3.8)
    for i, (col, label) in enumerate((("softmax", "softmax"), ("adaptive", "adaptive θ (inference)"),
                                      ("sigmoid", "sigmoid (trained)"), ("ssmax", "SSMax (trained)"))):
        if col in tab:
            theory_vs_sim(ax, tab["n"], sim=tab[col], sim_err=tab[col + "_sd"], label=label, i=i)
    pn = sorted(PAPER_TABLE)
    ax.plot(pn, [PAPER_TABLE[n][0] for n in pn], "--", color="0.5", lw=1, label="paper softmax (2nd-hand)")
    ax.plot(pn, [PAPER_TABLE[n][1] for n in pn], ":", color="0.2", lw=1, label="paper adaptive (2nd-hand)")
    ax.set(xscale="log", xlabel="items n (trained at ≤ %d)" % config.train_max, ylabel="accuracy (%)",
           title="Max retrieval out of distribution")
    ax.legend()
    return save_figure(fig, fig_dir / "retrieval_accuracy", tab)


def _retrieval_dispersion(tab: pd.DataFrame, fig_dir: Path) -> Path:
    """Max coefficient against Lemma 2.1's top-item bound, and entropy against ln n, softmax vs adaptive."""
    fig, axes = new_figure(2, 1, width=4.4)
    n = tab["n"].to_numpy(float)
    theory_vs_sim(axes[0], n, theory=top_coefficient_bound(tab["delta_sup"], n), sim=tab["max_coef"],
                  label="softmax max coef.; bound e^δ/(e^δ+n−1)", i=0)
    theory_vs_sim(axes[0], n, sim=tab["max_coef_adaptive"], label="adaptive max coef.", i=1)
    axes[0].plot(n, 1 / n, ":", color="0.4", label="1/n")
    axes[0].set(xscale="log", yscale="log", xlabel="items n", ylabel="max coefficient",
                title="Lemma 2.1 (δ_sup = %.1f)" % tab["delta_sup"].iloc[0])
    theory_vs_sim(axes[1], n, theory=np.log(n), sim=tab["entropy"], label="softmax entropy; ln n", i=0)
    theory_vs_sim(axes[1], n, sim=tab["entropy_adaptive"], label="adaptive entropy", i=1)
    axes[1].set(xscale="log", xlabel="items n", ylabel="entropy (nats)", title="Dispersion")
    for ax in axes:
        ax.legend()
    return save_figure(fig, fig_dir / "retrieval_dispersion", tab)


def _beta_fit(config, df: pd.DataFrame, fig_dir: Path) -> Path | None:
    """Best grid β per entropy bin, iclab's degree-4 fit and the paper's polynomial."""
    fit = beta_fit(config, df)
    if fit is None:
        return None
    fig, ax = new_figure(width=5.0, height=3.6)
    u = fit["use"]
    H = np.linspace(0, max(6.5, fit["centres"][u].max() if u.any() else 6.5), 300)
    ax.plot(H, beta_of_entropy(H), "-", color="0.3", label="paper β(H) (Fig. 4 coefficients)")
    if fit["coeffs"] is not None:
        ax.plot(H, beta_of_entropy(H, fit["coeffs"]), "-", color="#D55E00", label="iclab fit, clamped ≥ 1")
    ax.scatter(fit["centres"][u], fit["best"][u], s=8 + 40 * np.sqrt(fit["counts"][u] / fit["counts"].max()),
               color="#0072B2", label="best β per entropy bin")
    ax.axvspan(*fit["range"], color="0.93", label="fitted entropy range")
    ax.set(xlabel="entropy H of the trained head (nats)", ylabel="β = 1/θ", title="Fitting β(H)",
           ylim=(0, max(6.0, config.beta_max + 0.5)))
    ax.legend()
    data = pd.DataFrame({"H": fit["centres"], "best_beta": fit["best"], "count": fit["counts"], "used": u})
    return save_figure(fig, fig_dir / "beta_fit", data)


def _logit_spread(df: pd.DataFrame, fig_dir: Path) -> Path | None:
    """Density of δ per pretrained model, with Gemma 2B's mean ± sd."""
    dl = rows(df, part="delta")
    if not len(dl):
        return None
    fig, ax = new_figure(width=5.0, height=3.6)
    centres = 0.5 * (DELTA_BINS[1:] + DELTA_BINS[:-1])
    data = {"delta": centres}
    for i, (_, r) in enumerate(dl.iterrows()):
        h = np.asarray(r["delta_hist"], float)
        dens = h / max(h.sum(), 1) / np.diff(DELTA_BINS)
        ax.plot(centres, dens, "-", color=["#0072B2", "#D55E00", "#009E73"][i % 3],
                label=f"{r['model']}: {r['delta_mean']:.1f} ± {r['delta_sd']:.1f}")
        data[r["model"]] = dens
    g = PAPER_DELTA["Gemma 2B"]
    ax.axvspan(g[2] - g[3], g[2] + g[3], color="0.85", label="Gemma 2B 5.69 ± 2.05 (2nd-hand)")
    ax.set(xlabel="logit spread δ per (layer, head, row)", ylabel="density", title="δ of pretrained models")
    ax.legend()
    return save_figure(fig, fig_dir / "logit_spread", data)


def _clrs(config, df: pd.DataFrame, fig_dir: Path) -> Path | None:
    """Exact match vs length per CLRS-style task, softmax vs adaptive temperature."""
    cl = rows(df, part="clrs")
    if not len(cl):
        return None
    tasks = list(dict.fromkeys(cl["task"]))
    fig, axes = new_figure(len(tasks), 1, width=3.6)
    axes = np.atleast_1d(axes)
    data = []
    for ax, task in zip(axes, tasks):
        for i, att in enumerate(("softmax", "adaptive_softmax")):
            r = cl[(cl["task"] == task) & (cl["attention"] == att)]
            if not len(r):
                continue
            ex = 100 * stack(r, "exact")
            n = np.asarray(r["clrs_sizes"].iloc[0], float)
            theory_vs_sim(ax, n, sim=ex.mean(0), sim_err=ex.std(0) if len(ex) > 1 else None, label=att, i=i)
            data += [{"task": task, "attention": att, "n": nn, "exact": e} for nn, e in zip(n, ex.mean(0))]
        ax.axvline(config.clrs_train_max, color="0.6", ls=":")
        ax.set(xscale="log", xlabel="length n", ylabel="exact match (%)", title=task)
        ax.legend()
    return save_figure(fig, fig_dir / "clrs_size_generalisation", pd.DataFrame(data))
