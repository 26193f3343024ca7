"""The stats test a claim's :class:`~iclab.claims._rule.Rule` names, run on a combined estimate (issue 21/43).

:func:`run_test` maps the rule's kind to one test of :mod:`iclab.stats`: ``direction`` → ``judge_direction`` (the
band's sign and its smallest effect), ``absence`` → ``judge_absence`` (the 95% band within ±smallest), ``value`` →
``judge_value`` (the paper value within ``k`` SE or ``tol``), ``equivalence`` → ``judge_equivalence`` (within
``rel_tol`` of a number or of the baseline's mean). A ``relative_to`` column scales the smallest effect or the
tolerance by its mean over the reference rows. :func:`rounding_reason` refuses an estimate whose uncertainty is
float64 rounding of its value: a zero-width interval cannot fail. :class:`Estimate` is what a combine rule gives
the test.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from iclab.claims._rule import BASE, Rule
from iclab.claims._sample import Sample
from iclab.stats import (
    NO_UNCERTAINTY,
    Verdict,
    judge_absence,
    judge_direction,
    judge_equivalence,
    judge_value,
    quantile,
    refusal,
)

__all__ = ["ROUNDING", "Estimate", "rounding_reason", "run_test"]

#: an SE (or a half-width) at most this fraction of max(1, |value|) is float64 rounding, no uncertainty
ROUNDING = 1e-12


@dataclass(frozen=True)
class Estimate:
    """A combined measurement: ``value`` with a standard error ``se`` (and ``dof`` for a Student-t band; None: normal)
    or an explicit 95 % interval ``ci``, from ``n`` units (None: the number of per-unit values); ``how`` says how it
    was combined (put before the test statistic), ``tail`` what follows it; ``paper_se`` (a paper value) the spread
    the band adds to the SE when the combine rule measures it (e.g. between draws the paper made once); ``needs``
    (a direction test) what would decide it, completing "deciding needs …" in a "too little power" reason, when the
    combine rule's interval is exact and the judge's normal approximation of that count would not hold
    (:func:`iclab.stats.judge_direction`); ``refused`` why the combine rule cannot give an estimate the test may
    judge (fewer units than its rule needs): the claim is "not judged" with that reason, never tested."""

    value: float
    se: float | None = None
    ci: tuple[float, float] | None = None
    dof: float | None = None
    n: int | None = None
    how: str = ""
    tail: str = ""
    paper_se: float | None = None
    needs: str = ""
    refused: str = ""


def rounding_reason(est: Estimate) -> str:
    """Why an estimate whose SE (or half-width) is float64 rounding of its value (at most :data:`ROUNDING` of
    max(1, |value|)) is not judged, else "": a zero-width interval cannot fail; an exact identity is a test."""
    half = est.se if est.ci is None else abs(float(est.ci[1]) - float(est.ci[0])) / 2
    if half is None or not math.isfinite(half) or half <= 0 or half > ROUNDING * max(1.0, abs(est.value)):
        return ""
    return (
        f"{NO_UNCERTAINTY}: the uncertainty {half:.1e} is float64 rounding of the value {est.value:.4g} — an exact "
        "identity is a test, not a claim"
    )


def _reference(t: Rule, sample: Sample) -> float:
    """``t.relative_to``'s mean over the reference rows (the baseline's when paired, else the selection's)."""
    rows = sample.base if sample.base is not None else sample.rows
    return float(rows[t.relative_to].mean())


def run_test(t: Rule, est: Estimate, sample: Sample, n: int) -> Verdict:
    """The stats test of ``t`` on ``est``."""
    if t.kind in ("direction", "absence"):
        smallest = t.smallest * _reference(t, sample) if t.relative_to else t.smallest
        if t.kind == "direction":
            return judge_direction(
                est.value,
                est.se,
                ci=est.ci,
                sign=t.sign,
                smallest=smallest,
                dof=est.dof,
                n=n,
                unit=t.unit,
                needs=est.needs,
            )
        refused = None if est.ci is not None else refusal(est.se, dof=est.dof)
        return refused or judge_absence(est.value, est.ci or _interval(est), smallest=smallest, n=n, unit=t.unit)
    if t.kind == "value":
        tol = t.tol * _reference(t, sample) if (t.tol is not None and t.relative_to) else t.tol
        paper_se = t.paper_se if est.paper_se is None else est.paper_se
        return judge_value(
            est.value,
            est.se,
            t.paper,
            k=t.k,
            paper_se=paper_se,
            tol=tol,
            rel_tol=t.rel_tol,
            n=n,
            dof=est.dof,
            unit=t.units,
        )
    if t.target != BASE:  # equivalence against a number
        return judge_equivalence(est.value, est.se, float(t.target), rel_tol=t.rel_tol, n=n, dof=est.dof)
    # against the baseline's mean: the estimate is the baseline plus the paired effect
    target = float(sample.b.mean())
    v = judge_equivalence(target + est.value, est.se, target, rel_tol=t.rel_tol, n=n, dof=est.dof)
    return dataclasses.replace(v, statistic=v.statistic.replace("of theory", f"of {t.against}"))


def _interval(est: Estimate) -> tuple[float, float]:
    """The Student-t 95% band of ``est`` (its SE and dof)."""
    half = quantile(0.95, est.dof) * est.se
    return est.value - half, est.value + half
