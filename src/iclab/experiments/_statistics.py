"""The statistics the paper packages share: the named pieces claim records reference (``Measure.combine``,
``Measure.measured``, ``Measure.column``) that are one rule, written once here so that they cannot drift apart
(issue 21: a paper's package keeps only the statistics that are truly its own; the vocabulary is
:mod:`iclab.experiments._records`, the tests :mod:`iclab.stats`).

- :func:`unit_mean`, :func:`across_units_or`, :func:`within_units`: the mean over the units of replication with its
  standard error across the units when there are enough of them, else from each unit's own (within-run) SE.
- :func:`measured_as`: a measured text from a format string over the estimate and the sample.
- :func:`whole_rows`: the column of a measure whose combine rule reads the selected rows themselves.
- :func:`not_configured`: ``ClaimRecord.not_run`` for a claim whose cells need a config value the preset lacks.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd

from iclab.experiments._records import Estimate, Sample
from iclab.stats import MIN_UNITS

__all__ = ["unit_mean", "across_units_or", "within_units", "measured_as", "whole_rows", "not_configured"]

#: the per-unit standard errors of a sample: ``(config, Sample) -> (units,)`` (None: ``Sample.ses``)
WithinSE = Callable[[Any, Sample], np.ndarray]


def unit_mean(
    values: Sequence[float], ses: Sequence[float] | None, min_units: float, drop_nan: bool = False
) -> tuple[float, float, int | None]:
    r"""The mean :math:`\bar v` of the per-unit ``values`` (k units), its standard error and the dof of its band.

    From ``min_units`` units on, the SE is the spread across the units, :math:`s / \sqrt k`, with a Student-t band
    of k − 1 dof: it holds every source of variation between replicates (seed, trained model, W_e draw). With fewer
    units that spread rests on too few degrees of freedom (two units: t(1) makes the band ±12.7 SE, and
    :func:`iclab.stats.refusal` refuses a t band from fewer than :data:`iclab.stats.MIN_UNITS` units), so the SE
    is the units' own within-run SEs ``ses`` (over prompts or test points), :math:`\sqrt{\sum_i se_i^2} / k`, with a
    normal band — which leaves out the between-unit variation that so few units cannot estimate (``min_units`` =
    ``math.inf``: always). No ``ses``: the SE is NaN (refused: no uncertainty).

    ``drop_nan``: units without a finite value are left out (a prompt length that was not evaluated); else one
    makes the mean NaN, which the test refuses. No unit left: NaN, NaN."""
    v = np.asarray(values, dtype=float)
    s = None if ses is None else np.asarray(ses, dtype=float)
    if drop_nan:
        keep = np.isfinite(v)
        v, s = v[keep], (None if s is None else s[keep])
    k = v.size
    if k == 0:
        return math.nan, math.nan, None
    if k >= min_units:
        return float(v.mean()), float(v.std(ddof=1) / math.sqrt(k)), k - 1
    return float(v.mean()), float(np.sqrt((s**2).sum()) / k) if s is not None else math.nan, None


def across_units_or(
    within: WithinSE | None = None,
    min_units: float = MIN_UNITS,
    *,
    drop_nan: bool = False,
    unit: str = "",
    n_column: str = "",
) -> Callable[[Any, Sample], Estimate]:
    """The combine rule "across units when there are enough, else the within-run SE" (:func:`unit_mean`) of the
    sample's per-unit values. ``within`` gives each unit's own SE (default: ``Measure.se_column``, paired SEs
    combined by the judge); ``unit`` names the unit in the statistic ("SE across 3 models", "prompt-level SE
    (2 models)"; "" says nothing); ``n_column`` a row column with the prompts behind a within-run SE, which then
    is the estimate's ``n`` (else the number of units)."""

    def combine(config: Any, sample: Sample) -> Estimate:
        ses = sample.ses if within is None else within(config, sample)
        m, se, dof = unit_mean(sample.values, ses, min_units, drop_nan)
        k = len(sample.values)
        n = int(sample.rows[n_column].iloc[-1]) if dof is None and n_column in sample.rows else k
        how = ""
        if unit:
            many = f"{k} {unit}{'s' if k != 1 else ''}"
            how = f"SE across {many}" if dof is not None else f"prompt-level SE ({many})"
        return Estimate(m, se, dof=dof, n=n, how=how)

    combine.__name__ = f"across_units_or_{min_units}"
    return combine


def within_units(within: WithinSE | None = None, *, drop_nan: bool = False, n_column: str = ""):
    """The combine rule of cells measured once per unit with their own SEs (thousands of prompts each): the mean with
    the SE :math:`\\sqrt{\\sum se^2} / k`, normal (:func:`across_units_or` that never goes across units)."""
    return across_units_or(within, math.inf, drop_nan=drop_nan, n_column=n_column)


def measured_as(form: str, fewest: int = 1) -> Callable[[Any, Sample, Estimate], str]:
    """A ``measured`` text: ``form`` formatted with ``v`` (the estimate), ``n`` (its units, or the number of per-unit
    values), ``k`` (the number of per-unit values), ``d`` (their mean), ``a`` and ``b`` (the means of the
    selection's and the baseline's values); "—" when the estimate is not finite or rests on fewer than ``fewest``
    units."""

    def text(config: Any, sample: Sample, est: Estimate) -> str:
        k = len(sample.values)
        n = est.n if est.n is not None else k
        if not math.isfinite(est.value) or n < fewest:
            return "—"
        b = float(sample.b.mean()) if sample.b is not None else math.nan
        return form.format(v=est.value, n=n, k=k, d=float(sample.values.mean()), a=float(sample.a.mean()), b=b)

    text.__name__ = "measured_as"
    return text


def whole_rows(rows: pd.DataFrame) -> np.ndarray:
    """The column of a measure whose combine rule reads the selected rows themselves: zeros, one per row."""
    return np.zeros(len(rows))


def not_configured(field: str, *wanted: Any) -> Callable[[Any, Any], str]:
    """``ClaimRecord.not_run``: why the config runs none of a claim's cells — its ``field`` (a list) is empty, or
    lacks one of the ``wanted`` values the claim names — or "" when it runs them."""

    def why(config: Any, record: Any) -> str:
        have = getattr(config, field)
        gone = ", ".join(str(w) for w in wanted if w not in have)
        if have and not gone:
            return ""
        return f"not run in this preset: `{field}` " + (f"lacks {gone}" if gone else "is empty")

    why.__name__ = f"not_configured_{field}"
    return why
