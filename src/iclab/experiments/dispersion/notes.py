"""The notes of the ``dispersion`` experiment's report (arXiv:2410.01104; every disagreement and its reason is in
docs/papers/dispersion.md §6): the measured tables behind the verdicts and what they mean, one function per section.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from iclab.experiments.dispersion.tables import (
    ONSET_N,
    PAPER_TABLE,
    beta_fit,
    clrs_ood,
    global_heads,
    loglog_slope,
    onset_delta,
    poly_summary,
    real_tables,
    retrieval_seeds,
    retrieval_table,
    rows,
)
from iclab.experiments.dispersion.lookup import lookup_summary
from iclab.theory.dispersion import PAPER_COEFFS, required_spread

__all__ = ["notes"]


def notes(config, df: pd.DataFrame) -> str:
    """Markdown notes: max retrieval, the trained head against Lemma 2.1 / Prop. 3.1, β(H), δ, CLRS-style arms, real
    transformers, the Fig. 4 code."""
    tab = retrieval_table(df)
    lines = []
    if len(tab):
        lines += _retrieval_notes(config, tab) + _dispersion_notes(config, df, tab)
    lines += (
        _beta_notes(config, df)
        + _delta_notes(df)
        + _clrs_notes(config, df)
        + _real_notes(config, df)
        + _lookup_notes(df)
        + _fig4_notes()
    )
    lines += ["Benchmarks of the streaming O(n·d)-memory implementation: `python benchmarks/bench_attention.py`.", ""]
    return "\n".join(lines)


def _retrieval_notes(config, tab: pd.DataFrame) -> list[str]:
    lines = [
        "### Max retrieval: softmax vs adaptive temperature (inference only)",
        "",
        "| n | softmax % | adaptive % | gain | paired t-test p | sigmoid % | SSMax % | paper (2nd-hand) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for _, r in tab.iterrows():
        n = int(r["n"])
        pp = PAPER_TABLE.get(n)
        ptxt = f"{pp[0]} → {pp[1]} (p={pp[2]}) [{pp[3]}]" if pp else "?"
        lines.append(
            f"| {n} | {r['softmax']:.1f} ± {r['softmax_sd']:.1f} | {r['adaptive']:.1f} ± "
            f"{r['adaptive_sd']:.1f} | {r['gain']:+.2f} | {r['p_value']:.3g} | "
            f"{r.get('sigmoid', float('nan')):.1f} | {r.get('ssmax', float('nan')):.1f} | {ptxt} |"
        )
    return lines + [
        "",
        f"{int(tab['seeds'].iloc[0])} softmax-trained seeds (± sd over seeds), {config.eval_sets} "
        "fresh sets per size and seed, the same sets for softmax and adaptive; the verdicts use the paired "
        "gain per seed with Student's t (the paper's seed count is unknown). The model is trained for "
        f"{config.steps} steps at width {config.d} (the paper's length is unknown). Sigmoid and SSMax "
        "are discussed by the paper without numbers: no claim.",
        "",
    ]


def _dispersion_notes(config, df: pd.DataFrame, tab: pd.DataFrame) -> list[str]:
    s = retrieval_seeds(df)
    n = tab["n"].to_numpy(float)
    need = required_spread(n, config.sharp_eps)
    lines = [
        "### The trained head against Lemma 2.1 and Prop. 3.1",
        "",
        "Max coefficient "
        + " → ".join(f"{x:.2f}" for x in tab["max_coef"])
        + ", entropy "
        + " → ".join(f"{x:.2f}" for x in tab["entropy"])
        + f" nats over n = {int(n[0])} … {int(n[-1])}; the "
        "adaptive temperature raises the max coefficient to "
        + " → ".join(f"{x:.2f}" for x in tab["max_coef_adaptive"])
        + ".",
        "",
    ]
    if s is not None and np.isfinite(s["allowed_spread"]).any():
        lines += [
            f"Per seed: δ_sup (realised, over the input grid) {_list(s['delta_sup'])}; σ_max(W_Q) "
            f"{_list(s['sigma_q'])}, σ_max(W_K) {_list(s['sigma_k'])}, max‖h_q‖ {_list(s['hq_max'])}, "
            f"max‖h_i‖ {_list(s['hx_max'])}; the spread the weights allow (Prop. 3.1) "
            f"{_list(s['allowed_spread'])}. (1 − ε)-sharpness with ε = {config.sharp_eps} needs "
            + ", ".join(f"{x:.1f}" for x in need)
            + f" at n = {', '.join(str(int(x)) for x in n)}. "
            + _spread_verdict(s, need[-1]),
            "",
        ]
    return lines


def _spread_verdict(s: dict, need: float) -> str:
    """What the spreads say about Lemma 2.1 at the largest test size."""
    if np.all(s["delta_sup"] > need):
        return (
            "Every head realises more spread than (1 − ε)-sharpness needs even at the largest n, so Lemma 2.1's "
            "bound e^δ/(e^δ + n − 1) with δ_sup is ≈ 1 at every tested n (vacuous; the test suite checks that "
            "it holds). The head disperses for another reason: priorities are continuous, so as n grows more "
            "items have priorities, hence logits, within the head's resolution of the maximum."
        )
    if np.all(s["allowed_spread"] < need):
        return (
            "The weights of every head allow less spread than (1 − ε)-sharpness needs at the largest n: Prop. "
            "3.1 forbids a sharp head there, as the paper argues."
        )
    return "The heads differ: some realise (or allow) the spread that sharpness at the largest n needs, others do not."


def _list(x) -> str:
    return ", ".join(f"{v:.3g}" for v in np.asarray(x, float))


def _beta_notes(config, df: pd.DataFrame) -> list[str]:
    fit = beta_fit(config, df)
    if fit is None or fit["coeffs"] is None:
        return []
    u = fit["use"]
    per_bin = ", ".join(f"{c:.2f}: {b:.1f}" for c, b in zip(fit["centres"][u], fit["best"][u]))
    return [
        "### β(H) refit",
        "",
        f"paper: {poly_summary(PAPER_COEFFS)}; iclab: {poly_summary(fit['coeffs'])} "
        f"fitted on H in [{fit['range'][0]:.2f}, {fit['range'][1]:.2f}] nats (weighted least squares over "
        "entropy bins above the 0.5 gate with ≥ 20 rows; target: the grid β in [1, "
        f"{config.beta_max}] minimising the trained readout's cross-entropy in that bin, pooled over seeds). "
        f"Best β per bin (H: β*): {per_bin}. The paper's own target was not recovered "
        "(docs/papers/dispersion.md §4.7), so the claims compare iclab's reconstructed β* with the paper's "
        "P(H) at a few entropies and test whether β* rises with H as P does; the coefficients themselves are "
        "not compared (a degree-4 fit on a narrow entropy range extrapolates wildly).",
        "",
    ]


def _delta_notes(df: pd.DataFrame) -> list[str]:
    dl = rows(df, part="delta")
    if not len(dl):
        return []
    lines = ["### Logit spread δ", ""]
    for _, r in dl.iterrows():
        lines.append(
            f"- {r['model']}: δ = {r['delta_mean']:.2f} ± {r['delta_sd']:.2f}, range "
            f"[{r['delta_min']:.2f}, {r['delta_max']:.2f}], per-head mean range "
            f"[{r['delta_head_min']:.2f}, {r['delta_head_max']:.2f}] on {int(r['tokens'])} tokens of "
            f"{r['text']} ({r['source']})."
        )
    return lines + [
        "- Paper (second-hand [PN, δ-repl]): Gemma 2B 5.69 ± 2.05 in [2.28, 14.78]; Gemma 7B 5.82 ± 2.61 "
        "in [0.09, 32.74], on Gemma's `modules.py` source. Different models and text, so no claim "
        "compares these numbers; what the paper concludes from them (dispersion within a few hundred "
        "tokens) is judged on the real models below (`lemma2.1/onset/…`).",
        "",
    ]


def _clrs_notes(config, df: pd.DataFrame) -> list[str]:
    tab = clrs_ood(config, df)
    if not tab:
        return []
    lines = [
        "### CLRS-style tasks: three arms",
        "",
        "| task | softmax % | adaptive (trained) % | adaptive at inference only % |",
        "|---|---|---|---|",
    ]
    for task, arms in tab.items():
        cell = [
            f"{arms[a].mean():.1f}" + (f" ± {arms[a].std(ddof=1):.1f}" if len(arms[a]) > 1 else "")
            if a in arms
            else "—"
            for a in ("softmax", "adaptive", "inference")
        ]
        lines.append(f"| {task} | " + " | ".join(cell) + " |")
    return lines + [
        "",
        f"Exact match averaged over the lengths > {config.clrs_train_max} ({config.clrs_seeds} "
        "seed(s), ± sd). The inference-only arm is the softmax-trained model with the adaptive "
        "temperature swapped into every head, on the same sequences. A 2-layer transformer trained from "
        "scratch on three synthetic tasks, not Gemma 2B fine-tuned on the 30 CLRS-Text algorithms.",
        "",
    ]


def _real_notes(config, df: pd.DataFrame) -> list[str]:
    tabs = real_tables(df)
    if not tabs:
        return []
    lines = ["### Dispersion of real transformers (Thm 2.2)", ""]
    for m, t in tabs.items():
        if "reason" in t:
            lines.append(f"- {m}: not measured — {t['reason']}")
            continue
        g = global_heads(t)
        mc = t["max_coef"][:, g].mean((0, 1, 2))  # (S,)
        fc = t["first_coef"][:, g].mean((0, 1, 2))
        rc = t["rest_max_coef"][:, g].mean((0, 1, 2))
        dl = t["delta"][:, g].mean((0, 1, 2))
        lines.append(
            f"- {m} ({t['source']}; {'causal' if t['causal'] else 'bidirectional'}, {int(g.sum())} of "
            f"{len(g)} layers global, {t['segments']} segments of {config.real_text} text): over n = "
            + ", ".join(str(int(x)) for x in t["n"])
            + ", mean largest coefficient "
            + " → ".join(f"{x:.3f}" for x in mc)
            + "; on the first key "
            + " → ".join(f"{x:.3f}" for x in fc)
            + "; largest on another key "
            + " → ".join(f"{x:.3f}" for x in rc)
            + "; mean δ "
            + " → ".join(f"{x:.1f}" for x in dl)
            + f"; the median global head's Lemma 2.1 bound falls below 1/2 at n ≈ e^δ ≈ {_onset(t)}. Mean "
            f"log–log slope of the largest coefficient {_slope(t, 'max_coef'):+.3f}, of the largest on a key "
            f"other than the first {_slope(t, 'rest_max_coef'):+.3f}, of the first key's "
            f"{_slope(t, 'first_coef'):+.3f}."
        )
    return lines + [
        "",
        "The slope claims fit log(mean largest coefficient) against log n per head and average over "
        "global heads; Θ(1/n) is slope −1. The Lemma 2.1 bound of each head, e^δ/(e^δ + n − 1) with its "
        "measured δ, holds row by row by construction (a test checks it); it falls below 1/2 only once "
        "n exceeds e^δ. Where δ grows with n (the lists above), the heads are not yet in the bounded-δ "
        "regime the theorem assumes. Figure `real_dispersion`.",
        "",
    ]


def _onset(t: dict) -> str:
    """e^δ of the median global head: with δ at the largest n ≤ ONSET_N as ``lemma2.1/onset`` judges it (mean over
    segments of the per-segment median), and with δ at the largest measured n when that is larger."""
    g = global_heads(t)
    at_max = np.exp(np.mean(np.median(t["delta"][..., -1][:, g].reshape(t["segments"], -1), 1)))
    last = f"at the largest n = {int(t['n'][-1])}"
    d = onset_delta(t)
    if d is None:
        return f"{at_max:.3g} tokens (δ {last}; no n ≤ {ONSET_N}, so no onset claim)"
    j = int(np.flatnonzero(t["n"] <= ONSET_N)[-1])
    text = f"{np.exp(d.mean()):.3g} tokens (δ at n = {int(t['n'][j])}, as `lemma2.1/onset` judges"
    return text + (f"; {at_max:.3g} with δ {last})" if j < len(t["n"]) - 1 else ")")


def _slope(t: dict, key: str) -> float:
    """The mean over segments and global heads of the log–log slope of ``key`` against n."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.nanmean(loglog_slope(t["n"], t[key][:, global_heads(t)])))


