"""iclab.hf scaling rules (logn, llama4, ministral, ssmax, yarn, softcap): each equals a reference written here (the
formula applied to the logits of a hand-written eager attention), cached decoding equals a full forward, identity
settings are bit-identical to stock, models that already scale are refused (or equal the rule when the native field
is moved into it), on tiny random-init models and the real MiniLM, SmolLM2-135M and Gemma 3 270M."""

from __future__ import annotations

import copy
import math

import pytest
import torch

from _hf_helpers import VOCAB, batch, output, same, tiny_gemma3, tiny_models
from iclab.errors import ConfigError, UnsupportedModelError
from iclab.hf import (
    ScalingRule,
    get_scaling_rule,
    native_scaling,
    parse_scaling_rule,
    reset_temperature,
    set_scaling_rule,
    set_temperature,
    with_scaling_rule,
)

# short contexts: parameters chosen so that every rule is active within a dozen tokens
RULES = (
    "logn:L=3",
    "llama4:a=0.4:f=3",
    "ministral:beta=0.5:L=4",
    "ssmax:L=5",
    "ssmax:s=0.7",
    "yarn:s=6",
    "yarn:m=1.3",
    "softcap:c=2",
    "logn:L=4+softcap:c=3",
    "logn:L=3:layers=0/2",
    "ssmax:L=5:layers=1+yarn:s=6",
)
IDENTITY = ("logn:L=1e9", "llama4:a=0", "ministral:beta=0", "yarn:s=1", "yarn:s=0.5", "softcap:c=inf")

# ---- the reference: the formula on the logits, in an eager attention written out ------------------------------------

_REF: dict[str, list] = {"rules": []}


def _ref_factor(name: str, prm: dict, p: torch.Tensor, n: torch.Tensor) -> torch.Tensor:
    """Each rule's logit factor at 0-based position ``p`` with ``n`` visible keys, as its source writes it."""
    if name == "logn":  # Qwen-1: log_L(p + 1) beyond L
        return torch.where(p + 1 > prm["L"], torch.log(p + 1) / math.log(prm["L"]), 1.0)
    if name == "llama4":  # transformers llama4: log1p(floor((p + 1) / floor_scale)) * attn_scale + 1
        return 1.0 + prm["a"] * torch.log(torch.floor((p + 1) / prm["f"]) + 1)
    if name == "ministral":  # transformers ministral3: 1 + beta * log(1 + floor(p / L))
        return 1.0 + prm["beta"] * torch.log(1 + torch.floor(p / prm["L"]))
    if name == "ssmax":  # Scalable-Softmax: s * log n
        return prm.get("s", 1 / math.log(prm.get("L", 2048))) * torch.log(n)
    if name == "yarn":  # m = 0.1 ln s + 1, on cos and sin: logits x m^2
        m = prm.get("m", 0.1 * math.log(prm.get("s", 1.0)) + 1.0)
        return torch.full_like(p, m * m)
    raise AssertionError(name)


def _ref_attention(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kwargs):
    """softmax(cap(q k^T s · g(p, n)) + mask) v with p from position_ids (else cache length + row) and n the keys
    the mask lets the row see."""
    rep = query.shape[1] // key.shape[1]
    k, v = key.repeat_interleave(rep, 1), value.repeat_interleave(rep, 1)  # (B, H, k, d)
    e = (query @ k.transpose(-1, -2)) * scaling  # (B, H, q, k)
    q_len, k_len = query.shape[2], key.shape[2]
    pos = kwargs.get("position_ids")
    pos = pos if pos is not None else torch.arange(q_len)[None] + (k_len - q_len)
    p = pos.to(torch.float64)[:, None, :, None]  # (B, 1, q, 1)
    if attention_mask is None:
        visible = torch.ones(1, 1, q_len, k_len, dtype=torch.bool)
    else:
        visible = attention_mask[..., :k_len] > torch.finfo(attention_mask.dtype).min / 2  # (B, 1, q, k)
    n = visible.sum(-1, keepdim=True).to(torch.float64).clamp(min=1)  # (B, 1, q, 1)
    for name, prm in _REF["rules"]:
        if "layers" in prm and str(module.layer_idx) not in prm["layers"].split("/"):
            continue
        if name == "softcap":
            e = prm["c"] * torch.tanh(e / prm["c"])
        else:
            e = e * _ref_factor(name, prm, p, n).to(e.dtype)
    if attention_mask is not None:
        e = e + attention_mask[..., :k_len]
    w = torch.softmax(e.float() if e.dtype != torch.float64 else e, dim=-1).to(v.dtype)
    return (w @ v).transpose(1, 2).contiguous(), w


