r"""The single-head max-retrieval set network of arXiv:2410.01104 ("Softmax is not enough"), App. A, Eqs. 9–14
(docs/papers/dispersion.md §3.6).

.. math::
    h_i=\psi_x(x_i),\; h_q=\psi_q(q),\; e_i=\frac{(W_Q h_q)^\top (W_K h_i)}{\sqrt d},\;
    \alpha=\mathrm{normalise}(e),\; z=\sum_i\alpha_i W_V h_i,\; \hat y=\phi(z).

:math:`\psi_x,\psi_q,\phi` are GELU MLPs with ``depth`` hidden layers of width ``d`` (the paper says "deep" MLPs
of width 128; iclab's full preset: 2 hidden layers, note §3.6).
One global query per set, no positional information, no item–item attention. The normaliser comes from the
registry and can be switched after training (``set_attention("adaptive_softmax")``: the paper applies the
adaptive temperature only at inference, note §3.6). ``scores``/``readout`` split the forward pass so that several
normalisers can be evaluated on one computation of the logits.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from iclab.attention import get_normaliser
from iclab.config import check_int

__all__ = ["MaxRetrievalNet", "mlp"]


def mlp(d_in: int, d_hidden: int, d_out: int, depth: int) -> nn.Sequential:
    """``depth`` hidden GELU layers of width ``d_hidden``."""
    layers, width = [], d_in
    for _ in range(depth):
        layers += [nn.Linear(width, d_hidden), nn.GELU()]
        width = d_hidden
    return nn.Sequential(*layers, nn.Linear(width, d_out))


class MaxRetrievalNet(nn.Module):
    """Single-head set model (module docstring). ``forward(items (B,n,d_item), query (B,1), mask (B,n))`` returns
    class logits ``(B, C)`` (and the attention weights ``(B, 1, n)`` with ``return_weights=True``)."""

    def __init__(
        self,
        d_item: int = 11,
        n_classes: int = 10,
        d: int = 128,
        depth: int = 2,
        attention: str = "softmax",
        attention_params: dict | None = None,
    ):
        super().__init__()
        for name, val in (("d_item", d_item), ("n_classes", n_classes), ("d", d), ("depth", depth)):
            check_int(name, val, 1)
        self.d = d
        self.psi_x, self.psi_q = mlp(d_item, d, d, depth), mlp(1, d, d, depth)
        self.W_q, self.W_k, self.W_v = (nn.Linear(d, d, bias=False) for _ in range(3))
        self.phi = mlp(d, d, n_classes, depth)
        self.set_attention(attention, **(attention_params or {}))

    def set_attention(self, name: str, **params) -> "MaxRetrievalNet":
        """Switch the normaliser (any registry name) and its parameters, e.g. at inference time."""
        self.normaliser = get_normaliser(name, **params)
        self.attention, self.attention_params = name, dict(params)
        return self

    def scores(self, items: torch.Tensor, query: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Logits ``e (B, 1, n)`` (Eq. 11, scaled by 1/sqrt(d)) and values ``W_V h (B, n, d)``."""
        h = self.psi_x(items)  # (B, n, d)
        hq = self.psi_q(query)[:, None, :]  # (B, 1, d)
        e = (self.W_q(hq) @ self.W_k(h).transpose(-1, -2)) / math.sqrt(self.d)  # (B, 1, n)
        return e, self.W_v(h)

    def readout(self, weights: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
        """``phi(sum_i alpha_i W_V h_i)``: ``(B, 1, n), (B, n, d) -> (B, C)``."""
        return self.phi((weights @ values)[:, 0])  # (B, C)

    def forward(self, items, query, mask=None, return_weights: bool = False):
        e, val = self.scores(items, query)
        w = self.normaliser(e, None if mask is None else mask[:, None, :], **self.attention_params)  # (B, 1, n)
        y = self.readout(w, val)
        return (y, w) if return_weights else y