def _fig4_notes() -> list[str]:
    from iclab.experiments.dispersion.adaptive_check import fig4_rows

    d = fig4_rows()
    gap = float((d["beta_applied"] - d["beta_formula"]).abs().max())
    return [
        "### The Fig. 4 code",
        "",
        f"On {len(d)} rows of Gaussian logits (n = 16 … 4096, entropies "
        f"{d['H'].min():.2f} … {d['H'].max():.2f} nats), the inverse temperature "
        f"`iclab.attention.adaptive_softmax` applies, read back from its output, equals max(P(H), 1) of the NumPy "
        f"closed form to {gap:.1g} (the reference code's +10⁻⁹ inside the log moves H by at most n·10⁻⁹ nats); "
        f"it never raises the entropy (largest H after − H before: {float((d['H_after'] - d['H']).max()):+.2g}). "
        "Figure `adaptive_temperature_fig4`. A check of the implementation, not a claim.",
        "",
    ]


def _lookup_notes(df: pd.DataFrame) -> list[str]:
    lk = rows(df, part="lookup")
    if not len(lk):
        return []
    lines = [
        "### Key–value lookup on real LMs: softmax vs adaptive temperature",
        "",
        "| task | model | lines | tokens | queries | softmax | adaptive | adaptive − softmax [95% CI] |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for _, r in lookup_summary(lk).iterrows():
        lines.append(
            f"| {r['task']} | {r['model']} | {r['n_pairs']} | {r['tokens']} | {r['queries']} | {r['softmax']:.3f} | "
            f"{r['adaptive']:.3f} | {r['diff']:+.3f} [{r['diff_lo']:+.3f}, {r['diff_hi']:+.3f}] |"
        )
    return lines + [
        "",
        "kv: lines `abcde: 123`, then `Look up abcde in the list above.\\nabcde:`; passkey: one line "
        "`Pass key of abcde: 123` among filler lines, then `What is the pass key of abcde?\\nPass key of "
        "abcde:`; greedy exact match; the "
        "adaptive temperature runs in every head at inference only (no fine-tuning, unlike the paper's "
        "Gemma 2B on CLRS-Text), through the streaming O(n)-memory kernel.",
        "",
    ]
