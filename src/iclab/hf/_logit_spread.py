r"""Logit spread of a Hugging Face transformer on one text: for every layer, head and query row,
:math:`\delta = \max_k s_k - \min_k s_k` of the exact pre-softmax logits :math:`s` (scaled by the model's own
``scaling``) over the row's visible keys — the δ that bounds sharpness in Lemma 2.1 of arXiv:2410.01104, measured
by the paper on Gemma (docs/papers/dispersion.md §3.2, §5.4).

An attention function registered through ``transformers.AttentionInterface`` (no model code copied) computes the
exact logits with :func:`iclab.hf.attention_scores` layer by layer, records δ in float64, and then runs the stock
sdpa attention, so the model's outputs are unchanged. (Reading δ back from eager float32 attention weights does not
work: some MiniLM rows have δ > 100, beyond float32's underflow.) Rows with fewer than two visible keys (the first
causal positions) are skipped. One unpadded sequence per call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import torch

from iclab.errors import UnsupportedModelError
from iclab.hf._arguments import check_input_ids
from iclab.hf._backends import _scores, observe_sdpa

if TYPE_CHECKING:  # annotations only: importing iclab.hf does not import transformers
    from transformers import PreTrainedModel

__all__ = ["logit_spreads"]

_RECORDER: list | None = None  # set while logit_spreads runs; the attention function appends (H, rows) arrays


def _observe_delta(module, query, key, attention_mask, scaling, is_causal) -> None:
    """Record the exact pre-softmax δ per (head, row) of one attention call (:func:`observe_sdpa`)."""
    if _RECORDER is not None:
        s, vis = _scores(module, query, key, attention_mask, scaling, is_causal=is_causal)
        s = s[0].double()  # (H, T, T) exact logits
        vis = torch.broadcast_to(vis[0], s.shape)
        hi = s.masked_fill(~vis, -torch.inf).amax(-1)
        lo = s.masked_fill(~vis, torch.inf).amin(-1)  # (H, T)
        keep = vis[0].sum(-1) >= 2
        _RECORDER.append((hi - lo)[:, keep].float().numpy())


@torch.no_grad()
def logit_spreads(model: PreTrainedModel, input_ids: torch.Tensor, causal: bool) -> np.ndarray:
    """δ for every (layer, head, query row) with >= 2 visible keys; ``input_ids (1, T)`` -> ``(L, H, rows)``.

    The model is left on the ``iclab_delta`` attention implementation (stock sdpa outputs, nothing recorded
    outside this call).

    Arguments: ``model`` a Hugging Face ``PreTrainedModel`` (else UnsupportedModelError) whose attention goes through
    ``AttentionInterface`` (a forward without an attention call is an UnsupportedModelError); ``input_ids`` an integer
    tensor ``(1, T)`` (not bool; one sequence) with T >= 1, not on the meta device, of ids in ``[0, vocab_size)``;
    ``causal`` a bool.
    """
    global _RECORDER
    check_input_ids(model, input_ids, causal=causal, batch=1)
    observe_sdpa(model, "iclab_delta", _observe_delta)
    body = getattr(model, "base_model", model)  # no LM head: (T, vocab) logits would dwarf the attention rows
    _RECORDER = []
    try:
        body(input_ids=input_ids, use_cache=False) if causal else body(input_ids=input_ids)
        layers = _RECORDER
    finally:
        _RECORDER = None
    if not layers:
        raise UnsupportedModelError(
            f"{type(model).__name__}: no attention call was observed in its forward pass (it does not use "
            "transformers' AttentionInterface, or it has no attention layer)"
        )
    return np.stack(layers)
