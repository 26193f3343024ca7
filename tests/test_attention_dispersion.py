"""Dispersion diagnostics and the Lemma 2.1 bounds of arXiv:2410.01104 (docs/papers/dispersion.md §3.2, §4.1) on
random logits."""

import math

import pytest
import torch

from iclab.attention import (
    attention_entropy,
    dispersion_bounds,
    dispersion_summary,
    logit_spread,
    max_coefficient,
    softmax,
)


@pytest.mark.parametrize("n", [3, 7, 11, 1000])
@pytest.mark.parametrize("tau", [0.5, 1.0, 3.0])
def test_lemma_2_1_bounds_hold_on_random_logits(n, tau):
    g = torch.Generator().manual_seed(n)
    x = torch.randn(5, 7, n, generator=g, dtype=torch.float64) * 3
    s = dispersion_summary(x, tau=tau)
    w = softmax(x, tau=tau)
    assert (w >= s["lower"][..., None] * (1 - 1e-12)).all()
    assert (w <= s["upper"][..., None] * (1 + 1e-12)).all()
    assert (s["max_coef"] <= s["top_upper"] * (1 + 1e-12)).all()
    assert (s["min_coef"] >= s["lower"] * (1 - 1e-12)).all()
    assert (s["top_upper"] <= s["upper"] + 1e-15).all()


def test_top_bound_is_attained_by_two_level_logits():
    n, delta = 11, 2.5
    x = torch.zeros(1, n, dtype=torch.float64)
    x[0, 3] = delta
    s = dispersion_summary(x)
    assert s["max_coef"].item() == pytest.approx(s["top_upper"].item(), rel=1e-12)
    lo, hi, top = dispersion_bounds(delta, n)
    assert hi.item() == pytest.approx(math.exp(delta) / n)
    assert lo.item() == pytest.approx(math.exp(-delta) / n)


def test_entropy_max_and_spread_with_mask():
    w = torch.full((2, 7), 1 / 7, dtype=torch.float64)
    assert torch.allclose(attention_entropy(w), torch.full((2,), math.log(7), dtype=torch.float64))
    assert torch.equal(max_coefficient(w), torch.full((2,), 1 / 7, dtype=torch.float64))
    x = torch.tensor([[0.0, 5.0, -2.0, 1.0], [3.0, 3.0, 3.0, 9.0]])
    mask = torch.tensor([[True, False, True, True], [False, False, False, False]])
    d = logit_spread(x, mask)
    assert d[0].item() == 3.0 and math.isnan(d[1].item())
    assert logit_spread(x)[1].item() == 6.0
    s = dispersion_summary(x, mask)
    assert torch.isfinite(s["entropy"]).all() and s["n"].tolist() == [3.0, 0.0]
