"""Categorical prompts of arXiv:2405.17248 (docs/papers/categorical.md §5.1, §5.4): shapes, determinism, label law
vs Monte Carlo, relabelling, errors."""

import math

import pytest
import torch

from iclab.data import CategoricalBatch, CategoricalICL, FeatureClassPrompts, generator_for
from iclab.errors import ConfigError


def test_shapes_and_determinism():
    data = CategoricalICL(n_classes=7, d=5, d_embed=3, n_context=11, n_clusters=3, n_queries=2)
    b = data.sample(13, generator_for(0, "t"))
    assert b.x.shape == (13, 11, 5) and b.y.shape == (13, 11)
    assert b.x_query.shape == (13, 2, 5) and b.y_query.shape == (13, 2) and b.probs_query.shape == (13, 2, 7)
    assert b.n_classes == 7 and int(b.y.max()) < 7 and int(b.y.min()) >= 0
    assert (b.x.abs() <= 1).all()
    b2 = data.sample(13, generator_for(0, "t"))
    assert torch.equal(b.x, b2.x) and torch.equal(b.y, b2.y)
    torch.testing.assert_close(b.probs_query.sum(-1), torch.ones(13, 2))
    sub = b.index(torch.tensor([4, 0]))
    assert torch.equal(sub.x[1], b.x[0]) and sub.probs_query.shape == (2, 2, 7)
    assert isinstance(b.to("cpu"), CategoricalBatch)


def test_latent_function_and_label_frequencies_match_monte_carlo():
    """probs_query is softmax(W_e^T f(x)) and the drawn query labels follow it (chi-square-style bound)."""
    data = CategoricalICL(n_classes=5, d=3, d_embed=3, n_context=3, n_clusters=2, scale=2.0, n_queries=1)
    b = data.sample(20000, generator_for(1, "mc"), dtype=torch.float64)
    freq = torch.bincount(b.y_query.flatten(), minlength=5).double() / 20000
    p = b.probs_query[:, 0].mean(0)
    assert (freq - p).abs().max() < 4 * math.sqrt(0.25 / 20000)
    # one explicit evaluation of the latent function: a single centre at 0 with sigma^2 = 1
    x = torch.zeros(1, 1, 3, dtype=torch.float64)
    w = torch.tensor([[[1.0, -2.0, 0.5]]], dtype=torch.float64)
    f = data.latent(x, w, torch.zeros(1, 1, 3, dtype=torch.float64), torch.ones(1, 1, dtype=torch.float64))
    torch.testing.assert_close(f, 2.0 * w)


def test_shared_embedding_is_fixed_by_seed():
    a, b = CategoricalICL(embedding_seed=3), CategoricalICL(embedding_seed=3, n_context=7)
    assert torch.equal(a.class_embeddings(), b.class_embeddings())
    assert a.class_embeddings().shape == (5, 25)
    assert not torch.equal(a.class_embeddings(), CategoricalICL(embedding_seed=4).class_embeddings())


@pytest.mark.parametrize(
    "field,value",
    [
        ("n_classes", 1),
        ("n_clusters", 30),
        ("dist", 1.0),
        ("scale", -1.0),
        ("covariate", "sphere"),
        ("n_context", 0),
        ("unique_embeddings", 2),
    ],
)
def test_bad_config_raises_config_error(field, value):
    with pytest.raises(ConfigError, match=field):
        CategoricalICL(**{field: value})


def test_feature_prompts_relabel_and_shuffle():
    feats = torch.arange(77 * 2, dtype=torch.float32).reshape(77, 2)
    labels = torch.arange(77) % 7
    data = FeatureClassPrompts(feats, labels, classes=(0, 2, 3, 5, 6), n_way=3, shots=5, n_queries=2)
    b = data.sample(11, generator_for(2, "f"))
    assert b.x.shape == (11, 15, 2) and b.x_query.shape == (11, 2, 2) and b.n_classes == 3
    orig = labels[(b.x[..., 0] / 2).long()]  # (11, 15) original class of each context row
    for i in range(11):
        assert torch.bincount(b.y[i], minlength=3).tolist() == [5, 5, 5]
        mapping = {int(c): int(o) for c, o in zip(b.y[i], orig[i])}
        assert len(mapping) == 3 and len(set(mapping.values())) == 3  # a consistent relabelling
        assert set(mapping.values()) <= {0, 2, 3, 5, 6}
        q_orig = labels[(b.x_query[i, :, 0] / 2).long()]
        assert [mapping[int(c)] for c in b.y_query[i]] == q_orig.tolist()
        ctx_rows = set((b.x[i, :, 0] / 2).long().tolist())
        assert not ctx_rows & set((b.x_query[i, :, 0] / 2).long().tolist())  # queries are held out


def test_feature_prompts_errors():
    feats, labels = torch.zeros(20, 3), torch.arange(20) % 4
    with pytest.raises(ConfigError, match="classes"):
        FeatureClassPrompts(feats, labels, classes=(0, 1), n_way=3)
    with pytest.raises(ConfigError, match="classes"):
        FeatureClassPrompts(feats, labels, classes=(0, 1, 2), n_way=3, shots=5)  # 5 per class < 6
    with pytest.raises(ConfigError, match="features"):
        FeatureClassPrompts(feats, labels[:5], classes=(0, 1, 2), n_way=3, shots=1)
