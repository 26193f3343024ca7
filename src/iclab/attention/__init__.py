"""Attention normalisers over the key axis, one registry for every model (see ``_registry``)."""

from iclab.attention._registry import get_normaliser, normalise, normaliser_names, register_normaliser
from iclab.attention._softmax import approx_softmax, check_tau, linear_attention_weights, softmax, visible_count

__all__ = [
    "get_normaliser",
    "normalise",
    "normaliser_names",
    "register_normaliser",
    "softmax",
    "approx_softmax",
    "linear_attention_weights",
    "check_tau",
    "visible_count",
]
