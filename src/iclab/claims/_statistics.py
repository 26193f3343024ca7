"""The statistics the paper packages share: the named pieces claim records reference (``Measure.combine``,
``Measure.measured``, ``Measure.column``) that are one rule, written once here so that they cannot drift apart
(issue 21: a paper's package keeps only the statistics that are truly its own; the vocabulary is
:mod:`iclab.claims._records`, the tests :mod:`iclab.stats`).

- :func:`across_units_or`, :func:`within_units`: the mean over the units of replication with its standard error
  across the units when the config runs enough of them, else from each unit's own (within-run) SE
  (:func:`iclab.stats.unit_mean`); a planned unit without a result makes the claim "not judged".
- :func:`binary_units`: the mean over units of paired 0/1-outcome differences (question groups), its band across
  them at least as wide as the rule of three over the outcomes behind them.
- :func:`binomial_share`: the share of trials that hit, summed over units that each hold some trials, with its
  Clopper–Pearson interval; it places its rows at a truth itself (each unit's hits redrawn as binomial).
- :func:`measured_as`: a measured text from a format string over the estimate and the sample.
- :func:`whole_rows`: the column of a measure whose combine rule reads the selected rows themselves.
- :func:`not_configured`, :func:`some_at_most`: ``ClaimRecord.not_run`` for a claim whose cells need a config value
  the preset lacks (a named value, or one at most a limit).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable, Mapping

import numpy as np
import pandas as pd

from iclab.claims._records import Estimate, Sample
from iclab.stats import MIN_UNITS, binary_unit_band, clopper_pearson, quantile, unit_mean

__all__ = [
    "across_units_or",
    "within_units",
    "binary_units",
    "binomial_share",
    "lost_units",
    "measured_as",
    "whole_rows",
    "not_configured",
    "some_at_most",
]

#: the per-unit standard errors of a sample: ``(config, Sample) -> (units,)`` (None: ``Sample.ses``)
WithinSE = Callable[[Any, Sample], np.ndarray]


def across_units_or(
    within: WithinSE | None = None,
    min_units: float = MIN_UNITS,
    *,
    planned: str | int | None = None,
    drop_nan: bool = False,
    unit: str = "",
    n_column: str = "",
    within_text: str = "",
    fallback: bool = True,
) -> Callable[[Any, Sample], Estimate]:
    """The combine rule "across units when the design has enough, else the within-run SE"
    (:func:`iclab.stats.unit_mean`, which states the rule and why) of the sample's per-unit values.

    The rule is fixed by the design, never by the rows that happen to be there: ``planned`` (a config field, an
    ``int`` or a tuple whose length counts, or a number) is how many units the config runs; from ``min_units`` of them
    on (default :data:`iclab.stats.MIN_UNITS`; with 2, two units give a t(1) band that the test refuses), or when
    the rows have that many, the SE is across the units, below it the units' own within-run SEs. A unit without a result (fewer per-unit values than
    planned) makes the estimate refused — "not judged", naming the units found and planned — so a lost unit never
    turns the SE across units into a smaller within-unit SE (issue 43). Without ``planned`` the rule is across the
    units and fewer than ``min_units`` are refused.

    ``within`` gives each unit's own SE (default: ``Measure.se_column``, paired SEs combined by the judge); ``unit``
    names the unit in the statistic and the refusal ("SE across 3 models", "prompt-level SE (1 model)"); ``n_column``
    a row column with the prompts behind a within-run SE, which then is the estimate's ``n`` (else the number of
    units); ``within_text`` names the within-run SEs in the claim's test text ("prompt-level SEs over their n_test
    prompts"; default "within-run SEs"). ``fallback=False``: never the within-run SE, whatever the design runs (a
    unit's own SE leaves out what varies between units, e.g. one trained network's SE over its evaluation prompts
    leaves out training): fewer than ``min_units`` units is "too few units", and with ``planned`` a planned unit
    without a result is refused as above."""

    def combine(config: Any, sample: Sample) -> Estimate:
        values = sample.values[np.isfinite(sample.values)] if drop_nan else sample.values
        k, want = len(values), _planned(config, planned)
        across = min_units != math.inf and (not fallback or want is None or want >= min_units or k >= min_units)
        name = unit or "unit"
        if want is not None and k < want:
            return Estimate(math.nan, math.nan, n=k, refused=lost_units(k, want, name))
        if across and k < min_units:
            why = f"{k} {name}(s) have a result; an SE across them needs at least {min_units:g}"
            return Estimate(math.nan, math.nan, n=k, refused=f"too few units: {why}; never judged on a within-unit SE")
        ses = sample.ses if within is None else within(config, sample)
        m, se, dof = unit_mean(sample.values, ses, min_units if across else math.inf, drop_nan)
        n = int(sample.rows[n_column].iloc[-1]) if dof is None and n_column in sample.rows else k
        how = ""
        if unit:
            many = f"{k} {unit}{'s' if k != 1 else ''}"
            how = f"SE across {many}" if dof is not None else f"prompt-level SE ({many})"
        return Estimate(m, se, dof=dof, n=n, how=how)

    def describe(units: str) -> str:
        """The rule in the claim's test text (:meth:`~iclab.claims._rule.Rule.describe`)."""
        own_se = f"from the {units}' own {within_text or 'within-run SEs'}: √(Σ se²)/k, normal"
        lost = "; a planned unit without a result: not judged" if planned is not None else ""
        if min_units == math.inf:
            return f"mean over {units}, its SE {own_se}{lost}"
        refused = f" (a t band from fewer than {MIN_UNITS} is refused)" if min_units < MIN_UNITS else ""
        if planned is None or not fallback:  # always across the units
            across = f"mean over {units}, its SE across them (Student t, n − 1 dof; fewer than {min_units:g} {units}"
            return f"{across}: not judged){lost}"
        return (
            f"mean over {units}, its SE across them (Student t, n − 1 dof) when the config runs {min_units:g} {units} "
            f"or more{refused}, else {own_se}{lost}"
        )

    combine.__name__ = f"across_units_or_{min_units}"
    combine.describe = describe
    return combine


