"""The one registry of attention normalisers: ``name -> fn(scores, mask=None, **params) -> weights``.

Convention (all of iclab): ``scores`` has shape ``(..., n_queries, n_keys)`` and a normaliser acts on the
**last axis (keys)**, so that ``weights @ values`` with ``values: (..., n_keys, d_v)`` is the attention
output. ``mask`` is a boolean tensor broadcastable to ``scores``, ``True`` where a key is visible. A fully
masked row gives all-zero weights (never NaN).

Every registered normaliser is wrapped once, at registration, by :func:`_checked`: the scores must be a
floating-point tensor, the mask a bool tensor broadcastable to them, every keyword one the normaliser takes
(otherwise one :class:`ConfigError`, never a raw ``TypeError``/``RuntimeError``); a score of −inf hides its key
as the mask does; half-precision scores (``float16``/``bfloat16``) are normalised in ``float32`` and returned in
their own dtype, so that :math:`|s|/\tau > 65504` does not overflow to NaN. What each kind of normaliser
promises in every dtype, and the one NaN rule, are in ``_numerics``.
"""

from __future__ import annotations

import functools
import inspect
from typing import Callable, Protocol

import torch

from iclab.attention._arguments import check_tau_shape
from iclab.attention._numerics import KINDS, check_signed_rows, hide_minus_inf
from iclab.errors import ConfigError

__all__ = [
    "Normaliser",
    "register_normaliser",
    "get_normaliser",
    "check_params",
    "normalise",
    "normaliser_names",
    "normaliser_kind",
    "check_scores",
    "check_mask",
]


class Normaliser(Protocol):
    def __call__(self, scores: torch.Tensor, mask: torch.Tensor | None = None, **params) -> torch.Tensor: ...


_REGISTRY: dict[str, Normaliser] = {}
_KIND: dict[str, str] = {}


def register_normaliser(name: str, kind: str = "simplex") -> Callable[[Normaliser], Normaliser]:
    """Decorator: register ``fn`` under ``name`` (a name can be registered once) as a normaliser of ``kind``, one
    of :data:`~iclab.attention._numerics.KINDS` (what its rows promise; ``_numerics``)."""
    if not isinstance(name, str) or not name.strip():
        raise ConfigError("name", name, "a non-empty normaliser name")
    if not isinstance(kind, str) or kind not in KINDS:
        raise ConfigError("kind", kind, "one of " + ", ".join(KINDS))

    def deco(fn: Normaliser) -> Normaliser:
        if name in _REGISTRY and getattr(_REGISTRY[name], "__wrapped__", None) is not fn:
            raise ValueError(f"attention normaliser {name!r} is already registered")
        checked = _checked(name, fn, kind)
        _REGISTRY[name], _KIND[name] = checked, kind
        return checked

    return deco


_HALF = (torch.float16, torch.bfloat16)


def _checked(name: str, fn: Normaliser, kind: str) -> Normaliser:
    """``fn`` with its inputs checked (module docstring), −inf scores folded into the mask, half precision computed
    in float32, and a ``signed`` normaliser's rows checked (``_numerics``)."""
    params = inspect.signature(fn).parameters
    allowed = [p for p in params if p not in ("scores", "mask")]

    @functools.wraps(fn)
    def normaliser(scores: torch.Tensor, mask: torch.Tensor | None = None, **kwargs) -> torch.Tensor:
        unknown = [k for k in kwargs if k not in allowed]
        if unknown:
            raise ConfigError(
                unknown[0],
                kwargs[unknown[0]],
                message=f"unknown keyword {unknown[0]!r} for the "
                f"{name!r} normaliser; allowed: " + (", ".join(allowed) or "none"),
            )
        check_scores(scores)
        check_mask(mask, scores)
        check_tau_shape(kwargs.get("tau"), scores.shape)
        s, visible = hide_minus_inf(scores.float() if scores.dtype in _HALF else scores, mask)
        w = fn(s, visible, **kwargs)  # (..., n_q, n_k) in float32 for half precision
        if kind == "signed":
            check_signed_rows(name, w, scores.dtype, s, visible, kwargs)
        return w.to(scores.dtype) if scores.dtype in _HALF else w

    return normaliser


