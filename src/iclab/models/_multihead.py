r"""H-head one-layer softmax attention for in-context linear regression, in the KQ/OV parametrisation of
arXiv:2503.12734 (He, Pan, Chen, Yang, ICML 2025; docs/papers/multihead.md §3.2).

Tokens are the columns :math:`z_\ell=(x_\ell;y_\ell)\in\mathbb R^{D}`, :math:`D=d+N` (``N`` outputs; N=1 is
plain regression), and the query token is :math:`z_q=(x_q;0)`. Each head has full trainable
:math:`Q^{(h)},K^{(h)},V^{(h)}\in\mathbb R^{D\times D}` and a read-out :math:`o^{(h)}\in\mathbb R^{N\times D}`
(the only rows of :math:`O^{(h)}` that reach the prediction), so :math:`KQ^{(h)}=K^{(h)\top}Q^{(h)}` and
:math:`OV^{(h)}=o^{(h)}V^{(h)}`. The query row of the paper's one-layer transformer, in the form of the
authors' code (no self-attention of the query, logits scaled by :math:`s`), is

.. math:: \hat y_q=\sum_{h=1}^H OV^{(h)}\,Z\,\mathrm{norm}\big(s\,Z^\top KQ^{(h)}z_q\big),\qquad s=1/\sqrt D,

with the normaliser over the ``n`` context tokens only, taken from the attention registry: ``softmax`` (the
paper's model), ``linear`` (the paper's linear-attention baseline, docs/papers/multihead.md §3.4: weights
``s·score/n``; with ``linear_length=L`` the ``1/n`` is frozen at ``1/L`` as in the paper, which is why linear
attention does not length-generalise), or any other registered normaliser. ``n_heads=1`` is the single head.

The product is computed right-to-left (:math:`K^\top(Qz_q)`, then :math:`V(Zw)`), so a step costs
``O(B·H·n·D)``, never ``O(B·H·n·D²)``. Initialisation is PyTorch's default for ``nn.Linear`` without bias
(uniform :math:`\pm1/\sqrt{\text{fan-in}}`), as in the authors' code.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import torch
from torch import nn

from iclab.attention import get_normaliser
from iclab.config import check_int
from iclab.data import RegressionBatch
from iclab.errors import ConfigError

__all__ = ["MultiHeadRegressionAttention", "regression_mse"]


class MultiHeadRegressionAttention(nn.Module):
    """One layer of ``n_heads`` attention heads reading regression prompts (see module docstring).

    Args:
        d: input dimension.
        n_heads: number of heads ``H`` (1 = single-head model).
        attention: registry name of the normaliser (``softmax``, ``linear``, ``approx_softmax``, ...).
        n_out: number of labels per token ``N`` (multi-task, docs/papers/multihead.md §3.10); ``(B,)`` when 1.
        attention_params: extra keyword parameters for the normaliser (e.g. ``{"tau": 2.0}``).
        scale: logit scale ``s`` (default ``1/sqrt(d + n_out)``, the authors' code).
        linear_length: if set, multiply the weights by ``n / linear_length`` (freezes the ``1/n`` of linear
            attention at the training length; docs/papers/multihead.md §3.4).
        dtype: parameter dtype.
    """

    def __init__(
        self,
        d: int,
        n_heads: int = 2,
        attention: str = "softmax",
        n_out: int = 1,
        attention_params: Mapping[str, Any] | None = None,
        scale: float | None = None,
        linear_length: int | None = None,
        dtype: torch.dtype = torch.float32,
    ):
        super().__init__()
        check_int("d", d, 1)
        check_int("n_heads", n_heads, 1)
        check_int("n_out", n_out, 1)
        if linear_length is not None:
            check_int("linear_length", linear_length, 1)
        self._norm = get_normaliser(attention, **(attention_params or {}))  # ConfigError for a bad name/param
        self.d, self.n_heads, self.n_out, self.attention = d, n_heads, n_out, attention
        self.attention_params = dict(attention_params or {})
        D = d + n_out
        self.scale = float(scale) if scale is not None else 1.0 / math.sqrt(D)
        self.linear_length = linear_length
        bound, bound_o = 1.0 / math.sqrt(D), 1.0 / math.sqrt(D * n_heads)
        self.q = nn.Parameter(torch.empty(n_heads, D, D, dtype=dtype).uniform_(-bound, bound))  # (H, D, D)
        self.k = nn.Parameter(torch.empty(n_heads, D, D, dtype=dtype).uniform_(-bound, bound))  # (H, D, D)
        self.v = nn.Parameter(torch.empty(n_heads, D, D, dtype=dtype).uniform_(-bound, bound))  # (H, D, D)
        self.o = nn.Parameter(torch.empty(n_heads, n_out, D, dtype=dtype).uniform_(-bound_o, bound_o))  # (H, N, D)

    # -- parametrisation ---------------------------------------------------------------------------
    @property
    def kq(self) -> torch.Tensor:
        r""":math:`KQ^{(h)}=K^{(h)\top}Q^{(h)}`, ``(H, D, D)``: logit of key ``z`` for query ``z_q`` is
        ``s · zᵀ KQ z_q``."""
        return self.k.transpose(1, 2) @ self.q

    @property
    def ov(self) -> torch.Tensor:
        r""":math:`OV^{(h)}` rows that reach the output, ``(H, N, D)``."""
        return self.o @ self.v

    @classmethod
    def from_omega_mu(
        cls, d: int, omega: Sequence[float], mu: Sequence[float], attention: str = "softmax", **kw
    ) -> "MultiHeadRegressionAttention":
        """The emergent-pattern model of arXiv:2503.12734 (docs/papers/multihead.md §3.3): ``KQ^{(h)}`` top block
        ``ω_h/s · I_d`` (so the logit is ``ω_h x_ℓᵀx_q``) and ``OV^{(h)}`` last entry ``μ_h``, every other entry 0
        (single output)."""
        omega = torch.as_tensor(omega, dtype=torch.float64).flatten()
        mu = torch.as_tensor(mu, dtype=torch.float64).flatten()
        if omega.shape != mu.shape:
            raise ConfigError("mu", f"shape {tuple(mu.shape)}", f"the shape of omega {tuple(omega.shape)}")
        if kw.get("n_out", 1) != 1:
            raise ConfigError("n_out", kw["n_out"], "1 (the emergent-pattern model has a single output)")
        m = cls(d, len(omega), attention, **kw)
        with torch.no_grad():
            eye = torch.zeros(d + 1, d + 1, dtype=m.q.dtype)
            eye[:d, :d] = torch.eye(d)
            m.q.copy_(omega.to(m.q.dtype)[:, None, None] / m.scale * eye)
            m.k.copy_(eye.expand_as(m.k))
            m.v.zero_()
            m.v[:, d, d] = 1.0
            m.o.zero_()
            m.o[:, 0, d] = mu.to(m.o.dtype)
        return m

    # -- forward -----------------------------------------------------------------------------------
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """``x``: ``(B, n+1, d)`` with the query last; ``y``: ``(B, n+1)`` or ``(B, n+1, N)`` (the query's label
        is never read). Returns ``(B,)`` (N = 1) or ``(B, N)``."""
        if y.dim() == 2:
            y = y.unsqueeze(-1)  # (B, l, N)
        if x.shape[-1] != self.d or y.shape[-1] != self.n_out:
            raise ConfigError(
                "x/y", f"shapes {tuple(x.shape)}, {tuple(y.shape)}", f"(B, l, {self.d}) and (B, l, {self.n_out})"
            )
        x, y = x.to(self.q.dtype), y.to(self.q.dtype)
        n = x.shape[1] - 1
        ctx = torch.cat([x[:, :-1], y[:, :-1]], dim=-1)  # (B, n, D)
        zq = torch.cat([x[:, -1], torch.zeros_like(y[:, -1])], dim=-1)  # (B, D)
        qz = torch.einsum("hed,bd->bhe", self.q, zq)  # (B, H, D)   Q z_q
        kqz = torch.einsum("hed,bhe->bhd", self.k, qz)  # (B, H, D)  Kᵀ Q z_q
        scores = torch.bmm(kqz, ctx.transpose(1, 2)) * self.scale  # (B, H, n)
        w = self._norm(scores.unsqueeze(-2), None, **self.attention_params).squeeze(-2)  # (B, H, n)
        if self.linear_length is not None:
            w = w * (n / self.linear_length)
        zbar = torch.bmm(w, ctx)  # (B, H, D)   Z w
        ov = self.o @ self.v  # (H, N, D)
        out = torch.einsum("bhd,hnd->bn", zbar, ov)  # (B, N)
        return out.squeeze(-1) if self.n_out == 1 else out

    def predict(self, batch) -> torch.Tensor:
        """``predict(batch) -> ŷ_q`` like the estimators (batch with ``x`` and ``y``)."""
        return self(batch.x, batch.y)


def regression_mse(model: nn.Module, batch: RegressionBatch) -> torch.Tensor:
    """Mean squared error of the query prediction against the (noisy) query label(s) ``y[:, -1]``
    (``torch.nn.MSELoss`` in the authors' code; docs/papers/multihead.md §5.2)."""
    pred = model(batch.x, batch.y)  # (B,) or (B, N)
    return ((pred - batch.y[:, -1].to(pred.dtype)) ** 2).mean()
