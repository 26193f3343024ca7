"""Merged-Q one-layer attention (arXiv:2609.36448, docs/papers/ood.md §3.1): training invariants and OOD
attention against theory."""

import numpy as np
import pytest
import torch

from iclab.data import (
    FeaturePrompts,
    aligned_features,
    feature_basis,
    generator_for,
    mean_feature,
    overlap_features,
    shared_projection_features,
)
from iclab.errors import ConfigError
from iclab.models import FeatureTransformer, MergedQAttention, MergedQStack, feature_prompt_loss, prompt_mse_loss
from iclab.theory import ood as T
from iclab.train import TrainConfig, train


def _setup(d=7, K=3, seed=0):
    return feature_basis(d, K, generator_for(seed, "basis"))


def _model_with_q(Q):
    m = MergedQAttention(Q.shape[0])
    with torch.no_grad():
        m.Q.copy_(torch.as_tensor(Q))
    return m


def _feature_mass(attn, feat, K):
    """A_m = sum of the attention on tokens of feature m: (B, N), (B, N) -> (B, K)."""
    return torch.zeros(attn.shape[0], K, dtype=attn.dtype).scatter_add_(1, feat, attn)


def test_forward_is_softmax_weighted_label_average():
    V, _ = _setup(5, 3)
    m = MergedQAttention(5, init="normal", generator=generator_for(0, "q"))
    b = FeaturePrompts(V, n_tokens=7).sample(11, generator_for(0, "b"))
    s = torch.einsum("bnd,de,be->bn", b.x, m.Q, b.xq)
    assert torch.allclose(m(b.x, b.y, b.xq), (torch.softmax(s, -1) * b.y).sum(-1))
    for att in ("approx_softmax", "linear"):
        assert MergedQAttention(5, attention=att)(b.x, b.y, b.xq).shape == (11,)
    with pytest.raises(ConfigError):
        MergedQAttention(5, attention="nope")


def test_w_averaged_loss_matches_monte_carlo_and_finite_n_theory():
    V, _ = _setup(7, 3)
    S = np.array([[1.0, -0.3, 0.2], [-0.4, 0.8, -0.5], [0.1, -0.2, 1.3]])
    m = _model_with_q(V.numpy() @ S @ V.numpy().T)
    data = FeaturePrompts(V, n_tokens=5, probs=(0.5, 0.3, 0.2))
    b = data.sample(60000, generator_for(1, "mc"))
    with torch.no_grad():
        loss, groups = feature_prompt_loss(m, b, 0.5, 3)
        mc, _ = prompt_mse_loss(m, b, 0.5, 3)
    theory = T.feature_losses(S, [0.5, 0.3, 0.2], N=5)
    assert np.allclose([groups[str(k)] for k in range(3)], theory, rtol=0.03)
    assert float(mc) == pytest.approx(float(loss), rel=0.03)


def test_sgd_training_keeps_conservation_law_and_span():
    V, _ = _setup(7, 3)
    m = MergedQAttention(7)
    Vn = V.numpy()
    probe = {
        "S": lambda mod: {
            "colsum": float(np.abs(T.conservation_residual(T.logit_matrix(mod.Q.detach(), Vn))).max()),
            "offspan": T.off_span_norm(mod.Q.detach(), Vn),
        }
    }
    res = train(
        m,
        FeaturePrompts(V, n_tokens=9, probs=(0.5, 0.3, 0.2)),
        lambda mod, b: feature_prompt_loss(mod, b, 0.5, 3),
        TrainConfig(steps=60, batch_size=64, lr=1.0, optimizer="sgd", log_every=5),
        probes=probe,
    )
    S = T.logit_matrix(m.Q.detach(), Vn)
    assert np.diag(S).min() > 0.3  # it learned something
    assert max(r["S/colsum"] for r in res.history) < 1e-12
    assert max(r["S/offspan"] for r in res.history) < 1e-12


