r"""Softmax with temperature, its first-order "approximate softmax" and linear attention.

* ``softmax``: :math:`w_{qk} = e^{s_{qk}/\tau} / \sum_{k'} e^{s_{qk'}/\tau}` (arXiv:2511.01292 Eq. 1; docs/papers/temperature.md §3.2).
* ``approx_softmax``: the first-order, normalisation-preserving surrogate of Han et al. (2024), used by
  Demir & Doğan (arXiv:2511.01292, Eq. 5; docs/papers/temperature.md §3.2, §4.1):
  :math:`\widehat{\mathrm{softmax}}(S)_{qk} = \frac1n\big(1 + S_{qk} - \frac1n\sum_{k'} S_{qk'}\big)`,
  :math:`S = s/\tau`, where ``n`` is the number of visible keys. Every row sums to exactly 1 in exact
  arithmetic; entries may be negative and as large as :math:`|S|/n` (a ``signed`` normaliser: in half precision a
  row that rounding would move off 1 raises; ``_numerics``).
* ``linear``: :math:`w_{qk} = s_{qk}/n` (Zhang, Frei & Bartlett 2024; the comparator of Eq. 6 and Remark 3.4), no centring,
  no temperature.
"""

from __future__ import annotations

import numpy as np
import torch

from iclab.attention._numerics import overflow_safe
from iclab.attention._registry import check_mask, check_scores, register_normaliser
from iclab.errors import ConfigError

__all__ = ["softmax", "approx_softmax", "linear_attention_weights", "check_tau", "visible_count"]


def check_tau(tau: float | np.ndarray | torch.Tensor) -> float | torch.Tensor:
    """``tau`` as a float or a tensor (a NumPy array becomes one); the ConfigError shows the first bad entry.

    Arguments: ``tau`` a number (a Python or NumPy int or float; not a bool or a string), or a tensor or a NumPy array
    of integers or floats (not booleans, strings or complex numbers), every entry finite and > 0."""
    allowed = "a finite temperature > 0: a number, or a tensor or array of numbers broadcastable to the scores"
    if isinstance(tau, np.ndarray):
        if tau.dtype.kind not in "iuf":
            raise ConfigError("tau", f"<array of dtype {tau.dtype}>", allowed + " (not booleans, strings or complex)")
        tau = torch.from_numpy(tau)
    if isinstance(tau, torch.Tensor) and (tau.dtype == torch.bool or tau.is_complex() or tau.device.type == "meta"):
        shown = f"<tensor of dtype {tau.dtype} on {tau.device}>"
        raise ConfigError("tau", shown, allowed + " (not booleans or complex, not on the meta device)")
    if isinstance(tau, bool) or not isinstance(tau, (int, float, np.floating, np.integer, torch.Tensor)):
        raise ConfigError("tau", tau, allowed)
    t = torch.as_tensor(tau).detach().to(torch.float64)
    bad = ~torch.isfinite(t) | (t <= 0)
    if bool(bad.any()):
        entry = "" if t.numel() == 1 else f" (entry {t[bad].flatten()[0].item()!r} is not)"
        raise ConfigError("tau", tau, f"a finite temperature > 0{entry}")
    return tau if isinstance(tau, torch.Tensor) else float(tau)


