"""The paper-vs-iclab table and the notes of the ``dispersion`` experiment (arXiv:2410.01104; every disagreement
and its reason is in docs/papers/dispersion.md §6). One function per group of comparison rows and per notes section.
The paper's numbers are second-hand and tagged by source (docs/papers/dispersion.md §1.2).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from iclab.experiments._contract import Comparison
from iclab.experiments.dispersion.tables import (PAPER_DELTA, PAPER_TABLE, beta_fit, poly_summary, retrieval_table,
                                                 rows, stack)
from iclab.theory.dispersion import PAPER_COEFFS, beta_active_range, beta_of_entropy, top_coefficient_bound

__all__ = ["compare", "notes"]


def compare(config, df: pd.DataFrame) -> list[Comparison]:
    """Every comparison row: max retrieval, dispersion, β(H), δ, CLRS-style."""
    tab = retrieval_table(df)
    out = _retrieval_rows(config, tab)
    if len(tab):
        out += _dispersion_rows(tab)
    out += _beta_rows(config, df) + _delta_rows(df) + _clrs_rows(config, df)
    return out


def _retrieval_rows(config, tab: pd.DataFrame) -> list[Comparison]:
    """Softmax → adaptive accuracy per test size against the paper's table."""
    out: list[Comparison] = []
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
    return out


def _dispersion_rows(tab: pd.DataFrame) -> list[Comparison]:
    """Lemma 2.1's bound on the trained head, entropy growth, and the trained alternatives at the largest n."""
    bound = top_coefficient_bound(tab["delta_sup"], tab["n"])
    out = [Comparison("Lemma 2.1: max coefficient ≤ e^δ/(e^δ+n−1) at every n (δ_sup of the trained head)",
                      "holds (theorem)", "max α: " + ", ".join(f"{a:.3g}≤{b:.3g}" for a, b in
                                                          zip(tab["max_coef"], bound)),
                      bool((tab["max_coef"] <= bound + 1e-6).all()),
                      f"δ_sup = {tab['delta_sup'].iloc[0]:.0f} of the trained head: the bound is vacuous "
                      "at these n; dispersion here comes from near-max competitors, see notes"),
           Comparison("entropy grows with n (dispersion)", "coefficients spread as n doubles",
                      ", ".join(f"{h:.2f}" for h in tab["entropy"]), bool(np.all(np.diff(tab["entropy"]) > 0)))]
    for v in ("sigmoid", "ssmax"):
        if v in tab:
            out.append(Comparison(f"{v} (trained) accuracy at n={int(tab['n'].iloc[-1])}", "— (discussed only)",
                                  f"{tab[v].iloc[-1]:.1f}% vs softmax {tab['softmax'].iloc[-1]:.1f}%", None))
    return out


def _beta_rows(config, df: pd.DataFrame) -> list[Comparison]:
    """iclab's refitted β(H) polynomial against the paper's Fig. 4 coefficients."""
    fit = beta_fit(config, df)
    if fit is None or fit["coeffs"] is None:
        return []
    c = fit["coeffs"]
    Hs = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    lo, hi = fit["range"]
    roots = beta_active_range(c)
    above = bool(np.polyval(c, 0.5 * (lo + hi)) > 1.0)
    return [Comparison("β(H) polynomial (highest degree first)", poly_summary(PAPER_COEFFS) + " [acmrep]",
                       poly_summary(c) + f" (fitted on H in [{lo:.2f}, {hi:.2f}])", None,
                       "fit target reconstructed (docs/papers/dispersion.md §4.7): β minimising the readout's "
                       "cross-entropy per entropy bin above the 0.5 gate"),
            Comparison("β at H = 1, 2, 3, 4, 5 nats", ", ".join(f"{b:.2f}" for b in beta_of_entropy(Hs)),
                       ", ".join(f"{b:.2f}" + ("" if lo <= h <= hi else " (extrap.)")
                                 for h, b in zip(Hs, beta_of_entropy(Hs, c))), None),
            Comparison("entropies where β(H) = 1 (edges of the active range, nats)", "0.85, 5.94",
                       ", ".join(f"{x:.2f}" for x in roots) or ("none: β > 1 for all H > 0.5" if above
                                                                else "none: β = 1 everywhere"), None)]


def _delta_rows(df: pd.DataFrame) -> list[Comparison]:
    """Logit spread δ of each pretrained model against Gemma's."""
    g2, g7 = PAPER_DELTA["Gemma 2B"], PAPER_DELTA["Gemma 7B"]
    return [Comparison(f"logit spread δ: {r['model']} ({int(r['tokens'])} tokens, {int(r['rows'])} rows)",
                       f"Gemma 2B {g2[2]}±{g2[3]} [{g2[0]}, {g2[1]}]; 7B {g7[2]}±{g7[3]} [PN, δ-repl]",
                       f"{r['delta_mean']:.2f}±{r['delta_sd']:.2f} [{r['delta_min']:.2f}, {r['delta_max']:.2f}]",
                       None, "different models and text; the claim is only that δ is O(10), far below float "
                       "limits, so dispersion sets in at a few hundred to thousand tokens")
            for _, r in rows(df, part="delta").iterrows()]


