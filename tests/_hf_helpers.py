"""Shared builders for the iclab.hf tests: tiny random-init GPT-2, Llama (grouped-query) and BERT models, a
hand-written reference attention (eager, per-(layer, head) τ) and a one-call output function."""

from __future__ import annotations

import copy

import torch

VOCAB, L, H = 53, 3, 5


def tiny_models(attn: str = "sdpa", dtype=torch.float64) -> dict:
    """``{"gpt2", "llama", "bert"}`` -> eval models with L=3 layers: GPT-2 and BERT with H=5 heads of dim 7,
    Llama with 9 query heads sharing 3 key/value heads (grouped-query attention) of dim 8. Weights are scaled up
    8× so that the random attention is sharp enough for τ to matter."""
    from transformers import BertConfig, BertModel, GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    models = {
        "gpt2": GPT2LMHeadModel(
            GPT2Config(
                n_layer=L,
                n_embd=35,
                n_head=H,
                vocab_size=VOCAB,
                n_positions=32,
                bos_token_id=0,
                eos_token_id=0,
                attn_implementation=attn,
            )
        ),
        "llama": LlamaForCausalLM(
            LlamaConfig(
                num_hidden_layers=L,
                hidden_size=72,
                num_attention_heads=9,
                num_key_value_heads=3,
                intermediate_size=40,
                vocab_size=VOCAB,
                max_position_embeddings=64,
                bos_token_id=0,
                eos_token_id=0,
                pad_token_id=0,
                attn_implementation=attn,
            )
        ),
        "bert": BertModel(
            BertConfig(
                num_hidden_layers=L,
                hidden_size=35,
                num_attention_heads=H,
                intermediate_size=40,
                vocab_size=VOCAB,
                max_position_embeddings=64,
                attn_implementation=attn,
            )
        ),
    }
    for m in models.values():
        m.to(dtype).eval()
        with torch.no_grad():  # sharper random attention than the 0.02 init, so τ matters
            for p in m.parameters():
                if p.ndim == 2:
                    p.mul_(8.0)
    return models


def heads(model) -> int:
    return model.config.num_attention_heads


def output(model, ids, mask=None) -> torch.Tensor:
    with torch.no_grad():
        out = model(input_ids=ids, attention_mask=mask)
    return out.logits if hasattr(out, "logits") else out.last_hidden_state


def batch(B=3, n=11, seed=1, pad_left=(0, 4, 2)):
    """``ids (B, n)`` and a 2-D mask with ``pad_left[b]`` left-padded positions (0 = padding)."""
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(1, VOCAB, (B, n), generator=g)
    mask = torch.ones(B, n, dtype=torch.long)
    for b, p in enumerate(pad_left[:B]):
        mask[b, :p] = 0
    return ids, mask


def capital_prompts(tok, second: str = "Italy") -> tuple[torch.Tensor, torch.Tensor]:
    """Two left-padded prompts of different lengths for a real model's tokenizer: a one-shot capital question (the
    demonstration France -> Paris, then ``second``) and a zero-shot one (Spain). Returns ``(input_ids, mask)``."""
    enc = tok(
        [f"Country: France\nCapital: Paris\n\nCountry: {second}\nCapital:", "Country: Spain\nCapital:"],
        return_tensors="pt",
        padding=True,
        padding_side="left",
    )
    return enc["input_ids"], enc["attention_mask"]


def max_diff(a: torch.Tensor, b: torch.Tensor) -> float:
    """max |a − b| where both are finite; ``inf`` if their NaN patterns differ. (Stock eager Llama in float64 gives
    NaN rows for left-padded sequences: its float32 softmax turns the float64 mask minimum into −inf.)"""
    na, nb = torch.isnan(a), torch.isnan(b)
    if not torch.equal(na, nb):
        return float("inf")
    return float((a - b)[~na].abs().max()) if bool((~na).any()) else 0.0


