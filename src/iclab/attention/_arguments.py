"""Argument checks shared by the public tensor functions of :mod:`iclab.attention` (and the ``iclab.hf`` helpers
built on them): each bad argument raises one :class:`~iclab.errors.ConfigError` naming it, its value and what is
allowed, where it enters, instead of a bare ``RuntimeError`` from deep inside torch (a meta tensor's ``.item()``, a
shape mismatch, mixed dtypes in a matrix product, a native kernel on empty inputs)."""

from __future__ import annotations

import math

import numpy as np
import torch

from iclab.errors import ConfigError

__all__ = ["check_tensor", "check_same_kind", "check_scale", "check_tau_shape", "check_bool"]


def _shown(t: torch.Tensor) -> str:
    return f"<tensor of dtype {str(t.dtype).removeprefix('torch.')}, shape {tuple(t.shape)}, on {t.device}>"


def check_tensor(name: str, value, floating: bool = True) -> torch.Tensor:
    """``value`` if it is a torch tensor (a floating-point one when ``floating``) on a device that holds data; a
    ``meta`` tensor has shapes but no values, so nothing can be computed from it."""
    if not isinstance(value, torch.Tensor):
        raise ConfigError(name, f"<{type(value).__name__}>", "a torch.Tensor")
    if floating and not value.is_floating_point():
        raise ConfigError(name, _shown(value), "a floating-point tensor (float16, bfloat16, float32 or float64)")
    if value.device.type == "meta":
        raise ConfigError(name, _shown(value), "a tensor with values (cpu, cuda or mps), not on the meta device")
    return value


def check_same_kind(**tensors: torch.Tensor) -> None:
    """ConfigError unless the named tensors share one dtype and one device (cast them first: mixed float16/float32
    inputs would otherwise fail inside a matrix product)."""
    items = list(tensors.items())
    first_name, first = items[0]
    for name, t in items[1:]:
        if t.dtype != first.dtype or t.device != first.device:
            raise ConfigError(
                name,
                _shown(t),
                f"the dtype and device of {first_name} ({str(first.dtype).removeprefix('torch.')} on {first.device})",
            )


def check_bool(name: str, value) -> bool:
    """``value`` as a bool; a ConfigError unless it is one (Python or NumPy): a switch, not a truth value of anything."""
    if not isinstance(value, (bool, np.bool_)):
        raise ConfigError(name, value, "True or False")
    return bool(value)


def check_scale(name: str, scale) -> float:
    """``scale`` as a float: a finite number > 0 (a logit scale; NaN or inf would make every weight NaN)."""
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not math.isfinite(scale) or scale <= 0:
        raise ConfigError(name, scale, "a finite number > 0 (or None for 1/sqrt(d))")
    return float(scale)


def check_tau_shape(tau, shape: torch.Size) -> None:
    """ConfigError unless a tensor ``tau`` broadcasts to ``shape`` without growing it (e.g. per head ``(H, 1, 1)``
    for scores ``(B, H, n_q, n_k)``)."""
    if isinstance(tau, np.ndarray) and tau.dtype.kind in "iuf":
        tau = torch.from_numpy(tau)
    if not isinstance(tau, torch.Tensor) or tau.dim() == 0:
        return
    try:
        fits = torch.broadcast_shapes(tau.shape, shape) == shape
    except RuntimeError:
        fits = False
    if not fits:
        raise ConfigError("tau", f"<tensor of shape {tuple(tau.shape)}>", f"a tensor broadcastable to {tuple(shape)}")
