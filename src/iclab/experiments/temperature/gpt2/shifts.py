r"""The test distributions of ``temperature-gpt2-regression`` and the one-layer theory's τ_opt for each:
arXiv:2511.01292 (Demir & Doğan), shifts of §4.2 (docs/papers/temperature.md §3.8, §5.2).

The isotropic optimum of the one-layer model (docs/papers/temperature.md §4.5) is
:math:`\tau_{\rm opt}=\frac{a(1+d/l)+\sigma^2/(bl)}{1+\sigma_{\rm tr}^2/l}`; the paper says the one-layer trends
carry over to GPT-2, so it is the reference the grid-best τ is set against.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from iclab.data import GaussianRegression
from iclab.experiments.temperature.gpt2.config import SHIFTS, TemperatureGPT2Config
from iclab.theory.temperature import tau_opt_isotropic

__all__ = ["shift_distribution", "theory_tau", "zero_predictor_error"]


def shift_distribution(cfg: TemperatureGPT2Config, name: str) -> GaussianRegression:
    """The test distribution of shift ``name`` (float32): x ~ N(μx, a·I), w ~ N(μw, b·I), noise σ."""
    a, b, mw, sig, mx = SHIFTS[name]
    return GaussianRegression(
        cfg.d,
        cfg.n,
        mu_x=mx,
        cov_x=a,
        mu_w=mw / math.sqrt(cfg.d),
        cov_w=b,
        sigma=cfg.sigma_train if sig is None else sig,
        dtype=torch.float32,
    )


def theory_tau(cfg: TemperatureGPT2Config, name: str) -> float:
    r"""One-layer isotropic τ_opt of shift ``name`` (note §4.5):
    :math:`(a(1+d/l)+\sigma^2/(bl))/(1+\sigma_{\rm tr}^2/l)` with ``l = n + 1``."""
    a, b, _, sig, _ = SHIFTS[name]
    sigma = cfg.sigma_train if sig is None else sig
    return float(tau_opt_isotropic(cfg.d, cfg.n + 1, a=a, b=b, sigma=sigma, sigma_tr=cfg.sigma_train))


def zero_predictor_error(dist: GaussianRegression) -> float:
    r"""``Tr(AB) + σ²`` with :math:`\mathbf A=\boldsymbol\Sigma_x+\boldsymbol\mu_x\boldsymbol\mu_x^\top`,
    :math:`\mathbf B=\boldsymbol\Sigma_w+\boldsymbol\mu_w\boldsymbol\mu_w^\top`: the error of predicting 0, by
    which every error of the experiment is normalised (note §5.5)."""
    m = dist.moments()
    A = m["cov_x"] + np.outer(m["mu_x"], m["mu_x"])
    B = m["cov_w"] + np.outer(m["mu_w"], m["mu_w"])
    return float(np.trace(A @ B) + m["sigma"] ** 2)
