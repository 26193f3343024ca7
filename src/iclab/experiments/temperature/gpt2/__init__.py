"""Experiment ``temperature-gpt2-regression`` of arXiv:2511.01292 (Demir & Doğan, §5 footnote; v1 Fig. 6): a small
GPT-2 trained on in-context linear regression, with the attention logits divided by τ at inference under the shifts
of the one-layer experiment (docs/papers/temperature.md §5.2)."""

from iclab.experiments import Experiment, register
from iclab.experiments.temperature.gpt2.config import PRESETS, TemperatureGPT2Config

__all__ = ["EXPERIMENT"]

CLAIM = (
    "Demir & Doğan (§5, footnote; v1 Fig. 6): the trends of the one-layer theory carry over to a GPT-2 "
    "architecture trained on in-context linear regression — covariance shift hurts and re-tuning the "
    "attention temperature at inference repairs part of it, the best τ growing with the shift."
)

EXPERIMENT = register(
    Experiment.in_package(
        __name__,
        name="temperature-gpt2-regression",
        paper="temperature",
        title="Inference-time attention temperature in a trained GPT-2 on in-context regression under shift",
        claim=CLAIM,
        config_cls=TemperatureGPT2Config,
        presets=PRESETS,
        order=30,
    )
)