def _parsed(text: str) -> list:
    rules = []
    for part in text.split("+"):
        name, *items = part.split(":")
        rules.append((name, {k: v if k == "layers" else float(v) for k, v in (i.split("=") for i in items)}))
    return [r for r in rules if r[0] != "softcap"] + [r for r in rules if r[0] == "softcap"]


def reference_output(model, rule: str, ids, mask=None, position_ids=None) -> torch.Tensor:
    """The model's output with :func:`_ref_attention` in place of its attention (its implementation restored)."""
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, eager_mask

    AttentionInterface.register("iclab_test_rule_ref", _ref_attention)
    AttentionMaskInterface.register("iclab_test_rule_ref", eager_mask)
    _REF["rules"] = _parsed(rule)
    before = model.config._attn_implementation
    model.set_attn_implementation("iclab_test_rule_ref")
    try:
        return forward(model, ids, mask, position_ids)
    finally:
        model.set_attn_implementation(before)


def forward(model, ids, mask=None, position_ids=None) -> torch.Tensor:
    with torch.no_grad():
        out = model(input_ids=ids, attention_mask=mask, position_ids=position_ids)
    return out.logits if hasattr(out, "logits") else out.last_hidden_state


def rule_output(model, rule: str, ids, mask=None, position_ids=None) -> torch.Tensor:
    with with_scaling_rule(model, rule):
        got = forward(model, ids, mask, position_ids)
    reset_temperature(model)
    return got


def rel_err(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a - b).abs().max() / b.abs().max())


def padded_positions(mask: torch.Tensor) -> torch.Tensor:
    """``(B, n)`` positions counted from each row's first real token (as ``generate`` makes them)."""
    return (mask.cumsum(-1) - 1).clamp(min=0)


@pytest.fixture(scope="module")
def tiny():
    return {**tiny_models("sdpa"), "gemma3": tiny_gemma3("sdpa")}


# ---- parsing -----------------------------------------------------------------------------------------------------


def test_parse_composes_and_fills_defaults():
    (logn, cap) = parse_scaling_rule(" logn:L=4096 + softcap:c=30 ")
    assert logn == ScalingRule("logn", {"L": 4096}) and logn.values == {"L": 4096.0}
    assert cap.values == {"c": 30.0} and cap.kind == "cap" and str(cap) == "softcap:c=30"
    assert parse_scaling_rule("llama4")[0].values == {"a": 0.1, "f": 8192.0}
    assert parse_scaling_rule("ministral:beta=0")[0].identity and not parse_scaling_rule("ssmax")[0].identity


@pytest.mark.parametrize(
    "text, match",
    [
        ("nope:L=3", r"invalid text='nope': expected rules logn:L=2048"),
        ("logn:K=3", r"invalid logn\.K='3': expected parameters L, layers of logn"),
        ("logn:layers=a/2", r"invalid logn\.layers='a/2': expected layer indices >= 0"),
        ("softcap:c=3:layers=1", r"invalid softcap\.layers='1'"),
        ("logn:L=1", r"invalid logn\.L=1\.0: expected a finite number > 1"),
        ("llama4:a=x", r"invalid llama4\.a='x'"),
        ("softcap:c=-2", r"invalid softcap\.c=-2\.0: expected a number > 0"),
        ("ssmax:L=8:s=0.3", r"invalid ssmax=.*one of L or s, not both"),
        ("logn:L", r"name:param=value"),
        ("logn+logn", r"each rule at most once"),
        ("", r"invalid text=''"),
    ],
)
def test_bad_rule_is_one_config_error(text, match):
    with pytest.raises(ConfigError, match=match):
        parse_scaling_rule(text)


