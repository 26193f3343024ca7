"""One-layer attention with a merged key-query matrix Q (OOD attention-dynamics paper, spec §2.1).

Embedding columns :math:`(x_i, y_i)` and :math:`(x_q, 0)`, :math:`W^{KQ}=\\mathrm{diag}(Q,0)`, fixed value/readout
:math:`W^{PV}` that extracts y, no residual: :math:`\\hat y=\\sum_{i\\le N}\\mathrm{attn}_i\\,y_i`,
:math:`\\mathrm{attn}=\\mathrm{normalise}(x_i^\\top Q x_q)` over the N context tokens (the query is not a key;
spec §6). The normaliser comes from the registry (``softmax``, ``approx_softmax``, ``linear``). Q starts at 0
(spec §2.3). :func:`feature_prompt_loss` is the w-averaged loss :math:`c\\|\\sum_i\\mathrm{attn}_i x_i-x_q\\|^2`
(spec §4.1) with per-feature groups for the stopping rule (§4.2). :class:`FeatureTransformer` adapts
:class:`iclab.models.TinyTransformer` to the same prompts (spec §6, "TinyTransformer architecture").
"""

from __future__ import annotations

import torch
from torch import nn

from iclab.attention import get_normaliser
from iclab.config import check_int
from iclab.errors import ConfigError
from iclab.models._tiny_transformer import TinyTransformer

__all__ = ["MergedQAttention", "feature_prompt_loss", "FeatureTransformer", "prompt_mse_loss"]


class MergedQAttention(nn.Module):
    """:math:`\\hat y=\\sum_i \\mathrm{normalise}(x_i^\\top Q x_q)_i\\, y_i` with trainable Q (d x d).

    Args:
        d: feature dimension.
        attention, attention_params: registry normaliser and its parameters (e.g. ``{"tau": 1.0}``).
        init: ``"zero"`` (spec §2.3; needed for the conservation law from 0) or ``"normal"`` (std ``init_std``).
        dtype: parameter dtype (float64 by default: the theory checks are at float precision).
    """

    def __init__(self, d: int, attention: str = "softmax", attention_params: dict | None = None,
                 init: str = "zero", init_std: float = 0.1, dtype: torch.dtype = torch.float64,
                 generator: torch.Generator | None = None):
        super().__init__()
        check_int("d", d, 1)
        self.normaliser = get_normaliser(attention, **(attention_params or {}))
        self.attention, self.attention_params = attention, dict(attention_params or {})
        if init == "zero":
            q = torch.zeros(d, d, dtype=dtype)
        elif init == "normal":
            q = init_std * torch.randn(d, d, generator=generator, dtype=torch.float64).to(dtype)
        else:
            raise ConfigError("init", init, "'zero' or 'normal'")
        self.Q = nn.Parameter(q)  # (d, d)

    def scores(self, x: torch.Tensor, xq: torch.Tensor) -> torch.Tensor:
        """Logits :math:`x_i^\\top Q x_q`: ``x (B, N, d)``, ``xq (B, d)`` -> ``(B, N)``."""
        return torch.einsum("bnd,de,be->bn", x.to(self.Q.dtype), self.Q, xq.to(self.Q.dtype))  # (B, N)

    def attn(self, x: torch.Tensor, xq: torch.Tensor) -> torch.Tensor:
        """Attention of the query over the N context tokens, ``(B, N)`` (rows sum to 1 for softmax)."""
        s = self.scores(x, xq)[:, None, :]  # (B, 1, N): one query row over N keys
        return self.normaliser(s, None, **self.attention_params)[:, 0, :]  # (B, N)

    def forward(self, x: torch.Tensor, y: torch.Tensor, xq: torch.Tensor) -> torch.Tensor:
        """``ŷ = Σ_i attn_i y_i``: ``x (B, N, d)``, ``y (B, N)``, ``xq (B, d)`` -> ``(B,)``."""
        return (self.attn(x, xq) * y.to(self.Q.dtype)).sum(-1)  # (B,)


def _grouped(per_prompt: torch.Tensor, qfeat: torch.Tensor, n_groups: int) -> dict[str, float]:
    """Mean of ``per_prompt (B,)`` over the prompts of each query feature (``str(k)`` keys; empty -> nan)."""
    out = {}
    with torch.no_grad():
        for k in range(n_groups):
            sel = qfeat == k
            out[str(k)] = float(per_prompt[sel].mean()) if bool(sel.any()) else float("nan")
    return out


def feature_prompt_loss(model: MergedQAttention, batch, c: float = 0.5, n_features: int | None = None):
    """w-averaged loss (spec §4.1): :math:`c\\,\\mathbb E_w(\\hat y-w^\\top x_q)^2=c\\|\\sum_i\\mathrm{attn}_i x_i-x_q\\|^2`,
    averaged over the batch. With ``n_features`` returns ``(loss, {str(k): loss of prompts whose query is v_k})``
    for the per-feature stopping rule (spec §4.2)."""
    a = model.attn(batch.x, batch.xq)  # (B, N)
    r = torch.einsum("bn,bnd->bd", a, batch.x.to(a.dtype)) - batch.xq.to(a.dtype)  # (B, d)
    per = c * (r**2).sum(-1)  # (B,)
    loss = per.mean()
    if n_features is None:
        return loss
    return loss, _grouped(per, batch.qfeat, n_features)


class FeatureTransformer(nn.Module):
    """TinyTransformer on feature prompts (spec §6): tokens :math:`z_i=[x_i;y_i]`, query :math:`[x_q;0]` appended
    last, read-in to ``d_model``, ``n_layers`` pre-LN blocks, read-out of the query position -> ŷ (B,)."""

    def __init__(self, d: int, d_model: int = 16, n_layers: int = 1, n_heads: int = 1, attention: str = "softmax",
                 attention_params: dict | None = None):
        super().__init__()
        self.net = TinyTransformer(d + 1, 1, d_model=d_model, n_layers=n_layers, n_heads=n_heads,
                                   attention=attention, attention_params=attention_params)

    def forward(self, x: torch.Tensor, y: torch.Tensor, xq: torch.Tensor) -> torch.Tensor:
        dt = self.net.read_in.weight.dtype
        ctx = torch.cat([x, y[..., None]], dim=-1)  # (B, N, d+1)
        q = torch.cat([xq, torch.zeros_like(xq[:, :1])], dim=-1)[:, None, :]  # (B, 1, d+1)
        z = torch.cat([ctx, q], dim=1).to(dt)  # (B, N+1, d+1)
        return self.net(z)[:, -1, 0]  # (B,)


def prompt_mse_loss(model: nn.Module, batch, c: float = 0.5, n_features: int | None = None):
    """Monte-Carlo loss :math:`c(\\hat y-w^\\top x_q)^2` with the sampled w (any model ``(x, y, xq) -> ŷ``);
    per-feature groups as in :func:`feature_prompt_loss`."""
    yhat = model(batch.x, batch.y, batch.xq)  # (B,)
    per = c * (yhat - batch.yq.to(yhat.dtype)) ** 2  # (B,)
    loss = per.mean()
    if n_features is None:
        return loss
    return loss, _grouped(per, batch.qfeat, n_features)
