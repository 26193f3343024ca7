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

from iclab.domain import array, broadcastable, finite_result, integer, number, positive
from iclab.errors import ConfigError

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
    r"""Lemma 2.1 ``(lower, upper)``: :math:`e^{\mp\delta/\theta}/n`.

    Arguments: ``delta`` finite numbers >= 0; ``n`` finite numbers >= 1 (items); ``theta`` a finite number > 0;
    ``delta`` and ``n`` broadcast together."""
    d, n = _spread_over_theta(delta, theta), _items(n)
    with np.errstate(over="ignore"):
        bounds = np.exp(-d) / n, np.exp(d) / n
    return finite_result(bounds, delta=delta, n=n, theta=theta)


def _spread_over_theta(delta: ArrayLike, theta: float) -> np.ndarray:
    """δ/θ after checking both (δ finite >= 0, θ finite > 0)."""
    return array("delta", delta, low=0, min_size=0) / positive("theta", theta, "a temperature")


def _items(n: ArrayLike) -> np.ndarray:
    """The item counts ``n``: finite numbers >= 1."""
    return array("n", n, low=1, min_size=0, why="items")


def top_coefficient_bound(delta: ArrayLike, n: ArrayLike, theta: float = 1.0) -> np.ndarray:
    r""":math:`e^{\delta/\theta}/(e^{\delta/\theta}+n-1)`, attained by one logit at the top and n-1 at the bottom.

    Arguments: ``delta`` finite numbers >= 0; ``n`` finite numbers >= 1; ``theta`` a finite number > 0."""
    d, n = _spread_over_theta(delta, theta), _items(n)
    return 1.0 / (1.0 + (n - 1) * np.exp(-d))


def required_spread(n: ArrayLike, eps: ArrayLike, theta: float = 1.0) -> np.ndarray:
    r"""Smallest δ with :math:`\alpha_{\max}\ge1-\varepsilon` possible: :math:`\theta\log((n-1)(1-\varepsilon)/\varepsilon)`.

    Arguments: ``n`` finite numbers >= 1; ``eps`` numbers in (0, 1); ``theta`` a finite number > 0."""
    n, theta = _items(n), positive("theta", theta, "a temperature")
    eps = array("eps", eps, above=0, below=1, min_size=0, why="the mass allowed off the top item")
    return finite_result(theta * np.log(np.maximum(n - 1, 1e-300) * (1 - eps) / eps), n=n, eps=eps, theta=theta)


def required_qk_product(
    n: ArrayLike, eps: ArrayLike, theta: float = 1.0, y_norm: float = 1.0, x_max: float = 1.0
) -> np.ndarray:
    r"""Prop. 3.1: :math:`\sigma_{\max}(Q)\sigma_{\max}(K)\ge \delta_{\rm req}/(2\|y\|\max\|x\|)`.

    Arguments: as :func:`required_spread`; ``y_norm``, ``x_max`` finite numbers > 0."""
    scale = 2.0 * positive("y_norm", y_norm, "a norm") * positive("x_max", x_max, "a norm")
    out = required_spread(n, eps, theta) / scale
    return finite_result(out, n=n, eps=eps, theta=theta, y_norm=y_norm, x_max=x_max)


def softmax_entropy(logits: ArrayLike, beta: ArrayLike = 1.0, axis: int = -1) -> np.ndarray:
    """Entropy (nats) of ``softmax(beta * logits)`` along ``axis``.

    Arguments: ``logits`` finite numbers with at least one entry along ``axis``; ``beta`` finite numbers >= 0, one
    per row: broadcasting to the logits with size 1 along ``axis``; ``axis`` an integer naming one of the logits'
    axes."""
    logits, beta = _logits_and_beta(logits, beta, axis)
    z = finite_result(beta * logits, logits=logits, beta=beta)
    z = z - z.max(axis=axis, keepdims=True)
    p = np.exp(z)
    p /= p.sum(axis=axis, keepdims=True)
    return -(p * np.where(p > 0, np.log(np.where(p > 0, p, 1.0)), 0.0)).sum(axis)


def entropy_beta_derivative(logits: ArrayLike, beta: ArrayLike = 1.0, axis: int = -1) -> np.ndarray:
    r""":math:`\partial H/\partial\beta = -\beta\,\mathrm{Var}_p(e)`, ``p = softmax(beta e)`` (note §4.3).

    Arguments: as :func:`softmax_entropy`."""
    e, beta = _logits_and_beta(logits, beta, axis)
    be = finite_result(beta * e, logits=logits, beta=beta)
    z = be - be.max(axis=axis, keepdims=True)
    p = np.exp(z)
    p /= p.sum(axis=axis, keepdims=True)
    mean = (p * e).sum(axis, keepdims=True)
    return finite_result(-np.squeeze(beta, axis) * (p * (e - mean) ** 2).sum(axis), logits=logits, beta=beta)