# ---- every rule equals the reference ---------------------------------------------------------------------------


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("name", ["llama", "gpt2", "gemma3"])
def test_rule_matches_reference_with_padding(tiny, name, rule):
    model = tiny[name]
    ids, mask = batch(n=13)
    pos = padded_positions(mask) if name != "gpt2" else None  # GPT-2 passes no position_ids: cache length + row
    if name == "gpt2":
        mask = torch.ones_like(mask)  # its positions then count pads too; keep the rows unpadded
    got = rule_output(model, rule, ids, mask, pos)
    ref = reference_output(model, rule, ids, mask, pos)
    keep = mask.bool()
    assert rel_err(got[keep], ref[keep]) < 1e-10
    assert rel_err(got[keep], forward(model, ids, mask, pos)[keep]) > 1e-3  # the rule is active here


@pytest.mark.parametrize("rule", ["logn:L=3", "ssmax:L=5", "yarn:s=6", "softcap:c=2"])
def test_bidirectional_encoder_matches_reference(tiny, rule):
    model = tiny["bert"]
    ids, _ = batch(n=9)
    assert rel_err(rule_output(model, rule, ids), reference_output(model, rule, ids)) < 1e-10


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("name", ["llama", "gemma3"])
def test_cached_decoding_equals_full_forward(tiny, name, rule):
    """Prefill 3 tokens, then decode 8 one at a time (Gemma 3's window of 4 keys is passed): every step's logits
    equal the full forward's at that position, so positions come from the cache, not the query length."""
    model = tiny[name]
    ids, _ = batch(B=2, n=11, pad_left=(0, 0))
    with with_scaling_rule(model, rule), torch.no_grad():
        full = model(input_ids=ids).logits  # (B, n, V)
        out = model(input_ids=ids[:, :3], use_cache=True)
        steps = [out.logits[:, -1]]
        for t in range(3, ids.shape[1]):
            out = model(input_ids=ids[:, t : t + 1], cache=out.cache, use_cache=True)
            steps.append(out.logits[:, -1])
    reset_temperature(model)
    assert rel_err(torch.stack(steps, 1), full[:, 2:]) < 1e-10


@pytest.mark.parametrize("rule", IDENTITY)
@pytest.mark.parametrize("name", ["llama", "gemma3", "bert"])
def test_identity_setting_is_bit_identical(tiny, name, rule):
    model = tiny[name]
    ids, mask = batch(n=12)
    stock = output(model, ids, mask)
    with with_scaling_rule(model, rule):
        assert same(output(model, ids, mask), stock)
    reset_temperature(model)


def test_composes_with_temperature_and_is_reversible(tiny):
    model = tiny["llama"]
    ids, mask = batch(n=12)
    stock = output(model, ids, mask)
    set_temperature(model, 1.5)
    with with_scaling_rule(model, "logn:L=3"):
        assert get_scaling_rule(model) == parse_scaling_rule("logn:L=3")
        both = output(model, ids, mask)
    only_tau = output(model, ids, mask)
    reset_temperature(model)
    set_scaling_rule(model, "logn:L=3")
    only_rule = output(model, ids, mask)
    set_scaling_rule(model, None)
    assert get_scaling_rule(model) == () and same(output(model, ids, mask), stock)
    reset_temperature(model)
    for a, b in ((both, stock), (only_tau, stock), (only_rule, stock), (both, only_tau), (both, only_rule)):
        assert float((a - b).abs().max()) > 1e-3
    with pytest.raises(UnsupportedModelError, match="softcap cannot be combined with the adaptive"):
        with with_scaling_rule(set_temperature(model, "adaptive"), "softcap:c=2"):
            output(model, ids, mask)
    reset_temperature(model)
    assert same(output(model, ids, mask), stock)


def test_softcap_refused_on_flex(tiny):
    model = copy.deepcopy(tiny["llama"])
    model.set_attn_implementation("flex_attention")
    with pytest.raises(UnsupportedModelError, match="softcap needs the attention logits.*'flex_attention'"):
        set_scaling_rule(model, "softcap:c=3")
    set_scaling_rule(model, "logn:L=3")  # a query rule runs there
    assert get_scaling_rule(model)[0].name == "logn"
    reset_temperature(model)


# ---- models that already scale: refused naming the field, or equal to the rule when the field moves into it ------


def _tiny(config_cls, model_cls, attn="sdpa", **extra):
    torch.manual_seed(0)
    cfg = config_cls(
        num_hidden_layers=2,
        hidden_size=32,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=8,
        intermediate_size=24,
        vocab_size=VOCAB,
        max_position_embeddings=64,
        pad_token_id=0,
        attn_implementation=attn,
        **extra,
    )
    model = model_cls(cfg).to(torch.float64).eval()
    with torch.no_grad():
        for p in model.parameters():
            if p.ndim == 2:
                p.mul_(6.0)
    return model