def lost_units(k: int, want: int, name: str = "unit") -> str:
    """The refusal of an estimate with ``k`` of the ``want`` units the config runs (a lost unit is never replaced by
    a smaller within-unit SE, issue 43): the one text of every combine rule that counts its planned units."""
    return (
        f"too few units: {k} of the {want} {name}s the config runs have a result (a lost {name} is not replaced); "
        "never judged on a within-unit SE"
    )


def _planned(config: Any, planned: str | int | None) -> int | None:
    """How many units the config runs (:func:`across_units_or`'s ``planned``), or None when not stated."""
    if planned is None or isinstance(planned, (int, float)):
        return None if planned is None else int(planned)
    have = getattr(config, planned)
    return len(have) if isinstance(have, (tuple, list)) else int(have)


def within_units(
    within: WithinSE | None = None, *, drop_nan: bool = False, n_column: str = "", within_text: str = ""
) -> Callable[[Any, Sample], Estimate]:
    """The combine rule of cells measured once per unit with their own SEs (thousands of prompts each): the mean with
    the SE :math:`\\sqrt{\\sum se^2} / k`, normal (:func:`across_units_or` that never goes across units)."""
    return across_units_or(within, math.inf, drop_nan=drop_nan, n_column=n_column, within_text=within_text)


def binary_units(outcomes: str, unit: str = "unit") -> Callable[[Any, Sample], Estimate]:
    """The combine rule of units that each hold paired 0/1 outcomes (a question group's EM with a change minus
    without, the mean over its questions): the mean over the units with its Student-t band across them, at least
    ±3/N wide, N the outcomes behind them (the sum of the rows' ``outcomes`` column;
    :func:`iclab.stats.binary_unit_band`: units that all show no change have zero spread, and the rule of three
    keeps "no change seen" from reading as "no effect possible"). Fewer than :data:`~iclab.stats.MIN_UNITS` units:
    "too few units". The estimate's ``n`` is N, the count a larger run scales (questions, not groups)."""

    def combine(config: Any, sample: Sample) -> Estimate:
        k = len(sample.values)
        if k < MIN_UNITS:
            why = f"{k} {unit}(s) have a result; a band across them needs at least {MIN_UNITS}"
            return Estimate(math.nan, math.nan, n=k, refused=f"too few units: {why}")
        n = int(sample.rows[outcomes].sum())
        m, lo, hi, k = binary_unit_band(sample.values, n)
        return Estimate(m, ci=(lo, hi), n=n, how=f"band across {k} {unit}s ({n} {outcomes})")

    def describe(units: str) -> str:
        return (
            f"mean over {units}, its band across them (Student t, n − 1 dof; fewer than {MIN_UNITS} {units}: not "
            f"judged), at least ±3/N wide (N the {outcomes} behind them: the rule of three)"
        )

    combine.__name__ = f"binary_units_{outcomes}"
    combine.describe = describe
    return combine


