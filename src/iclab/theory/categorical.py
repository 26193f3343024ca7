r"""Functional gradient descent for categorical in-context learning, the recursion that the attention blocks of
Wang et al., "On understanding attention-based in-context learning for categorical data" (arXiv:2405.17248)
compute exactly (docs/papers/categorical.md §3.2, §4.1). Pure NumPy, on ``(x, y)`` directly, without tokens:

.. math:: f_{k+1}(x) = f_k(x) + \operatorname{diag}(\alpha_k)\sum_{j=1}^N \big[w_{e,y_j}-\mathbb E_{f_k(x_j)}[w_e]\big]
          \,\kappa_{\cdot j}(x),\qquad f_0\equiv 0,\qquad \mathbb E_f[w_e]=\sum_c w_{e,c}\,\mathrm{softmax}_c(W_e^\top f),

with :math:`\kappa_{\cdot j}` the normalised kernel weights of the update head (docs/papers/categorical.md §3.5:
linear and RBF divided by N, softmax normalised over j). :class:`iclab.models.FunctionalGDModel` must reproduce
it block by block. The stationarity check of Theorems 1–2, which needs backpropagation through the transformer,
is :func:`iclab.models.stationarity_check`.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["expected_embedding", "kernel_weights", "functional_gd"]


def _softmax(z: np.ndarray) -> np.ndarray:
    """Softmax over the last axis (max-shifted)."""
    e = np.exp(z - z.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def expected_embedding(f: ArrayLike, W_e: ArrayLike) -> np.ndarray:
    r""":math:`\mathbb E_f[w_e]=\sum_c w_{e,c}\,\mathrm{softmax}_c(W_e^\top f)`; ``f (..., d')``, ``W_e (d', C)`` ->
    ``(..., d')`` (the quantity the cross-attention computes, docs/papers/categorical.md §3.4)."""
    f, W_e = np.asarray(f, dtype=float), np.asarray(W_e, dtype=float)
    return _softmax(f @ W_e) @ W_e.T


def kernel_weights(
    x_query: ArrayLike, x_keys: ArrayLike, kernel: str, scale: float, d_token: int | None = None
) -> np.ndarray:
    r"""Normalised kernel weights ``(B, T, N)`` of the update head (docs/papers/categorical.md §3.5):

    * linear: :math:`s\,x_i^\top x_j / N`; * RBF: :math:`\exp(-\|x_i-x_j\|^2/(2s^2))/N`;
    * softmax: :math:`\mathrm{softmax}_j(s\,x_i^\top x_j/\sqrt{D})`, ``D = d_token`` (the token width d+3d').

    Shapes: ``x_query (B, T, d)``, ``x_keys (B, N, d)``.
    """
    xq, xk = np.asarray(x_query, dtype=float), np.asarray(x_keys, dtype=float)
    n = xk.shape[1]
    if kernel == "linear":
        return scale * xq @ xk.transpose(0, 2, 1) / n
    if kernel == "rbf":
        sq = ((xq[:, :, None, :] - xk[:, None, :, :]) ** 2).sum(-1)  # (B, T, N)
        return np.exp(-sq / (2 * scale**2)) / n
    if kernel == "softmax":
        D = d_token if d_token is not None else xq.shape[-1]
        return _softmax(scale * xq @ xk.transpose(0, 2, 1) / math.sqrt(D))
    raise ValueError(f"unknown kernel {kernel!r}")


def functional_gd(
    x: ArrayLike,
    y: ArrayLike,
    x_query: ArrayLike,
    W_e: ArrayLike,
    alphas: Sequence[float],
    kernel: str,
    scale: float = 1.0,
) -> tuple[list, list]:
    r"""K steps of categorical functional GD (docs/papers/categorical.md §3.2), K = ``len(alphas)``.

    Shapes: ``x (B, N, d)``, ``y (B, N)`` integer labels, ``x_query (B, Q, d)``, ``W_e (d', C)``,
    ``alphas (K, d')``. Returns ``(f_context, f_query)``: lists of K+1 arrays ``(B, N, d')`` and ``(B, Q, d')``,
    step 0 = zeros.
    """
    x, xq = np.asarray(x, dtype=float), np.asarray(x_query, dtype=float)
    W_e, alphas = np.asarray(W_e, dtype=float), np.asarray(alphas, dtype=float)
    d, dp = x.shape[-1], W_e.shape[0]
    xs = np.concatenate([x, xq], 1)  # (B, T, d)
    kw = kernel_weights(xs, x, kernel, scale, d_token=d + 3 * dp)  # (B, T, N)
    w_lab = W_e.T[np.asarray(y)]  # (B, N, d')
    f = np.zeros((xs.shape[0], xs.shape[1], dp))  # (B, T, d')
    n = x.shape[1]
    fc, fq = [f[:, :n]], [f[:, n:]]
    for a in alphas:
        resid = w_lab - expected_embedding(f[:, :n], W_e)  # (B, N, d')
        f = f + (kw @ resid) * a  # (B, T, d')
        fc.append(f[:, :n])
        fq.append(f[:, n:])
    return fc, fq
