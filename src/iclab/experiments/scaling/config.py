"""Config of ``scaling-rules``: which models, scaling rules, retrieval tasks and context sizes are compared
(docs/papers/scaling.md §3)."""

from __future__ import annotations

from dataclasses import dataclass

from iclab.config import Config, choices_field, device_field, int_field, ints_field
from iclab.data import LONG_CONTEXT_TASKS
from iclab.errors import ConfigError

__all__ = ["ScalingConfig", "PRESETS", "TASKS", "MODELS", "STOCK"]

TASKS = LONG_CONTEXT_TASKS
MODELS = ("smollm2", "gemma3-270m")
STOCK = "stock"  # the unmodified model, the baseline of every rule


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


# quick: SmolLM2 at ~200 and ~1k tokens, pass-key and variable tracking, two length rules set to a nominal length of
# 256 tokens (so they act within the run's range), 4 prompts each: 12 cells, about a CPU-minute. It decides little;
# the paper preset decides more, the full preset is for a GPU.
QUICK = ScalingConfig()
# paper: both models to ~8k tokens (within both trained lengths), every task and rule kind, 12 prompts per size: a
# few CPU hours.
PAPER = ScalingConfig(
    models=MODELS,
    tasks=TASKS,
    sizes=(32, 160, 640, 1280),
    groups=12,
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
