"""Sigmoid attention and length-scaled softmax (SSMax) in the registry: alternatives discussed in arXiv:2410.01104
(docs/papers/dispersion.md §3.9)."""

import math

import pytest
import torch

from iclab.attention import normalise, softmax
from iclab.errors import ConfigError


def _x(shape, seed=0):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def test_sigmoid_formula_and_mask():
    x = _x((3, 5, 7))
    assert torch.allclose(normalise("sigmoid", x), torch.sigmoid(x))
    assert torch.allclose(normalise("sigmoid", x, tau=2.0, bias=-1.0), torch.sigmoid(x / 2 - 1))
    mask = _x((3, 5, 7), 1) > 0
    w = normalise("sigmoid", x, mask, bias=None)
    n = mask.sum(-1, keepdim=True).clamp(min=1).double()
    assert torch.allclose(w, torch.where(mask, torch.sigmoid(x - torch.log(n)), torch.zeros_like(x)))
    assert torch.isfinite(w).all()


def test_ssmax_uses_visible_count_not_padded_length():
    x = _x((2, 3, 11))
    mask = torch.zeros(2, 3, 11, dtype=torch.bool)
    mask[..., :5] = True
    w = normalise("ssmax", x, mask, scale=0.7)
    ref = softmax(x[..., :5] * 0.7 * math.log(5))
    assert torch.allclose(w[..., :5], ref) and (w[..., 5:] == 0).all()
    assert torch.allclose(normalise("ssmax", x), softmax(x * math.log(11)))


def test_ssmax_single_key_and_fully_masked():
    x = _x((2, 1, 1))
    assert torch.equal(normalise("ssmax", x), torch.ones_like(x))
    m = torch.zeros(2, 1, 1, dtype=torch.bool)
    w = normalise("ssmax", x, m)
    assert torch.equal(w, torch.zeros_like(x))


def test_ssmax_sharpens_with_n():
    # logits confined to [0, 1]: softmax's top weight ~ 1/n, SSMax keeps it from vanishing (Prop 3.1)
    for n in (16, 256, 4096):
        e = torch.zeros(1, n, dtype=torch.float64)
        e[0, 0] = 1.0
        top_soft = softmax(e)[0, 0].item()
        top_ss = normalise("ssmax", e, scale=2.0)[0, 0].item()
        assert top_soft == pytest.approx(math.e / (math.e + n - 1))
        assert top_ss == pytest.approx(n**2 / (n**2 + n - 1))


@pytest.mark.parametrize(
    "name,kw",
    [("ssmax", {"scale": 0.0}), ("ssmax", {"tau": -1.0}), ("sigmoid", {"bias": float("nan")}), ("sigmoid", {"tau": 0})],
)
def test_bad_params(name, kw):
    with pytest.raises(ConfigError):
        normalise(name, torch.zeros(2, 3), **kw)
