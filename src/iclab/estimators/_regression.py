r"""In-context least squares, ridge and Bayes posterior mean, batched over prompts: the
Bayes-optimal reference of arXiv:2511.01292 (Demir & Doğan, Eq. 9; docs/papers/temperature.md §3.4).

All estimators read only the ``n`` context pairs of a :class:`~iclab.data.RegressionBatch` and predict the query
label :math:`\hat y=\hat{\mathbf w}^\top\mathbf x_l`. With context inputs :math:`\mathbf X\in\mathbb R^{n\times d}`
and labels :math:`\mathbf y`:

* OLS (minimum norm): :math:`\hat{\mathbf w}=\mathbf X^+\mathbf y`.
* ridge: :math:`\hat{\mathbf w}=(\mathbf X^\top\mathbf X+\lambda\mathbf I)^{-1}\mathbf X^\top\mathbf y`.
* Bayes posterior mean, Eq. 9 of the paper:
  :math:`\hat{\mathbf w}=(\bar{\mathbf X}^\top\bar{\mathbf X}/\sigma^2+\boldsymbol\Sigma_w^{-1})^{-1}
  (\bar{\mathbf X}^\top\bar{\mathbf y}/\sigma^2+\boldsymbol\Sigma_w^{-1}\boldsymbol\mu_w)`, with
  :math:`\bar{\mathbf X},\bar{\mathbf y}` the context centred over its ``n`` rows (``center=True``, as the paper
  writes it). ``center=False`` gives the exact posterior mean of :math:`\mathbf w` given the raw context
  (the Bayes-optimal predictor for the model y = wᵀx + ε, whatever μx is); both agree when μx = 0 up to O(1/n).
  For n < d (and σ = 0, as a pseudo-inverse) it is computed in the equivalent kernel form
  :math:`\boldsymbol\mu_w+\boldsymbol\Sigma_w\mathbf X^\top(\mathbf X\boldsymbol\Sigma_w\mathbf X^\top+\sigma^2\mathbf I)^{-1}
  (\mathbf y-\mathbf X\boldsymbol\mu_w)`.

"Test-Bayes" uses the test prior and noise, "train-Bayes" the pretraining ones (note §3.4):
:func:`bayes_for` builds either from a :class:`~iclab.data.GaussianRegression`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from iclab.data import GaussianRegression, RegressionBatch
from iclab.errors import ConfigError

__all__ = [
    "ols_weights",
    "ridge_weights",
    "bayes_posterior_mean",
    "OLS",
    "Ridge",
    "BayesPosteriorMean",
    "bayes_for",
    "predict_with",
    "mse",
]


def _context(batch, center: bool) -> tuple[torch.Tensor, torch.Tensor]:
    x, y = batch.context_x, batch.context_y  # (B, n, d), (B, n)
    if center:
        x = x - x.mean(1, keepdim=True)
        y = y - y.mean(1, keepdim=True)
    return x, y


def ols_weights(batch: RegressionBatch, center: bool = False) -> torch.Tensor:
    r"""Minimum-norm least squares :math:`\mathbf X^+\mathbf y` per prompt, ``(B, d)``."""
    x, y = _context(batch, center)
    return (torch.linalg.pinv(x) @ y.unsqueeze(-1)).squeeze(-1)  # (B, d)


def ridge_weights(batch: RegressionBatch, lam: float, center: bool = False) -> torch.Tensor:
    r"""Ridge :math:`(\mathbf X^\top\mathbf X+\lambda\mathbf I)^{-1}\mathbf X^\top\mathbf y` per prompt, ``(B, d)``."""
    if not np.isfinite(lam) or lam <= 0:
        raise ConfigError("lam", lam, "a finite ridge penalty > 0")
    x, y = _context(batch, center)
    d = x.shape[-1]
    gram = x.transpose(1, 2) @ x + lam * torch.eye(d, dtype=x.dtype, device=x.device)  # (B, d, d)
    return torch.linalg.solve(gram, (x.transpose(1, 2) @ y.unsqueeze(-1))).squeeze(-1)  # (B, d)


def _prior(mu_w: Any, cov_w: Any, d: int, like: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    from iclab.data import as_covariance, as_mean

    mu = torch.as_tensor(as_mean("mu_w", mu_w, d), dtype=like.dtype, device=like.device)  # (d,)
    cov = torch.as_tensor(as_covariance("cov_w", cov_w, d), dtype=like.dtype, device=like.device)  # (d, d)
    return mu, cov


def bayes_posterior_mean(
    batch: RegressionBatch, mu_w: Any = None, cov_w: Any = None, sigma: float = 0.0, center: bool = True
) -> torch.Tensor:
    """Posterior mean of w under the prior N(mu_w, cov_w) and noise sigma, Eq. 9; ``(B, d)``.

    ``mu_w``/``cov_w`` accept what :class:`~iclab.data.GaussianRegression` accepts (None, float, vector, matrix).
    """
    if not np.isfinite(sigma) or sigma < 0:
        raise ConfigError("sigma", sigma, "a finite noise level >= 0")
    x, y = _context(batch, center)  # (B, n, d), (B, n)
    d = x.shape[-1]
    mu, cov = _prior(mu_w, cov_w, d, x)
    resid = y - x @ mu  # (B, n)
    n = x.shape[1]
    if sigma > 0 and n < d:  # kernel form, well conditioned when the context is short
        k = x @ cov @ x.transpose(1, 2) + sigma**2 * torch.eye(n, dtype=x.dtype, device=x.device)  # (B, n, n)
        alpha = torch.linalg.solve(k, resid.unsqueeze(-1))  # (B, n, 1)
        return mu + (cov @ x.transpose(1, 2) @ alpha).squeeze(-1)  # (B, d)
    if sigma > 0:
        prec = torch.linalg.inv(cov)  # (d, d)
        lhs = x.transpose(1, 2) @ x + sigma**2 * prec  # (B, d, d)
        delta = torch.linalg.solve(lhs, x.transpose(1, 2) @ resid.unsqueeze(-1))  # (B, d, 1)
        return mu + delta.squeeze(-1)
    half = torch.linalg.cholesky(cov)  # (d, d), cov = half half^T
    xh = x @ half  # (B, n, d)
    return mu + ((half @ torch.linalg.pinv(xh)) @ resid.unsqueeze(-1)).squeeze(-1)  # (B, d)


def predict_with(w_hat: torch.Tensor, batch: RegressionBatch) -> torch.Tensor:
    r""":math:`\hat y=\hat{\mathbf w}^\top\mathbf x_l`, ``(B,)``."""
    return (w_hat * batch.query_x).sum(-1)


def mse(y_hat: torch.Tensor, batch: RegressionBatch) -> torch.Tensor:
    """Mean squared error against the query's true label."""
    return ((y_hat - batch.target) ** 2).mean()


