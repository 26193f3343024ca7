"""Figures of the ``dispersion`` experiment (arXiv:2410.01104; docs/papers/dispersion.md §5): max-retrieval accuracy
against the paper's table, dispersion against Lemma 2.1, the trained heads' weights against the spread sharpness needs
(Prop. 3.1), the β(H) refit against the paper's Fig. 4 polynomial, the Fig. 4 code itself, the logit spread of
pretrained models against Gemma's, the CLRS-style size generalisation (three arms) and the dispersion of real
transformers' heads as the context grows (Thm 2.2). One function per figure; each returns the PNG path (a CSV of its
data beside it) or None when the results lack its part.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from iclab.experiments.dispersion.config import DELTA_BINS
from iclab.experiments.dispersion.tables import (
    PAPER_DELTA,
    PAPER_TABLE,
    beta_fit,
    global_heads,
    real_tables,
    retrieval_seeds,
    retrieval_table,
    rows,
    stack,
)
from iclab.experiments._plot import ci_err, curve, panel, paper_values
from iclab.plotting import color, log_ticks, new_figure, save_figure, theory_vs_sim
from iclab.theory.dispersion import beta_of_entropy, required_spread, top_coefficient_bound

__all__ = ["figures"]


def figures(config, df: pd.DataFrame, fig_dir: Path) -> list:
    """Every figure the results allow, in report order."""
    tab = retrieval_table(df)
    paths = []
    if len(tab):
        paths += [
            _retrieval_accuracy(config, tab, fig_dir),
            _retrieval_dispersion(tab, fig_dir),
            _weight_spread(config, df, tab, fig_dir),
        ]
    paths += [
        _beta_fit(config, df, fig_dir),
        _adaptive_fig4(fig_dir),
        _logit_spread(df, fig_dir),
        _lookup(df, fig_dir),
        _clrs(config, df, fig_dir),
        _real_dispersion(df, fig_dir),
    ]
    return [p for p in paths if p is not None]


def _lookup(df: pd.DataFrame, fig_dir: Path) -> Path | None:
    """Key–value lookup accuracy vs list length for each real LM, softmax and adaptive (95% CI of the difference)."""
    from iclab.experiments.dispersion.lookup import lookup_summary

    lk = rows(df, part="lookup")
    if not len(lk):
        return None
    tab = lookup_summary(lk)
    tasks = list(dict.fromkeys(tab["task"]))
    fig, axes = new_figure(ncols=len(tasks), width=4.4 * len(tasks), height=3.8)
    for ax, task in zip(np.atleast_1d(axes), tasks):
        for i, (m, g) in enumerate(tab[tab["task"] == task].groupby("model")):
            ax.plot(g["tokens"], g["softmax"], "o-", color=color(i), label=f"{m} softmax")
            err = ci_err(g, "diff", "diff_lo", "diff_hi")
            label = f"{m} adaptive (bars: CI of the difference)"
            curve(ax, g["tokens"], g["adaptive"], err, i=i, fmt="s--", mfc="white", label=label)
        panel(
            ax,
            xscale="log",
            xlabel="prompt length (tokens)",
            ylabel="exact match",
            ylim=(-0.03, 1.03),
            title={"kv": "Key–value lookup", "passkey": "Pass-key retrieval"}[task] + " on real LMs",
            legend=6,
        )
    return save_figure(fig, fig_dir / "lookup_accuracy", tab)


def _retrieval_accuracy(config, tab: pd.DataFrame, fig_dir: Path) -> Path:
    """Accuracy vs items n for every normaliser, with the paper's (second-hand) softmax and adaptive curves."""
    fig, ax = new_figure(width=5.2, height=3.8)
    for i, (col, label) in enumerate(
        (
            ("softmax", "softmax"),
            ("adaptive", "adaptive θ (inference)"),
            ("sigmoid", "sigmoid (trained)"),
            ("ssmax", "SSMax (trained)"),
        )
    ):
        if col in tab:
            theory_vs_sim(ax, tab["n"], sim=tab[col], sim_err=tab[col + "_sd"], label=label, i=i)
    paper_values(ax, PAPER_TABLE, col=0, fmt="--", color="0.5", lw=1, label="paper softmax (2nd-hand)")
    paper_values(ax, PAPER_TABLE, col=1, fmt=":", color="0.2", lw=1, label="paper adaptive (2nd-hand)")
    panel(
        ax,
        xscale="log",
        xlabel="items n (trained at ≤ %d)" % config.train_max,
        ylabel="accuracy (%)",
        title="Max retrieval out of distribution",
        legend=True,
    )
    return save_figure(fig, fig_dir / "retrieval_accuracy", tab)


