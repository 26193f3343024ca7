"""The functional-GD transformer of arXiv:2405.17248 (docs/papers/categorical.md §3.3-3.6): forward = K steps of
functional GD, cross-attention = exact expected embedding, the erase head clears the scratch slot, trained-TF parity
at the GD configuration, errors."""

import pytest
import torch

from iclab.data import CategoricalBatch, CategoricalICL, generator_for
from iclab.errors import ConfigError
from iclab.models import (
    FunctionalGDModel,
    TrainedCategoricalTransformer,
    categorical_forward,
    categorical_loss,
    embed_tokens,
    gd_block_params,
)
from iclab.theory import categorical as theory

D_X, C, DP, N, Q = 5, 7, 3, 11, 3
E = slice(D_X + DP, D_X + 2 * DP)


def expected_embedding(f, W):
    """The NumPy theory's E_f[w_e] as a tensor."""
    return torch.from_numpy(theory.expected_embedding(f.detach(), W))


def functional_gd(*args):
    """The NumPy theory's functional GD, as lists of tensors."""
    fc, fq = theory.functional_gd(*args)
    return [torch.from_numpy(f) for f in fc], [torch.from_numpy(f) for f in fq]


def _batch(seed=0, n=13):
    data = CategoricalICL(n_classes=C, d=D_X, d_embed=DP, n_context=N, n_clusters=3, n_queries=Q)
    return data.sample(n, generator_for(seed, "m"), dtype=torch.float64)


@pytest.mark.parametrize("kernel", ["softmax", "rbf", "linear"])
def test_forward_equals_k_steps_of_functional_gd(kernel):
    b = _batch()
    m = FunctionalGDModel(
        D_X, C, DP, n_blocks=3, kernel=kernel, dtype=torch.float64, generator=torch.Generator().manual_seed(1)
    )
    with torch.no_grad():
        m.scale.fill_(0.8)
    logits, states = m(b, return_states=True)
    fc, fq = functional_gd(b.x, b.y, b.x_query, m.W_e.detach(), m.alpha.detach(), kernel, 0.8)
    for k, Z in enumerate(states):
        torch.testing.assert_close(Z[:, :N, -DP:], fc[k], atol=1e-12, rtol=0)
        torch.testing.assert_close(Z[:, N:, -DP:], fq[k], atol=1e-12, rtol=0)
        torch.testing.assert_close(Z[:, :N, E], expected_embedding(fc[k], m.W_e.detach()), atol=1e-12, rtol=0)
        torch.testing.assert_close(Z[:, :, :D_X], torch.cat([b.x, b.x_query], 1))  # x is never overwritten
    torch.testing.assert_close(logits, fq[-1] @ m.W_e.detach(), atol=1e-12, rtol=0)
    assert fq[-1].abs().max() > 1e-2  # the steps did something


@pytest.mark.parametrize("kernel", ["softmax", "rbf", "linear"])
@pytest.mark.parametrize("erase", ["distance", "dot"])
def test_slot_forward_equals_the_token_forward(kernel, erase):
    """The GD model's slot forward, its token forward and the fully parametrised copy agree to rounding."""
    b = _batch()
    m = FunctionalGDModel(
        D_X,
        C,
        DP,
        n_blocks=4,
        kernel=kernel,
        dtype=torch.float64,
        erase=erase,
        generator=torch.Generator().manual_seed(2),
    )
    with torch.no_grad():
        m.scale.fill_(1.3)
    slot, (tok, _) = m(b), m(b, return_states=True)
    torch.testing.assert_close(slot, tok, atol=1e-12, rtol=0)
    torch.testing.assert_close(TrainedCategoricalTransformer.from_gd(m)(b), tok, atol=1e-12, rtol=0)
    params = [m.alpha, m.scale, m.W_e]
    g_slot = torch.autograd.grad(m(b).logsumexp(-1).sum(), params)
    g_tok = torch.autograd.grad(m(b, return_states=True)[0].logsumexp(-1).sum(), params)
    for gs, gt in zip(g_slot, g_tok):
        torch.testing.assert_close(gs, gt, atol=1e-10, rtol=1e-10)


@pytest.mark.parametrize("kernel,exact_up_to", [("softmax", 2), ("rbf", 1), ("linear", 1)])
def test_authors_erase_head_is_functional_gd_only_for_few_blocks(kernel, exact_up_to):
    """The authors' dot-product erase head (docs/papers/categorical.md §4.2a): K steps of functional GD up to 2
    blocks with the softmax kernel and 1 block with the linear and RBF kernels (whose erase head is divided by N),
    not beyond."""
    b = _batch()
    for K in range(1, 4):
        m = FunctionalGDModel(
            D_X,
            C,
            DP,
            n_blocks=K,
            kernel=kernel,
            dtype=torch.float64,
            erase="dot",
            generator=torch.Generator().manual_seed(1),
        )
        _, fq = functional_gd(b.x, b.y, b.x_query, m.W_e.detach(), m.alpha.detach(), kernel, 1.0)
        err = float((m(b) - fq[-1] @ m.W_e.detach()).abs().max())
        assert (err < 1e-12) == (K <= exact_up_to), (K, err)