def test_ood_attention_matches_closed_form_on_constructed_u():
    V, Vp = _setup(11, 5)
    alpha_star = 2.4
    m = _model_with_q(T.trained_q(V.numpy(), alpha_star))
    M = torch.randn(5, 5, generator=generator_for(2, "M"), dtype=torch.float64)
    M = 0.95 * M / torch.linalg.matrix_norm(M, 2)
    U = aligned_features(V, Vp, M)
    b = FeaturePrompts(U, n_tokens=7).sample(300, generator_for(3, "u"))
    Su = T.ood_logits_closed(alpha_star, M.numpy())
    assert np.allclose(T.logit_matrix(m.Q.detach(), U.numpy()), Su, atol=1e-12)
    with torch.no_grad():
        A = _feature_mass(m.attn(b.x, b.xq), b.feat, 5).numpy()  # (B, K)
    counts = torch.stack([torch.bincount(r, minlength=5) for r in b.feat]).double().numpy()
    theory = T.feature_attention(Su, counts)  # (B, K_token, K_query)
    assert np.allclose(A, theory[np.arange(300), :, b.qfeat.numpy()], atol=1e-12)


def test_collapse_cases_give_exactly_uniform_attention():
    V, Vp = _setup(9, 3)
    m = _model_with_q(T.trained_q(V.numpy(), 3.1))
    cases = [
        FeaturePrompts(Vp[:, :3], n_tokens=9, counts="exact"),  # orthogonal subspace
        FeaturePrompts(shared_projection_features(V, Vp, 0.7), n_tokens=9, counts="exact", orthonormal=False),
        FeaturePrompts(V, n_tokens=9, counts="exact", query_vector=mean_feature(V)),
    ]  # query at v-bar
    for data in cases:
        b = data.sample(50, generator_for(4, "c"))
        with torch.no_grad():
            a = m.attn(b.x, b.xq)
        assert torch.allclose(a, torch.full_like(a, 1 / 9), atol=1e-13)
        assert torch.allclose(_feature_mass(a, b.feat, 3), torch.full((50, 3), 1 / 3, dtype=torch.float64), atol=1e-13)


def test_sgd_finetuning_forgetting_sign_follows_boundary():
    V, Vp = _setup(5, 2)
    Vn = V.numpy()
    S0 = T.population_gd(np.zeros((2, 2)), N=12, threshold=0.0025)["S"]
    for g2, expect in ((-0.9, [True, False]), (-0.2, [False, True])):
        assert T.forgets_k2([0.5, g2]).tolist() == expect
        m = _model_with_q(Vn @ S0 @ Vn.T)
        U = overlap_features(V, Vp, [0.5, g2])
        train(
            m,
            FeaturePrompts(U, n_tokens=12),
            lambda mod, b: feature_prompt_loss(mod, b),
            TrainConfig(steps=120, batch_size=256, lr=1.0, optimizer="sgd", log_every=120, seed=1),
        )
        S1 = T.logit_matrix(m.Q.detach(), Vn)
        forgot = T.feature_losses(S1, N=12) > T.feature_losses(S0, N=12)
        assert forgot.tolist() == expect, (g2, S0, S1)


def test_feature_transformer_shapes():
    V, _ = _setup(5, 2)
    b = FeaturePrompts(V, n_tokens=6).sample(4, generator_for(0, "t"))
    for layers in (1, 3):
        net = FeatureTransformer(5, d_model=16, n_layers=layers)
        assert net(b.x.float(), b.y.float(), b.xq.float()).shape == (4,)


def test_from_q_feature_mass_and_stack_match_the_single_model():
    V, Vp = _setup(7, 3)
    Q = T.trained_q(V.numpy(), 1.7)
    m = MergedQAttention.from_q(Q)
    assert torch.equal(m.Q.detach(), torch.as_tensor(Q)) and m.Q.dtype == torch.float64
    data = FeaturePrompts(V, n_tokens=5)
    b = data.sample(9, generator_for(0, "s"))
    with torch.no_grad():
        assert torch.allclose(m.feature_mass(b, 3), _feature_mass(m.attn(b.x, b.xq), b.feat, 3))
    U = torch.stack([V, overlap_features(V, Vp, [0.5, -0.3, 0.9])])  # (G=2, d, K)
    stack = MergedQStack(Q, U)
    with torch.no_grad():
        single = [
            feature_prompt_loss(
                MergedQAttention.from_q(Q), FeaturePrompts(U[g], n_tokens=5).sample(9, generator_for(0, "s")), 0.5
            )
            for g in range(2)
        ]
        assert torch.allclose(stack.loss(b, 0.5), single[0] + single[1], atol=1e-12)
        stack.active[0] = 0.0
        assert torch.allclose(stack.loss(b, 0.5), single[1], atol=1e-12)
