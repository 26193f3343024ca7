"""Config of ``scaling-rules``: which models, scaling rules, retrieval tasks and context sizes are compared
(docs/papers/scaling.md §3)."""

from __future__ import annotations

from dataclasses import dataclass

from iclab.config import Config, choices_field, device_field, int_field, ints_field
from iclab.data import LONG_CONTEXT_TASKS
from iclab.errors import ConfigError

__all__ = [
    "ScalingConfig",
    "PRESETS",
    "TASKS",
    "MODELS",
    "STOCK",
    "TOKENS_PER_LINE",
    "longest_prompt_tokens",
    "lines_within",
]

TASKS = LONG_CONTEXT_TASKS
MODELS = ("smollm2", "gemma3-270m")
STOCK = "stock"  # the unmodified model, the baseline of every rule
#: upper bounds of a prompt's tokens per line (filler line, list entry, word) of each task, over both models'
#: tokenizers (measured at 32 ... 1280 lines: pass-key 5.8, key-value 9.1, variable tracking 5.9, common words 8.6;
#: a test holds the bounds on the real tokenizers)
TOKENS_PER_LINE = {"passkey": 6.2, "kv": 9.5, "vartrack": 6.3, "cwe": 9.0}
_FRAME = 128  # tokens of a prompt's instructions and fixed lines (a variable chain: about 100), at most


@dataclass(frozen=True)
class ScalingConfig(Config):
    """Settings of ``scaling-rules``.

    Fields:
        models: causal LMs (installed packages): ``smollm2`` (SmolLM2-135M, trained to 8192 tokens),
            ``gemma3-270m`` (Gemma 3 270M, 32768).
        rules: scaling rules compared with the stock model, each as :func:`iclab.hf.parse_scaling_rule` reads it
            (``logn:L=512``, ``ssmax:L=512``, ``yarn:s=4``, ``softcap:c=20``, ``llama4:a=0.1:f=512``; ``+``
            composes).
        tasks: retrieval tasks (:func:`iclab.data.long_context_groups`): ``passkey`` (a pass-key line among filler),
            ``kv`` (key–value lookup, four questions a list), ``vartrack`` (multi-hop variable tracking beside a
            distractor chain, two questions), ``cwe`` (the most frequent word of a list).
        sizes: filler lines, list entries or words per prompt (about 5–7 tokens each; 320 ≈ 2k tokens).
        groups: prompts per (model, task, size): the units of replication (a prompt's questions share it).
        dtype: model dtype (``float32``, ``bf16``, ``fp16``), or ``auto``: bf16 where ``device`` computes it natively,
            float32 elsewhere (:func:`iclab.hf.parse_dtype`).
        device: torch device of the models.
        seed: base seed of the prompts.
    """

    models: tuple[str, ...] = choices_field(("smollm2",), MODELS)
    rules: tuple[str, ...] = ("logn:L=256", "ssmax:L=256")
    tasks: tuple[str, ...] = choices_field(("passkey", "vartrack"), TASKS)
    sizes: tuple[int, ...] = ints_field((32, 160), low=16, distinct=True)
    groups: int = int_field(4, low=3, why="at least 3 prompts: an SE across prompts")
    dtype: str = "auto"
    device: str = device_field("cpu")
    seed: int = int_field(0, low=0)

    def __post_init__(self) -> None:
        from iclab.hf import parse_dtype, parse_scaling_rule

        if not self.rules or len(set(self.rules)) != len(self.rules):
            raise ConfigError("rules", self.rules, "one or more distinct scaling rules (e.g. logn:L=512,ssmax:L=512)")
        for rule in self.rules:
            if rule == STOCK:
                raise ConfigError("rules", rule, "a scaling rule; the stock model is always the baseline")
            parse_scaling_rule(rule)
        parse_dtype(self.dtype, self.device)


def longest_prompt_tokens(cfg: ScalingConfig) -> int:
    """An upper bound of the tokens of the run's longest prompt prefix, over its tasks."""
    return int(max(TOKENS_PER_LINE[t] for t in cfg.tasks) * max(cfg.sizes)) + _FRAME


def lines_within(cfg: ScalingConfig, tokens: int) -> int:
    """The most lines at which :func:`longest_prompt_tokens` stays within ``tokens`` for every task of the run."""
    return int((tokens - _FRAME) // max(TOKENS_PER_LINE[t] for t in cfg.tasks))


# quick: SmolLM2 at ~200 and ~1k tokens, pass-key and variable tracking, two length rules set to a nominal length of
# 256 tokens (so they act within the run's range), 4 prompts each: 12 cells, about a CPU-minute. It decides little;
# the paper preset decides more, the full preset is for a GPU.
QUICK = ScalingConfig()
# paper: both models to 5.6k-8.8k tokens by task (960 lines: pass-key and variable tracking about 5.6k, common words
# 7.9k, key-value lists 8.8k: the one task past SmolLM2's trained 8192), every task and rule kind, 6 prompts per size.
# One prompt's prefill costs about 4.2e-7 s x tokens^2 + 4.5e-4 s x tokens on one core in bf16 (SmolLM2, sdpa; the
# attention kernel is 80 % of it at 6k tokens): about 3 CPU hours in all by this model; the reference run took 3.9 CPU
# hours (2.2 h on two cores).
PAPER = ScalingConfig(
    models=MODELS,
    tasks=TASKS,
    sizes=(32, 160, 640, 960),
    groups=6,
    rules=("logn:L=512", "ssmax:L=512", "yarn:s=4", "softcap:c=20", "llama4:a=0.1:f=512"),
)
# full: past SmolLM2's trained 8192 tokens (a GPU), with the rules at the trained length.
FULL = ScalingConfig(
    models=MODELS,
    tasks=TASKS,
    sizes=(160, 640, 1280, 2560),
    groups=24,
    rules=("logn:L=8192", "ssmax:L=8192", "yarn:s=4", "softcap:c=20", "llama4:a=0.1:f=8192"),
)
PRESETS = {"quick": QUICK, "paper": PAPER, "full": FULL}
