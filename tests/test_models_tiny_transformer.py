"""``TinyTransformer.set_attention``: switching the normaliser of a trained model equals building the model with that
normaliser and the same weights (odd sizes), and a bad name is one ConfigError."""

import pytest
import torch

from iclab.data import seeded_init
from iclab.errors import ConfigError
from iclab.models import TinyTransformer


def test_set_attention_equals_a_model_built_with_it():
    with seeded_init(3, "tiny"):
        soft = TinyTransformer(5, 7, d_model=12, n_layers=3, n_heads=3, attention="softmax")
    adaptive = TinyTransformer(5, 7, d_model=12, n_layers=3, n_heads=3, attention="ssmax")
    adaptive.load_state_dict(soft.state_dict())
    x = torch.randn(2, 11, 5, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        before = soft(x)
        assert not torch.allclose(before, adaptive(x))
        assert soft.set_attention("ssmax") is soft
        assert torch.equal(soft(x), adaptive(x))
        assert all(a.attention == "ssmax" and a.attention_params == {} for a in soft.attn)
        assert torch.equal(soft.set_attention("softmax")(x), before)


def test_set_attention_refuses_a_bad_name():
    model = TinyTransformer(3)
    with pytest.raises(ConfigError):
        model.set_attention("nope")
