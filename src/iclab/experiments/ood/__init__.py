"""Experiment ``ood``: "Theory on attention dynamics for out-of-distribution in-context learning"
(arXiv:2609.36448; model of arXiv:2310.05249; the project's note: docs/papers/ood.md).

Parts (the ``part`` of each cell, note §5): ``pretrain`` (α/β trajectories, stopping rule, conservation law),
``ood`` (OOD error under rotation, in-span rotations, a random alignment, collapse cases), ``forget`` (one cell
per γ1: K = 2 fine-tuning over a list of γ2), ``tiny`` (1–3 layer width-16 transformers), ``minilm`` (a real
encoder's hidden states rotated), ``minilm_shift`` (natural domain shift and the weight-gap rotation scenarios
on the same encoder). Importing this package loads only the config.
"""

from iclab.experiments import Experiment, register
from iclab.experiments.ood.config import PRESETS, OodConfig

__all__ = ["OodConfig", "EXPERIMENT"]

EXPERIMENT = register(
    Experiment.in_package(
        __name__,
        name="ood",
        paper="ood",
        title="Attention dynamics for OOD in-context learning: α/β weights, OOD error under rotation, forgetting",
        claim="A one-layer merged-Q softmax attention trained by GD on orthonormal-feature regression is described by "
        "α (own-feature) and β (other-feature) logits tied by a conservation law (α = −Σβ); its OOD error on a "
        "shifted feature set U follows from M = VᵀU and ⟨u_k, v̄⟩ (uniform attention = random guessing when U ⟂ V); "
        "fine-tuning on U raises source α and moves β by γ_mγ_k·Δβ_U, so for K = 2 feature k is forgotten iff "
        "−γ_kγ_m > γ_k², and otherwise fine-tuning helps the source task (arXiv:2609.36448; docs/papers/ood.md §2).",
        config_cls=OodConfig,
        presets=PRESETS,
        order=50,
    )
)
