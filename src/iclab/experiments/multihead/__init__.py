"""Experiment ``multihead``: in-context linear regression with multi-head softmax attention, arXiv:2503.12734
(He, Pan, Chen, Yang, ICML 2025; the project's note: docs/papers/multihead.md).

Parts (``cells``): the analytic baselines of the paper's Fig. 2.5 (``baseline``); Thm 1's Bayes-risk factor at
finite (d, L) (``ratio``); one trained model per (H, attention, seed) at n = 40 (``iso``: training dynamics, KQ/OV
patterns, error vs prompt length paired with debiased GD, head ablation, linear attention, length
generalisation); length generalisation from another training length (``lengthgen``, only when it differs from
n = 40); anisotropic covariates, learned KQ vs Σ⁻¹ (``aniso``); multi-task regression, superposition across heads
(``multitask``); exp replaced by other activations (``activation``). Only the config is imported here, so
``iclab list`` stays light.
"""

from iclab.experiments import Experiment, register
from iclab.experiments.multihead.config import PRESETS, MultiheadConfig

__all__ = ["MultiheadConfig", "EXPERIMENT"]

EXPERIMENT = register(
    Experiment.in_package(
        __name__,
        name="multihead",
        paper="multihead",
        title="Multi-head softmax attention for in-context linear regression: emergent patterns and debiased GD",
        claim="A one-layer multi-head softmax attention trained on Gaussian in-context regression learns diagonal, "
        "homogeneous KQ circuits (ω^(h) I_d, |ω^(h)| = γ) and last-entry, zero-sum OV circuits with "
        "sign(ω) = sign(μ); with H ≥ 2 heads it implements debiased one-step GD with η ≈ η* = "
        "(1 + (1+σ²)d/L)⁻¹, beats the single head (a Nadaraya–Watson kernel regressor), is within a constant "
        "of the Bayes risk, generalises to longer prompts (linear attention does not), learns KQ ∝ Σ⁻¹ for "
        "anisotropic inputs and shares heads across tasks (superposition) when 2 < H < 2N (arXiv:2503.12734, "
        "Thm 1, Figs. 2.4–4.1; docs/papers/multihead.md §2).",
        config_cls=MultiheadConfig,
        presets=PRESETS,
        order=40,
    )
)
