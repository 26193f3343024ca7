r"""Multi-task Gaussian regression prompts and the Toeplitz input covariance of the multi-head softmax-attention
paper, arXiv:2503.12734 (multi-task and anisotropic extensions; docs/papers/multihead.md §3.9–3.10).

Multi-task prompts, :math:`x\sim\mathcal N(0,I_d)`, task n reads the coordinates :math:`S_n` only. Two laws:

* ``law="post"`` (the authors' post): one :math:`\beta\sim\mathcal N(0,I_d/d)` per prompt, shared by all N
  tasks, :math:`y_n=\beta_{S_n}^\top x_{S_n}+\epsilon_n`, :math:`\epsilon_n\sim\mathcal N(0,\sigma^2)`, and the
  query's labels are noisy;
* ``law="code"`` (the authors' code, ``MultiTaskLinearReg``, behind their multi-task figures): independent
  :math:`\beta_n\sim\mathcal N(0,I_{|S_n|})` per task (unscaled),
  :math:`y_n=\beta_n^\top x_{S_n}+\sqrt{|S_n|}\,\sigma\,\epsilon_n`, and noiseless query labels.

The defaults are the paper's: d = 6, :math:`S_1=\{1,2,3,4\}`, :math:`S_2=\{3,4,5,6\}` (zero-based below).
A token is :math:`(x;y_1;\dots;y_N)`; the query's labels ``y[:, -1, :]`` are the targets.

The single-task distribution of the paper (:math:`x\sim\mathcal N(0,\Sigma)`, :math:`\beta\sim\mathcal N(0,I_d/d)`,
noise :math:`\sigma^2`) is :class:`iclab.data.GaussianRegression` with ``cov_w = 1/d``; its anisotropic
:math:`\Sigma_{ij}=\rho^{|i-j|}` is :func:`toeplitz_cov`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from iclab.errors import ConfigError

__all__ = ["MultiTaskBatch", "MultiTaskRegression", "toeplitz_cov"]


@dataclass
class MultiTaskBatch:
    """A batch of multi-task prompts.

    Fields:
        x: ``(B, n+1, d)`` inputs; the last row is the query.
        y: ``(B, n+1, N)`` labels of the N tasks; ``y[:, -1]`` are the query's targets.
        w: the task vectors: ``(B, d)``, the shared β of each prompt (``post``), or ``(B, N, d)``, one β_n per task
            embedded in ℝ^d with zeros off S_n (``code``).
    """

    x: torch.Tensor  # (B, l, d)
    y: torch.Tensor  # (B, l, N)
    w: torch.Tensor  # (B, d) or (B, N, d)

    def to(self, device) -> "MultiTaskBatch":
        return MultiTaskBatch(self.x.to(device), self.y.to(device), self.w.to(device))

    def index(self, idx: Any) -> "MultiTaskBatch":
        return MultiTaskBatch(self.x[idx], self.y[idx], self.w[idx])


@dataclass(frozen=True)
class MultiTaskRegression:
    """Multi-task prompts (module docstring).

    Fields:
        d: input dimension.
        n: context length (labelled pairs per prompt).
        sigma: noise standard deviation σ (``code``: scaled by √|S_n| for task n).
        supports: zero-based coordinate tuples :math:`S_n`, one per task.
        dtype: dtype of the samples.
        law: ``post`` or ``code`` (module docstring).
    """

    d: int = 6
    n: int = 40
    sigma: float = 0.1**0.5
    supports: tuple[tuple[int, ...], ...] = ((0, 1, 2, 3), (2, 3, 4, 5))
    dtype: torch.dtype = torch.float32
    law: str = "post"

    def __post_init__(self) -> None:
        if self.law not in ("post", "code"):
            raise ConfigError("law", self.law, "'post' or 'code'")

    @property
    def masks(self) -> torch.Tensor:  # (N, d) 0/1 support indicators
        m = torch.zeros(len(self.supports), self.d, dtype=torch.float64)
        for i, s in enumerate(self.supports):
            m[i, list(s)] = 1.0
        return m

    def sample(self, batch: int, generator: torch.Generator | None = None) -> MultiTaskBatch:
        dt, N = self.dtype, len(self.supports)
        masks = self.masks.to(dt)  # (N, d)
        x = torch.randn(batch, self.n + 1, self.d, generator=generator, dtype=dt)  # (B, l, d)
        if self.law == "post":
            w = torch.randn(batch, self.d, generator=generator, dtype=dt) / self.d**0.5  # (B, d)
            eps = torch.randn(batch, self.n + 1, N, generator=generator, dtype=dt)  # (B, l, N)
            y = torch.einsum("bld,bd,nd->bln", x, w, masks) + self.sigma * eps  # (B, l, N)
            return MultiTaskBatch(x, y, w)
        w = torch.randn(batch, N, self.d, generator=generator, dtype=dt) * masks  # (B, N, d), zero off S_n
        eps = torch.randn(batch, self.n + 1, N, generator=generator, dtype=dt)  # (B, l, N)
        eps[:, -1] = 0.0  # noiseless query targets
        scale = self.sigma * masks.sum(1).sqrt()  # (N,)  √|S_n| σ
        y = torch.einsum("bld,bnd->bln", x, w) + scale * eps  # (B, l, N)
        return MultiTaskBatch(x, y, w)

    def with_n(self, n: int) -> "MultiTaskRegression":
        return MultiTaskRegression(self.d, n, self.sigma, self.supports, self.dtype, self.law)


def toeplitz_cov(d: int, rho: float) -> np.ndarray:
    r""":math:`\Sigma_{ij}=\rho^{|i-j|}`, ``(d, d)``: the anisotropic input covariance of arXiv:2503.12734
    (the authors' ``generate_covariance_matrix``; docs/papers/multihead.md §3.9)."""
    idx = np.arange(d)
    return rho ** np.abs(idx[:, None] - idx[None, :])
