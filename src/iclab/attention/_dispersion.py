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
from iclab.attention._registry import check_mask
from iclab.attention._softmax import check_tau, softmax, visible_count
from iclab.errors import ConfigError

__all__ = ["attention_entropy", "max_coefficient", "logit_spread", "dispersion_bounds", "dispersion_summary"]


def _check_rows(weights) -> None:
    """ConfigError unless ``weights`` is a floating-point tensor with a key axis of finite weights >= 0."""
    check_tensor("weights", weights)
    if weights.dim() == 0:
        raise ConfigError("weights", "<0-d tensor>", "a tensor of shape (..., n_keys)")
    if not bool((torch.isfinite(weights) & (weights >= 0)).all()):
        raise ConfigError("weights", f"<tensor of shape {tuple(weights.shape)}>", "attention weights: finite, >= 0")


_EXP_MAX = 709.0  # exp of more overflows float64


def _finite_tensor(name: str, value, low: float, allowed: str) -> torch.Tensor:
    """``value`` (a number, array or tensor) as a float64 tensor; ConfigError unless every entry is finite and >= low."""
    if isinstance(value, bool) or isinstance(value, (str, bytes)) or value is None:
        raise ConfigError(name, value, allowed)
    try:
        t = torch.as_tensor(value, dtype=torch.float64)
    except (TypeError, ValueError, RuntimeError):
        raise ConfigError(name, f"<{type(value).__name__}>", allowed) from None
    if (
        isinstance(value, torch.Tensor)
        and value.dtype == torch.bool
        or not bool((torch.isfinite(t) & (t >= low)).all())
    ):
        raise ConfigError(name, value if t.numel() <= 4 else f"<{tuple(t.shape)} values>", allowed)
    return t


def attention_entropy(weights: torch.Tensor) -> torch.Tensor:
    """Entropy (nats) of each row of non-negative weights summing to 1, shape ``weights.shape[:-1]`` (0 for a row
    of no key).

    Arguments: ``weights`` a floating-point tensor ``(..., n_keys)`` with at least one axis, not on the meta device,
    every entry finite and >= 0 (row sums are not checked)."""
    _check_rows(weights)
    return _entropy(weights)


def _entropy(weights: torch.Tensor) -> torch.Tensor:
    """:func:`attention_entropy` without its checks (half precision summed in float32)."""
    w = weights.float() if weights.dtype in (torch.float16, torch.bfloat16) else weights
    return -torch.special.xlogy(w, w).sum(-1).to(weights.dtype)


def max_coefficient(weights: torch.Tensor) -> torch.Tensor:
    """Largest weight of each row, shape ``weights.shape[:-1]`` (NaN for a row of no key: the maximum of nothing).

    Arguments: ``weights`` a floating-point tensor ``(..., n_keys)`` with at least one axis, not on the meta device,
    every entry finite and >= 0 (row sums are not checked)."""
    _check_rows(weights)
    return _row_max(weights)


def _row_max(weights: torch.Tensor) -> torch.Tensor:
    """:func:`max_coefficient` without its checks."""
    if weights.shape[-1] == 0:
        return weights.new_full(weights.shape[:-1], float("nan"))
    return weights.amax(-1)


def logit_spread(scores: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    r""":math:`\delta` = max - min of the logits over visible keys per row (NaN where no key is visible, as in a
    row of no key at all).

    Arguments: ``scores`` a floating-point tensor ``(..., n_keys)`` with at least one axis, not on the meta device (NaN
    and inf pass through); ``mask`` None or a bool tensor broadcastable to ``scores`` (True = visible key)."""
    check_tensor("scores", scores)
    if scores.dim() == 0:
        raise ConfigError("scores", "<0-d tensor>", "a tensor of shape (..., n_keys)")
    check_mask(mask, scores)
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
    :math:`e^{\delta/\theta}/(e^{\delta/\theta}+n-1)` (broadcast over ``delta`` and ``n``).

    Arguments: ``delta`` finite numbers >= 0 (a number, array or tensor; not a bool, a string or None); ``n`` finite
    numbers >= 1, likewise; ``tau`` a finite number > 0 or a tensor or array of them (:func:`check_tau`); the three of
    shapes that broadcast together; a bound past float64 (:math:`\delta/\theta - \ln n > 709`) is refused, never
    returned as inf (a ConfigError naming ``delta``)."""
    tau = check_tau(tau)
    d = _finite_tensor("delta", delta, 0.0, "a logit spread: finite, >= 0")
    t = torch.as_tensor(tau, dtype=torch.float64)
    try:
        d = d / t
    except RuntimeError:
        raise ConfigError(
            "tau", f"<shape {tuple(t.shape)}>", f"a shape that broadcasts against delta {tuple(d.shape)}"
        ) from None
    n = _finite_tensor("n", n, 1.0, "a number of visible keys: finite, >= 1")
    try:
        torch.broadcast_shapes(d.shape, n.shape)
    except RuntimeError:
        raise ConfigError(
            "n", f"<shape {tuple(n.shape)}>", f"a shape that broadcasts against delta {tuple(d.shape)}"
        ) from None
    bounds = _bounds(d, n)
    if not bool(torch.isfinite(bounds[1]).all()):
        raise ConfigError(
            "delta", delta, f"a spread whose bound e^(delta/tau)/n fits in float64 (delta/tau <= {_EXP_MAX:g})"
        )
    return bounds


def _bounds(d: torch.Tensor, n: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    r"""Lemma 2.1's three bounds from :math:`d = \delta/\theta` and n (the top bound in a form that cannot overflow;
    the upper bound inf past float64, where it says nothing: weights are at most 1)."""
    return torch.exp(-d) / n, torch.exp(d - torch.log(n)), 1.0 / (1.0 + (n - 1) * torch.exp(-d))


def dispersion_summary(
    scores: torch.Tensor, mask: torch.Tensor | None = None, tau: float | torch.Tensor = 1.0
) -> dict[str, torch.Tensor]:
    """Per-row ``entropy``, ``max_coef``, ``min_coef`` (over visible keys), ``delta``, ``n`` and the Lemma 2.1
    ``lower``/``upper``/``top_upper`` bounds for ``softmax(scores / tau, mask)``.

    Arguments: ``scores``, ``mask`` and ``tau`` as :func:`softmax` takes them: a floating-point tensor
    ``(..., n_queries, n_keys)``, None or a bool tensor broadcastable to it, and a finite temperature > 0 (a number, or
    a tensor broadcastable to ``scores``)."""
    w = softmax(scores, mask, tau=tau)  # (..., n_q, n_k)
    n = visible_count(scores, mask)[..., 0]  # (..., n_q)
    vis = torch.ones_like(w, dtype=torch.bool) if mask is None else torch.broadcast_to(mask, w.shape)
    delta = logit_spread(scores, mask)
    theta = torch.as_tensor(tau, dtype=torch.float64)
    d = torch.nan_to_num(delta, nan=0.0).to(torch.float64) / theta
    lo, hi, top = _bounds(d, torch.clamp(n, min=1.0).to(torch.float64))
    return {
        "entropy": _entropy(w),
        "max_coef": _row_max(w),
        "min_coef": -_row_max(-w.masked_fill(~vis, float("inf"))),  # NaN for a row of no key
        "delta": delta,
        "n": n,
        "lower": lo,
        "upper": hi,
        "top_upper": top,
    }
