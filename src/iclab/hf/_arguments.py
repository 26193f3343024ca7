"""Argument checks of the ``iclab.hf`` helpers, where the value enters: the range of temperatures a model of a given
dtype can take (:func:`iclab.hf.set_temperature`: τ and the scale 1/τ it puts on every logit both finite in that
dtype, τ real), token ids a model can read (one ConfigError instead of torch's reshape or index errors), and the
switches, tensors, devices, lists of text and tokenizers the helpers take (one ConfigError naming the argument, before
a model runs)."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from iclab.errors import ConfigError, UnsupportedModelError

__all__: list[str] = []  # used inside iclab.hf only


def check_bool(name: str, value) -> bool:
    """``value`` as a bool; a ConfigError naming ``name`` unless it is one (Python or NumPy): a switch, not a truth
    value of anything."""
    if not isinstance(value, (bool, np.bool_)):
        raise ConfigError(name, value, "True or False")
    return bool(value)


def check_tensor(name: str, value, floating: bool = True) -> torch.Tensor:
    """``value``; a ConfigError naming ``name`` unless it is a torch tensor (floating point when ``floating``) with
    values (not on the meta device)."""
    if not isinstance(value, torch.Tensor):
        raise ConfigError(name, f"<{type(value).__name__}>", "a torch.Tensor")
    shown = (
        f"<tensor of dtype {str(value.dtype).removeprefix('torch.')}, shape {tuple(value.shape)}, on {value.device}>"
    )
    if floating and not value.is_floating_point():
        raise ConfigError(name, shown, "a floating-point tensor (float16, bfloat16, float32 or float64)")
    if value.device.type == "meta":
        raise ConfigError(name, shown, "a tensor with values (cpu, cuda or mps), not on the meta device")
    return value


def check_device(name: str, device):
    """``device`` unchanged; a ConfigError naming ``name`` unless it is a ``torch.device`` or a string torch reads as
    one (``"cpu"``, ``"cuda:1"``), not ``meta``, that holds tensors on this machine (a CUDA index that exists)."""
    allowed = "a torch device that exists here, e.g. 'cpu', 'cuda' or 'cuda:0' (not meta)"
    if not isinstance(device, (str, torch.device)):
        raise ConfigError(name, device, allowed)
    try:
        dev = torch.device(device)
        if dev.type == "meta":
            raise ConfigError(name, device, allowed)
        torch.empty(0, device=dev)  # a device this machine does not have fails here, not after a model loads
    except (RuntimeError, AssertionError, ValueError, TypeError):  # torch says "not compiled with CUDA" by assert
        raise ConfigError(name, device, allowed) from None
    return device


def check_text_list(name: str, value) -> list[str]:
    """``value`` as a list; a ConfigError naming ``name`` unless it is a sequence (a list or tuple; not a string) of
    strings. Empty is the caller's rule."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise ConfigError(name, value, "a list of strings (not one string)")
    for i, text in enumerate(value, 1):
        if not isinstance(text, str):
            raise ConfigError(name, value, f"a list of strings (entry {i} is a {type(text).__name__})")
    return list(value)


def check_tokenizer(name: str, tokenizer, *methods: str) -> None:
    """A ConfigError naming ``name`` unless ``tokenizer`` is callable (a Hugging Face tokenizer) and has ``methods``."""
    missing = [m for m in methods if not callable(getattr(tokenizer, m, None))]
    if not callable(tokenizer) or missing:
        what = f"a Hugging Face tokenizer (callable on text{', with ' + ', '.join(missing) if missing else ''})"
        raise ConfigError(name, f"<{type(tokenizer).__name__}>", what)


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


_UNSET = object()


def check_input_ids(model, input_ids, name: str = "input_ids", causal=_UNSET, batch: int | None = None) -> None:
    """ConfigError unless ``input_ids`` is an integer tensor ``(B, T)`` with B, T >= 1 (B = ``batch`` when given), on
    a device with values, whose every id is a token of the model's vocabulary ``[0, vocab_size)`` (and ``causal``,
    when given, a bool)."""
    check_model(model)
    if causal is not _UNSET and not isinstance(causal, bool):
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
    if batch is not None and input_ids.shape[0] != batch:
        raise ConfigError(name, shown, f"an integer tensor of token ids ({batch}, T): {batch} sequence(s) per call")
    cfg = model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
    vocab = getattr(cfg, "vocab_size", None)
    low, high = int(input_ids.min()), int(input_ids.max())
    if low < 0 or (isinstance(vocab, int) and high >= vocab):
        raise ConfigError(name, f"ids in [{low}, {high}]", f"token ids in [0, {vocab}) (the model's vocabulary)")
