r"""Dispersion diagnostics for any attention weights or logits: the quantities of Lemma 2.1 and the logit spread δ
of arXiv:2410.01104 ("Softmax is not enough"; docs/papers/dispersion.md §3.2, §4.1).

* ``attention_entropy(w)``: :math:`H = -\sum_k w_k \log w_k` per row (nats; :math:`\ln n` when uniform).
* ``max_coefficient(w)``: :math:`\max_k w_k` per row (sharpness; 1 = hard attention).
* ``logit_spread(s, mask)``: :math:`\delta = \max_k s_k - \min_k s_k` over visible keys per row (the paper's δ table);
  NaN for rows with no visible key, so pooled statistics can skip them (``torch.nanmean``).
* ``dispersion_bounds(delta, n, tau)``: Lemma 2.1, :math:`e^{-\delta/\theta}/n \le w_k \le e^{\delta/\theta}/n`,
  and the tighter top-item bound :math:`w_{\max} \le e^{\delta/\theta}/(e^{\delta/\theta}+n-1)` (derived, note §4.1).
* ``dispersion_summary(scores, mask, tau)``: all of the above for softmax weights of ``scores``.
"""

from __future__ import annotations

import torch

from iclab.attention._arguments import check_tensor
from iclab.attention._softmax import check_tau, softmax, visible_count
from iclab.errors import ConfigError

__all__ = ["attention_entropy", "max_coefficient", "logit_spread", "dispersion_bounds", "dispersion_summary"]


def attention_entropy(weights: torch.Tensor) -> torch.Tensor:
    """Entropy (nats) of each row of non-negative weights summing to 1, shape ``weights.shape[:-1]`` (0 for a row
    of no key)."""
    check_tensor("weights", weights)
    return -torch.special.xlogy(weights, weights).sum(-1)


def max_coefficient(weights: torch.Tensor) -> torch.Tensor:
    """Largest weight of each row, shape ``weights.shape[:-1]`` (NaN for a row of no key: the maximum of nothing)."""
    check_tensor("weights", weights)
    if weights.shape[-1] == 0:
        return weights.new_full(weights.shape[:-1], float("nan"))
    return weights.amax(-1)


def logit_spread(scores: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    r""":math:`\delta` = max - min of the logits over visible keys per row (NaN where no key is visible, as in a
    row of no key at all)."""
    check_tensor("scores", scores)
    if scores.dim() == 0:
        raise ConfigError("scores", "<0-d tensor>", "a tensor of shape (..., n_keys)")
    if scores.shape[-1] == 0:
        return scores.new_full(scores.shape[:-1], float("nan"))
    if mask is None:
        return scores.amax(-1) - scores.amin(-1)
    m = torch.broadcast_to(mask, scores.shape)
    hi = scores.masked_fill(~m, float("-inf")).amax(-1)
    lo = scores.masked_fill(~m, float("inf")).amin(-1)
    return torch.where(m.any(-1), hi - lo, torch.full_like(hi, float("nan")))


def dispersion_bounds(
    delta: float | torch.Tensor, n: float | torch.Tensor, tau: float | torch.Tensor = 1.0
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    r"""Lemma 2.1 ``(lower, upper, top_upper)``: :math:`e^{-\delta/\theta}/n`, :math:`e^{\delta/\theta}/n` and
    :math:`e^{\delta/\theta}/(e^{\delta/\theta}+n-1)` (broadcast over ``delta`` and ``n``)."""
    tau = check_tau(tau)
    d = torch.as_tensor(delta, dtype=torch.float64) / torch.as_tensor(tau, dtype=torch.float64)
    n = torch.as_tensor(n, dtype=torch.float64)
    return torch.exp(-d) / n, torch.exp(d) / n, torch.exp(d) / (torch.exp(d) + n - 1)


def dispersion_summary(
    scores: torch.Tensor, mask: torch.Tensor | None = None, tau: float | torch.Tensor = 1.0
) -> dict[str, torch.Tensor]:
    """Per-row ``entropy``, ``max_coef``, ``min_coef`` (over visible keys), ``delta``, ``n`` and the Lemma 2.1
    ``lower``/``upper``/``top_upper`` bounds for ``softmax(scores / tau, mask)``."""
    w = softmax(scores, mask, tau=tau)  # (..., n_q, n_k)
    n = visible_count(scores, mask)[..., 0]  # (..., n_q)
    vis = torch.ones_like(w, dtype=torch.bool) if mask is None else torch.broadcast_to(mask, w.shape)
    delta = logit_spread(scores, mask)
    lo, hi, top = dispersion_bounds(torch.nan_to_num(delta, nan=0.0), torch.clamp(n, min=1.0), tau)
    return {
        "entropy": attention_entropy(w),
        "max_coef": max_coefficient(w),
        "min_coef": -max_coefficient(-w.masked_fill(~vis, float("inf"))),  # NaN for a row of no key
        "delta": delta,
        "n": n,
        "lower": lo,
        "upper": hi,
        "top_upper": top,
    }
