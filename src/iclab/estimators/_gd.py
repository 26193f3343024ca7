"""Gradient-descent and kernel predictors of the multi-head softmax paper (spec §2.4, §2.5, §4.3–4.6).

With context ``(x_ℓ, y_ℓ)_{ℓ≤L}``, query ``x_q`` and :math:`\\bar x=\\frac1L\\sum_\\ell x_\\ell`:

* one-step (vanilla) GD from 0: :math:`\\hat y=\\frac\\eta L\\sum_\\ell y_\\ell\\,x_\\ell^\\top x_q` (spec §2.5);
* debiased GD (spec §4.3): :math:`\\hat y=\\frac\\eta L\\sum_\\ell y_\\ell\\,(x_\\ell-\\bar x)^\\top x_q
  =\\frac\\eta L\\sum_\\ell(y_\\ell-\\bar y)\\,x_\\ell^\\top x_q`;
* preconditioned (debiased) GD (spec §4.6): :math:`\\frac\\eta L\\sum_\\ell y_\\ell(x_\\ell-\\bar x)^\\top\\Omega x_q`;
* sum of kernel regressors (spec §2.4): :math:`\\sum_h\\mu_h\\sum_\\ell y_\\ell\\,\\mathrm{smax}_\\ell(\\omega_h x_\\ell^\\top x_q)`,
  whose ``H = 1`` case with ``ω = 1/√d`` is the single-head Nadaraya–Watson estimator (spec §4.5).

Every function takes a batch with ``x`` ``(B, L+1, d)`` (query last) and ``y`` ``(B, L+1)`` and returns
``(B,)``; the query label ``y[:, -1]`` is never read. Dataclass wrappers give the ``predict(batch)`` contract.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import torch

from iclab.attention import normalise
from iclab.errors import ConfigError

__all__ = ["one_step_gd", "debiased_gd", "preconditioned_gd", "kernel_regression", "OneStepGD", "DebiasedGD",
           "PreconditionedGD", "KernelRegression"]


def _split(batch) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    x, y = batch.x, batch.y
    return x[:, :-1], y[:, :-1], x[:, -1]  # (B, L, d), (B, L), (B, d)


def _check_eta(eta: Any) -> None:
    if not torch.isfinite(torch.as_tensor(eta, dtype=torch.float64)).all():
        raise ConfigError("eta", eta, "a finite step size")


def one_step_gd(batch, eta: float) -> torch.Tensor:
    """:math:`\\frac\\eta L\\sum_\\ell y_\\ell x_\\ell^\\top x_q`, ``(B,)`` (one GD step from w = 0 on the
    squared loss, spec §2.5)."""
    _check_eta(eta)
    xc, yc, xq = _split(batch)
    w = torch.einsum("bl,bld->bd", yc, xc) / xc.shape[1]  # (B, d)
    return eta * (w * xq).sum(-1)


def preconditioned_gd(batch, eta: float, omega: torch.Tensor | None = None, debias: bool = True) -> torch.Tensor:
    """:math:`\\frac\\eta L\\sum_\\ell y_\\ell(x_\\ell-\\bar x)^\\top\\Omega x_q` (``debias=False``: no
    centring), ``omega`` a ``(d, d)`` matrix (None: identity), ``(B,)`` (spec §4.6)."""
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


def debiased_gd(batch, eta: float) -> torch.Tensor:
    """Debiased one-step GD of spec §4.3, :math:`\\frac\\eta L\\sum_\\ell y_\\ell(x_\\ell-\\bar x)^\\top x_q`, ``(B,)``."""
    return preconditioned_gd(batch, eta, None, debias=True)


def kernel_regression(batch, omega: Sequence[float], mu: Sequence[float], attention: str = "softmax") -> torch.Tensor:
    """Sum of kernel regressors (spec §2.4):
    :math:`\\sum_h\\mu_h\\sum_\\ell y_\\ell\\,\\mathrm{norm}_\\ell(\\omega_h x_\\ell^\\top x_q)`, ``(B,)``."""
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
    """``predict(batch)`` = :func:`kernel_regression` (sum of softmax kernel regressors, spec §2.4)."""

    omega: tuple[float, ...]
    mu: tuple[float, ...]
    attention: str = "softmax"

    def predict(self, batch) -> torch.Tensor:
        return kernel_regression(batch, self.omega, self.mu, self.attention)