def _logits_and_beta(logits: ArrayLike, beta: ArrayLike, axis: int) -> tuple[np.ndarray, np.ndarray]:
    """The checked ``logits`` (at least one axis, non-empty along ``axis``) and ``beta`` (finite, >= 0)."""
    e = array("logits", logits, min_size=0)
    axis = integer("axis", axis, low=-max(e.ndim, 1), high=max(e.ndim, 1) - 1)
    if e.ndim == 0 or e.shape[axis] == 0:
        raise ConfigError("logits", f"shape {e.shape}", f"at least one logit along axis {axis}")
    b = array("beta", beta, low=0, min_size=0, why="an inverse temperature")
    broadcastable("beta", b, "logits", e)
    per_row = (1,) * (e.ndim - b.ndim) + b.shape if b.ndim <= e.ndim else None
    if per_row is None or np.broadcast_shapes(b.shape, e.shape) != e.shape or per_row[axis] != 1:
        raise ConfigError(
            "beta",
            f"shape {b.shape}",
            f"one inverse temperature per row: a shape that broadcasts to the logits' {e.shape} with size 1 "
            f"along axis {axis}",
        )
    b = b.reshape(per_row)
    return e, b


def beta_of_entropy(H: ArrayLike, coeffs: Sequence[float] = PAPER_COEFFS, threshold: float = 0.5) -> np.ndarray:
    r""":math:`\beta(H)=\max(\mathrm{polyval}(C,H),1)` for :math:`H>` threshold, else 1.

    Arguments: ``H`` finite numbers >= 0 (entropies, nats); ``coeffs`` at least one finite number; ``threshold`` a
    finite number."""
    H = array("H", H, low=0, min_size=0, why="entropies")
    c = array("coeffs", coeffs, ndim=1)
    threshold = number("threshold", threshold)
    out = np.where(H > threshold, np.maximum(np.polyval(c, H), 1.0), 1.0)
    return finite_result(out, H=H, coeffs=coeffs)


def beta_active_range(
    coeffs: Sequence[float] = PAPER_COEFFS, threshold: float = 0.5, h_max: float = 20.0
) -> list[float]:
    """The entropy interval(s) where β > 1: real roots of poly(H) = 1 above ``threshold`` (paper: 0.849 … 5.945).

    Arguments: ``coeffs`` finite numbers, at least two, the first non-zero; ``threshold`` < ``h_max`` finite
    numbers."""
    c = array("coeffs", coeffs, ndim=1, min_size=2).copy()
    if c[0] == 0:
        raise ConfigError("coeffs", coeffs, "a polynomial whose leading coefficient is not 0")
    threshold, h_max = number("threshold", threshold), number("h_max", h_max)
    if h_max <= threshold:
        raise ConfigError("h_max", h_max, f"a number > threshold={threshold:g}")
    c[-1] -= 1.0
    r = np.roots(c)
    r = np.sort(r[(np.abs(r.imag) < 1e-9)].real)
    return [float(x) for x in r if threshold < x < h_max]


def best_beta_per_bin(loss_sums: ArrayLike, counts: ArrayLike, beta_grid: ArrayLike) -> np.ndarray:
    """Per entropy bin, the grid β minimising the summed loss ``loss_sums (bins, betas)``; NaN for empty bins (the
    one NaN this module returns, on purpose: a bin with no sample has no best β).

    Arguments: ``loss_sums`` finite numbers of shape (bins, betas), betas >= 1; ``counts`` (bins,) finite numbers
    >= 0; ``beta_grid`` (betas,) finite numbers > 0."""
    loss_sums = array("loss_sums", loss_sums, ndim=2, min_size=0)
    counts = array("counts", counts, shape=(loss_sums.shape[0],), low=0, min_size=0)
    grid = array("beta_grid", beta_grid, shape=(loss_sums.shape[1],), above=0, why="one beta per column of loss_sums")
    best = grid[np.argmin(loss_sums, axis=1)]
    return np.where(counts > 0, best, np.nan)


def fit_beta_polynomial(
    H: ArrayLike, beta: ArrayLike, weights: ArrayLike | None = None, degree: int = 4
) -> tuple[float, ...]:
    """Weighted least-squares ``np.polyfit(H, beta, degree)`` (highest degree first), skipping NaN bins.
    ``weights``: e.g. the bin counts (each bin's residual is weighted by sqrt(count)).

    Arguments: ``H``, ``beta`` and ``weights`` 1-D of one length (NaN marks a skipped bin in ``H`` or ``beta``;
    no infinities); ``weights`` finite numbers >= 0; ``degree`` an integer in 0..20 with more than ``degree``
    bins left."""
    H = array("H", H, ndim=1, finite=False, min_size=0)
    beta = array("beta", beta, shape=(H.size,), finite=False, min_size=0, why="one beta per entropy bin")
    if np.isinf(H).any() or np.isinf(beta).any():
        raise ConfigError("H" if np.isinf(H).any() else "beta", "an infinite entry", "finite numbers or NaN")
    degree = integer("degree", degree, low=0, high=20)
    ok = np.isfinite(H) & np.isfinite(beta)
    weights = None if weights is None else array("weights", weights, shape=(H.size,), low=0, min_size=0)
    if ok.sum() <= degree or (weights is not None and (weights[ok] > 0).sum() <= degree):
        raise ConfigError("H", f"{int(ok.sum())} usable bins", f"more than degree={degree} bins with a weight > 0")
    w = None if weights is None else np.sqrt(weights[ok])
    return finite_result(tuple(float(c) for c in np.polyfit(H[ok], beta[ok], degree, w=w)), H=H, beta=beta)
