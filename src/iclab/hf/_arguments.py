"""Argument checks of the ``iclab.hf`` helpers, where the value enters: the range of temperatures a model of a given
dtype can take (:func:`iclab.hf.set_temperature`: τ and the scale 1/τ it puts on every logit both finite in that
dtype, τ real), and token ids a model can read (one ConfigError instead of torch's reshape or index errors)."""

from __future__ import annotations

import torch

from iclab.errors import ConfigError, UnsupportedModelError

__all__: list[str] = []  # used inside iclab.hf only


def check_model(model) -> None:
    """UnsupportedModelError unless ``model`` is a Hugging Face ``PreTrainedModel`` (a torch module with a config
    and a switchable attention implementation): anything else is named, never an AttributeError from inside."""
    if (
        not isinstance(model, torch.nn.Module)
        or not hasattr(model, "set_attn_implementation")
        or getattr(model, "config", None) is None
    ):
        raise UnsupportedModelError(f"{type(model).__name__} is not a Hugging Face PreTrainedModel")


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


def check_input_ids(model, input_ids, name: str = "input_ids", causal=None) -> None:
    """ConfigError unless ``input_ids`` is an integer tensor ``(B, T)`` with B, T >= 1, on a device with values,
    whose every id is a token of the model's vocabulary ``[0, vocab_size)`` (and ``causal``, when given, a bool)."""
    check_model(model)
    if causal is not None and not isinstance(causal, bool):
        raise ConfigError("causal", causal, "True (a decoder) or False (an encoder)")
    shown = f"<{type(input_ids).__name__}>"
    if isinstance(input_ids, torch.Tensor):
        shown = f"<tensor of dtype {str(input_ids.dtype).removeprefix('torch.')}, shape {tuple(input_ids.shape)}>"
    if (
        not isinstance(input_ids, torch.Tensor)
        or input_ids.dtype.is_floating_point
        or input_ids.dtype.is_complex
        or input_ids.dtype == torch.bool
        or input_ids.dim() != 2
        or 0 in input_ids.shape
        or input_ids.device.type == "meta"
    ):
        raise ConfigError(name, shown, "an integer tensor of token ids (B, T) with B, T >= 1 (not on meta)")
    cfg = model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
    vocab = getattr(cfg, "vocab_size", None)
    low, high = int(input_ids.min()), int(input_ids.max())
    if low < 0 or (isinstance(vocab, int) and high >= vocab):
        raise ConfigError(name, f"ids in [{low}, {high}]", f"token ids in [0, {vocab}) (the model's vocabulary)")
