r"""Gradient-descent and kernel predictors of arXiv:2503.12734 (He, Pan, Chen, Yang; the multi-head softmax
paper's baselines and the predictors its trained models implement, docs/papers/multihead.md §3.3–3.9).

With context ``(x_ℓ, y_ℓ)_{ℓ≤L}``, query ``x_q`` and :math:`\bar x=\frac1L\sum_\ell x_\ell` (sections of that note):

* one-step (vanilla) GD from 0: :math:`\hat y=\frac\eta L\sum_\ell y_\ell\,x_\ell^\top x_q` (§3.4);
* debiased GD (§3.6): :math:`\hat y=\frac\eta L\sum_\ell y_\ell\,(x_\ell-\bar x)^\top x_q
  =\frac\eta L\sum_\ell(y_\ell-\bar y)\,x_\ell^\top x_q`;
* preconditioned (debiased) GD (§3.9): :math:`\frac\eta L\sum_\ell y_\ell(x_\ell-\bar x)^\top\Omega x_q`;
* sum of kernel regressors (§3.3): :math:`\sum_h\mu_h\sum_\ell y_\ell\,\mathrm{smax}_\ell(\omega_h x_\ell^\top x_q)`,
  whose ``H = 1`` case with ``ω = 1/√d`` is the single-head Nadaraya–Watson estimator (§3.8).

Every function takes a batch with ``x`` ``(B, L+1, d)`` (query last) and ``y`` ``(B, L+1)`` and returns
``(B,)``; the query label ``y[:, -1]`` is never read. Dataclass wrappers give the ``predict(batch)`` contract.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import torch

from iclab.attention import normalise
from iclab.data import RegressionBatch
from iclab.errors import ConfigError

__all__ = [
    "one_step_gd",
    "debiased_gd",
    "preconditioned_gd",
    "kernel_regression",
    "OneStepGD",
    "DebiasedGD",
    "PreconditionedGD",
    "KernelRegression",
]


def _split(batch) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    x, y = batch.x, batch.y
    return x[:, :-1], y[:, :-1], x[:, -1]  # (B, L, d), (B, L), (B, d)


def _check_eta(eta: Any) -> None:
    if not torch.isfinite(torch.as_tensor(eta, dtype=torch.float64)).all():
        raise ConfigError("eta", eta, "a finite step size")


def one_step_gd(batch: RegressionBatch, eta: float) -> torch.Tensor:
    r""":math:`\frac\eta L\sum_\ell y_\ell x_\ell^\top x_q`, ``(B,)`` (one GD step from w = 0 on the
    squared loss; docs/papers/multihead.md §3.4)."""
    _check_eta(eta)
    xc, yc, xq = _split(batch)
    w = torch.einsum("bl,bld->bd", yc, xc) / xc.shape[1]  # (B, d)
    return eta * (w * xq).sum(-1)


def preconditioned_gd(
    batch: RegressionBatch, eta: float, omega: torch.Tensor | None = None, debias: bool = True
) -> torch.Tensor:
    r""":math:`\frac\eta L\sum_\ell y_\ell(x_\ell-\bar x)^\top\Omega x_q` (``debias=False``: no
    centring), ``omega`` a ``(d, d)`` matrix (None: identity), ``(B,)`` (docs/papers/multihead.md §3.9)."""
    _check_eta(eta)
    xc, yc, xq = _split(batch)
    if debias:
        xc = xc - xc.mean(1, keepdim=True)  # (B, L, d)
    w = torch.einsum("bl,bld->bd", yc, xc) / xc.shape[1]  # (B, d)
    if omega is not None:
        omega = torch.as_tensor(omega, dtype=xq.dtype, device=xq.device)
        if omega.shape != (xq.shape[-1],) * 2:
            raise ConfigError("omega", f"shape {tuple(omega.shape)}", f"a ({xq.shape[-1]}, {xq.shape[-1]}) matrix")
        xq = xq @ omega.T  # (B, d)
    return eta * (w * xq).sum(-1)


def debiased_gd(batch: RegressionBatch, eta: float) -> torch.Tensor:
    r"""Debiased one-step GD, :math:`\frac\eta L\sum_\ell y_\ell(x_\ell-\bar x)^\top x_q`, ``(B,)``
    (arXiv:2503.12734, Thm 1; docs/papers/multihead.md §3.6)."""
    return preconditioned_gd(batch, eta, None, debias=True)


def kernel_regression(
    batch: RegressionBatch, omega: Sequence[float], mu: Sequence[float], attention: str = "softmax"
) -> torch.Tensor:
    r"""Sum of kernel regressors (docs/papers/multihead.md §3.3):
    :math:`\sum_h\mu_h\sum_\ell y_\ell\,\mathrm{norm}_\ell(\omega_h x_\ell^\top x_q)`, ``(B,)``."""
    xc, yc, xq = _split(batch)
    om = torch.as_tensor(omega, dtype=xq.dtype, device=xq.device).flatten()  # (H,)
    mu_t = torch.as_tensor(mu, dtype=xq.dtype, device=xq.device).flatten()  # (H,)
    if om.shape != mu_t.shape:
        raise ConfigError("mu", f"shape {tuple(mu_t.shape)}", f"the shape of omega {tuple(om.shape)}")
    dots = torch.einsum("bld,bd->bl", xc, xq)  # (B, L)
    w = normalise(attention, om[None, :, None] * dots[:, None, :])  # (B, H, L)
    return torch.einsum("h,bhl,bl->b", mu_t, w, yc)


@dataclass(frozen=True)
class OneStepGD:
    """``predict(batch)`` = :func:`one_step_gd` with step ``eta``."""

    eta: float

    def predict(self, batch) -> torch.Tensor:
        return one_step_gd(batch, self.eta)


@dataclass(frozen=True)
class DebiasedGD:
    """``predict(batch)`` = :func:`debiased_gd` with step ``eta``."""

    eta: float

    def predict(self, batch) -> torch.Tensor:
        return debiased_gd(batch, self.eta)


@dataclass(frozen=True, eq=False)
class PreconditionedGD:
    """``predict(batch)`` = :func:`preconditioned_gd` with step ``eta`` and preconditioner ``omega``."""

    eta: float
    omega: Any = None
    debias: bool = True

    def predict(self, batch) -> torch.Tensor:
        return preconditioned_gd(batch, self.eta, self.omega, self.debias)


@dataclass(frozen=True)
class KernelRegression:
    """``predict(batch)`` = :func:`kernel_regression` (sum of softmax kernel regressors)."""

    omega: tuple[float, ...]
    mu: tuple[float, ...]
    attention: str = "softmax"

    def predict(self, batch) -> torch.Tensor:
        return kernel_regression(batch, self.omega, self.mu, self.attention)