def test_initial_embedding_layout():
    b = _batch(n=2)
    W = torch.randn(DP, C, dtype=torch.float64)
    Z = embed_tokens(b, W)
    assert Z.shape == (2, N + Q, D_X + 3 * DP)
    torch.testing.assert_close(Z[0, 4, D_X : D_X + DP], W[:, b.y[0, 4]])
    assert (Z[:, N:, D_X : D_X + DP] == 0).all() and (Z[..., -DP:] == 0).all()
    torch.testing.assert_close(Z[1, N + 1, E], W.mean(1))  # E_{f=0}[w_e] = mean embedding


def test_cross_attention_is_the_exact_expected_embedding_and_erase_clears_the_slot():
    """One block with zero step size: head 2 removes E exactly and cross-attention writes E_f[w_e] for any f."""
    b = _batch(n=5)
    W = torch.randn(DP, C, dtype=torch.float64)
    p = gd_block_params(D_X, DP, torch.zeros(DP, dtype=torch.float64), 1.0, "softmax")
    Z0 = embed_tokens(b, W)
    f = torch.randn(5, N + Q, DP, dtype=torch.float64)
    Z0[..., -DP:] = f
    Z0[:, :, E] = torch.randn(5, N + Q, DP, dtype=torch.float64)  # a stale scratch value
    _, states = categorical_forward(b, W, [p], "softmax", return_states=True)
    from iclab.models._functional_gd import _block

    Z1 = _block(Z0, N, p, W, "softmax")
    torch.testing.assert_close(Z1[:, :N, E], expected_embedding(f[:, :N], W), atol=1e-12, rtol=0)
    # erase alone (cross-attention switched off): the context scratch slot becomes exactly 0
    p_erase = dict(p, pc=torch.zeros_like(p["pc"]))
    Z1e = _block(Z0, N, p_erase, W, "softmax")
    assert Z1e[:, :N, E].abs().max() < 1e-12
    torch.testing.assert_close(Z1e[..., -DP:], f)  # alpha = 0 leaves f alone


def test_trained_transformer_at_gd_config_matches_and_has_all_parameters():
    b = _batch()
    gd = FunctionalGDModel(D_X, C, DP, n_blocks=2, kernel="rbf", dtype=torch.float64)
    tf = TrainedCategoricalTransformer.from_gd(gd)
    torch.testing.assert_close(tf(b), gd(b), atol=1e-12, rtol=0)
    assert sum(p.numel() for p in gd.parameters()) == 2 * DP + 1 + DP * C
    D = D_X + 3 * DP
    assert sum(p.numel() for p in tf.parameters()) == 2 * (8 * D * D + 2 * D * DP + 2 * DP * DP) + DP * C


def test_loss_is_cross_entropy_and_training_lowers_it():
    b = _batch(n=64)
    gd = FunctionalGDModel(D_X, C, DP, n_blocks=1, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    loss, groups = categorical_loss(gd, b)
    logits = gd(b)
    ref = -torch.log_softmax(logits, -1).gather(-1, b.y_query[..., None]).mean()
    torch.testing.assert_close(loss, ref)
    assert 0 <= groups["acc"] <= 1
    opt = torch.optim.Adam(gd.parameters(), 0.05)
    for _ in range(30):
        opt.zero_grad()
        categorical_loss(gd, b)[0].backward()
        opt.step()
    assert categorical_loss(gd, b)[0] < loss - 0.05


@pytest.mark.parametrize(
    "kw,field",
    [
        ({"kernel": "cosine"}, "kernel"),
        ({"n_blocks": 0}, "n_blocks"),
        ({"d_embed": 0}, "d_embed"),
        ({"erase_lambda": -1.0}, "erase_lambda"),
        ({"erase": "cosine"}, "erase"),
    ],
)
def test_bad_model_args(kw, field):
    with pytest.raises(ConfigError, match=field):
        FunctionalGDModel(D_X, C, **kw)


def test_bad_batch_shapes():
    b = _batch(n=2)
    m = FunctionalGDModel(D_X, C, DP)
    with pytest.raises(ConfigError, match="n_classes"):
        FunctionalGDModel(D_X, C + 1, DP, dtype=torch.float64)(b)
    bad = CategoricalBatch(b.x, b.y, b.x_query[..., :2], b.y_query, C)
    with pytest.raises(ConfigError, match="x_query"):
        m.double()(bad)
    bad = CategoricalBatch(b.x, b.y[:, :4], b.x_query, b.y_query, C)
    with pytest.raises(ConfigError, match="y"):
        m.double()(bad)
