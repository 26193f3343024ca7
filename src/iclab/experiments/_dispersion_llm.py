"""Logit spread δ of real pretrained transformers on real text (dispersion spec §4.4, open detail 7).

For every layer, head and query row, δ = max − min of the pre-softmax logits (scaled by the model's own
``scaling``) over the row's visible keys. An attention function registered through ``transformers.AttentionInterface``
(no model code copied) computes the exact logits with ``iclab.hf.attention_scores`` layer by layer, records δ,
and then runs the stock sdpa attention, so the model's outputs are unchanged. (Reading δ back from eager float32
weights does not work: some MiniLM rows have δ > 100, beyond float32's underflow.) Rows with fewer than two
visible keys (the first causal positions) are skipped. One unpadded sequence per call.

Text (offline): English sentences generated from the ``countryinfo`` package's facts (capital, region,
subregion, population, area, borders) for all its countries, in a fixed shuffled order, truncated to
``tokens`` tokens. The paper fed Gemma its own ``modules.py`` source (per [δ-repl]); no such file ships here.
"""

from __future__ import annotations

import random

import numpy as np
import torch

__all__ = ["country_text", "logit_spreads", "run_delta_cell", "DELTA_BINS"]

DELTA_BINS = np.arange(0.0, 40.5, 0.5)


def country_text(seed: int = 0) -> str:
    """Sentences built from ``countryinfo`` facts, in a shuffled order fixed by ``seed``."""
    import countryinfo

    sents = []
    for c in countryinfo.all_countries():
        try:
            info = c.info()
        except Exception:  # pragma: no cover - a malformed entry in the package
            continue
        name, cap = info.get("name"), info.get("capital")
        if not name:
            continue
        s = f"{name} is a country in {info.get('subregion') or info.get('region') or 'the world'}."
        if cap:
            s += f" Its capital is {cap}."
        if info.get("population"):
            s += f" About {int(info['population']):,} people live there."
        if info.get("area"):
            s += f" It covers {int(info['area']):,} square kilometres."
        if info.get("borders"):
            s += f" It borders {len(info['borders'])} other countries."
        sents.append(s)
    random.Random(seed).shuffle(sents)
    return " ".join(sents)


_RECORDER: list | None = None  # set while logit_spreads runs; the attention function appends (H, rows) arrays


def _delta_attention(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kwargs):
    """Attention function: record exact pre-softmax δ per (head, row), then run the stock sdpa attention."""
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    from iclab.hf import attention_scores

    if scaling is None:
        scaling = query.shape[-1] ** -0.5
    if _RECORDER is not None:
        s, vis = attention_scores(module, query, key, attention_mask, scaling, is_causal=kwargs.get("is_causal"))
        s = s[0].double()  # (H, T, T) exact logits
        vis = torch.broadcast_to(vis[0], s.shape)
        hi = s.masked_fill(~vis, -torch.inf).amax(-1)
        lo = s.masked_fill(~vis, torch.inf).amin(-1)  # (H, T)
        keep = vis[0].sum(-1) >= 2
        _RECORDER.append((hi - lo)[:, keep].float().numpy())
    return sdpa_attention_forward(module, query, key, value, attention_mask, scaling=scaling, dropout=dropout,
                                  **kwargs)


def _use_delta_attention(model) -> None:
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface

    AttentionInterface.register("iclab_delta", _delta_attention)
    AttentionMaskInterface.register("iclab_delta", AttentionMaskInterface._global_mapping["sdpa"])
    model.set_attn_implementation("iclab_delta")


@torch.no_grad()
def logit_spreads(model, input_ids: torch.Tensor, causal: bool) -> np.ndarray:
    """δ for every (layer, head, query row) with >= 2 visible keys; ``input_ids (1, T)`` -> ``(L, H, rows)``."""
    global _RECORDER
    _use_delta_attention(model)
    _RECORDER = []
    try:
        model(input_ids=input_ids, use_cache=False) if causal else model(input_ids=input_ids)
        layers = _RECORDER
    finally:
        _RECORDER = None
    if not layers:
        raise RuntimeError("no attention call was observed: the model does not use transformers' AttentionInterface")
    return np.stack(layers)


def _load(name: str):
    from iclab.hf import load_model

    model, tok, src = load_model(name)
    return model, tok, src


def run_delta_cell(config, cell: dict) -> dict:
    torch.manual_seed(0)
    name = cell["model"]
    model, tok, src = _load(name)
    causal = name != "minilm"
    limit = config.delta_tokens if causal else min(config.delta_tokens, 512)
    ids = tok(country_text(cell["seed"]), return_tensors="pt")["input_ids"][:, :limit]
    d = logit_spreads(model, ids, causal)  # (L, H, rows)
    flat = d.ravel()
    hist, _ = np.histogram(flat, DELTA_BINS)
    per_head = d.mean(-1).ravel()
    return {"source": src, "text": "countryinfo sentences", "tokens": int(ids.shape[1]), "layers": int(d.shape[0]),
            "heads": int(d.shape[1]), "rows": int(flat.size), "delta_min": float(flat.min()),
            "delta_max": float(flat.max()), "delta_mean": float(flat.mean()), "delta_sd": float(flat.std()),
            "delta_last_mean": float(d[..., -1].mean()), "delta_head_min": float(per_head.min()),
            "delta_head_max": float(per_head.max()), "delta_hist": hist.astype(float).tolist(),
            "delta_layer_mean": d.mean((1, 2)).astype(float).tolist()}
