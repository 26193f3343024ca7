"""The argument rules of :mod:`iclab.theory.ood` (its module docstring states them), its exact count table (every
count vector of N tokens over K features with its multinomial probability, docs/papers/ood.md §4.2) and the loss
kernel that runs on checked values (population GD calls it each step, after checking its arguments once)."""

from __future__ import annotations

import math
from functools import lru_cache
from itertools import combinations

import numpy as np
from numpy.typing import ArrayLike

from iclab.domain import array, integer, positive
from iclab.errors import ConfigError

_MAX_COUNT_VECTORS = 2_000_000


def _logits(name: str, S: ArrayLike, K: int | None = None) -> np.ndarray:
    """A finite square (K, K) matrix (any K >= 1 when ``K`` is None)."""
    S = array(name, S, ndim=2)
    return array(name, S, shape=(K or S.shape[0],) * 2, why="a square (K, K) matrix" + (f", K = {K}" if K else ""))


def _nc(K: int, N: int | None, c: float, G: ArrayLike | None) -> tuple[int | None, float, np.ndarray | None]:
    """``N`` None or an integer >= 1, ``c`` finite > 0, ``G`` None or a finite (K, K) matrix."""
    N = None if N is None else integer("N", N, why="tokens per prompt, or None for the large-N limit")
    G = None if G is None else _logits("G", G, K)
    return N, positive("c", c), G


def _features(K: int, low: int = 2) -> int:
    """K an integer >= ``low`` (2 where a formula divides by K − 1)."""
    return integer("K", K, low=low, high=10**4, why="features" + (", the formula divides by K - 1" if low == 2 else ""))


def _probs(K: int, p) -> np.ndarray:
    if p is None:
        return np.full(K, 1.0 / K)
    p = array("p", p, min_size=0)
    if p.shape != (K,) or (p < 0).any() or abs(p.sum() - 1) > 1e-9:
        raise ConfigError("p", tuple(np.round(p.reshape(-1), 6)), f"{K} non-negative probabilities summing to 1")
    return p


@lru_cache(maxsize=32)
def _count_table(K: int, N: int, p_tuple: tuple) -> tuple[np.ndarray, np.ndarray]:
    p = np.array(p_tuple)
    if math.comb(N + K - 1, K - 1) > _MAX_COUNT_VECTORS:
        raise ConfigError("n_tokens", N, f"a length with at most {_MAX_COUNT_VECTORS} count vectors, or None (large N)")
    bars = np.array(list(combinations(range(N + K - 1), K - 1)), dtype=np.int64).reshape(-1, K - 1)  # (C, K-1)
    edges = np.concatenate([np.full((len(bars), 1), -1), bars, np.full((len(bars), 1), N + K - 1)], 1)
    n = np.diff(edges, axis=1) - 1  # (C, K)
    with np.errstate(divide="ignore"):
        logp = np.where(n > 0, n * np.log(np.where(p > 0, p, 1.0)), 0.0)
    logp = np.where((n > 0) & (p == 0), -np.inf, logp)
    from scipy.special import gammaln

    logw = gammaln(N + 1) - gammaln(n + 1).sum(1) + logp.sum(1)
    return n.astype(float), np.exp(logw)


def _attention(S: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """:func:`feature_attention` of checked arguments."""
    e = counts[:, :, None] * np.exp(S - S.max(axis=0, keepdims=True))[None]  # (C, K, K), entries <= N
    return e / e.sum(axis=1, keepdims=True)


def _losses(S, p, n, w, c, G, grad: bool = True):
    """Losses (K,) and, with ``grad``, their gradient (K, K), of checked arguments and the count table ``(n, w)``."""
    K = S.shape[0]
    A = _attention(S, n)  # (C, K, K)
    R = A - np.eye(K)[None]  # (C, K, K): column k = A - e_k
    GR = R if G is None else np.matmul(G, R)  # (C, K, K)
    losses = c * (w @ (R * GR).sum(axis=1))  # (K,)
    if not grad:
        return losses, None
    g = 2 * c * GR  # (C, K, K): dL_k/dA
    inner = A * (g - (g * A).sum(axis=1, keepdims=True))  # (C, K, K)
    return losses, np.tensordot(w, inner, axes=1) * p[None, :]