def _moved(native, field_off: dict, rule: str):
    """The same weights in a model whose config has its own scaling switched off (``rope.`` keys go into
    ``rope_parameters``), with the rule set instead."""
    cfg = copy.deepcopy(native.config)
    for key, value in field_off.items():
        if key.startswith("rope."):
            cfg.rope_parameters[key[5:]] = value
        else:
            setattr(cfg, key, value)
    plain = type(native)(cfg).to(torch.float64).eval()
    plain.load_state_dict(native.state_dict())
    return set_scaling_rule(plain, rule)


def _native_cases():
    from transformers import (
        Gemma2Config,
        Gemma2ForCausalLM,
        LlamaConfig,
        LlamaForCausalLM,
        Ministral3Config,
        Ministral3ForCausalLM,
    )

    yield (
        "ministral",
        _tiny(
            Ministral3Config,
            Ministral3ForCausalLM,
            rope_parameters={
                "rope_type": "default",
                "rope_theta": 10000.0,
                "llama_4_scaling_beta": 0.5,
                "original_max_position_embeddings": 4,
            },
        ),
        "rope_parameters.llama_4_scaling_beta=0.5",
        {"rope.llama_4_scaling_beta": 0.0},
        "ministral:beta=0.5:L=4",
    )
    yield (
        "gemma2",
        _tiny(Gemma2Config, Gemma2ForCausalLM, "eager", attn_logit_softcapping=2.0, query_pre_attn_scalar=8),
        "attn_logit_softcapping=2.0",
        {"attn_logit_softcapping": None},
        "softcap:c=2",
    )
    yarn = {"rope_type": "yarn", "rope_theta": 10000.0, "factor": 4.0, "original_max_position_embeddings": 16}
    yield (
        "yarn",
        _tiny(LlamaConfig, LlamaForCausalLM, rope_parameters=yarn),
        "rope_parameters.rope_type='yarn'",
        {"rope.attention_factor": 1.0},
        "yarn:s=4",
    )


@pytest.mark.parametrize("case", ["ministral", "gemma2", "yarn", "llama4"])
def test_native_scaling_refused_or_moved_into_the_rule(case):
    if case == "llama4":
        native, field, off, rule = _llama4_case()
    else:
        native, field, off, rule = next((c[1:] for c in _native_cases() if c[0] == case))
    ids, mask = batch(n=13, pad_left=(0, 0, 0))
    stock = forward(native, ids, mask)
    with pytest.raises(UnsupportedModelError, match="already applies .*" + field.replace("(", r"\(").split("=")[0]):
        set_scaling_rule(native, rule)
    assert native.config._attn_implementation in ("sdpa", "eager")  # nothing was installed
    moved = _moved(native, off, rule)
    assert rel_err(forward(moved, ids, mask), stock) < 1e-6  # the field's own factor is float32; ours float64
    other = "logn:L=3" if case in ("gemma2", "yarn") else "softcap:c=3"
    set_scaling_rule(native, other)  # another kind of rule composes
    assert rel_err(forward(native, ids, mask), stock) > 1e-3
    reset_temperature(native)


def _llama4_case():
    """Llama 4 text model with a RoPE and a NoPE layer (its temperature tuning applies to the NoPE one), dense MLPs."""
    from transformers import Llama4ForCausalLM, Llama4TextConfig

    model = _tiny(
        Llama4TextConfig,
        Llama4ForCausalLM,
        intermediate_size_mlp=24,
        num_local_experts=1,
        moe_layers=[],
        no_rope_layers=[1, 0],  # layer 0 RoPE, layer 1 NoPE
        use_qk_norm=False,
        attn_temperature_tuning=True,
        floor_scale=3,
        attn_scale=0.4,
        attention_chunk_size=64,
    )
    return model, "attn_temperature_tuning=True", {"attn_temperature_tuning": False}, "llama4:a=0.4:f=3:layers=1"


