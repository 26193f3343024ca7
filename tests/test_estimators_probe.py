"""The per-context softmax probe (``iclab.estimators.softmax_probe``, arXiv:2405.17248 §5.4): it learns a context
whose classes are separable and stays at chance when the query labels carry no information."""

import torch

from iclab.data import CategoricalBatch, FeatureClassPrompts, generator_for
from iclab.estimators import softmax_probe


def _prompts(separable: bool) -> CategoricalBatch:
    g = generator_for(0, "probe-test")
    y = torch.arange(5).repeat(40)  # (200,) five classes
    f = torch.randn(200, 7, generator=g) + (6.0 * torch.eye(5, 7)[y] if separable else 0.0)
    return FeatureClassPrompts(f, y, tuple(range(5)), n_way=5, shots=3).sample(64, generator_for(0, "contexts"))


def test_probe_learns_separable_contexts():
    r = softmax_probe(_prompts(True), steps=150)
    assert r["acc"] > 0.9 and r["nll"] < 0.5


def test_probe_is_at_chance_without_signal():
    r = softmax_probe(_prompts(False), steps=150)
    assert 0.05 < r["acc"] < 0.4 and r["nll"] > 1.0  # chance is 1/5; the prior log-loss log 5 = 1.61
