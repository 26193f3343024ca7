r"""Softmax with ``exp`` replaced by another activation f, normalised the same way: the activation ablation of
arXiv:2503.12734 (the authors' post, Fig. 4.2; docs/papers/multihead.md §3.11).

Each normaliser maps scores s to :math:`w_k = f(s_k)/\sum_{k'} f(s_{k'})` over the visible keys, with

* ``affine``: :math:`f(s) = 1 + Cs`;
* ``affine_squared``: :math:`f(s) = (1 + Cs)^2`;
* ``one_plus_tanh``: :math:`f(s) = 1 + \tanh s`.

Near 0 each is :math:`f(s)\approx 1 + C_f s` with the slope :math:`C_f` of :func:`activation_slope`
(:math:`C`, :math:`2C` and 1), which sets the effective step :math:`\eta_{\rm eff}=2C_f\|\omega\|_\infty\|\mu\|_\infty`
of the two-head model the paper reports. Unlike ``exp``, ``1 + Cs`` can be negative (or sum to ≈ 0) for large
scores; the weights are then what the formula gives, without clamping, and an exactly zero row sum gives zero
weights. Masked keys get weight 0, and so does a key whose score is −inf (a mask by score, as for softmax); fully
masked rows give zeros. ``one_plus_tanh`` is the softmax of :math:`\log\sigma(2s)` (equal, since
:math:`1 + \tanh s = 2\sigma(2s)`, without the cancellation or underflow of ``1 + tanh`` in float32).
"""

from __future__ import annotations

import math

import torch

from iclab.attention._registry import register_normaliser
from iclab.domain import positive
from iclab.errors import ConfigError

__all__ = [
    "affine_attention_weights",
    "affine_squared_attention_weights",
    "one_plus_tanh_attention_weights",
    "activation_slope",
    "ACTIVATIONS",
]

# Normaliser name -> the activation it uses, for reports.
ACTIVATIONS = {"softmax": "exp(s)", "affine": "1 + Cs", "affine_squared": "(1 + Cs)²", "one_plus_tanh": "1 + tanh(s)"}


def _check_c(C) -> float:
    """``C`` as a float: a finite number > 0 (not a bool or a string)."""
    return positive("C", C)


def _hidden(scores: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """The keys that get weight 0: masked out, or scored −inf (a mask by score)."""
    hidden = torch.isneginf(scores)
    if mask is not None:
        hidden = hidden | ~torch.broadcast_to(mask, scores.shape)
    return hidden


def _affine_power(scores: torch.Tensor, c: float, power: int) -> torch.Tensor:
    """:math:`(1 + Cs)^{p}` up to a positive factor per row, finite wherever ``scores`` is: as written where it fits
    the dtype (the usual case, bit for bit); where it overflows, :math:`(s + 1/C)` (for C > 1: the factor
    :math:`C^{p}` cancels in the normalisation) scaled by the row's largest magnitude before the power."""
    f = (1.0 + c * scores) ** power
    if not bool(torch.isinf(f).any()) or not bool((torch.isinf(f) & torch.isfinite(scores)).any()):
        return f
    a = scores + 1.0 / c if c > 1.0 else 1.0 + c * scores
    top = a.abs().amax(-1, keepdim=True)
    a = a / torch.where((top > 0) & torch.isfinite(top), top, torch.ones_like(top))
    return a**power


def _normalise(activation, scores: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """``f / f.sum(-1)`` with ``f = activation(scores)`` over visible keys; masked keys and keys scored −inf 0; a zero
    row sum gives zeros."""
    hidden = _hidden(scores, mask)
    f = activation(scores.masked_fill(hidden, 0.0)).masked_fill(hidden, 0.0)
    denom = f.sum(-1, keepdim=True)
    return f / torch.where(denom == 0, torch.ones_like(denom), denom) * (denom != 0)


@register_normaliser("affine", kind="signed")
def affine_attention_weights(scores: torch.Tensor, mask: torch.Tensor | None = None, C: float = 1.0) -> torch.Tensor:
    """Weights :math:`(1 + Cs_k)/\\sum_{k'}(1 + Cs_{k'})` over visible keys (module docstring).

    Arguments: ``scores`` a floating-point tensor ``(..., n_queries, n_keys)`` with at least one axis, not on the meta
    device; ``mask`` None or a bool tensor broadcastable to ``scores`` (True = visible key); ``C`` (by keyword) a finite
    number > 0, not a bool. In float16 or bfloat16 a row whose weights would not sum to 1 is refused (a ConfigError
    naming ``scores``)."""
    c = _check_c(C)
    return _normalise(lambda s: _affine_power(s, c, 1), scores, mask)


@register_normaliser("affine_squared")
def affine_squared_attention_weights(
    scores: torch.Tensor, mask: torch.Tensor | None = None, C: float = 1.0
) -> torch.Tensor:
    """Weights :math:`(1 + Cs_k)^2/\\sum_{k'}(1 + Cs_{k'})^2` over visible keys (module docstring).

    Arguments: ``scores`` a floating-point tensor ``(..., n_queries, n_keys)`` with at least one axis, not on the meta
    device; ``mask`` None or a bool tensor broadcastable to ``scores`` (True = visible key); ``C`` (by keyword) a finite
    number > 0, not a bool."""
    c = _check_c(C)
    return _normalise(lambda s: _affine_power(s, c, 2), scores, mask)


@register_normaliser("one_plus_tanh")
def one_plus_tanh_attention_weights(scores: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """Weights :math:`(1 + \\tanh s_k)/\\sum_{k'}(1 + \\tanh s_{k'})` over visible keys (module docstring).

    Since :math:`1 + \\tanh s = 2\\sigma(2s)`, the weights are the softmax of :math:`\\log\\sigma(2s_k)` over the
    visible keys: exact, and no row sum underflows (a lone key at s = −300 still gets weight 1 in float32).

    Arguments: ``scores`` a floating-point tensor ``(..., n_queries, n_keys)`` with at least one axis, not on the meta
    device; ``mask`` None or a bool tensor broadcastable to ``scores`` (True = visible key); no other keyword."""
    hidden = _hidden(scores, mask)
    log_f = torch.nn.functional.logsigmoid(2.0 * scores.masked_fill(hidden, 0.0)).masked_fill(hidden, -math.inf)
    alive = (~hidden).any(-1, keepdim=True)  # (..., n_q, 1): rows with a visible key
    return torch.softmax(log_f.masked_fill(~alive, 0.0), dim=-1) * alive  # a fully masked row: zeros; NaN stays


def activation_slope(name: str, C: float = 1.0) -> float:
    """:math:`C_f = f'(0)/f(0)`: 1 for ``softmax`` (exp) and ``one_plus_tanh``, ``C`` for ``affine``, ``2C`` for
    ``affine_squared``.

    Arguments: ``name`` one of ``"softmax"``, ``"one_plus_tanh"``, ``"affine"``, ``"affine_squared"``; ``C`` a
    finite number > 0, not a bool, whatever the name (only the two affine ones read it)."""
    slopes = {"softmax": 1.0, "one_plus_tanh": 1.0, "affine": 1.0, "affine_squared": 2.0}
    if not isinstance(name, str) or name not in slopes:
        raise ConfigError("name", name, "one of " + ", ".join(slopes))
    c = _check_c(C)
    return slopes[name] * (c if name.startswith("affine") else 1.0)
