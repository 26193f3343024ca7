"""adaptive_softmax against a literal NumPy port of the reference JAX code of arXiv:2410.01104 (ICML Fig. 4;
docs/papers/dispersion.md §3.5)."""

import numpy as np
import pytest
import torch

from iclab.attention import PAPER_COEFFS, adaptive_beta, adaptive_softmax, normalise, row_entropy, softmax
from iclab.errors import ConfigError


def _np_softmax(x, axis=-1):
    z = x - x.max(axis=axis, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)


def reference_adaptive_temperature_softmax(logits):
    """Literal port of the paper's JAX code (jax.nn.softmax -> _np_softmax, jnp -> np)."""
    original_probs = _np_softmax(logits, axis=-1)
    poly_fit = np.array([-0.037, 0.481, -2.3, 4.917, -1.791])  # see Figure 6
    entropy = np.sum(
        -original_probs * np.log(original_probs + 1e-9), axis=-1, keepdims=True
    )  # compute the Shannon entropy
    beta = np.where(  # beta = 1 / theta
        entropy > 0.5,  # don't overcorrect low-entropy heads
        np.maximum(np.polyval(poly_fit, entropy), 1.0),  # never increase entropy
        1.0,
    )
    return _np_softmax(logits * beta, axis=-1)


def _logits(shape, seed):
    g = torch.Generator().manual_seed(seed)
    scale = torch.logspace(-1.5, 1.2, shape[-2], dtype=torch.float64)[:, None]  # rows from flat to sharp
    return torch.randn(shape, generator=g, dtype=torch.float64) * scale


@pytest.mark.parametrize("shape", [(3, 5, 7), (2, 11, 13), (1, 40, 600)])
def test_equals_reference_code(shape):
    x = _logits(shape, seed=shape[-1])
    ours = adaptive_softmax(x)
    ref = reference_adaptive_temperature_softmax(x.numpy())
    np.testing.assert_allclose(ours.numpy(), ref, rtol=1e-12, atol=1e-14)
    beta = adaptive_beta(row_entropy(x))
    if shape[-1] >= 13:  # the random rows exercise every branch: gated off, clamped to 1, and active
        H = row_entropy(x)
        assert (H <= 0.5).any() and (beta > 1).any() and ((H > 0.5) & (beta == 1)).any()


def test_registry_and_params_float32():
    x = _logits((5, 7, 11), 3).float()
    np.testing.assert_allclose(
        normalise("adaptive_softmax", x).numpy(), reference_adaptive_temperature_softmax(x.double().numpy()), atol=2e-6
    )
    # tau divides the logits first; a constant polynomial 2 multiplies active rows' logits by 2
    y = _logits((3, 5, 7), 4)
    assert torch.allclose(adaptive_softmax(y, tau=2.0), adaptive_softmax(y / 2.0))
    out = adaptive_softmax(y, coeffs=(2.0,), threshold=-1.0)
    assert torch.allclose(out, softmax(2 * y))


def test_never_increases_entropy():
    x = _logits((4, 50, 97), 5)
    ent = lambda w: -torch.special.xlogy(w, w).sum(-1)  # noqa: E731
    assert (ent(adaptive_softmax(x)) <= ent(softmax(x)) + 1e-12).all()
    assert (ent(adaptive_softmax(x)) < ent(softmax(x)) - 1e-6).any()


def test_low_and_very_high_entropy_rows_unchanged():
    x = _logits((2, 30, 7), 6)
    H = row_entropy(x)[..., 0]
    low = H <= 0.5
    assert low.any()
    assert torch.equal(adaptive_softmax(x)[low], softmax(x)[low])
    # the polynomial is below 1 beyond H ~ 5.945 nats (docs/papers/dispersion.md §4.4): a near-uniform row over 1000 keys
    flat = torch.randn(3, 1000, dtype=torch.float64) * 0.01
    assert (row_entropy(flat) > 5.95).all()
    assert torch.equal(adaptive_softmax(flat), softmax(flat))


def test_mask_and_fully_masked_rows():
    x = _logits((3, 5, 11), 7)
    g = torch.Generator().manual_seed(0)
    mask = torch.rand(3, 5, 11, generator=g) > 0.4
    mask[0, 0] = False
    mask[1, 2] = False
    mask[2, 3, :] = False
    mask[2, 3, 4] = True
    w = adaptive_softmax(x, mask)
    assert torch.isfinite(w).all() and (w[~mask] == 0).all()
    assert (w[0, 0] == 0).all() and (w[1, 2] == 0).all() and w[2, 3, 4] == 1
    for b in range(3):
        for r in range(5):
            if mask[b, r].any():
                ref = reference_adaptive_temperature_softmax(x[b, r][mask[b, r]].numpy())
                np.testing.assert_allclose(w[b, r][mask[b, r]].numpy(), ref, rtol=1e-12, atol=1e-14)
    x.requires_grad_()
    adaptive_softmax(x, mask).pow(2).sum().backward()
    assert torch.isfinite(x.grad).all()


def test_gradient_flows_through_beta_like_reference():
    x = torch.randn(2, 3, 7, generator=torch.Generator().manual_seed(8), dtype=torch.float64).requires_grad_()
    assert (adaptive_beta(row_entropy(x)) > 1).all()  # every row in the active range
    assert torch.autograd.gradcheck(lambda t: adaptive_softmax(t), (x,))
    beta = adaptive_beta(row_entropy(x)).detach()  # detach_beta: the gradient of softmax(beta * x), beta fixed
    assert torch.autograd.gradcheck(lambda t: softmax(t * beta), (x,))
    w = torch.randn(2, 3, 7, dtype=torch.float64)
    g_full = torch.autograd.grad((adaptive_softmax(x) * w).sum(), x)[0]
    g_det = torch.autograd.grad((adaptive_softmax(x, detach_beta=True) * w).sum(), x)[0]
    g_fixed = torch.autograd.grad((softmax(x * beta) * w).sum(), x)[0]
    assert torch.allclose(g_det, g_fixed, atol=1e-14)
    assert (g_full - g_det).abs().max() > 1e-6  # the beta path contributes


def test_exact_entropy_option_close_to_reference():
    x = _logits((2, 20, 300), 9)
    d = (adaptive_softmax(x, eps=0.0) - adaptive_softmax(x)).abs().max()
    assert d < 1e-5


@pytest.mark.parametrize(
    "kw",
    [
        {"coeffs": ()},
        {"coeffs": (1.0, float("nan"))},
        {"coeffs": "abc"},
        {"threshold": float("inf")},
        {"tau": 0.0},
        {"eps": -1.0},
    ],
)
def test_bad_parameters_raise_config_error(kw):
    with pytest.raises(ConfigError):
        adaptive_softmax(torch.zeros(2, 3), **kw)


def test_paper_coefficients_order():
    # highest degree first: poly(1) = sum of coefficients = 1.27 (docs/papers/dispersion.md §4.4)
    assert adaptive_beta(torch.tensor([1.0], dtype=torch.float64)).item() == pytest.approx(sum(PAPER_COEFFS))
    assert adaptive_beta(torch.tensor([4.41], dtype=torch.float64)).item() == pytest.approx(2.42, abs=5e-3)
