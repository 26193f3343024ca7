r"""Entropy-adaptive temperature softmax of Veličković et al., "Softmax is not enough", arXiv:2410.01104, Fig. 4 of
the ICML version (docs/papers/dispersion.md §3.5).

For each row of logits :math:`e` (keys on the last axis):

.. math::
    p = \mathrm{softmax}(e),\quad H = -\sum_j p_j\log(p_j + 10^{-9}),\quad
    \beta = \begin{cases}\max(\mathrm{polyval}(C, H), 1) & H > 0.5\\ 1 & \text{else}\end{cases},\quad
    \mathrm{out} = \mathrm{softmax}(\beta\, e),

with :math:`C = (-0.037, 0.481, -2.3, 4.917, -1.791)` highest degree first (``jnp.polyval`` order). Since
:math:`\partial H/\partial\beta = -\beta\,\mathrm{Var}_p(e) \le 0` and :math:`\beta \ge 1`, it never increases
entropy (note §4.3). Gradient: like the paper's JAX code, gradients flow through :math:`\beta` (through
:math:`H`) by default; ``detach_beta=True`` treats :math:`\beta` as a constant (what some ports do).
``eps=1e-9`` reproduces the reference entropy; ``eps=0`` gives the exact entropy
:math:`H = \mathrm{lse}(e) - \sum_j p_j e_j` that the streaming version (``_streaming``) computes; the two differ
by at most ``n_keys * eps`` nats. Masked keys get weight 0 and do not enter :math:`H`; fully masked rows give zeros.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from iclab.attention._arguments import check_bool, check_tensor
from iclab.attention._numerics import overflow_safe
from iclab.attention._registry import register_normaliser
from iclab.attention._softmax import check_tau, softmax
from iclab.domain import array, number
from iclab.errors import ConfigError

__all__ = [
    "PAPER_COEFFS",
    "PAPER_THRESHOLD",
    "adaptive_softmax",
    "adaptive_beta",
    "row_entropy",
    "check_coeffs",
    "polyval",
]

PAPER_COEFFS: tuple[float, ...] = (-0.037, 0.481, -2.3, 4.917, -1.791)  # highest degree first (Fig. 4; note §3.5)
PAPER_THRESHOLD: float = 0.5  # nats: "don't overcorrect low-entropy heads"


def check_coeffs(coeffs: Sequence[float], threshold: float) -> tuple[float, ...]:
    """Validate polynomial coefficients (non-empty, finite) and the entropy threshold (finite); ConfigError otherwise.

    A threshold below 0 is a setting, not a slip: the gate :math:`H > \\text{threshold}` then passes every row,
    including rows of one visible key (:math:`H = 0`), so β(H) applies everywhere (e.g. ``coeffs=(2.0,)`` is τ = 1/2).

    Arguments: ``coeffs`` a non-empty flat sequence or iterable (a list, a tuple, a 1-D array or tensor; not a string)
    of finite numbers, not booleans or strings, highest degree first; ``threshold`` a finite number (not a bool or a
    string), in nats."""
    allowed = "a non-empty sequence of finite numbers (not booleans or strings), highest degree first"
    if isinstance(coeffs, (str, bytes, bool, np.bool_)):
        raise ConfigError("coeffs", coeffs, allowed)
    if isinstance(coeffs, torch.Tensor):
        if coeffs.device.type == "meta" or coeffs.dtype == torch.bool or coeffs.is_complex():
            raise ConfigError("coeffs", f"<tensor of dtype {coeffs.dtype} on {coeffs.device}>", allowed)
        coeffs = coeffs.detach().to("cpu", torch.float64).numpy()
    elif not isinstance(coeffs, np.ndarray):
        try:
            coeffs = list(coeffs)
        except TypeError:
            raise ConfigError("coeffs", coeffs, allowed) from None
        if any(isinstance(x, (bool, np.bool_, str, bytes)) for x in coeffs):
            raise ConfigError("coeffs", coeffs, allowed)
    try:
        c = array("coeffs", coeffs, ndim=1)
    except ConfigError:
        raise ConfigError("coeffs", coeffs, allowed) from None
    number("threshold", threshold, why="an entropy threshold in nats")
    return tuple(float(x) for x in c)


def check_eps(eps: float) -> None:
    """ConfigError unless ``eps`` (the entropy's log offset) is a number in [0, 1)."""
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not 0 <= eps < 1:
        raise ConfigError("eps", eps, "a number in [0, 1)")


def polyval(coeffs: Sequence[float], x: torch.Tensor) -> torch.Tensor:
    """Horner evaluation, coefficients highest degree first (``jnp.polyval`` / ``np.polyval`` order).

    Arguments: ``coeffs`` a non-empty iterable of finite numbers, highest degree first; ``x`` a floating-point tensor,
    not on the meta device."""
    coeffs = check_coeffs(coeffs, 0.0)
    check_tensor("x", x)
    return horner(coeffs, x)


def horner(coeffs: Sequence[float], x: torch.Tensor) -> torch.Tensor:
    """:func:`polyval` without its checks, for callers that checked ``coeffs`` once (the attention passes)."""
    out = torch.zeros_like(x)
    for c in coeffs:
        out = out * x + c
    return out


def row_entropy(logits: torch.Tensor, mask: torch.Tensor | None = None, eps: float = 1e-9) -> torch.Tensor:
    """Shannon entropy (nats) of ``softmax(logits)`` per row, shape ``logits.shape[:-1] + (1,)``.

    ``eps > 0``: the reference ``sum(-p * log(p + eps))``; ``eps == 0``: exact ``lse(e) - sum_j p_j e_j``.
    Fully masked rows have entropy 0.

    Arguments: ``logits`` a floating-point tensor ``(..., n_keys)`` with at least one axis, not on the meta device;
    ``mask`` None or a bool tensor on the device of ``logits``, broadcastable to it; ``eps`` a number in [0, 1) (not a
    bool).
    """
    check_tensor("logits", logits)
    if logits.dim() < 1:
        raise ConfigError("logits", f"<tensor of shape {tuple(logits.shape)}>", "a tensor (..., n_keys), >= 1 axis")
    check_eps(eps)
    p = softmax(logits, mask)  # (..., n_q, n_k)
    if eps > 0:
        return (-p * torch.log(p + eps)).sum(-1, keepdim=True)
    if mask is None:
        return torch.logsumexp(logits, -1, keepdim=True) - (p * logits).sum(-1, keepdim=True)
    m = torch.broadcast_to(mask, logits.shape)
    lse = torch.logsumexp(logits.masked_fill(~m, float("-inf")), -1, keepdim=True)  # (..., n_q, 1)
    lse = torch.where(torch.isfinite(lse), lse, torch.zeros_like(lse))  # fully masked rows: H = 0
    return lse - (p * logits.masked_fill(~m, 0.0)).sum(-1, keepdim=True)


def adaptive_beta(
    H: torch.Tensor, coeffs: Sequence[float] = PAPER_COEFFS, threshold: float = PAPER_THRESHOLD
) -> torch.Tensor:
    r""":math:`\beta(H) = \max(\mathrm{polyval}(C, H), 1)` where :math:`H >` threshold, else 1 (Fig. 4).

    Arguments: ``H`` a floating-point tensor of entropies (nats), not on the meta device; ``coeffs`` a non-empty
    iterable of finite numbers and ``threshold`` a finite number (:func:`check_coeffs`)."""
    coeffs = check_coeffs(coeffs, threshold)
    check_tensor("H", H)
    return beta_of_entropy(H, coeffs, threshold)


def beta_of_entropy(H: torch.Tensor, coeffs: Sequence[float], threshold: float) -> torch.Tensor:
    """:func:`adaptive_beta` without its checks, for callers that checked ``coeffs`` once (the attention passes)."""
    poly = torch.clamp(horner(coeffs, H), min=1.0)
    return torch.where(H > threshold, poly, torch.ones_like(poly))


@register_normaliser("adaptive_softmax")
def adaptive_softmax(
    scores: torch.Tensor,
    mask: torch.Tensor | None = None,
    coeffs: Sequence[float] = PAPER_COEFFS,
    threshold: float = PAPER_THRESHOLD,
    tau: float | torch.Tensor = 1.0,
    eps: float = 1e-9,
    detach_beta: bool = False,
) -> torch.Tensor:
    """Entropy-adaptive softmax over keys (Fig. 4 of arXiv:2410.01104, module docstring); logits are ``scores / tau``.

    Arguments: ``scores`` a floating-point tensor ``(..., n_queries, n_keys)`` with at least one axis, not on the meta
    device; ``mask`` None or a bool tensor broadcastable to ``scores`` (True = visible key); ``tau`` (by keyword) a
    finite temperature > 0: a number (not a bool or a string), or a tensor or NumPy array broadcastable to ``scores``
    without growing it, every entry finite and > 0; ``coeffs`` a non-empty iterable of finite numbers and ``threshold``
    a finite number (:func:`check_coeffs`); ``eps`` a number in [0, 1); ``detach_beta`` a bool."""
    tau = check_tau(tau)
    c = check_coeffs(coeffs, threshold)
    check_eps(eps)
    detach_beta = check_bool("detach_beta", detach_beta)
    logits = overflow_safe(scores, mask, lambda x: x / tau)  # (..., n_q, n_k); shifted where scores/tau overflows
    H = row_entropy(logits, mask, eps)  # (..., n_q, 1)
    beta = beta_of_entropy(H, c, threshold)  # (..., n_q, 1)
    if detach_beta:
        beta = beta.detach()
    return softmax(logits * beta, mask)
