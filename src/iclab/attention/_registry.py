"""The one registry of attention normalisers: ``name -> fn(scores, mask=None, **params) -> weights``.

Convention (all of iclab): ``scores`` has shape ``(..., n_queries, n_keys)`` and a normaliser acts on the
**last axis (keys)**, so that ``weights @ values`` with ``values: (..., n_keys, d_v)`` is the attention
output. ``mask`` is a boolean tensor broadcastable to ``scores``, ``True`` where a key is visible. A fully
masked row gives all-zero weights (never NaN).

Every registered normaliser is wrapped once, at registration, by :func:`_checked`: the scores must be a
floating-point tensor, the mask a bool tensor on their device and broadcastable to them, every keyword one the
normaliser takes, passed by keyword only, as its signature shows (otherwise one :class:`ConfigError`, never a raw
``TypeError``/``RuntimeError``); a score of −inf hides its key as the mask does; half-precision scores (``float16``/``bfloat16``) are normalised in ``float32`` and returned in
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
    of :data:`~iclab.attention._numerics.KINDS` (what its rows promise; ``_numerics``).

    The decorated ``fn`` takes ``scores`` and ``mask`` first; its other parameters are passed by keyword only, and the
    registered normaliser's signature says so.

    Arguments: ``name`` a non-empty string not yet registered (:func:`normaliser_names`; a name is never replaced: a
    taken one is a ConfigError naming ``name``); ``kind`` one of ``"simplex"``, ``"signed"``, ``"unnormalised"``. The
    decorator takes a callable ``fn(scores, mask=None, **params)``."""
    if not isinstance(name, str) or not name.strip():
        raise ConfigError("name", name, "a non-empty normaliser name")
    if not isinstance(kind, str) or kind not in KINDS:
        raise ConfigError("kind", kind, "one of " + ", ".join(KINDS))
    _check_free(name)

    def deco(fn: Normaliser) -> Normaliser:
        if not callable(fn):
            raise ConfigError("fn", f"<{type(fn).__name__}>", "a normaliser function fn(scores, mask=None, **params)")
        _check_free(name)  # registered between the call and the decoration
        checked = _checked(name, fn, kind)
        _REGISTRY[name], _KIND[name] = checked, kind
        return checked

    return deco


def _check_free(name: str) -> None:
    """A ConfigError naming ``name`` when a normaliser is registered under it already."""
    if name in _REGISTRY:
        raise ConfigError("name", name, "a name not registered yet (this one is taken; a normaliser is never replaced)")


def _keyword_only(fn: Normaliser) -> inspect.Signature:
    """``fn``'s signature with every parameter after ``scores`` and ``mask`` keyword-only, as the registered
    normaliser takes them (``**params`` stays; a ``*args`` catch-all is dropped: nothing more is positional)."""
    sig = inspect.signature(fn)
    params = []
    for p in sig.parameters.values():
        if p.name in ("scores", "mask") or p.kind is inspect.Parameter.VAR_KEYWORD:
            params.append(p)
        elif p.kind is not inspect.Parameter.VAR_POSITIONAL:
            params.append(p.replace(kind=inspect.Parameter.KEYWORD_ONLY))
    head = [p for p in params if p.name in ("scores", "mask")]
    tail = [p for p in params if p.name not in ("scores", "mask") and p.kind is not inspect.Parameter.VAR_KEYWORD]
    rest = [p for p in params if p.kind is inspect.Parameter.VAR_KEYWORD]
    return sig.replace(parameters=head + tail + rest)


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

    normaliser.__signature__ = _keyword_only(fn)  # its keywords are keyword-only (``inspect.signature`` says so)
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
    """ConfigError unless ``mask`` is None or a bool tensor on the device of ``scores``, broadcastable to them (True =
    visible key)."""
    if mask is None:
        return
    ok = isinstance(mask, torch.Tensor) and mask.dtype == torch.bool and mask.device == scores.device
    if ok:
        try:
            ok = torch.broadcast_shapes(mask.shape, scores.shape) == scores.shape
        except RuntimeError:
            ok = False
    if not ok:
        what = (
            f"<tensor of dtype {mask.dtype}, shape {tuple(mask.shape)}, on {mask.device}>"
            if isinstance(mask, torch.Tensor)
            else f"<{type(mask).__name__}>"
        )
        raise ConfigError(
            "mask",
            what,
            message=f"invalid mask={what}: expected a bool tensor (True = visible key) on the scores' device "
            f"({scores.device}), broadcastable to their shape {tuple(scores.shape)}",
        )


def normaliser_names() -> list[str]:
    """Names of every registered normaliser, sorted (what ``attention=`` accepts).

    Arguments: none."""
    return sorted(_REGISTRY)


def normaliser_kind(name: str) -> str:
    """``"simplex"``, ``"signed"`` or ``"unnormalised"``: what the rows of ``name``'s weights promise (``_numerics``).

    Arguments: ``name`` a registered normaliser name, as :func:`get_normaliser` takes it."""
    get_normaliser(name)  # ConfigError for an unknown name
    return _KIND[name]


def get_normaliser(name: str, **params) -> Normaliser:
    """The normaliser registered as ``name``. If ``params`` are given they are validated now, where they
    enter (a model's constructor), not at the first forward pass: an unknown key or a bad value raises one
    ConfigError naming it and what is allowed.

    Arguments: ``name`` a registered normaliser name (:func:`normaliser_names`; a ConfigError names it ``attention``,
    the argument of the models and configs that pass their choice on here);
    ``params`` keywords the normaliser takes, with values it accepts (:func:`check_params`)."""
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
    bad value (``tau <= 0``, malformed coefficients) fails here with the normaliser's own ConfigError.

    Arguments: ``name`` the normaliser's name (shown in messages, not looked up); ``fn`` a callable
    ``fn(scores, mask, **params)``; ``params`` a dict with string keys, each a keyword ``fn`` takes (any, when it takes
    ``**params``), whose values ``fn`` accepts on a 1 x 2 float64 score row (its own ConfigError, or its TypeError,
    ValueError or RuntimeError turned into one)."""
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
    """``get_normaliser(name)(scores, mask, **params)``: weights over the last (key) axis.

    Arguments: ``name`` as :func:`get_normaliser`; ``scores`` a floating-point tensor ``(..., n_queries, n_keys)`` with
    at least one axis, not on the meta device; ``mask`` None or a bool tensor broadcastable to ``scores`` (True =
    visible key); ``params`` keywords of that normaliser, by keyword only, with values it accepts (a ``tau`` tensor
    broadcastable to ``scores`` without growing it)."""
    return get_normaliser(name)(scores, mask, **params)
