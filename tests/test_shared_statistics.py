"""The statistics the paper packages share (``iclab.claims._statistics``, ``iclab.stats.unit_mean`` and
``clopper_pearson``): each rule on made-up samples, with the numbers worked by hand, and the multi-head pooled
columns on a fragmented frame (no pandas PerformanceWarning)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

from iclab.claims._records import Estimate, Sample
from iclab.claims._statistics import across_units_or, measured_as, not_configured, whole_rows, within_units
from iclab.experiments.multihead import statistics as mh
from iclab.stats import clopper_pearson, clopper_pearson_trials, unit_mean


def _sample(values, ses=None, base=None, n_test=None) -> Sample:
    v = np.asarray(values, float)
    rows = pd.DataFrame({"seed": range(len(v)), "x": v}).set_index("seed")
    if n_test is not None:
        rows["n_test"] = n_test
    b = None if base is None else np.asarray(base, float)
    a = v if b is None else v + b
    return Sample(rows, None if b is None else rows, rows.index, a, b, v, None if ses is None else np.asarray(ses))


def test_unit_mean_goes_across_units_from_min_units_on():
    v = [1.0, 2.0, 4.0]
    m, se, dof = unit_mean(v, [0.1, 0.1, 0.1], 3)
    assert m == pytest.approx(7 / 3) and dof == 2
    assert se == pytest.approx(np.std(v, ddof=1) / math.sqrt(3))


def test_unit_mean_below_min_units_uses_the_units_own_ses():
    m, se, dof = unit_mean([1.0, 2.0], [0.3, 0.4], 3)
    assert (m, dof) == (1.5, None)
    assert se == pytest.approx(0.5 / 2)  # sqrt(0.3² + 0.4²) / 2
    assert math.isnan(unit_mean([1.0], None, 3)[1])  # no within-run SE: no uncertainty


def test_unit_mean_nan_units():
    assert math.isnan(unit_mean([1.0, math.nan], [0.1, 0.1], 3)[0])  # a NaN unit is not dropped silently
    m, se, dof = unit_mean([1.0, math.nan], [0.2, 0.1], 3, drop_nan=True)
    assert (m, se, dof) == (1.0, 0.2, None)
    assert all(math.isnan(x) for x in unit_mean([math.nan], [0.1], 3, drop_nan=True)[:2])


def test_across_units_or_names_the_rule_in_the_statistic():
    """The config's planned units fix the rule: one planned model reads its prompt-level SE, three go across them."""
    rule = across_units_or(unit="model", planned="models")
    one = rule(_Planned(1), _sample([1.0], ses=[0.1]))
    many = rule(_Planned(3), _sample([1.0, 3.0, 5.0], ses=[0.1, 0.1, 0.1]))
    assert one.how == "prompt-level SE (1 model)" and one.dof is None and one.n == 1 and one.se == 0.1
    assert many.how == "SE across 3 models" and many.dof == 2 and many.se == pytest.approx(2 / math.sqrt(3))


class _Planned:
    def __init__(self, models: int) -> None:
        self.models = models


def test_a_lost_unit_is_refused_never_a_within_unit_se():
    """Issue 43: with 3 models planned and one lost, the rule never falls back to the 2 models' smaller prompt-level
    SE (which made ``gpt2/tau-helps/noise=2`` agree): the estimate is refused, naming units found and planned; without
    a plan, fewer units than the rule needs are refused too."""
    two = across_units_or(unit="model", planned="models")(_Planned(3), _sample([1.0, 3.0], ses=[0.1, 0.1]))
    assert math.isnan(two.value) and two.refused.startswith("too few units: 2 of the 3 models the config runs")
    unplanned = across_units_or(unit="model")(None, _sample([1.0, 3.0], ses=[0.1, 0.1]))
    assert "2 model(s) have a result; an SE across them needs at least 3" in unplanned.refused
    lost = across_units_or(planned=2)(None, _sample([1.0], ses=[0.1]))  # a within rule loses a unit too
    assert lost.refused.startswith("too few units: 1 of the 2 units")
    assert across_units_or(planned=1)(None, _sample([1.0], ses=[0.1])).refused == ""


def test_without_fallback_a_design_of_few_units_is_refused_never_its_within_se():
    """``fallback=False`` (one trained network's SE over its prompts leaves out training): a design that runs 1 or 2
    units is "too few units", where the default rule would take their own SEs; from 3 on, across them."""
    rule = across_units_or(unit="network", planned=1, fallback=False)
    one = rule(None, _sample([0.05], ses=[0.001]))
    assert math.isnan(one.value) and "1 network(s) have a result; an SE across them needs at least 3" in one.refused
    assert across_units_or(unit="network", planned=1)(None, _sample([0.05], ses=[0.001])).refused == ""
    three = across_units_or(unit="network", planned=3, fallback=False)(None, _sample([1.0, 2.0, 3.0], ses=[0.1] * 3))
    assert three.refused == "" and three.dof == 2 and math.isclose(three.se, 1 / math.sqrt(3))
    lost = across_units_or(unit="network", planned=4, fallback=False)(None, _sample([1.0, 2.0, 3.0]))
    assert lost.refused.startswith("too few units: 3 of the 4 networks the config runs")
    assert "fewer than 3 networks: not judged); a planned unit" in rule.describe("networks")


