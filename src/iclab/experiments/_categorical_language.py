"""Next-token language modelling in the GD form (categorical-ICL spec §2.6, §3.3, §5.5), scaled down to a
character-level model on a corpus that ships with Python: the text of ``pydoc_data.topics`` (the Python
language reference and library topics used by ``help()``; PSF licence), first 90 % for training, last 10 %
held out.

:class:`GDLanguageModel` is the paper's 1-layer GD model: covariates :math:`x_i=\\mathrm{LN}(w_{pe}(i))`, labels
:math:`e_i=\\mathrm{LN}(w_{te}(t_i))`, per head :math:`W_q=W_k=\\operatorname{diag}(w_h)`, causal softmax attention
of the query position :math:`j+1` over key positions :math:`0..j`, values
:math:`e_i-\\mathbb E_{f_{i}}[w_e]` with the expectation over the whole vocabulary (at :math:`f_0=0` the mean
embedding), the update scaled by ``1/position`` (the code's ``N_reg``), heads concatenated through
:math:`W_o`, optional feed-forward, logits :math:`\\mathrm{LN}(f)\\,\\mathrm{LN}(W_{te})^\\top`. The baseline is a
1-layer pre-LN transformer of the same width (:class:`iclab.models.TinyTransformer`, one-hot read-in).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from iclab.attention import normalise

__all__ = ["corpus", "CharCorpus", "TokenBatch", "GDLanguageModel", "OneHotLM", "language_cell"]


def corpus() -> str:
    """The ``pydoc_data.topics`` text, topics in sorted order (about 465k characters)."""
    from pydoc_data.topics import topics

    return "\n".join(topics[k] for k in sorted(topics))


@dataclass
class TokenBatch:
    tokens: torch.Tensor  # (B, T+1) character ids

    def to(self, device) -> "TokenBatch":
        return TokenBatch(self.tokens.to(device))

    def index(self, idx) -> "TokenBatch":
        return TokenBatch(self.tokens[idx])


class CharCorpus:
    """Random windows of ``seq_len + 1`` characters of one split; characters outside the training vocabulary
    (fewer than ``min_count`` occurrences) map to id 0."""

    def __init__(self, text: str, seq_len: int, split: str, vocab: list[str] | None = None, min_count: int = 5):
        cut = int(0.9 * len(text))
        part = text[:cut] if split == "train" else text[cut:]
        if vocab is None:
            from collections import Counter

            cnt = Counter(text[:cut])
            vocab = ["\0"] + sorted(c for c, n in cnt.items() if n >= min_count)
        self.vocab, self.seq_len = vocab, seq_len
        lut = {c: i for i, c in enumerate(vocab)}
        self.ids = torch.tensor([lut.get(c, 0) for c in part], dtype=torch.long)

    def sample(self, batch: int, generator: torch.Generator | None = None) -> TokenBatch:
        start = torch.randint(len(self.ids) - self.seq_len - 1, (batch,), generator=generator)  # (B,)
        return TokenBatch(self.ids[start[:, None] + torch.arange(self.seq_len + 1)])  # (B, T+1)


class GDLanguageModel(nn.Module):
    """1-layer GD language model (spec §2.6), optionally with a feed-forward layer."""

    def __init__(self, vocab: int, d: int, n_heads: int, seq_len: int, ff: bool = False):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(seq_len + 1, d)
        self.ln_x, self.ln_e, self.ln_out = nn.LayerNorm(d), nn.LayerNorm(d), nn.LayerNorm(d)
        self.w_h = nn.Parameter(torch.ones(n_heads, d))  # diagonal of W_q = W_k per head
        self.w_o = nn.Linear(n_heads * d, d, bias=False)
        self.ff = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d)) if ff else None
        self.d, self.H = d, n_heads

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """``tokens (B, T)`` -> logits ``(B, T, V)``; output t predicts token t+1."""
        B, T = tokens.shape
        x = self.ln_x(self.wpe(torch.arange(T + 1, device=tokens.device)))  # (T+1, d)
        emb = self.ln_e(self.wte.weight)  # (V, d)
        e = emb[tokens]  # (B, T, d)
        value = e - emb.mean(0)  # (B, T, d): e_i - E_{f_0}[w_e], f_0 = 0 => uniform expectation
        q = x[1:, None, :] * self.w_h  # (T, H, d): query j+1
        k = x[:-1, None, :] * self.w_h  # (T, H, d): keys 0..T-1
        scores = torch.einsum("thd,shd->hts", q, k) / math.sqrt(self.d)  # (H, T, T)
        mask = torch.ones(T, T, dtype=torch.bool, device=tokens.device).tril()  # query j+1 sees keys 0..j
        A = normalise("softmax", scores, mask)  # (H, T, T)
        upd = torch.einsum("hts,bsd->bthd", A, value)  # (B, T, H, d)
        pos = torch.arange(1, T + 1, device=tokens.device, dtype=upd.dtype)[None, :, None, None]
        f = self.w_o((upd / pos).reshape(B, T, self.H * self.d))  # (B, T, d)
        if self.ff is not None:
            f = f + self.ff(f)
        return self.ln_out(f) @ emb.t()  # (B, T, V)


class OneHotLM(nn.Module):
    """The 1-layer transformer baseline: :class:`iclab.models.TinyTransformer` on one-hot characters."""

    def __init__(self, vocab: int, d: int, n_heads: int, seq_len: int):
        super().__init__()
        from iclab.models import TinyTransformer

        self.vocab = vocab
        self.net = TinyTransformer(vocab, vocab, d, 1, n_heads, causal=True, max_len=seq_len)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.net(torch.nn.functional.one_hot(tokens, self.vocab).float())  # (B, T, V)


def _lm_loss(model, batch: TokenBatch):
    t = batch.tokens
    logits = model(t[:, :-1])  # (B, T, V)
    return torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), t[:, 1:].reshape(-1))


def language_cell(cfg, cell: dict) -> dict:
    """Train one model (``gd``, ``gd_ff`` or ``transformer``) and report held-out perplexity."""
    from iclab.data import generator_for
    from iclab.train import TrainConfig, train

    seed = cell["seed"]
    text = corpus()
    tr = CharCorpus(text, cfg.lm_seq_len, "train")
    te = CharCorpus(text, cfg.lm_seq_len, "test", vocab=tr.vocab)
    V = len(tr.vocab)
    torch.manual_seed(seed)
    if cell["model"] == "transformer":
        model = OneHotLM(V, cfg.lm_width, cfg.lm_heads, cfg.lm_seq_len)
    else:
        model = GDLanguageModel(V, cfg.lm_width, cfg.lm_heads, cfg.lm_seq_len, ff=cell["model"] == "gd_ff")
    tc = TrainConfig(steps=cfg.lm_steps, batch_size=cfg.lm_batch, lr=cfg.lm_lr, optimizer="adamw",
                     weight_decay=1e-2, grad_clip=1.0, seed=seed, log_every=max(1, cfg.lm_steps // 10),
                     device=cfg.device)
    res = train(model, tr, _lm_loss, tc)
    model.eval()
    test = te.sample(cfg.lm_eval_windows, generator_for(seed, "lm_test")).to(cfg.device)
    with torch.no_grad():
        nll = float(sum(_lm_loss(model, test.index(slice(s, s + 64))) * min(64, len(test.tokens) - s)
                        for s in range(0, len(test.tokens), 64)) / len(test.tokens))
    attn = {"gd": lambda m: m.w_h.numel(), "gd_ff": lambda m: m.w_h.numel(),
            "transformer": lambda m: sum(p.numel() for p in m.net.attn[0].parameters() if p.ndim == 2)}
    return {"test_nll": nll, "perplexity": math.exp(nll), "train_loss": res.final_loss, "vocab": V,
            "n_params": sum(p.numel() for p in model.parameters()),
            "attn_params": int(attn[cell["model"]](model)), "train_seconds": res.seconds}
