"""Experiment ``scaling-rules``: the attention-scaling rules that released long-context models ship (Qwen's log-n,
Llama 4's temperature tuning, YaRN's attention factor, Scalable-Softmax, Gemma 2's soft-cap), applied by name to any
causal LM iclab loads (:func:`iclab.hf.with_scaling_rule`) and compared side by side with the stock model on
long-context retrieval generated offline (pass-key, key–value lookup, multi-hop variable tracking, common words) at
growing context lengths (docs/papers/scaling.md). The motivation is the dispersion result of arXiv:2410.01104: with
bounded logits, softmax attention flattens as the context grows, which each rule counters in its own way."""

from iclab.experiments import Experiment, register
from iclab.experiments.scaling.config import PRESETS, ScalingConfig

__all__ = ["EXPERIMENT"]

CLAIM = (
    "Released long-context models rescale attention logits with the context length (Qwen log-n, Llama 4 temperature "
    "tuning, Scalable-Softmax), by a constant (YaRN) or cap them (Gemma 2 soft-cap), so that attention does not "
    "flatten as the context grows (arXiv:2410.01104, Lemma 2.1): past the trained length a rule should keep "
    "retrieval accuracy above the stock model's, and within it leave accuracy as it is."
)

EXPERIMENT = register(
    Experiment.in_package(
        __name__,
        name="scaling-rules",
        paper="scaling",
        title="Attention-scaling rules of released LLMs, side by side on long-context retrieval",
        claim=CLAIM,
        config_cls=ScalingConfig,
        presets=PRESETS,
        order=80,
    )
)
