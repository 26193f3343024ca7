"""The notes of ``temperature-gpt2-regression``: the model against the paper's GPT-2, how the claims are tested, and
why the one-layer τ_opt need not transfer (arXiv:2511.01292 §5; docs/papers/temperature.md §5.2, §6.8).
"""

from __future__ import annotations

import pandas as pd

from iclab.experiments._notes import labelled
from iclab.experiments.temperature.gpt2.config import TemperatureGPT2Config

__all__ = ["notes"]

GARG_SIZE, GARG_STEPS = (12, 8, 256), 500_000  # layers, heads, width and Adam steps of Garg et al. (arXiv:2208.01066)


def notes(cfg: TemperatureGPT2Config, df: pd.DataFrame) -> str:
    """Model size, error normalisation, the test design, why the one-layer τ_opt need not transfer (note §6.8), and
    each trained model's error at τ = 1 (note §6.8, §6.11)."""
    lines = [
        "**The paper gives no size or training details for its GPT-2 regression model** (its appendix was not "
        "available; docs/papers/temperature.md §5.5). This one is "
        f"{cfg.n_layer} layers × {cfg.n_head} heads × width {cfg.n_embd}, d = {cfg.d}, n = {cfg.n}, "
        f"{cfg.steps} Adam steps, {cfg.train_seeds} trained model(s)"
        + (
            " — Garg et al.'s size."
            if (cfg.n_layer, cfg.n_head, cfg.n_embd) == GARG_SIZE
            else f" — far smaller than Garg et al.'s {labelled(GARG_SIZE, 'd', sep=' × ')} ({GARG_STEPS:,} steps), "
            "which a CPU cannot train."
        )
        + " Errors are normalised by Tr(AB) + σ² and averaged "
        f"over {cfg.n_test} test prompts, the same prompts for every τ.",
        "",
        "**How the claims are tested.** The grid-best τ is picked on the prompts it is scored on, so its gain "
        'over τ = 1 is biased upward; "re-tuning τ helps" is judged on the cross-fitted gain instead (τ picked '
        "on one half, scored on the other, both ways) with the SE of the per-prompt difference. The best-τ "
        "trends use a bootstrap over prompts of the grid argmin (over trained models when there are ≥ 3).",
        "",
        "**The one-layer τ_opt need not transfer.** It is that of the approximate-softmax layer with "
        "Bayes-mimicking weights. In a trained multi-layer softmax transformer only the first layer sees raw "
        "input scales — a covariance shift multiplies its logits by a — while LayerNorm hands later layers "
        "normalised features. Scaling τ in the first layer only is the closer analogue; both are measured "
        "(figures).",
    ]
    if len(df):
        rows = df.groupby("shift", sort=False)[["theory_tau", "best_tau_all", "best_tau_first"]].mean()
        lines += [
            "",
            "Grid-best τ (all layers / first layer; mean over trained models) against the one-layer τ_opt: "
            + "; ".join(
                f"{s}: {r.best_tau_all:.3g} / {r.best_tau_first:.3g} vs {r.theory_tau:.3g}" for s, r in rows.iterrows()
            )
            + ".",
            "",
            "Error at τ = 1 per trained model (normalised by each shift's own Tr(AB) + σ²; with 3 or more models the "
            "claims' uncertainty is the spread across them): "
            + "; ".join(
                f"{s}: {labelled(g.sort_values('train_seed')['err_tau1'], '.3g')}"
                for s, g in df.groupby("shift", sort=False)
            )
            + ".",
        ]
    return "\n".join(lines)
