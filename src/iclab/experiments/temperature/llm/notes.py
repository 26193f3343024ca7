"""The notes of ``temperature-llm``: the models and data against the paper's (arXiv:2511.01292 §5.3), the screen,
the per-cell table and how to read it (docs/papers/temperature.md §5.3–5.4, §6.7); the screen's harm and the trend's
slope are the claims' own rows."""

from __future__ import annotations

import numpy as np
import pandas as pd

from iclab.experiments._notes import md_table
from iclab.experiments.temperature.llm.claims import SMALLEST_GAIN
from iclab.experiments.temperature.llm.config import TemperatureLLMConfig
from iclab.experiments.temperature.llm.tables import summary_table

__all__ = ["notes"]


def _fmt(v, spec=".3f") -> str:
    return "—" if v is None or not np.isfinite(v) else format(v, spec)


def _ci(r, name) -> str:
    if f"{name}_gain" not in r or not np.isfinite(r[f"{name}_gain"]):
        return "—"
    return f"{r[f'{name}_gain']:+.3f} [{r[f'{name}_lo']:+.3f}, {r[f'{name}_hi']:+.3f}]"


def _table_lines(cfg: TemperatureLLMConfig, tab: pd.DataFrame) -> list[str]:
    """The per-cell table; a gain a claim measures (:mod:`.claims`: the held-out τ's in each noisy cell, the spread
    rule's at the largest noise) names its row instead."""

    def gain(r, name: str, claim: str, judged: bool) -> str:
        return f"`{r['model']}/{r['task']}/{claim}`" if judged and r["part"] == "noise" else _ci(r, name)

    top = max(cfg.noise_ratios)
    return md_table(
        "model | task | noise | k | Q | EM τ=1 | best τ [95% CI] | EM best | held-out gain [CI] | "
        "spread-rule gmean τ_ℓ | spread-rule gain [CI] | adaptive gain [CI]",
        (
            f"{r['model']} | {r['task']} | {r['noise_ratio']:g} | {r['n_demos']} | {r['n_questions']} | "
            f"{r['em_tau1']:.3f} | {r['best_tau']:g} [{r['best_tau_lo']:g}, {r['best_tau_hi']:g}] | "
            f"{r['best_em']:.3f} | {gain(r, 'heldout', f'gain/{r.noise_ratio:g}', r['noise_ratio'] > 0)} | "
            f"{_fmt(r.get('moment_tau'), '.2f')} | "
            f"{gain(r, 'moment', 'moment', cfg.moment_rule and r['noise_ratio'] == top > 0)} | {_ci(r, 'adaptive')}"
            for _, r in tab.sort_values(["model", "task", "part", "noise_ratio", "n_demos"]).iterrows()
        ),
    )


def notes(cfg: TemperatureLLMConfig, df: pd.DataFrame) -> str:
    """Models and data against the paper's (note §6.7), the per-cell table, and how to read it."""
    sources = sorted(set(df["source"])) if "source" in df and len(df) else list(cfg.models)
    tab = summary_table(cfg, df) if len(df) else pd.DataFrame()
    lines = [
        "Models: " + "; ".join(sources) + ". The paper used Llama-2-7B and GPT-2 on SciQ with Gao et al.'s noisy "
        "answers; offline, iclab runs the base Gemma 3 270M and SmolLM2-135M-Instruct on country/WordNet tasks "
        "whose wrong answers are plausible answers of the same type, plus `continent-label` (regions renamed by "
        "arbitrary words), where only the demonstrations can give the answer. On the knowledge tasks noisy "
        "demonstrations change EM little (docs/papers/temperature.md §5.3), and at these sizes neither model learns "
        "continent-label from its demonstrations (§6.5b), so the offline tasks give the paper's trend little room: a "
        "null trend here is weak evidence against it.",
        "",
        "EM is greedy exact match (the answer's tokens, then a line end), per question; questions of a group "
        f"share {cfg.n_demos} demonstrations (groups of {cfg.group_size}), the unit every interval resamples. 'best "
        "τ' is the grid argmax on all questions; the spread rule is τ_ℓ = σ_ℓ^noisy/σ_ℓ^clean "
        "(docs/papers/temperature.md §5.4), from the clean and noisy versions of the same prompts.",
        "",
    ]
    if cfg.screen_questions and max(cfg.noise_ratios) > 0:
        lines += [
            f"Screen (questions of a separate split, τ = 1, the same {cfg.n_demos} demonstrations clean and noisy): a "
            f"model and task count only when its `noise-hurts` claim agrees: noise lowers EM, the 95% interval "
            f"above 0 and reaching {max(cfg.screen_harm, SMALLEST_GAIN):g}; that claim reports the harm, and the "
            "other claims of a model and task it screens out name it.",
            "",
        ]
    if not tab.empty:
        lines += _table_lines(cfg, tab)
    return "\n".join(lines)
