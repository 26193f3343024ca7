r"""The numerics every registered normaliser shares: what a row of weights promises, in every dtype.

Each normaliser has a *kind* (:data:`KINDS`), fixed at registration:

* ``simplex`` (``softmax``, ``adaptive_softmax``, ``ssmax``, ``affine_squared``, ``one_plus_tanh``): weights in
  :math:`[0, 1]` whose row sums to 1 within :func:`row_sum_tolerance` in float16, bfloat16, float32 and float64,
  for any τ (scores are shifted by their row maximum where :math:`s/\tau` would overflow: softmax is
  shift-invariant).
* ``signed`` (``approx_softmax``, ``affine``): rows sum to 1 exactly in exact arithmetic, but an entry can be
  negative and as large as :math:`|s|/(\tau n)` (Eq. 5 of arXiv:2511.01292; docs/papers/temperature.md §3.2) or
  :math:`1/\sum_k(1+Cs_k)`. Half-precision scores are normalised in float32; when rounding those weights to
  float16/bfloat16 leaves a row summing to 1 ± more than :func:`row_sum_tolerance` (or overflows), the call raises
  one :class:`~iclab.errors.ConfigError` instead of returning them (the issue's float16 τ = 1e-4 case summed to
  inf). In float32 and float64 the weights are the formula evaluated in that dtype (unchanged, so trained models
  keep their numbers): a row sum is off by at most the formula's own rounding, about
  :math:`n\epsilon(\sum_k|w_k| + \max_k|s_k|/\tau)` (centring :math:`s/\tau` rounds at its size); a non-finite
  weight from finite scores raises.
* ``unnormalised`` (``linear``: :math:`w_k = s_k/n`, so :math:`\sum_k w_k` is the mean visible score;
  ``sigmoid``: :math:`0 \le w_k \le 1` elementwise, no row constraint).

For every kind: a key that is masked out *or scored* :math:`-\infty` is hidden (weight 0; :func:`hide_minus_inf`
turns the score into a mask once, before the normaliser runs). A row with no visible key gets all-zero weights.
**NaN rule** (one for all): a NaN score at a visible key propagates — that row's weights, hence its sum, are NaN;
nothing is made up and nothing raises, so a diverging model shows up as a non-finite loss (the trainer's
``diverged`` event). A :math:`+\infty` score at a visible key does the same where the activation is unbounded
(``softmax``, ``adaptive_softmax``, ``ssmax``, ``approx_softmax``, ``affine``, ``affine_squared``:
:math:`\infty/\infty`); the bounded ones take their limit (``one_plus_tanh``: :math:`1+\tanh\infty = 2`, ``sigmoid``:
weight 1) and ``linear`` gives :math:`+\infty`. A NaN score at a masked key is ignored.
"""

from __future__ import annotations

import math
from typing import Callable

import torch

from iclab.errors import ConfigError

__all__ = ["KINDS", "row_sum_tolerance", "hide_minus_inf", "overflow_safe", "check_signed_rows"]

KINDS = ("simplex", "signed", "unnormalised")

_HALF = (torch.float16, torch.bfloat16)


def compute_dtype(dtype: torch.dtype) -> torch.dtype:
    """The dtype weights are computed in: float32 for float16/bfloat16, the dtype itself otherwise."""
    return torch.float32 if dtype in _HALF else dtype


def row_sum_tolerance(dtype: torch.dtype, n: int | torch.Tensor) -> float | torch.Tensor:
    r""":math:`\epsilon_{\rm dtype} + \sqrt n\,\epsilon_{\rm compute}`: one rounding of the row sum to ``dtype``
    plus the accumulated rounding of a sum of ``n`` terms in the dtype the weights are computed in (float32 for
    half precision). float16: 9.8e-4, bfloat16: 7.8e-3, float32 with n = 4096: 7.7e-6.

    Arguments: ``dtype`` a floating-point torch dtype; ``n`` an integer >= 0 (not a bool), or a real tensor of counts
    (not bool or complex), every entry finite and >= 0."""
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise ConfigError("dtype", dtype, "a floating-point torch dtype (float16, bfloat16, float32, float64)")
    if isinstance(n, torch.Tensor):
        if n.is_complex() or n.dtype == torch.bool or not bool(((n >= 0) & torch.isfinite(n.double())).all()):
            raise ConfigError("n", f"<tensor of dtype {n.dtype}, shape {tuple(n.shape)}>", "counts: finite, >= 0")
    elif isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ConfigError("n", n, "a number of keys: an integer >= 0, or a tensor of them")
    eps, eps_c = torch.finfo(dtype).eps, torch.finfo(compute_dtype(dtype)).eps
    if isinstance(n, torch.Tensor):
        return eps + torch.sqrt(n.to(torch.float64)) * eps_c
    return eps + math.sqrt(n) * eps_c


