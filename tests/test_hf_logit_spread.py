"""``iclab.hf.logit_spreads`` (the δ of Lemma 2.1 of arXiv:2410.01104 in real models; docs/papers/dispersion.md §5.4)
on tiny random GPT-2, Llama (grouped-query) and BERT models: δ equals max − min of log attention weights of the stock
eager model (the log-sum-exp cancels), causal rows with one visible key are skipped, and outputs are unchanged."""

import numpy as np
import pytest
import torch

from _hf_helpers import VOCAB, output, tiny_models
from iclab.hf import logit_spreads

T = 9


@pytest.fixture(scope="module")
def models():
    return {"eager": tiny_models("eager"), "sdpa": tiny_models("sdpa")}


@pytest.mark.parametrize("name", ["gpt2", "llama", "bert"])
def test_logit_spreads_match_eager_log_weights(models, name):
    causal = name != "bert"
    model = models["eager"][name]
    ids = torch.randint(1, VOCAB, (1, T), generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        att = model(input_ids=ids, output_attentions=True).attentions  # L x (1, H, T, T)
    ref = []
    for a in att:
        logw = torch.log(a[0])  # (H, T, T): logits − lse; -inf on masked keys
        vis = torch.isfinite(logw)
        hi = logw.masked_fill(~vis, -torch.inf).amax(-1)
        lo = logw.masked_fill(~vis, torch.inf).amin(-1)
        keep = vis[0].sum(-1) >= 2
        ref.append((hi - lo)[:, keep].numpy())
    ref = np.stack(ref)  # (L, H, rows)
    stock = output(models["sdpa"][name], ids)
    d = logit_spreads(model, ids, causal)
    assert d.shape == ref.shape == (len(att), att[0].shape[1], T - 1 if causal else T)
    np.testing.assert_allclose(d, ref, rtol=1e-5, atol=1e-5)  # δ is returned in float32
    assert torch.allclose(output(model, ids), stock, atol=1e-10)  # recording leaves the sdpa outputs unchanged
