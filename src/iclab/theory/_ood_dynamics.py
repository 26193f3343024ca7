r"""The logits, losses, population gradient descent, trained solution and out-of-distribution logits of
:mod:`iclab.theory.ood` (note §3.4–§4.7), re-exported there; its module docstring states the formulas and the argument
rules every function here follows ("module rules")."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from iclab.budget import check_call
from iclab.domain import array, finite_result, integer, nonnegative, number, positive
from iclab.errors import ConfigError
from iclab.theory._ood_args import _attention, _count_table, _features, _logits, _losses, _nc, _probs

_STEP_SECONDS = 2e-5  # CPU seconds of one population-GD step's Python overhead (estimates refuse, never predict)


def logit_matrix(Q: ArrayLike, V: np.ndarray) -> np.ndarray:
    r""":math:`S=V^\top QV` (K, K): column k = logits seen by a query v_k, row m = token feature (note §3.4).

    Arguments: ``Q`` (d, d), ``V`` (d, K) (module rules)."""
    V = array("V", V, ndim=2)
    Q = _logits("Q", Q, V.shape[0])
    return finite_result(V.T @ Q @ V, Q=Q, V=V)


def alpha(S: ArrayLike) -> np.ndarray:
    """α_{v_k} = S_kk, shape (K,).

    Arguments: ``S`` (module rules)."""
    return np.diagonal(_logits("S", S)).copy()


def beta(S: ArrayLike) -> np.ndarray:
    """β_{v_m,v_k} = S_mk for m != k; (K, K) with NaN on the diagonal.

    Arguments: ``S`` (module rules)."""
    B = _logits("S", S).copy()
    np.fill_diagonal(B, np.nan)
    return B


def conservation_residual(S: ArrayLike, S0: ArrayLike | None = None) -> np.ndarray:
    r""":math:`\alpha_{v_k}+\sum_{m\ne k}\beta_{v_m,v_k}`
    minus its initial value, per k (0 under GD/SGD, note §4.4).

    Arguments: ``S`` (module rules); ``S0`` None or a finite (K, K) matrix of the same K."""
    S = _logits("S", S)
    S0 = None if S0 is None else _logits("S0", S0, S.shape[0])
    return finite_result(S.sum(0) - (0.0 if S0 is None else S0.sum(0)), S=S, S0=S0)


def off_span_norm(Q: ArrayLike, V: np.ndarray) -> float:
    """‖Q − VVᵀQVVᵀ‖_F: the part of Q outside span{v_m v_kᵀ} (0 from Q=0, note §4.3).

    Arguments: ``Q`` (d, d), ``V`` (d, K) (module rules)."""
    V = array("V", V, ndim=2)
    Q = _logits("Q", Q, V.shape[0])
    P = V @ V.T
    return finite_result(float(np.linalg.norm(Q - P @ Q @ P)), Q=Q, V=V)


def count_table(K: int, N: int | None, p: ArrayLike | None = None) -> tuple[np.ndarray, np.ndarray]:
    """All count vectors n (C, K) with Σn = N and their multinomial probabilities (C,); N=None: the large-N
    limit, one "count" vector n = p (A then uses p in place of n/N).

    Arguments: ``K`` an integer in 1..10**4; ``N``, ``p`` (module rules), with at most 2,000,000 count vectors (a
    ConfigError naming ``N`` beyond)."""
    p = _probs(_features(K, low=1), p)
    if N is None:
        return p[None, :].copy(), np.ones(1)
    N = integer("N", N, why="tokens per prompt")
    try:
        n, w = _count_table(K, N, tuple(float(v) for v in p))
    except ConfigError as exc:  # the table's own limit, named after the argument that sets it
        if exc.field != "n_tokens":
            raise
        raise ConfigError("N", N, exc.allowed) from None
    return n.copy(), w.copy()


def feature_attention(S: ArrayLike, counts: ArrayLike) -> np.ndarray:
    r""":math:`A_{c,m,k}=n_{c,m}e^{S_{mk}}/\sum_jn_{c,j}e^{S_{jk}}`: counts (C, K) -> (C, K_token, K_query).

    Arguments: ``S`` (module rules); ``counts`` (C, K) finite numbers >= 0, each row with a positive entry."""
    S = _logits("S", S)
    counts = array("counts", counts, shape=(None, S.shape[0]), low=0, why="one row of K token counts per table row")
    if (counts.sum(1) <= 0).any():
        raise ConfigError("counts", "a row of zeros", "rows with at least one token")
    return _attention(S, counts)


def _loss_and_grad(S, p, N, c, G, grad: bool = True):
    """Checks the arguments (module rules) once, then :func:`_losses` on the count table."""
    S = _logits("S", S)
    K = S.shape[0]
    p, (N, c, G) = _probs(K, p), _nc(K, N, c, G)
    losses, dS = _losses(S, p, *count_table(K, N, p), c, G, grad)
    return losses, None if dS is None else finite_result(dS, S=S, c=c)


def feature_losses(
    S: ArrayLike, p: ArrayLike | None = None, N: int | None = None, c: float = 0.5, G: ArrayLike | None = None
) -> np.ndarray:
    r"""Per-feature losses :math:`\mathcal L_k` (K,) (note §4.2; §4.7 with Gram matrix G; G = I for orthonormal).

    Arguments: ``S``, ``p``, ``N``, ``c``, ``G`` (module rules)."""
    return _loss_and_grad(S, p, N, c, G, grad=False)[0]


def loss_gradient(
    S: ArrayLike, p: ArrayLike | None = None, N: int | None = None, c: float = 0.5, G: ArrayLike | None = None
) -> np.ndarray:
    r""":math:`\partial\mathcal L/\partial S` (K, K) of :math:`\mathcal L=\sum_kp_k\mathcal L_k` (note §4.3).

    Arguments: ``S``, ``p``, ``N``, ``c``, ``G`` (module rules)."""
    return _loss_and_grad(S, p, N, c, G)[1]


def population_gd(
    S0: ArrayLike,
    p: ArrayLike | None = None,
    N: int | None = None,
    c: float = 0.5,
    lr: float = 1.0,
    threshold: float = 0.0025,
    max_steps: int = 100_000,
    G: ArrayLike | None = None,
) -> dict:
    r"""Exact population GD on S (= GD on Q for orthonormal V, note §4.3) until :math:`\max_k\mathcal L_k\le`
    ``threshold`` (per-feature stopping rule, note §3.5). Returns ``S`` (final), ``steps``, ``trajectory`` (T+1, K, K),
    ``losses`` (T+1, K), ``stopped`` (bool).

    Arguments: ``S0``, ``p``, ``N``, ``c``, ``G`` (module rules); ``lr`` a finite number > 0; ``threshold`` a finite
    number >= 0; ``max_steps`` an integer >= 0, its trajectory within memory and ``ICLAB_CELL_SECONDS_LIMIT``
    (refused before the first step); a run whose logits leave double precision is a ConfigError naming ``lr``."""
    S = _logits("S0", S0).copy()
    K = S.shape[0]
    lr, threshold = positive("lr", lr, "a step size"), nonnegative("threshold", threshold)
    max_steps = integer("max_steps", max_steps, low=0)
    p, (N, c, G) = _probs(K, p), _nc(K, N, c, G)
    table = count_table(K, N, p)  # checked once: the steps below run on checked values
    check_call(
        {"max_steps": max_steps, "N": N, "K": K},
        memory=8.0 * (max_steps + 1) * (K * K + K) * 2,
        seconds=(max_steps + 1) * (_STEP_SECONDS + 3e-8 * len(table[1]) * K**3),
    )
    traj, losses = [S.copy()], []
    step = 0
    while True:
        L, dS = _losses(S, p, *table, c, G)
        losses.append(L)
        if L.max() <= threshold or step >= max_steps:
            break
        S = S - lr * dS
        if not np.isfinite(S).all():
            raise ConfigError("lr", lr, f"a step size at which GD stays finite (it diverged at step {step})")
        step += 1
        traj.append(S.copy())
    return {
        "S": S,
        "steps": step,
        "trajectory": np.array(traj),
        "losses": np.array(losses),
        "stopped": bool(losses[-1].max() <= threshold),
    }


def balanced_loss(alpha_value: ArrayLike, K: int, c: float = 0.5) -> np.ndarray | float:
    r"""Large-N balanced loss at :math:`S=\alpha(I-\frac{11^\top-I}{K-1})`:
    :math:`c\frac K{K-1}(1-a)^2`, :math:`a=1/(1+(K-1)e^{-K\alpha/(K-1)})` (note §4.5).

    Arguments: ``alpha_value`` finite numbers (none: an empty array); ``K`` an integer in 2..10**4; ``c`` (module
    rules)."""
    K, c = _features(K), positive("c", c)
    alpha_value = array("alpha_value", alpha_value, min_size=0)
    with np.errstate(over="ignore"):
        a = 1.0 / (1.0 + (K - 1) * np.exp(-K * alpha_value / (K - 1)))
    return c * K / (K - 1) * (1 - a) ** 2


def converged_alpha(K: int, threshold: float, c: float = 0.5) -> float:
    """The α at which the balanced large-N loss equals ``threshold`` (inverse of :func:`balanced_loss`).
    GD stops at the first step past it, so the trained α* is slightly larger.

    Arguments: ``K`` >= 2, ``c`` (module rules); ``threshold`` a number in (0, c·K/(K−1)), where α exists."""
    K, c = _features(K), positive("c", c)
    threshold = number("threshold", threshold, above=0, below=c * K / (K - 1), why="a loss the balanced loss reaches")
    one_minus_a = math.sqrt(threshold * (K - 1) / (c * K))
    a = 1 - one_minus_a
    with np.errstate(divide="ignore"):
        alpha_value = -(K - 1) / K * float(np.log((1 / a - 1) / (K - 1)))
    return finite_result(alpha_value, K=K, threshold=threshold, c=c)


def trained_logits(alpha_value: float, K: int) -> np.ndarray:
    r"""Symmetric trained logits :math:`\alpha I-\frac{\alpha}{K-1}(11^\top-I)=\frac{K\alpha}{K-1}C` (note §4.5).

    Arguments: ``alpha_value`` a finite number; ``K`` an integer in 2..10**4."""
    alpha_value, K = number("alpha_value", alpha_value), integer("K", K, low=2, high=10**4)
    return finite_result(K * alpha_value / (K - 1) * (np.eye(K) - np.ones((K, K)) / K), alpha_value=alpha_value)


def trained_q(V: np.ndarray, alpha_value: float) -> np.ndarray:
    r""":math:`Q^*=\frac{K\alpha^*}{K-1}V(I-\frac1K11^\top)V^\top` (d, d) (note §4.5).

    Arguments: ``V`` a finite (d, K) matrix with K in 2..10**4; ``alpha_value`` a finite number."""
    V = array("V", V, ndim=2)
    return finite_result(V @ trained_logits(alpha_value, V.shape[1]) @ V.T, V=V, alpha_value=alpha_value)


def vbar_overlaps(M: np.ndarray) -> np.ndarray:
    r""":math:`\langle u_k,\bar v\rangle=\frac1K(1^\top M)_k` (K,) (note §3.3).

    Arguments: ``M`` (module rules)."""
    M = _logits("M", M)
    return M.sum(0) / M.shape[0]


def ood_logits(S: ArrayLike, M: np.ndarray) -> np.ndarray:
    r""":math:`S^U=U^\top QU=M^\top S^VM` for Q in span V (note §4.6).

    Arguments: ``S``, ``M`` of one K (module rules)."""
    S = _logits("S", S)
    M = _logits("M", M, S.shape[0])
    return finite_result(M.T @ S @ M, S=S, M=M)


def ood_logits_closed(alpha_value: float, M: np.ndarray) -> np.ndarray:
    r"""Closed form (note §4.6; the paper's OOD α/β formulas):
    :math:`\alpha_{u_k}=\frac{K\alpha^*}{K-1}[(M^\top M)_{kk}-K\langle u_k,\bar v\rangle^2]`,
    :math:`\beta_{u_m,u_k}=\frac{K\alpha^*}{K-1}[(M^\top M)_{mk}-K\langle u_m,\bar v\rangle\langle u_k,\bar v\rangle]`.

    Arguments: ``alpha_value`` a finite number; ``M`` a finite square (K, K) matrix with K in 2..10**4 (the formula
    divides by K − 1)."""
    M, alpha_value = _logits("M", M), number("alpha_value", alpha_value)
    K = _features(M.shape[0])
    b = vbar_overlaps(M)
    return finite_result(K * alpha_value / (K - 1) * (M.T @ M - K * np.outer(b, b)), alpha_value=alpha_value, M=M)


def ood_feature_losses(
    S: ArrayLike,
    M: np.ndarray,
    p: ArrayLike | None = None,
    N: int | None = None,
    c: float = 0.5,
    G: ArrayLike | None = None,
) -> np.ndarray:
    r"""OOD error of each u_k (note §4.7): :func:`feature_losses` at :math:`S^U=M^\top SM` with Gram G = UᵀU.

    Arguments: ``S``, ``M`` of one K, ``p``, ``N``, ``c``, ``G`` (module rules)."""
    return feature_losses(ood_logits(S, M), p, N, c, G)


def random_guess_loss(
    K: int, p: ArrayLike | None = None, N: int | None = None, c: float = 0.5, G: ArrayLike | None = None
) -> np.ndarray:
    """Loss of uniform attention (S = 0): ŷ = label average; c(K-1)/K per feature for balanced large N (note §4.7).

    Arguments: ``K`` an integer in 1..10**4; ``p``, ``N``, ``c``, ``G`` (module rules)."""
    K = integer("K", K, high=10**4, why="features")
    return feature_losses(np.zeros((K, K)), p, N, c, G)
