"""The language cell of the ``categorical`` experiment: the one-layer GD language model of Wang et al.,
arXiv:2405.17248 (± feed-forward) against a one-layer transformer, scaled down to characters of the
``pydoc_data`` text and compared by held-out perplexity (docs/papers/categorical.md §3.8, §5.5)."""

from __future__ import annotations

import math

import torch

from iclab.data import CharCorpus, TokenBatch, derive_seed, generator_for, pydoc_text, seeded_init
from iclab.models import GDLanguageModel, OneHotLM
from iclab.train import TrainConfig, train

__all__ = ["language_cell", "next_token_loss"]


def next_token_loss(model, batch: TokenBatch):
    """Mean cross-entropy of token t+1 given tokens 0..t over ``batch.tokens (B, T+1)``."""
    t = batch.tokens
    logits = model(t[:, :-1])  # (B, T, V)
    return torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), t[:, 1:].reshape(-1))


def _attention_params(model, kind: str) -> int:
    """Attention parameters: the shared Q/K diagonals of the GD model; every attention matrix of the transformer."""
    if kind == "transformer":
        return sum(p.numel() for p in model.net.attn[0].parameters() if p.ndim == 2)
    return model.w_h.numel()


@torch.no_grad()
def _held_out_nll(model, test: TokenBatch, chunk: int = 64) -> float:
    """Mean next-token NLL over the held-out windows, in chunks of ``chunk`` windows."""
    n = len(test.tokens)
    return float(
        sum(next_token_loss(model, test.index(slice(s, s + chunk))) * min(chunk, n - s) for s in range(0, n, chunk)) / n
    )


def language_cell(cfg, cell: dict) -> dict:
    """Train one model (``gd``, ``gd_ff`` or ``transformer``) and report held-out perplexity."""
    seed = derive_seed(cfg.seed, "replicate", cell["seed"])
    text = pydoc_text()
    tr = CharCorpus(text, cfg.lm_seq_len, "train")
    te = CharCorpus(text, cfg.lm_seq_len, "test", vocab=tr.vocab)
    V = len(tr.vocab)
    with seeded_init(seed, "init", cell["model"]):
        if cell["model"] == "transformer":
            model = OneHotLM(V, cfg.lm_width, cfg.lm_heads, cfg.lm_seq_len)
        else:
            model = GDLanguageModel(V, cfg.lm_width, cfg.lm_heads, cfg.lm_seq_len, ff=cell["model"] == "gd_ff")
    tc = TrainConfig(
        steps=cfg.lm_steps,
        batch_size=cfg.lm_batch,
        lr=cfg.lm_lr,
        optimizer="adamw",
        weight_decay=1e-2,
        grad_clip=1.0,
        seed=seed,
        log_every=max(1, cfg.lm_steps // 10),
        device=cfg.device,
    )
    res = train(model, tr, next_token_loss, tc)
    model.eval()
    test = te.sample(cfg.lm_eval_windows, generator_for(seed, "lm_test")).to(cfg.device)
    nll = _held_out_nll(model, test)
    return {
        "test_nll": nll,
        "perplexity": math.exp(nll),
        "train_loss": res.final_loss,
        "vocab": V,
        "n_params": sum(p.numel() for p in model.parameters()),
        "attn_params": int(_attention_params(model, cell["model"])),
        "train_seconds": res.seconds,
    }