def test_qwen_logn_field_is_detected(tiny):
    model = copy.deepcopy(tiny["llama"])
    model.config.use_logn_attn = True
    assert native_scaling(model) == {"use_logn_attn": ("context", True)}
    with pytest.raises(UnsupportedModelError, match=r"already applies context attention scaling \(use_logn_attn"):
        set_scaling_rule(model, "ssmax:L=5")
    set_scaling_rule(model, "softcap:c=4")
    reset_temperature(model)
    assert native_scaling(tiny["gemma3"]) == {}


# ---- real models from the installed packages --------------------------------------------------------------------


@pytest.fixture(scope="module")
def real(request):
    from iclab.hf import load_model

    return {name: load_model(name) for name in ("minilm", "smollm2", "gemma3-270m")}


@pytest.mark.slow
@pytest.mark.parametrize("name", ["smollm2", "gemma3-270m"])
def test_real_causal_lm_rules_match_reference(real, name):
    model, tok, _ = real[name]
    enc = tok(["Country: France\nCapital: Paris\n\nCountry: Peru\nCapital:"], return_tensors="pt")
    ids = enc["input_ids"]
    stock = forward(model, ids)
    for rule in ("logn:L=4", "llama4:a=0.3:f=4", "ministral:beta=0.3:L=4", "ssmax:L=8", "yarn:s=4", "softcap:c=8"):
        got, ref = rule_output(model, rule, ids), reference_output(model, rule, ids)
        assert rel_err(got, ref) < 1e-5, rule
        assert rel_err(got, stock) > 1e-3, rule
    with with_scaling_rule(model, "llama4:a=0"):
        assert torch.equal(forward(model, ids), stock)
    reset_temperature(model)
    assert model.config._attn_implementation == "sdpa"


@pytest.mark.slow
def test_real_minilm_rules_match_reference(real):
    model, tok, _ = real["minilm"]
    ids = tok(["the capital of france is paris"], return_tensors="pt")["input_ids"]
    for rule in ("ssmax:L=4", "yarn:s=4", "softcap:c=3"):
        assert rel_err(rule_output(model, rule, ids), reference_output(model, rule, ids)) < 1e-5, rule


# ---- where people evaluate: `iclab hf --tau-rule` and lm-eval's `tau_rule=` ---------------------------------------


