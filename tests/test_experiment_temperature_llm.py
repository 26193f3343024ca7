"""End-to-end tests of experiment ``temperature-llm`` (arXiv:2511.01292 §5.2, docs/papers/temperature.md §5.3)
on a tiny random-init Llama with an offline byte tokenizer,
plus one slow test on the real SmolLM2-135M-Instruct."""

import json

import numpy as np
import pytest
import torch

from iclab.errors import ConfigError
from iclab.experiments import get_experiment
from iclab.experiments.temperature.llm import cells as E
from iclab.experiments.temperature.llm.config import TemperatureLLMConfig
from iclab.hf import build_prompts, capital_task, greedy_answers, n_noisy, split_items


def _byte_tokenizer():
    """A byte-level tokenizer (256 byte tokens, no merges) + pad/eos, built offline."""
    from tokenizers import Tokenizer, decoders, models
    from tokenizers.pre_tokenizers import ByteLevel
    from transformers import PreTrainedTokenizerFast

    vocab = {c: i for i, c in enumerate(sorted(ByteLevel.alphabet()))}
    vocab.update({"<pad>": 256, "<eos>": 257})
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tok.pre_tokenizer = ByteLevel(add_prefix_space=False, use_regex=False)
    tok.decoder = decoders.ByteLevel()
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="<eos>")


@pytest.fixture(scope="module")
def tiny_model_dir(tmp_path_factory):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=258, hidden_size=24, intermediate_size=40, num_hidden_layers=3, num_attention_heads=3,
                      num_key_value_heads=1, max_position_embeddings=1024, pad_token_id=256, eos_token_id=257,
                      bos_token_id=257)
    model = LlamaForCausalLM(cfg)
    path = tmp_path_factory.mktemp("tiny_llama")
    model.save_pretrained(path)
    _byte_tokenizer().save_pretrained(path)
    return str(path)


def test_byte_tokenizer_round_trip():
    tok = _byte_tokenizer()
    text = "Country: Curaçao\nCapital: Willemstad\n\n"
    assert tok.decode(tok(text)["input_ids"]) == text


def test_batched_greedy_equals_one_by_one(tiny_model_dir):
    """Left padding changes no answer: a batch of prompts of different lengths gives the per-prompt answers."""
    model, tok, _ = E.load_cached(tiny_model_dir)
    task = capital_task()
    q, pool = split_items(task, 5, seed=1)
    ps = build_prompts(task, q, pool, 3, 0.3, seed=1)
    batched = greedy_answers(model, tok, ps.prompts, max_new_tokens=4, batch_size=5)
    single = [greedy_answers(model, tok, [p], max_new_tokens=4, batch_size=1)[0] for p in ps.prompts]
    assert batched == single
    assert len(set(len(tok(p)["input_ids"]) for p in ps.prompts)) > 1  # lengths really differ


def test_config_errors():
    with pytest.raises(ConfigError, match="taus"):
        TemperatureLLMConfig(taus=(0.5, 2.0))
    with pytest.raises(ConfigError, match="tasks"):
        TemperatureLLMConfig(tasks=("rivers",))
    with pytest.raises(ConfigError, match="noise_ratios"):
        TemperatureLLMConfig(noise_ratios=(0.2, 1.3))
    with pytest.raises(ConfigError, match="n_questions"):
        TemperatureLLMConfig(n_questions=1)


def test_cells_cover_noise_and_demo_sweeps():
    cfg = TemperatureLLMConfig(tasks=("capital", "antonym"), noise_ratios=(0.0, 0.6), n_demos=6,
                                 demo_counts=(2, 6, 8), demo_noise=0.6, repeats=3)
    cells = E.cells(cfg)
    noise = [c for c in cells if c["part"] == "noise"]
    demos = [c for c in cells if c["part"] == "demos"]
    assert len(noise) == 2 * 3 * 2 and len(demos) == 2 * 3 * 2  # k=6 at noise 0.6 is shared with the noise sweep
    assert json.loads(json.dumps(cells)) == cells
    assert len({json.dumps(c, sort_keys=True) for c in cells}) == len(cells)


