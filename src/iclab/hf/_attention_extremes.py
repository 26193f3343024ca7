r"""The largest attention coefficients of a Hugging Face transformer on one text: for every layer, head and selected
query row, the largest softmax coefficient :math:`\alpha_{\max} = \max_k \mathrm{softmax}(s)_k`, the coefficient on
the first key, the largest coefficient on any other key, and the logit spread :math:`\delta = \max_k s_k - \min_k s_k`
over the row's visible keys — the quantities of Lemma 2.1 and Theorem 2.2 of arXiv:2410.01104 (a global head's
coefficients are :math:`\Theta(1/n)` once δ is bounded; docs/papers/dispersion.md §3.2–3.3, §5.7).

As :func:`iclab.hf.logit_spreads` does, an attention function registered through ``transformers.AttentionInterface``
(no model code copied) computes the exact logits with :func:`iclab.hf.attention_scores` for the selected rows, layer
by layer, in float64, records the statistics, and then runs the stock sdpa attention, so the model's outputs are
unchanged. The visible keys of a row come from the mask the model builds (causal, sliding window) or, when the mask
was skipped, from the module's causality. One unpadded sequence per call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import torch

from iclab.errors import ConfigError, UnsupportedModelError
from iclab.hf._arguments import check_input_ids
from iclab.hf._backends import _scores, observe_sdpa

if TYPE_CHECKING:  # annotations only: importing iclab.hf does not import transformers
    from transformers import PreTrainedModel

__all__ = ["attention_extremes", "EXTREMES"]

EXTREMES = ("max_coef", "first_coef", "rest_max_coef", "delta", "keys")
_ROW_CHUNK = 128  # query rows whose logits are held at once (memory, not speed)
_RECORDER: dict | None = None  # set while attention_extremes runs: {"rows": (1, P) long tensor, "out": [...]}


def _row_statistics(s: torch.Tensor, vis: torch.Tensor) -> dict[str, torch.Tensor]:
    """``s (H, P, k)`` float64 logits, ``vis (H, P, k)`` bool -> each statistic ``(H, P)``."""
    p = torch.softmax(s.masked_fill(~vis, -torch.inf), -1)  # (H, P, k)
    hi = s.masked_fill(~vis, -torch.inf).amax(-1)
    lo = s.masked_fill(~vis, torch.inf).amin(-1)  # (H, P)
    rest = p[..., 1:].amax(-1) if p.shape[-1] > 1 else torch.zeros_like(hi)
    return {
        "max_coef": p.amax(-1),
        "first_coef": p[..., 0],
        "rest_max_coef": rest,
        "delta": hi - lo,
        "keys": vis.sum(-1).double(),
    }


def _observe_extremes(module, query, key, attention_mask, scaling, is_causal) -> None:
    """Record the row statistics of the selected rows of one attention call (:func:`observe_sdpa`)."""
    if _RECORDER is not None:
        parts = []
        for rows in _RECORDER["rows"].to(query.device).split(_ROW_CHUNK, dim=1):  # (1, P_chunk) on the device
            s, vis = _scores(module, query, key, attention_mask, scaling, rows=rows, is_causal=is_causal)
            s = s[0].double()  # (H, P_chunk, k) exact logits
            parts.append(_row_statistics(s, torch.broadcast_to(vis[0], s.shape)))
        _RECORDER["out"].append({k: torch.cat([p[k] for p in parts], 1).cpu().numpy() for k in EXTREMES})


@torch.no_grad()
def attention_extremes(
    model: PreTrainedModel, input_ids: torch.Tensor, causal: bool, rows: torch.Tensor | None = None
) -> dict[str, np.ndarray]:
    """Row statistics of every layer and head at the query positions ``rows`` (all positions when None).

    ``input_ids (1, T)``, ``rows (P,)`` long. Returns ``{name: (L, H, P) float64 array}`` for ``max_coef`` (the
    largest coefficient), ``first_coef`` (the coefficient on key 0), ``rest_max_coef`` (the largest on keys 1…),
    ``delta`` (max − min logit over the visible keys) and ``keys`` (how many keys the row sees). The model's own
    attention implementation is restored afterwards.

    Arguments: ``model`` a Hugging Face ``PreTrainedModel`` (else UnsupportedModelError) whose attention goes through
    ``AttentionInterface`` (a forward without an attention call is an UnsupportedModelError); ``input_ids`` an integer
    tensor ``(1, T)`` (not bool; one sequence) with T >= 1, not on the meta device, of ids in ``[0, vocab_size)``;
    ``causal`` a bool; ``rows`` None (every position) or a non-empty 1-D list
    or integer tensor of positions in ``[0, T)`` (a list may hold integral floats).
    """
    global _RECORDER
    check_input_ids(model, input_ids, causal=causal, batch=1)
    T = input_ids.shape[1]
    allowed = f"a 1-D list or tensor of query positions, integers in [0, {T}), non-empty"
    if rows is None:
        rows = torch.arange(T)
    else:
        integral = not isinstance(rows, (bool, str, bytes)) and (
            not isinstance(rows, torch.Tensor)
            or not (rows.is_floating_point() or rows.is_complex() or rows.dtype == torch.bool)
        )
        try:
            as_long = torch.as_tensor(rows, dtype=torch.long) if integral else None
        except (TypeError, ValueError, RuntimeError):
            as_long = None
        if (
            as_long is None
            or as_long.dim() != 1
            or (
                not isinstance(rows, torch.Tensor)
                and not torch.equal(torch.as_tensor(rows, dtype=torch.float64), as_long.double())
            )
        ):
            raise ConfigError(
                "rows",
                rows if not isinstance(rows, torch.Tensor) else f"<tensor of shape {tuple(rows.shape)}>",
                allowed,
            )
        rows = as_long
    if rows.numel() == 0 or int(rows.min()) < 0 or int(rows.max()) >= T:
        raise ConfigError("rows", rows.tolist()[:8], allowed)
    before = model.config._attn_implementation
    observe_sdpa(model, "iclab_extremes", _observe_extremes)
    body = getattr(model, "base_model", model)  # no LM head: (T, vocab) logits would dwarf the attention rows
    _RECORDER = {"rows": rows[None], "out": []}
    try:
        body(input_ids=input_ids, use_cache=False) if causal else body(input_ids=input_ids)
        layers = _RECORDER["out"]
    finally:
        _RECORDER = None
        model.set_attn_implementation(before)
    if not layers:
        raise UnsupportedModelError(
            f"{type(model).__name__}: no attention call was observed in its forward pass (it does not use "
            "transformers' AttentionInterface, or it has no attention layer)"
        )
    return {k: np.stack([layer[k] for layer in layers]) for k in EXTREMES}
