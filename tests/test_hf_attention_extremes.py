"""``iclab.hf.attention_extremes`` (the largest attention coefficient and δ of Lemma 2.1 / Thm 2.2 of arXiv:2410.01104
in real models; docs/papers/dispersion.md §5.7) on tiny random GPT-2, Llama (grouped-query) and BERT models: every
statistic equals the stock eager attention weights at the selected rows, the rows' visible keys are counted, the
top-coefficient bound of docs/papers/dispersion.md §4.1 holds row by row, and the model is left as it was."""

import numpy as np
import pytest
import torch

from _hf_helpers import VOCAB, output, tiny_models
from iclab.hf import attention_extremes
from iclab.theory.dispersion import top_coefficient_bound

T = 11


@pytest.fixture(scope="module")
def models():
    return {"eager": tiny_models("eager"), "sdpa": tiny_models("sdpa")}


@pytest.mark.parametrize("name", ["gpt2", "llama", "bert"])
@pytest.mark.parametrize("rows", [None, [1, 4, 10]])
def test_extremes_match_eager_weights(models, name, rows):
    causal = name != "bert"
    model, sdpa = models["eager"][name], models["sdpa"][name]  # the same weights
    ids = torch.randint(1, VOCAB, (1, T), generator=torch.Generator().manual_seed(5))
    with torch.no_grad():
        att = torch.stack(model(input_ids=ids, output_attentions=True).attentions)[:, 0]  # (L, H, T, T)
    sel = torch.arange(T) if rows is None else torch.tensor(rows)
    a = att[:, :, sel]  # (L, H, P, T)
    logw = torch.log(a)  # logits − lse: -inf on masked keys
    vis = torch.isfinite(logw)
    stock = output(sdpa, ids)
    ex = attention_extremes(sdpa, ids, causal, rows=None if rows is None else sel)
    assert ex["max_coef"].shape == tuple(a.shape[:3])
    np.testing.assert_allclose(ex["max_coef"], a.amax(-1).numpy(), atol=1e-6)  # eager Llama's softmax runs in float32
    np.testing.assert_allclose(ex["first_coef"], a[..., 0].numpy(), atol=1e-6)
    np.testing.assert_allclose(ex["rest_max_coef"], a[..., 1:].amax(-1).numpy(), atol=1e-6)
    delta = (logw.masked_fill(~vis, -torch.inf).amax(-1) - logw.masked_fill(~vis, torch.inf).amin(-1)).numpy()
    np.testing.assert_allclose(ex["delta"], delta, rtol=1e-5, atol=1e-5)
    keys = (sel + 1).numpy() if causal else np.full(len(sel), T)
    assert (ex["keys"] == keys).all()
    # Lemma 2.1 / docs/papers/dispersion.md §4.1, row by row: an internal consistency check, not a claim of the paper
    assert (ex["max_coef"] <= top_coefficient_bound(ex["delta"], ex["keys"]) + 1e-12).all()
    assert sdpa.config._attn_implementation == "sdpa" and torch.equal(output(sdpa, ids), stock)  # model restored


def test_bad_rows_raise(models):
    ids = torch.randint(1, VOCAB, (1, T), generator=torch.Generator().manual_seed(5))
    with pytest.raises(ValueError):
        attention_extremes(models["sdpa"]["gpt2"], ids, True, rows=[T])
