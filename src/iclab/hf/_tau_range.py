"""The range of temperatures a Hugging Face model of a given dtype can take (:func:`iclab.hf.set_temperature`):
τ and the scale 1/τ it puts on every logit must both be finite in that dtype, and τ must be real."""

from __future__ import annotations

import torch

from iclab.errors import ConfigError

__all__: list[str] = []  # used by set_temperature only


def check_tau_range(tau, dtype: torch.dtype):
    r"""``tau`` unchanged when every finite positive entry lies in :math:`[1/f_{\max}, f_{\max}]` of ``dtype``
    (``torch.finfo(dtype).max``; float32: [2.9e-39, 3.4e38], float16: [1.5e-5, 65504]), where both :math:`\tau`
    and the scale :math:`1/\tau` applied to the logits are finite; a complex τ is refused. Entries that are not
    finite or not > 0, and shapes, are the caller's own check."""
    if isinstance(tau, complex) or (hasattr(tau, "dtype") and getattr(tau.dtype, "is_complex", False)):
        raise ConfigError("tau", tau, "real temperatures > 0 (not complex)")
    if hasattr(tau, "dtype") and str(getattr(tau, "dtype", "")).startswith("complex"):  # a NumPy complex array
        raise ConfigError("tau", tau, "real temperatures > 0 (not complex)")
    if isinstance(tau, str) or not dtype.is_floating_point:
        return tau
    try:
        t = torch.as_tensor(tau, dtype=torch.float64).detach().cpu()
    except (TypeError, ValueError, RuntimeError):
        return tau  # not a table of numbers: the caller says what is allowed
    lo, hi = 1.0 / torch.finfo(dtype).max, torch.finfo(dtype).max
    out = torch.isfinite(t) & (t > 0) & ((t < lo) | (t > hi))
    if bool(out.any()):
        shown = tau if t.numel() == 1 else f"array with entry {t[out].flatten()[0].item()!r}"
        name = str(dtype).removeprefix("torch.")
        raise ConfigError(
            "tau", shown, f"temperatures in [{lo:.3g}, {hi:.3g}] for a {name} model (tau and 1/tau finite)"
        )
    return tau
