"""Attention normalisers over the key axis, one registry for every model (see ``_registry``).

Numerics (``_numerics``): a ``simplex`` normaliser's rows sum to 1 within :func:`row_sum_tolerance` in float16,
bfloat16, float32 and float64 for any τ; a ``signed`` one (``approx_softmax``, ``affine``) raises one ConfigError in
half precision where rounding would move a row sum off 1; ``linear`` and ``sigmoid`` do not normalise. A key masked
out or scored −inf gets weight 0, a row with no visible key is all zeros, and a NaN score at a visible key makes its
row NaN (propagated, never raised: a diverging model shows as a non-finite loss).
"""

from iclab.attention._registry import (
    check_params,
    get_normaliser,
    normalise,
    normaliser_kind,
    normaliser_names,
    register_normaliser,
)
from iclab.attention._numerics import row_sum_tolerance
from iclab.attention._softmax import approx_softmax, check_tau, linear_attention_weights, softmax, visible_count
from iclab.attention._adaptive import *  # noqa: F401,F403
from iclab.attention._alternatives import *  # noqa: F401,F403
from iclab.attention._activation import *  # noqa: F401,F403
from iclab.attention._streaming import *  # noqa: F401,F403
from iclab.attention._dispersion import *  # noqa: F401,F403
from iclab.attention import _activation, _adaptive, _alternatives, _streaming, _dispersion

__all__ = [
    "get_normaliser",
    "check_params",
    "normalise",
    "normaliser_names",
    "normaliser_kind",
    "row_sum_tolerance",
    "register_normaliser",
    "softmax",
    "approx_softmax",
    "linear_attention_weights",
    "check_tau",
    "visible_count",
    *_adaptive.__all__,
    *_alternatives.__all__,
    *_activation.__all__,
    *_streaming.__all__,
    *_dispersion.__all__,
]
