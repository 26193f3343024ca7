"""Gaussian in-context regression prompts of arXiv:2511.01292 (Eqs. 2–3; docs/papers/temperature.md §3.1)."""

import numpy as np
import pytest
import torch

from iclab.data import GaussianRegression, RegressionBatch, generator_for, mean_along_ones, token_matrix
from iclab.errors import ConfigError


@pytest.mark.parametrize("d,n", [(3, 5), (7, 11), (5, 0)])
def test_shapes_and_target(d, n):
    dist = GaussianRegression(d=d, n=n, mu_x=0.5, mu_w=np.arange(d) / d)
    b = dist.sample(13, generator_for(0, "s"))
    assert b.x.shape == (13, n + 1, d) and b.y.shape == (13, n + 1) and b.w.shape == (13, d)
    assert b.x.dtype == torch.float64 and dist.l == n + 1
    # noiseless: every label, the query's included, is w^T x
    assert torch.allclose(b.y, torch.einsum("bld,bd->bl", b.x, b.w), atol=1e-12)
    assert torch.equal(b.target, b.y[:, -1]) and torch.equal(b.query_x, b.x[:, -1])
    assert b.context_x.shape == (13, n, d) and b.context_y.shape == (13, n)


def test_deterministic_from_generator():
    dist = GaussianRegression(d=5, n=7, sigma=0.3)
    a, b = dist.sample(4, generator_for(1, "k", 2)), dist.sample(4, generator_for(1, "k", 2))
    c = dist.sample(4, generator_for(1, "k", 3))
    assert torch.equal(a.x, b.x) and torch.equal(a.y, b.y) and not torch.equal(a.x, c.x)


def test_moments_match_a_general_distribution():
    d = 3
    rng = np.random.default_rng(0)
    q = np.linalg.qr(rng.normal(size=(d, d)))[0]
    cov_x = q @ np.diag([0.5, 1.0, 3.0]) @ q.T
    mu_x, mu_w = np.array([1.0, -2.0, 0.5]), np.array([0.3, 0.0, -0.7])
    dist = GaussianRegression(d=d, n=4, mu_x=mu_x, cov_x=cov_x, mu_w=mu_w, cov_w=[0.2, 0.5, 2.0], sigma=0.7)
    b = dist.sample(60_000, generator_for(2, "m"))
    x = b.x.reshape(-1, d).numpy()
    assert np.allclose(x.mean(0), mu_x, atol=0.03)
    assert np.allclose(np.cov(x.T), cov_x, atol=0.06)
    assert np.allclose(b.w.mean(0).numpy(), mu_w, atol=0.03)
    assert np.allclose(np.cov(b.w.numpy().T), np.diag([0.2, 0.5, 2.0]), atol=0.05)
    noise = b.y - torch.einsum("bld,bd->bl", b.x, b.w)
    assert abs(float(noise.std()) - 0.7) < 0.01


def test_token_matrix_layout():
    b = GaussianRegression(d=3, n=4, sigma=1.0).sample(5, generator_for(0, "z"))
    y_before = b.y.clone()
    Z = token_matrix(b)
    assert Z.shape == (5, 4, 5)  # (B, d+1, l)
    assert torch.equal(Z[:, :3, :], b.x.transpose(1, 2))
    assert torch.equal(Z[:, 3, :-1], b.y[:, :-1]) and torch.all(Z[:, 3, -1] == 0)
    assert torch.equal(b.y, y_before)  # the target is not overwritten


def test_shift_constructors_return_new_distributions():
    base = GaussianRegression(d=4, n=9, sigma=0.1)
    assert base.with_input_mean(1.0).moments()["mu_x"].tolist() == [1.0] * 4
    assert np.allclose(base.with_input_cov(2.0).moments()["cov_x"], 2 * np.eye(4))
    task = base.with_task(mu_w=0.5, cov_w=3.0).moments()
    assert np.allclose(task["mu_w"], 0.5) and np.allclose(task["cov_w"], 3 * np.eye(4))
    assert base.with_noise(2.0).sigma == 2.0 and base.with_n(19).l == 20
    assert base.sigma == 0.1 and base.n == 9 and base.mu_x is None  # unchanged


