"""Experiment ``temperature-llm`` of arXiv:2511.01292 (Demir & Doğan, §5.2, Fig. 3): attention temperature for a
real causal LMs (Gemma 3 270M and SmolLM2-135M-Instruct) under noisy in-context demonstrations
(docs/papers/temperature.md §5.3–5.4)."""

from iclab.experiments import Experiment, register
from iclab.experiments.temperature.llm.config import PRESETS, TemperatureLLMConfig

__all__ = ["EXPERIMENT"]

CLAIM = (
    "Demir & Doğan (§5.2, Fig. 3): with demonstrations corrupted by 'relevant but wrong' answers, rescaling the "
    "attention temperature in every layer improves exact match; the best τ exceeds 1 and grows with the noise "
    "ratio; EM is non-monotone in the number of demonstrations at noise 0.6."
)

EXPERIMENT = register(
    Experiment.in_package(
        __name__,
        name="temperature-llm",
        paper="temperature",
        title="Attention temperature for a real LLM under noisy in-context demonstrations",
        claim=CLAIM,
        config_cls=TemperatureLLMConfig,
        presets=PRESETS,
        order=20,
    )
)
