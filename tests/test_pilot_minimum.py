"""A claim's minimum of units fixed from a pilot run (issue 43; ``iclab.claims._pilot``), on made-up tables whose
answer is known: well-behaved normal units need no more than they have; units with one far from the rest need more,
at the rate a resample misses the far unit, (1 − 1/k)^n; and the record's own declared minimum is left out of the
search (it would refuse every smaller count)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from iclab.claims._pilot import pilot_minimum_units
from iclab.claims._records import ClaimRecord, Measure, PilotMinimum, Rule

RULE = Rule("equivalence", rel_tol=0.05, target=1.0)


def _rows(values) -> pd.DataFrame:
    return pd.DataFrame([{"part": "p", "seed": s, "G": v} for s, v in enumerate(values)])


def _record(*gates) -> ClaimRecord:
    return ClaimRecord(
        "made/up", "G is what theory says", "arXiv:0000.00000, Fig. 1", "theory vs simulation", quantity="per seed, G",
        measure=Measure({"part": "p"}, "G", ("seed",), gates=gates), rule=RULE,
    )  # fmt: skip


def _search(rec, values, **kw):
    return pilot_minimum_units(rec, None, _rows(values), experiment="made-up", **kw)


def _normal(k: int) -> np.ndarray:
    return 1.0 + np.random.default_rng(7).normal(0, 0.02, k)


def test_normal_units_need_no_more_than_they_have():
    """25 normal units (above the small-sample gate): the t band holds, the count passes, the minimum is the count."""
    s = _search(_record(), _normal(25), cap=40)
    assert (s.minimum, s.capped, s.units, s.draws) == (25, False, 25, 1000), s
    assert s.rates == {25: s.rate} and 0.005 <= s.rate <= 0.05 + 2 * s.mc_se(s.rate), s  # can agree, rarely
    assert s.confirmed <= 0.05 + 2 * s.mc_se(s.confirmed)


def test_one_far_unit_needs_more_units_at_the_rate_a_resample_misses_it():
    """21 units, 20 near 1 and one at 2. At the upper edge of the tolerance (1.05) the near units sit at 1.0024: a
    draw of n that misses the far unit (probability (20/21)^n) is tight and inside the tolerance, so it agrees; one
    that holds it is wide (up to n ≈ 57) and never does. So the rate at n is (20/21)^n — 0.36 at 21, 0.28 at 26 —
    and no count up to a cap of 26 passes: the minimum is the cap, and it says so."""
    values = np.r_[1.0 + np.random.default_rng(3).normal(0, 0.001, 20), 2.0]
    s = _search(_record(), values, cap=26)
    assert s.capped and s.minimum == 26 and sorted(s.rates) == list(range(21, 27)), s
    assert s.truth.startswith("gap at +0.05"), s.truth
    for n, r in s.rates.items():
        miss = (20 / 21) ** n
        assert abs(r - miss) <= 4 * math.sqrt(miss * (1 - miss) / s.draws), (n, r, miss)


def test_few_uneven_units_judged_as_a_run_need_more_than_they_have(monkeypatch):
    """Five units, one far (the row-level calibration's case): even as a run judges them, the small-sample gate
    included, five agree far more than 5 % of the time at the edge; the minimum is above five."""
    import iclab.claims._resample as resample

    monkeypatch.setattr(resample, "GATE_DRAWS", 40)  # the gate's own resampling, smaller here for time
    s = _search(_record(), [1.0, 1.002, 0.998, 1.001, 1.09], draws=300, cap=7)
    assert s.minimum > 5 and s.rates[5] > 0.05 + 2 * math.sqrt(s.rates[5] * (1 - s.rates[5]) / 300), s


def test_the_record_s_own_minimum_is_left_out_of_the_search():
    """A declared minimum of 40 would refuse every draw of fewer: the search must not read it (rates of 0)."""
    plain = _search(_record(), _normal(25), cap=40)
    gated = _search(_record(PilotMinimum(40, "the pilot")), _normal(25), cap=40)
    assert gated == plain and gated.rate > 0, (gated, plain)


def test_a_pilot_that_cannot_size_the_claim_is_refused():
    with pytest.raises(ValueError, match="nothing to resample"):
        _search(_record(), [1.0])
