"""iclab.hf probes: score moments and entropy at chosen query positions against the full score matrices captured
by a hand-written reference attention; probes leave outputs untouched and compose with τ."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from _hf_helpers import L, batch, output, tiny_models
from iclab.errors import ConfigError
from iclab.hf import probe_attention, probe_prompts, tokenize_batch, with_temperature

_CAPTURED: dict[int, list] = {}


def _capture_attention(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kwargs):
    rep = query.shape[1] // key.shape[1]
    k, v = key.repeat_interleave(rep, 1), value.repeat_interleave(rep, 1)
    s = (query @ k.transpose(-1, -2)) * scaling  # (B, H, q, k)
    _CAPTURED[id(module.config)].append((module.layer_idx, s.detach().clone(), attention_mask.detach().clone()))
    w = torch.softmax(s + attention_mask, -1)
    return (w @ v).transpose(1, 2).contiguous(), w


def captured_scores(model, ids, mask):
    """Per layer: full scores (B, H, n, n) and visibility (B, 1, n, n) from an eager copy of ``model``."""
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, eager_mask

    AttentionInterface.register("iclab_test_capture", _capture_attention)
    AttentionMaskInterface.register("iclab_test_capture", eager_mask)
    ref = copy.deepcopy(model)
    ref.set_attn_implementation("iclab_test_capture")
    _CAPTURED[id(ref.config)] = []
    output(ref, ids, mask)
    return {layer: (s, m == 0) for layer, s, m in _CAPTURED.pop(id(ref.config))}


def reference_moments(cap, rows, key_start=0):
    """Moments computed directly from the full matrices at query ``rows (B, P)``; arrays (L, H)."""
    out = {
        k: np.zeros((len(cap), next(iter(cap.values()))[0].shape[1]))
        for k in ("mean", "var", "row_var", "spread", "entropy")
    }
    for layer, (s, vis) in cap.items():
        B, H = s.shape[:2]
        vis = vis.expand(B, 1, *vis.shape[2:])
        for h in range(H):
            vals, rv, sp, ent = [], [], [], []
            for b in range(B):
                for r in rows[b].tolist():
                    keep = vis[b, 0, r].clone()
                    keep[:key_start] = False
                    x = s[b, h, r][keep].double().numpy()
                    p = np.exp(x - x.max())
                    p /= p.sum()
                    vals.append(x)
                    rv.append(x.var())
                    sp.append(x.max() - x.min())
                    ent.append(-(p * np.log(np.where(p > 0, p, 1))).sum())
            allv = np.concatenate(vals)
            out["mean"][layer, h], out["var"][layer, h] = allv.mean(), allv.var()
            out["row_var"][layer, h], out["spread"][layer, h] = np.mean(rv), np.mean(sp)
            out["entropy"][layer, h] = np.mean(ent)
    return out


@pytest.fixture(scope="module")
def models():
    return tiny_models("sdpa")


@pytest.mark.parametrize("name", ["gpt2", "llama", "bert"])
def test_probe_moments_match_full_matrices(models, name):
    m = models[name]
    ids, mask = batch()
    rows = torch.tensor([[10, 3], [10, 6], [9, 5]])  # (B, P): real (unpadded) positions
    cap = captured_scores(m, ids, mask)
    stock = output(m, ids, mask)
    with probe_attention(m, positions=rows, key_start=1) as probe:
        got_out = output(m, ids, mask)
    assert torch.equal(got_out, stock)  # probing changes nothing
    assert m.config._attn_implementation == "sdpa"
    res = probe.result()
    ref = reference_moments(cap, rows, key_start=1)
    for k in ("mean", "var", "row_var", "spread", "entropy"):
        np.testing.assert_allclose(getattr(res, k), ref[k], rtol=1e-9, atol=1e-9, err_msg=k)
    assert res.rows.sum() == L * m.config.num_attention_heads * rows.numel()
    ln = res.n.sum(1)
    np.testing.assert_allclose(res.layer_mean, (res.mean * res.n).sum(1) / ln, rtol=1e-12)
    np.testing.assert_allclose(res.rho(), res.layer_var / res.layer_mean)


def test_probe_under_tau_sees_scaled_scores(models):
    m = models["gpt2"]
    ids, mask = batch()
    with probe_attention(m, positions=-1) as p1:
        output(m, ids, mask)
    with with_temperature(m, 2.0), probe_attention(m, positions=-1) as p2:
        output(m, ids, mask)
    a, b = p1.result(), p2.result()
    np.testing.assert_allclose(b.mean[0], a.mean[0] / 2, rtol=1e-9)  # layer 0 input is τ-independent
    np.testing.assert_allclose(b.spread[0], a.spread[0] / 2, rtol=1e-9)
    assert (b.entropy[0] >= a.entropy[0] - 1e-12).all()
    with with_temperature(m, "adaptive"), probe_attention(m, positions=-1) as p3:
        output(m, ids, mask)
    np.testing.assert_allclose(p3.result().mean[0], a.mean[0], rtol=1e-9)
    assert (p3.result().entropy[0] <= a.entropy[0] + 1e-12).all()  # β ≥ 1 never raises entropy
    assert m.config._attn_implementation == "sdpa"


def test_probe_accumulates_over_batches(models):
    m = models["llama"]
    ids, mask = batch(pad_left=(0, 0, 0))
    with probe_attention(m, positions=[4, -1]) as whole:
        output(m, ids, mask)
    with probe_attention(m, positions=[4, -1]) as parts:
        output(m, ids[:1], mask[:1])
        output(m, ids[1:], mask[1:])
    for k in ("mean", "var", "row_var", "spread", "entropy"):
        np.testing.assert_allclose(getattr(parts.result(), k), getattr(whole.result(), k), rtol=1e-9, atol=1e-12)


def test_probe_bad_positions(models):
    m = models["bert"]
    ids, mask = batch()
    with pytest.raises(ConfigError, match="positions"):
        with probe_attention(m, positions=11):
            output(m, ids, mask)
    with pytest.raises(ConfigError, match="positions"):
        with probe_attention(m, positions=torch.zeros(2, 1, dtype=torch.long)):
            output(m, ids, mask)
    assert m.config._attn_implementation == "sdpa"


def test_probe_prompts_minilm_last_position():
    from iclab.hf import load_model

    model, tok, _ = load_model("minilm")
    prompts = ["the capital of france is paris", "a cat", "seven eleven three five"]
    res = probe_prompts(model, tok, prompts, batch_size=2)
    ids, mask, last = tokenize_batch(tok, prompts)
    assert last.tolist() == (mask.sum(1) - 1).tolist() and int(mask[1].sum()) < ids.shape[1]
    cap = captured_scores(model, ids, mask)
    ref = reference_moments(cap, last[:, None])
    np.testing.assert_allclose(res.entropy, ref["entropy"], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(res.mean, ref["mean"], rtol=1e-4, atol=1e-4)
    low = probe_prompts(model, tok, prompts, tau=0.5)
    assert low.mean_entropy() < res.mean_entropy()
    df = res.to_frame()
    assert len(df) == 6 * 12 and {"layer", "head", "mean", "var", "spread", "entropy"} <= set(df.columns)
    with pytest.raises(ConfigError, match="prompts"):
        probe_prompts(model, tok, [])


def test_prompts_are_checked_before_the_first_forward():
    """Issue 24: a 1 MB prompt reached the forward (a RuntimeError on the 512-position table); a blank prompt,
    one with no tokens, and a folder without tokenizer files each get one clear error."""
    from iclab.hf import check_prompts, load_model, max_tokens

    model, tok, _ = load_model("minilm")
    assert max_tokens(model, tok) == 512
    assert check_prompts(model, tok, ["a cat sat"]) == [5]  # [CLS] a cat sat [SEP]
    with pytest.raises(ConfigError, match=r"prompt 2 has more than 512 tokens \(1000000 characters\)"):
        probe_prompts(model, tok, ["a cat", "word " * 200_000])
    with pytest.raises(ConfigError, match=r"prompt 1 has 602 tokens"):
        probe_prompts(model, tok, ["word " * 600])  # counted in full when the head alone is not enough
    for bad, match in [([" \n"], "prompt 1 is blank"), (["ok", 3], "prompt 2 is not text"), ("a", "a non-empty")]:
        with pytest.raises(ConfigError, match=match):
            probe_prompts(model, tok, bad)


def test_a_folder_without_tokenizer_files_is_refused_at_load(tmp_path):
    from iclab.errors import UnsupportedModelError
    from iclab.hf import load_model

    load_model("minilm")[0].save_pretrained(tmp_path)
    with pytest.raises(UnsupportedModelError, match="no tokenizer files in"):
        load_model(str(tmp_path))
