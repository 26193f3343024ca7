"""The single-head max-retrieval set network of arXiv:2410.01104 (App. A; docs/papers/dispersion.md §3.6) and the
dispersion theory it illustrates (note §3–4)."""

import math

import numpy as np
import pytest
import torch

from iclab.attention import adaptive_softmax, normalise, softmax
from iclab.data import MaxRetrieval, generator_for
from iclab.errors import ConfigError
from iclab.models import MaxRetrievalNet
from iclab.theory import dispersion as th


def test_shapes_mask_and_permutation_invariance():
    torch.manual_seed(0)
    m = MaxRetrievalNet(d_item=8, n_classes=7, d=11, depth=1)
    b = MaxRetrieval(3, 5, 7).sample(13, generator_for(0, "m"))
    y, w = m(b.items, b.query, b.mask, return_weights=True)
    assert y.shape == (13, 7) and w.shape == (13, 1, 5)
    assert (w[:, 0][~b.mask] == 0).all() and torch.allclose(w.sum(-1), torch.ones(13, 1))
    perm = torch.randperm(5)
    full = MaxRetrieval.at_size(5, 7).sample(4, generator_for(1))
    assert torch.allclose(m(full.items, full.query), m(full.items[:, perm], full.query), atol=1e-6)


def test_set_attention_switches_normaliser_at_inference():
    torch.manual_seed(1)
    m = MaxRetrievalNet(d=16, depth=2)
    b = MaxRetrieval.at_size(9).sample(5, generator_for(2))
    e, val = m.scores(b.items, b.query)
    with torch.no_grad():
        m.set_attention("adaptive_softmax", threshold=0.3)
        assert torch.allclose(m(b.items, b.query), m.readout(adaptive_softmax(e, threshold=0.3), val))
        m.set_attention("ssmax")
        assert torch.allclose(m(b.items, b.query), m.readout(normalise("ssmax", e), val))
        m.set_attention("softmax")
        assert torch.allclose(m(b.items, b.query), m.readout(softmax(e), val))
    with pytest.raises(ConfigError):
        m.set_attention("nope")
    with pytest.raises(ConfigError):
        MaxRetrievalNet(d=0)


def test_lemma_bounds_and_required_spread_against_monte_carlo():
    rng = np.random.default_rng(0)
    for n in (3, 7, 11, 500):
        e = rng.uniform(-1.3, 0.9, size=(200, n))
        delta = e.max(1) - e.min(1)
        p = np.exp(e - e.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        lo, hi = th.lemma21_bounds(delta[:, None], n)
        assert (p >= lo * (1 - 1e-12)).all() and (p <= hi * (1 + 1e-12)).all()
        assert (p.max(1) <= th.top_coefficient_bound(delta, n) * (1 + 1e-12)).all()
    # required spread makes the two-level configuration exactly (1 - eps)-sharp
    for n, eps in ((7, 0.1), (1000, 0.01)):
        d = th.required_spread(n, eps)
        assert th.top_coefficient_bound(d, n) == pytest.approx(1 - eps)
        assert th.required_qk_product(n, eps, y_norm=2.0, x_max=3.0) == pytest.approx(d / 12)


def test_entropy_beta_derivative_matches_finite_difference():
    e = np.random.default_rng(1).normal(size=(5, 11))
    for beta in (0.7, 1.0, 2.3):
        fd = (th.softmax_entropy(e, beta + 1e-6) - th.softmax_entropy(e, beta - 1e-6)) / 2e-6
        assert np.allclose(th.entropy_beta_derivative(e, beta), fd, atol=1e-6)
        assert (th.entropy_beta_derivative(e, beta) <= 0).all()


def test_beta_polynomial_and_fit_recovers_coefficients():
    assert th.beta_active_range() == pytest.approx([0.849, 5.945], abs=2e-3)
    H = np.linspace(0.5, 6, 40)
    coeffs = th.fit_beta_polynomial(H, np.polyval(th.PAPER_COEFFS, H), weights=np.ones(40))
    assert np.allclose(coeffs, th.PAPER_COEFFS, atol=1e-8)
    loss = np.array([[3.0, 1.0, 2.0], [0.0, 5.0, 5.0], [1.0, 1.0, 1.0]])
    best = th.best_beta_per_bin(loss, [4, 2, 0], [1.0, 1.5, 2.0])
    assert best[:2].tolist() == [1.5, 1.0] and math.isnan(best[2])
    assert th.beta_of_entropy(0.4) == 1.0 and th.beta_of_entropy(6.5) == 1.0
