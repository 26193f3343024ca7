"""The two tests of :mod:`iclab.stats` that make claims falsifiable (issue 21): an absence judged on both sides
(:func:`iclab.stats.judge_absence`) and a claim "at every cell" (:func:`iclab.stats.judge_every_cell`), with their
error rates checked by simulation at the worst case of the null."""

import numpy as np
import pytest

from iclab.stats import AGREES, DISAGREES, NOT_JUDGED, judge_absence, judge_every_cell


def test_absence_excludes_both_sides():
    assert judge_absence(0.0, (-0.02, 0.02), smallest=0.05).verdict == AGREES
    hurts = judge_absence(-0.4, (-0.5, -0.3), smallest=0.05)
    assert hurts.verdict == DISAGREES and "below −0.05" in hurts.reason
    helps = judge_absence(0.4, (0.3, 0.5), smallest=0.05)
    assert helps.verdict == DISAGREES and "above +0.05" in helps.reason
    wide = judge_absence(-0.03, (-0.09, 0.03), smallest=0.05, n=100)
    assert wide.verdict == NOT_JUDGED and "straddles ±0.05" in wide.reason and "(now 100)" in wide.reason
    assert judge_absence(float("nan"), (0, 1), smallest=0.05).verdict == NOT_JUDGED
    with pytest.raises(ValueError):
        judge_absence(0.0, (-0.01, 0.01), smallest=0.0)


@pytest.mark.parametrize("effect", [-0.05, 0.05])
def test_absence_false_agreement_at_the_margin_is_below_the_level(effect):
    """A true effect of exactly ±δ (the worst case for a false "no effect"), 95 % normal intervals: agrees in at most
    2.5 % of 4000 draws (+ 3 Monte-Carlo SE)."""
    rng = np.random.default_rng(0)
    se = 0.02
    est = effect + rng.normal(0, se, 4000)
    agree = np.mean([judge_absence(e, (e - 1.96 * se, e + 1.96 * se), smallest=0.05).verdict == AGREES for e in est])
    assert agree <= 0.025 + 3 * np.sqrt(0.025 * 0.975 / 4000)


def _cells(gaps, se=0.01, theory=10.0):
    return [(f"l={i}", theory * (1 + g), theory * se, theory) for i, g in enumerate(gaps)]


def test_every_cell_agrees_only_when_each_cell_does():
    assert judge_every_cell(_cells([0.01] * 20), rel_tol=0.05).verdict == AGREES
    one = judge_every_cell(_cells([0.01] * 19 + [0.2]), rel_tol=0.05)
    assert one.verdict == DISAGREES and "l=19" in one.reason and "20.0%" in one.measured
    open_ = judge_every_cell(_cells([0.01] * 19 + [0.05]), rel_tol=0.05, n=2000)
    assert open_.verdict == NOT_JUDGED and "1 of 20 cells undecided (l=19)" in open_.reason
    assert judge_every_cell([], rel_tol=0.05).verdict == NOT_JUDGED
    no_se = judge_every_cell([("a", 1.0, 0.0, 1.0)], rel_tol=0.05)
    assert no_se.verdict == NOT_JUDGED and "no uncertainty" in no_se.reason  # the one refusal (stats.refusal)


def test_every_cell_error_rates_at_the_margin():
    """Worst cases, 400 draws of 20 cells with SE 1 %: one cell truly at the 5 % margin (the rest at 0) agrees in at most
    2.5 % (+ 3 MC SE) — the intersection–union test needs no correction; every cell truly at the margin disagrees in
    at most 5 % (+ 3 MC SE) — Bonferroni over the 20 cells (without it, about 1 − 0.975²⁰ = 40 %)."""
    rng = np.random.default_rng(1)
    n, tol = 400, 3 * np.sqrt(0.05 * 0.95 / 400)
    one = [0.0] * 19 + [0.05]
    agree = np.mean(
        [
            judge_every_cell(_cells(np.array(one) + rng.normal(0, 0.01, 20)), rel_tol=0.05).verdict == AGREES
            for _ in range(n)
        ]
    )
    assert agree <= 0.025 + tol
    edge = np.full(20, 0.05)
    disagree = np.mean(
        [judge_every_cell(_cells(edge + rng.normal(0, 0.01, 20)), rel_tol=0.05).verdict == DISAGREES for _ in range(n)]
    )
    assert disagree <= 0.05 + tol


def test_absence_refuses_an_interval_without_width():
    """A zero-width (or NaN) interval is no evidence of absence: "not judged: no uncertainty", never "agrees"."""
    from iclab.stats import judge_absence

    for ci in ((0.0, 0.0), (0.01, 0.01), (float("nan"), 0.1)):
        v = judge_absence(0.0, ci, smallest=0.05)
        assert v.verdict == "not judged" and ("no uncertainty" in v.reason or "not measured" in v.reason), ci
    assert judge_absence(0.0, (-0.01, 0.01), smallest=0.05).verdict == "agrees"