def visible_count(scores: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """Number of visible keys per row, shape ``scores.shape[:-1] + (1,)`` (float, >= 0).

    Arguments: ``scores`` a floating-point tensor ``(..., n_keys)`` with at least one axis, not on the meta device;
    ``mask`` None or a bool tensor broadcastable to ``scores`` (True = visible key)."""
    check_scores(scores)
    check_mask(mask, scores)
    return count_visible(scores, mask)


def count_visible(scores: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """:func:`visible_count` without its checks, for the normalisers (their wrapper checked scores and mask)."""
    if mask is None:
        return torch.full(scores.shape[:-1] + (1,), float(scores.shape[-1]), dtype=scores.dtype, device=scores.device)
    m = torch.broadcast_to(mask, scores.shape)
    return m.sum(-1, keepdim=True).to(scores.dtype)


@register_normaliser("softmax")
def softmax(scores: torch.Tensor, mask: torch.Tensor | None = None, tau: float | torch.Tensor = 1.0) -> torch.Tensor:
    """Softmax of ``scores / tau`` over keys. ``tau`` may be a tensor broadcastable to ``scores``
    (e.g. per head ``(H, 1, 1)``). Fully masked rows give zeros. Where ``scores / tau`` would overflow, the
    scores are shifted by their row maximum first (softmax is shift-invariant); elsewhere the division is as is.

    Arguments: ``scores`` a floating-point tensor ``(..., n_queries, n_keys)`` with at least one axis, not on the meta
    device; ``mask`` None or a bool tensor broadcastable to ``scores`` (True = visible key); ``tau`` (by keyword) a
    finite temperature > 0: a number (not a bool or a string), or a tensor or NumPy array broadcastable to ``scores``
    without growing it, every entry finite and > 0."""
    tau = check_tau(tau)
    s = scores / tau if isinstance(tau, float) and tau >= 1.0 else overflow_safe(scores, mask, lambda x: x / tau)
    if mask is None:
        return torch.softmax(s, dim=-1)
    s = s.masked_fill(~mask, float("-inf"))
    row_max = s.amax(-1, keepdim=True)
    row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max))
    e = torch.exp(s - row_max)
    denom = e.sum(-1, keepdim=True)
    return e / torch.where(denom > 0, denom, torch.ones_like(denom))


@register_normaliser("approx_softmax", kind="signed")
def approx_softmax(
    scores: torch.Tensor, mask: torch.Tensor | None = None, tau: float | torch.Tensor = 1.0
) -> torch.Tensor:
    """First-order, row-normalised surrogate of softmax (Eq. 5 of arXiv:2511.01292): ``(1 + S - mean_k S) / n``, ``S = scores/tau``.

    With a mask, ``n`` and the mean run over visible keys only; masked keys (and keys scored ``-inf``) get weight 0.

    Arguments: ``scores`` a floating-point tensor ``(..., n_queries, n_keys)`` with at least one axis, not on the meta
    device; ``mask`` None or a bool tensor broadcastable to ``scores`` (True = visible key); ``tau`` (by keyword) a
    finite temperature > 0: a number (not a bool or a string), or a tensor or NumPy array broadcastable to ``scores``
    without growing it, every entry finite and > 0. In float16 or bfloat16 a row whose weights would not sum to 1 is
    refused (a ConfigError naming ``scores``).
    """
    tau = check_tau(tau)
    m = torch.ones_like(scores, dtype=torch.bool) if mask is None else torch.broadcast_to(mask, scores.shape)
    s = (scores / tau).masked_fill(~m, 0.0)  # (..., n_q, n_k)
    safe_n = torch.clamp(count_visible(scores, m), min=1.0)  # (..., n_q, 1)
    mean = s.sum(-1, keepdim=True) / safe_n
    return ((1.0 + (s - mean)) / safe_n).masked_fill(~m, 0.0)  # centre first: 1 + S would round away the 1


@register_normaliser("linear", kind="unnormalised")
def linear_attention_weights(
    scores: torch.Tensor, mask: torch.Tensor | None = None, tau: float | torch.Tensor = 1.0
) -> torch.Tensor:
    """Linear attention weights ``scores / n`` (Eq. 6 of arXiv:2511.01292). ``tau`` is accepted for a uniform
    interface and must be 1: linear attention has no temperature.

    Arguments: ``scores`` a floating-point tensor ``(..., n_queries, n_keys)`` with at least one axis, not on the meta
    device; ``mask`` None or a bool tensor broadcastable to ``scores`` (True = visible key); ``tau`` (by keyword) 1, or
    a tensor or NumPy array of ones."""
    if (
        isinstance(tau, (bool, str))
        or not isinstance(tau, (int, float, torch.Tensor, np.ndarray))
        or not bool(torch.all(torch.as_tensor(tau) == 1))
    ):
        raise ConfigError("tau", tau, "1 (linear attention has no temperature)")
    n = torch.clamp(count_visible(scores, mask), min=1.0)
    w = scores / n
    if mask is not None:
        w = w.masked_fill(~torch.broadcast_to(mask, scores.shape), 0.0)
    return w
