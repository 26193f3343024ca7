"""Every registered normaliser holds the row invariant of its kind (``iclab.attention._numerics``) in float16,
bfloat16 and float32, for τ from 1e-4 to 1e4, with masks, fully masked rows and −inf scores; and one NaN rule."""

from __future__ import annotations

import inspect
import math

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from iclab.attention import get_normaliser, normalise, normaliser_kind, normaliser_names, row_sum_tolerance
from iclab.errors import ConfigError

NAMES = normaliser_names()
HALF = (torch.float16, torch.bfloat16)
DTYPES = [torch.float16, torch.bfloat16, torch.float32]
_PROPERTY = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _params(name: str, tau: float) -> dict:
    takes_tau = "tau" in inspect.signature(get_normaliser(name).__wrapped__).parameters
    return {"tau": tau} if takes_tau and name != "linear" else {}


@st.composite
def _case(draw):
    """``(scores, mask)`` in float64: shape (b, n_q, n_k) with odd sizes, magnitudes 10^-3..10^8, maybe a mask
    with a fully masked row, maybe keys scored −inf (sometimes a whole row)."""
    shape = [draw(st.integers(1, 3)), draw(st.integers(1, 5)), draw(st.integers(1, 11))]
    g = torch.Generator().manual_seed(draw(st.integers(0, 2**31)))
    scores = torch.randn(shape, generator=g, dtype=torch.float64) * 10.0 ** draw(st.integers(-3, 8))
    mask = None
    if draw(st.booleans()):
        mask = torch.rand(shape, generator=g) < 0.7
        mask[0, 0] = False  # a fully masked row
    if draw(st.booleans()):
        scores = scores.masked_fill(torch.rand(shape, generator=g) < 0.3, float("-inf"))
        if draw(st.booleans()):
            scores[-1, -1] = float("-inf")  # a row scored −inf throughout
    return scores, mask


