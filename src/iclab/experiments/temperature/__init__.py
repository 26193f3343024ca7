"""Experiments of arXiv:2511.01292, Demir & Doğan, "Optimal attention temperature improves the robustness of
in-context learning under distribution shift in high dimensions" (docs/papers/temperature.md).

``temperature`` (this package): one approximate-softmax attention layer with Bayes-mimicking weights, the
closed-form test error and τ_opt against Monte Carlo under every shift of §5.1. ``temperature-gpt2-regression``
(:mod:`.gpt2`): inference-time τ in a trained GPT-2 on in-context regression. ``temperature-llm`` (:mod:`.llm`):
τ for a real causal LM under noisy in-context demonstrations. Importing the package registers all three and imports
only their configs.
"""

from iclab.experiments import Experiment, register
from iclab.experiments.temperature.config import PRESETS, TemperatureConfig

__all__ = ["EXPERIMENT"]

CLAIM = """\
Demir & Doğan: one approximate-softmax attention layer whose weights emulate the train-prior Bayes ridge
(Lemma 4.1) has the closed-form test error G(τ) = a₂/τ² − a₁/τ + c for any test distribution (Theorem 4.2), so the
inference temperature τ_opt = 2a₂/a₁ (Theorem 4.3) is optimal. An input-covariance shift breaks ICL and τ_opt
repairs it; an input-mean shift is harmless for the (centring) approximate softmax but not for linear attention
(Remark 3.4); task and noise shifts matter mainly at short context. Without shift the model "emulates Bayes"
(Corollary 4.4). Figures: theory lines over Monte-Carlo points (error bars = 1 s.e.), errors raw and normalised by
Tr(AB) + σ² (the error of predicting 0)."""

EXPERIMENT = register(
    Experiment.in_package(
        __name__,
        name="temperature",
        paper="temperature",
        title="Optimal attention temperature under distribution shift (Demir & Doğan)",
        claim=CLAIM,
        config_cls=TemperatureConfig,
        presets=PRESETS,
        order=10,
    )
)

from iclab.experiments.temperature import gpt2, llm  # noqa: E402,F401 - registers the other two experiments
