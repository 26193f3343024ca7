"""Resampling a claim's units at its least favourable truth (issue 43): the one mechanism behind the row-level
calibration (:mod:`iclab.claims._calibrate_rows`) and the judge's check of an "agrees" from few units
(:func:`small_sample_gate`, called by :mod:`iclab.claims._records`). A draw resamples the units of a
:class:`~iclab.claims._sample.Sample` with replacement, moves every per-unit value by one constant so the
combined estimate sits at the truth, and judges it with the function it is given (the records' ``judge_sample``:
this module sits below them and imports none of them).

The least favourable truths, from the test record of the run's own verdict: an effect at 0 (a quantity measured
from its bound: the bound), an equivalence with its gap at ±ε·|target|, a paper value at p ± Δ, an absence at ±δ.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping

import numpy as np

from iclab.claims._rule import BASE
from iclab.claims._sample import Sample
from iclab.stats import AGREES, Verdict, claim_rng

__all__ = ["GATE_DRAWS", "GATE_MAX_UNITS", "NOMINAL", "TRUTHS", "centre", "follows_shift", "shift_sign", "rate",
           "placed_rate", "small_sample_gate", "mc_se", "within_nominal"]  # fmt: skip

#: the false-agree rate a claim may reach at its least favourable truth (plus 2 Monte Carlo SE)
NOMINAL = 0.05
#: the judge resamples an "agrees" from at most this many units (:func:`small_sample_gate`)
GATE_MAX_UNITS = 20
#: draws per least favourable truth of that check
GATE_DRAWS = 200


def mc_se(r: float, draws: int) -> float:
    """The Monte Carlo SE of a rate ``r`` of "agrees" over ``draws`` draws: √(r(1 − r)/draws)."""
    return math.sqrt(r * (1 - r) / draws)


def within_nominal(r: float, draws: int) -> bool:
    """The line every simulated false-agree rate is held to: ``r`` over ``draws`` draws is at most
    5 % + 2 Monte Carlo SE (:func:`mc_se`)."""
    return r <= NOMINAL + 2 * mc_se(r, draws)


def small_sample_gate(rec: Any, config: Any, sample: Sample, verdict: Verdict, screens, judge: Callable) -> str:
    """Why an "agrees" from few units (2 … :data:`GATE_MAX_UNITS`) cannot be trusted, else "": the judge resamples
    the claim's own units at its least favourable truth (as the row-level calibration does, :data:`GATE_DRAWS`
    draws per truth, seeded by the claim) and refuses the agreement when its test agrees there more often than
    5 % + 2 Monte Carlo SE. A Student-t band assumes roughly normal units; a few units with one far from the
    others do not give it that (a resample misses the far one, and the band of those left is narrow), and no
    test on the values alone can tell — the resampling can. Issue 43: the judge refuses a verdict its own
    calibration says cannot fail. ``judge`` judges a drawn sample (the records' ``judge_sample``)."""
    record = verdict.test_record
    n = len(sample.values)
    if not record or record.get("judge") not in TRUTHS or not 2 <= n <= GATE_MAX_UNITS:
        return ""
    if not follows_shift(rec, config, sample):
        return ""
    rng = claim_rng(0, "judge", rec.id)
    worst = max(
        ((rate(rec, config, [sample], t, record, screens, GATE_DRAWS, rng, sd=0.0, judge=judge), label)
         for label, t in TRUTHS[record["judge"]](record)),
        key=lambda rl: rl[0],
    )  # fmt: skip
    found, label = worst
    if within_nominal(found, GATE_DRAWS):
        return ""
    return (
        f"too few units to trust the band: resampling its {n} units at the least favourable truth ({label}), the "
        f"test agrees {found:.0%} of the time (more than {NOMINAL:.0%}); the units are too uneven for a band from {n} "
        "of them, and more units would judge it"
    )


# The least favourable truths: (label, the record's estimate at that truth), from the run's test record.
def _direction(r) -> list[tuple[str, float]]:
    return [("true effect 0", 0.0)]


def _equivalence(r) -> list[tuple[str, float]]:
    tol = abs(r["target"]) * r["rel_tol"]
    return [(f"gap at {s * r['rel_tol']:+.3g} of the target", r["target"] + s * tol) for s in (+1, -1)]


def _value(r) -> list[tuple[str, float]]:
    return [(f"true value at the tolerance's edge {s * r['tol']:+.3g}", r["paper"] + s * r["tol"]) for s in (+1, -1)]


def _absence(r) -> list[tuple[str, float]]:
    return [(f"true effect {s * r['smallest']:+.3g}", s * r["smallest"]) for s in (+1, -1)]


TRUTHS = {"direction": _direction, "equivalence": _equivalence, "value": _value, "absence": _absence}


class _Units:
    """The units of a sample, ready to resample: its rows (and baseline rows) on its units, in their order (a
    paired sample's selection can hold units its baseline lacks), taken once per sample, consolidated for a fast
    ``take``."""

    def __init__(self, rec: Any, s: Sample) -> None:
        self.contrast, self.s = rec.measure.contrast, s
        self.rows = (s.rows.loc[s.units] if s.base is not None else s.rows).copy()
        self.base = None if s.base is None else s.base.loc[s.units]

    def draw(self, idx: np.ndarray, delta: float) -> Sample:
        """The units ``idx`` (with repeats), every per-unit value moved by ``delta`` (``a`` with it, by the
        measure's contrast); rows, baseline rows and per-unit SEs follow the units."""
        s = self.s
        a = s.a[idx] + delta if self.contrast == "minus" else s.a[idx] * math.exp(delta)
        return Sample(
            rows=self.rows.take(idx),
            base=None if self.base is None else self.base.take(idx),
            units=s.units[idx],
            a=a,
            b=None if s.b is None else s.b[idx],
            values=s.values[idx] + delta,
            ses=None if s.ses is None else s.ses[idx],
        )


def shift_sign(rec: Any, config: Any, s: Sample) -> int:
    """How the combine rule's estimate moves when every per-unit value moves by δ: +1 by exactly δ, −1 by exactly
    −δ (a quantity measured from a bound: bound − mean), 0 when it does not follow (a rule that reads whole rows:
    a shift could not put it at a chosen truth). A band given as an interval must move with the estimate, its
    width unchanged; an SE may change with the value it is the SE of (a binomial SE at the shifted share): the
    truth is where the estimate sits, and the band is what the rule gives there. Tried at two shifts."""
    est = rec.measure.combine(config, s)
    if est.refused or not math.isfinite(est.value):
        return 1  # a refusal is judged as it is, at any shift
    scale = max(abs(est.value), est.se or 0.0, 1e-3)
    tol = 1e-6 * scale
    signs = set()
    for delta in (0.37 * scale, -0.23 * scale):
        moved = rec.measure.combine(config, _Units(rec, s).draw(np.arange(len(s.values)), delta))
        if moved.refused or not math.isfinite(moved.value):
            return 0
        step = moved.value - est.value
        sign = 1 if abs(step - delta) <= tol else (-1 if abs(step + delta) <= tol else 0)
        if sign and (est.ci is None) != (moved.ci is None):
            sign = 0
        if sign and est.ci is not None:  # the interval moves with the estimate, its width unchanged
            lo, hi = (float(x) for x in est.ci)
            lo2, hi2 = (float(x) for x in moved.ci)
            if not (
                math.isclose(lo2 - lo, sign * delta, abs_tol=tol) and math.isclose(hi2 - hi, sign * delta, abs_tol=tol)
            ):
                sign = 0
        signs.add(sign)
    return signs.pop() if len(signs) == 1 else 0


def follows_shift(rec: Any, config: Any, s: Sample) -> bool:
    """Whether the combine rule's estimate follows a shift of the per-unit values (:func:`shift_sign`)."""
    return shift_sign(rec, config, s) != 0


def centre(rec: Any, config: Any, s: Sample, truth: float, record: Mapping[str, Any]) -> float | None:
    """δ that puts the combined estimate of ``s`` at ``truth`` (through :func:`shift_sign`: a rule whose estimate
    moves by −δ is moved by the opposite shift), or None when the combine rule refuses ``s``. The record's estimate
    is the combined value, plus the baseline's mean for an equivalence against the baseline."""
    est = rec.measure.combine(config, s)
    if est.refused or not math.isfinite(est.value):
        return None
    offset = record["target"] if record["judge"] == "equivalence" and rec.rule.target == BASE else 0.0
    return (truth - offset - est.value) * (shift_sign(rec, config, s) or 1)


def rate(rec, config, samples, truth, record, screens, draws, rng, *, sd: float, judge: Callable,
         size: int | None = None) -> float:  # fmt: skip
    """The rate of "agrees" over ``draws`` draws: each picks one of ``samples`` (the claim's sample with a unit lost
    or a cell failed, or the "not measured" verdict that loss gives), resamples its units and centres them at
    ``truth`` (a sample of one unit: its value drawn at ``truth`` with SE ``sd``). A draw whose judging raises does
    not agree, as in a run (:data:`~iclab.claims._records.RAISED`). ``size``: units per draw (default: as many as
    the sample has; :func:`~iclab.claims._pilot.pilot_minimum_units` draws a pilot's units n at a time)."""
    agrees = 0
    centred: dict[int, float | None] = {}
    units: dict[int, _Units] = {}
    for _ in range(draws):
        k = int(rng.integers(len(samples)))
        s = samples[k]
        if isinstance(s, Verdict):
            agrees += s.verdict == AGREES
            continue
        n = len(s.values)
        if not n:
            continue  # no unit left: nothing to judge, never "agrees"
        if k not in centred:
            centred[k] = centre(rec, config, s, truth, record)
            units[k] = _Units(rec, s)
        delta = centred[k]
        idx = rng.integers(n, size=n if size is None else size)
        noise = float(rng.normal(0.0, sd)) if n == 1 else 0.0
        drawn = units[k].draw(idx, (0.0 if delta is None else delta) + noise)
        try:
            agrees += judge(rec, config, drawn, screens).verdict == AGREES
        except Exception:  # noqa: BLE001 - a claim whose judging raises is "not judged" in a run too
            pass
    return agrees / draws


def placed_rate(rec, config, samples, truth, record, screens, draws, rng, *, judge: Callable, place: Callable) -> float:
    """The rate of "agrees" over ``draws`` draws for a combine rule that reads whole rows and says itself how its
    rows sit at a truth (its ``at_truth(config, sample, truth, rng) -> Sample``: the rows redrawn so that the combined
    estimate is ``truth`` in expectation, with the rule's own sampling noise). Each draw picks one of ``samples``
    (the claim's sample with a unit lost or a cell failed, or the "not measured" verdict that loss gives) and judges
    the rows placed there; a draw whose judging raises does not agree (as in a run), while a placing that raises (a
    truth the rule cannot place) is an error: the simulation, not the claim, is wrong."""
    offset = record["target"] if record["judge"] == "equivalence" and rec.rule.target == BASE else 0.0
    agrees = 0
    for _ in range(draws):
        s = samples[int(rng.integers(len(samples)))]
        if isinstance(s, Verdict):
            agrees += s.verdict == AGREES
            continue
        placed = place(config, s, truth - offset, rng)
        try:
            agrees += judge(rec, config, placed, screens).verdict == AGREES
        except Exception:  # noqa: BLE001 - a claim whose judging raises is "not judged" in a run too
            pass
    return agrees / draws
