"""Claims as data: a paper's claims as records that one generic judge reads (issue 21, item 1).

A :class:`ClaimRecord` is a :class:`~iclab.claims._judge.Claim` (id, claim text, source, kind, paper value,
headline, the paper settings it needs; its test text generated from the rule: ``quantity`` + :meth:`Rule.describe`
+ ``extra``) plus three declarative fields:

- ``runs_if``: the config values that run the claim's cells (``{"shifts": ("none", "cov_x*2")}``: both shifts are
  configured); the claim is declared before the run exactly when the config has them (:func:`declared`).
- ``measure`` (:class:`Measure`): the measured quantity. ``where`` names the cells (``part`` and the other
  column filters); ``column`` the measured column (or a named pure function of the selected rows); ``unit`` the
  unit of replication (seed, model, W_e draw, question group, prompt). With ``base`` (the cells of a baseline) the
  quantity is paired: per unit, the selection's value minus the baseline's (``contrast="minus"``) or
  ``log(a / b)`` (``"log ratio"``), on the units both have.
- ``rule`` (:class:`Rule`, :mod:`iclab.claims._rule`): which test of :mod:`iclab.stats` decides, and its
  thresholds: ``sign`` and ``smallest`` (direction, absence), ``rel_tol`` and ``target`` (equivalence, every cell),
  ``paper``, ``paper_se``, ``k``, ``tol`` (paper value).

:func:`judge_records` is the one judge of records. For each record it: selects the rows; refuses to judge a
claim whose named cells have no row (:func:`~iclab.claims._cells.missing_cells`: "not measured", naming them,
never another setting, nor a subset of the cells a claim over a table needs: ``Measure.cells``); keeps one row per
unit (rows that would collapse are an error: :func:`~iclab.claims._sample.sample_of`); reduces to one
value per unit (paired on the unit when there is a baseline); combines the units — by default the mean and its SE
across units with a Student-t band of n − 1 dof (:func:`across_units`), or a combine rule the package names; and
calls the one stats test, whose refusals (NaN or zero SE, fewer than :data:`iclab.stats.MIN_UNITS` units) apply
as they are. A record whose judging raises is "not judged" (:data:`RAISED`, the exception's type and message);
the other records are judged. Settings gates and unreliable sources stay in :func:`~iclab.claims._judge.judge_run`.

A package writes code only for what this vocabulary cannot say, each a small named pure function the record
references: a combine rule (``combine``: ``(config, Sample) -> Estimate``), a factor on the measured column
(``scale``: ``config -> float``), the diagnostic text put before the test statistic (``note``:
``(config, Sample, Estimate) -> str``), the measured text (``measured``, same signature), and why a declared
claim's cells are not run by this config (``ClaimRecord.not_run``). Gates are declared, not written: ``gates`` lists
kinds of :mod:`iclab.claims._gates` (a setting, a minimum of units, a cell's own reason, a screen record, a grid
edge, a diagnostic threshold, a stand-in), whose texts the judge writes and puts over the verdict through
:func:`~iclab.claims._judge.downgrade`; a screen record is judged before the records that depend on it. A table of records
can be static (:func:`declared` picks those a config runs) or built per config when the cells it names depend on
it (the largest block count, the smallest training-set size).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from iclab.claims._gates import CellReason as CellReason
from iclab.claims._gates import Diagnostic as Diagnostic
from iclab.claims._gates import Gate, GateContext, Screen, describe_gates
from iclab.claims._gates import GridEdge as GridEdge
from iclab.claims._gates import MinUnits as MinUnits
from iclab.claims._gates import NotComparable as NotComparable
from iclab.claims._gates import PilotMinimum as PilotMinimum
from iclab.claims._gates import Setting as Setting
from iclab.claims._gates import StandIn as StandIn
from iclab.claims._judge import Claim, claim_gate, downgrade
from iclab.claims._resample import small_sample_gate
from iclab.claims._every_cell import every_cell_verdict
from iclab.claims._sample import Sample, sample_of
from iclab.errors import ConfigError
from iclab.claims._rule import BASE, TEST_KINDS, Rule, cannot_fail, mean_over_units, units_of
from iclab.claims._rule_test import ROUNDING as ROUNDING
from iclab.claims._rule_test import Estimate as Estimate
from iclab.claims._rule_test import rounding_reason, run_test
from iclab.stats import (
    AGREES,
    Verdict,
    mean_se,
    not_judged,
)

__all__ = [
    "BASE",
    "CellReason",
    "Diagnostic",
    "Gate",
    "GridEdge",
    "MinUnits",
    "NotComparable",
    "PilotMinimum",
    "Screen",
    "Setting",
    "StandIn",
    "TEST_KINDS",
    "ClaimRecord",
    "Estimate",
    "Measure",
    "RAISED",
    "Sample",
    "Rule",
    "across_units",
    "declared",
    "judge_records",
    "judge_sample",
    "judge_as_run",
    "sample_of",
]

#: the reason of a claim whose judging raised (:func:`judge_records`): "not judged", never the other claims' loss
RAISED = "error: judging this claim raised"
_CONTRASTS = ("minus", "log ratio")


def across_units(config: Any, sample: Sample) -> Estimate:
    """The default combine rule: the mean of the per-unit values and its standard error across the units, with a
    Student-t band of n − 1 dof (one unit: no uncertainty; two: too few units — :func:`iclab.stats.refusal`)."""
    m, se, n = mean_se(sample.values)
    return Estimate(m, se, dof=n - 1 if n > 1 else None, n=n)


across_units.describe = mean_over_units  # type: ignore[attr-defined]  # its phrase in the test text (Rule.describe)


@dataclass(frozen=True)
class Measure:
    """The measured quantity of a claim (module docstring).

    Fields:
        where: the cells the claim is judged on: column -> value (``part`` among them); every one must have a row.
        column: the measured column, or a named pure function ``rows -> (units,) values`` of the selected rows.
        unit: the unit of replication: the columns that tell one replicate from another.
        se_column: each unit's own standard error (for a combine rule that uses it; scaled with ``scale``): a column,
            or a named ``rows -> values`` as ``column``.
        base: the baseline cells (column -> value): the quantity is paired on the unit against them.
        base_column: the baseline's column where it is not ``column`` (a string or a named ``rows -> values``):
            a quantity against another one measured in the same cells (a fitted step against the one the weights
            give, a model's error against a reference predictor's scored on the same prompts).
        contrast: a paired unit's value against its baseline: ``"minus"`` (a − b) or ``"log ratio"`` (log(a / b)).
        scale: a named ``config -> float`` factor on the selection's column and SE (a change of units).
        combine: the named rule ``(config, Sample) -> Estimate`` (default :func:`across_units`).
        note: a named ``(config, Sample, Estimate) -> str`` diagnostic put before the test statistic.
        measured: a named ``(config, Sample, Estimate) -> str`` text that replaces the measured value's.
        gates: declared gates (:class:`~iclab.claims._gates.Gate`); a non-empty reason (written by the gate kind,
            never by the package) makes the verdict "not judged" (:func:`~iclab.claims._judge.downgrade`: the
            test's own result stays in the reason).
        cells: a claim over a table (curves, minimisers, trends, every cell): a named ``config -> [cell]`` (each a
            mapping column -> value) giving every cell it needs; one without a row makes it "not measured: n of N
            cells", so it is never judged on the cells that happen to be there.
    """

    where: Mapping[str, Any]
    column: str | Callable[[pd.DataFrame], np.ndarray]
    unit: tuple[str, ...]
    se_column: str | Callable[[pd.DataFrame], np.ndarray] = ""
    base: Mapping[str, Any] | None = None
    base_column: str | Callable[[pd.DataFrame], np.ndarray] | None = None
    contrast: str = "minus"
    scale: Callable[[Any], float] | None = None
    combine: Callable[[Any, Sample], Estimate] = across_units
    note: Callable[[Any, Sample, Estimate], str] | None = None
    measured: Callable[[Any, Sample, Estimate], str] | None = None
    gates: tuple[Gate, ...] = ()
    cells: Callable[[Any], Sequence[Mapping[str, Any]]] | None = None

    def __post_init__(self) -> None:
        if not self.unit:
            raise ValueError("a measure needs its unit of replication")
        if self.base_column is not None and self.base is None:
            raise ValueError("a measure's base_column needs its baseline cells (base)")
        if self.contrast not in _CONTRASTS:
            raise ValueError(f"contrast {self.contrast!r} is not one of {_CONTRASTS}")
        bad = [g for g in self.gates if not isinstance(g, Gate)]
        if bad:  # a gate is declared (iclab.claims._gates), never a function that writes its own text
            raise ValueError(f"gates {bad!r} are not declared gates (iclab.claims._gates)")

    def selections(self) -> list[dict]:
        """The cells this measure reads, as selections (column → value): ``where``, and ``base`` when paired."""
        return [dict(self.where)] + ([dict(self.base)] if self.base is not None else [])

    def named_cells(self, config: Any) -> list[dict]:
        """The cells ``Measure.cells`` names for ``config``, each within ``where``; [] when it names none."""
        return [] if self.cells is None else [{**dict(self.where), **dict(c)} for c in self.cells(config)]


@dataclass(frozen=True)
class ClaimRecord(Claim):
    """A claim as data: the :class:`~iclab.claims._judge.Claim` fields, ``runs_if`` (the config values that
    run its cells), ``measure`` and ``rule`` (module docstring), and ``not_run``: a named ``(config, record) -> str``
    saying why this config runs none of the claim's cells although it declares the claim ("" when it does), which
    makes it "not judged" with that reason. It is a ``Claim``: ``judge_run`` and the report read it as one.

    Its ``test`` text is generated, never written by hand: ``quantity`` (what is measured per unit, the one thing
    the rule cannot say), then :meth:`Rule.describe` of the measure (the combine and the test with its thresholds'
    values), then its gates (:func:`~iclab.claims._gates.describe_gates`), then ``extra`` (a short sentence,
    only where the claim truly needs one: a caveat)."""

    test: str = ""
    quantity: str = ""
    extra: str = ""
    runs_if: Mapping[str, Any] = field(default_factory=dict)
    not_run: Callable[[Any, Any], str] | None = None
    measure: Measure | None = None
    rule: Rule | None = None

    def __post_init__(self) -> None:
        if self.measure is None or self.rule is None:
            raise ValueError(f"claim record {self.id!r} needs a measure and a rule")
        if self.rule.target == BASE and self.measure.base is None:
            raise ValueError(f"claim record {self.id!r}: an equivalence against the baseline needs measure.base")
        why = cannot_fail(self.kind, self.rule)
        if why:
            raise ConfigError(f"claim record {self.id!r}", f"{self.kind} / {self.rule.kind} test", why)
        gates = describe_gates(self.measure.gates, units_of(self.measure.unit, self.rule.units))
        text = f"{self.quantity}; {self.rule.describe(self.measure)}" + "".join(
            f". {p}" for p in (gates, self.extra) if p
        )
        if not self.quantity.strip() or self.test not in ("", text):  # ``dataclasses.replace`` passes it back
            raise ValueError(f"claim record {self.id!r}: state its quantity; the test text is generated")
        object.__setattr__(self, "test", text)
        super().__post_init__()


def declared(records: Sequence[ClaimRecord], config: Any) -> list[ClaimRecord]:
    """The records whose cells ``config`` runs (``runs_if``: every listed value is in the config's tuple, or equals
    its scalar), in table order: the claims declared before the run."""

    def runs(rec: ClaimRecord) -> bool:
        for name, want in rec.runs_if.items():
            have = getattr(config, name)
            if isinstance(have, (tuple, list)):
                if not set(want if isinstance(want, (tuple, list)) else (want,)) <= set(have):
                    return False
            elif have != want:
                return False
        return True

    return [r for r in records if runs(r)]


def judge_records(
    records: Sequence[ClaimRecord],
    config: Any,
    results: pd.DataFrame,
    planned: Sequence[Mapping[str, Any]] | None = None,
) -> dict[str, Verdict]:
    """``{claim id: Verdict}`` for every record (module docstring: select, refuse missing cells, one row per unit,
    per-unit values, combine, the one stats test, note and gates). ``planned`` (the run's grid, ``cells(config)``)
    makes a record whose planned cells did not all give a row "not measured: n of N cells" (:func:`sample_of`). A record that a :class:`~iclab.claims._gates.Screen`
    names is judged before the records that depend on it. A record whose judging raises (a statistic meeting a table
    it cannot read, a screen that is not declared) is "not judged" with :data:`RAISED`, the exception's type and
    message; every other record is judged."""
    by_id = {rec.id: rec for rec in records}
    done: dict[str, Verdict | None] = {}

    def one(rec: ClaimRecord) -> Verdict:
        if rec.id not in done:
            done[rec.id] = None  # in progress: a screen that depends on its dependant is a cycle
            named = [g.record for g in rec.measure.gates if isinstance(g, Screen) and g.record in by_id]
            if any(done.get(cid, 0) is None for cid in named):
                why = f"{RAISED}: ValueError: its screen depends on it ({', '.join(named)})"
                done[rec.id] = not_judged(why)
            else:
                # a screen counts as the ledger shows it: its unreliable source or differing paper settings over it
                screens = {cid: downgrade(one(by_id[cid]), claim_gate(by_id[cid], config)) for cid in named}
                done[rec.id] = _contained(rec, config, results, screens, planned)
        return done[rec.id]

    return {rec.id: one(rec) for rec in records}


def _contained(
    rec: ClaimRecord, config: Any, results: pd.DataFrame, screens: Mapping[str, Verdict], planned
) -> Verdict:
    try:
        return _judge_one(rec, config, results, screens, planned)
    except Exception as exc:  # noqa: BLE001 - one claim's error must not cost every other claim its verdict
        return not_judged(f"{RAISED}: {type(exc).__name__}: {exc}")


def _gated(v: Verdict, rec: ClaimRecord, config: Any, sample: Sample, screens: Mapping[str, Verdict]) -> Verdict:
    """``v`` with the record's declared gates put over it, in order (:func:`~iclab.claims._judge.downgrade`); a test
    record under a gate also keeps the ``units`` the gates counted (a test's ``n`` may count samples inside them)."""
    ctx = GateContext(config, sample, units_of(rec.measure.unit, rec.rule.units), screens)
    for gate in rec.measure.gates:
        v = downgrade(v, gate.reason(ctx))
    if v.test_record and v.test_record.get("gate"):
        v = dataclasses.replace(v, test_record={**v.test_record, "units": ctx.finite_units})
    return v


def _sample(rec: ClaimRecord, config: Any, results: pd.DataFrame, planned=None) -> Sample | Verdict:
    """The record's :class:`Sample`, or "not judged": this config runs none of its cells (``not_run``), or a named
    or planned cell has no row (:func:`sample_of`)."""
    why = rec.not_run(config, rec) if rec.not_run is not None else ""
    m, by = rec.measure, rec.rule.by
    if by:  # an every-cell rule's cells are distinct rows of the selection, never duplicates of a unit
        m = dataclasses.replace(m, unit=m.unit + tuple(c for c in by if c not in m.unit))
    sample = sample_of(m, config, results, planned) if not why else why
    return not_judged(sample) if isinstance(sample, str) else sample


def _judge_one(
    rec: ClaimRecord, config: Any, results: pd.DataFrame, screens: Mapping[str, Verdict], planned
) -> Verdict:
    sample = _sample(rec, config, results, planned)
    if isinstance(sample, Verdict):
        return sample
    if rec.rule.kind == "every cell":
        return _gated(every_cell_verdict(rec, config, results, sample), rec, config, sample, screens)
    return judge_as_run(rec, config, sample, screens)


def judge_as_run(rec: ClaimRecord, config: Any, sample: Sample, screens: Mapping[str, Verdict]) -> Verdict:
    """The verdict a run gives a record (not an every-cell claim) on its :class:`Sample`: :func:`judge_sample`, then
    an agreement from few units checked by resampling its own units at the least favourable truth
    (:func:`~iclab.claims._resample.small_sample_gate`)."""
    v = judge_sample(rec, config, sample, screens)
    if v.verdict == AGREES:
        v = downgrade(v, small_sample_gate(rec, config, sample, v, screens, judge_sample))
    return v


def judge_sample(rec: ClaimRecord, config: Any, sample: Sample, screens: Mapping[str, Verdict]) -> Verdict:
    """The verdict of a record that is not an every-cell claim on its :class:`Sample`: combine the units, the one
    stats test (or the combine rule's refusal, or "no uncertainty" for an SE at float64 rounding), the note and the
    measured text, then the declared gates. :func:`judge_records` judges through it; so does the row-level
    calibration (:mod:`iclab.claims._calibrate_rows`), on samples drawn at a claim's least favourable truth."""
    m, t = rec.measure, rec.rule
    est = m.combine(config, sample)
    n = getattr(config, t.n) if t.n else (est.n if est.n is not None else len(sample.values))
    refused = est.refused or rounding_reason(est)
    v = not_judged(refused) if refused else run_test(t, est, sample, n)
    if m.measured is not None:
        v = dataclasses.replace(v, measured=m.measured(config, sample, est))
    note = m.note(config, sample, est) if m.note is not None else ""
    v = dataclasses.replace(v, statistic="; ".join(p for p in (note, est.how, v.statistic, est.tail) if p))
    return _gated(v, rec, config, sample, screens)
