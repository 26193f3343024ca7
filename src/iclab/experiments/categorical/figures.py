"""Figures of the ``categorical`` experiment (Wang et al., arXiv:2405.17248; docs/papers/categorical.md §5): accuracy
and NLL against the training-set size L and against the number of blocks (with the authors' curves and the Bayes
ceiling over the W_e draws), the K-block GD model against K steps of functional GD (§4.8), real-feature accuracy
against the linear probe, language-model perplexity, and the stationarity z statistics. Each figure is saved as
PNG with its data as CSV."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from iclab.experiments.categorical.claims import FGD_TOL
from iclab.experiments.categorical.paper_values import PAPER_BLOCKS, PAPER_L_SWEEP
from iclab.claims import part_rows
from iclab.experiments.categorical.tables import mean_with_se
from iclab.experiments._plot import curve, panel, paper_values
from iclab.plotting import MARKERS, color, new_figure, save_figure, theory_vs_sim

__all__ = ["figures"]

_STATIONARITY_GROUPS = ["x_coupling", "other", "free", "W_e"]


def _model_name(model: str, erase: str = "distance") -> str:
    if model != "gd":
        return "trained TF"
    return "GD" if erase == "distance" else "GD, authors' erase head"


def _bayes_band(ax, syn: pd.DataFrame, col: str) -> None:
    """The Bayes ceiling: mean over W_e draws as a line, the range over draws as a band."""
    per_draw = syn.groupby("embedding_seed")[col].mean()
    ax.axhline(per_draw.mean(), color="0.6", lw=0.8, label=f"Bayes classifier ({len(per_draw)} W_e draw(s))")
    if len(per_draw) > 1:
        ax.axhspan(per_draw.min(), per_draw.max(), color="0.85", alpha=0.5, lw=0)


def _authors_and_bayes(axes, syn: pd.DataFrame, paper: dict, cols, labels: tuple[str, str], xlabel: str) -> None:
    """On the (accuracy, NLL) panels: the authors' GD (dashed) and TF (dotted) curves, ``paper[x][cols[panel]]``, the
    Bayes ceiling over the W_e draws, the labels, and the legend on the accuracy panel."""
    for ax, (jg, jt), name, ylabel in zip(axes, cols, ("acc", "nll"), ("query top-1 accuracy", "query NLL")):
        paper_values(ax, paper, col=jg, fmt="--", color="0.3", label=labels[0])
        paper_values(ax, paper, col=jt, fmt=":", color="0.3", label=labels[1])
        _bayes_band(ax, syn, f"bayes_{name}")
        panel(ax, xlabel=xlabel, ylabel=ylabel)
    axes[0].legend(fontsize=6)


def _comparable(kernel: str, blocks: int) -> str:
    """Label suffix for cells the authors' model cannot be compared with (docs/papers/categorical.md §4.2a)."""
    return "" if kernel == "softmax" or blocks < 2 else " — not comparable"


def _l_sweep_figure(cfg, syn: pd.DataFrame, fig_dir: Path) -> Path:
    """Accuracy and NLL against L (mean ± SE over replicates), one curve per (model, kernel, blocks) of ``layers``,
    the authors' 2-block curves and the Bayes ceiling over the W_e draws."""
    m = mean_with_se(
        syn[(syn["erase"] == "distance") & syn["blocks"].isin(cfg.layers)],
        ["model", "kernel", "blocks", "L"],
        ["acc", "nll", "bayes_acc", "bayes_nll"],
    )
    fig, axes = new_figure(2, 1, width=8.4)
    for i, ((model, kernel, blocks), g) in enumerate(m.groupby(["model", "kernel", "blocks"])):
        g = g.sort_values("L")
        for ax, col in zip(axes, ("acc", "nll")):
            theory_vs_sim(
                ax,
                g["L"],
                sim=g[col],
                sim_err=g[col + "_se"],
                i=i,
                label=f"{_model_name(model)}, {int(blocks)} block(s), {kernel}{_comparable(kernel, blocks)}",
            )
    labels = ("authors: GD, 2 blocks (N=125)", "authors: TF, 2 blocks (N=125)")
    _authors_and_bayes(
        axes, syn, PAPER_L_SWEEP, ((0, 1), (2, 3)), labels, f"training contexts L (iclab N={cfg.n_context})"
    )
    for ax in axes:
        ax.set_xscale("log", base=2)
    return save_figure(fig, fig_dir / "categorical_L_sweep.png", m)


def _blocks_table(cfg, syn: pd.DataFrame) -> pd.DataFrame:
    """Mean ± SE per (model, erase, blocks) at ``blocks_L`` (softmax); the authors' erase head equals iclab's up
    to 2 blocks, so its curve starts from those cells."""
    bl = syn[(syn["kernel"] == "softmax") & (syn["L"] == cfg.blocks_L)]
    low = bl[(bl["model"] == "gd") & (bl["erase"] == "distance") & (bl["blocks"] <= 2)].assign(erase="dot")
    if (bl["erase"] == "dot").any():
        bl = pd.concat([bl, low])
    return mean_with_se(bl, ["model", "erase", "blocks"], ["acc", "nll", "bayes_acc", "bayes_nll"])


