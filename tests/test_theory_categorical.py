"""Functional GD of arXiv:2405.17248 (docs/papers/categorical.md §3.2, §4.1) in NumPy: the expected embedding,
the kernel weights, and one step = the kernel-weighted negative gradient of the context NLL."""

import numpy as np
import pytest
import torch

from iclab.theory.categorical import expected_embedding, functional_gd, kernel_weights


def test_theory_returns_numpy():
    W = np.random.default_rng(0).normal(size=(3, 5))
    assert isinstance(expected_embedding(np.zeros(3), W), np.ndarray)
    x = np.zeros((1, 2, 3))
    fc, fq = functional_gd(x, np.zeros((1, 2), dtype=int), x[:, :1], W, np.ones((1, 3)), "rbf")
    assert all(isinstance(f, np.ndarray) for f in fc + fq)


def test_expected_embedding_limits():
    W = torch.randn(3, 5, dtype=torch.float64)
    torch.testing.assert_close(torch.from_numpy(expected_embedding(torch.zeros(3, dtype=torch.float64), W)), W.mean(1))
    f = 1e4 * W[:, 2] / W[:, 2].norm()  # far along w_2 => picks the class with largest w_c . w_2 direction
    c = int((W.t() @ f).argmax())
    torch.testing.assert_close(torch.from_numpy(expected_embedding(f, W)), W[:, c])


def test_one_step_is_the_gradient_of_the_context_nll():
    """f_1(x_j) - f_0(x_j) = -alpha * N * grad_{f(x_i)} loss, kernel-weighted (docs/papers/categorical.md §4.1),
    checked by autograd."""
    B, N, d, dp, C = 2, 7, 3, 3, 5
    x = torch.randn(B, N, d, dtype=torch.float64)
    y = torch.randint(C, (B, N))
    W = torch.randn(dp, C, dtype=torch.float64)
    f0 = torch.zeros(B, N, dp, dtype=torch.float64, requires_grad=True)
    loss = torch.nn.functional.cross_entropy((f0 @ W).reshape(-1, C), y.reshape(-1), reduction="sum") / N
    (g,) = torch.autograd.grad(loss, f0)  # (B, N, d'): = -(w_y - E[w_e]) / N
    alpha = torch.tensor([[0.3, -1.1, 2.0]], dtype=torch.float64)
    fc, fq = functional_gd(x, y, x[:, :2], W, alpha, "linear", 1.0)
    K = torch.from_numpy(kernel_weights(x, x, "linear", 1.0))  # (B, N, N) = x_i.x_j / N
    expected = (K @ (-g * N)) * alpha[0]
    torch.testing.assert_close(torch.from_numpy(fc[1]), expected)
    torch.testing.assert_close(torch.from_numpy(fq[1]), expected[:, :2])


def test_kernel_weights_rows():
    x = torch.randn(2, 5, 3, dtype=torch.float64)
    torch.testing.assert_close(
        torch.from_numpy(kernel_weights(x, x, "softmax", 1.3, d_token=12).sum(-1)), torch.ones(2, 5).double()
    )
    r = torch.from_numpy(kernel_weights(x, x, "rbf", 0.7))
    torch.testing.assert_close(torch.diagonal(r, dim1=1, dim2=2), torch.full((2, 5), 0.2, dtype=torch.float64))
    with pytest.raises(ValueError):
        kernel_weights(x, x, "cosine", 1.0)
