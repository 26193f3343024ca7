"""Gates as data: the declared conditions under which a judged claim cannot count, and the one place their texts are
written (issue 43, item 6: gates live in the judge).

A record lists its gates in ``Measure.gates``; the judge (:func:`iclab.claims._records.judge_records`) asks each
for its reason once the test has run and puts a non-empty one over the verdict through
:func:`~iclab.claims._judge.downgrade` ("not judged", keeping what the test gave at these settings). A paper
package only declares a gate — the field, the column, the threshold and what they mean — and never writes a
"settings differ", "not measured" or "not judged" text itself. The kinds:

- :class:`Setting`: a setting (a config field, or the least value of a column of the selected rows) below what the
  claim needs, or above it: "settings differ: FIELD = VALUE (paper P; needs ≥ MIN: WHY)".
- :class:`MinUnits`: fewer units than the claim needs have a finite per-unit value: "not measured: k of N UNITS …".
- :class:`PilotMinimum`: fewer units than the minimum its test needs, a size fixed once before the run from a pilot
  run (:func:`~iclab.claims._pilot.pilot_minimum_units`): "too few units: k of the MINIMUM UNITS its test needs …".
- :class:`CellReason`: the cells report that they could not measure (a model that could not be loaded here), with
  their own reason column: "not measured: WHAT (REASON)".
- :class:`Screen`: another record of the same run that this claim depends on; the claim counts only when that
  record agrees, is "not measured" when the screen is, and otherwise names the screen and its verdict.
- :class:`GridEdge`: an argmin read off a grid that lies on the grid's edge is no argmin: widen the named field.
- :class:`Diagnostic`: a diagnostic column over its declared threshold (not converged, not at the optimum).
- :class:`StandIn`, :class:`NotComparable`: a fixed reason declared with the record — the run measures a stand-in
  for the paper's measurement, or the paper's model is another model than the one iclab runs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping

import numpy as np
import pandas as pd

from iclab.claims._sample import Sample
from iclab.stats import AGREES, Verdict

__all__ = [
    "Gate",
    "GateContext",
    "Setting",
    "MinUnits",
    "PilotMinimum",
    "CellReason",
    "Screen",
    "GridEdge",
    "Diagnostic",
    "StandIn",
    "NotComparable",
    "describe_gates",
    "SETTINGS_DIFFER",
    "NOT_MEASURED",
    "TOO_FEW_UNITS",
]

#: the head of a reason when the run lacks what the claim needs (also :func:`~iclab.claims._judge.settings_differ`)
SETTINGS_DIFFER = "settings differ"
#: the head of a reason when the claim's measurement is missing
NOT_MEASURED = "not measured"
#: the head of a reason when the claim has its measurements, on fewer units than its test needs (as the stats
#: refusal of a Student-t band from fewer than 3 units, :func:`iclab.stats.refusal`)
TOO_FEW_UNITS = "too few units"


@dataclass(frozen=True)
class GateContext:
    """What a gate reads: the run's ``config``, the record's ``sample``, what its units are called (``units``:
    "seeds", "text segments") and the verdicts of the records judged before it (``verdicts``, for a screen)."""

    config: Any
    sample: Sample
    units: str = "units"
    verdicts: Mapping[str, Verdict] | None = None

    @property
    def finite_units(self) -> int:
        """The units with a finite per-unit value: what the minimum-of-units gates count."""
        return int(np.isfinite(np.asarray(self.sample.values, dtype=float)).sum())


class Gate:
    """A declared gate: :meth:`reason` is "" when the claim may count, else why not (written here, never by a
    package); :meth:`describe` is what it needs, in the claim's test text (``units``: what the units are called)."""

    def reason(self, ctx: GateContext) -> str:  # pragma: no cover - every kind overrides it
        raise NotImplementedError

    def describe(self, units: str) -> str:  # pragma: no cover - every kind overrides it
        raise NotImplementedError


def describe_gates(gates: tuple[Gate, ...], units: str) -> str:
    """The gates of a record in its test text: "Gates: …; …" ("" without gates)."""
    return "Gates: " + "; ".join(g.describe(units) for g in gates) if gates else ""


def _num(x: Any) -> str:
    """A setting's value as text: an integer as it is, a large threshold with thousands separators, else 4 digits."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, float, np.integer, np.floating)):
        return str(x)
    if float(x).is_integer():
        return f"{int(x)}"
    return f"{float(x):.4g}"


def _threshold(x: float) -> str:
    return f"{int(x):,}" if float(x).is_integer() and abs(x) >= 10_000 else _num(x)


def _rows(sample: Sample) -> pd.DataFrame:
    """The selected rows and the baseline's, with the unit columns as columns."""
    parts = [sample.rows] + ([sample.base] if sample.base is not None else [])
    return pd.concat([p.reset_index() for p in parts], ignore_index=True)


