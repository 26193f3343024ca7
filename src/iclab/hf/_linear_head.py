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

from iclab.domain import integer, number
from iclab.errors import ConfigError


def _check(head, x, y) -> None:
    """ConfigError unless ``head`` is an ``nn.Linear``, ``x`` a finite floating tensor ``(n, in_features)`` of its
    dtype, ``y`` an integer tensor ``(n,)`` of labels in ``0..out_features - 1``, n >= 1."""
    if not isinstance(head, nn.Linear):
        raise ConfigError("head", f"<{type(head).__name__}>", "a torch.nn.Linear")
    d, k = head.in_features, head.out_features
    if (
        not isinstance(x, torch.Tensor)
        or x.dtype != head.weight.dtype
        or x.dim() != 2
        or x.shape[0] == 0
        or x.shape[1] != d
        or not bool(torch.isfinite(x).all())
    ):
        shown = (
            f"<tensor of shape {tuple(x.shape)}, {x.dtype}>" if isinstance(x, torch.Tensor) else f"<{type(x).__name__}>"
        )
        raise ConfigError("x", shown, f"a finite {head.weight.dtype} tensor (n, {d}) with n >= 1")
    if (
        not isinstance(y, torch.Tensor)
        or y.dtype.is_floating_point
        or y.dtype.is_complex
        or y.dtype == torch.bool
        or y.shape != (x.shape[0],)
        or int(y.min()) < 0
        or int(y.max()) >= k
    ):
        shown = (
            f"<tensor of shape {tuple(y.shape)}, {y.dtype}>" if isinstance(y, torch.Tensor) else f"<{type(y).__name__}>"
        )
        raise ConfigError("y", shown, f"an integer tensor ({x.shape[0]},) of labels in 0..{k - 1}")


__all__ = ["fit_head", "head_scores", "ce_per_example"]


def fit_head(head: nn.Linear, x: torch.Tensor, y: torch.Tensor, steps: int, lr: float = 1e-2) -> None:
    """Full-batch Adam on the cross-entropy of ``head(x)`` against labels ``y``, ``steps`` steps, in place.

    Arguments: ``head`` a ``torch.nn.Linear``; ``x`` a finite tensor ``(n, in_features)`` of the head's dtype, n >= 1;
    ``y`` an integer tensor ``(n,)`` (not bool) of labels in ``0..out_features - 1``; ``steps`` an integer >= 0; ``lr``
    a finite number > 0 (a fit whose weights become NaN or inf is a ConfigError naming ``lr``)."""
    _check(head, x, y)
    steps = integer("steps", steps, low=0)
    lr = number("lr", lr, above=0, why="a learning rate")
    opt = torch.optim.Adam(head.parameters(), lr=lr)
    for _ in range(steps):
        loss = F.cross_entropy(head(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    if not all(bool(torch.isfinite(p).all()) for p in head.parameters()):
        raise ConfigError("lr", lr, "a learning rate at which the fit stays finite (its weights became NaN or inf)")


def head_scores(head: nn.Linear, x: torch.Tensor, y: torch.Tensor) -> tuple[float, float]:
    """(accuracy, mean cross-entropy) of ``head`` on ``x (n, D)``, ``y (n,)``.

    Arguments: ``head`` a ``torch.nn.Linear``; ``x`` a finite tensor ``(n, in_features)`` of the head's dtype, n >= 1;
    ``y`` an integer tensor ``(n,)`` (not bool) of labels in ``0..out_features - 1``."""
    _check(head, x, y)
    with torch.no_grad():
        logits = head(x)
    return float((logits.argmax(-1) == y).float().mean()), float(F.cross_entropy(logits, y))


def ce_per_example(head: nn.Linear, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Cross-entropy of ``head`` on every example: ``x (n, D)``, ``y (n,)`` -> ``(n,)``.

    Arguments: ``head`` a ``torch.nn.Linear``; ``x`` a finite tensor ``(n, in_features)`` of the head's dtype, n >= 1;
    ``y`` an integer tensor ``(n,)`` (not bool) of labels in ``0..out_features - 1``."""
    _check(head, x, y)
    with torch.no_grad():
        return F.cross_entropy(head(x), y, reduction="none")
