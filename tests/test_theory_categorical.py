"""Functional GD (spec §4.1) and the stationarity check of Theorems 1-2 (spec §4.2)."""

import pytest
import torch

from iclab.data import CategoricalICL, generator_for
from iclab.models import FunctionalGDModel, TrainedCategoricalTransformer
from iclab.theory.categorical import expected_embedding, functional_gd, gd_pattern, kernel_weights, stationarity_check


def test_expected_embedding_limits():
    W = torch.randn(3, 5, dtype=torch.float64)
    torch.testing.assert_close(expected_embedding(torch.zeros(3, dtype=torch.float64), W), W.mean(1))
    f = 1e4 * W[:, 2] / W[:, 2].norm()  # far along w_2 => picks the class with largest w_c . w_2 direction
    c = int((W.t() @ f).argmax())
    torch.testing.assert_close(expected_embedding(f, W), W[:, c])


def test_one_step_is_the_gradient_of_the_context_nll():
    """f_1(x_j) - f_0(x_j) = -alpha * N * grad_{f(x_i)} loss, kernel-weighted (spec §4.1), checked by autograd."""
    B, N, d, dp, C = 2, 7, 3, 3, 5
    x = torch.randn(B, N, d, dtype=torch.float64)
    y = torch.randint(C, (B, N))
    W = torch.randn(dp, C, dtype=torch.float64)
    f0 = torch.zeros(B, N, dp, dtype=torch.float64, requires_grad=True)
    loss = torch.nn.functional.cross_entropy((f0 @ W).reshape(-1, C), y.reshape(-1), reduction="sum") / N
    (g,) = torch.autograd.grad(loss, f0)  # (B, N, d'): = -(w_y - E[w_e]) / N
    alpha = torch.tensor([[0.3, -1.1, 2.0]], dtype=torch.float64)
    fc, fq = functional_gd(x, y, x[:, :2], W, alpha, "linear", 1.0)
    K = kernel_weights(x, x, "linear", 1.0)  # (B, N, N) = x_i.x_j / N
    expected = (K @ (-g * N)) * alpha[0]
    torch.testing.assert_close(fc[1], expected)
    torch.testing.assert_close(fq[1], expected[:, :2])


def test_kernel_weights_rows():
    x = torch.randn(2, 5, 3, dtype=torch.float64)
    torch.testing.assert_close(kernel_weights(x, x, "softmax", 1.3, d_token=12).sum(-1), torch.ones(2, 5).double())
    r = kernel_weights(x, x, "rbf", 0.7)
    torch.testing.assert_close(torch.diagonal(r, dim1=1, dim2=2), torch.full((2, 5), 0.2, dtype=torch.float64))
    with pytest.raises(ValueError):
        kernel_weights(x, x, "cosine", 1.0)


def test_pattern_groups_partition():
    pat = gd_pattern(3, 2)
    assert pat["q1"]["free"].sum() == 3 and pat["v1"]["free"].sum() == 4
    assert not (pat["q1"]["free"] & pat["q1"]["x_coupling"]).any()
    assert pat["q1"]["x_coupling"].sum() == 9 * 9 - 3 * 3 - 6 * 6 + 3 * 3 - 3  # x-row xor x-col, + x off-diag
    assert pat["kc"]["x_coupling"].sum() == 0 and pat["qc"]["x_coupling"].sum() == 3 * 2


@pytest.mark.slow
@pytest.mark.parametrize("kernel,covariate", [("softmax", "gaussian"), ("rbf", "uniform")])
def test_off_pattern_gradients_vanish_at_gd_configuration(kernel, covariate):
    """x-coupling entries have zero expected gradient (z ~ 1); free / other entries do not (z >> 1)."""
    data = CategoricalICL(n_classes=5, d=3, d_embed=3, n_context=7, n_clusters=2, covariate=covariate, scale=3.0)
    gd = FunctionalGDModel(3, 5, 3, n_blocks=2, kernel=kernel, dtype=torch.float64,
                           generator=torch.Generator().manual_seed(1))
    r = stationarity_check(data, gd, n_prompts=4096, n_chunks=16, seed=0)
    assert r["x_coupling"]["z"] < 3, r
    assert r["x_coupling"]["rms_mean"] < 0.1 * r["free"]["rms_mean"], r
    assert r["other"]["z"] > 3 and r["free"]["z"] > 3, r
    # control: head 1's value also writes x into f (breaks the reflection symmetry): x-coupling gradients appear
    tf = TrainedCategoricalTransformer.from_gd(gd)
    with torch.no_grad():
        tf.blocks[0]["v1"][:3, 9:12] += 0.5 * torch.eye(3, dtype=torch.float64)
    r_broken = stationarity_check(data, tf, n_prompts=4096, n_chunks=16, seed=0)
    assert r_broken["x_coupling"]["z"] > 2 * r["x_coupling"]["z"] and r_broken["x_coupling"]["z"] > 3, r_broken
