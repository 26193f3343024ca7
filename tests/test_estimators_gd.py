"""GD predictors of arXiv:2503.12734 (docs/papers/multihead.md §3.3–3.9, §4.1–4.2): closed-form risks by Monte
Carlo, identities."""

from __future__ import annotations

import pytest
import torch

from iclab.data import GaussianRegression, generator_for
from iclab.errors import ConfigError
from iclab.estimators import (
    DebiasedGD,
    KernelRegression,
    OneStepGD,
    PreconditionedGD,
    debiased_gd,
    kernel_regression,
    one_step_gd,
    preconditioned_gd,
)
from iclab.theory import multihead as th


def _data(d, L, sigma2):
    return GaussianRegression(d, L, cov_w=1.0 / d, sigma=sigma2**0.5)


@pytest.mark.parametrize("debiased", [True, False])
@pytest.mark.parametrize("d,L,sigma2,eta", [(3, 7, 0.3, 0.6), (5, 11, 0.1, 0.879)])
def test_gd_risk_equals_closed_form_by_monte_carlo(debiased, d, L, sigma2, eta):
    b = _data(d, L, sigma2).sample(200_000, generator_for(7, d, L, debiased))
    pred = debiased_gd(b, eta) if debiased else one_step_gd(b, eta)
    err = (pred - b.target) ** 2  # (M,)
    se = float(err.std() / err.numel() ** 0.5)
    assert float(err.mean()) == pytest.approx(float(th.gd_risk(eta, d, L, sigma2, debiased)), abs=4 * se)


def test_debiased_forms_agree_and_wrappers():
    b = _data(3, 7, 0.2).sample(13, generator_for(0, "x"))
    xc, yc, xq = b.x[:, :-1], b.y[:, :-1], b.x[:, -1]
    other = 0.7 / 7 * torch.einsum("bl,bld,bd->b", yc - yc.mean(1, keepdim=True), xc, xq)
    torch.testing.assert_close(debiased_gd(b, 0.7), other)
    torch.testing.assert_close(DebiasedGD(0.7).predict(b), other)
    torch.testing.assert_close(OneStepGD(0.7).predict(b), 0.7 / 7 * torch.einsum("bl,bld,bd->b", yc, xc, xq))
    torch.testing.assert_close(PreconditionedGD(0.7).predict(b), other)


def test_preconditioned_gd_uses_omega_on_the_query():
    b = _data(3, 5, 0.2).sample(9, generator_for(1, "x"))
    om = torch.tensor([[2.0, 0.5, 0.0], [0.1, 1.0, 0.0], [0.0, 0.3, 3.0]], dtype=torch.float64)
    xc = b.x[:, :-1] - b.x[:, :-1].mean(1, keepdim=True)
    want = 0.5 / 5 * torch.einsum("bl,bld,de,be->b", b.y[:, :-1], xc, om, b.x[:, -1])
    torch.testing.assert_close(preconditioned_gd(b, 0.5, om), want)
    with pytest.raises(ConfigError, match="omega"):
        preconditioned_gd(b, 0.5, torch.eye(4))


def test_two_head_kernel_regressor_approaches_debiased_gd_as_gamma_shrinks():
    """Theorem 1 (approximation): |ŷ(θ) − ŷ_gd(η)| = Õ(γ d) on S̄ with μ± = ±η/(2γ)."""
    b = _data(5, 40, 0.1).sample(4000, generator_for(2, "x"))
    eta, gaps = 0.88, []
    for gamma in (0.1, 0.01):
        mu = eta / (2 * gamma)
        gaps.append(float((kernel_regression(b, [gamma, -gamma], [mu, -mu]) - debiased_gd(b, eta)).abs().mean()))
    assert gaps[1] < gaps[0] / 5 and gaps[1] < 0.01


def test_single_head_kernel_is_nadaraya_watson():
    b = _data(3, 7, 0.1).sample(5, generator_for(3, "x"))
    dots = torch.einsum("bld,bd->bl", b.x[:, :-1], b.x[:, -1])
    want = 2.0 * (torch.softmax(0.4 * dots, -1) * b.y[:, :-1]).sum(-1)
    torch.testing.assert_close(KernelRegression((0.4,), (2.0,)).predict(b), want)


def test_bad_inputs():
    b = _data(3, 5, 0.1).sample(2, generator_for(0))
    with pytest.raises(ConfigError, match="eta"):
        debiased_gd(b, float("nan"))
    with pytest.raises(ConfigError, match="mu"):
        kernel_regression(b, [0.1, -0.1], [1.0])
