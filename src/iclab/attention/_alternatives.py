r"""Alternatives to softmax that arXiv:2410.01104 ("Softmax is not enough") discusses as ways around its Theorem 2.2
(docs/papers/dispersion.md §3.9), in the one registry.

* ``sigmoid`` (Ramapuram et al., 2024): :math:`w_{qk} = \sigma(s_{qk}/\tau + b)`, elementwise, **not** normalised
  over keys, so no :math:`1/n` dilution. ``bias`` is a number; ``bias=None`` uses Ramapuram et al.'s
  :math:`b = -\log n` with :math:`n` the row's number of visible keys.
* ``ssmax`` (length-scaled / Scalable-Softmax; Chiang & Cholak 2022, Nakanishi 2025):
  :math:`w = \mathrm{softmax}(s \cdot \mathrm{scale}\cdot\log n / \tau)` where :math:`n` is each row's count of
  **visible** keys under the mask (not the padded length), so the logit spread grows like :math:`\log n`, as
  Prop. 3.1 (note §3.4, §4.2) requires for sharpness. A row with one visible key gets weight 1 on it.

Masked keys get weight 0; fully masked rows give zeros.
"""

from __future__ import annotations

import torch

from iclab.attention._numerics import overflow_safe
from iclab.attention._registry import register_normaliser
from iclab.attention._softmax import check_tau, count_visible, softmax
from iclab.errors import ConfigError

__all__ = ["sigmoid_attention_weights", "ssmax"]


@register_normaliser("sigmoid", kind="unnormalised")
def sigmoid_attention_weights(
    scores: torch.Tensor, mask: torch.Tensor | None = None, tau: float = 1.0, bias: float | None = 0.0
) -> torch.Tensor:
    r"""Sigmoid attention :math:`\sigma(s/\tau + b)` (``bias=None``: :math:`b=-\log n_{\rm visible}`).

    Arguments: ``scores`` a floating-point tensor ``(..., n_queries, n_keys)`` with at least one axis, not on the meta
    device; ``mask`` None or a bool tensor broadcastable to ``scores`` (True = visible key); ``tau`` (by keyword) a
    finite temperature > 0: a number (not a bool or a string), or a tensor or NumPy array broadcastable to ``scores``
    without growing it, every entry finite and > 0; ``bias`` (by keyword) None (:math:`-\log n`) or a finite number, not
    a bool."""
    tau = check_tau(tau)
    if bias is None:
        b = -torch.log(torch.clamp(count_visible(scores, mask), min=1.0))  # (..., n_q, 1)
    elif isinstance(bias, bool) or not isinstance(bias, (int, float)) or not torch.isfinite(torch.tensor(float(bias))):
        raise ConfigError("bias", bias, "a finite number or None (-log n)")
    else:
        b = bias
    w = torch.sigmoid(scores / tau + b)  # (..., n_q, n_k)
    if mask is not None:
        w = w.masked_fill(~torch.broadcast_to(mask, scores.shape), 0.0)
    return w


@register_normaliser("ssmax")
def ssmax(scores: torch.Tensor, mask: torch.Tensor | None = None, scale: float = 1.0, tau: float = 1.0) -> torch.Tensor:
    r"""Length-scaled softmax :math:`\mathrm{softmax}(s\cdot \mathrm{scale}\cdot\log n/\tau)`, n = visible keys.

    Arguments: ``scores`` a floating-point tensor ``(..., n_queries, n_keys)`` with at least one axis, not on the meta
    device; ``mask`` None or a bool tensor broadcastable to ``scores`` (True = visible key); ``scale`` (by keyword) a
    finite number > 0, not a bool; ``tau`` (by keyword) a finite temperature > 0: a number (not a bool or a string), or
    a tensor or NumPy array broadcastable to ``scores`` without growing it, every entry finite and > 0."""
    tau = check_tau(tau)
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not scale > 0 or scale == float("inf"):
        raise ConfigError("scale", scale, "a finite number > 0")
    n = torch.clamp(count_visible(scores, mask), min=1.0)  # (..., n_q, 1)
    c = scale * torch.log(n)  # (..., n_q, 1), >= 0
    return softmax(overflow_safe(scores, mask, lambda x: x * c), mask, tau=tau)
