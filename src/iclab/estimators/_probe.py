r"""The linear-probing baseline of in-context classification, arXiv:2405.17248 §5.4 (Wang et al.;
docs/papers/categorical.md §5.4): a softmax regression fitted on each context's N labelled examples alone, then
applied to the context's queries — an in-context predictor with no pretraining.

For a context :math:`\{(\mathbf x_i, y_i)\}_{i=1}^N` with C classes it minimises
:math:`-\frac1N\sum_i\log\operatorname{softmax}(\mathbf W^\top\mathbf x_i+\mathbf b)_{y_i}+\frac\lambda2\|\mathbf W\|^2`
by Adam from :math:`\mathbf W=\mathbf 0,\ \mathbf b=\mathbf 0` (float64), every context's own
:math:`(\mathbf W,\mathbf b)` in one batched problem (the summed loss separates over contexts).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:
    from iclab.data import CategoricalBatch

__all__ = ["softmax_probe"]


def softmax_probe(
    batch: CategoricalBatch, steps: int = 300, lr: float = 0.05, weight_decay: float = 1e-3
) -> dict[str, float]:
    """Per-context softmax regression on ``batch.x (M, N, d)``, ``batch.y (M, N)``, ``steps`` Adam steps; returns
    the query accuracy ``acc`` and the mean query negative log-likelihood ``nll``."""
    x, y, xq, yq = batch.x.double(), batch.y, batch.x_query.double(), batch.y_query  # (M, N, d) ...
    M, N, d = x.shape
    C = batch.n_classes
    W = torch.zeros(M, d, C, dtype=torch.float64, requires_grad=True)
    b = torch.zeros(M, 1, C, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.Adam([W, b], lr=lr)
    onehot = torch.nn.functional.one_hot(y, C).double()  # (M, N, C)
    for _ in range(steps):
        logits = x @ W + b  # (M, N, C)
        loss = -(torch.log_softmax(logits, -1) * onehot).sum(-1).mean(-1).sum() + weight_decay * (W**2).sum() / 2
        opt.zero_grad()
        loss.backward()
        opt.step()
    with torch.no_grad():
        lq = torch.log_softmax(xq @ W + b, -1)  # (M, Q, C)
        return {"acc": float((lq.argmax(-1) == yq).double().mean()), "nll": float(-lq.gather(-1, yq[..., None]).mean())}
