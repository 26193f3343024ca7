"""Orthonormal-feature prompts and OOD feature sets (arXiv:2609.36448, docs/papers/ood.md §3.2–3.3)."""

import math

import pytest
import torch

from iclab.data import (
    FeaturePrompts,
    aligned_features,
    feature_basis,
    generator_for,
    in_span_rotation,
    mean_feature,
    overlap_features,
    rotated_features,
    shared_projection_features,
)
from iclab.errors import ConfigError


def _basis(d=11, K=5, seed=0):
    return feature_basis(d, K, generator_for(seed, "basis"))


def test_basis_orthonormal_and_split():
    V, Vp = _basis(11, 5)
    B = torch.cat([V, Vp], 1)
    assert V.shape == (11, 5) and Vp.shape == (11, 6)
    assert torch.allclose(B.T @ B, torch.eye(11, dtype=torch.float64), atol=1e-12)


def test_sample_shapes_labels_and_features():
    V, _ = _basis(7, 3)
    batch = FeaturePrompts(V, n_tokens=5).sample(13, generator_for(1, "s"))
    assert batch.x.shape == (13, 5, 7) and batch.y.shape == (13, 5) and batch.xq.shape == (13, 7)
    assert torch.allclose(batch.x, V.T[batch.feat])
    assert torch.allclose(batch.xq, V.T[batch.qfeat])
    assert torch.allclose(batch.y, torch.einsum("bnd,bd->bn", batch.x, batch.w))
    assert torch.allclose(batch.yq, (batch.xq * batch.w).sum(-1))
    sub = batch.index(torch.tensor([0, 2]))
    assert sub.x.shape == (2, 5, 7) and len(sub) == 2


def test_sampling_is_deterministic_and_follows_probs():
    V, _ = _basis(5, 3)
    data = FeaturePrompts(V, n_tokens=11, probs=(0.5, 0.3, 0.2))
    a, b = data.sample(7, generator_for(3, "x")), data.sample(7, generator_for(3, "x"))
    assert torch.equal(a.feat, b.feat) and torch.equal(a.w, b.w)
    big = data.sample(4000, generator_for(4, "x"))
    freq = torch.bincount(big.feat.flatten(), minlength=3).double() / big.feat.numel()
    assert torch.allclose(freq, torch.tensor([0.5, 0.3, 0.2], dtype=torch.float64), atol=0.01)


def test_exact_counts_and_mean_query():
    V, _ = _basis(7, 3)
    data = FeaturePrompts(V, n_tokens=9, counts="exact", query_vector=mean_feature(V))
    b = data.sample(5, generator_for(0, "e"))
    assert all(torch.bincount(row, minlength=3).tolist() == [3, 3, 3] for row in b.feat)
    assert torch.allclose(b.xq, V.mean(1).expand(5, -1)) and (b.qfeat == -1).all()


def test_ood_constructions_have_the_stated_alignment():
    V, Vp = _basis(11, 5)
    g = [0.5, -0.9, 0.0, 0.95, 1.0]
    U = overlap_features(V, Vp, g)
    assert torch.allclose(V.T @ U, torch.diag(torch.tensor(g, dtype=torch.float64)), atol=1e-12)
    assert torch.allclose(U.T @ U, torch.eye(5, dtype=torch.float64), atol=1e-12)
    Ur = rotated_features(V, Vp, math.pi / 3)
    assert torch.allclose(V.T @ Ur, 0.5 * torch.eye(5, dtype=torch.float64), atol=1e-12)
    M = torch.randn(5, 5, generator=generator_for(0, "M"), dtype=torch.float64)
    M = 0.9 * M / torch.linalg.matrix_norm(M, 2)
    Ua = aligned_features(V, Vp, M)
    assert torch.allclose(V.T @ Ua, M, atol=1e-10) and torch.allclose(
        Ua.T @ Ua, torch.eye(5, dtype=torch.float64), atol=1e-10
    )
    Ui = in_span_rotation(V, 0, 1, math.pi / 6)
    assert torch.allclose(Ui.T @ Ui, torch.eye(5, dtype=torch.float64), atol=1e-12)
    Us = shared_projection_features(V, Vp, 0.6)
    proj = V.T @ Us  # every column the same projection on span V
    assert torch.allclose(proj, proj[:, :1].expand(-1, 5), atol=1e-12)
    FeaturePrompts(Us, orthonormal=False).sample(3, generator_for(0, "u"))


@pytest.mark.parametrize(
    "make, field",
    [
        (lambda V, Vp: FeaturePrompts(torch.randn(3, 5, dtype=torch.float64)), "K"),
        (lambda V, Vp: FeaturePrompts(V * 1.1), "features"),
        (lambda V, Vp: FeaturePrompts(V + 0.1), "features"),
        (lambda V, Vp: overlap_features(V, Vp, [0.5, 1.2, 0.0]), "gamma"),
        (lambda V, Vp: overlap_features(V, Vp, [0.5, -1.01, 0.0]), "gamma"),
        (lambda V, Vp: FeaturePrompts(V, probs=(0.5, 0.6, -0.1)), "probs"),
        (lambda V, Vp: FeaturePrompts(V, n_tokens=10, counts="exact"), "n_tokens"),
        (lambda V, Vp: feature_basis(3, 5), "K"),
        (lambda V, Vp: overlap_features(V, Vp[:, :1], [0.5, 0.5, 0.5]), "d"),
        (lambda V, Vp: aligned_features(V, Vp, 2 * torch.eye(3)), "M"),
    ],
)
def test_invalid_inputs_raise_config_error(make, field):
    V, Vp = _basis(7, 3)
    with pytest.raises(ConfigError) as exc:
        make(V, Vp)
    assert exc.value.field == field
