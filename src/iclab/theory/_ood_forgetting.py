r"""Fine-tuning on a new feature basis and forgetting of :mod:`iclab.theory.ood` (note §3.6, §4.8–§4.9), re-exported
there; its module docstring states the argument rules every function here follows ("module rules")."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from iclab.domain import array, finite_result, nonnegative, number
from iclab.errors import ConfigError
from iclab.theory._ood_args import _logits, _probs
from iclab.theory._ood_dynamics import feature_losses, ood_logits, population_gd


def check_gammas(gammas: ArrayLike) -> np.ndarray:
    """The overlaps γ as a flat float array; a ConfigError unless there is at least one and each is finite
    with |γ| <= 1.

    Arguments: ``gammas`` at least one number (any shape, flattened; not booleans or strings), each finite and in [-1,
    1]."""
    g = array("gammas", gammas, min_size=0, finite=False).reshape(-1)
    if g.size == 0 or not np.isfinite(g).all() or (np.abs(g) > 1).any():
        raise ConfigError("gammas", tuple(np.round(g, 6).tolist()), "overlaps gamma_k in [-1, 1]")
    return g


def finetune_source_logits(S_V: ArrayLike, M: np.ndarray, dS_U: ArrayLike) -> np.ndarray:
    r""":math:`S^V_{new}=S^V+M\,\Delta S^U M^\top` (note §4.8; the paper's back-projection of fine-tuning onto V).

    Arguments: ``S_V``, ``M``, ``dS_U`` of one K (module rules)."""
    S_V = _logits("S_V", S_V)
    M, dS = _logits("M", M, S_V.shape[0]), _logits("dS_U", dS_U, S_V.shape[0])
    return finite_result(S_V + M @ dS @ M.T, S_V=S_V, M=M, dS_U=dS)


def forgetting(
    S_old: ArrayLike, S_new: ArrayLike, p: ArrayLike | None = None, N: int | None = None, c: float = 0.5
) -> float:
    r""":math:`F=\sum_kp_k[\mathcal L_k(S_{new})-\mathcal L_k(S_{old})]` (note §3.6); F < 0 is backward transfer.

    Arguments: ``S_old``, ``S_new`` of one K, ``p``, ``N``, ``c`` (module rules)."""
    K = _logits("S_old", S_old).shape[0]
    _logits("S_new", S_new, K)
    p = _probs(K, p)
    return float(p @ (feature_losses(S_new, p, N, c) - feature_losses(S_old, p, N, c)))


def finetune(
    S_V: ArrayLike,
    M: np.ndarray,
    p: ArrayLike | None = None,
    N: int | None = None,
    c: float = 0.5,
    lr: float = 1.0,
    threshold: float = 0.0025,
    max_steps: int = 100_000,
) -> dict:
    r"""Fine-tune on orthonormal U with alignment M from source logits S_V (note §4.8): population GD on S^U from
    :math:`M^\top S_VM` to the stopping rule; source logits, per-feature source losses and F (note §3.6).

    Arguments: ``S_V``, ``M`` of one K, ``p``, ``N``, ``c`` (module rules); ``lr``, ``threshold``, ``max_steps`` as
    :func:`population_gd` takes them."""
    S_V = _logits("S_V", S_V)
    S_U0 = ood_logits(S_V, M)
    run = population_gd(S_U0, p, N, c, lr, threshold, max_steps)
    dS = run["S"] - S_U0
    S_new = finetune_source_logits(S_V, M, dS)
    before, after = feature_losses(S_V, p, N, c), feature_losses(S_new, p, N, c)
    pk = _probs(S_V.shape[0], p)
    return {
        "S_U0": S_U0,
        "S_U": run["S"],
        "dS_U": dS,
        "S_V_new": S_new,
        "steps": run["steps"],
        "ood_before": feature_losses(S_U0, p, N, c),
        "source_before": before,
        "source_after": after,
        "F": float(pk @ (after - before)),
    }


def forgets_k2(gammas: ArrayLike) -> np.ndarray:
    r"""K = 2 exact forgetting condition (the paper's condition; note §4.9): feature k is forgotten iff
    :math:`-\gamma_k\gamma_m>\gamma_k^2`.

    Arguments: ``gammas`` exactly two numbers, each finite and in [-1, 1] (:func:`check_gammas`)."""
    g = check_gammas(gammas)
    if g.size != 2:
        raise ConfigError("gammas", tuple(g.tolist()), "two overlaps (gamma_1, gamma_2) for K = 2")
    return np.array([-g[0] * g[1] > g[0] ** 2, -g[0] * g[1] > g[1] ** 2])


def forgetting_pairs(gammas: ArrayLike) -> np.ndarray:
    r"""General-K symmetric approximation (note §4.9): entry (k, m), m != k, True iff the source gap of query k to
    feature m shrinks, :math:`-\gamma_k\gamma_m>(K-1)\gamma_k^2` (exact for K = 2).

    Arguments: ``gammas`` K >= 1 numbers (one per feature), each finite and in [-1, 1] (:func:`check_gammas`)."""
    g = check_gammas(gammas)
    K = g.size
    out = -np.outer(g, g) > (K - 1) * (g**2)[:, None]
    np.fill_diagonal(out, False)
    return out


def forgetting_sign_k2(gamma1: float, gamma2: float, tol: float = 1e-9) -> tuple[int, int]:
    r"""Predicted change of each source loss for K = 2 (note §4.9): the source gap of feature k moves by
    :math:`\Delta\alpha_{u_k}\gamma_k(\gamma_k+\gamma_m)` with :math:`\Delta\alpha_{u_k}>0`, so its loss changes by
    :math:`\mathrm{sign}(-\gamma_k(\gamma_k+\gamma_m))`: +1 (forgotten) iff :math:`-\gamma_k\gamma_m>\gamma_k^2`,
    -1 (backward transfer), 0 within ``tol`` of the boundary. Returns ``(sign for feature 1, sign for feature 2)``.

    Arguments: ``gamma1``, ``gamma2`` numbers in [-1, 1]; ``tol`` a finite number >= 0."""
    gamma1 = number("gamma1", gamma1, low=-1, high=1, why="an overlap")
    gamma2 = number("gamma2", gamma2, low=-1, high=1, why="an overlap")
    tol, out = nonnegative("tol", tol), []
    for gk, gm in ((gamma1, gamma2), (gamma2, gamma1)):
        v = -gk * (gk + gm)
        out.append(0 if abs(v) < tol else int(np.sign(v)))
    return tuple(out)


def loss_change_sign(after: float, before: float, rel: float = 1e-9) -> int:
    """Measured counterpart of :func:`forgetting_sign_k2`: +1 if a source loss rose (forgotten), -1 if it fell,
    0 if it moved by at most ``rel`` of ``before``.

    Arguments: ``after``, ``before`` finite numbers; ``rel`` a finite number >= 0."""
    after, before, rel = number("after", after), number("before", before), nonnegative("rel", rel)
    return 0 if abs(after - before) <= rel * abs(before) else (1 if after > before else -1)
