"""H-head regression attention of arXiv:2503.12734 (docs/papers/multihead.md §3.2): parity with the explicit
formula, patterns after brief training."""

from __future__ import annotations

import pytest
import torch

from iclab.data import GaussianRegression, generator_for
from iclab.errors import ConfigError
from iclab.estimators import kernel_regression
from iclab.models import (
    MultiHeadRegressionAttention,
    corr_with,
    distance_to_debiased_gd,
    head_parameters,
    kq_block,
    pattern_diagnostics,
    regression_mse,
)
from iclab.train import TrainConfig, train


def _batch(d=3, n=7, B=11, seed=0, sigma=0.3):
    return GaussianRegression(d, n, cov_w=1.0 / d, sigma=sigma).sample(B, generator_for(seed, "t"))


def _explicit(model, x, y, attention="softmax"):
    """The query column of the paper's transformer, head by head with full KQ/OV matrices (no tricks)."""
    B, l, d = x.shape
    n = l - 1
    out = torch.zeros(B, dtype=x.dtype)
    for b in range(B):
        Z = torch.cat([x[b, :-1], y[b, :-1, None]], 1).T  # (D, n)
        zq = torch.cat([x[b, -1], torch.zeros(1, dtype=x.dtype)])  # (D,)
        for h in range(model.n_heads):
            s = model.scale * (Z.T @ model.kq[h] @ zq)  # (n,)
            w = torch.softmax(s, 0) if attention == "softmax" else s / n
            out[b] += model.ov[h, 0] @ Z @ w
    return out


@pytest.mark.parametrize("attention", ["softmax", "linear"])
def test_forward_equals_explicit_kq_ov_formula_odd_sizes(attention):
    torch.manual_seed(0)
    m = MultiHeadRegressionAttention(3, n_heads=5, attention=attention, dtype=torch.float64)
    b = _batch(d=3, n=7, B=11)
    got = m(b.x, b.y)
    assert got.shape == (11,)
    torch.testing.assert_close(got, _explicit(m, b.x, b.y, attention), rtol=1e-10, atol=1e-12)


def test_query_label_is_never_read_and_context_order_does_not_matter():
    torch.manual_seed(1)
    m = MultiHeadRegressionAttention(5, n_heads=3, dtype=torch.float64)
    b = _batch(d=5, n=11, B=7)
    y2 = b.y.clone()
    y2[:, -1] = 1e6
    torch.testing.assert_close(m(b.x, b.y), m(b.x, y2))
    perm = torch.randperm(11).tolist() + [11]
    torch.testing.assert_close(m(b.x, b.y), m(b.x[:, perm], b.y[:, perm]))


def test_emergent_pattern_model_equals_sum_of_kernel_regressors():
    b = _batch(d=5, n=13, B=17)
    omega, mu = [0.13, -0.13, 0.05], [3.45, -3.9, 0.45]
    m = MultiHeadRegressionAttention.from_omega_mu(5, omega, mu, dtype=torch.float64)
    torch.testing.assert_close(m(b.x, b.y), kernel_regression(b, omega, mu), rtol=1e-10, atol=1e-12)
    diag = pattern_diagnostics(m)
    assert diag["kq_diag_mass"] == pytest.approx(1.0) and diag["ov_last_mass"] == pytest.approx(1.0)
    assert diag["omega"] == pytest.approx(omega) and diag["mu"] == pytest.approx(mu)
    assert diag["eta_eff"] == pytest.approx(sum(o * u for o, u in zip(omega, mu)))
    assert diag["ov_zero_sum"] == pytest.approx(0.0, abs=1e-12) and diag["sign_match"] == 1.0


def test_linear_length_freezes_the_normalisation():
    torch.manual_seed(2)
    m = MultiHeadRegressionAttention(3, 2, "linear", linear_length=5, dtype=torch.float64)
    free = MultiHeadRegressionAttention(3, 2, "linear", dtype=torch.float64)
    free.load_state_dict(m.state_dict())
    b = _batch(d=3, n=11, B=5)
    torch.testing.assert_close(m(b.x, b.y), free(b.x, b.y) * 11 / 5)


def test_multi_output_shapes_and_single_head():
    torch.manual_seed(3)
    m = MultiHeadRegressionAttention(6, n_heads=3, n_out=2)
    x, y = torch.randn(4, 9, 6), torch.randn(4, 9, 2)
    assert m(x, y).shape == (4, 2)
    assert head_parameters(m)["mu_mat"].shape == (3, 2) and head_parameters(m)["omega_vec"].shape == (3, 6)
    assert MultiHeadRegressionAttention(3, 1)(torch.randn(2, 5, 3), torch.randn(2, 5)).shape == (2,)


@pytest.mark.parametrize("kw", [{"attention": "softermax"}, {"n_heads": 0}, {"d": 0}, {"linear_length": 0}])
def test_bad_arguments_give_config_error(kw):
    with pytest.raises(ConfigError):
        MultiHeadRegressionAttention(**{"d": 3, **kw})


def test_kq_block_and_corr():
    m = MultiHeadRegressionAttention.from_omega_mu(3, [0.2, -0.2], [1.0, -1.0], dtype=torch.float64)
    blk = kq_block(m)
    torch.testing.assert_close(torch.as_tensor(blk), 0.2 * torch.eye(3, dtype=torch.float64))
    assert corr_with(blk, torch.eye(3).numpy()) == pytest.approx(1.0)


@pytest.mark.slow
def test_two_heads_trained_briefly_move_toward_diagonal_kq_and_zero_sum_ov():
    torch.manual_seed(0)
    data = GaussianRegression(5, 20, cov_w=0.2, sigma=0.1**0.5, dtype=torch.float32)
    m = MultiHeadRegressionAttention(5, n_heads=2)
    before = pattern_diagnostics(m)
    # Seeded: from some initialisations a head stays dummy for longer, a single-head plateau
    # (docs/papers/multihead.md §6.8).
    # Measured with this sampler: seeds 0, 2, 3 reach the pattern by 3000 steps (2 and 3 already by 1500);
    # seed 1 is still on the plateau (both heads positive) at 3000.
    train(m, data, regression_mse, TrainConfig(steps=3000, batch_size=128, lr=3e-3, seed=0, log_every=500))
    after = pattern_diagnostics(m)
    assert after["kq_diag_mass"] > 0.95 > before["kq_diag_mass"]
    assert after["ov_last_mass"] > 0.95 > before["ov_last_mass"]
    assert after["ov_zero_sum"] < 0.1 and after["sign_match"] == 1.0
    assert after["n_plus"] == 1 and after["n_minus"] == 1
    held_out = data.sample(2000, generator_for(0, "held-out"))
    assert distance_to_debiased_gd(m, held_out)["rel_fit"] < 0.05
