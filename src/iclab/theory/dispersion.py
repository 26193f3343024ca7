r"""Closed forms of "Softmax is not enough (for sharp size generalisation)", arXiv:2410.01104, in NumPy
(docs/papers/dispersion.md §3–4).

* Lemma 2.1: :math:`e^{-\delta/\theta}/n \le \mathrm{softmax}_\theta(e)_k \le e^{\delta/\theta}/n` (note §3.2), and
  the top item :math:`\alpha_{\max}\le e^{\delta/\theta}/(e^{\delta/\theta}+n-1)` (derived, note §4.1).
* Prop. 3.1 with Lemma 2.1: staying :math:`(1-\varepsilon)`-sharp at size n needs
  :math:`\delta/\theta \ge \log\frac{(n-1)(1-\varepsilon)}{\varepsilon}` and
  :math:`\sigma_{\max}(Q)\sigma_{\max}(K)\ge \theta\log(\cdot)/(2\|y\|\max_i\|x_i\|)` (note §3.4, §4.2).
* :math:`\partial H/\partial\beta = -\beta\,\mathrm{Var}_p(e)` (derived, note §4.3).
* β(H) = max(poly(H), 1) above the gate (Fig. 4, note §3.5), its active range (note §4.4), and the per-entropy-bin
  refit of the polynomial (the paper's Fig. 6 fit, target reconstructed in note §4.7: per entropy bin the β that
  best re-sharpens the trained head, then ``np.polyfit(H, β, 4)``).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from numpy.typing import ArrayLike

__all__ = [
    "PAPER_COEFFS",
    "lemma21_bounds",
    "top_coefficient_bound",
    "required_spread",
    "required_qk_product",
    "entropy_beta_derivative",
    "softmax_entropy",
    "beta_of_entropy",
    "beta_active_range",
    "best_beta_per_bin",
    "fit_beta_polynomial",
]

PAPER_COEFFS = (-0.037, 0.481, -2.3, 4.917, -1.791)


def lemma21_bounds(delta: ArrayLike, n: ArrayLike, theta: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    r"""Lemma 2.1 ``(lower, upper)``: :math:`e^{\mp\delta/\theta}/n`."""
    d = np.asarray(delta, float) / theta
    n = np.asarray(n, float)
    return np.exp(-d) / n, np.exp(d) / n


def top_coefficient_bound(delta: ArrayLike, n: ArrayLike, theta: float = 1.0) -> np.ndarray:
    r""":math:`e^{\delta/\theta}/(e^{\delta/\theta}+n-1)`, attained by one logit at the top and n-1 at the bottom."""
    d = np.asarray(delta, float) / theta
    n = np.asarray(n, float)
    return 1.0 / (1.0 + (n - 1) * np.exp(-d))


def required_spread(n: ArrayLike, eps: ArrayLike, theta: float = 1.0) -> np.ndarray:
    r"""Smallest δ with :math:`\alpha_{\max}\ge1-\varepsilon` possible: :math:`\theta\log((n-1)(1-\varepsilon)/\varepsilon)`."""
    n = np.asarray(n, float)
    return theta * np.log(np.maximum(n - 1, 1e-300) * (1 - eps) / eps)


def required_qk_product(
    n: ArrayLike, eps: ArrayLike, theta: float = 1.0, y_norm: float = 1.0, x_max: float = 1.0
) -> np.ndarray:
    r"""Prop. 3.1: :math:`\sigma_{\max}(Q)\sigma_{\max}(K)\ge \delta_{\rm req}/(2\|y\|\max\|x\|)`."""
    return required_spread(n, eps, theta) / (2.0 * y_norm * x_max)


def softmax_entropy(logits: ArrayLike, beta: ArrayLike = 1.0, axis: int = -1) -> np.ndarray:
    """Entropy (nats) of ``softmax(beta * logits)`` along ``axis``."""
    z = beta * np.asarray(logits, float)
    z = z - z.max(axis=axis, keepdims=True)
    p = np.exp(z)
    p /= p.sum(axis=axis, keepdims=True)
    return -(p * np.where(p > 0, np.log(np.where(p > 0, p, 1.0)), 0.0)).sum(axis)


def entropy_beta_derivative(logits: ArrayLike, beta: ArrayLike = 1.0, axis: int = -1) -> np.ndarray:
    r""":math:`\partial H/\partial\beta = -\beta\,\mathrm{Var}_p(e)`, ``p = softmax(beta e)`` (note §4.3)."""
    e = np.asarray(logits, float)
    z = beta * e - (beta * e).max(axis=axis, keepdims=True)
    p = np.exp(z)
    p /= p.sum(axis=axis, keepdims=True)
    mean = (p * e).sum(axis, keepdims=True)
    return -beta * (p * (e - mean) ** 2).sum(axis)


def beta_of_entropy(H: ArrayLike, coeffs: Sequence[float] = PAPER_COEFFS, threshold: float = 0.5) -> np.ndarray:
    r""":math:`\beta(H)=\max(\mathrm{polyval}(C,H),1)` for :math:`H>` threshold, else 1."""
    H = np.asarray(H, float)
    return np.where(H > threshold, np.maximum(np.polyval(coeffs, H), 1.0), 1.0)


def beta_active_range(
    coeffs: Sequence[float] = PAPER_COEFFS, threshold: float = 0.5, h_max: float = 20.0
) -> list[float]:
    """The entropy interval(s) where β > 1: real roots of poly(H) = 1 above ``threshold`` (paper: 0.849 … 5.945)."""
    c = np.array(coeffs, float)
    c[-1] -= 1.0
    r = np.roots(c)
    r = np.sort(r[(np.abs(r.imag) < 1e-9)].real)
    return [float(x) for x in r if threshold < x < h_max]


def best_beta_per_bin(loss_sums: ArrayLike, counts: ArrayLike, beta_grid: ArrayLike) -> np.ndarray:
    """Per entropy bin, the grid β minimising the summed loss ``loss_sums (bins, betas)``; NaN for empty bins."""
    loss_sums, counts = np.asarray(loss_sums, float), np.asarray(counts, float)
    best = np.asarray(beta_grid, float)[np.argmin(loss_sums, axis=1)]
    return np.where(counts > 0, best, np.nan)


def fit_beta_polynomial(
    H: ArrayLike, beta: ArrayLike, weights: ArrayLike | None = None, degree: int = 4
) -> tuple[float, ...]:
    """Weighted least-squares ``np.polyfit(H, beta, degree)`` (highest degree first), skipping NaN bins.
    ``weights``: e.g. the bin counts (each bin's residual is weighted by sqrt(count))."""
    H, beta = np.asarray(H, float), np.asarray(beta, float)
    ok = np.isfinite(H) & np.isfinite(beta)
    w = None if weights is None else np.sqrt(np.asarray(weights, float)[ok])
    return tuple(float(c) for c in np.polyfit(H[ok], beta[ok], degree, w=w))