def _clrs_rows(config, df: pd.DataFrame) -> list[Comparison]:
    """Out-of-distribution exact match per CLRS-style task, softmax → adaptive, and the count where adaptive helps."""
    cl = rows(df, part="clrs")
    if not len(cl):
        return []
    out: list[Comparison] = []
    better = total = 0
    for task in dict.fromkeys(cl["task"]):
        ex = {a: 100 * stack(cl[(cl["task"] == task) & (cl["attention"] == a)], "exact").mean(0)
              for a in ("softmax", "adaptive_softmax")}
        sizes = np.asarray(cl["clrs_sizes"].iloc[0], float)
        ood = sizes > config.clrs_train_max
        total += 1
        better += bool(ex["adaptive_softmax"][ood].mean() > ex["softmax"][ood].mean())
        out.append(Comparison(f"CLRS-style {task}: OOD exact match softmax → adaptive",
                              "adaptive better on most of 30 CLRS-Text tasks (Gemma 2B) [PN]",
                              f"{ex['softmax'][ood].mean():.1f}% → {ex['adaptive_softmax'][ood].mean():.1f}%", None))
    out.append(Comparison("CLRS-style tasks where adaptive helps OOD", "vast majority [PN]", f"{better}/{total}", None,
                          "tiny transformer, 3 synthetic tasks: not CLRS-Text"))
    return out


def notes(config, df: pd.DataFrame) -> str:
    """Markdown notes: the max-retrieval table, dispersion vs Lemma 2.1, the β(H) fit and δ, with the reasons."""
    tab = retrieval_table(df)
    lines = ["### Max retrieval: softmax vs adaptive temperature (inference only)", ""]
    if len(tab):
        lines += _retrieval_notes(config, tab) + _dispersion_notes(tab)
    lines += _beta_notes(config, df) + _delta_notes(df)
    lines += ["Benchmarks of the streaming O(n·d)-memory implementation: `python benchmarks/bench_attention.py`.", ""]
    return "\n".join(lines)


def _retrieval_notes(config, tab: pd.DataFrame) -> list[str]:
    lines = ["| n | softmax % | adaptive % | gain | paired t-test p | sigmoid % | SSMax % | paper (2nd-hand) |",
             "|---|---|---|---|---|---|---|---|"]
    for _, r in tab.iterrows():
        n = int(r["n"])
        pp = PAPER_TABLE.get(n)
        ptxt = f"{pp[0]} → {pp[1]} (p={pp[2]}) [{pp[3]}]" if pp else "?"
        lines.append(f"| {n} | {r['softmax']:.1f} ± {r['softmax_sd']:.1f} | {r['adaptive']:.1f} ± "
                     f"{r['adaptive_sd']:.1f} | {r['gain']:+.2f} | {r['p_value']:.3g} | "
                     f"{r.get('sigmoid', float('nan')):.1f} | {r.get('ssmax', float('nan')):.1f} | {ptxt} |")
    return lines + ["", f"{int(tab['seeds'].iloc[0])} softmax-trained seeds, {config.eval_sets} fresh sets per size "
                    "and seed, the same sets for softmax and adaptive; the p-value is a paired t-test across seeds "
                    "(the paper's seed count is unknown). Our model is trained for %d steps at width %d (the paper's "
                    "length is unknown), so absolute OOD accuracies differ; compare the direction and size of the "
                    "gain." % (config.steps, config.d), ""]


def _dispersion_notes(tab: pd.DataFrame) -> list[str]:
    return ["### Dispersion and Lemma 2.1", "", f"The trained head's logit spread over the whole input set is "
            f"δ_sup ≈ {tab['delta_sup'].iloc[0]:.0f} (mean per-set δ {tab['delta_mean'].iloc[0]:.0f} at "
            f"n={int(tab['n'].iloc[0])}), so Lemma 2.1's bound e^δ/(e^δ+n−1) is ≈ 1 for every tested n: the "
            "model did learn large logits. It still disperses (max coefficient "
            + " → ".join(f"{x:.2f}" for x in tab["max_coef"]) + ", entropy "
            + " → ".join(f"{x:.2f}" for x in tab["entropy"]) + " nats) because priorities are continuous: "
            "as n grows, more items have priorities (hence logits) within the head's resolution of the max. "
            "The lemma explains why a *bounded* spread must disperse; our head shows dispersion before that "
            "limit is reached. The adaptive temperature raises the max coefficient to "
            + " → ".join(f"{x:.2f}" for x in tab["max_coef_adaptive"]) + ".", ""]


def _beta_notes(config, df: pd.DataFrame) -> list[str]:
    fit = beta_fit(config, df)
    if fit is None or fit["coeffs"] is None:
        return []
    return ["### β(H) fit", "", f"paper: {poly_summary(PAPER_COEFFS)}; iclab: {poly_summary(fit['coeffs'])} "
            f"fitted on H in [{fit['range'][0]:.2f}, {fit['range'][1]:.2f}] nats "
            "(weighted least squares over entropy bins above the 0.5 gate with ≥ 20 rows; target: the grid β in [1, "
            f"{config.beta_max}] minimising the trained readout's cross-entropy in that bin). The paper's own "
            "target was not recovered (docs/papers/dispersion.md §4.7), so the coefficients need not agree; the "
            "shape (hump, β ≈ 1 at low entropy) is the comparable part.", ""]


def _delta_notes(df: pd.DataFrame) -> list[str]:
    dl = rows(df, part="delta")
    if not len(dl):
        return []
    lines = ["### Logit spread δ", ""]
    for _, r in dl.iterrows():
        lines.append(f"- {r['model']}: δ = {r['delta_mean']:.2f} ± {r['delta_sd']:.2f}, range "
                     f"[{r['delta_min']:.2f}, {r['delta_max']:.2f}], per-head mean range "
                     f"[{r['delta_head_min']:.2f}, {r['delta_head_max']:.2f}] on {int(r['tokens'])} tokens of "
                     f"{r['text']} ({r['source']}).")
    return lines + ["- Paper (second-hand [PN, δ-repl]): Gemma 2B 5.69 ± 2.05 in [2.28, 14.78]; Gemma 7B 5.82 ± 2.61 "
                    "in [0.09, 32.74], on Gemma's `modules.py` source. Different models and text: only the order of "
                    "magnitude is comparable.", ""]
