"""Experiment ``onestep-gd``: one step of gradient descent on the in-context least-squares loss is what a linear
self-attention layer computes (von Oswald et al., arXiv:2212.07677, Prop. 1), and how good that one step is.

An iclab plugin: installing this package registers the experiment (entry point ``iclab.experiments``)."""

from iclab.experiments import Experiment, register

from iclab_onestep_gd.config import PRESETS, OneStepConfig

EXPERIMENT = register(
    Experiment.in_package(
        __name__,
        name="onestep-gd",
        paper="onestep-gd",
        title="One GD step is a linear self-attention layer (von Oswald et al. 2023)",
        claim="A linear self-attention layer with W_KQ = I and W_PV = η/n·e_y e_yᵀ predicts ŷ = (η/n) Σ y_i x_iᵀ x_q, "
        "one step of GD from w = 0 on the prompt's least squares (arXiv:2212.07677, Prop. 1).",
        config_cls=OneStepConfig,
        presets=PRESETS,
    )
)
