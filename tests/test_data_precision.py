"""``iclab.data.Float64Prompts``: the distribution's own draws, in float64, with its sampling options passed on."""

import torch

from iclab.data import CategoricalICL, Float64Prompts, GaussianRegression, generator_for


def test_gaussian_draws_in_float32_returned_in_float64():
    dist = GaussianRegression(5, 7, dtype=torch.float32)
    b = Float64Prompts(dist).sample(3, generator_for(0, "p"))
    ref = dist.sample(3, generator_for(0, "p"))
    assert b.x.dtype == b.y.dtype == b.w.dtype == torch.float64
    assert torch.equal(b.x, ref.x.double()) and torch.equal(b.y, ref.y.double()) and torch.equal(b.w, ref.w.double())


def test_sample_options_reach_the_distribution():
    dist = CategoricalICL(n_classes=7, d=5, d_embed=3, n_context=11, n_clusters=3)
    b = Float64Prompts(dist, dtype=torch.float64).sample(4, generator_for(1, "c"))
    ref64 = dist.sample(4, generator_for(1, "c"), dtype=torch.float64)
    ref32 = dist.sample(4, generator_for(1, "c"))
    assert b.x.dtype == torch.float64 and torch.equal(b.x, ref64.x) and torch.equal(b.y, ref64.y)
    assert not torch.equal(b.x, ref32.x.double())  # drawn in float64, not rounded through float32
