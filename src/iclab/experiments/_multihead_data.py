"""Multi-task regression prompts of the multi-head paper (blog version, spec §3.4) and the anisotropic
covariance (spec §3.3).

The paper's single-task distribution (x ~ N(0, Σ), β ~ N(0, I_d/d), noise σ²) is
:class:`iclab.data.GaussianRegression` with ``cov_w = 1/d`` (float32 for training, float64 for evaluation).

Multi-task: x ~ N(0, I_d); one β ~ N(0, I_d/d) per prompt shared by all N tasks; task n reads the support
S_n (default d = 6, S₁ = {1,2,3,4}, S₂ = {3,4,5,6}, zero-based below): y_n = β_{S_n}ᵀx_{S_n} + ε_n,
ε_n ~ N(0, σ²). The token is (x; y₁; …; y_N) and the query labels are the (noisy) targets ``y[:, -1, :]``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

__all__ = ["MultiTaskBatch", "MultiTaskRegression", "toeplitz_cov"]


@dataclass
class MultiTaskBatch:
    x: torch.Tensor  # (B, l, d)
    y: torch.Tensor  # (B, l, N)
    w: torch.Tensor  # (B, d)

    def to(self, device) -> "MultiTaskBatch":
        return MultiTaskBatch(self.x.to(device), self.y.to(device), self.w.to(device))

    def index(self, idx: Any) -> "MultiTaskBatch":
        return MultiTaskBatch(self.x[idx], self.y[idx], self.w[idx])


@dataclass(frozen=True)
class MultiTaskRegression:
    """Multi-task prompts (module docstring); ``supports`` are zero-based coordinate tuples."""

    d: int = 6
    n: int = 40
    sigma: float = 0.1**0.5
    supports: tuple[tuple[int, ...], ...] = ((0, 1, 2, 3), (2, 3, 4, 5))
    dtype: torch.dtype = torch.float32

    @property
    def masks(self) -> torch.Tensor:  # (N, d) 0/1 support indicators
        m = torch.zeros(len(self.supports), self.d, dtype=torch.float64)
        for i, s in enumerate(self.supports):
            m[i, list(s)] = 1.0
        return m

    def sample(self, batch: int, generator: torch.Generator | None = None) -> MultiTaskBatch:
        dt = self.dtype
        x = torch.randn(batch, self.n + 1, self.d, generator=generator, dtype=dt)  # (B, l, d)
        w = torch.randn(batch, self.d, generator=generator, dtype=dt) / self.d**0.5  # (B, d)
        eps = torch.randn(batch, self.n + 1, len(self.supports), generator=generator, dtype=dt)
        y = torch.einsum("bld,bd,nd->bln", x, w, self.masks.to(dt)) + self.sigma * eps  # (B, l, N)
        return MultiTaskBatch(x, y, w)

    def with_n(self, n: int) -> "MultiTaskRegression":
        return MultiTaskRegression(self.d, n, self.sigma, self.supports, self.dtype)


def toeplitz_cov(d: int, rho: float) -> np.ndarray:
    """Σ_ij = ρ^|i−j| (the authors' ``generate_covariance_matrix``, spec §3.3)."""
    idx = np.arange(d)
    return rho ** np.abs(idx[:, None] - idx[None, :])
