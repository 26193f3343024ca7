"""Logit-spread cells of the ``dispersion`` experiment: δ of real pretrained transformers on real text
(arXiv:2410.01104's Gemma δ table; docs/papers/dispersion.md §5.4, §6.4).

For every layer, head and query row of MiniLM (bidirectional, at most 512 tokens), SmolLM2-135M or Gemma 3 270M
(causal; Gemma's sliding-window layers see their window), δ = max −
min of the exact pre-softmax logits over the row's visible keys (:func:`iclab.hf.logit_spreads`), on English
sentences built from ``countryinfo`` facts (:func:`iclab.data.country_text`) truncated to ``delta_tokens`` tokens.
The paper fed Gemma its own ``modules.py`` source; no such file ships here.
"""

from __future__ import annotations

import numpy as np

from iclab.data import country_text
from iclab.experiments.dispersion.config import DELTA_BINS
from iclab.hf import logit_spreads, shared_model

__all__ = ["run_delta_cell"]


def _summary(d: np.ndarray) -> dict:
    """Pooled statistics, histogram and per-layer means of δ ``(L, H, rows)``."""
    flat = d.ravel()
    hist, _ = np.histogram(flat, DELTA_BINS)
    per_head = d.mean(-1).ravel()
    return {
        "layers": int(d.shape[0]),
        "heads": int(d.shape[1]),
        "rows": int(flat.size),
        "delta_min": float(flat.min()),
        "delta_max": float(flat.max()),
        "delta_mean": float(flat.mean()),
        "delta_sd": float(flat.std()),
        "delta_last_mean": float(d[..., -1].mean()),
        "delta_head_min": float(per_head.min()),
        "delta_head_max": float(per_head.max()),
        "delta_hist": hist.astype(float).tolist(),
        "delta_layer_mean": d.mean((1, 2)).astype(float).tolist(),
    }


def run_delta_cell(config, cell: dict) -> dict:
    """δ of one pretrained ``model`` (``minilm`` or ``smollm2``) on the country text shuffled by the run's ``seed``
    plus the cell's (seed 0 reads the shuffle of the cell's ``seed``)."""
    name = cell["model"]
    model, tok, src = shared_model(name)  # loaded once per worker process
    causal = name != "minilm"
    limit = config.delta_tokens if causal else min(config.delta_tokens, 512)
    text = country_text(int(config.seed) + int(cell["seed"]))
    ids = tok(text, return_tensors="pt", verbose=False)["input_ids"][:, :limit]  # sliced
    d = logit_spreads(model, ids, causal)  # (L, H, rows)
    return {"source": src, "text": "countryinfo sentences", "tokens": int(ids.shape[1]), **_summary(d)}