def _in_dtype(scores: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    big = torch.finfo(dtype).max
    return torch.where(torch.isfinite(scores), scores.clamp(-big, big), scores).to(dtype)


def _visible(scores: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    vis = ~torch.isneginf(scores)
    return vis if mask is None else vis & torch.broadcast_to(mask, scores.shape)


@_PROPERTY
@given(
    name=st.sampled_from(NAMES),
    dtype=st.sampled_from(DTYPES),
    case=_case(),
    log_tau=st.floats(-4.0, 4.0),
)
def test_every_normaliser_holds_the_row_invariant_of_its_kind(name, dtype, case, log_tau):
    scores64, mask = case
    scores, tau, kind = _in_dtype(scores64, dtype), 10.0**log_tau, normaliser_kind(name)
    try:
        w = normalise(name, scores, mask, **_params(name, tau))
    except ConfigError as exc:  # only signed weights that cannot be rounded to a half dtype may refuse
        assert kind == "signed" and dtype in HALF and "do not fit" in str(exc), (name, dtype, tau, exc)
        return
    assert w.dtype == dtype and w.shape == scores.shape
    vis = _visible(scores, mask)  # (b, n_q, n_k)
    w64 = w.double()
    assert bool(torch.isfinite(w64).all()), (name, dtype, tau)
    assert bool((w64[~vis] == 0).all()), "hidden keys (masked or -inf) get weight 0"
    rows, n = vis.any(-1), vis.sum(-1)  # (b, n_q)
    dev = (w64.sum(-1) - 1).abs()  # (b, n_q)
    tol = row_sum_tolerance(dtype, n)
    if kind == "simplex":
        assert bool(((w64 >= 0) & (w64 <= 1)).all())
        assert bool((dev <= tol)[rows].all()), (name, dtype, tau, dev[rows].max())
    elif kind == "signed" and dtype in HALF:
        assert bool((dev <= tol)[rows].all()), (name, dtype, tau, dev[rows].max())
    elif kind == "signed":  # float32: the formula's own rounding, n eps (1 + sum |w| + max |s|/tau)
        s_max = scores.double().abs().masked_fill(~vis, 0).amax(-1) / tau if "tau" in _params(name, tau) else 0.0
        bound = 4 * n * torch.finfo(dtype).eps * (1 + w64.abs().sum(-1) + s_max)
        assert bool((dev <= bound)[rows].all()), (name, dtype, tau, dev[rows].max())
    elif name == "sigmoid":
        assert bool(((w64 >= 0) & (w64 <= 1)).all())
    else:  # linear: s / n, so a row sums to the mean visible score (each weight one rounding of s/n)
        mean = scores.double().masked_fill(~vis, 0).sum(-1) / n.clamp(min=1)
        assert bool(((w64.sum(-1) - mean).abs() <= torch.finfo(dtype).eps * w64.abs().sum(-1)).all())
    assert bool((w64.sum(-1)[~rows] == 0).all()), "a row with no visible key is all zeros"


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_nan_at_a_visible_key_propagates_to_its_row_and_a_masked_nan_is_ignored(name, dtype):
    scores = torch.tensor([[0.5, -1.0, 2.0, 0.25], [1.0, 0.0, -0.5, 0.75]], dtype=dtype)
    nan = scores.clone()
    nan[0, 1] = float("nan")
    w = normalise(name, nan)
    assert torch.isnan(w[0].double().sum()) and torch.equal(w[1], normalise(name, scores)[1])
    mask = torch.tensor([[True, False, True, True]] * 2)
    assert torch.equal(normalise(name, nan, mask), normalise(name, scores, mask))


@pytest.mark.parametrize("name", NAMES)
def test_plus_inf_at_a_visible_key_gives_nan_where_the_activation_is_unbounded(name):
    w = normalise(name, torch.tensor([[0.5, float("inf"), 2.0], [1.0, 0.0, -0.5]]))
    assert bool(torch.isfinite(w[1]).all())
    if name in ("one_plus_tanh", "sigmoid"):  # bounded activations take their limit at +inf
        assert bool(torch.isfinite(w[0]).all()) and w[0, 1] == w[0].max()
    elif name == "linear":
        assert w[0, 1] == float("inf")
    else:
        assert torch.isnan(w[0].sum())


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_rows_with_no_visible_key_are_zeros(name, dtype):
    """Fully masked, or scored −inf throughout (before: softmax, ssmax and adaptive_softmax gave NaN there)."""
    scores = torch.tensor([[float("-inf")] * 3, [1.0, 2.0, 3.0]], dtype=dtype)
    mask = torch.tensor([[True] * 3, [False] * 3])
    assert normalise(name, scores).double()[0].abs().sum() == 0
    assert normalise(name, scores, mask).double().abs().sum() == 0


@pytest.mark.parametrize("name", NAMES)
def test_a_key_scored_minus_inf_is_a_masked_key(name):
    """One rule for all (before: ssmax and sigmoid(bias=None) counted −inf keys in n, linear gave them −inf)."""
    params = {"bias": None} if name == "sigmoid" else {}
    s = torch.tensor([[1.0, 2.0, float("-inf"), float("-inf")], [0.5, -1.0, 3.0, 0.0]])
    mask = torch.tensor([[True, True, False, False], [True, True, True, True]])
    assert torch.equal(normalise(name, s, **params), normalise(name, s.nan_to_num(neginf=0.0), mask, **params))


@pytest.mark.parametrize("dtype", HALF)
def test_approx_softmax_at_tau_1e_4_in_half_precision_refuses(dtype):
    """The issue's case: float16 gave inf and NaN row sums, bfloat16 sums from −1.33e4 to 8.19e3."""
    g = torch.Generator().manual_seed(0)
    scores = torch.randn(4, 5, 7, generator=g).to(dtype)
    mask = torch.rand(4, 5, 7, generator=g) < 0.7
    with pytest.raises(ConfigError, match=f"approx_softmax weights do not fit {str(dtype)[6:]}, tau=0.0001"):
        normalise("approx_softmax", scores, mask, tau=1e-4)


def test_softmax_where_scores_over_tau_overflow_float32():
    """bfloat16/float32 scores of 1e35 at τ = 1e-4: s/τ overflows float32; softmax is then taken of s − max."""
    for dtype in (torch.bfloat16, torch.float32):
        s = torch.tensor([[1e35, 2e35, -3e35]], dtype=dtype)
        for name in ("softmax", "adaptive_softmax", "ssmax"):
            assert normalise(name, s, tau=1e-4).tolist() == [[0.0, 1.0, 0.0]], (name, dtype)


def test_float32_softmax_at_tau_1_is_torch_softmax_bit_for_bit():
    g = torch.Generator().manual_seed(3)
    s = torch.randn(3, 7, 11, generator=g) * 5
    assert torch.equal(normalise("softmax", s), torch.softmax(s, -1))
    assert torch.equal(normalise("softmax", s, tau=0.5), torch.softmax(s / 0.5, -1))


def test_row_sum_tolerance_is_one_rounding_plus_the_sum_of_n_terms():
    assert row_sum_tolerance(torch.float16, 1) == pytest.approx(2**-10 + 2**-23)
    assert row_sum_tolerance(torch.float32, 4096) == pytest.approx(65 * 2**-23)
    assert math.isclose(float(row_sum_tolerance(torch.bfloat16, torch.tensor(4))), 2**-7 + 2 * 2**-23)
