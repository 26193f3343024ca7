r"""A claim's minimum of units, fixed once from a pilot run (issue 43): the size a
:class:`~iclab.claims._gates.PilotMinimum` gate declares, computed here by a script, never while a run is judged.

A Student-t band assumes roughly normal units. A few units with one far from the others do not give it that: the
row-level calibration (:mod:`iclab.claims._calibrate_rows`) finds claims of 3–15 units whose test agrees at the
least favourable truth far more often than 5 %, and the small-sample gate
(:func:`~iclab.claims._resample.small_sample_gate`) cannot catch every such agreement, since it resamples only the
units a run observed. More units decide them; how many is read off a pilot — the shipped reference run — before
the run that judges, and written in the record. The sample size is fixed in advance and never topped up by looking
at the run's own verdict (optional stopping would inflate the very false-agree rate it is meant to bound).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from iclab.claims._gates import PilotMinimum, Screen
from iclab.claims._records import ClaimRecord, Sample, _sample, judge_as_run, judge_sample
from iclab.claims._resample import TRUTHS, follows_shift, mc_se, rate, within_nominal
from iclab.stats import Verdict, claim_rng

__all__ = ["CAP", "PilotSearch", "pilot_minimum_units"]

#: the largest minimum the search tries: where it stops, the record declares this cap and says so
CAP = 200


@dataclass(frozen=True)
class PilotSearch:
    """What :func:`pilot_minimum_units` found for claim ``claim``: the pilot's ``units``; ``minimum``, the smallest
    count that passes (the cap when ``capped``: none up to it did); at ``minimum``, the worst least favourable
    ``truth``, its rate of "agrees" over ``draws`` draws (``rate``) and on as many fresh draws (``confirmed``);
    ``rates``, the worst rate of every count tried; ``rejected``, the counts below the minimum that passed once but
    not on their fresh draws, with that rate."""

    claim: str
    units: int
    minimum: int
    capped: bool
    draws: int
    truth: str
    rate: float
    confirmed: float
    rates: Mapping[int, float]
    rejected: Mapping[int, float] = dataclasses.field(default_factory=dict)

    def mc_se(self, r: float) -> float:
        return mc_se(r, self.draws)


def pilot_minimum_units(
    rec: ClaimRecord,
    config: Any,
    rows: pd.DataFrame,
    *,
    experiment: str,
    planned: Sequence[Mapping[str, Any]] | None = None,
    screens: Mapping[str, Verdict] | None = None,
    draws: int = 1000,
    cap: int = CAP,
    seed: int = 0,
) -> PilotSearch:
    r"""The smallest number of units at which claim ``rec``'s test, judged as a run judges it, agrees at most
    5 % + 2 Monte Carlo SE of the time at its least favourable truth, the units drawn from a pilot run's (``rows``
    and ``config`` of that run, ``planned`` its grid, ``screens`` the verdicts of the records its
    :class:`~iclab.claims._gates.Screen` gates name).

    The pilot's sample gives the per-unit values :math:`x_1, \dots, x_k` and the combine rule's estimate
    :math:`\hat\theta(x)` (a mean: :math:`\bar x`). For each least favourable truth :math:`\theta_0` of the pilot
    verdict's test record (:data:`~iclab.claims._resample.TRUTHS`: an effect at 0, an equivalence gap at
    :math:`\pm\varepsilon|t|`, a paper value at :math:`p \pm \Delta`, an absence at :math:`\pm\delta`), the values
    are moved by one constant :math:`\delta = \theta_0 - \hat\theta(x)`
    (:func:`~iclab.claims._resample.centre`), so the law :math:`\hat F_0`, uniform on
    :math:`\{x_i + \delta\}`, has its estimand exactly at :math:`\theta_0` and the pilot's spread, far unit and
    all — the plug-in estimate of the units' law, placed where a false claim is hardest to refuse. A count
    :math:`n` is simulated by ``draws`` samples of :math:`n` units drawn from :math:`\hat F_0` with replacement
    (:func:`~iclab.claims._resample.rate` with ``size = n``), each judged by
    :func:`~iclab.claims._records.judge_as_run` — the combine rule, the test, the record's gates, and from 2 to
    20 units the small-sample gate, as a run of :math:`n` units would be. With :math:`r_n` the larger rate of
    "agrees" over the truths, :math:`n` passes when

    .. math:: r_n \le 0.05 + 2\sqrt{r_n (1 - r_n) / D}, \qquad D = \texttt{draws},

    the line of the row-level calibration. The search goes up one unit at a time from the pilot's count :math:`k`
    (a claim that passes there returns :math:`k`: it needs no more) to ``cap``; the first :math:`n` that passes is
    simulated again on as many fresh draws and kept only when that passes too (the rate is noisy, and a count that
    falls under the line by Monte Carlo luck would otherwise set the minimum; one that does not is passed over and
    the search goes on: ``rejected``). None up to ``cap``: the minimum is ``cap``, ``capped``. The rate is not
    monotone in :math:`n` draw for draw, and the search does not claim that every count above the minimum passes —
    only that the first count to pass twice is the one declared. A drawn sample is judged with its units in the
    pilot's order, as a run's rows are sorted by unit, and without the texts a verdict carries (``measured``,
    ``note``): its verdict is then a function of which units were drawn, and a repeat is judged once.

    Why more units help: a resample of :math:`n` misses a far unit of :math:`k` with probability
    :math:`(1 - 1/k)^n`, which falls geometrically, and the t band's error for a skewed law shrinks like
    :math:`1/\sqrt n`. Why "all units" is the only setting searched: a run at the minimum that loses a unit has
    fewer than the minimum (the :class:`~iclab.claims._gates.PilotMinimum` gate refuses it), and a failed cell
    makes the claim "not measured"; neither can agree. What it cannot do: :math:`\hat F_0` is the pilot's
    spread, not the truth's — the minimum is an estimate, fixed once and written in the record, never re-run on the
    units of the run it judges. A record's own :class:`~iclab.claims._gates.PilotMinimum` gate is left out of the
    simulation (it would refuse every count below itself).

    Each count's draws come from :func:`iclab.stats.claim_rng` ``(seed, experiment, "ID (pilot, n = N)")`` (the
    confirming draws: ``"… confirmed"``), so a count's rate does not depend on which counts were tried before it.
    Raises ValueError when the pilot cannot size the claim: an every-cell rule, no sample, a verdict without a test,
    a combine rule whose estimate does not follow a shift, fewer than 2 units, or a screen not given."""
    rec = _simulated(rec)
    screens = dict(screens or {})
    missing = [g.record for g in rec.measure.gates if isinstance(g, Screen) and g.record not in screens]
    if missing:
        raise ValueError(f"{rec.id}: its screens {missing} are not given (a draw would raise and never agree)")
    if rec.rule.kind == "every cell":
        raise ValueError(f"{rec.id}: an every-cell claim has no units to draw")
    sample = _sample(rec, config, rows, planned)
    if isinstance(sample, Verdict):
        raise ValueError(f"{rec.id}: the pilot has no sample ({sample.reason})")
    k = len(sample.values)
    if k < 2:
        raise ValueError(f"{rec.id}: the pilot has {k} unit: nothing to resample")
    record = judge_sample(rec, config, sample, screens).test_record
    if not record or record.get("judge") not in TRUTHS:
        raise ValueError(f"{rec.id}: the pilot's verdict has no test to put at a least favourable truth")
    if not follows_shift(rec, config, sample):
        raise ValueError(f"{rec.id}: its combine rule reads whole rows: its estimate does not follow a shift")
    truths = TRUTHS[record["judge"]](record)

    def worst(n: int, key: str) -> tuple[float, str]:
        rng, judge = claim_rng(seed, experiment, f"{rec.id} (pilot, n = {n}{key})"), _InUnitOrder(sample.units)
        return max(
            ((rate(rec, config, [sample], t, record, screens, draws, rng, sd=0.0, judge=judge, size=n), label)
             for label, t in truths),
            key=lambda rl: rl[0],
        )  # fmt: skip

    rates: dict[int, float] = {}
    rejected: dict[int, float] = {}
    for n in range(k, max(cap, k) + 1):
        r, label = worst(n, "")
        rates[n] = r
        if within_nominal(r, draws):
            again, _ = worst(n, ", confirmed")
            if within_nominal(again, draws):
                return PilotSearch(rec.id, k, n, False, draws, label, r, again, rates, rejected)
            rejected[n] = again
    return PilotSearch(rec.id, k, max(cap, k), True, draws, label, r, math.nan, rates, rejected)


def _simulated(rec: ClaimRecord) -> ClaimRecord:
    """``rec`` as the search judges it: without its :class:`~iclab.claims._gates.PilotMinimum` gates (its test text
    generated anew), and without the texts a verdict carries (``measured``, ``note``), which never change it (at
    worst a text that raises would make a run's verdict "not judged" where a draw here agrees: a rate too high)."""
    gates = tuple(g for g in rec.measure.gates if not isinstance(g, PilotMinimum))
    measure = dataclasses.replace(rec.measure, gates=gates, measured=None, note=None)
    return dataclasses.replace(rec, test="", measure=measure)


class _InUnitOrder:
    """:func:`~iclab.claims._records.judge_as_run` on a drawn sample with its units sorted, as a run's rows are
    (:func:`~iclab.claims._sample.sample_of`), so that its verdict — the small-sample gate resamples the units in
    their order — is a function of which units were drawn; two draws of the same units are one judgement (kept, by
    the units and their values), which makes the many repeats of a few units' draws cheap."""

    def __init__(self, units: pd.Index) -> None:
        self.units = units  # the pilot's, sorted
        self.seen: dict[tuple, Verdict] = {}

    def __call__(self, rec: ClaimRecord, config: Any, s: Sample, screens: Mapping[str, Verdict]) -> Verdict:
        where = self.units.get_indexer(s.units)  # (n,) each drawn unit's place among the pilot's
        order = np.argsort(where, kind="stable")
        key = (tuple(where[order]), tuple(s.values[order]))
        if key not in self.seen:
            self.seen[key] = judge_as_run(rec, config, _taken(s, order), screens)
        return self.seen[key]


def _taken(s: Sample, order: np.ndarray) -> Sample:
    """The sample ``s`` with its units in ``order``."""

    def take(x):
        return None if x is None else x[order]

    return Sample(
        rows=s.rows.take(order),
        base=None if s.base is None else s.base.take(order),
        units=s.units[order],
        a=s.a[order],
        b=take(s.b),
        values=s.values[order],
        ses=take(s.ses),
    )