def _blocks_figure(cfg, syn: pd.DataFrame, fig_dir: Path) -> Path:
    """Accuracy and NLL against the number of blocks at ``blocks_L`` (softmax kernel): GD with iclab's and with the
    authors' erase head, the trained TF where run, the authors' values and the Bayes ceiling."""
    m = _blocks_table(cfg, syn)
    fig, axes = new_figure(2, 1, width=8.4)
    curves = list(m.groupby(["model", "erase"]))
    for i, ((model, erase), g) in enumerate(curves):
        g = g.sort_values("blocks")
        x = g["blocks"] + 0.06 * (i - (len(curves) - 1) / 2)  # side by side where the curves coincide
        for ax, col in zip(axes, ("acc", "nll")):
            label = f"iclab {_model_name(model, erase)} (N={cfg.n_context})"
            curve(ax, x, g[col], g[col + "_se"], i=i, fmt=MARKERS[i % len(MARKERS)] + "-", lw=0.8, label=label)
    labels = ("authors GD (N=125)", "authors TF (N=125)")
    _authors_and_bayes(axes, syn, PAPER_BLOCKS, ((0, 2), (1, 3)), labels, "blocks (GD steps)")
    return save_figure(fig, fig_dir / "categorical_blocks.png", m)


def _functional_gd_figure(cfg, syn: pd.DataFrame, fig_dir: Path) -> Path:
    """One block = one functional-GD step (docs/papers/categorical.md §4.8): per number of blocks K, the trained
    GD model's test NLL beside K steps of functional GD with the same parameters, and the total-variation distance
    between their predictions, for iclab's and the authors' erase head (softmax kernel, ``blocks_L``)."""
    gd = syn[(syn["model"] == "gd") & (syn["kernel"] == "softmax") & (syn["L"] == cfg.blocks_L)]
    m = mean_with_se(gd, ["erase", "blocks"], ["nll", "fgd_nll", "fgd_tv", "fgd_max_logit_diff"])
    fig, axes = new_figure(2, 1, width=8.4)
    for i, (erase, g) in enumerate(m.groupby("erase")):
        g = g.sort_values("blocks")
        name = _model_name("gd", erase)
        theory_vs_sim(
            axes[0],
            g["blocks"],
            theory=g["fgd_nll"],
            sim=g["nll"],
            sim_err=g["nll_se"],
            i=i,
            label=f"{name} vs K steps of functional GD",
        )
        axes[1].plot(g["blocks"], g["fgd_tv"].clip(lower=1e-17), "o-", color=color(i), label=name)
    axes[1].axhline(FGD_TOL, color="0.3", ls="--", lw=0.8, label=f"tolerance ({FGD_TOL:g})")
    xlabel = "blocks K = functional-GD steps"
    panel(axes[0], xlabel=xlabel, ylabel="test query NLL (model: markers, functional GD: line)", legend=6)
    panel(axes[1], yscale="log", xlabel=xlabel, ylabel="mean total-variation distance to functional GD", legend=6)
    return save_figure(fig, fig_dir / "categorical_functional_gd.png", m)


def _features_figure(cfg, feat: pd.DataFrame, fig_dir: Path) -> Path:
    """Unseen-class accuracy per dataset: the linear probe and the GD model with each number of blocks."""
    m = mean_with_se(feat, ["dataset", "blocks"], ["acc"])
    fig, ax = new_figure()
    ds = sorted(m["dataset"].unique())
    blocks = sorted(m["blocks"].unique())
    w = 0.8 / len(blocks)
    for j, b in enumerate(blocks):
        g = m[m["blocks"] == b].set_index("dataset").reindex(ds)
        ax.bar(
            np.arange(len(ds)) + j * w,
            g["acc"],
            w,
            yerr=g["acc_se"],
            color=color(j),
            label="linear probe (per context)" if b == 0 else f"GD, {int(b)} block(s)",
        )
    ax.axhline(1 / cfg.n_way, color="0.6", lw=0.8, label="chance")
    ax.set_xticks(np.arange(len(ds)) + 0.4 - w / 2, ds)
    panel(ax, ylabel=f"{cfg.n_way}-way {cfg.shots}-shot accuracy, unseen classes", legend=6)
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
        vals = [
            zt[(zt["kernel"] == k) & (zt["state"] == s) & (zt["group"] == grp)]["z"].mean()
            for k in kernels
            for s in ("init", "trained")
        ]
        ax.bar(np.arange(len(labels)) + j * 0.2, vals, 0.2, color=color(j), label=grp)
    ax.axhline(1.0, color="0.3", ls="--", lw=0.8, label="zero expected gradient (z = 1)")
    ax.set_xticks(np.arange(len(labels)) + 0.3, labels)
    panel(ax, yscale="log", ylabel="|mean gradient| / standard error (RMS)", legend=6)
    return save_figure(fig, fig_dir / "categorical_stationarity.png", zt)


def figures(cfg, df: pd.DataFrame, fig_dir: Path) -> list[Path]:
    """Every figure whose part has rows in ``df``; the blocks figure needs more than one number of blocks."""
    fig_dir = Path(fig_dir)
    paths = []
    syn = part_rows(df, "synthetic")
    if len(syn):
        syn = syn.assign(**{c: syn[c] if c in syn else v for c, v in (("erase", "distance"), ("embedding_seed", 42))})
        paths.append(_l_sweep_figure(cfg, syn, fig_dir))
        if syn[(syn["kernel"] == "softmax") & (syn["L"] == cfg.blocks_L)]["blocks"].nunique() > 1:
            paths.append(_blocks_figure(cfg, syn, fig_dir))
        if "fgd_tv" in syn and syn["fgd_tv"].notna().any():
            paths.append(_functional_gd_figure(cfg, syn[syn["fgd_tv"].notna()], fig_dir))
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
