"""Row-level calibration of the judge (issue 43, item 2): every claim record judged, through the code path of a run
(:func:`~iclab.claims._records.judge_sample`), on tables drawn at its least favourable truth.

The statistic-level calibration (:func:`iclab.stats.calibrate`) draws a test's statistic from a normal law with the
run's SE. This one starts one level lower, from the rows: a finished run (a shipped reference run, used as a pilot)
gives the record's :class:`~iclab.claims._sample.Sample` — its units of replication and their per-unit values,
outliers and all — and each draw

1. resamples the units with replacement (a bootstrap of the units),
2. shifts every per-unit value by one constant δ, chosen so that the combined estimate of the units being resampled
   sits exactly at the least favourable truth,
3. judges the drawn sample with the record's own combine rule, test, note and gates.

The least favourable truth comes from the run's own test record (the thresholds the judge applied):

======================  =============================================================================
test                    truth simulated
======================  =============================================================================
effect direction        true effect 0 (for a quantity measured from its bound: the bound itself)
equivalence             the gap at ±ε·|target| (both edges; the worse is reported)
paper value             the true value at the tolerance's edge p ± Δ (both edges)
absence                 the effect at ±δ (both edges)
======================  =============================================================================

Each truth is drawn in three settings: all units; **one unit lost** (every row of one unit removed from the table —
a model, a seed, a question group lost everywhere — before the claim's sample is built, then the units left are
resampled and re-centred at the truth); **one cell failed** (a random row of the claim's cells removed from the table
before its sample is built, so a claim over a table that names every cell it needs is "not measured"). A claim
passes when, in every setting, the rate r of "agrees" over ``draws`` draws is at most 5 % + 2 SE_MC,
SE_MC = √(r(1 − r)/draws).

The draws are judged by the test alone (:func:`~iclab.claims._records.judge_sample`: combine, test, note,
gates). A run adds one check to an "agrees" from 2–20 units, the small-sample gate
(:func:`~iclab.claims._resample.small_sample_gate`), which only ever removes agreements: a claim within 5 % + 2 SE_MC
without it is within it with it. A claim over that line with the test alone is simulated again, with fresh draws
and as many of them (fewer would widen SE_MC and loosen the line), through the judge as a run calls it
(:func:`~iclab.claims._records.judge_as_run`); its row says so (``as_run``), and it passes on that simulation. The gate
resamples what a run observed: a run whose units happen to miss the far one sees a tight sample, and no resampling of
it can tell; so a claim whose few units are uneven can stay over the line with the gate too, and only more units
decide it.

A claim that declares a minimum of units fixed from a pilot (:class:`~iclab.claims._gates.PilotMinimum`, computed
once by :func:`~iclab.claims._pilot.pilot_minimum_units` from the reference run itself) and has fewer units here is
"too few units" in every draw; its row says so (``minimum``), and the search's rates at the minimum are in the record.

A claim of one unit (one SGD run whose SE comes from its prompts) has nothing to resample: its unit's value is drawn
from a normal law at the truth with the unit's own SE, and one unit lost leaves nothing to judge. A combine rule whose
estimate does not follow a shift of the per-unit values (one that reads whole rows: a curve, an RMS over cells) may
say itself how its rows sit at a truth (``combine.at_truth(config, sample, truth, rng) -> Sample``, the rows redrawn
with the rule's own sampling noise; :func:`~iclab.claims._resample.placed_rate`); its row says so. A rule whose
estimate is bounded (``combine.bounds``, a share in [0, 1]) is simulated only at the truths inside its bounds. An
every-cell claim puts one cell at the edge of its margin and the others at their targets, each cell's units drawn
as above (:mod:`iclab.claims._calibrate_cells`). Not simulated, with the reason in the table: a combine rule that
reads whole rows and does not; a claim whose run verdict has no test (a refusal, a claim not measured).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import pandas as pd

from iclab.claims._gates import PilotMinimum
from iclab.claims._calibrate_cells import every_cell_rates, failed_tables, lost_tables, unit_sd
from iclab.claims._judge import claim_gate, downgrade
from iclab.claims._records import ClaimRecord, Sample, _sample, judge_as_run, judge_records, judge_sample
from iclab.claims._resample import (
    GATE_MAX_UNITS,
    NOMINAL,
    TRUTHS,
    follows_shift,
    mc_se,
    placed_rate,
    rate,
    within_nominal,
)
from iclab.stats import Verdict, claim_rng

__all__ = ["NOMINAL", "RowCalibration", "calibrate_records"]

#: at most this many distinct failed cells are tried per claim (each rebuilds the claim's sample once)
MAX_FAILED_CELLS = 40
#: an every-cell claim rebuilds every cell's sample per lost unit or failed cell (hundreds of cells on a curve table)
EVERY_CELL_TABLES = 8
_SETTINGS = ("all units", "one unit lost", "one cell failed")


@dataclass(frozen=True)
class RowCalibration:
    """One claim's row-level calibration: ``rates`` maps each setting (all units, one unit lost, one cell failed)
    to its false-agree rate at the worst truth simulated (``truth``); ``why`` says why a claim was not simulated
    (then ``rates`` is empty and ``passes`` None)."""

    experiment: str
    claim: str
    test: str
    units: int
    verdict: str
    truth: str = ""
    draws: int = 0
    rates: Mapping[str, float] = dataclasses.field(default_factory=dict)
    why: str = ""
    #: the rates above come from the judge as a run calls it (the small-sample gate included): the test alone agreed
    #: more than 5 % + 2 SE_MC of the time, at ``alone`` (the worst setting's rate)
    as_run: bool = False
    alone: float | None = None
    #: the minimum of units the record declares, fixed from a pilot (:class:`~iclab.claims._gates.PilotMinimum`;
    #: 0: none): a draw of fewer units than it is "too few units", never "agrees"
    minimum: int = 0

    def mc_se(self, setting: str) -> float:
        return mc_se(self.rates[setting], self.draws)

    @property
    def passes(self) -> bool | None:
        if not self.rates:
            return None
        return all(within_nominal(r, self.draws) for r in self.rates.values())


def calibrate_records(
    records: Sequence[ClaimRecord],
    config: Any,
    rows: pd.DataFrame,
    *,
    experiment: str,
    draws: int = 1000,
    seed: int = 0,
    planned: Sequence[Mapping[str, Any]] | None = None,
    only: set[str] | None = None,
) -> list[RowCalibration]:
    """The :class:`RowCalibration` of every record (or of those whose ids are in ``only``; every record is still
    judged, as a screen another record depends on is one), in order, on the run's ``rows`` (what its records read) and
    ``config``; each claim's draws come from :func:`iclab.stats.claim_rng` ``(seed, experiment, claim id)``, so one
    claim's row does not depend on the others. ``planned`` (the run's grid) is the judge's, as in a run: a lost
    unit or a failed cell that a claim reads makes it "not measured"."""
    verdicts = judge_records(records, config, rows, planned)
    by_id = {r.id: r for r in records}
    screens = {cid: downgrade(v, claim_gate(by_id[cid], config)) for cid, v in verdicts.items()}
    out = []
    for rec in records if only is None else [r for r in records if r.id in only]:
        rng = claim_rng(seed, experiment, rec.id)
        out.append(_one(rec, config, rows, verdicts[rec.id], screens, draws, rng, experiment, planned, seed))
    return out


def _one(rec, config, rows, verdict: Verdict, screens, draws: int, rng, experiment: str, planned, seed: int = 0
         ) -> RowCalibration:  # fmt: skip
    base = RowCalibration(experiment, rec.id, rec.rule.kind, 0, verdict.verdict)
    if rec.rule.kind == "every cell":  # one cell at the edge of its margin, the others at their targets
        got = every_cell_rates(rec, config, rows, planned, screens, draws, rng, EVERY_CELL_TABLES)
        if isinstance(got, str):
            return dataclasses.replace(base, why=got)
        truth, rates, units = got
        return dataclasses.replace(base, units=units, truth=truth, draws=draws, rates=rates)
    sample = _sample(rec, config, rows, planned)
    if isinstance(sample, Verdict):
        return dataclasses.replace(base, why=f"no sample: {sample.reason}")
    n = len(sample.values)
    minimum = max((g.minimum for g in rec.measure.gates if isinstance(g, PilotMinimum)), default=0)
    base = dataclasses.replace(base, units=n, minimum=minimum)
    record = verdict.test_record
    if not record or record.get("judge") not in TRUTHS:
        return dataclasses.replace(base, why=f"the run's verdict has no test ({verdict.reason or verdict.verdict})")
    follows = follows_shift(rec, config, sample)
    place = None if follows else getattr(rec.measure.combine, "at_truth", None)  # rows it places at a truth itself
    if not follows and place is None:
        return dataclasses.replace(base, why="its combine rule reads whole rows: its estimate does not follow a shift")
    sd = 0.0
    if n == 1 and place is None:  # nothing to resample: the unit's value is drawn from a normal law with its own SE
        sd = unit_sd(rec, config, sample)
        if not sd > 0:
            return dataclasses.replace(base, why="one unit without an uncertainty of its own: nothing to draw")
    settings = {
        "all units": [sample],
        "one unit lost": _lost_samples(rec, config, rows, sample, rng, planned),
        "one cell failed": _failed_samples(rec, config, rows, rng, planned),
    }

    def worst_truth(judge, rng, draws: int) -> RowCalibration:
        worst: tuple[float, str, dict] | None = None
        how = " (rows placed by its combine rule)" if place else (" (one unit: drawn from its SE)" if n == 1 else "")
        for label, truth in _possible(TRUTHS[record["judge"]](record), rec.measure.combine):
            if place is None:
                rates = {k: rate(rec, config, v, truth, record, screens, draws, rng, sd=sd, judge=judge)
                         for k, v in settings.items()}  # fmt: skip
            else:
                rates = {k: placed_rate(rec, config, v, truth, record, screens, draws, rng, judge=judge, place=place)
                         for k, v in settings.items()}  # fmt: skip
            if worst is None or max(rates.values()) > worst[0]:
                worst = (max(rates.values()), label + how, rates)
        return dataclasses.replace(base, truth=worst[1], draws=draws, rates=worst[2])

    alone = worst_truth(judge_sample, rng, draws)
    if alone.passes or not follows or not 2 <= n <= GATE_MAX_UNITS:  # the gate cannot change these rates
        return alone
    again = worst_truth(judge_as_run, claim_rng(seed, experiment, f"{rec.id} (as run)"), draws)  # as many: as strict
    return dataclasses.replace(again, as_run=True, alone=max(alone.rates.values()))


def _possible(truths: list[tuple[str, float]], combine) -> list[tuple[str, float]]:
    """The truths an estimate can take: those inside its combine rule's ``bounds`` (a share in [0, 1] has no truth at
    1.05, the far edge of a 5 % tolerance around 1), all of them when it declares none."""
    lo, hi = getattr(combine, "bounds", (-math.inf, math.inf))
    return [(label, t) for label, t in truths if lo <= t <= hi]


def _lost_samples(
    rec: ClaimRecord, config: Any, rows: pd.DataFrame, sample: Sample, rng, planned
) -> list[Sample | Verdict]:
    """The claim's sample (or its "not measured" verdict) with every row of one unit removed from the table — a
    model, a seed, a question group lost everywhere — for up to :data:`MAX_FAILED_CELLS` of its units."""
    out = [_sample(rec, config, t, planned) for t in lost_tables(rec, rows, sample, rng, MAX_FAILED_CELLS)]
    return out or [sample]


def _failed_samples(rec: ClaimRecord, config: Any, rows: pd.DataFrame, rng, planned) -> list[Sample | Verdict]:
    """The claim's sample (or its "not measured" verdict) with one row of its cells removed, for up to
    :data:`MAX_FAILED_CELLS` of its rows: the selection, the baseline and every cell ``Measure.cells`` names."""
    out = [_sample(rec, config, t, planned) for t in failed_tables(rec, config, rows, rng, MAX_FAILED_CELLS)]
    return out or [_sample(rec, config, rows, planned)]
