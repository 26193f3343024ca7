"""Verdicts: each kind agrees on an effect, and a made-up result with no effect never agrees."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iclab.stats import (
    AGREES,
    DISAGREES,
    NOT_JUDGED,
    Verdict,
    binary_floor_ci,
    binary_unit_band,
    bootstrap_ci,
    judge_direction,
    judge_equivalence,
    judge_value,
    mean_se,
    paired_differences,
    quantile,
)

finite = st.floats(-1e6, 1e6, allow_nan=False)
positive = st.floats(1e-6, 1e3, allow_nan=False)


@given(se=positive, smallest=st.floats(0, 10), sign=st.sampled_from([1, -1]), n=st.integers(2, 10**6))
def test_a_null_effect_never_agrees(se, smallest, sign, n):
    v = judge_direction(0.0, se, sign=sign, smallest=smallest, n=n)
    assert v.verdict in (DISAGREES, NOT_JUDGED)


@given(effect=positive, sign=st.sampled_from([1, -1]))
def test_an_effect_of_the_claimed_sign_beyond_noise_agrees(effect, sign):
    se = effect / 5  # z = 5
    assert judge_direction(sign * effect, se, sign=sign).verdict == AGREES
    assert judge_direction(-sign * effect, se, sign=sign).verdict == DISAGREES


def test_direction_distinguishes_absent_from_underpowered():
    absent = judge_direction(0.001, 0.002, smallest=0.05, n=400)
    assert absent.verdict == DISAGREES and "no effect" in absent.reason
    weak = judge_direction(0.02, 0.02, smallest=0.05, n=400)
    assert weak.verdict == NOT_JUDGED and "too little power" in weak.reason and "samples (now 400)" in weak.reason
    # the sample it asks for resolves an effect of that size: SE shrinks as 1/sqrt(n)
    needed = int(weak.reason.split("about ")[1].split(" samples")[0].replace(",", ""))
    assert judge_direction(0.05, 0.02 * math.sqrt(400 / needed), n=needed).verdict == AGREES


def test_direction_with_student_t_and_explicit_interval():
    # three seeds: t(2) is much wider than the normal quantile
    assert judge_direction(1.0, 0.3).verdict == AGREES
    assert judge_direction(1.0, 0.3, dof=2).verdict == NOT_JUDGED
    assert judge_direction(0.1, ci=(0.02, 0.18)).verdict == AGREES
    lopsided = judge_direction(0.1, ci=(0.02, 0.2))  # tested at its wider side: [0, 0.2] does not exclude 0
    assert lopsided.verdict == NOT_JUDGED and "tested at its wider side: [0, 0.2]" in lopsided.uncertainty
    assert judge_direction(0.1, ci=(-0.02, 0.2)).verdict == NOT_JUDGED


@given(target=st.floats(1, 1e4), rel=st.floats(0.01, 0.2))
def test_equivalence_agrees_only_inside_and_disagrees_far_outside(target, rel):
    se = target * rel / 20
    assert judge_equivalence(target * (1 + rel / 4), se, target, rel_tol=rel).verdict == AGREES
    # a simulation unrelated to the theory (a null model) disagrees
    assert judge_equivalence(target * (1 + 3 * rel), se, target, rel_tol=rel).verdict == DISAGREES
    assert judge_equivalence(target * (1 - 3 * rel), se, target, rel_tol=rel).verdict == DISAGREES


def test_equivalence_without_power_is_not_judged_and_says_what_would_judge_it():
    # the case: theory 300.05, MC 283.2 ± 6.7 on 4000 prompts, 5 % allowed
    v = judge_equivalence(283.2, 6.7, 300.05, rel_tol=0.05, n=4000)
    assert v.verdict == NOT_JUDGED and "about" in v.reason and "(now 4,000)" in v.reason
    needed = int(v.reason.split("about ")[1].split(" samples")[0].replace(",", ""))
    assert judge_equivalence(283.2, 6.7 * math.sqrt(4000 / needed) * 0.99, 300.05, rel_tol=0.05).verdict != NOT_JUDGED


def test_paper_value_band_and_no_uncertainty():
    assert judge_value(0.406, 0.01, 0.40).verdict == AGREES
    assert judge_value(0.5, 0.01, 0.40).verdict == DISAGREES
    assert judge_value(0.5, float("nan"), 0.40).verdict == NOT_JUDGED
    # a NaN measured SE is no uncertainty even when the paper has a spread; only an exact value may have SE 0
    assert judge_value(0.41, float("nan"), 0.40, paper_se=0.01).verdict == NOT_JUDGED
    assert judge_value(0.41, 0.0, 0.40, paper_se=0.01, exact=True).verdict == AGREES


def test_verdict_contract():
    with pytest.raises(ValueError):
        Verdict("yes")
    with pytest.raises(ValueError):
        Verdict(NOT_JUDGED)


def test_uncertainty_helpers():
    m, se, n = mean_se([1.0, 2.0, 3.0, float("nan")])
    assert (m, n) == (2.0, 3) and se == pytest.approx(1 / math.sqrt(3))
    assert math.isnan(mean_se([4.0])[1])
    est, lo, hi = bootstrap_ci(np.arange(100.0), seed=1)
    assert est == 49.5 and lo < 49.5 < hi and hi - lo == pytest.approx(2 * 1.96 * 29.0 / 10, rel=0.15)
    assert bootstrap_ci(np.arange(100.0), seed=1) == (est, lo, hi)  # seeded
    assert paired_differences([3, 4], [1, 1]).tolist() == [2, 3]
    with pytest.raises(ValueError):
        paired_differences([1, 2], [1])
    assert quantile(0.95) == pytest.approx(1.959964) and quantile(0.95, 2) == pytest.approx(4.302653)


@settings(max_examples=50)
@given(st.lists(finite, min_size=2, max_size=30))
def test_bootstrap_interval_contains_its_estimate(values):
    est, lo, hi = bootstrap_ci(values, seed=0, n_boot=200)
    assert lo <= est + 1e-6 * (1 + abs(est)) and est <= hi + 1e-6 * (1 + abs(est))


def test_binary_floor_ci_widens_only_a_too_narrow_interval():
    assert binary_floor_ci(0.0, 0.0, 0.0, 120) == (-0.025, 0.025)  # no answer changed: ±3/120
    assert binary_floor_ci(0.1, -0.2, 0.4, 120) == (-0.2, 0.4)  # already wider: unchanged


def test_binary_unit_band_is_the_t_band_across_units_floored_by_the_rule_of_three():
    """Issue 43 item 3: units that each hold 0/1 outcomes (question groups) are combined across the units, never
    across their outcomes; zero spread leaves the rule of three's ±3/N."""
    v = [0.2, 0.0, 0.2, 0.0, 0.0, 0.4, 0.0, 0.0]  # 8 groups of 5 questions: 4 questions changed
    m, lo, hi, k = binary_unit_band(v, 40)
    half = 2.364624 * np.std(v, ddof=1) / math.sqrt(8)  # t(7)
    assert k == 8 and m == pytest.approx(0.1) and (lo, hi) == pytest.approx((0.1 - half, 0.1 + half), abs=1e-6)
    assert lo < 0  # the 40 questions as units would exclude 0: [0.003, 0.197]
    assert binary_unit_band([0.0] * 10, 100)[1:3] == pytest.approx((-0.03, 0.03))  # nothing changed: ±3/100
    assert all(math.isnan(x) for x in binary_unit_band([0.5], 10)[1:3])  # one unit: no band


