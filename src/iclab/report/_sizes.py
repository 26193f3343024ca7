r"""The sizes that would decide a run's undecided claims, and what they cost (``iclab plan``, issue 38).

Every claim of a finished run is judged again by the installed code (:func:`~iclab.report.rejudged_summary`). A claim
the test left "not judged (too little power)" carries the judge's own count in its test record, ``needed``: the
units :math:`n'` at which its interval, at the current effect and spread, would just decide (for a mean,
:math:`n' = \lceil n (z\,\mathrm{se} / m)^2 \rceil` with :math:`m` the half-width that decides;
:func:`iclab.stats.judge_direction` and its siblings state each rule). Nothing here computes a second count.

Which preset field sets those units is read from the claim record and the config: the record's ``Rule.n`` when it
names one (prompts inside a cell); else the config field whose value is the test's ``n`` (an integer, or the length
of a list), or a product of two fields named after the claim's part (lists × queries); ties go to the field named
after the claim's unit column (``seed`` → ``seeds``) and part (``clrs`` → ``clrs_seeds``). A claim refused for one
unit ("no uncertainty", "too few units") needs at least :data:`iclab.stats.MIN_UNITS` units of the field named
after its unit column — a lower bound: its spread is not known until then. A claim short of the minimum of units it
declares from a pilot (:class:`~iclab.claims.PilotMinimum`, "too few units: k of the N …") needs at least that
minimum (or what power needs, when more), sized like a power-limited count: that gate alone is over it. Where its
test counts samples inside the units (questions in a list), the units are sized (k' = max(N, ⌈k n'/n⌉), the samples
growing with them) by the field named after the unit column, never by the record's ``Rule.n``. The new value is
:math:`\lceil v \cdot n' / n \rceil` (the field's value v scaled as the units are).

What it costs (CPU seconds of one core, at the run's measured seconds per cell, times ``cpu_scale``: a shipped
reference's recorded CPU time over the sum of its cells' wall seconds, since cells that shared their cores with
other work took longer than they computed): the grid of the changed config
(``cells(config)``) with each cell's measured seconds — a cell the run has keeps its own, a new one (a field that
adds cells: seeds, models, groups) the mean of its part's — and a field that does not change the grid (prompts,
questions, samples inside a cell) multiplies the cells of the claims' parts by :math:`v'/v`. Rough, like
:mod:`iclab.budget`'s estimates; exact for a grid of equal cells.

:func:`choose_sizes` buys claims within a budget: cheapest first (each claim's run alone), keeping a claim when the whole
fresh run with every chosen override still fits. The sizes are for a **new** run with new seeds, judged alone —
never for topping up the old one until its interval clears (optional stopping; ``docs/howto/plan-sizes.md``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import pandas as pd

from iclab.claims import TOO_FEW_UNITS, PilotMinimum, downgraded_by
from iclab.errors import ConfigError
from iclab.experiments import Experiment, settings_differ
from iclab.report._run_costs import RunCosts, cell_value
from iclab.stats import AGREES, DISAGREES, MIN_UNITS, NO_UNCERTAINTY

__all__ = ["ClaimSize", "SizePlan", "Choice", "size_claims", "choose_sizes", "cost_note", "fmt_hours"]

#: what a claim's row in the plan says about sizes
DECIDED, SIZED, NO_FIELD, NO_SIZE, NOT_SAMPLES = "decided", "sized", "no field", "no size decides", "not for samples"


@dataclass(frozen=True)
class ClaimSize:
    """One claim of the plan: its verdict and ``status`` (decided; ``sized``: the override below decides it;
    ``no field``: a count, but no preset field sets its units; ``no size decides``; ``not for samples``: settings,
    an unreliable source, a gate or missing cells), the units ``n`` now and ``needed``, the ``field`` with its value
    now and the ``value`` that buys it, whether that field ``adds_cells``, the estimated CPU ``seconds`` of a fresh
    run with that override alone (and ``extra`` over the run as it is), and ``why`` in words."""

    id: str
    verdict: str
    status: str
    why: str = ""
    n: int | None = None
    needed: int | None = None
    at_least: bool = False
    field: str = ""
    now: Any = None
    value: int | None = None
    adds_cells: bool = False
    seconds: float | None = None
    extra: float | None = None

    @property
    def override(self) -> str:
        return f"{self.field}={self.value}" if self.status == SIZED else ""


@dataclass(frozen=True)
class SizePlan:
    """The plan of one run: ``experiment``, its folder, the CPU ``seconds`` of the run as measured (the sum of its
    cells' seconds times ``cpu_scale``), the claims in declared order, and the cost model's inputs (for
    :func:`choose_sizes`)."""

    experiment: str
    path: Path
    seconds: float
    claims: list[ClaimSize]
    costs: RunCosts | None = field(default=None, repr=False)
    cpu_scale: float = 1.0


@dataclass(frozen=True)
class Choice:
    """What :func:`choose_sizes` buys: the ``overrides`` (field -> value), the claim ids they decide, and the estimated
    CPU ``seconds`` of the fresh run with all of them."""

    overrides: dict[str, int]
    bought: list[str]
    seconds: float


# --- which field sets a claim's units -------------------------------------------------------------------------------


def _named_after(name: str, words: Sequence[str]) -> bool:
    """Whether the field ``name`` has one of ``words`` as a word, plural or not (``seed`` in ``clrs_seeds``)."""
    tokens = {t.rstrip("s") for t in name.lower().split("_")}
    return any(w and str(w).lower().rstrip("s") in tokens for w in words)


def _claim_parts(claim: Any, parts: Sequence[str]) -> set[str]:
    """The cell parts a claim reads: its measure's ``part`` (a part derived from the cells, "stationarity
    gradients", counts as the cell part it starts with); every part when it names none."""
    want = str(getattr(getattr(claim, "measure", None), "where", {}).get("part", ""))
    if want in parts:
        return {want}
    return {p for p in parts if p and want.startswith(p)} or set(parts)


def _score(name: str, claim: Any, parts: set[str]) -> int:
    """How well a field's name fits the claim: named after its unit column (2) and after its part (1)."""
    units = getattr(getattr(claim, "measure", None), "unit", ()) or ()
    return 2 * _named_after(name, units) + _named_after(name, [p.split("_")[0] for p in parts])


def _unit_count(claim: Any, results: pd.DataFrame) -> int | None:
    """How many units (distinct values of the claim's unit columns) its cells hold in ``results``."""
    measure = getattr(claim, "measure", None)
    units = [u for u in (getattr(measure, "unit", ()) or ()) if u in results.columns]
    if not units or not len(results):
        return None
    rows = results
    for col, want in (getattr(measure, "where", {}) or {}).items():
        if col in rows.columns:
            rows = rows[rows[col].map(cell_value) == cell_value(want)]
    return int(rows[units].astype(str).drop_duplicates().shape[0]) or None


def _count_of(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, (tuple, list)):
        return len(value)
    return None


def _field_for(
    claim: Any, config: Any, n: int, parts: set[str], results: pd.DataFrame, units: bool = False
) -> tuple[str, int, str]:
    """``(field, units it sets now, note)``: the preset field that sets the ``n`` units of ``claim`` (module
    docstring), or ("", n, why); ``units``: ``n`` counts the claim's units, not the samples inside them that a
    record's ``Rule.n`` names."""
    rule_n = getattr(getattr(claim, "rule", None), "n", "")
    if rule_n and not units:
        return rule_n, n, ""
    counts = {k: c for k in config.to_dict() if k != "seed" and (c := _count_of(getattr(config, k)))}
    equal = [k for k, c in counts.items() if c == n]
    if equal:
        return max(equal, key=lambda k: _score(k, claim, parts)), n, ""
    named = [k for k in counts if _score(k, claim, parts) & 1 and isinstance(getattr(config, k), int)]
    pairs = [(a, b) for i, a in enumerate(named) for b in named[i + 1 :] if counts[a] * counts[b] == n]
    if pairs:
        a, b = pairs[0]
        big, other = (a, b) if counts[a] >= counts[b] else (b, a)
        return big, n, f"{n:,} = {big} × {other} ({counts[other]})"
    k = _unit_count(claim, results)  # units run but fewer in the test (lost or left out): scaled as they are
    fits = [f for f, c in counts.items() if c == k and _score(f, claim, parts) >= 2]
    if k and fits:
        best = max(fits, key=lambda f: _score(f, claim, parts))
        return best, k, f"the test used {n:,} of the {k:,} units `{best}` runs; scaled as they are"
    return "", n, f"no preset field holds its {n:,} units (a count from the data)"


# --- the plan ----------------------------------------------------------------------------------------------------


def _status(row: Mapping[str, Any], claim: Any, config: Any, units: int | None) -> tuple[str, str]:
    """``(status, why)`` of a judged row before sizing: decided, not for samples, or a candidate (""); ``units``:
    the units its gate counted (None when none did)."""
    if row["verdict"] in (AGREES, DISAGREES):
        return DECIDED, ""
    record, reason = row.get("test_record") or {}, row.get("reason") or ""
    if getattr(claim, "unreliable", ""):
        return NOT_SAMPLES, "unreliable source"
    differ = settings_differ(config, getattr(claim, "paper_settings", {}) or {})
    if differ:
        return NOT_SAMPLES, differ
    if record.get("gate") and not _short_of_minimum(row, claim, units):
        return NOT_SAMPLES, str(record["gate"])
    if (record.get("holm") or {}).get("demoted"):
        return NOT_SAMPLES, "Holm: the family's adjusted p (a smaller p, not a narrower band alone)"
    if reason.startswith("not measured") or reason.startswith("not run"):
        return NOT_SAMPLES, reason.split(";")[0]
    return "", reason


def _one_unit(reason: str) -> bool:
    """A refusal for want of units: no SE from one unit, or a Student-t band from too few."""
    return reason.startswith(TOO_FEW_UNITS) or (reason.startswith(NO_UNCERTAINTY) and "is nan" in reason)


def _pilot_minimum(claim: Any) -> int:
    """The minimum of units the claim declares, fixed from a pilot (:class:`~iclab.claims.PilotMinimum`), or 0."""
    gates = getattr(getattr(claim, "measure", None), "gates", ()) or ()
    return max((g.minimum for g in gates if isinstance(g, PilotMinimum)), default=0)


def _short_of_minimum(row: Mapping[str, Any], claim: Any, units: int | None) -> bool:
    """Whether the one gate over the row is the claim's minimum of units fixed from a pilot, with fewer ``units``
    than it (what the gate counted; the test's ``n`` in a record from before it did, which counts samples where a
    unit holds several): the gate's text first, then what the test gave (or its own refusal for want of power), and
    no other gate."""
    record, reason = row.get("test_record") or {}, row.get("reason") or ""
    gate = str(record.get("gate") or "")
    have = units if units else int(record.get("n") or 0)
    if not (gate.startswith(TOO_FEW_UNITS) and have < _pilot_minimum(claim)):
        return False
    return downgraded_by(reason, gate) or bool(record.get("needed"))


def size_claims(
    exp: Experiment, config: Any, results: pd.DataFrame, rows: Sequence[Mapping[str, Any]], cpu_scale: float = 1.0
) -> SizePlan:
    """The plan of judged ``rows`` (comparison dicts, as ``summary.json`` holds them) of a run of ``exp`` at
    ``config`` whose cells are ``results`` (with the store's ``_key`` and ``_seconds``); each cell's seconds count
    ``cpu_scale`` CPU seconds (module docstring)."""
    costs = RunCosts(exp, config, results, cpu_scale)
    declared = {c.id: c for c in exp.claims(config)}
    base = costs.run_seconds({}, {}) if costs.timed() else math.nan
    out = []
    for row in rows:
        claim = declared.get(row["id"])
        units = (row.get("test_record") or {}).get("units")  # what a gate counted, when one is over the test
        status, why = _status(row, claim, config, units)
        if status:
            out.append(ClaimSize(row["id"], row["verdict"], status, why))
            continue
        out.append(_size_one(row, claim, config, costs, base, units))
    return SizePlan(exp.name, Path("."), base, out, costs, cpu_scale)


def _size_one(
    row: Mapping[str, Any], claim: Any, config: Any, costs: RunCosts, base: float, units: int | None
) -> ClaimSize:
    record, reason = row.get("test_record") or {}, row.get("reason") or ""
    parts = _claim_parts(claim, costs.parts)
    at_least = one_unit = by_units = False
    if record.get("gate") and _short_of_minimum(row, claim, units):  # its minimum of units, and what power needs
        n, minimum, power = int(record["n"]), _pilot_minimum(claim), int(record.get("needed") or 0)
        if units and units != n:  # the test counts samples inside the units: size the units, samples scaling with them
            n, power, by_units = units, math.ceil(units * power / n) if power else 0, True
        needed, at_least = max(minimum, power), minimum >= power
    elif record.get("needed") and record.get("n"):
        n, needed = int(record["n"]), int(record["needed"])
    elif not record and _one_unit(reason):  # refused for one unit: a spread needs MIN_UNITS (a lower bound)
        units = getattr(getattr(claim, "measure", None), "unit", ()) or ()
        named = [k for k in config.to_dict() if _named_after(k, units) and isinstance(getattr(config, k), int)]
        named = [k for k in named if not isinstance(getattr(config, k), bool) and 0 < getattr(config, k) < MIN_UNITS]
        if not named:
            return ClaimSize(row["id"], row["verdict"], NO_SIZE, reason)
        n, needed, at_least = getattr(config, named[0]), MIN_UNITS, True
        one_unit = True
    else:
        return ClaimSize(row["id"], row["verdict"], NO_SIZE, reason)
    name, runs, note = (named[0], n, "") if one_unit else _field_for(claim, config, n, parts, costs.results, by_units)
    if not name:
        return ClaimSize(row["id"], row["verdict"], NO_FIELD, note, n, needed, at_least)
    now = getattr(config, name)
    if not isinstance(now, int) or isinstance(now, bool):
        why = f"`{name}` is a list: add {needed - n:,} entries (no size to --set)"
        return ClaimSize(row["id"], row["verdict"], NO_FIELD, why, n, needed, at_least, name, now)
    value = math.ceil(now * needed / n) if not one_unit else needed
    if runs != n:  # the units the field runs, of which the test used n
        value = math.ceil(now * needed / n)
    try:
        costs.check({name: value})
        adds = costs.adds_cells(name, value)
        seconds = costs.run_seconds({name: value}, {name: parts}) if costs.timed() else None
    except ConfigError as exc:
        return ClaimSize(row["id"], row["verdict"], NO_SIZE, f"{name}={value} is refused: {exc}", n, needed, at_least)
    extra = None if seconds is None else seconds - base
    why = note or ("a spread needs at least this many" if one_unit else "")
    if at_least and not one_unit:
        why = "; ".join(p for p in (f"its minimum of units, fixed from a pilot: {needed:,}", note) if p)
    return ClaimSize(row["id"], row["verdict"], SIZED, why, n, needed, at_least, name, now, value, adds, seconds, extra)


def choose_sizes(plan: SizePlan, budget: float) -> Choice:
    """The overrides that buy as many sized claims as fit in ``budget`` CPU seconds for the whole fresh run: claims
    cheapest first (each one's run alone), a claim kept when the run with every override so far (each field at the
    largest value chosen for it) still fits."""
    sized = sorted((c for c in plan.claims if c.status == SIZED and c.seconds is not None), key=lambda c: c.seconds)
    chosen: dict[str, int] = {}
    parts: dict[str, set[str]] = {}
    total = plan.seconds if plan.costs is not None and plan.costs.timed() else math.nan
    for c in sized:
        trial = {**chosen, c.field: max(chosen.get(c.field, 0), c.value)}
        trial_parts = {**parts, c.field: parts.get(c.field, set()) | _parts_of(plan, c)}
        seconds = plan.costs.run_seconds(trial, trial_parts)
        try:
            plan.costs.check(trial)
        except ConfigError:
            continue
        if seconds <= budget:
            chosen, parts, total = trial, trial_parts, seconds
    bought = [c.id for c in sized if c.field in chosen and chosen[c.field] >= c.value]
    return Choice(chosen, bought, total)


def _parts_of(plan: SizePlan, c: ClaimSize) -> set[str]:
    exp = plan.costs.exp
    claim = next((x for x in exp.claims(plan.costs.config) if x.id == c.id), None)
    return _claim_parts(claim, plan.costs.parts)


def fmt_hours(seconds: float | None) -> str:
    """CPU seconds as hours, two significant digits ("—" when unknown)."""
    if seconds is None or not math.isfinite(seconds):
        return "—"
    return f"{seconds / 3600:.2g} h" if seconds < 360_000 else f"{seconds / 3600:,.0f} h"


def cost_note(c: ClaimSize) -> str:
    """What a power-limited claim's reason adds (issue 38, item 4): the units, the preset field and the estimated
    CPU hours of a fresh run that would decide it; "" for a claim that is not sized."""
    units = f"{'at least ' if c.at_least else ''}{c.needed:,} units" if c.needed else ""
    if c.status == SIZED and c.seconds is not None:
        return f"plan: --set {c.override} ({units}; a fresh run ≈ {fmt_hours(c.seconds)} CPU at this run's seconds per cell)"
    if c.status == SIZED:
        return f"plan: --set {c.override} ({units}; no cell timings to cost it)"
    if c.status == NO_FIELD and units:
        return f"plan: {units}; {c.why}"
    return ""