@dataclass(frozen=True)
class Setting(Gate):
    """A setting outside what the claim needs: "settings differ: LABEL = VALUE (paper P; needs ≥ MIN: WHY)".

    Fields:
        field: the config field (its value, or the fallback when ``column`` gives only NaN).
        minimum, maximum: the claim needs the value ≥ ``minimum`` / ≤ ``maximum`` (at least one).
        why: what the bound buys ("stage I finished"), after the bound.
        paper: the paper's value, when it has one.
        column: a named ``rows -> (rows,) values`` read off the selected rows instead of the config: the least
            finite value counts (none: no gate; only NaN: the config field, e.g. rows from before the column).
        label: the setting's name in the text (default ``field``).
    """

    field: str
    minimum: float | None = None
    maximum: float | None = None
    why: str = ""
    paper: Any = None
    column: Callable[[pd.DataFrame], np.ndarray] | None = None
    label: str = ""

    def __post_init__(self) -> None:
        if self.minimum is None and self.maximum is None:
            raise ValueError(f"a setting gate on {self.field!r} needs a minimum or a maximum")

    def _value(self, ctx: GateContext) -> Any:
        if self.column is None:
            return getattr(ctx.config, self.field)
        values = np.asarray(self.column(ctx.sample.rows), dtype=float)
        if not values.size:
            return None
        finite = values[np.isfinite(values)]
        return float(finite.min()) if finite.size else getattr(ctx.config, self.field)

    def describe(self, units: str) -> str:
        bounds = (("≥", self.minimum), ("≤", self.maximum))
        bound = " and ".join(f"{op} {_threshold(x)}" for op, x in bounds if x is not None)
        notes = "; ".join(p for p in (self.why, "" if self.paper is None else f"paper {_num(self.paper)}") if p)
        return f"{self.label or self.field} {bound}" + (f" ({notes})" if notes else "") + f", else {SETTINGS_DIFFER}"

    def reason(self, ctx: GateContext) -> str:
        value = self._value(ctx)
        if value is None:
            return ""
        low = self.minimum is not None and value < self.minimum
        high = self.maximum is not None and value > self.maximum
        if not (low or high):
            return ""
        bound = f"≥ {_threshold(self.minimum)}" if low else f"≤ {_threshold(self.maximum)}"
        paper = "" if self.paper is None else f"paper {_num(self.paper)}; "
        why = f": {self.why}" if self.why else ""
        return f"{SETTINGS_DIFFER}: {self.label or self.field} = {_num(value)} ({paper}this claim needs {bound}{why})"


@dataclass(frozen=True)
class MinUnits(Gate):
    """At least ``minimum`` units with a finite per-unit value, else "not measured: k of N UNITS WHAT (needs
    MINIMUM[; DETAIL])"; ``detail`` a named ``(config, Sample) -> str`` with the numbers that explain the count."""

    minimum: int
    what: str = "have a value"
    detail: Callable[[Any, Sample], str] | None = None

    def describe(self, units: str) -> str:
        return f"at least {self.minimum} {units} {self.what}, else {NOT_MEASURED}"

    def reason(self, ctx: GateContext) -> str:
        ok = ctx.finite_units
        if ok >= self.minimum:
            return ""
        detail = f"; {self.detail(ctx.config, ctx.sample)}" if self.detail is not None else ""
        return (
            f"{NOT_MEASURED}: {ok} of {len(ctx.sample.values)} {ctx.units} {self.what} (needs {self.minimum}{detail})"
        )


@dataclass(frozen=True)
class PilotMinimum(Gate):
    """A minimum of units fixed once, before the run, from a pilot run (issue 43): below ``minimum`` units with a
    finite per-unit value, "too few units: k of the MINIMUM UNITS its test needs (…)", whatever the test gave. A
    few uneven units can make a Student-t band agree at the claim's least favourable truth far more often than 5 %;
    ``minimum`` is the smallest count at which units drawn from the pilot's, at that truth, agree at most 5 % + 2
    Monte Carlo SE of the time (:func:`~iclab.claims._pilot.pilot_minimum_units`, computed once; the record writes
    the number). A run's own units never move it: no optional stopping.

    Fields:
        minimum: the units the claim's test needs.
        pilot: the pilot run it was fixed from ("the shipped reference run ood-paper").
        capped: the search stopped at its cap: ``minimum`` is the cap, and at the pilot's spread even that many
            agree too often (a larger pilot, or another test, would size it).
    """

    minimum: int
    pilot: str
    capped: bool = False

    def describe(self, units: str) -> str:
        cap = ", the search's cap" if self.capped else ""
        return (
            f"at least {self.minimum} {units} (a minimum fixed from {self.pilot} as pilot{cap}), else {TOO_FEW_UNITS}"
        )

    def reason(self, ctx: GateContext) -> str:
        ok = ctx.finite_units
        if ok >= self.minimum:
            return ""
        line = "at the least favourable truth, agree more than 5 % + 2 Monte Carlo SE of the time"
        fixed = f"fixed from {self.pilot} as pilot"
        why = (
            f"the search's cap, {fixed}: even {self.minimum} units drawn from the pilot's, {line}"
            if self.capped
            else f"{fixed}: fewer units drawn from the pilot's, {line}"
        )
        need = f"{ok} of the {self.minimum} {ctx.units} its test needs"
        return f"{TOO_FEW_UNITS}: {need} (the minimum, {why}); a run with {self.minimum} would judge it"


