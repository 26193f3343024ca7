"""Experiment ``categorical``: Wang et al., "On understanding attention-based in-context learning for categorical
data", arXiv:2405.17248 — attention-based ICL for categorical outcomes as functional gradient descent
(docs/papers/categorical.md).

Modules: ``config`` (config and presets), ``cells`` (the grid and the cell function), ``synthetic`` (GD model vs
trained transformer on synthetic prompts), ``stationarity`` (the gradient check of Theorems 1–2), ``features``
(unseen-class classification on real features vs a linear probe), ``language`` (character-level language models),
``training`` (fit and evaluate a classifier), ``figures``, ``claims`` (the claims as records and their verdicts),
``statistics`` (the package's own statistics the records name), ``notes``, ``paper_values`` (the authors' numbers)
and ``tables`` (reading the results table). Importing this package imports only the config.
"""

from iclab.experiments import Experiment, register
from iclab.experiments.categorical.config import PRESETS, CategoricalConfig

__all__ = ["CategoricalConfig", "EXPERIMENT"]

EXPERIMENT = register(
    Experiment.in_package(
        __name__,
        name="categorical",
        paper="categorical",
        title="Categorical ICL as functional GD: self-attention (update + erase) and cross-attention over class embeddings",
        claim="A transformer block of two self-attention heads (a kernel GD update of the latent function f and an "
        "erase head) and a cross-attention onto the class embeddings (which recomputes E[w_e | f] exactly) "
        "performs one step of functional gradient descent on the in-context cross-entropy; K blocks are K steps. "
        "The GD configuration is a stationary point of the ICL loss; the GD model, with a handful of learned "
        "parameters, matches or beats a fully trained transformer of the same shape and needs far less "
        "training data; on real features 2-3 GD blocks approach a per-context linear probe; a 1-layer GD "
        "language model comes close to a 1-layer transformer (arXiv:2405.17248; docs/papers/categorical.md §2).",
        config_cls=CategoricalConfig,
        presets=PRESETS,
        order=70,
    )
)
