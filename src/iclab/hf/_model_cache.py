"""Pretrained models loaded once per process, for the cells of every experiment a worker runs.

A sweep's cells run in long-lived worker processes (``iclab.runs``); several experiments (``temperature-llm``, the
``dispersion`` lookup, δ and real-model cells) use the same few models. :func:`shared_model` keeps one
``(model, tokenizer, source)`` per ``(name, causal, dtype, device)`` in the process, so a worker loads each model
once (about 4 s each for SmolLM2 and Gemma 3 270M on CPU), whichever cell asks first. A cached model is handed out
stock: a temperature left on it (a cell that set one without ``with_temperature`` and failed) is removed first.
Cells must not change a cached model's weights.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from iclab.errors import ConfigError
from iclab.hf._arguments import check_device
from iclab.hf._loading import MODEL_ALIASES, load_model, parse_dtype
from iclab.hf._temperature import reset_temperature

if TYPE_CHECKING:  # annotations only: importing iclab.hf does not import transformers
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

__all__ = ["shared_model", "clear_shared_models"]

_CACHE: dict[tuple[str, bool | None, str, str], tuple] = {}


def shared_model(
    name: str, *, causal: bool | None = None, dtype: torch.dtype | str = "float32", device: str = "cpu"
) -> tuple[PreTrainedModel, PreTrainedTokenizerBase, str]:
    """``(model, tokenizer, source)`` from :func:`iclab.hf.load_model`, loaded once per process per
    ``(name, causal, dtype, device)`` and moved to ``device``; errors of ``load_model`` are raised and nothing is
    cached.

    Arguments: ``name`` a non-empty string, as :func:`~iclab.hf.load_model`'s ``name_or_path``; ``causal`` None or a
    bool, as there; ``device`` a torch device that exists here (a ``torch.device`` or a string such as ``"cuda:1"``;
    not meta), checked before loading; ``dtype`` as :func:`~iclab.hf.parse_dtype` takes it, ``"auto"`` read for
    ``device``."""
    if not isinstance(name, str) or not name:
        raise ConfigError("name", name, f"{', '.join(map(repr, MODEL_ALIASES))}, a local path or a hub id")
    if causal is not None and not isinstance(causal, bool):
        raise ConfigError("causal", causal, "None (from the config), True (an LM head) or False (the bare model)")
    check_device("device", device)
    dtype = parse_dtype(dtype, device)
    alias = name.lower() if name.lower() in MODEL_ALIASES else name  # paths keep case
    key = (alias, causal, str(dtype), str(device))
    if key not in _CACHE:
        model, tok, source = load_model(name, causal=causal, dtype=dtype)
        _CACHE[key] = (model.to(device), tok, source)
    model, tok, source = _CACHE[key]
    return reset_temperature(model), tok, source


def clear_shared_models() -> None:
    """Forget every cached model (the next :func:`shared_model` loads again).

    Arguments: none."""
    _CACHE.clear()