@dataclass(frozen=True)
class OLS:
    """Minimum-norm least squares predictor (``predict(batch) -> (B,)``)."""

    center: bool = False

    def predict(self, batch) -> torch.Tensor:
        return predict_with(ols_weights(batch, self.center), batch)


@dataclass(frozen=True)
class Ridge:
    """Ridge predictor with penalty ``lam`` (``predict(batch) -> (B,)``)."""

    lam: float
    center: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.lam, (int, float)) or not np.isfinite(self.lam) or self.lam <= 0:
            raise ConfigError("lam", self.lam, "a finite ridge penalty > 0")

    def predict(self, batch) -> torch.Tensor:
        return predict_with(ridge_weights(batch, self.lam, self.center), batch)


@dataclass(frozen=True, eq=False)
class BayesPosteriorMean:
    """Bayes posterior-mean predictor under the prior N(mu_w, cov_w) and noise sigma (Eq. 9)."""

    mu_w: Any = None
    cov_w: Any = None
    sigma: float = 0.0
    center: bool = True

    def predict(self, batch) -> torch.Tensor:
        return predict_with(bayes_posterior_mean(batch, self.mu_w, self.cov_w, self.sigma, self.center), batch)

    def __repr__(self) -> str:
        def short(v: Any) -> str:
            return "None" if v is None else (repr(float(v)) if np.ndim(v) == 0 else f"<{np.shape(v)}>")

        return (
            f"BayesPosteriorMean(mu_w={short(self.mu_w)}, cov_w={short(self.cov_w)}, sigma={self.sigma}, "
            f"center={self.center})"
        )


def bayes_for(dist: GaussianRegression, center: bool = True) -> BayesPosteriorMean:
    """The Bayes predictor whose prior and noise are those of ``dist`` (a GaussianRegression): pass the test
    distribution for test-Bayes, the pretraining distribution for train-Bayes."""
    m = dist.moments()
    return BayesPosteriorMean(m["mu_w"], m["cov_w"], m["sigma"], center)
