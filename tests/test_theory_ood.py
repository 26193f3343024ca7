"""Closed forms for arXiv:2609.36448 (docs/papers/ood.md §4) against GD, finite differences and Monte Carlo."""

import math

import numpy as np
import pytest

from iclab.errors import ConfigError
from iclab.theory import ood as T


def test_population_gd_reproduces_derived_reference_values():
    r4 = T.population_gd(np.zeros((4, 4)), threshold=0.0025)  # note §5.8: alpha*=2.872, beta*=-0.957, 397 steps
    S = r4["S"]
    assert (
        r4["steps"] == 397 and S[0, 0] == pytest.approx(2.872, abs=1e-3) and S[1, 0] == pytest.approx(-0.957, abs=1e-3)
    )
    assert np.allclose(T.beta(S)[~np.eye(4, dtype=bool)], -S[0, 0] / 3, atol=1e-12)
    assert np.abs(T.conservation_residual(S)).max() < 1e-12
    r2 = T.population_gd(np.zeros((2, 2)), threshold=0.0025)  # alpha* = 1.4725 after 120 steps
    assert r2["steps"] == 120 and r2["S"][0, 0] == pytest.approx(1.4725, abs=1e-4)
    assert T.converged_alpha(2, 0.0025) == pytest.approx(math.log(19) / 2)
    assert T.converged_alpha(4, 0.0025) <= S[0, 0] and T.balanced_loss(
        T.converged_alpha(4, 0.0025), 4
    ) == pytest.approx(0.0025)


@pytest.mark.parametrize("N", [None, 7])
def test_gradient_matches_finite_differences(N):
    rng = np.random.default_rng(0)
    S = rng.normal(size=(3, 3))
    p = np.array([0.5, 0.3, 0.2])
    G = np.eye(3) + 0.2 * (np.ones((3, 3)) - np.eye(3))
    grad = T.loss_gradient(S, p, N, 0.5, G)
    fd = np.zeros_like(S)
    for i, j in np.ndindex(3, 3):
        E = np.zeros_like(S)
        E[i, j] = 1e-6
        fd[i, j] = (p @ T.feature_losses(S + E, p, N, 0.5, G) - p @ T.feature_losses(S - E, p, N, 0.5, G)) / 2e-6
    assert np.allclose(grad, fd, atol=1e-8)
    assert np.abs(grad.sum(0)).max() < 1e-14  # conservation: each column of the gradient sums to 0


def test_count_table_is_a_distribution():
    n, w = T.count_table(3, 5, [0.2, 0.3, 0.5])
    assert n.shape == (21, 3) and (n.sum(1) == 5).all() and w.sum() == pytest.approx(1.0)
    assert np.allclose(w @ n, 5 * np.array([0.2, 0.3, 0.5]))


def test_ood_closed_form_equals_mt_s_m():
    rng = np.random.default_rng(1)
    for K in (3, 5):
        M = rng.normal(size=(K, K))
        S = T.trained_logits(2.3, K)
        assert np.allclose(T.ood_logits_closed(2.3, M), T.ood_logits(S, M), atol=1e-12)
        g = rng.uniform(-1, 1, K)  # M = diag(gamma): alpha_u = gamma^2 alpha, beta_u = -g_m g_k alpha/(K-1)
        Su = T.ood_logits(S, np.diag(g))
        assert np.allclose(np.diag(Su), g**2 * 2.3)
        assert np.allclose(Su[0, 1], -g[0] * g[1] * 2.3 / (K - 1))


def test_collapse_is_random_guessing():
    K = 4
    V = np.linalg.qr(np.random.default_rng(2).normal(size=(9, 9)))[0]
    Q = T.trained_q(V[:, :K], 2.9)
    U = V[:, K : 2 * K]  # orthogonal subspace
    assert np.abs(T.logit_matrix(Q, U)).max() < 1e-12
    assert np.allclose(T.random_guess_loss(K), 0.5 * (K - 1) / K)
    rng = np.random.default_rng(3)
    M = np.ones((K, 1)) @ rng.normal(size=(1, K))  # projections along v-bar only: C M = 0 -> S^U = 0
    assert np.abs(T.ood_logits_closed(2.9, M)).max() < 1e-12
    M = rng.normal(size=(K, 1)) @ np.ones((1, K))  # all u_k share one projection a: S^U = (a^T S a) 11^T
    Su = T.ood_logits_closed(2.9, M)
    counts = np.array([[1.0, 2.0, 3.0, 5.0]])
    assert np.allclose(T.feature_attention(Su, counts)[0], (counts.T / 11) @ np.ones((1, K)), atol=1e-12)


@pytest.mark.parametrize("g1", [0.5, 0.8, -0.6])
def test_forgetting_sign_matches_k2_boundary_on_both_sides(g1):
    S = T.population_gd(np.zeros((2, 2)), threshold=0.0025)["S"]
    boundary = -g1  # feature 1 forgotten iff g1 (g1 + g2) < 0
    for g2 in (boundary - 0.15 * np.sign(g1), boundary + 0.15 * np.sign(g1), 0.0, 0.95 * np.sign(g1)):
        g2 = float(np.clip(g2, -1, 1))
        ft = T.finetune(S, np.diag([g1, g2]))
        forgot = ft["source_after"] > ft["source_before"] + 1e-15
        assert (forgot == T.forgets_k2([g1, g2])).all(), (g1, g2, ft["source_after"], ft["source_before"])
        assert np.allclose(ft["dS_U"].sum(0), 0, atol=1e-12)  # conservation during fine-tuning
        assert (np.diag(ft["dS_U"]) > 0).all()  # OOD alpha rises


def test_forgetting_conditions_and_errors():
    assert T.forgets_k2([0.5, -0.9]).tolist() == [True, False]
    assert T.forgets_k2([0.5, -0.2]).tolist() == [False, True]
    pairs = T.forgetting_pairs([0.5, -0.9, 0.3])
    assert pairs.shape == (3, 3) and not pairs.diagonal().any() and pairs[2, 1] and not pairs[0, 1]
    for bad in ([0.5, 1.2], [float("nan"), 0.0], [-1.5, 0.0]):
        with pytest.raises(ConfigError) as exc:
            T.forgets_k2(bad)
        assert exc.value.field == "gammas"
    with pytest.raises(ConfigError):
        T.feature_losses(np.zeros((3, 3)), p=[0.5, 0.6, -0.1])


def test_forgetting_sign_k2_and_measured_change_sign():
    for g in ([0.5, -0.9], [0.5, -0.2], [0.8, 0.5], [-0.6, 0.3], [0.3, -0.7]):
        pred = T.forgetting_sign_k2(*g)
        assert [p == 1 for p in pred] == T.forgets_k2(g).tolist()
    assert T.forgetting_sign_k2(0.5, -0.5) == (0, 0)  # γ1 + γ2 = 0: both on the boundary
    assert T.forgetting_sign_k2(0.0, 0.7) == (0, -1)  # γ1 = 0: feature 1 unchanged, feature 2 improves
    assert T.loss_change_sign(1.0 + 1e-12, 1.0) == 0 and T.loss_change_sign(1.1, 1.0) == 1
    assert T.loss_change_sign(0.9, 1.0) == -1
