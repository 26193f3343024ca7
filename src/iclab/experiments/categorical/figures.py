"""Figures of the ``categorical`` experiment (Wang et al., arXiv:2405.17248; docs/papers/categorical.md §5): accuracy
and NLL against the training-set size L and against the number of blocks (with the authors' curves), real-feature
accuracy against the linear probe, language-model perplexity, and the stationarity z statistics. Each figure is
saved as PNG with its data as CSV."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from iclab.experiments.categorical.paper_values import PAPER_BLOCKS, PAPER_L_SWEEP
from iclab.experiments.categorical.tables import mean_with_se, part_rows
from iclab.plotting import color, new_figure, save_figure, theory_vs_sim

__all__ = ["figures"]

_STATIONARITY_GROUPS = ["x_coupling", "other", "free", "W_e"]


def _model_name(model: str) -> str:
    return "GD" if model == "gd" else "trained TF"


def _l_sweep_figure(cfg, m: pd.DataFrame, fig_dir: Path) -> Path:
    """Accuracy and NLL against L, one curve per (model, kernel, blocks) of ``layers``, authors' 2-block curves."""
    fig, axes = new_figure(2, 1, width=8.4)
    i = 0
    for (model, kernel, blocks), g in m[m["blocks"].isin(cfg.layers)].groupby(["model", "kernel", "blocks"]):
        g = g.sort_values("L")
        for ax, col in zip(axes, ("acc", "nll")):
            theory_vs_sim(ax, g["L"], sim=g[col], sim_err=g[col + "_se"], i=i,
                          label=f"{_model_name(model)}, {int(blocks)} block(s), {kernel}")
        i += 1
    Ls = sorted(PAPER_L_SWEEP)
    for ax, j, k, name in ((axes[0], 0, 1, "acc"), (axes[1], 2, 3, "nll")):
        ax.plot(Ls, [PAPER_L_SWEEP[L][j] for L in Ls], "--", color="0.3", label="authors: GD, 2 blocks (N=125)")
        ax.plot(Ls, [PAPER_L_SWEEP[L][k] for L in Ls], ":", color="0.3", label="authors: TF, 2 blocks (N=125)")
        ax.axhline(m[f"bayes_{name}"].mean(), color="0.6", lw=0.8, label="Bayes classifier (iclab data)")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("training contexts L")
    axes[0].set_ylabel("query top-1 accuracy")
    axes[1].set_ylabel("query NLL")
    axes[0].legend(fontsize=6)
    return save_figure(fig, fig_dir / "categorical_L_sweep.png", m)


def _blocks_figure(cfg, bl: pd.DataFrame, fig_dir: Path) -> Path:
    """Accuracy and NLL against the number of blocks at ``blocks_L`` (softmax kernel), with the authors' values."""
    fig, axes = new_figure(2, 1, width=8.4)
    for i, (model, g) in enumerate(bl.groupby("model")):
        g = g.sort_values("blocks")
        for ax, col in zip(axes, ("acc", "nll")):
            theory_vs_sim(ax, g["blocks"], sim=g[col], sim_err=g[col + "_se"], i=i,
                          label=f"iclab {_model_name(model)} (N={cfg.n_context})")
    B = sorted(PAPER_BLOCKS)
    for ax, jg, jt in ((axes[0], 0, 2), (axes[1], 1, 3)):
        ax.plot(B, [PAPER_BLOCKS[b][jg] for b in B], "--", color=color(0), label="authors GD (N=125)")
        ax.plot(B, [PAPER_BLOCKS[b][jt] for b in B], ":", color=color(1), label="authors TF (N=125)")
        ax.set_xlabel("blocks (GD steps)")
    axes[0].set_ylabel("query top-1 accuracy")
    axes[1].set_ylabel("query NLL")
    axes[0].legend(fontsize=6)
    return save_figure(fig, fig_dir / "categorical_blocks.png", bl)