def test_end_to_end_tiny_llama(tiny_model_dir, tmp_path):
    from iclab.report import run_and_report

    over = {"model": tiny_model_dir, "tasks": ("antonym",), "noise_ratios": (0.0, 0.5), "n_demos": 2,
            "demo_counts": (1, 3), "demo_noise": 0.5, "taus": (0.5, 1.0, 2.0), "n_questions": 4, "repeats": 2,
            "max_new_tokens": 3, "batch_size": 4, "adaptive": True, "moment_rule": True}
    res = run_and_report("temperature-llm", "quick", over, out=tmp_path / "run", executor="serial", progress=False)
    df = res.results
    assert len(df) == len(E.cells(get_experiment("temperature-llm").config("quick", over))) == 2 * 4
    for _, r in df.iterrows():
        assert len(r["em_tau"]) == 3 and all(0.0 <= e <= 1.0 for e in r["em_tau"])
        assert 0.0 <= r["em_heldout"] <= 1.0 and 0.0 <= r["em_adaptive"] <= 1.0
        assert len(r["layer_tau"]) == 3 and all(t > 0 for t in r["layer_tau"])
        if r["noise_ratio"] == 0.0:
            assert r["layer_tau"] == [1.0, 1.0, 1.0] and r["em_moment"] == r["em_tau1"]
            assert r["noisy_demos"] == 0.0
        else:
            assert r["noisy_demos"] == pytest.approx(n_noisy(r["n_demos"], 0.5) / r["n_demos"])
    noisy = df[df["noise_ratio"] == 0.5]
    assert not np.allclose(np.array(noisy["layer_tau"].tolist()), 1.0)  # the moment rule saw different scores
    figs = sorted(p.name for p in (res.path / "figures").glob("*.png"))
    assert figs == ["llm_best_tau_vs_noise.png", "llm_em_vs_demos.png", "llm_em_vs_tau.png"]
    report = (res.path / "report.md").read_text()
    assert "best τ grows with noise" in report and "0.33 sd" in report


def test_run_cell_same_prompts_for_every_tau(tiny_model_dir, monkeypatch):
    """Every τ of a cell is evaluated on identical prompts (the same demonstrations)."""
    seen = []
    real = E.evaluate_prompts

    def spy(model, tok, prompts, answers, tau, cfg):
        seen.append((tuple(prompts), tau))
        return real(model, tok, prompts, answers, tau, cfg)

    monkeypatch.setattr(E, "evaluate_prompts", spy)
    cfg = TemperatureLLMConfig(model=tiny_model_dir, tasks=("continent",), taus=(0.75, 1.0, 1.5), n_questions=3,
                                 max_new_tokens=2, adaptive=True, moment_rule=True)
    E.run_cell(cfg, {"part": "noise", "task": "continent", "noise_ratio": 0.4, "n_demos": 5, "repeat": 0,
                      "seed": 7}, None)
    assert len(seen) == 5 and len({p for p, _ in seen}) == 1
    assert [t for _, t in seen][:3] == [0.75, 1.0, 1.5] and seen[-1][1] == "adaptive"


@pytest.mark.slow
def test_real_smollm2_two_questions():
    cfg = TemperatureLLMConfig(model="smollm2", tasks=("capital",), taus=(1.0, 1.5), n_questions=2, max_new_tokens=4,
                                 adaptive=False, moment_rule=True, batch_size=2)
    out = E.run_cell(cfg, {"part": "noise", "task": "capital", "noise_ratio": 0.5, "n_demos": 4, "repeat": 0,
                            "seed": 0}, None)
    assert "SmolLM2" in out["source"]
    assert all(e in (0.0, 0.5, 1.0) for e in out["em_tau"])
    assert len(out["layer_tau"]) == 30 and out["moment_valid"] > 0.5
