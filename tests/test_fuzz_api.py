"""Fuzz the public Python API (tests/fuzz_harness.py counts every case).

* Every attention normaliser, on generated scores in float16, bfloat16, float32 and float64 (magnitudes up to
  1e6, τ from 1e-4 to 1e4, with and without masks and ``-inf`` scores), returns weights of the input's dtype and
  shape equal to the float64 result rounded to that dtype: half precision is computed in float32, so
  :math:`|s|/\\tau > 65504` no longer turns into NaN.
* Bad arguments (τ as a string, a bool, NaN, an array with a bad entry; a mask of the wrong dtype or shape; an
  unknown keyword; scores that are not a floating tensor) raise one :class:`iclab.IclabError`, never a raw
  ``TypeError``/``RuntimeError``.
* Reading results (``load_results``, ``load_run``, ``export_results``) from a path that is not a run folder raises
  one error and creates nothing.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzz_harness import classify_api, count_result, snapshot
from iclab.attention import normalise, normaliser_kind, normaliser_names, row_sum_tolerance
from test_attention_numerics import _case as _numerics_case
from test_attention_numerics import _in_dtype, _visible
from iclab.errors import ConfigError, IclabError

_FUZZ = settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
NAMES = normaliser_names()
DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64]
_SUMS_TO_ONE = {"softmax", "adaptive_softmax", "ssmax"}


_UNSCALED = {"linear", "affine", "affine_squared", "one_plus_tanh"}  # no τ (the activation ablation's take C)
_AFFINE = {"linear", "approx_softmax", "affine", "affine_squared"}  # weights that need not lie in [0, 1]


def _params(name: str, tau: float) -> dict:
    return {} if name in _UNSCALED else {"tau": tau}


@st.composite
def _scores(draw):
    """``(scores, mask)``: shape (..., n_q, n_k) with odd sizes, magnitudes 10^0..10^6, maybe a mask, or else
    maybe a first key masked by a score of ``-inf`` (rows keep at least one finite key)."""
    shape = draw(st.lists(st.integers(1, 5), min_size=1, max_size=2)) + [draw(st.integers(1, 7))]
    g = torch.Generator().manual_seed(draw(st.integers(0, 2**31)))
    scores = torch.randn(shape, generator=g, dtype=torch.float64) * 10.0 ** draw(st.integers(0, 6))
    mask = None
    if draw(st.booleans()):
        mask = torch.rand(shape, generator=g) < 0.7
    elif shape[-1] > 1 and draw(st.booleans()):
        scores[..., 0] = float("-inf")  # a key masked by its score
    return scores, mask


@_FUZZ
@given(name=st.sampled_from(NAMES), dtype=st.sampled_from(DTYPES), case=_scores(), tau=st.floats(1e-4, 1e4))
def test_normalisers_return_the_float64_weights_rounded_to_the_input_dtype(name, dtype, case, tau):
    scores64, mask = case
    finite_max = torch.finfo(dtype).max
    fit = torch.where(torch.isfinite(scores64), scores64.clamp(-finite_max, finite_max), scores64)
    scores = fit.to(dtype)  # finite scores stay finite in their dtype (float16: |s| <= 65504); -inf stays
    if name == "linear":
        scores = torch.where(torch.isneginf(scores), torch.zeros_like(scores), scores)  # no masking by score
    try:
        w = normalise(name, scores, mask, **_params(name, tau))
    except ConfigError as exc:  # signed weights that rounding to a half dtype would move off a row sum of 1
        ok = normaliser_kind(name) == "signed" and dtype in (torch.float16, torch.bfloat16) and "do not fit" in str(exc)
        count_result(ok)
        assert ok, (name, dtype, tau, scores, exc)
        return
    ref = normalise(name, scores.double(), mask, **_params(name, tau))  # (..., n_q, n_k) float64
    eps = torch.finfo(dtype).eps
    rounded = ref.to(dtype).double()
    ok = w.dtype == dtype and w.shape == scores.shape and not bool(torch.isnan(w).any())
    if ok and name not in _AFFINE:  # bounded weights: equal up to a few roundings of the logits z = s/τ
        # softmax's condition number in its logits is |z|: a rounding of z (relative eps) moves a weight by up to
        # eps·|z|max (β·|z|max for adaptive_softmax, β = P(H) ≤ 3 on these sizes), beyond the weights' own rounding
        finite = scores.double()[torch.isfinite(scores)]
        z_max = float(finite.abs().max()) / (1.0 if name in _UNSCALED else tau) if finite.numel() else 0.0
        slack = 8 * eps * (1 + (3.0 if name == "adaptive_softmax" else 1.0) * z_max)
        ok = bool(torch.allclose(w.double(), rounded, rtol=8 * eps, atol=slack))
    elif ok:  # affine weights: compare where the true value fits the dtype, relative to the row's size
        fits = ref.abs() <= finite_max
        scale = ref.abs().amax(-1, keepdim=True).clamp(min=1.0)
        ok = bool(((w.double() - rounded).abs() <= 64 * eps * scale)[fits].all()) and bool(torch.isinf(w[~fits]).all())
    if ok and name in _SUMS_TO_ONE:  # rows with a visible key sum to 1; masked keys get 0
        visible = torch.ones_like(scores, dtype=torch.bool) if mask is None else torch.broadcast_to(mask, w.shape)
        visible = visible & ~torch.isneginf(scores)
        rows = visible.any(-1)
        ok = bool(
            torch.allclose(
                w.double().sum(-1)[rows], torch.ones(int(rows.sum()), dtype=torch.float64), atol=16 * eps * w.shape[-1]
            )
        ) and bool((w[~visible] == 0).all())
    count_result(ok)
    assert ok, (name, dtype, tau, scores, w, ref)


def test_half_precision_no_longer_overflows_to_nan():
    """The issue's case: |score|/τ beyond 65504 in float16 (signed weights of 4e4 refuse: they cannot sum to 1)."""
    s = torch.tensor([[60000.0, 0.0, -60000.0]], dtype=torch.float16)
    for name in NAMES:
        if normaliser_kind(name) == "signed":
            with pytest.raises(ConfigError, match="do not fit float16"):
                normalise(name, s, **_params(name, 0.5))
            continue
        w = normalise(name, s, **_params(name, 0.5))
        assert w.dtype == torch.float16 and not torch.isnan(w).any(), (name, w)
    assert normalise("softmax", s, tau=0.5).tolist() == [[1.0, 0.0, 0.0]]