@settings(max_examples=50)
@given(st.lists(st.floats(-1, 1), min_size=2, max_size=30), st.floats(-1, 1), st.integers(1, 10_000))
def test_binary_unit_band_moves_with_a_shift_of_its_units(values, shift, n):
    """The row-level calibration puts a claim at its least favourable truth by moving every unit by one constant: the
    band must move with it, its width unchanged."""
    m, lo, hi, _ = binary_unit_band(values, n)
    m2, lo2, hi2, _ = binary_unit_band([v + shift for v in values], n)
    assert m2 == pytest.approx(m + shift, abs=1e-9) and hi2 - lo2 == pytest.approx(hi - lo, abs=1e-9)


def test_bootstrap_argmin_draws_the_grid_point_of_the_resampled_minimum():
    from iclab.stats import bootstrap_argmin

    rng = np.random.default_rng(0)
    grid = [0.5, 1.0, 2.0, 4.0, 8.0]
    curves = (np.arange(5)[:, None] - 2.0) ** 2 + rng.normal(0, 0.5, (5, 301))  # (G, n): minimum at grid[2]
    draws = bootstrap_argmin(curves, grid, 200, seed=3)
    assert draws.shape == (200,) and set(draws) <= set(grid) and np.mean(draws == 2.0) > 0.95
    assert np.array_equal(draws, bootstrap_argmin(curves, grid, 200, seed=3))
    flat = rng.normal(0, 1, (5, 41))  # no minimum: the draws spread over the grid
    assert len(set(bootstrap_argmin(flat, grid, 300, seed=1))) >= 3