def test_within_units_reads_its_se_and_the_prompts_behind_it():
    rule = within_units(lambda cfg, s: np.full(len(s.values), 0.3), n_column="n_test")
    est = rule(None, _sample([1.0, 2.0, 3.0, 4.0], n_test=500))
    assert est.se == pytest.approx(0.3 * 2 / 4) and est.dof is None and est.n == 500


def test_measured_as_formats_the_estimate_and_the_sample():
    s = _sample([0.5, 1.5], base=[2.0, 2.0])
    text = measured_as("{v:+.1f} ({a:.2f} vs {b:.2f}, mean {d:.1f}, {k} seeds, n {n})")
    assert text(None, s, Estimate(1.0, 0.1, n=7)) == "+1.0 (3.00 vs 2.00, mean 1.0, 2 seeds, n 7)"
    assert measured_as("{v}")(None, s, Estimate(math.nan)) == "—"
    assert measured_as("{v}", fewest=3)(None, s, Estimate(1.0)) == "—"  # two units, three needed
    assert measured_as("{rows[x]:.2f} / {base[x]:.2f}")(None, s, Estimate(1.0)) == "1.00 / 1.00"  # column means


def test_clopper_pearson_is_exact_at_the_edges_and_covers_the_share():
    assert clopper_pearson(0, 10) == (0.0, pytest.approx(1 - 0.025 ** (1 / 10)))  # all misses: 1 − (α/2)^(1/n)
    assert clopper_pearson(10, 10) == (pytest.approx(0.025 ** (1 / 10)), 1.0)
    lo, hi = clopper_pearson(3, 10)
    assert lo < 0.3 < hi and (lo, hi) == pytest.approx((0.0667, 0.6525), abs=1e-4)


def _first_clear(hits: float, n: int, above: float) -> int:
    """The fewest trials, one at a time, at which the share with every added trial a hit has its Clopper–Pearson
    interval, at its wider side around the share, wholly above ``above``."""
    m = n
    while True:
        k = hits + m - n
        lo, hi = clopper_pearson(k, m)
        if k / m - max(k / m - lo, hi - k / m) > above:
            return m
        m += 1


def test_clopper_pearson_trials_counts_the_trials_that_clear_a_share_exactly():
    assert clopper_pearson_trials(1, 1, 0.9) == 36  # every trial a hit: the lower bound 0.025^(1/m) > 0.9 from m = 36
    assert 0.025 ** (1 / 35) < 0.9 < 0.025 ** (1 / 36)
    assert clopper_pearson_trials(2, 3, 0.9) == _first_clear(2, 3, 0.9) == 54  # one miss in three
    assert clopper_pearson_trials(2.5, 3, 0.9) == _first_clear(2.5, 3, 0.9) == 45  # a half-matching seed
    assert clopper_pearson_trials(36, 36, 0.9) == 36  # clears already
    assert clopper_pearson_trials(1, 1, 0.9, most=35) is None
    assert clopper_pearson_trials(0, 2000, 0.9) is None  # 2000 misses: no 10,000 trials clear 0.9


def test_not_configured_names_what_the_preset_lacks():
    class Cfg:
        sizes = (16, 64)
        empty = ()

    assert not_configured("sizes", 64)(Cfg, None) == ""
    assert not_configured("sizes", 64, 256)(Cfg, None) == "not run in this preset: `sizes` lacks 256"
    assert not_configured("empty")(Cfg, None) == "not run in this preset: `empty` is empty"


def test_whole_rows_is_one_zero_per_row():
    assert whole_rows(pd.DataFrame({"x": [1, 2, 3]})).tolist() == [0.0, 0.0, 0.0]


def test_multihead_pooled_columns_read_a_fragmented_frame_without_a_performance_warning():
    rows = pd.DataFrame({"H": [1, 2, 4], "seed": [0, 0, 0]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pd.errors.PerformanceWarning)
        for i in range(120):  # one column at a time, as results tables grow: a fragmented frame
            rows[f"c{i}"] = float(i)
        rows["diag_gamma"] = [0.1, 0.2, 0.3]
        by_model = rows.set_index(["H", "seed"])
    with warnings.catch_warnings():
        warnings.simplefilter("error", pd.errors.PerformanceWarning)
        pooled = mh.multi("diag_gamma", by_model)
        by_seed = mh.multi("diag_gamma", rows.set_index(["seed"]))
    assert np.isnan(pooled[0]) and pooled[1:].tolist() == [0.2, 0.3]
    assert np.isnan(by_seed[0]) and by_seed[1:].tolist() == [0.2, 0.3]
