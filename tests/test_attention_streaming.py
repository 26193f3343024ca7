"""Streaming two-pass adaptive attention (arXiv:2410.01104; docs/papers/dispersion.md §4.5–4.6) equals the dense
adaptive softmax, forward and backward."""

import pytest
import torch

from iclab.attention import _streaming, adaptive_attention, adaptive_beta, adaptive_softmax, row_entropy
from iclab.errors import ConfigError

B, H, NQ, D, DV = 2, 3, 5, 11, 7


def _qkv(n, seed, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    q = (2 * torch.randn(B, H, NQ, D, generator=g, dtype=dtype)).requires_grad_()
    k = (2 * torch.randn(B, H, n, D, generator=g, dtype=dtype)).requires_grad_()
    v = torch.randn(B, H, n, DV, generator=g, dtype=dtype).requires_grad_()
    return q, k, v


def _mask(n, seed):
    g = torch.Generator().manual_seed(seed + 1)
    m = torch.rand(B, 1, NQ, n, generator=g) > 0.3
    m[0, 0, 1, :] = False  # a fully masked row
    return m


def _dense(q, k, v, mask=None, **kw):
    return adaptive_softmax(q @ k.transpose(-1, -2) / D**0.5, mask, eps=0.0, **kw) @ v


# the fused CPU pass 1 applies only without a mask; with a mask the chunk loop always runs
@pytest.mark.parametrize("masked,fused", [(False, True), (False, False), (True, False)])
@pytest.mark.parametrize("chunk", [1, 3, 64])
@pytest.mark.parametrize("n", [1, 7, 1000])
def test_streaming_equals_dense_forward_backward(n, chunk, masked, fused, monkeypatch):
    monkeypatch.setattr(_streaming, "FUSED_PASS1", fused)
    q, k, v = _qkv(n, seed=n + chunk)
    mask = _mask(n, n) if masked else None
    out = adaptive_attention(q, k, v, mask, chunk=chunk)
    ref = _dense(q, k, v, mask)
    assert out.shape == (B, H, NQ, DV)
    assert torch.allclose(out, ref, atol=1e-12, rtol=1e-10)
    if n >= 7:  # the temperature is really active on some rows
        scores = q @ k.transpose(-1, -2) / D**0.5
        assert (adaptive_beta(row_entropy(scores, mask)) > 1).any()
    g = torch.randn_like(out)
    got = torch.autograd.grad(out, (q, k, v), g)
    want = torch.autograd.grad(ref, (q, k, v), g)
    for a, b in zip(got, want):
        assert torch.isfinite(a).all()
        assert torch.allclose(a, b, atol=1e-11, rtol=1e-9)
    if masked:
        assert (out[0, :, 1] == 0).all()


def test_close_to_reference_entropy_and_float32():
    q, k, v = _qkv(300, 3)
    ref = adaptive_softmax(q @ k.transpose(-1, -2) / D**0.5) @ v  # reference eps = 1e-9
    assert (adaptive_attention(q, k, v, chunk=64) - ref).abs().max() < 1e-5
    q32, k32, v32 = (t.detach().float() for t in (q, k, v))
    assert (adaptive_attention(q32, k32, v32, chunk=37) - _dense(q, k, v).float()).abs().max() < 1e-4


def test_causal_and_key_padding_mask():
    q, k, v = _qkv(9, 4)
    q2 = q[:, :, :5]
    tri = torch.ones(5, 9, dtype=torch.bool).tril(diagonal=9 - 5)
    out = adaptive_attention(q2, k, v, causal=True, chunk=2)
    ref = _dense(q2, k, v, tri)
    assert torch.allclose(out, ref, atol=1e-12)
    for a, b in zip(torch.autograd.grad(out.sum(), (q2, k, v)), torch.autograd.grad(ref.sum(), (q2, k, v))):
        assert torch.allclose(a, b, atol=1e-11)
    sq = torch.ones(5, 5, dtype=torch.bool).tril()  # square causal: the sdpa path; and causal + explicit mask
    assert torch.allclose(
        adaptive_attention(q2, k[:, :, :5], v[:, :, :5], causal=True),
        _dense(q2, k[:, :, :5], v[:, :, :5], sq),
        atol=1e-12,
    )
    pm = torch.rand(5, 9, generator=torch.Generator().manual_seed(2)) > 0.3
    assert torch.allclose(
        adaptive_attention(q2, k, v, pm, causal=True, chunk=3), _dense(q2, k, v, pm & tri), atol=1e-12
    )
    pad = torch.ones(B, 1, 1, 9, dtype=torch.bool)
    pad[1, ..., 6:] = False
    assert torch.allclose(adaptive_attention(q2, k, v, pad, chunk=4), _dense(q2, k, v, pad), atol=1e-12)


@pytest.mark.parametrize("fused", [True, False])
def test_sliding_window_mask_runs_on_key_spans_and_equals_dense(fused, monkeypatch):
    """A banded mask (Gemma 3's local layers) runs block by block on each block's range of keys: same result."""
    monkeypatch.setattr(_streaming, "SPAN_BLOCK", 4)
    monkeypatch.setattr(_streaming, "FUSED_PASS1", fused)
    n, window = 40, 6
    g = torch.Generator().manual_seed(7)
    q, k, v = ((2 * torch.randn(B, H, n, d, generator=g, dtype=torch.float64)).requires_grad_() for d in (D, D, DV))
    i = torch.arange(n)
    band = (i[:, None] >= i[None, :]) & (i[:, None] - i[None, :] < window)  # (n, n) causal sliding window
    mask = band.expand(B, 1, n, n).clone()
    mask[1, 0, 8:12, :] = False  # a fully masked block of rows in one batch entry
    spans = _streaming._key_spans(mask, n, n)
    assert spans is not None and max(hi - lo for _, _, lo, hi in spans) <= 4 + window - 1
    out = adaptive_attention(q, k, v, mask, chunk=3)
    ref = _dense(q, k, v, mask)
    assert torch.allclose(out, ref, atol=1e-12, rtol=1e-10)
    assert (out[1, :, 8:12] == 0).all()
    g_out = torch.randn_like(out)
    for a, b in zip(torch.autograd.grad(out, (q, k, v), g_out), torch.autograd.grad(ref, (q, k, v), g_out)):
        assert torch.allclose(a, b, atol=1e-11, rtol=1e-9)
    tri, full = torch.ones(n, n, dtype=torch.bool).tril(), torch.ones(n, n, dtype=torch.bool)
    assert _streaming._key_spans(tri, n, n) is not None  # causal + a mask: materialised, also run on key spans
    assert torch.allclose(adaptive_attention(q, k, v, full, causal=True, chunk=5), _dense(q, k, v, tri), atol=1e-12)


def test_detach_beta_and_gradient_through_beta():
    q, k, v = _qkv(50, 5)
    out_d = adaptive_attention(q, k, v, chunk=7, detach_beta=True)
    ref_d = _dense(q, k, v, detach_beta=True)
    gd = torch.autograd.grad(out_d.sum(), q)[0]
    assert torch.allclose(gd, torch.autograd.grad(ref_d.sum(), q)[0], atol=1e-11)
    gf = torch.autograd.grad(adaptive_attention(q, k, v, chunk=7).sum(), q)[0]
    assert (gf - gd).abs().max() > 1e-6


def test_gradcheck_small():
    q, k, v = _qkv(6, 6)
    q, k, v = (
        t.detach()[:1, :1, :2].clone().requires_grad_()
        if t.shape[-2] == NQ
        else t.detach()[:1, :1].clone().requires_grad_()
        for t in (q, k, v)
    )
    assert torch.autograd.gradcheck(lambda a, b, c: adaptive_attention(a, b, c, chunk=4), (q, k, v))


def test_bad_input_raises_config_error():
    q, k, v = _qkv(7, 7)
    with pytest.raises(ConfigError):
        adaptive_attention(q, k[..., :5], v)
    with pytest.raises(ConfigError):
        adaptive_attention(q, k, v, chunk=0)
    with pytest.raises(ConfigError):
        adaptive_attention(q, k, v, mask=torch.ones(3, 2, dtype=torch.bool))
