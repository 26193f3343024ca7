r"""The one-layer GD language model of Wang et al., arXiv:2405.17248 (docs/papers/categorical.md §3.8), and the
one-layer transformer it is compared with, for next-token prediction over a vocabulary.

:class:`GDLanguageModel` treats a sequence as an in-context classification problem whose covariates are positions:
:math:`x_i=\mathrm{LN}(w_{pe}(i))`, labels :math:`e_i=\mathrm{LN}(w_{te}(t_i))`, per head
:math:`W_q=W_k=\operatorname{diag}(w_h)`, causal softmax attention of the query position :math:`j+1` over key
positions :math:`0..j`, values :math:`e_i-\mathbb E_{f_0}[w_e]` with the expectation over the whole vocabulary
(at :math:`f_0=0` the mean embedding), the update scaled by ``1/position`` (the authors' ``N_reg``), heads
concatenated through :math:`W_o`, an optional feed-forward layer, logits
:math:`\mathrm{LN}(f)\,\mathrm{LN}(W_{te})^\top`. :class:`OneHotLM` is the baseline: a one-layer pre-LN
:class:`iclab.models.TinyTransformer` of the same width on one-hot tokens.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from iclab.attention import normalise
from iclab.models._tiny_transformer import TinyTransformer

__all__ = ["GDLanguageModel", "OneHotLM"]


class GDLanguageModel(nn.Module):
    """One-layer GD language model (docs/papers/categorical.md §3.8), optionally with a feed-forward layer.

    ``vocab`` tokens, width ``d``, ``n_heads`` heads, sequences of at most ``seq_len`` tokens; ``ff`` adds
    LN -> Linear(d, 4d) -> GELU -> Linear(4d, d) residually to f.
    """

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
    """The one-layer transformer baseline: :class:`iclab.models.TinyTransformer` (causal, pre-LN) on one-hot
    tokens, ``vocab`` in and out, width ``d``, ``n_heads`` heads, at most ``seq_len`` positions."""

    def __init__(self, vocab: int, d: int, n_heads: int, seq_len: int):
        super().__init__()
        self.vocab = vocab
        self.net = TinyTransformer(vocab, vocab, d, 1, n_heads, causal=True, max_len=seq_len)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """``tokens (B, T)`` -> logits ``(B, T, V)``."""
        return self.net(torch.nn.functional.one_hot(tokens, self.vocab).float())  # (B, T, V)
