"""One-layer ICL attention with the (V, M) reparametrisation of arXiv:2511.01292 (Eqs. 4–11;
docs/papers/temperature.md §3.2–3.5)."""

import numpy as np
import pytest
import torch

from iclab.attention import normalise
from iclab.data import GaussianRegression, generator_for, token_matrix
from iclab.errors import ConfigError
from iclab.models import ICLAttention, bayes_mimicking_weights, pretraining_covariance


def _random_model(d, attention="approx_softmax", seed=0, **kw):
    return ICLAttention(d, attention=attention, init_scale=1.0, generator=generator_for(seed, "model", d), **kw)


def _prompts(d, n, B=9, seed=1, **kw):
    return GaussianRegression(d=d, n=n, sigma=0.3, **kw).sample(B, generator_for(seed, "prompts", d, n))


@pytest.mark.parametrize("d,n", [(3, 4), (5, 10), (7, 2)])
@pytest.mark.parametrize("tau", [0.3, 1.0, 4.0])
def test_forward_equals_explicit_predictor(d, n, tau):
    """Spec §1.5: ŷ = b_Att + ŵ_Attᵀ x_l / τ with centred statistics over all l columns (query label 0)."""
    model, b = _random_model(d), _prompts(d, n, mu_x=0.4, mu_w=-0.3)
    with torch.no_grad():
        b_att, w_att = model.decompose(b)
        assert torch.allclose(model(b, tau=tau), b_att + (w_att * b.query_x).sum(-1) / tau, atol=1e-12)


def test_forward_equals_direct_implementation():
    """The per-prompt NumPy predictor of Eq. 10 (docs/papers/temperature.md §4.2), looped over prompts."""
    d, n, tau = 5, 6, 1.7
    model, b = _random_model(d), _prompts(d, n)
    W = model.weights()
    with torch.no_grad():
        got = model(b, tau=tau).numpy()
    for i in range(len(b)):
        X, y = b.x[i].numpy(), b.y[i].numpy().copy()
        y[-1] = 0.0
        xq = X[-1]
        a = X @ W["M11"] @ xq + y * (W["m21"] @ xq)
        w = (1 + (a - a.mean()) / tau) / (n + 1)
        assert np.isclose(got[i], (X @ W["v21"] + W["v22"] * y) @ w, atol=1e-12)


def test_reparametrisation_matches_full_v_k_q_layer():
    """Spec Eq. 5 with full V, K, Q: only v21, v22, M11, m21 (M = KᵀQ) matter; the * blocks do not."""
    d, n, tau = 3, 5, 0.8
    g = torch.Generator().manual_seed(0)
    V, K, Q = (torch.randn(d + 1, d + 1, generator=g, dtype=torch.float64) for _ in range(3))
    b = _prompts(d, n)
    Z = token_matrix(b)  # (B, d+1, l)
    l = n + 1
    A = (K @ Z).transpose(1, 2) @ (Q @ Z)  # (B, l, l), keys i × queries j
    ones = torch.ones(l, l, dtype=torch.float64)
    E = Z + V @ Z @ (A / tau + ones - ones @ A / (l * tau)) / l
    M = K.T @ Q
    model = ICLAttention.from_weights(M11=M[:d, :d], m21=M[d, :d], v21=V[d, :d], v22=float(V[d, d]), tau=tau)
    with torch.no_grad():
        assert torch.allclose(model(b), E[:, d, l - 1], atol=1e-10)


def test_softmax_and_linear_normalisers():
    d, n, tau = 5, 7, 2.5
    b = _prompts(d, n)
    for name in ("softmax", "linear"):
        model = _random_model(d, attention=name, seed=3)
        a, u = model.scores_values(b)
        weights = torch.softmax(a / tau, -1) if name == "softmax" else a / (n + 1)
        with torch.no_grad():
            out = model(b, tau=tau if name == "softmax" else 1.0)
        assert torch.allclose(out, (weights * u).sum(-1), atol=1e-12)


def test_query_not_a_key_masks_the_query():
    d, n, tau = 5, 6, 1.3
    model, b = _random_model(d, query_key=False), _prompts(d, n)
    a, u = model.scores_values(b)
    a, u = a[:, :-1], u[:, :-1]
    w = (1 + (a - a.mean(-1, keepdim=True)) / tau) / n
    with torch.no_grad():
        assert torch.allclose(model(b, tau=tau), (w * u).sum(-1), atol=1e-12)
        b_att, w_att = model.decompose(b)
        assert torch.allclose(model(b, tau=tau), b_att + (w_att * b.query_x).sum(-1) / tau, atol=1e-12)