def same(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Bit-identical, NaN == NaN."""
    return torch.equal(torch.isnan(a), torch.isnan(b)) and torch.equal(a.nan_to_num(), b.nan_to_num())


def attention_modules(model):
    return [m for m in model.modules() if hasattr(m, "scaling") and isinstance(getattr(m, "layer_idx", None), int)]


def scaled_copy(model, tau_per_layer):
    """Reference for a per-layer τ: a deep copy whose attention modules have ``scaling / τ_ℓ`` (stock code path)."""
    ref = copy.deepcopy(model)
    for m in attention_modules(ref):
        m.scaling = m.scaling / float(tau_per_layer[m.layer_idx])
    return ref


_REF_TAU: dict[int, torch.Tensor] = {}


def _reference_attention(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kwargs):
    """Eager attention written out: softmax(q k^T · s / τ_{ℓh} + mask) v, keys/values repeated for GQA."""
    tau = _REF_TAU[id(module.config)][module.layer_idx].to(query.device, query.dtype)  # (H,)
    rep = query.shape[1] // key.shape[1]
    k = key.repeat_interleave(rep, 1)  # (B, H, k, d)
    v = value.repeat_interleave(rep, 1)
    s = (query @ k.transpose(-1, -2)) * scaling / tau.view(1, -1, 1, 1)  # (B, H, q, k)
    if attention_mask is not None:
        s = s + attention_mask
    w = torch.softmax(s, dim=-1)
    return (w @ v).transpose(1, 2).contiguous(), w


def reference_copy(model, table: torch.Tensor):
    """A deep copy running :func:`_reference_attention` with the ``(L, H)`` τ ``table`` (eager float masks)."""
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, eager_mask

    AttentionInterface.register("iclab_test_reference", _reference_attention)
    AttentionMaskInterface.register("iclab_test_reference", eager_mask)
    ref = copy.deepcopy(model)
    ref.set_attn_implementation("iclab_test_reference")
    _REF_TAU[id(ref.config)] = torch.as_tensor(table, dtype=torch.float64)
    return ref


def tiny_gemma3(
    attn: str = "sdpa",
    dtype=torch.float64,
    layer_types=("sliding_attention", "full_attention", "sliding_attention"),
    window: int = 4,
):
    """Random-init Gemma 3 (``Gemma3ForCausalLM``) with Gemma 3 270M's structure at toy size: len(layer_types) layers,
    3 query heads sharing 1 key/value head of dim 16, sliding-window (``window`` keys) and global layers, query/key
    RMSNorm. The q/k norm gains are raised so that attention is sharp enough for τ to matter."""
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig

    torch.manual_seed(0)
    cfg = Gemma3TextConfig(
        num_hidden_layers=len(layer_types),
        hidden_size=48,
        num_attention_heads=3,
        num_key_value_heads=1,
        head_dim=16,
        intermediate_size=40,
        vocab_size=VOCAB,
        max_position_embeddings=64,
        sliding_window=window,
        layer_types=list(layer_types),
        query_pre_attn_scalar=16,
        bos_token_id=0,
        eos_token_id=0,
        pad_token_id=0,
        attn_implementation=attn,
    )
    model = Gemma3ForCausalLM(cfg).to(dtype).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith(("q_norm.weight", "k_norm.weight")):
                p.fill_(2.0)  # Gemma's RMSNorm gain is 1 + weight: logits x9
    return model


def uncompiled_flex(monkeypatch) -> None:
    """Run transformers' flex_attention backend without torch.compile (minutes on a small CPU; same math)."""
    import transformers.integrations.flex_attention as fa
    import transformers.masking_utils as mu
    from torch.nn.attention.flex_attention import flex_attention

    def plain(query, key, value, training=False, **kwargs):
        return flex_attention(query, key, value, **kwargs)

    build = mu.create_block_mask
    monkeypatch.setattr(fa, "compile_friendly_flex_attention", plain)
    monkeypatch.setattr(mu, "create_block_mask", lambda *a, **kw: build(*a, **{**kw, "_compile": False}))