def test_cli_probe_takes_a_rule_and_refuses_a_bad_one(tmp_path, capsys):
    from iclab.cli import main
    from iclab.hf import load_model, probe_prompts

    texts = ["the capital of france is paris", "one two three four five six"]
    prompts = tmp_path / "p.txt"
    prompts.write_text("\n".join(texts) + "\n", encoding="utf-8")

    def entropy(*flags) -> float:
        assert main(["hf", "probe", "--model", "minilm", "--prompts", str(prompts), *flags]) == 0
        line = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("mean entropy")][0]
        return float(line.split()[2])

    stock, ruled = entropy(), entropy("--tau-rule", "ssmax:L=3")
    model, tok, _ = load_model("minilm")
    with with_scaling_rule(model, "ssmax:L=3"):
        api = probe_prompts(model, tok, texts).mean_entropy()
    reset_temperature(model)
    assert ruled == pytest.approx(api, abs=1e-4) and abs(ruled - stock) > 1e-2
    capsys.readouterr()
    assert main(["hf", "probe", "--model", "minilm", "--prompts", str(prompts), "--tau-rule", "logn:L=1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["error: invalid --tau-rule='logn:L=1': invalid logn.L=1.0: expected a finite number > 1"]


@pytest.mark.slow
def test_lm_eval_model_takes_tau_rule():
    from iclab.hf._lm_eval import IclabHFLM

    with pytest.raises(ConfigError, match=r"invalid tau_rule='hot'"):
        IclabHFLM(pretrained="smollm2", tau_rule="hot", device="cpu")
    lm = IclabHFLM(pretrained="smollm2", tau="1.2", tau_rule="logn:L=4+softcap:c=20", device="cpu")
    assert get_scaling_rule(lm.model) == parse_scaling_rule("logn:L=4+softcap:c=20")
    info = lm.get_model_info()
    assert info["iclab_tau_rule"] == "logn:L=4+softcap:c=20" and info["iclab_tau"] == 1.2


@pytest.mark.parametrize("name", ["llama", "gemma3", "bert"])
@pytest.mark.parametrize("padded", [True, False])
@pytest.mark.parametrize("blocks", [(4, 16, 1 << 21), (6, 1, 3 * 9 * 20)], ids=["4-rows", "rows-shrink-with-keys"])
def test_softcap_row_blocks_match_reference(tiny, monkeypatch, name, padded, blocks):
    """Blocks of query rows (each reading only the keys its rows can see), with a padding mask and without one
    (sdpa then passes no mask): the same as the reference (the logistic form of the cap included), and cached
    decoding the same as the full forward. Blocks of 4 rows, or of as many rows (at most 6, at least 1) as keep a
    block within 540 scores: on Llama's 9 heads and 3 prompts, 3 rows at 6 keys down to 1 row at 14."""
    import iclab.hf._softcap as softcap

    for attr, value in zip(("_ROWS", "_MIN_ROWS", "_ELEMENTS"), blocks):
        monkeypatch.setattr(softcap, attr, value)
    model = tiny[name]
    ids, mask = batch(n=14, pad_left=(0, 5, 2) if padded else (0, 0, 0))
    pos = padded_positions(mask) if name != "bert" else None
    got = rule_output(model, "softcap:c=2", ids, mask if padded else None, pos)
    ref = reference_output(model, "softcap:c=2", ids, mask, pos)
    assert rel_err(got[mask.bool()], ref[mask.bool()]) < 1e-10
    if name != "bert" and not padded:
        with with_scaling_rule(model, "softcap:c=2"), torch.no_grad():
            out = model(input_ids=ids[:, :9], use_cache=True)
            step = model(input_ids=ids[:, 9:], cache=out.cache, use_cache=True).logits  # 5 rows: two blocks
        reset_temperature(model)
        assert rel_err(step, got[:, 9:]) < 1e-10


def test_layers_beyond_the_model_are_refused(tiny):
    with pytest.raises(ConfigError, match=r"invalid logn\.layers='1/5': expected layer indices 0\.\.2"):
        set_scaling_rule(tiny["llama"], "logn:L=3:layers=5/1")
    assert get_scaling_rule(tiny["llama"]) == ()
    assert str(parse_scaling_rule("llama4:a=0.2:layers=3/1")[0]) == "llama4:a=0.2:layers=1/3"


@pytest.mark.parametrize("rule", ["ssmax:L=5", "llama4:a=0.4:f=3+softcap:c=2"])
def test_padded_batch_generation_equals_each_prompt_alone(tiny, rule):
    """generate() on a left-padded batch: positions come from position_ids (counted from each row's first token),
    so every row decodes as it would alone."""
    model = tiny["llama"]
    ids, mask = batch(B=3, n=9, pad_left=(0, 4, 2))
    kw = {"max_new_tokens": 6, "do_sample": False, "output_scores": True, "return_dict_in_generate": True}
    with with_scaling_rule(model, rule), torch.no_grad():
        together = model.generate(input_ids=ids, attention_mask=mask, **kw)
        alone = [model.generate(input_ids=ids[b : b + 1, mask[b].bool()], **kw) for b in range(3)]
    reset_temperature(model)
    assert torch.equal(together.sequences[:, 9:], torch.cat([a.sequences[:, -6:] for a in alone]))
    scores = torch.stack(together.scores, 1)  # (B, steps, V): every step's logits
    assert rel_err(scores, torch.cat([torch.stack(a.scores, 1) for a in alone])) < 1e-8


def test_query_rule_composes_with_adaptive_temperature(tiny):
    """A query rule scales the rows the adaptive rule then reads: adaptive with ``yarn:m=…`` equals adaptive on a
    model whose attention scaling is multiplied by m²."""
    model = tiny["llama"]
    ids, mask = batch(n=12)
    set_temperature(model, "adaptive")
    with with_scaling_rule(model, "yarn:m=1.3"):
        got = output(model, ids, mask)
    reset_temperature(model)
    ref = copy.deepcopy(model)
    for m in ref.modules():
        if hasattr(m, "scaling") and isinstance(getattr(m, "layer_idx", None), int):
            m.scaling = m.scaling * 1.3**2
    set_temperature(ref, "adaptive")
    assert rel_err(got[mask.bool()], output(ref, ids, mask)[mask.bool()]) < 1e-10
    set_temperature(model, "adaptive")
    alone = output(model, ids, mask)
    reset_temperature(model)
    assert rel_err(got[mask.bool()], alone[mask.bool()]) > 1e-3