@dataclass(frozen=True)
class CellReason(Gate):
    """Cells that say whether they measured (``flag`` = 1) and why not (``reason``): when no selected row did,
    "not measured: WHAT (the first row's reason)"."""

    what: str
    flag: str = "available"
    why: str = "reason"

    def describe(self, units: str) -> str:
        return f"a cell with `{self.flag}` = 1, else {NOT_MEASURED} ({self.what}, with the cells' `{self.why}`)"

    def reason(self, ctx: GateContext) -> str:
        rows = ctx.sample.rows
        if (rows[self.flag] == 1).any():
            return ""
        return f"{NOT_MEASURED}: {self.what} ({rows[self.why].iloc[0]})"


@dataclass(frozen=True)
class Screen(Gate):
    """A record of the same run that this claim depends on (``record``, its id; ``what`` it establishes): the claim
    counts only when the screen agrees; a screen that was not measured makes it "not measured", any other verdict
    names the screen and what it measured. The screen must be declared with the claim (else the judging raises)."""

    record: str
    what: str = ""

    def describe(self, units: str) -> str:
        what = f" ({self.what})" if self.what else ""
        return f"its screen `{self.record}`{what} agrees, else not judged ({NOT_MEASURED} when the screen is)"

    def reason(self, ctx: GateContext) -> str:
        screen = (ctx.verdicts or {})[self.record]
        if screen.verdict == AGREES:
            return ""
        what = f" ({self.what})" if self.what else ""
        if screen.reason.startswith(NOT_MEASURED):
            return f"{NOT_MEASURED}: its screen `{self.record}`{what} has no result; the screen decides whether this is judged"
        told = ", ".join(p for p in (screen.measured, screen.statistic) if p and p != "—")
        return (
            f"screened out: `{self.record}`{what} is {screen.verdict}"
            + (f" ({told})" if told else "")
            + (f" [{screen.reason}]" if screen.reason else "")
            + "; this claim is judged only when its screen agrees"
        )


@dataclass(frozen=True)
class GridEdge(Gate):
    """An argmin read off the grid ``grid`` (a config field): a ``column`` value of the selected or baseline rows on
    the grid's edge is no argmin — "a WHAT lies on the edge of the grid … (widen `GRID`)"; ``what`` names it."""

    column: str
    grid: str
    what: str = "best value"

    def describe(self, units: str) -> str:
        return f"no {self.what} on the edge of the grid `{self.grid}` (no argmin there), else not judged"

    def reason(self, ctx: GateContext) -> str:
        grid = getattr(ctx.config, self.grid)
        edges = (min(grid), max(grid))
        if not any(np.isclose(float(v), e) for v in _rows(ctx.sample)[self.column] for e in edges):
            return ""
        return (
            f"a {self.what} lies on the edge of the grid `{self.grid}` {edges[0]:g}…{edges[1]:g}, which is no "
            f"argmin (widen `{self.grid}`)"
        )


@dataclass(frozen=True)
class Diagnostic(Gate):
    """A diagnostic ``column`` of the selected rows whose largest value exceeds ``limit``: "LABEL: MEANING (COLUMN =
    x > LIMIT); REMEDY" (``form`` formats both numbers). A column the rows lack, or only NaN, passes: rows from
    before the diagnostic was recorded."""

    column: str
    limit: float
    label: str
    meaning: str
    remedy: str = ""
    form: str = ".3g"

    def describe(self, units: str) -> str:
        return f"{self.column} ≤ {self.limit:{self.form}}, else {self.label} ({self.meaning})"

    def reason(self, ctx: GateContext) -> str:
        rows = ctx.sample.rows
        x = float(np.nanmax(rows[self.column].to_numpy(float))) if self.column in rows and len(rows) else math.nan
        if not x > self.limit:
            return ""
        remedy = f"; {self.remedy}" if self.remedy else ""
        return f"{self.label}: {self.meaning} ({self.column} = {x:{self.form}} > {self.limit:{self.form}}){remedy}"


@dataclass(frozen=True)
class StandIn(Gate):
    """The run measures ``measured`` in place of the paper's ``paper``: "settings differ: … stands in for … (WOULD
    would judge it)", always."""

    measured: str
    paper: str
    would: str = ""

    def describe(self, units: str) -> str:
        return f"{SETTINGS_DIFFER}: {self.measured} stands in for {self.paper}"

    def reason(self, ctx: GateContext) -> str:
        would = f" ({self.would} would judge it)" if self.would else ""
        return f"{SETTINGS_DIFFER}: {self.measured} stands in for {self.paper}{would}"


@dataclass(frozen=True)
class NotComparable(Gate):
    """The paper's model is not the one iclab runs (``why``): "not comparable: WHY", always."""

    why: str

    def describe(self, units: str) -> str:
        return "not comparable: the paper's model is another model (in the reason)"

    def reason(self, ctx: GateContext) -> str:
        return f"not comparable: {self.why}"
