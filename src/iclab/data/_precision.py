"""Prompts drawn by one distribution and handed to a model in float64: the trainer and the evaluators call
``sample(batch, generator)``; :class:`Float64Prompts` adds the distribution's own sampling options (e.g.
``dtype=torch.float64`` for :class:`iclab.data.CategoricalICL`, which then draws in float64) and casts the batch to
float64 (a :class:`iclab.data.GaussianRegression` in float32 draws its normals about 5x faster than in float64 and
the model still computes in float64). The random stream is the distribution's own: the wrapper draws nothing."""

from __future__ import annotations

from typing import Any

import torch

__all__ = ["Float64Prompts"]


class Float64Prompts:
    """``dist.sample(batch, generator, **sample_options).double()``: the prompts of ``dist`` in float64."""

    def __init__(self, dist: Any, **sample_options: Any):
        self.dist = dist
        self.sample_options = sample_options

    def sample(self, batch: int, generator: torch.Generator | None = None) -> Any:
        return self.dist.sample(batch, generator, **self.sample_options).double()