def binomial_share(hits: str, trials: str, unit: str = "unit") -> Callable[[Any, Sample], Estimate]:
    r"""The combine rule of a share of trials that hit (table points whose sign follows a rule): H/N, H and N the
    sums of the rows' ``hits`` and ``trials`` columns over the units, its SE the wider side of the Clopper–Pearson
    95 % interval over 1.96 (the interval itself in the estimate's tail). The trials are taken as independent
    Bernoulli draws — the model the interval states. ``n`` is N. No trials: NaN, "no uncertainty".

    A share is no mean of per-unit values that a shift would move, so the row-level calibration places the rows
    itself (``at_truth``): each unit's hits redrawn as Binomial(its trials, truth), the sampling the interval
    states. ``bounds`` (0, 1): a truth outside them (the far edge of a tolerance around 1) is no possible share."""

    def combine(config: Any, sample: Sample) -> Estimate:
        h, n = int(sample.rows[hits].sum()), int(sample.rows[trials].sum())
        if n == 0:
            return Estimate(math.nan, math.nan, n=0)
        p, (lo, hi) = h / n, clopper_pearson(h, n)
        tail = f"Clopper–Pearson 95 % [{lo:.3f}, {hi:.3f}]"
        return Estimate(p, max(p - lo, hi - p) / quantile(0.95), n=n, tail=tail)

    def measured(config: Any, sample: Sample, est: Estimate) -> str:
        h, n = int(sample.rows[hits].sum()), int(sample.rows[trials].sum())
        return f"{h}/{n} = {h / n:.1%}" if n else "—"

    def at_truth(config: Any, sample: Sample, truth: float, rng: np.random.Generator) -> Sample:
        if not 0.0 <= truth <= 1.0:
            raise ValueError(f"a share of {truth:g} is outside [0, 1]")
        rows = sample.rows.copy()
        rows[hits] = rng.binomial(rows[trials].to_numpy(dtype=np.int64), truth)
        return dataclasses.replace(sample, rows=rows)

    def describe(units: str) -> str:
        return f"the share of {trials} that hit, summed over {units}, with its Clopper–Pearson 95 % interval"

    combine.__name__ = f"binomial_share_{hits}"
    combine.at_truth = at_truth  # type: ignore[attr-defined]
    combine.bounds = (0.0, 1.0)  # type: ignore[attr-defined]
    combine.describe = describe  # type: ignore[attr-defined]
    combine.measured = measured  # type: ignore[attr-defined]  # its measured text: "H/N = p"
    return combine


def measured_as(form: str, fewest: int = 1) -> Callable[[Any, Sample, Estimate], str]:
    """A ``measured`` text (or a ``note``): ``form`` formatted with ``v`` (the estimate), ``n`` (its units, else the
    number of per-unit values ``k``), ``d`` (their mean), ``a`` and ``b`` (the means of the selection's and the
    baseline's values) and ``rows[col]``, ``base[col]`` (the mean of a column of the selected or the baseline rows);
    "—" when the estimate is not finite or rests on fewer than ``fewest`` units."""

    def text(config: Any, s: Sample, est: Estimate) -> str:
        k = len(s.values)
        n = est.n if est.n is not None else k
        if not math.isfinite(est.value) or n < fewest:
            return "—"
        b = float(s.b.mean()) if s.b is not None else math.nan
        means = {"rows": _ColumnMeans(s.rows), "base": _ColumnMeans(s.base)}
        return form.format(v=est.value, n=n, k=k, d=float(s.values.mean()), a=float(s.a.mean()), b=b, **means)

    text.__name__ = "measured_as"
    return text


class _ColumnMeans:
    """``means[col]``: the mean of column ``col`` of ``rows`` (NaN without rows), for a format string."""

    def __init__(self, rows: pd.DataFrame | None) -> None:
        self.rows = rows

    def __getitem__(self, col: str) -> float:
        return float(self.rows[col].mean()) if self.rows is not None else math.nan


def whole_rows(rows: pd.DataFrame) -> np.ndarray:
    """The column of a measure whose combine rule reads the selected rows themselves: zeros, one per row."""
    return np.zeros(len(rows))


def not_configured(field: str, *wanted: Any, because: Mapping[Any, str] | None = None) -> Callable[[Any, Any], str]:
    """``ClaimRecord.not_run``: why the config runs none of a claim's cells — its ``field`` (a list) is empty, or
    lacks one of the ``wanted`` values the claim names (with ``because[value]``, why a preset may lack it) — or ""
    when it runs them."""

    def why(config: Any, record: Any) -> str:
        have = getattr(config, field)
        lacking = [w for w in wanted if w not in have]
        if have and not lacking:
            return ""
        notes = "; ".join((because or {})[w] for w in lacking if w in (because or {}))
        text = f"lacks {', '.join(str(w) for w in lacking)}" if lacking else "is empty"
        return f"not run in this preset: `{field}` {text}" + (f" ({notes})" if notes else "")

    why.__name__ = f"not_configured_{field}"
    return why


def some_at_most(field: str, limit: float) -> Callable[[Any, Any], str]:
    """``ClaimRecord.not_run``: why the config runs none of a claim's cells — its ``field`` (a list of sizes) has no
    value at most ``limit`` — or "" when it has one."""

    def why(config: Any, record: Any) -> str:
        have = getattr(config, field)
        if any(x <= limit for x in have):
            return ""
        return f"not run in this preset: `{field}` has no value ≤ {limit:g} ({', '.join(f'{x:g}' for x in have)})"

    why.__name__ = f"some_{field}_at_most_{limit:g}"
    return why
