"""OLS, ridge and Bayes posterior mean against direct NumPy formulas (arXiv:2511.01292 Eq. 9;
docs/papers/temperature.md §3.4)."""

import numpy as np
import pytest
import torch

from iclab.data import GaussianRegression, generator_for
from iclab.errors import ConfigError
from iclab.estimators import (
    OLS,
    BayesPosteriorMean,
    Ridge,
    bayes_for,
    bayes_posterior_mean,
    mse,
    ols_weights,
    ridge_weights,
)
from iclab.theory import temperature as T


def _prompts(d, n, B=6, **kw):
    return GaussianRegression(d=d, n=n, **kw).sample(B, generator_for(0, "est", d, n))


@pytest.mark.parametrize("d,n", [(5, 11), (7, 3)])  # over- and under-determined
def test_ols_is_min_norm_least_squares(d, n):
    b = _prompts(d, n, sigma=0.5)
    w = ols_weights(b).numpy()
    for i in range(len(b)):
        X, y = b.context_x[i].numpy(), b.context_y[i].numpy()
        assert np.allclose(w[i], np.linalg.pinv(X) @ y, atol=1e-9)
    assert torch.allclose(OLS().predict(b), (ols_weights(b) * b.query_x).sum(-1))


def test_ridge_matches_numpy():
    b = _prompts(5, 7, sigma=0.5)
    w = ridge_weights(b, 0.3).numpy()
    for i in range(len(b)):
        X, y = b.context_x[i].numpy(), b.context_y[i].numpy()
        assert np.allclose(w[i], np.linalg.solve(X.T @ X + 0.3 * np.eye(5), X.T @ y), atol=1e-10)


@pytest.mark.parametrize("center", [True, False])
def test_bayes_matches_eq9(center):
    d, n, sigma = 3, 11, 0.7
    mu_w, cov_w = np.array([0.5, -1.0, 0.2]), np.array([[1.0, 0.3, 0.0], [0.3, 2.0, 0.1], [0.0, 0.1, 0.5]])
    b = _prompts(d, n, mu_x=1.0, mu_w=mu_w, cov_w=cov_w, sigma=sigma)
    w = bayes_posterior_mean(b, mu_w, cov_w, sigma, center=center).numpy()
    P = np.linalg.inv(cov_w)
    for i in range(len(b)):
        X, y = b.context_x[i].numpy(), b.context_y[i].numpy()
        if center:
            X, y = X - X.mean(0), y - y.mean()
        ref = np.linalg.solve(X.T @ X / sigma**2 + P, X.T @ y / sigma**2 + P @ mu_w)
        assert np.allclose(w[i], ref, atol=1e-10)


def test_bayes_noiseless_limit_and_ridge_equivalence():
    b = _prompts(7, 5, sigma=0.0, mu_w=0.3)
    w0 = bayes_posterior_mean(b, 0.3, 2.0, 0.0, center=False)
    w_eps = bayes_posterior_mean(b, 0.3, 2.0, 1e-4, center=False)
    assert torch.allclose(w0, w_eps, atol=1e-6)
    # zero prior mean, isotropic prior b·I: exact posterior mean = ridge with lambda = sigma^2 / b
    b2 = _prompts(5, 9, sigma=1.0)
    assert torch.allclose(bayes_posterior_mean(b2, None, 2.0, 1.0, center=False), ridge_weights(b2, 0.5), atol=1e-12)


def test_bayes_beats_ridge_beats_ols_on_average():
    """Bayes (the posterior mean) is optimal; ridge beats OLS near n = d, where OLS variance explodes."""
    d, n = 10, 12
    dist = GaussianRegression(d=d, n=n, cov_w=np.linspace(0.2, 3.0, d), mu_w=0.5, sigma=1.0)
    b = dist.sample(6000, generator_for(3, "order"))
    e_bayes = float(mse(bayes_for(dist, center=False).predict(b), b))
    e_ridge = float(mse(Ridge(1.0).predict(b), b))
    e_ols = float(mse(OLS().predict(b), b))
    assert e_bayes < 0.95 * e_ridge and e_ridge < 0.5 * e_ols


def test_mp_bayes_error_matches_monte_carlo():
    d, n, a, bw, sigma = 40, 80, 2.0, 1.0, 1.0
    dist = GaussianRegression(d=d, n=n, cov_x=a, cov_w=bw, sigma=sigma)
    b = dist.sample(8000, generator_for(4, "mp"))
    mc = float(mse(bayes_for(dist, center=False).predict(b), b))
    assert abs(mc - T.bayes_error_mp(d, n, a, bw, sigma)) / mc < 0.05


def test_bad_input():
    b = _prompts(3, 4)
    with pytest.raises(ConfigError):
        Ridge(0.0)
    with pytest.raises(ConfigError):
        ridge_weights(b, -1.0)
    with pytest.raises(ConfigError) as exc:
        bayes_posterior_mean(b, None, np.array([[1.0, 2.0, 0], [2.0, 1.0, 0], [0, 0, 1.0]]), 0.1)
    assert exc.value.field == "cov_w"
    with pytest.raises(ConfigError) as exc:
        BayesPosteriorMean(mu_w=[1.0, 2.0], sigma=0.1).predict(b)
    assert exc.value.field == "mu_w"