def _retrieval_dispersion(tab: pd.DataFrame, fig_dir: Path) -> Path:
    """Max coefficient against Lemma 2.1's top-item bound, and entropy against ln n, softmax vs adaptive."""
    fig, axes = new_figure(2, 1, width=4.4)
    n = tab["n"].to_numpy(float)
    theory_vs_sim(
        axes[0],
        n,
        theory=top_coefficient_bound(tab["delta_sup"], n),
        sim=tab["max_coef"],
        label="softmax max coef.; bound e^δ/(e^δ+n−1)",
        i=0,
    )
    theory_vs_sim(axes[0], n, sim=tab["max_coef_adaptive"], label="adaptive max coef.", i=1)
    axes[0].plot(n, 1 / n, ":", color="0.4", label="1/n")
    panel(
        axes[0],
        xscale="log",
        yscale="log",
        xlabel="items n",
        ylabel="max coefficient",
        title="Lemma 2.1 (δ_sup = %.1f)" % tab["delta_sup"].iloc[0],
        legend=True,
    )
    theory_vs_sim(axes[1], n, theory=np.log(n), sim=tab["entropy"], label="softmax entropy; ln n", i=0)
    theory_vs_sim(axes[1], n, sim=tab["entropy_adaptive"], label="adaptive entropy", i=1)
    panel(axes[1], xscale="log", xlabel="items n", ylabel="entropy (nats)", title="Dispersion", legend=True)
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
    ax.scatter(
        fit["centres"][u],
        fit["best"][u],
        s=8 + 40 * np.sqrt(fit["counts"][u] / fit["counts"].max()),
        color="#0072B2",
        label="best β per entropy bin",
    )
    ax.axvspan(*fit["range"], color="0.93", label="fitted entropy range")
    panel(
        ax,
        xlabel="entropy H of the trained head (nats)",
        ylabel="β = 1/θ",
        title="Fitting β(H)",
        ylim=(0, max(6.0, config.beta_max + 0.5)),
        legend=True,
    )
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
        ax.plot(
            centres,
            dens,
            "-",
            color=["#0072B2", "#D55E00", "#009E73"][i % 3],
            label=f"{r['model']}: {r['delta_mean']:.1f} ± {r['delta_sd']:.1f}",
        )
        data[r["model"]] = dens
    g = PAPER_DELTA["Gemma 2B"]
    ax.axvspan(g[2] - g[3], g[2] + g[3], color="0.85", label="Gemma 2B 5.69 ± 2.05 (2nd-hand)")
    panel(
        ax,
        xlabel="logit spread δ per (layer, head, row)",
        ylabel="density",
        title="δ of pretrained models",
        legend=True,
    )
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
        for i, (att, col, label) in enumerate(
            (
                ("softmax", "exact", "softmax"),
                ("adaptive_softmax", "exact", "adaptive (trained)"),
                ("softmax", "exact_inference_adaptive", "adaptive (inference only)"),
            )
        ):
            r = cl[(cl["task"] == task) & (cl["attention"] == att)]
            if not len(r) or col not in r.columns or r[col].isna().any():
                continue
            ex = 100 * stack(r, col)
            n = np.asarray(r["clrs_sizes"].iloc[0], float)
            theory_vs_sim(ax, n, sim=ex.mean(0), sim_err=ex.std(0) if len(ex) > 1 else None, label=label, i=i)
            data += [{"task": task, "arm": label, "n": nn, "exact": e} for nn, e in zip(n, ex.mean(0))]
        ax.axvline(config.clrs_train_max, color="0.6", ls=":")
        panel(ax, xlabel="length n", ylabel="exact match (%)", title=task, legend=True)
        log_ticks(ax, config.clrs_test_sizes)
    return save_figure(fig, fig_dir / "clrs_size_generalisation", pd.DataFrame(data))


def _weight_spread(config, df: pd.DataFrame, tab: pd.DataFrame, fig_dir: Path) -> Path | None:
    """Prop. 3.1 on the trained heads: the spread sharpness needs at each test size against the spread the weights
    allow, the one the head realises over the input set (δ_sup) and the mean per-set spread."""
    s = retrieval_seeds(df)
    if s is None or not np.isfinite(s["allowed_spread"]).any():
        return None
    n = tab["n"].to_numpy(float)
    fig, ax = new_figure(width=5.2, height=3.8)
    for i, eps in enumerate((config.sharp_eps, 0.5)):
        ax.plot(n, required_spread(n, eps), "-", color=color(i), label=f"needed for α_max ≥ {1 - eps:g} (Lemma 2.1)")
    for j, (key, label) in enumerate(
        (("allowed_spread", "allowed by the weights (Prop. 3.1)"), ("delta_sup", "δ_sup realised over the input set"))
    ):
        for k, v in enumerate(s[key]):
            ax.axhline(v, color=color(2 + j), ls="--" if j == 0 else ":", lw=1, label=label if k == 0 else None)
    ax.plot(n, tab["delta_mean"], "o", color=color(4), label="mean δ of a test set")
    panel(
        ax,
        xscale="log",
        yscale="log",
        xlabel="items n",
        ylabel="logit spread δ",
        title="Trained heads: spread needed vs available",
        legend=7,
    )
    data = pd.DataFrame(
        {
            "n": n,
            "needed_eps": required_spread(n, config.sharp_eps),
            "needed_half": required_spread(n, 0.5),
            "delta_mean": tab["delta_mean"],
            "allowed_mean": float(np.nanmean(s["allowed_spread"])),
            "delta_sup_mean": float(np.mean(s["delta_sup"])),
        }
    )
    return save_figure(fig, fig_dir / "weight_spread", data)