def test_approx_softmax_treats_minus_inf_as_masked():
    s = torch.tensor([[1.0, float("-inf"), 3.0]])
    w = normalise("approx_softmax", s)
    assert torch.equal(w, normalise("approx_softmax", s, torch.tensor([[True, False, True]])))
    assert w[0, 1] == 0 and torch.isclose(w.sum(), torch.tensor(1.0))


_BAD_TAU = st.sampled_from(
    [
        "2",
        "",
        True,
        False,
        None,
        [1, "a"],
        {"tau": 1},
        float("nan"),
        float("inf"),
        -1.0,
        0.0,
        np.array([1.0, np.nan]),
        torch.tensor([1.0, -2.0]),
        object(),
    ]
)
_BAD_MASK = st.sampled_from(
    [
        torch.ones(2, 3),
        torch.ones(2, 3, dtype=torch.int64),
        torch.ones(4, 3, dtype=torch.bool),
        torch.ones(3, dtype=torch.bool).expand(5, 3),
        "mask",
        [[True, False, True]],
    ]
)
_BAD_SCORES = st.sampled_from(
    [[[1.0, 2.0]], np.ones((2, 3)), torch.ones(2, 3, dtype=torch.int64), torch.tensor(1.0), "scores", None]
)


@_FUZZ
@given(
    name=st.sampled_from(NAMES),
    which=st.sampled_from(["tau", "mask", "keyword", "scores"]),
    tau=_BAD_TAU,
    mask=_BAD_MASK,
    scores=_BAD_SCORES,
    key=st.text(min_size=1, max_size=8).filter(str.isidentifier),
)
def test_every_bad_argument_is_one_iclab_error(name, which, tau, mask, scores, key):
    good = torch.randn(2, 3)
    if which == "tau":
        if name == "linear" and isinstance(tau, (int, float)) and not isinstance(tau, bool) and tau == 1:
            return
        call = lambda: normalise(name, good, tau=tau)  # noqa: E731
    elif which == "mask":
        call = lambda: normalise(name, good, mask)  # noqa: E731
    elif which == "keyword":
        if key in ("tau", "coeffs", "threshold", "eps", "detach_beta", "bias", "scale", "C"):  # legal keywords
            return
        call = lambda: normalise(name, good, **{key: 1.0})  # noqa: E731
    else:
        call = lambda: normalise(name, scores)  # noqa: E731
    outcome, text = classify_api(call, (IclabError,))
    assert outcome == "clear", (name, which, outcome, text)