def _features_figure(cfg, feat: pd.DataFrame, fig_dir: Path) -> Path:
    """Unseen-class accuracy per dataset: the linear probe and the GD model with each number of blocks."""
    m = mean_with_se(feat, ["dataset", "blocks"], ["acc"])
    fig, ax = new_figure()
    ds = sorted(m["dataset"].unique())
    blocks = sorted(m["blocks"].unique())
    w = 0.8 / len(blocks)
    for j, b in enumerate(blocks):
        g = m[m["blocks"] == b].set_index("dataset").reindex(ds)
        ax.bar(np.arange(len(ds)) + j * w, g["acc"], w, yerr=g["acc_se"], color=color(j),
               label="linear probe (per context)" if b == 0 else f"GD, {int(b)} block(s)")
    ax.axhline(1 / cfg.n_way, color="0.6", lw=0.8, label="chance")
    ax.set_xticks(np.arange(len(ds)) + 0.4 - w / 2, ds)
    ax.set_ylabel(f"{cfg.n_way}-way {cfg.shots}-shot accuracy, unseen classes")
    ax.legend(fontsize=6)
    return save_figure(fig, fig_dir / "categorical_features.png", m)


def _language_figure(lm: pd.DataFrame, fig_dir: Path) -> Path:
    """Held-out character perplexity per language model."""
    m = mean_with_se(lm, ["model"], ["perplexity"])
    fig, ax = new_figure()
    ax.bar(m["model"], m["perplexity"], yerr=m["perplexity_se"], color=[color(i) for i in range(len(m))])
    ax.set_ylabel("held-out character perplexity")
    return save_figure(fig, fig_dir / "categorical_language.png", m)


def _stationarity_figure(st: pd.DataFrame, fig_dir: Path) -> Path:
    """z per group of gradient entries, per kernel, at the random and the trained GD configuration."""
    rows = []
    for _, r in st.iterrows():
        for tag in ("init", "trained"):
            for grp in _STATIONARITY_GROUPS:
                rows.append({"kernel": r["kernel"], "state": tag, "group": grp, "z": r.get(f"{tag}_{grp}_z")})
    zt = pd.DataFrame(rows)
    fig, ax = new_figure()
    kernels = sorted(zt["kernel"].unique())
    labels = [f"{k}\n{s}" for k in kernels for s in ("init", "trained")]
    for j, grp in enumerate(_STATIONARITY_GROUPS):
        vals = [zt[(zt["kernel"] == k) & (zt["state"] == s) & (zt["group"] == grp)]["z"].mean()
                for k in kernels for s in ("init", "trained")]
        ax.bar(np.arange(len(labels)) + j * 0.2, vals, 0.2, color=color(j), label=grp)
    ax.axhline(1.0, color="0.3", ls="--", lw=0.8, label="zero expected gradient (z = 1)")
    ax.set_yscale("log")
    ax.set_xticks(np.arange(len(labels)) + 0.3, labels)
    ax.set_ylabel("|mean gradient| / standard error (RMS)")
    ax.legend(fontsize=6)
    return save_figure(fig, fig_dir / "categorical_stationarity.png", zt)


def figures(cfg, df: pd.DataFrame, fig_dir: Path) -> list[Path]:
    """Every figure whose part has rows in ``df``; the blocks figure needs more than one number of blocks."""
    fig_dir = Path(fig_dir)
    paths = []
    syn = part_rows(df, "synthetic")
    if len(syn):
        m = mean_with_se(syn, ["model", "kernel", "blocks", "L"], ["acc", "nll", "bayes_acc", "bayes_nll"])
        paths.append(_l_sweep_figure(cfg, m, fig_dir))
        bl = m[(m["kernel"] == "softmax") & (m["L"] == cfg.blocks_L)]
        if bl["blocks"].nunique() > 1:
            paths.append(_blocks_figure(cfg, bl, fig_dir))
    feat = part_rows(df, "features")
    if len(feat):
        paths.append(_features_figure(cfg, feat, fig_dir))
    lm = part_rows(df, "language")
    if len(lm):
        paths.append(_language_figure(lm, fig_dir))
    st = part_rows(df, "stationarity")
    if len(st):
        paths.append(_stationarity_figure(st, fig_dir))
    return paths
