"""The claims of ``scaling-rules`` as records (docs/papers/scaling.md §4): for every rule and model, paired with the
stock model on the same prompts (the unit of replication is the prompt: task, size, prompt index), that it leaves
retrieval accuracy unchanged within the trained length, and that it raises it past the trained length."""

from __future__ import annotations

import pandas as pd

from iclab.claims import ClaimRecord, Measure, PilotMinimum, Rule
from iclab.experiments.scaling.config import STOCK, ScalingConfig, lines_within, longest_prompt_tokens
from iclab.experiments.scaling.tables import prompt_rows

__all__ = ["claims", "judged_rows", "SMALLEST", "TRAINED_TOKENS", "PILOT", "WITHIN_MINIMUMS"]

#: the smallest change of exact match (pooled over the run's tasks and sizes) that matters
SMALLEST = 0.1
#: the models' trained context lengths (their configs' max_position_embeddings), to say before a run whether it
#: reaches past them
TRAINED_TOKENS = {"smollm2": 8192, "gemma3-270m": 32768}
PROMPT = ("task", "size", "group")
#: the pilot of the claims' minimums of units (iclab.claims._pilot, issue 43; docs/calibration.md §7)
PILOT = "the reference run scaling-rules-paper shipped 2026-12-07 (seed 0, 6 prompts per size)"
#: the prompts a (rule, model) ``within-trained`` claim needs, fixed once from PILOT by docs/pilot_minimums.py (1 000
#: draws per count). soft-cap on SmolLM2 changes few prompts, each by a lot: its 90 paired differences, moved to the
#: edge -0.1, agree 11.4 % of the time, and still 8.1 % at the search's cap of 200 (the rate falls slowly: a sample
#: that misses the rare large losses has a mean inside the margin and a narrow band), so the minimum is the cap
WITHIN_MINIMUMS = {("softcap:c=20", "smollm2"): PilotMinimum(200, PILOT, capped=True)}
_SOURCES = {
    "logn": "Qwen technical report, arXiv:2309.16609 §2.3 (LogN-scaling)",
    "llama4": "Llama 4 (transformers llama4: attn_temperature_tuning)",
    "ministral": "Ministral 3 (transformers ministral3: llama_4_scaling_beta)",
    "ssmax": "Scalable-Softmax, arXiv:2501.19399",
    "yarn": "YaRN, arXiv:2309.00071 (attention factor)",
    "softcap": "Gemma 2, arXiv:2408.00118 (logit soft-capping)",
}


def judged_rows(cfg: ScalingConfig, df: pd.DataFrame) -> pd.DataFrame:
    """One row per prompt (:func:`.tables.prompt_rows`)."""
    return prompt_rows(df)


def _source(rule: str) -> str:
    return "; ".join(_SOURCES[part.split(":")[0]] for part in rule.split("+"))


def _past_not_run(model: str):
    def not_run(cfg: ScalingConfig, record) -> str:
        longest = longest_prompt_tokens(cfg)
        if longest > TRAINED_TOKENS[model]:
            return ""
        return (
            f"every prompt of this run (at most about {longest} tokens) is within {model}'s trained "
            f"{TRAINED_TOKENS[model]} tokens; a rule is made for past it: sizes beyond "
            f"{lines_within(cfg, TRAINED_TOKENS[model])} lines would judge it (a GPU run; the full preset reaches past SmolLM2's)"
        )

    not_run.__name__ = f"past_trained_not_run_{model}"
    return not_run


def _pair(cfg: ScalingConfig, rule: str, model: str, within: bool) -> Measure:
    where = {"part": "retrieval", "model": model, "within": within}
    gates = (WITHIN_MINIMUMS[(rule, model)],) if within and (rule, model) in WITHIN_MINIMUMS else ()
    return Measure({**where, "rule": rule}, column="em", unit=PROMPT, base={**where, "rule": STOCK}, gates=gates)


def claims(cfg: ScalingConfig) -> list[ClaimRecord]:
    out = []
    for rule in cfg.rules:
        for m in cfg.models:
            out += [
                ClaimRecord(
                    f"{rule}/{m}/within-trained",
                    f"{m}: `{rule}` changes retrieval accuracy within the trained context by less than {SMALLEST:g}",
                    _source(rule),
                    "equivalence",
                    quantity=f"per prompt, exact match with `{rule}` minus the stock model's, at every size within "
                    "the trained length",
                    extra="Above: the rule helps; below: it hurts (not 'no change')",
                    paper_value="in-distribution quality kept",
                    measure=_pair(cfg, rule, m, within=True),
                    rule=Rule("absence", smallest=SMALLEST, units="prompts"),
                ),
                ClaimRecord(
                    f"{rule}/{m}/past-trained",
                    f"{m}: past the trained context, `{rule}` raises retrieval accuracy over the stock model",
                    _source(rule),
                    "effect direction",
                    quantity=f"per prompt, exact match with `{rule}` minus the stock model's, at every size past the "
                    "trained length",
                    paper_value="longer contexts without retraining",
                    not_run=_past_not_run(m),
                    measure=_pair(cfg, rule, m, within=False),
                    rule=Rule("direction", sign=+1, smallest=SMALLEST / 2, units="prompts"),
                ),
            ]
    return out