def _adaptive_fig4(fig_dir: Path) -> Path:
    """The Fig. 4 code made visible: the β that ``adaptive_softmax`` applies against max(P(H), 1), and H after."""
    from iclab.experiments.dispersion.adaptive_check import SIZES, fig4_rows

    d = fig4_rows()
    fig, axes = new_figure(2, 1, width=4.4)
    H = np.linspace(0, d["H"].max(), 300)
    axes[0].plot(H, beta_of_entropy(H), "-", color="0.3", label="max(P(H), 1), H > 0.5 (Fig. 4)")
    axes[1].plot(H, H, "-", color="0.3", label="unchanged")
    for i, n in enumerate(SIZES):
        r = d[d["n"] == n]
        axes[0].plot(r["H"], r["beta_applied"], "o", ms=3, color=color(i), label=f"adaptive_softmax, n = {n}")
        axes[1].plot(r["H"], r["H_after"], "o", ms=3, color=color(i), label=f"n = {n}")
    panel(axes[0], xlabel="entropy H of softmax(e) (nats)", ylabel="β applied", title="Fig. 4: β(H)", legend=7)
    panel(axes[1], xlabel="entropy before (nats)", ylabel="entropy after (nats)", title="Fig. 4: sharpening", legend=7)
    return save_figure(fig, fig_dir / "adaptive_temperature_fig4", d)


def _real_dispersion(df: pd.DataFrame, fig_dir: Path) -> Path | None:
    """Largest attention coefficient vs context length per layer of each real model (global layers solid), with
    1/n and the Lemma 2.1 bound of the median global head's measured δ; below, δ per layer."""
    tabs = {m: t for m, t in real_tables(df).items() if "reason" not in t}
    if not tabs:
        return None
    fig, axes = new_figure(len(tabs), 2, width=4.4, height=3.4)
    axes = np.asarray(axes).reshape(2, len(tabs))
    data = []
    for c, (m, t) in enumerate(tabs.items()):
        n, g = t["n"], global_heads(t)
        mc = t["max_coef"].mean((0, 2))  # (L, S): mean over segments and heads
        dl = t["delta"].mean((0, 2))
        L = len(mc)
        for layer in range(L):
            shade = _layer_colour(layer / max(L - 1, 1))
            ls = "-" if g[layer] else "--"
            axes[0, c].plot(n, mc[layer], ls, color=shade, lw=1)
            axes[1, c].plot(n, dl[layer], ls, color=shade, lw=1)
            data += [
                {"model": m, "layer": layer, "global": bool(g[layer]), "n": nn, "max_coef": a, "delta": d}
                for nn, a, d in zip(n, mc[layer], dl[layer])
            ]
        med = np.median(t["delta"][:, g].reshape(-1, len(n)), 0)  # (S,) δ of the median global head row mean
        axes[0, c].plot(n, top_coefficient_bound(med, n), "k:", lw=1.5, label="Lemma 2.1 bound, median δ")
        axes[0, c].plot(n, mc[g].mean(0)[0] * n[0] / n, color="0.5", lw=1.5, label="∝ 1/n")
        panel(
            axes[0, c],
            yscale="log",
            xlabel="context n (tokens)",
            ylabel="largest coefficient",
            title=f"{m}: layers light → dark" + ("" if g.all() else ", local dashed"),
            legend=7,
        )
        panel(axes[1, c], xlabel="context n (tokens)", ylabel="mean logit spread δ", title=f"{m}: δ")
        for ax in axes[:, c]:
            log_ticks(ax, n)
    return save_figure(fig, fig_dir / "real_dispersion", pd.DataFrame(data))


def _layer_colour(x: float):
    """A colour from light to dark blue for layer ``x`` in [0, 1]."""
    import matplotlib

    return matplotlib.colormaps["Blues"](0.3 + 0.7 * x)
