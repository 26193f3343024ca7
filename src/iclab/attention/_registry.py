"""The one registry of attention normalisers: ``name -> fn(scores, mask=None, **params) -> weights``.

Convention (all of iclab): ``scores`` has shape ``(..., n_queries, n_keys)`` and a normaliser acts on the
**last axis (keys)**, so that ``weights @ values`` with ``values: (..., n_keys, d_v)`` is the attention
output. ``mask`` is a boolean tensor broadcastable to ``scores``, ``True`` where a key is visible. A fully
masked row gives all-zero weights (never NaN).
"""

from __future__ import annotations

from typing import Callable, Protocol

import torch

from iclab.errors import ConfigError

__all__ = ["Normaliser", "register_normaliser", "get_normaliser", "check_params", "normalise", "normaliser_names"]


class Normaliser(Protocol):
    def __call__(self, scores: torch.Tensor, mask: torch.Tensor | None = None, **params) -> torch.Tensor: ...


_REGISTRY: dict[str, Normaliser] = {}


def register_normaliser(name: str) -> Callable[[Normaliser], Normaliser]:
    """Decorator: register ``fn`` under ``name`` (a name can be registered once)."""

    def deco(fn: Normaliser) -> Normaliser:
        if name in _REGISTRY and _REGISTRY[name] is not fn:
            raise ValueError(f"attention normaliser {name!r} is already registered")
        _REGISTRY[name] = fn
        return fn

    return deco


def normaliser_names() -> list[str]:
    """Names of every registered normaliser, sorted (what ``attention=`` accepts)."""
    return sorted(_REGISTRY)


def get_normaliser(name: str, **params) -> Normaliser:
    """The normaliser registered as ``name``. If ``params`` are given they are validated now, where they
    enter (a model's constructor), not at the first forward pass: an unknown key or a bad value raises one
    ConfigError naming it and what is allowed."""
    try:
        fn = _REGISTRY[name]
    except KeyError:
        raise ConfigError("attention", name, "one of " + ", ".join(normaliser_names())) from None
    if params:
        check_params(name, fn, params)
    return fn


def check_params(name: str, fn: Normaliser, params: dict) -> None:
    """Unknown keyword -> ConfigError listing the allowed ones; then a dry run on a 1x2 score row so that a
    bad value (``tau <= 0``, malformed coefficients) fails here with the normaliser's own ConfigError."""
    import inspect

    sig = inspect.signature(fn)
    allowed = [p for p in sig.parameters if p not in ("scores", "mask")]
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in sig.parameters.values())
    unknown = sorted(set(params) - set(allowed))
    if unknown and not takes_any:
        raise ConfigError(f"attention_params[{unknown[0]!r}]", params[unknown[0]],
                          f"a parameter of {name!r}: one of " + ", ".join(allowed) if allowed
                          else f"no parameters ({name!r} takes none)")
    try:
        fn(torch.zeros(1, 2, dtype=torch.float64), None, **params)
    except ConfigError:
        raise
    except (TypeError, ValueError, RuntimeError) as exc:
        raise ConfigError(f"attention_params for {name!r}", params, f"values {name!r} accepts ({exc})") from None


def normalise(name: str, scores: torch.Tensor, mask: torch.Tensor | None = None, **params) -> torch.Tensor:
    """``get_normaliser(name)(scores, mask, **params)``: weights over the last (key) axis."""
    return get_normaliser(name)(scores, mask, **params)
