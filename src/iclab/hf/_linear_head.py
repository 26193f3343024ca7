r"""A linear read-out of frozen encoder features: the head that arXiv:2609.36448 trains on BERT features and scores
under hidden-state rotation (docs/papers/ood.md §5.6, §5.9).

:func:`fit_head` minimises the cross-entropy :math:`\frac1n\sum_i-\log\operatorname{softmax}(\mathbf W\mathbf x_i+
\mathbf b)_{y_i}` by full-batch Adam; :func:`head_scores` and :func:`ce_per_example` read its accuracy and
cross-entropy off features ``x (n, D)`` with labels ``y (n,)``.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

__all__ = ["fit_head", "head_scores", "ce_per_example"]


def fit_head(head: nn.Linear, x: torch.Tensor, y: torch.Tensor, steps: int, lr: float = 1e-2) -> None:
    """Full-batch Adam on the cross-entropy of ``head(x)`` against labels ``y``, ``steps`` steps, in place."""
    opt = torch.optim.Adam(head.parameters(), lr=lr)
    for _ in range(steps):
        loss = F.cross_entropy(head(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()


def head_scores(head: nn.Linear, x: torch.Tensor, y: torch.Tensor) -> tuple[float, float]:
    """(accuracy, mean cross-entropy) of ``head`` on ``x (n, D)``, ``y (n,)``."""
    with torch.no_grad():
        logits = head(x)
    return float((logits.argmax(-1) == y).float().mean()), float(F.cross_entropy(logits, y))


def ce_per_example(head: nn.Linear, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Cross-entropy of ``head`` on every example: ``x (n, D)``, ``y (n,)`` -> ``(n,)``."""
    with torch.no_grad():
        return F.cross_entropy(head(x), y, reduction="none")