def test_batch_to_and_index():
    b = GaussianRegression(d=3, n=2).sample(7, generator_for(0, "i"))
    sub = b.index(torch.tensor([0, 5]))
    assert isinstance(sub, RegressionBatch) and sub.x.shape == (2, 3, 3) and torch.equal(sub.w[1], b.w[5])
    assert b.to("cpu").x.device.type == "cpu"


def test_float32_dtype():
    b = GaussianRegression(d=3, n=2, dtype=torch.float32).sample(4, generator_for(0, "f"))
    assert b.x.dtype == b.y.dtype == b.w.dtype == torch.float32


@pytest.mark.parametrize(
    "kwargs,field",
    [
        ({"cov_x": np.array([[1.0, 2.0], [2.0, 1.0]])}, "cov_x"),  # indefinite
        ({"cov_w": [1.0, -1.0]}, "cov_w"),  # negative diagonal
        ({"cov_x": np.array([[1.0, 0.5], [0.0, 1.0]])}, "cov_x"),  # not symmetric
        ({"cov_x": np.eye(3)}, "cov_x"),  # dimension mismatch
        ({"mu_w": [1.0, 2.0, 3.0]}, "mu_w"),  # dimension mismatch
        ({"sigma": -0.1}, "sigma"),
        ({"d": 0}, "d"),
    ],
)
def test_bad_input_names_the_field(kwargs, field):
    args = {"d": 2, "n": 3, **kwargs}
    with pytest.raises(ConfigError) as exc:
        GaussianRegression(**args)
    assert exc.value.field == field


@pytest.mark.parametrize("d,norm", [(3, 1.0), (7, 2.5), (11, 0.3)])
def test_mean_along_ones(d, norm):
    """A mean of the given norm along (1, …, 1)/√d; none for norm 0."""
    mu = mean_along_ones(d, norm)
    assert mu.shape == (d,) and np.linalg.norm(mu) == pytest.approx(norm, rel=1e-12)
    assert np.allclose(mu, mu[0]) and mu[0] > 0
    assert mean_along_ones(d, 0.0) is None


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize(
    "cov_x, cov_w",
    [(None, None), (2.5, 0.2), ("diag", "diag"), ("dense", 0.2), (None, "dense")],
)
def test_a_diagonal_covariance_draws_the_same_numbers_as_the_matrix_product(dtype, cov_x, cov_w):
    """``sample`` scales the coordinates where a covariance factor is diagonal (isotropic prompts) instead of the
    matrix product g @ Lᵀ: bit for bit the prompts of the product, written here from the generator's normals,
    for scalar, diagonal and dense covariances in both dtypes."""
    d, n, batch = 5, 7, 64
    rng = np.random.default_rng(3)
    a = rng.normal(size=(d, d))

    def cov(kind):
        return {"diag": np.diag(rng.uniform(0.3, 2.0, d)), "dense": a @ a.T + d * np.eye(d)}.get(kind, kind)

    task = GaussianRegression(d, n, mu_x=0.3, cov_x=cov(cov_x), cov_w=cov(cov_w), sigma=0.4, dtype=dtype)
    got = task.sample(batch, torch.Generator().manual_seed(11))
    m = task.moments()
    lx, lw = (torch.from_numpy(np.linalg.cholesky(m[k])).to(dtype) for k in ("cov_x", "cov_w"))
    g = torch.Generator().manual_seed(11)
    gx = torch.randn(batch, n + 1, d, generator=g, dtype=dtype)  # (B, l, d)
    gw = torch.randn(batch, d, generator=g, dtype=dtype)  # (B, d)
    eps = torch.randn(batch, n + 1, generator=g, dtype=dtype)  # (B, l)
    x = torch.from_numpy(m["mu_x"]).to(dtype) + gx @ lx.T  # (B, l, d)
    w = torch.from_numpy(m["mu_w"]).to(dtype) + gw @ lw.T  # (B, d)
    y = torch.einsum("bld,bd->bl", x, w) + 0.4 * eps  # (B, l)
    assert torch.equal(got.x, x) and torch.equal(got.w, w) and torch.equal(got.y, y)