def test_bootstrap_argmin_in_chunks_equals_one_draw_at_a_time():
    """The vectorised draws equal the plain loop (one resample, one mean curve, one argmin per draw) bit for bit,
    at any chunk size: results computed before the vectorisation keep their verdicts."""
    from iclab.stats import bootstrap_argmin

    rng = np.random.default_rng(5)
    grid = np.linspace(0.5, 3.0, 7)
    curves = rng.normal(0, 1, (7, 33)) + (np.arange(7)[:, None] - 3.0) ** 2 * 0.05
    loop_rng = np.random.default_rng(11)
    loop = np.array([grid[int(np.argmin(curves[:, loop_rng.integers(0, 33, 33)].mean(1)))] for _ in range(257)])
    for max_elements in (1, 7 * 33 * 10, 1 << 22):  # one draw per chunk, a ragged last chunk, one chunk
        assert np.array_equal(bootstrap_argmin(curves, grid, 257, seed=11, max_elements=max_elements), loop)
    assert bootstrap_argmin(curves, grid, 0, seed=11).shape == (0,)


@settings(max_examples=40, deadline=None)
@given(
    g=st.integers(1, 6),
    n=st.integers(1, 40),
    n_boot=st.integers(0, 60),
    max_elements=st.integers(1, 5000),
    seed=st.integers(0, 2**31),
    ties=st.booleans(),
)
def test_bootstrap_argmin_equals_the_loop_for_any_shape_and_chunk(g, n, n_boot, max_elements, seed, ties):
    """Any grid size, unit count, number of draws and chunk size (a chunk smaller than one draw included), with or
    without tied curves (the first minimiser wins in both)."""
    from iclab.stats import bootstrap_argmin

    rng = np.random.default_rng(seed)
    curves = np.round(rng.normal(0, 1, (g, n)), 0 if ties else 6)
    grid = np.sort(rng.uniform(0.1, 5.0, g))
    loop_rng = np.random.default_rng(seed)
    loop = [grid[int(np.argmin(curves[:, loop_rng.integers(0, n, n)].mean(1)))] for _ in range(n_boot)]
    got = bootstrap_argmin(curves, grid, n_boot, seed, max_elements=max_elements)
    assert got.shape == (n_boot,) and np.array_equal(got, np.array(loop, float))


def test_mean_se_keeps_a_failure_visible_when_asked():
    """Per-prompt Monte-Carlo errors: a NaN or inf is a failed computation, so with ``drop_nonfinite=False`` the mean
    and SE are NaN (the judge refuses them), where the default drops the lost unit and counts the survivors."""
    from iclab.stats import mean_se

    vals = [1.0, 2.0, float("inf"), 4.0]
    m, se, n = mean_se(vals)
    assert (m, n) == (7 / 3, 3) and math.isfinite(se)
    m, se, n = mean_se(vals, drop_nonfinite=False)
    assert math.isnan(m) and math.isnan(se) and n == 4
    assert mean_se([1.0, 3.0], drop_nonfinite=False)[:2] == mean_se([1.0, 3.0])[:2]


def test_power_message_never_asks_for_the_sample_it_already_has():
    """An interval that only just reaches zero is undecided at this n: the reason asks for more, never "about n
    samples (now n)"."""
    from iclab.stats import judge_direction

    import re

    for est, ci, smallest in (
        (0.0333, (-0.0001, 0.0667), 0.02),
        (0.02, (-0.0192, 0.0592), 0.05),
        (0.0, (-0.02, 0.02), 0.0),
    ):
        v = judge_direction(est, ci=ci, smallest=smallest, n=150)
        asked = re.search(r"about ([\d,]+) samples \(now 150\)", v.reason)
        assert v.verdict == NOT_JUDGED and (asked is None or int(asked[1].replace(",", "")) > 150), v.reason
        assert asked or "more than the 150" in v.reason or "larger sample" in v.reason, v.reason


def test_tails_and_quantiles_are_scipys_bit_for_bit():
    """The judges' normal upper tail (``ndtr(-x)``) and remembered ``quantile`` give exactly what ``scipy.stats``
    gives (values, NaN, infinities, signed zeros; a 0-d input gives a scalar), so no verdict moves with them."""
    from scipy import stats

    from iclab.stats._rules import _sf

    x = np.concatenate([np.random.default_rng(0).normal(0, s, 20_000) for s in (0.3, 3, 30)])
    x = np.concatenate([x, [0.0, -0.0, np.inf, -np.inf, np.nan, 1e300, -1e300, 38.5, -38.5]])
    for dof in (None, math.inf, 2, 7.5):
        sf = stats.norm.sf if dof in (None, math.inf) else lambda v, dof=dof: stats.t.sf(v, dof)
        assert np.array_equal(_sf(x, dof).view(np.int64), sf(x).view(np.int64)), dof
        assert type(_sf(1.5, dof)) is type(sf(1.5)) and _sf(1.5, dof) == sf(1.5), dof
    for conf in (0.5, 0.9, 0.95, 1 - 0.05 / 39):
        assert quantile(conf) == float(stats.norm.ppf(0.5 + conf / 2)) == quantile(conf, math.inf)
        for dof in (1, 2.0, np.float64(5), np.int64(29)):
            assert quantile(conf, dof) == float(stats.t.ppf(0.5 + conf / 2, dof)) == quantile(conf, float(dof))
