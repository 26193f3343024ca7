r"""One-layer attention with a merged key-query matrix Q: the model of arXiv:2609.36448, taken from
arXiv:2310.05249 (docs/papers/ood.md §3.1).

Embedding columns :math:`(x_i, y_i)` and :math:`(x_q, 0)`, :math:`W^{KQ}=\mathrm{diag}(Q,0)`, fixed value/readout
:math:`W^{PV}` that extracts y, no residual: :math:`\hat y=\sum_{i\le N}\mathrm{attn}_i\,y_i`,
:math:`\mathrm{attn}=\mathrm{normalise}(x_i^\top Q x_q)` over the N context tokens (the query is not a key;
note §7). The normaliser comes from the registry (``softmax``, ``approx_softmax``, ``linear``). Q starts at 0
(note §4.3). :func:`feature_prompt_loss` is the w-averaged loss :math:`c\|\sum_i\mathrm{attn}_i x_i-x_q\|^2`
(note §4.1) with per-feature groups for the stopping rule (note §3.5); :class:`MergedQStack` trains G such
models on G feature sets in one loop. :class:`FeatureTransformer` adapts :class:`iclab.models.TinyTransformer` to
the same prompts (the paper's multi-layer "TinyTransformer", note §5.5).
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

from iclab.attention import get_normaliser
from iclab.config import check_int
from iclab.data import FeatureBatch
from iclab.errors import ConfigError
from iclab.models._tiny_transformer import TinyTransformer

__all__ = ["MergedQAttention", "feature_prompt_loss", "FeatureTransformer", "prompt_mse_loss", "MergedQStack"]


class MergedQAttention(nn.Module):
    r""":math:`\hat y=\sum_i \mathrm{normalise}(x_i^\top Q x_q)_i\, y_i` with trainable Q (d x d).

    Args:
        d: feature dimension.
        attention: registry normaliser.
        attention_params: its parameters (e.g. ``{"tau": 1.0}``).
        init: ``"zero"`` (note §4.3; needed for the conservation law from 0) or ``"normal"`` (std ``init_std``).
        dtype: parameter dtype (float64 by default: the theory checks are at float precision).
    """

    def __init__(
        self,
        d: int,
        attention: str = "softmax",
        attention_params: dict | None = None,
        init: str = "zero",
        init_std: float = 0.1,
        dtype: torch.dtype = torch.float64,
        generator: torch.Generator | None = None,
    ):
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

    @classmethod
    def from_q(cls, Q, **kwargs) -> "MergedQAttention":
        """A model whose Q is a copy of the array ``Q`` (d, d), e.g. a trained Q or the closed form Q*."""
        model = cls(Q.shape[0], **kwargs)
        with torch.no_grad():
            model.Q.copy_(torch.as_tensor(Q))
        return model

    def scores(self, x: torch.Tensor, xq: torch.Tensor) -> torch.Tensor:
        r"""Logits :math:`x_i^\top Q x_q`: ``x (B, N, d)``, ``xq (B, d)`` -> ``(B, N)``."""
        return torch.einsum("bnd,de,be->bn", x.to(self.Q.dtype), self.Q, xq.to(self.Q.dtype))  # (B, N)

    def attn(self, x: torch.Tensor, xq: torch.Tensor) -> torch.Tensor:
        """Attention of the query over the N context tokens, ``(B, N)`` (rows sum to 1 for softmax)."""
        s = self.scores(x, xq)[:, None, :]  # (B, 1, N): one query row over N keys
        return self.normaliser(s, None, **self.attention_params)[:, 0, :]  # (B, N)

    def forward(self, x: torch.Tensor, y: torch.Tensor, xq: torch.Tensor) -> torch.Tensor:
        """``ŷ = Σ_i attn_i y_i``: ``x (B, N, d)``, ``y (B, N)``, ``xq (B, d)`` -> ``(B,)``."""
        return (self.attn(x, xq) * y.to(self.Q.dtype)).sum(-1)  # (B,)

    def feature_mass(self, batch, n_features: int) -> torch.Tensor:
        r"""Attention mass on each feature, :math:`A_m=\sum_{i:x_i=v_m}\mathrm{attn}_i` -> ``(B, K)`` (no grad);
        ``batch`` is a :class:`iclab.data.FeatureBatch` (``feat`` indexes each token's feature)."""
        with torch.no_grad():
            a = self.attn(batch.x, batch.xq)  # (B, N)
        return torch.zeros(a.shape[0], n_features, dtype=a.dtype).scatter_add_(1, batch.feat, a)  # (B, K)


def _grouped(per_prompt: torch.Tensor, qfeat: torch.Tensor, n_groups: int) -> dict[str, float]:
    """Mean of ``per_prompt (B,)`` over the prompts of each query feature (``str(k)`` keys; empty -> nan)."""
    out = {}
    with torch.no_grad():
        for k in range(n_groups):
            sel = qfeat == k
            out[str(k)] = float(per_prompt[sel].mean()) if bool(sel.any()) else float("nan")
    return out


def feature_prompt_loss(
    model: MergedQAttention, batch: FeatureBatch, c: float = 0.5, n_features: int | None = None
) -> torch.Tensor | tuple[torch.Tensor, dict[str, float]]:
    r"""w-averaged loss (docs/papers/ood.md §4.1):
    :math:`c\,\mathbb E_w(\hat y-w^\top x_q)^2=c\|\sum_i\mathrm{attn}_i x_i-x_q\|^2`,
    averaged over the batch. With ``n_features`` returns ``(loss, {str(k): loss of prompts whose query is v_k})``
    for the per-feature stopping rule (note §3.5)."""
    a = model.attn(batch.x, batch.xq)  # (B, N)
    r = torch.einsum("bn,bnd->bd", a, batch.x.to(a.dtype)) - batch.xq.to(a.dtype)  # (B, d)
    per = c * (r**2).sum(-1)  # (B,)
    loss = per.mean()
    if n_features is None:
        return loss
    return loss, _grouped(per, batch.qfeat, n_features)


class FeatureTransformer(nn.Module):
    """TinyTransformer on feature prompts (docs/papers/ood.md §5.5): tokens :math:`z_i=[x_i;y_i]`, query
    :math:`[x_q;0]` appended last, read-in to ``d_model``, ``n_layers`` pre-LN blocks, read-out of the query
    position -> ŷ (B,)."""

    def __init__(
        self,
        d: int,
        d_model: int = 16,
        n_layers: int = 1,
        n_heads: int = 1,
        attention: str = "softmax",
        attention_params: dict | None = None,
    ):
        super().__init__()
        self.net = TinyTransformer(
            d + 1,
            1,
            d_model=d_model,
            n_layers=n_layers,
            n_heads=n_heads,
            attention=attention,
            attention_params=attention_params,
        )

    def forward(self, x: torch.Tensor, y: torch.Tensor, xq: torch.Tensor) -> torch.Tensor:
        dt = self.net.read_in.weight.dtype
        ctx = torch.cat([x, y[..., None]], dim=-1)  # (B, N, d+1)
        q = torch.cat([xq, torch.zeros_like(xq[:, :1])], dim=-1)[:, None, :]  # (B, 1, d+1)
        z = torch.cat([ctx, q], dim=1).to(dt)  # (B, N+1, d+1)
        return self.net(z)[:, -1, 0]  # (B,)

    def layer1_logits(self, V: torch.Tensor) -> torch.Tensor:
        r"""Layer-1 α/β probe (docs/papers/ood.md §5.5): logits of head 0 between feature tokens :math:`[v;0]`
        after read-in and the first LayerNorm, :math:`S_{mk}=k(v_m)\cdot q(v_k)/\sqrt{d_h}`: ``V (d, K)`` ->
        ``(K_token, K_query)``; α = diagonal, β = off-diagonal."""
        net = self.net
        z = torch.cat([V.T, torch.zeros(V.shape[1], 1, dtype=V.dtype)], 1).float()  # (K, d+1)
        with torch.no_grad():
            h = net.ln1[0](net.read_in(z))  # (K, D)
            attn = net.attn[0]
            q, k, _ = attn.qkv(h).split(h.shape[1], dim=-1)  # (K, D) each
            q, k = q[:, : attn.d_head], k[:, : attn.d_head]  # head 0
            return (k @ q.T / math.sqrt(attn.d_head)).double()  # (K, K)


def prompt_mse_loss(
    model: nn.Module, batch: FeatureBatch, c: float = 0.5, n_features: int | None = None
) -> torch.Tensor | tuple[torch.Tensor, dict[str, float]]:
    r"""Monte-Carlo loss :math:`c(\hat y-w^\top x_q)^2` with the sampled w (any model ``(x, y, xq) -> ŷ``);
    per-feature groups as in :func:`feature_prompt_loss`."""
    yhat = model(batch.x, batch.y, batch.xq)  # (B,)
    per = c * (yhat - batch.yq.to(yhat.dtype)) ** 2  # (B,)
    loss = per.mean()
    if n_features is None:
        return loss
    return loss, _grouped(per, batch.qfeat, n_features)


class MergedQStack(nn.Module):
    r"""G independent merged-Q models, one per feature set :math:`U_g`, trained in one loop (fine-tuning on many
    OOD sets at once, docs/papers/ood.md §5.4). ``Q`` (G, d, d) starts at ``Q0`` for every g; a batch drawn over
    feature *indices* is mapped onto each :math:`U_g`. ``active`` (G,) freezes the runs that met their stopping
    rule: their loss is multiplied by 0, so plain SGD leaves them unchanged.

    Args:
        Q0: initial merged key-query matrix (d, d); anything torch.as_tensor takes.
        U: feature sets (G, d, K).
        attention: registry normaliser.
    """

    def __init__(self, Q0: torch.Tensor, U: torch.Tensor, attention: str = "softmax"):
        super().__init__()
        G = U.shape[0]
        self.Q = nn.Parameter(torch.as_tensor(Q0, dtype=torch.float64).expand(G, -1, -1).clone())  # (G, d, d)
        self.register_buffer("U", U)  # (G, d, K)
        self.register_buffer("active", torch.ones(G, dtype=torch.float64))
        self.normaliser = get_normaliser(attention)

    def loss(self, batch, c: float) -> torch.Tensor:
        r"""Sum over active runs of the w-averaged loss :math:`c\,\|\sum_i\mathrm{attn}_i x_i-x_q\|^2` (batch mean)
        with tokens :math:`x_i=U_g e_{\mathrm{feat}_i}` (docs/papers/ood.md §4.1)."""
        K = self.U.shape[2]
        oh = F.one_hot(batch.feat, K).double()  # (B, N, K)
        x = torch.einsum("bnk,gdk->gbnd", oh, self.U)  # (G, B, N, d)
        xq = torch.einsum("bk,gdk->gbd", F.one_hot(batch.qfeat, K).double(), self.U)  # (G, B, d)
        s = torch.einsum("gbnd,gde,gbe->gbn", x, self.Q, xq)[:, :, None, :]  # (G, B, 1, N)
        a = self.normaliser(s)[:, :, 0, :]  # (G, B, N)
        r = torch.einsum("gbn,gbnd->gbd", a, x) - xq  # (G, B, d)
        per_run = c * (r**2).sum(-1).mean(-1)  # (G,)
        return (per_run * self.active).sum()
