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

from iclab.budget import check_call
from iclab.domain import array, choice, finite_result, integer, positive
from iclab.errors import ConfigError

__all__ = ["expected_embedding", "kernel_weights", "functional_gd"]


def _softmax(z: np.ndarray) -> np.ndarray:
    """Softmax over the last axis (max-shifted)."""
    e = np.exp(z - z.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def expected_embedding(f: ArrayLike, W_e: ArrayLike) -> np.ndarray:
    r""":math:`\mathbb E_f[w_e]=\sum_c w_{e,c}\,\mathrm{softmax}_c(W_e^\top f)`; ``f (..., d')``, ``W_e (d', C)`` ->
    ``(..., d')`` (the quantity the cross-attention computes, docs/papers/categorical.md §3.4).

    Arguments: ``W_e`` a finite (d', C) matrix, C >= 1; ``f`` finite, at least one axis, its last of length d'."""
    W_e = array("W_e", W_e, ndim=2)
    f = array("f", f, min_size=0)
    if f.ndim == 0 or f.shape[-1] != W_e.shape[0]:
        raise ConfigError("f", f"shape {f.shape}", f"shape (..., {W_e.shape[0]}): d' = W_e.shape[0]")
    with np.errstate(over="ignore", invalid="ignore"):
        return finite_result(_softmax(f @ W_e) @ W_e.T, f=f, W_e=W_e)


def kernel_weights(
    x_query: ArrayLike, x_keys: ArrayLike, kernel: str, scale: float, d_token: int | None = None
) -> np.ndarray:
    r"""Normalised kernel weights ``(B, T, N)`` of the update head (docs/papers/categorical.md §3.5):

    * linear: :math:`s\,x_i^\top x_j / N`; * RBF: :math:`\exp(-\|x_i-x_j\|^2/(2s^2))/N`;
    * softmax: :math:`\mathrm{softmax}_j(s\,x_i^\top x_j/\sqrt{D})`, ``D = d_token`` (the token width d+3d').

    Shapes: ``x_query (B, T, d)``, ``x_keys (B, N, d)``.

    Arguments: ``x_query`` finite (B, T, d) and ``x_keys`` finite (B, N, d) with B, T, N, d >= 1; ``kernel`` one of
    'linear', 'rbf', 'softmax'; ``scale`` a finite number > 0; ``d_token`` None or an integer >= 1; the (B, T, N, d)
    differences of the RBF kernel within memory.
    """
    xq, xk = _points(x_query, x_keys)
    choice("kernel", kernel, ("linear", "rbf", "softmax"))
    scale = positive("scale", scale)
    d_token = None if d_token is None else integer("d_token", d_token)
    n = xk.shape[1]
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        weights = _kernel(xq, xk, kernel, scale, d_token, n)
    return finite_result(weights, x_query=xq, x_keys=xk, scale=scale)


def _points(x_query: ArrayLike, x_keys: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Checked ``x_query (B, T, d)`` and ``x_keys (B, N, d)`` (finite, B and d shared)."""
    xq = array("x_query", x_query, ndim=3)
    xk = array("x_keys", x_keys, shape=(xq.shape[0], None, xq.shape[2]), why="(B, N, d) with x_query's B and d")
    return xq, xk


def _kernel(xq: np.ndarray, xk: np.ndarray, kernel: str, scale: float, d_token: int | None, n: int) -> np.ndarray:
    """:func:`kernel_weights` of checked arguments; the RBF kernel's (B, T, N, d) differences are refused first when
    they would not fit in memory."""
    if kernel == "linear":
        return scale * xq @ xk.transpose(0, 2, 1) / n
    if kernel == "rbf":
        fields = {"x_query": f"shape {xq.shape}", "x_keys": f"shape {xk.shape}"}
        check_call(fields, memory=16.0 * xq.shape[0] * xq.shape[1] * xk.shape[1] * xq.shape[2])
        sq = ((xq[:, :, None, :] - xk[:, None, :, :]) ** 2).sum(-1)  # (B, T, N)
        return np.exp(-sq / (2 * scale**2)) / n
    if kernel == "softmax":
        D = d_token if d_token is not None else xq.shape[-1]
        return _softmax(scale * xq @ xk.transpose(0, 2, 1) / math.sqrt(D))
    raise AssertionError(kernel)  # checked by the caller


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

    Arguments: ``x`` finite (B, N, d), ``x_query`` finite (B, Q, d), ``W_e`` finite (d', C), ``y`` (B, N) integer
    labels in 0..C-1, ``alphas`` finite (K, d') or (K,) with K >= 0; ``kernel``, ``scale`` as
    :func:`kernel_weights`; the K+1 stored steps within memory.
    """
    x, xq = _points(x, x_query)
    W_e = array("W_e", W_e, ndim=2)
    alphas = array("alphas", alphas, ndim=(1, 2), min_size=0)
    d, dp = x.shape[-1], W_e.shape[0]
    if alphas.ndim == 2 and alphas.shape[1] != dp:
        raise ConfigError("alphas", f"shape {alphas.shape}", f"shape (K, {dp}) or (K,): one step size per d' entry")
    y = _labels(y, x.shape[:2], W_e.shape[1])
    check_call(
        {"alphas": f"{len(alphas)} steps", "x": f"shape {x.shape}"},
        memory=8.0 * (len(alphas) + 2) * (x.shape[0] * (x.shape[1] + xq.shape[1]) * dp),
    )
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
    return finite_result(fc, x=x, alphas=alphas), finite_result(fq, x=x, alphas=alphas)


def _labels(y: ArrayLike, shape: tuple[int, int], C: int) -> np.ndarray:
    """``y`` as an integer array of ``shape`` (B, N) with labels in 0..C-1."""
    arr = np.asarray(y)
    if arr.dtype.kind not in "iu" or arr.shape != shape or (arr.size and (arr.min() < 0 or arr.max() >= C)):
        raise ConfigError("y", f"{arr.dtype} of shape {arr.shape}", f"integer labels of shape {shape} in 0..{C - 1}")
    return arr