def test_input_mean_shift_exact_statement():
    """What holds exactly (Eq. 10, Remark 3.4; docs/papers/temperature.md §4.9): the τ-dependent regression vector ŵ_Att depends only on centred
    statistics, so shifting every input column by μ (label row fixed) leaves it unchanged, and the approximate-
    softmax prediction moves by exactly ŵ_Attᵀμ/τ + Δb_Att (the query point moved). Linear attention's implied
    vector ŵ_lin (uncentred moments, ŷ_lin = ŵ_linᵀx_l) changes."""
    d, n, tau = 5, 8, 1.6
    b = _prompts(d, n, mu_w=0.5)
    mu = torch.linspace(-2.0, 3.0, d, dtype=torch.float64)
    shifted = b.__class__(b.x + mu, b.y, b.w)
    approx = _random_model(d, seed=5)
    with torch.no_grad():
        b0, w0 = approx.decompose(b)
        b1, w1 = approx.decompose(shifted)
        assert torch.allclose(w0, w1, atol=1e-10)
        assert (b1 - b0).abs().max() > 1e-3  # b_Att sees the mean (v21ᵀ s_x)
        dy = approx(shifted, tau=tau) - approx(b, tau=tau)
        assert torch.allclose(dy, (b1 - b0) + (w0 @ mu) / tau, atol=1e-10)
        # normaliser level: adding a constant to every score of a query changes nothing
        a, _ = approx.scores_values(b)
        s = a.unsqueeze(1)
        assert torch.allclose(
            normalise("approx_softmax", s + 7.0, tau=tau), normalise("approx_softmax", s, tau=tau), atol=1e-12
        )
        assert not torch.allclose(normalise("linear", s + 7.0), normalise("linear", s))

    W = approx.weights()
    lin = ICLAttention.from_weights(**W, attention="linear")

    def w_lin(batch):
        y = batch.y.clone()
        y[:, -1] = 0.0
        u = batch.x @ lin.v21 + lin.v22 * y  # (B, l)
        return (batch.x * u.unsqueeze(-1)).mean(1) @ lin.M11 + (y * u).mean(1, keepdim=True) * lin.m21

    with torch.no_grad():
        for batch in (b, shifted):
            assert torch.allclose(lin(batch), (w_lin(batch) * batch.query_x).sum(-1), atol=1e-10)
        assert (w_lin(shifted) - w_lin(b)).norm(dim=-1).min() > 1e-2


def test_bayes_mimicking_weights_lemma41():
    d, l, sigma = 5, 12, 0.4
    S = np.diag([0.5, 1.0, 1.5, 2.0, 3.0])
    mu_w, cov_w = np.full(d, 0.3), np.diag([1.0, 2.0, 0.5, 1.0, 1.0])
    W = bayes_mimicking_weights(S, l, sigma, mu_w, cov_w)
    P = np.linalg.inv(cov_w)
    assert np.allclose(W["M11"], d * np.linalg.inv(S + sigma**2 / l * P))
    assert np.allclose(W["v21"], sigma**2 / (d * l) * np.linalg.inv(S) @ P @ mu_w)
    assert W["v22"] == 1 / d and np.all(W["m21"] == 0)
    # von Oswald special case: sigma = 0, mu_w = 0 -> M11 = d Σ̂^{-1}, v21 = 0
    W0 = bayes_mimicking_weights(S, l, 0.0)
    assert np.allclose(W0["M11"], d * np.linalg.inv(S)) and np.all(W0["v21"] == 0)


@pytest.mark.parametrize("centring,factor", [("global", 1.0), ("prompt", 1 - 1 / 6)])
def test_pretraining_covariance(centring, factor):
    train = GaussianRegression(d=3, n=5, cov_x=[1.0, 2.0, 0.5], mu_x=4.0)
    S = pretraining_covariance(train, 8000, generator_for(0, "pre"), centring=centring)
    assert np.allclose(S, factor * np.diag([1.0, 2.0, 0.5]), atol=0.05)


def test_from_bayes_mimicking_and_trainable():
    train = GaussianRegression(d=5, n=9, sigma=0.1)
    model = ICLAttention.from_bayes_mimicking(train, 200, generator_for(0, "p"))
    assert abs(float(model.v22.detach()) - 0.2) < 1e-12 and model.M11.requires_grad
    b = train.sample(256, generator_for(0, "train"))
    m = ICLAttention(5, init_scale=0.5, generator=generator_for(0, "init"))
    opt = torch.optim.Adam(m.parameters(), lr=0.01)
    first = None
    for _ in range(60):
        loss = ((m(b) - b.target) ** 2).mean()
        first = first if first is not None else loss.item()
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert loss.item() < 0.7 * first


def test_bad_input():
    with pytest.raises(ConfigError) as exc:
        ICLAttention(3, tau=0.0)
    assert exc.value.field == "tau"
    with pytest.raises(ConfigError):
        ICLAttention(3, tau=-1.0)
    with pytest.raises(ConfigError) as exc:
        ICLAttention(3, attention="nope")
    assert exc.value.field == "attention"
    model = _random_model(3, attention="linear")
    with pytest.raises(ConfigError):
        model(_prompts(3, 2), tau=2.0)
    with pytest.raises(ConfigError) as exc:
        ICLAttention.from_weights(M11=np.eye(3), v21=np.zeros(4), v22=1.0)
    assert exc.value.field == "v21"
