"""Figures, paper-vs-iclab table and notes of the ``dispersion`` experiment (spec §4).

The paper's numbers (spec §4.2, §4.4) are all second-hand: [PN] is an LLM-written summary of the ICML version,
[keras] a third-party implementation's docstring (maybe from arXiv v1), [δ-repl] a replication script. They are
marked as such in every table.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from iclab.experiments import Comparison
from iclab.theory.dispersion import (PAPER_COEFFS, beta_active_range, beta_of_entropy, best_beta_per_bin,
                                     fit_beta_polynomial, top_coefficient_bound)

__all__ = ["figures", "compare", "notes", "PAPER_TABLE", "PAPER_DELTA", "retrieval_table", "beta_fit"]

# n: (softmax %, adaptive %, p-value or None, source tag) — spec §4.2, all second-hand
PAPER_TABLE = {16: (98.6, 98.6, 0.4, "PN"), 64: (94.3, 94.5, 0.002, "PN"), 256: (81.3, 82.1, 2e-4, "PN"),
               512: (70.1, 72.5, None, "keras"), 1024: (53.8, 57.7, 1e-4, "PN, keras"),
               2048: (35.7, 39.4, None, "keras"), 4096: (22.6, 24.9, 0.02, "PN"), 16384: (12.4, 14.0, 4e-3, "PN")}
PAPER_DELTA = {"Gemma 2B": (2.28, 14.78, 5.69, 2.05), "Gemma 7B": (0.09, 32.74, 5.82, 2.61)}  # [PN; δ-repl]


def _rows(df: pd.DataFrame, **eq) -> pd.DataFrame:
    sel = df
    for k, v in eq.items():
        if k not in sel.columns:
            return sel.iloc[0:0]
        sel = sel[sel[k] == v]
    return sel


def _stack(rows: pd.DataFrame, col: str) -> np.ndarray:
    return np.array([np.asarray(v, float) for v in rows[col]]) if len(rows) else np.zeros((0, 0))


def retrieval_table(df: pd.DataFrame) -> pd.DataFrame:
    """Per test size: mean/sd accuracy (%) of softmax, adaptive (paired, same sets), sigmoid, ssmax; paired t-test."""
    from scipy import stats

    soft = _rows(df, kind="retrieval", normaliser="softmax")
    if not len(soft):
        return pd.DataFrame()
    sizes = np.asarray(soft["test_sizes"].iloc[0], float).astype(int)
    a, b = 100 * _stack(soft, "acc"), 100 * _stack(soft, "acc_adaptive")
    out = {"n": sizes, "softmax": a.mean(0), "softmax_sd": a.std(0, ddof=1) if len(a) > 1 else np.zeros(len(sizes)),
           "adaptive": b.mean(0), "adaptive_sd": b.std(0, ddof=1) if len(b) > 1 else np.zeros(len(sizes)),
           "gain": (b - a).mean(0), "seeds": np.full(len(sizes), len(a))}
    p = np.full(len(sizes), np.nan)
    if len(a) > 1:
        with np.errstate(all="ignore"):
            for j in range(len(sizes)):
                d = b[:, j] - a[:, j]
                p[j] = 1.0 if np.allclose(d, 0) else stats.ttest_rel(b[:, j], a[:, j]).pvalue
    out["p_value"] = p
    for v in ("sigmoid", "ssmax"):
        r = _rows(df, kind="retrieval", normaliser=v)
        if len(r):
            acc = 100 * _stack(r, "acc")
            out[v], out[v + "_sd"] = acc.mean(0), (acc.std(0, ddof=1) if len(acc) > 1 else np.zeros(len(sizes)))
    for k in ("max_coef", "max_coef_adaptive", "entropy", "entropy_adaptive", "delta_mean", "delta_max",
              "min_coef_n", "mass_on_max", "mass_on_max_adaptive"):
        out[k] = _stack(soft, k).mean(0)
    out["delta_sup"] = np.full(len(sizes), float(np.max(soft["delta_sup"])))
    return pd.DataFrame(out)


def beta_fit(config, df: pd.DataFrame) -> dict | None:
    """Pool the fit data of all softmax models; β*(bin) = argmin summed CE over the β grid; degree-4 fit."""
    from iclab.experiments._dispersion_retrieval import beta_grid

    soft = _rows(df, kind="retrieval", normaliser="softmax")
    if not len(soft) or "fit_loss" not in soft.columns:
        return None
    grid = beta_grid(config)
    nb = int(soft["fit_n_bins"].iloc[0])
    loss = sum(np.asarray(v, float).reshape(nb, len(grid)) for v in soft["fit_loss"])
    counts = sum(np.asarray(v, float) for v in soft["fit_counts"])
    centres = (np.arange(nb) + 0.5) * config.entropy_bin
    best = best_beta_per_bin(loss, counts, grid)
    # only bins above the gate (the polynomial is never used at H <= 0.5; there sharpening a correct head always
    # lowers the loss, so the best grid β is the grid's edge) with enough rows
    use = (counts >= max(20, 0.001 * counts.sum())) & (centres > 0.5)
    coeffs = fit_beta_polynomial(centres[use], best[use], counts[use]) if use.sum() >= 5 else None
    rng = (float(centres[use].min() - config.entropy_bin / 2), float(centres[use].max() + config.entropy_bin / 2)) \
        if use.any() else (float("nan"), float("nan"))
    return {"centres": centres, "best": best, "counts": counts, "use": use, "coeffs": coeffs, "grid": grid,
            "range": rng}


def _poly_summary(coeffs) -> str:
    return "[" + ", ".join(f"{c:.3g}" for c in coeffs) + "]"


def figures(config, df: pd.DataFrame, fig_dir) -> list:
    from iclab.plotting import new_figure, save_figure, theory_vs_sim

    paths = []
    tab = retrieval_table(df)
    if len(tab):
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
        paths.append(save_figure(fig, fig_dir / "retrieval_accuracy", tab))

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
        paths.append(save_figure(fig, fig_dir / "retrieval_dispersion", tab))

    fit = beta_fit(config, df)
    if fit is not None:
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
        paths.append(save_figure(fig, fig_dir / "beta_fit", data))

    dl = _rows(df, kind="delta")
    if len(dl):
        from iclab.experiments._dispersion_llm import DELTA_BINS

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
        paths.append(save_figure(fig, fig_dir / "logit_spread", data))

    cl = _rows(df, kind="clrs")
    if len(cl):
        tasks = list(dict.fromkeys(cl["task"]))
        fig, axes = new_figure(len(tasks), 1, width=3.6)
        axes = np.atleast_1d(axes)
        rows = []
        for ax, task in zip(axes, tasks):
            for i, att in enumerate(("softmax", "adaptive_softmax")):
                r = cl[(cl["task"] == task) & (cl["attention"] == att)]
                if not len(r):
                    continue
                ex = 100 * _stack(r, "exact")
                n = np.asarray(r["clrs_sizes"].iloc[0], float)
                theory_vs_sim(ax, n, sim=ex.mean(0), sim_err=ex.std(0) if len(ex) > 1 else None, label=att, i=i)
                rows += [{"task": task, "attention": att, "n": nn, "exact": e} for nn, e in zip(n, ex.mean(0))]
            ax.axvline(config.clrs_train_max, color="0.6", ls=":")
            ax.set(xscale="log", xlabel="length n", ylabel="exact match (%)", title=task)
            ax.legend()
        paths.append(save_figure(fig, fig_dir / "clrs_size_generalisation", pd.DataFrame(rows)))
    return paths


def compare(config, df: pd.DataFrame) -> list[Comparison]:
    out: list[Comparison] = []
    tab = retrieval_table(df)
    for _, r in tab.iterrows():
        n = int(r["n"])
        ps, pa, pp, src = PAPER_TABLE.get(n, (None, None, None, ""))
        ptxt = lambda x: "nan" if not math.isfinite(x) else f"{x:.2g}"  # noqa: E731
        paper = "?" if ps is None else f"{ps:.1f} → {pa:.1f} (p={pp if pp is not None else '?'}) [{src}]"
        meas = (f"{r['softmax']:.1f}±{r['softmax_sd']:.1f} → {r['adaptive']:.1f}±{r['adaptive_sd']:.1f} "
                f"(gain {r['gain']:+.2f}, p={ptxt(r['p_value'])}, {int(r['seeds'])} seeds)")
        ok = None
        if n == config.train_max:
            ok = ps is None or abs(r["softmax"] - ps) <= 3.0
        elif n > config.train_max:
            ok = bool(r["gain"] >= 0)
        note = ("tolerance: at the training size, softmax accuracy within 3 points; beyond it, adaptive ≥ softmax "
                "(the sign of the gain, not its size: model and training length differ from the paper's)"
                if not out else "")
        out.append(Comparison(f"max retrieval acc. softmax → adaptive, n={n}", paper, meas, ok, note))
    if len(tab):
        bound = top_coefficient_bound(tab["delta_sup"], tab["n"])
        out.append(Comparison("Lemma 2.1: max coefficient ≤ e^δ/(e^δ+n−1) at every n (δ_sup of the trained head)",
                              "holds (theorem)", "max α: " + ", ".join(f"{a:.3g}≤{b:.3g}" for a, b in
                                                                  zip(tab["max_coef"], bound)),
                              bool((tab["max_coef"] <= bound + 1e-6).all()),
                              f"δ_sup = {tab['delta_sup'].iloc[0]:.0f} of the trained head: the bound is vacuous "
                              "at these n; dispersion here comes from near-max competitors, see notes"))
        out.append(Comparison("entropy grows with n (dispersion)", "coefficients spread as n doubles",
                              ", ".join(f"{h:.2f}" for h in tab["entropy"]),
                              bool(np.all(np.diff(tab["entropy"]) > 0))))
        for v in ("sigmoid", "ssmax"):
            if v in tab:
                out.append(Comparison(f"{v} (trained) accuracy at n={int(tab['n'].iloc[-1])}", "— (discussed only)",
                                      f"{tab[v].iloc[-1]:.1f}% vs softmax {tab['softmax'].iloc[-1]:.1f}%", None))
    fit = beta_fit(config, df)
    if fit is not None and fit["coeffs"] is not None:
        c = fit["coeffs"]
        Hs = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
        lo, hi = fit["range"]
        out.append(Comparison("β(H) polynomial (highest degree first)", _poly_summary(PAPER_COEFFS) + " [acmrep]",
                              _poly_summary(c) + f" (fitted on H in [{lo:.2f}, {hi:.2f}])", None,
                              "fit target reconstructed (spec §5.3): β minimising the readout's cross-entropy per "
                              "entropy bin above the 0.5 gate"))
        out.append(Comparison("β at H = 1, 2, 3, 4, 5 nats", ", ".join(f"{b:.2f}" for b in beta_of_entropy(Hs)),
                              ", ".join(f"{b:.2f}" + ("" if lo <= h <= hi else " (extrap.)")
                                        for h, b in zip(Hs, beta_of_entropy(Hs, c))), None))
        roots = beta_active_range(c)
        above = bool(np.polyval(c, 0.5 * (lo + hi)) > 1.0)
        out.append(Comparison("entropies where β(H) = 1 (edges of the active range, nats)", "0.85, 5.94",
                              ", ".join(f"{x:.2f}" for x in roots) or ("none: β > 1 for all H > 0.5" if above
                                                                       else "none: β = 1 everywhere"), None))
    for _, r in _rows(df, kind="delta").iterrows():
        g2, g7 = PAPER_DELTA["Gemma 2B"], PAPER_DELTA["Gemma 7B"]
        out.append(Comparison(f"logit spread δ: {r['model']} ({int(r['tokens'])} tokens, {int(r['rows'])} rows)",
                              f"Gemma 2B {g2[2]}±{g2[3]} [{g2[0]}, {g2[1]}]; 7B {g7[2]}±{g7[3]} [PN, δ-repl]",
                              f"{r['delta_mean']:.2f}±{r['delta_sd']:.2f} [{r['delta_min']:.2f}, {r['delta_max']:.2f}]",
                              None, "different models and text; the claim is only that δ is O(10), far below float "
                              "limits, so dispersion sets in at a few hundred to thousand tokens"))
    cl = _rows(df, kind="clrs")
    if len(cl):
        better = total = 0
        for task in dict.fromkeys(cl["task"]):
            ex = {a: 100 * _stack(cl[(cl["task"] == task) & (cl["attention"] == a)], "exact").mean(0)
                  for a in ("softmax", "adaptive_softmax")}
            sizes = np.asarray(cl["clrs_sizes"].iloc[0], float)
            ood = sizes > config.clrs_train_max
            total += 1
            better += bool(ex["adaptive_softmax"][ood].mean() > ex["softmax"][ood].mean())
            out.append(Comparison(f"CLRS-style {task}: OOD exact match softmax → adaptive",
                                  "adaptive better on most of 30 CLRS-Text tasks (Gemma 2B) [PN]",
                                  f"{ex['softmax'][ood].mean():.1f}% → {ex['adaptive_softmax'][ood].mean():.1f}%",
                                  None))
        out.append(Comparison("CLRS-style tasks where adaptive helps OOD", "vast majority [PN]",
                              f"{better}/{total}", None, "tiny transformer, 3 synthetic tasks: not CLRS-Text"))
    return out


def notes(config, df: pd.DataFrame) -> str:
    lines = ["### Max retrieval: softmax vs adaptive temperature (inference only)", ""]
    tab = retrieval_table(df)
    if len(tab):
        lines += ["| n | softmax % | adaptive % | gain | paired t-test p | sigmoid % | SSMax % | paper (2nd-hand) |",
                  "|---|---|---|---|---|---|---|---|"]
        for _, r in tab.iterrows():
            n = int(r["n"])
            pp = PAPER_TABLE.get(n)
            ptxt = f"{pp[0]} → {pp[1]} (p={pp[2]}) [{pp[3]}]" if pp else "?"
            lines.append(f"| {n} | {r['softmax']:.1f} ± {r['softmax_sd']:.1f} | {r['adaptive']:.1f} ± "
                         f"{r['adaptive_sd']:.1f} | {r['gain']:+.2f} | {r['p_value']:.3g} | "
                         f"{r.get('sigmoid', float('nan')):.1f} | {r.get('ssmax', float('nan')):.1f} | {ptxt} |")
        lines += ["", f"{int(tab['seeds'].iloc[0])} softmax-trained seeds, {config.eval_sets} fresh sets per size and "
                  "seed, the same sets for softmax and adaptive; the p-value is a paired t-test across seeds (the "
                  "paper's seed count is unknown). Our model is trained for %d steps at width %d (the paper's "
                  "length is unknown), so absolute OOD accuracies differ; compare the direction and size of the gain."
                  % (config.steps, config.d), ""]
    if len(tab):
        lines += ["### Dispersion and Lemma 2.1", "", f"The trained head's logit spread over the whole input set is "
                  f"δ_sup ≈ {tab['delta_sup'].iloc[0]:.0f} (mean per-set δ {tab['delta_mean'].iloc[0]:.0f} at "
                  f"n={int(tab['n'].iloc[0])}), so Lemma 2.1's bound e^δ/(e^δ+n−1) is ≈ 1 for every tested n: the "
                  "model did learn large logits. It still disperses (max coefficient "
                  + " → ".join(f"{x:.2f}" for x in tab["max_coef"]) + ", entropy "
                  + " → ".join(f"{x:.2f}" for x in tab["entropy"]) + " nats) because priorities are continuous: "
                  "as n grows, more items have priorities (hence logits) within the head's resolution of the max. "
                  "The lemma explains why a *bounded* spread must disperse; our head shows dispersion before that "
                  "limit is reached. The adaptive temperature raises the max coefficient to "
                  + " → ".join(f"{x:.2f}" for x in tab["max_coef_adaptive"]) + ".", ""]
    fit = beta_fit(config, df)
    if fit is not None and fit["coeffs"] is not None:
        lines += ["### β(H) fit", "", f"paper: {_poly_summary(PAPER_COEFFS)}; iclab: {_poly_summary(fit['coeffs'])} "
                  f"fitted on H in [{fit['range'][0]:.2f}, {fit['range'][1]:.2f}] nats "
                  "(weighted least squares over entropy bins above the 0.5 gate with ≥ 20 rows; target: the grid β in [1, "
                  f"{config.beta_max}] minimising the trained readout's cross-entropy in that bin). The paper's own "
                  "target was not recovered (spec §5.3), so the coefficients need not agree; the shape (hump, "
                  "β ≈ 1 at low entropy) is the comparable part.", ""]
    dl = _rows(df, kind="delta")
    if len(dl):
        lines += ["### Logit spread δ", ""]
        for _, r in dl.iterrows():
            lines.append(f"- {r['model']}: δ = {r['delta_mean']:.2f} ± {r['delta_sd']:.2f}, range "
                         f"[{r['delta_min']:.2f}, {r['delta_max']:.2f}], per-head mean range "
                         f"[{r['delta_head_min']:.2f}, {r['delta_head_max']:.2f}] on {int(r['tokens'])} tokens of "
                         f"{r['text']} ({r['source']}).")
        lines += ["- Paper (second-hand [PN, δ-repl]): Gemma 2B 5.69 ± 2.05 in [2.28, 14.78]; Gemma 7B 5.82 ± 2.61 "
                  "in [0.09, 32.74], on Gemma's `modules.py` source. Different models and text: only the order of "
                  "magnitude is comparable.", ""]
    lines += ["Benchmarks of the streaming O(n·d)-memory implementation: `python benchmarks/bench_attention.py`.", ""]
    return "\n".join(lines)
