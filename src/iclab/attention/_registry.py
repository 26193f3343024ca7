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

__all__ = ["Normaliser", "register_normaliser", "get_normaliser", "normalise", "normaliser_names"]


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
    return sorted(_REGISTRY)


def get_normaliser(name: str) -> Normaliser:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ConfigError("attention", name, "one of " + ", ".join(normaliser_names())) from None


def normalise(name: str, scores: torch.Tensor, mask: torch.Tensor | None = None, **params) -> torch.Tensor:
    """``get_normaliser(name)(scores, mask, **params)``: weights over the last (key) axis."""
    return get_normaliser(name)(scores, mask, **params)
