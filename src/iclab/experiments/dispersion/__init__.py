"""The ``dispersion`` experiment: "Softmax is not enough (for sharp size generalisation)", Veličković,
Perivolaropoulos, Barbero, Pascanu, arXiv:2410.01104 (ICML 2025); the project's note is docs/papers/dispersion.md.

Parts (the ``part`` of each cell, docs/papers/dispersion.md §5): ``retrieval`` (max retrieval trained at 5–16
items and tested far beyond, softmax vs adaptive temperature at inference, sigmoid and SSMax; dispersion
diagnostics, the Prop. 3.1 weight spread and the β(H) refit data), ``delta`` (logit spread δ of MiniLM and
SmolLM2-135M), ``clrs`` (a tiny transformer on CLRS-style tasks: softmax, adaptive temperature in training and
inference, and adaptive at inference only) and ``real`` (the largest attention coefficient of every head of real
transformers as the context grows, Thm 2.2). Modules: ``config`` (settings), ``cells`` (the grid and the cell
function), ``retrieval``, ``llm_spread``, ``clrs``, ``real_dispersion`` (one per part), ``tables`` (the paper's
numbers and the measured tables), ``claims`` (the claim records, declared before the run and judged), ``statistics``
(the measured quantities the records name), ``notes``, ``figures`` and ``adaptive_check`` (the Fig. 4 code made
visible). Only ``config`` is imported here, so ``iclab
list`` stays light.
"""

from iclab.experiments._contract import Experiment
from iclab.experiments._registry import register
from iclab.experiments.dispersion.config import PRESETS as PRESETS
from iclab.experiments.dispersion.config import DispersionConfig as DispersionConfig

__all__ = ["DispersionConfig", "PRESETS", "EXPERIMENT"]

EXPERIMENT = register(
    Experiment.in_package(
        __name__,
        name="dispersion",
        paper="dispersion",
        title="Softmax disperses at growing size; entropy-adaptive temperature (Veličković et al. 2025)",
        claim=(
            "Every global softmax head disperses as its input grows (Thm 2.2; Lemma 2.1: every coefficient is Θ(1/n) "
            "when the logit spread δ is bounded): a single head trained to retrieve the max of ≤16 items does, so "
            "out-of-distribution accuracy falls, and so do the heads of real transformers. "
            "An entropy-adaptive inverse temperature β(H) = max(p(H), 1), applied at inference only, gives small but "
            "significant gains (paired t-test). Real models' logit spreads (Gemma: δ ≈ 5.7 ± 2.1) are far too small "
            "to stay sharp beyond a few hundred tokens."
        ),
        config_cls=DispersionConfig,
        presets=PRESETS,
        order=60,
    )
)