@pytest.mark.parametrize("reader", ["load_results", "load_run", "export_results", "read_only_store"])
def test_reading_a_path_that_is_not_a_run_folder_creates_nothing(tmp_path, reader):
    import iclab
    from iclab.runs import ResultStore, export_results, load_results

    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "report.md").write_text("mine")
    call = {
        "load_results": lambda p: load_results(p),
        "load_run": lambda p: iclab.load_run(p),
        "export_results": lambda p: export_results(p),
        "read_only_store": lambda p: ResultStore(p, readonly=True),
    }
    before = snapshot(tmp_path)
    for target in (tmp_path / "typo", tmp_path / "notes", tmp_path / "notes" / "report.md", tmp_path / "a" / "b"):
        outcome, text = classify_api(lambda target=target: call[reader](target), (IclabError,))
        assert outcome == "clear", (reader, target, outcome, text)
    assert snapshot(tmp_path) == before


@_FUZZ
@given(tau=_BAD_TAU)
def test_theory_refuses_bad_temperatures(tau):
    from iclab.theory.temperature import GCoefficients

    coefs = GCoefficients(a2=1.0, a1=1.0, c=1.0)
    if isinstance(tau, (int, float)) and not isinstance(tau, bool) and math.isfinite(tau) and tau > 0:
        return
    outcome, text = classify_api(lambda: coefs.G(tau), (IclabError,))
    assert outcome == "clear", (tau, outcome, text)


# --- Issue 24: half-precision numerics — rows sum to 1 within the dtype's precision, or one clear error --------


@_FUZZ
@given(
    name=st.sampled_from([n for n in NAMES if normaliser_kind(n) != "unnormalised"]),
    dtype=st.sampled_from([torch.float16, torch.bfloat16]),
    case=_numerics_case(),
    log_tau=st.floats(-4.0, 4.0),
)
def test_half_precision_rows_sum_to_one_or_raise_one_clear_error(name, dtype, case, log_tau):
    """float16 approx_softmax at τ = 1e-4 with a mask gave inf and NaN row sums, bfloat16 sums from −1.33e4 to
    8.19e3; masked rows, fully masked rows and −inf scores included (iclab.attention._numerics)."""
    scores64, mask = case
    scores, tau = _in_dtype(scores64, dtype), 10.0**log_tau
    try:
        w = normalise(name, scores, mask, **_params(name, tau))
    except ConfigError as exc:
        ok = normaliser_kind(name) == "signed" and "do not fit" in str(exc)
    else:
        vis = _visible(scores, mask)
        rows, dev = vis.any(-1), (w.double().sum(-1) - 1).abs()
        ok = bool((dev <= row_sum_tolerance(dtype, vis.sum(-1)))[rows].all()) and bool((w[~rows] == 0).all())
    count_result(ok)
    assert ok, (name, dtype, tau)
