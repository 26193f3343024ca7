r"""A tiny pre-LayerNorm transformer over continuous tokens whose attention normaliser comes from the
registry (``softmax``, ``approx_softmax``, ``linear``, ``adaptive_softmax`` …).

Used where a paper asks for a small multi-layer transformer: the 1–3 layer width-16 models of the OOD paper
(arXiv:2609.36448, docs/papers/ood.md §5.5) and the size-generalisation tasks of the dispersion paper
(arXiv:2410.01104). Block ``l``:
:math:`h \leftarrow h + \mathrm{Attn}(\mathrm{LN}(h))`, :math:`h \leftarrow h + \mathrm{MLP}(\mathrm{LN}(h))`,
with :math:`\mathrm{Attn} = \mathrm{normalise}(QK^\top/\sqrt{d_h})\,V` per head.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from iclab.attention import get_normaliser
from iclab.config import check_int
from iclab.errors import ConfigError

__all__ = ["TinyTransformer", "MultiHeadSelfAttention"]


class MultiHeadSelfAttention(nn.Module):
    """Multi-head self-attention with a registry normaliser; ``forward`` can also return the weights."""

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        attention: str = "softmax",
        attention_params: dict | None = None,
        causal: bool = False,
    ):
        super().__init__()
        if d_model % n_heads:
            raise ConfigError("n_heads", n_heads, f"a divisor of d_model={d_model}")
        self.n_heads, self.d_head = n_heads, d_model // n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model, bias=False)
        self.out = nn.Linear(d_model, d_model, bias=False)
        self.causal = causal
        self.set_attention(attention, **(attention_params or {}))

    def set_attention(self, name: str, **params) -> "MultiHeadSelfAttention":
        """Switch the normaliser (any registry name) and its parameters; the weights stay as trained."""
        self.normaliser = get_normaliser(name, **params)  # ConfigError for a bad name/param
        self.attention, self.attention_params = name, dict(params)
        return self

    def forward(self, h: torch.Tensor, mask: torch.Tensor | None = None, return_weights: bool = False):
        B, n, D = h.shape
        q, k, v = self.qkv(h).view(B, n, 3, self.n_heads, self.d_head).permute(2, 0, 3, 1, 4)  # (B, H, n, dh) each
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.d_head)  # (B, H, n_q, n_k)
        visible = None
        if mask is not None:
            visible = mask[:, None, None, :].bool()  # (B, 1, 1, n_k)
        if self.causal:
            tri = torch.ones(n, n, dtype=torch.bool, device=h.device).tril()  # (n_q, n_k)
            visible = tri if visible is None else visible & tri
        w = self.normaliser(scores, visible, **self.attention_params)  # (B, H, n_q, n_k)
        y = (w @ v).transpose(1, 2).reshape(B, n, D)  # (B, n, D)
        y = self.out(y)
        return (y, w) if return_weights else y


class TinyTransformer(nn.Module):
    """Read-in linear -> ``n_layers`` pre-LN blocks -> final LN -> read-out linear.

    Args:
        d_in: token input width.
        d_out: token output width.
        d_model: residual width (16 in the OOD paper's tiny models).
        n_layers: depth.
        n_heads: heads per layer.
        d_ff: MLP hidden width (default 4*d_model; 0 disables the MLP).
        attention: registry normaliser.
        attention_params: its parameters (e.g. ``{"tau": 2.0}``).
        causal: causal mask (decoder) instead of full attention (encoder).
        max_len: if set, learned absolute position embeddings for up to ``max_len`` tokens (None: a set model).
    """

    def __init__(
        self,
        d_in: int,
        d_out: int = 1,
        d_model: int = 16,
        n_layers: int = 1,
        n_heads: int = 1,
        d_ff: int | None = None,
        attention: str = "softmax",
        attention_params: dict | None = None,
        causal: bool = False,
        max_len: int | None = None,
    ):
        super().__init__()
        for name, val, lo in (
            ("d_in", d_in, 1),
            ("d_out", d_out, 1),
            ("d_model", d_model, 1),
            ("n_layers", n_layers, 1),
            ("n_heads", n_heads, 1),
        ):
            check_int(name, val, lo)
        d_ff = 4 * d_model if d_ff is None else d_ff
        check_int("d_ff", d_ff, 0)
        if max_len is not None:
            check_int("max_len", max_len, 1)
        self.max_len = max_len
        self.read_in = nn.Linear(d_in, d_model)
        self.pos = nn.Embedding(max_len, d_model) if max_len else None
        self.ln1 = nn.ModuleList(nn.LayerNorm(d_model) for _ in range(n_layers))
        self.attn = nn.ModuleList(
            MultiHeadSelfAttention(d_model, n_heads, attention, attention_params, causal) for _ in range(n_layers)
        )
        self.ln2 = nn.ModuleList(nn.LayerNorm(d_model) if d_ff else nn.Identity() for _ in range(n_layers))
        self.mlp = nn.ModuleList(
            nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model)) if d_ff else nn.Identity()
            for _ in range(n_layers)
        )
        self.d_ff = d_ff
        self.ln_f = nn.LayerNorm(d_model)
        self.read_out = nn.Linear(d_model, d_out)

    def set_attention(self, name: str, **params) -> "TinyTransformer":
        """Use normaliser ``name`` with ``params`` in every head from now on (e.g. adaptive softmax at inference;
        the weights stay as trained)."""
        for attn in self.attn:
            attn.set_attention(name, **params)
        return self

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None, return_weights: bool = False):
        """``x: (B, n, d_in)``, ``mask: (B, n)`` True for real tokens -> ``(B, n, d_out)`` [and per-layer weights]."""
        if x.dim() != 3 or x.shape[-1] != self.read_in.in_features:
            raise ConfigError("x", tuple(x.shape), f"a (batch, n, {self.read_in.in_features}) tensor")
        if self.max_len is not None and x.shape[1] > self.max_len:
            raise ConfigError("n", x.shape[1], f"at most max_len={self.max_len} tokens (learned positions)")
        h = self.read_in(x)  # (B, n, D)
        if self.pos is not None:
            h = h + self.pos(torch.arange(x.shape[1], device=x.device))
        weights = []
        for ln1, attn, ln2, mlp in zip(self.ln1, self.attn, self.ln2, self.mlp):
            a, w = attn(ln1(h), mask, return_weights=True)
            h = h + a
            if self.d_ff:
                h = h + mlp(ln2(h))
            weights.append(w)
        y = self.read_out(self.ln_f(h))  # (B, n, d_out)
        return (y, weights) if return_weights else y