def check_scores(scores) -> None:
    """ConfigError unless ``scores`` is a floating-point torch tensor with a key axis, on a device with values."""
    if not isinstance(scores, torch.Tensor) or not scores.is_floating_point() or scores.dim() < 1:
        what = (
            f"<{type(scores).__name__}>"
            if not isinstance(scores, torch.Tensor)
            else f"<tensor of dtype {scores.dtype}, shape {tuple(scores.shape)}>"
        )
        raise ConfigError(
            "scores",
            what,
            message=f"invalid scores={what}: expected a floating-point torch.Tensor of shape (..., n_queries, n_keys)",
        )
    if scores.device.type == "meta":
        raise ConfigError(
            "scores", f"<tensor of shape {tuple(scores.shape)} on meta>", "a tensor with values, not meta"
        )


def check_mask(mask, scores: torch.Tensor) -> None:
    """ConfigError unless ``mask`` is None or a bool tensor broadcastable to ``scores`` (True = visible key)."""
    if mask is None:
        return
    ok = isinstance(mask, torch.Tensor) and mask.dtype == torch.bool
    if ok:
        try:
            ok = torch.broadcast_shapes(mask.shape, scores.shape) == scores.shape
        except RuntimeError:
            ok = False
    if not ok:
        what = (
            f"<tensor of dtype {mask.dtype}, shape {tuple(mask.shape)}>"
            if isinstance(mask, torch.Tensor)
            else f"<{type(mask).__name__}>"
        )
        raise ConfigError(
            "mask",
            what,
            message=f"invalid mask={what}: expected a bool tensor (True = visible key) "
            f"broadcastable to the scores' shape {tuple(scores.shape)}",
        )


def normaliser_names() -> list[str]:
    """Names of every registered normaliser, sorted (what ``attention=`` accepts)."""
    return sorted(_REGISTRY)


def normaliser_kind(name: str) -> str:
    """``"simplex"``, ``"signed"`` or ``"unnormalised"``: what the rows of ``name``'s weights promise (``_numerics``)."""
    get_normaliser(name)  # ConfigError for an unknown name
    return _KIND[name]


def get_normaliser(name: str, **params) -> Normaliser:
    """The normaliser registered as ``name``. If ``params`` are given they are validated now, where they
    enter (a model's constructor), not at the first forward pass: an unknown key or a bad value raises one
    ConfigError naming it and what is allowed."""
    try:
        fn = _REGISTRY[name] if isinstance(name, str) else None
        if fn is None:
            raise KeyError(name)
    except KeyError:
        raise ConfigError("attention", name, "one of " + ", ".join(normaliser_names())) from None
    if params:
        check_params(name, fn, params)
    return fn


def check_params(name: str, fn: Normaliser, params: dict) -> None:
    """Unknown keyword -> ConfigError listing the allowed ones; then a dry run on a 1x2 score row so that a
    bad value (``tau <= 0``, malformed coefficients) fails here with the normaliser's own ConfigError."""
    if not callable(fn):
        raise ConfigError("fn", f"<{type(fn).__name__}>", "a normaliser function (scores, mask, **params)")
    if not isinstance(params, dict) or not all(isinstance(k, str) for k in params):
        raise ConfigError("params", params, "a dict of keyword parameters")
    sig = inspect.signature(fn)
    allowed = [p for p in sig.parameters if p not in ("scores", "mask")]
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in sig.parameters.values())
    unknown = sorted(set(params) - set(allowed))
    if unknown and not takes_any:
        raise ConfigError(
            f"attention_params[{unknown[0]!r}]",
            params[unknown[0]],
            f"a parameter of {name!r}: one of " + ", ".join(allowed)
            if allowed
            else f"no parameters ({name!r} takes none)",
        )
    try:
        fn(torch.zeros(1, 2, dtype=torch.float64), None, **params)
    except ConfigError:
        raise
    except (TypeError, ValueError, RuntimeError) as exc:
        raise ConfigError(f"attention_params for {name!r}", params, f"values {name!r} accepts ({exc})") from None


def normalise(name: str, scores: torch.Tensor, mask: torch.Tensor | None = None, **params) -> torch.Tensor:
    """``get_normaliser(name)(scores, mask, **params)``: weights over the last (key) axis."""
    return get_normaliser(name)(scores, mask, **params)