def hide_minus_inf(scores: torch.Tensor, mask: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor | None]:
    """``(scores, mask)`` with every key scored −inf hidden by the mask (and its score set to 0); unchanged when no
    score is −inf (so the usual path is bit-identical)."""
    neg = torch.isneginf(scores)  # (..., n_q, n_k)
    if not bool(neg.any()):
        return scores, mask
    visible = ~neg if mask is None else torch.broadcast_to(mask, scores.shape) & ~neg
    return scores.masked_fill(neg, 0.0), visible


def overflow_safe(
    scores: torch.Tensor, mask: torch.Tensor | None, scale: Callable[[torch.Tensor], torch.Tensor]
) -> torch.Tensor:
    """``scale(scores)``; where that overflows to ±inf from finite scores, ``scale(scores - row max)`` instead
    (the row max over visible keys). Only for shift-invariant normalisers (softmax of a positive multiple of the
    scores); a row with a NaN score stays NaN."""
    s = scale(scores)  # (..., n_q, n_k)
    if not bool(torch.isinf(s).any()) or not bool((torch.isinf(s) & torch.isfinite(scores)).any()):
        return s  # the usual case costs one pass: nothing is infinite
    hidden = None if mask is None else ~torch.broadcast_to(mask, scores.shape)
    top = scores if hidden is None else scores.masked_fill(hidden, float("-inf"))
    row_max = top.amax(-1, keepdim=True)  # (..., n_q, 1)
    row_max = torch.where(torch.isinf(row_max), torch.zeros_like(row_max), row_max)
    return scale(scores - row_max)


def check_signed_rows(
    name: str,
    weights: torch.Tensor,
    out_dtype: torch.dtype,
    scores: torch.Tensor,
    mask: torch.Tensor | None,
    params: dict,
) -> None:
    """ConfigError when a ``signed`` normaliser's row (one with a visible key and no NaN/+inf score) returned in
    ``out_dtype`` does not sum to 1 within :func:`row_sum_tolerance` (half precision) or is not finite (module
    docstring)."""
    visible = torch.ones_like(scores, dtype=torch.bool) if mask is None else torch.broadcast_to(mask, scores.shape)
    if out_dtype in _HALF:
        total = weights.to(out_dtype).to(torch.float64).sum(-1)  # (..., n_q): the row sums the caller gets
        ok = (total - 1).abs() <= row_sum_tolerance(out_dtype, visible.sum(-1))
    else:
        total = weights.sum(-1)  # (..., n_q)
        ok = torch.isfinite(total)
    if bool(ok.all()):
        return  # the usual case: no row needs a closer look
    checked = visible.any(-1) & ~(visible & ~torch.isfinite(scores)).any(-1)  # (..., n_q): NaN/+inf rows propagate
    bad = checked & ~ok
    if not bool(bad.any()):
        return
    row = bad.nonzero()[0].tolist()
    largest = weights[tuple(row)].abs().amax().item()
    settings = "".join(f", {k}={v!r}" for k, v in params.items() if isinstance(v, (int, float)))
    raise ConfigError(
        "scores",
        f"<{out_dtype} tensor>",
        message=f"{name} weights do not fit {str(out_dtype).removeprefix('torch.')}{settings}: row {row} sums to "
        f"{total[tuple(row)].item():.6g} instead of 1 (its largest |weight| is {largest:.3g}); expected weights whose "
        "rows sum to 1 within the dtype's precision: pass float32/float64 scores, or scores (over tau) whose "
        "weights stay near 1/n",
    )
