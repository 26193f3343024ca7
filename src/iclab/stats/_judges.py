"""The tests behind every verdict: paper value, theory vs simulation, effect direction, absence on both sides and
at every cell (:mod:`iclab.stats`, whose docstring states each rule)."""

from __future__ import annotations

import dataclasses
import math
import re

import numpy as np

from iclab.domain import interval, nonnegative, positive, real
from iclab.errors import ConfigError
from iclab.stats._verdict import (
    AGREES,
    DEFAULT_REL_TOL,
    DISAGREES,
    NO_UNCERTAINTY,
    NOT_JUDGED,
    Verdict,
    fmt,
    not_judged,
    quantile,
    refusal,
)
from iclab.stats._arguments import check_judge
from iclab.stats._intervals import _needed, _units_to_decide, samples_to_decide, units_to_decide
from iclab.stats._rules import (
    AGREE,
    DISAGREE,
    NOMINAL,
    SHIFT_SE,
    band_false_agree,
    absence_rule,
    direction_rule,
    interval_rule,
    p_direction,
    p_tost,
    symmetric,
    units_to_agree,
    value_can_agree,
    value_rule,
)


def _tested(verdict: Verdict, record: dict) -> Verdict:
    """``verdict`` carrying its test: ``record`` (the judge's inputs and thresholds) with the verdict it gave."""
    clean = {k: (float(v) if isinstance(v, (np.floating, np.integer)) else v) for k, v in record.items()}
    return dataclasses.replace(verdict, test_record={**clean, "verdict": verdict.verdict})


def _verdict(verdict: str, estimate: float, unc: str, stat: str, record: dict, reason: str = "") -> Verdict:
    """The verdict a judge's rule gave: ``estimate`` formatted, its uncertainty ``unc``, the statistic ``stat`` and
    the ``reason``, carrying the test ``record``."""
    return _tested(Verdict(verdict, fmt(estimate), unc, stat, reason), record)


def _too_little_power(estimate: float, unc: str, stat: str, record: dict, why: str, needed) -> Verdict:
    """Not judged because the interval is too wide to decide: ``why`` it is, and what would decide. The record
    carries the count as data, ``needed``: the units that would decide at this effect and spread (the count ``why``
    names; None where no count does, or none is practical), which ``iclab plan`` reads."""
    record = {**record, "needed": _count(needed)}
    return _verdict(NOT_JUDGED, estimate, unc, stat, record, f"too little power: {why}")


def _count(needed) -> int | None:
    """A count of units as record data: a whole number >= 1, else None (no count decides, or an impractical one)."""
    if needed is None or isinstance(needed, str):
        match = re.search(r"\d[\d,]*", needed or "")  # a caller's exact count, in words: its first number
        return int(match.group().replace(",", "")) if match else None
    return int(needed) if math.isfinite(needed) and needed >= 1 else None


def _f(x: float | None) -> float | None:
    return None if x is None else float(x)


def _interval_text(estimate: float, lo: float, hi: float, confidence: float, unit: str) -> str:
    """``95 % CI [lo, hi]``, and the symmetric interval a test uses when ``[lo, hi]`` is lopsided
    (:func:`iclab.stats._rules.symmetric`)."""
    text = f"{confidence:.0%} CI [{fmt(lo, 3)}, {fmt(hi, 3)}]{unit}"
    s_lo, s_hi = (float(x) for x in symmetric(estimate, lo, hi))
    if fmt(s_lo, 3) != fmt(lo, 3) or fmt(s_hi, 3) != fmt(hi, 3):
        text += f" (tested at its wider side: [{fmt(s_lo, 3)}, {fmt(s_hi, 3)}])"
    return text


def judge_absence(
    estimate: float, ci: tuple[float, float], *, smallest: float, n: int | None = None, unit: str = ""
) -> Verdict:
    """Absence of an effect on both sides: agrees when the interval ``ci`` of the effect lies inside
    ``(-smallest, +smallest)`` (two one-sided tests at the interval's level); disagrees when it lies wholly above
    ``+smallest`` or wholly below ``-smallest`` (the reason names the side); otherwise not judged (too little
    power). An effect of either sign is therefore never read as "no effect".

    Arguments: ``estimate`` and the two ends of ``ci`` real numbers (NaN: not measured); ``smallest`` a finite number
    > 0 (the smallest effect it excludes); ``n`` None or an integer >= 0; ``unit`` a string written after each number
    of the reason (not checked: any value is formatted as text)."""
    estimate, smallest = real("estimate", estimate), positive("smallest", smallest, "the smallest effect excluded")
    ci = interval("ci", ci)
    check_judge(n=n)
    if not (math.isfinite(estimate) and all(math.isfinite(float(c)) for c in ci)):
        return not_judged("not measured (no finite effect or interval)", fmt(estimate))
    lo, hi = sorted(float(c) for c in ci)
    refused = refusal(ci=(lo, hi), measured=fmt(estimate))  # a zero-width interval must not read "no effect"
    if refused is not None:
        return refused
    record = {"judge": "absence", "estimate": float(estimate), "ci": [lo, hi], "smallest": float(smallest)}
    unc = _interval_text(estimate, lo, hi, 0.95, unit)
    lo, hi = (float(x) for x in symmetric(estimate, lo, hi))
    stat = f"effect {fmt(estimate, 3)}{unit}, {unc} vs no effect: ±{fmt(smallest, 3)}{unit}"
    z = quantile(0.95)
    p = p_tost(estimate, smallest, (estimate - lo) / z, (hi - estimate) / z)
    record |= {"confidence": 0.95, "n": n, "p": p}
    code = int(absence_rule(lo, hi, smallest))
    if code == AGREE:
        return _verdict(AGREES, estimate, unc, stat, record)
    if code == DISAGREE:
        side = "above +" if lo >= smallest else "below −"
        return _verdict(
            DISAGREES, estimate, unc, stat, record, f"an effect: the interval lies {side}{fmt(smallest, 3)}{unit}"
        )
    margin = abs(smallest - abs(estimate))
    why = f"the interval straddles ±{fmt(smallest, 3)}{unit}; deciding needs " + _needed(
        n, (hi - lo) / 2 / z, margin, z
    )
    return _too_little_power(estimate, unc, stat, record, why, samples_to_decide(n, (hi - lo) / 2 / z, margin, z))


def judge_value(
    measured: float,
    se: float | None,
    paper: float,
    *,
    k: float | None = None,
    paper_se: float = 0.0,
    tol: float | None = None,
    rel_tol: float | None = None,
    n: int | None = None,
    dof: float | None = None,
    exact: bool = False,
    unit: str = "units",
) -> Verdict:
    """Paper value (module docstring): disagrees when ``|measured - paper| > k * sqrt(se^2 + paper_se^2)``, agrees
    when not and the band around the measured value lies within the tolerance (``tol``, or ``rel_tol * |paper|``,
    default :data:`DEFAULT_REL_TOL`): ``|measured − paper| + k·spread ≤ tol``, so a true value at the tolerance's
    edge agrees at most Φ(−k) of the time; else not judged (too little power). A band that contains a value 5 SE away more than
    5 % of the time (a Student-t band from fewer than 5 units: :func:`iclab.stats._rules.band_false_agree`) may
    disagree but not agree: "not judged (too few units to agree)".

    ``k`` defaults to the 95 % Student-t quantile with ``dof`` degrees of freedom (2 without ``dof``); ``n`` is the
    number of ``unit`` behind ``se`` (to say how many would decide); ``exact`` says ``measured`` is a closed form
    (SE 0 allowed: the band is the paper's spread).

    Arguments: ``measured``, ``paper``, ``paper_se`` real numbers and ``se`` one or None (NaN: not measured or no
    uncertainty, a "not judged" verdict); ``k``, ``tol``, ``rel_tol`` None or finite numbers > 0; ``n`` None or an
    integer >= 0; ``dof`` None or a number >= 0; ``exact`` a boolean; ``unit`` a string, the plural noun of what ``n``
    counts, in the reason (not checked: any value is formatted as text)."""
    measured, paper, se = real("measured", measured), real("paper", paper), real("se", se, optional=True)
    paper_se = real("paper_se", paper_se, optional=True)
    for name, v in (("k", k), ("tol", tol), ("rel_tol", rel_tol)):
        if v is not None:
            positive(name, v)
    check_judge(n=n, dof=dof, exact=exact)
    if not (math.isfinite(measured) and math.isfinite(paper)):
        return not_judged("not measured (no finite value)", fmt(measured))
    if paper_se is None or not math.isfinite(paper_se) or paper_se < 0:
        return not_judged(f"{NO_UNCERTAINTY}: the paper's spread is {paper_se}", fmt(measured))
    if exact and se == 0:
        if paper_se == 0:
            return not_judged(f"{NO_UNCERTAINTY}: an exact value against a paper value without spread", fmt(measured))
        unc = "0 (exact)"
    else:
        refused = refusal(se, dof=dof, measured=fmt(measured))
        if refused is not None:
            return refused
        unc = f"± {fmt(se, 2)} (SE)"
    se = float(se or 0.0)
    k_given = k is not None
    k = float(k) if k_given else (quantile(0.95, dof) if dof is not None else 2.0)
    spread = math.hypot(se, paper_se)  # hypot: no underflow to 0 for a tiny spread (sqrt(x² + y²) would)
    if not (spread > 0 and math.isfinite(spread)):
        return not_judged(f"{NO_UNCERTAINTY}: the combined spread is {spread}", fmt(measured))
    half = k * spread
    tolerance = float(tol) if tol is not None else (DEFAULT_REL_TOL if rel_tol is None else rel_tol) * abs(paper)
    z = (measured - paper) / spread
    stat = f"z = {z:+.2f} (band ±{k:.3g}·{fmt(spread, 2)} = ±{fmt(half, 2)}; tolerance ±{fmt(tolerance, 2)})"
    record = {"judge": "value", "estimate": float(measured), "se": se, "paper": float(paper)}
    record |= {"paper_se": float(paper_se), "k": k, "tol": tolerance, "dof": _f(dof), "n": n, "exact": bool(exact)}
    record["p"] = p_tost(measured - paper, tolerance, spread, dof=dof)
    can_agree = value_can_agree(k, dof, exact and se == 0)
    code = int(value_rule(measured - paper, spread, k, tolerance, can_agree))
    if code == DISAGREE:
        return _verdict(DISAGREES, measured, unc, stat, record)
    if code == AGREE:
        return _verdict(AGREES, measured, unc, stat, record)
    gap = abs(measured - paper)
    if half <= tolerance and not can_agree:  # narrow enough, but a band this wide cannot fail a value 5 SE away
        record["needed"] = units_to_agree(k if k_given else None)
        return _verdict(NOT_JUDGED, measured, unc, stat, record, _too_few_to_agree(k, dof, n, k_given))
    if half > tolerance:
        why = f"the band ±{fmt(half, 2)} is wider than the claim's tolerance ±{fmt(tolerance, 2)}; "
    else:  # the band reaches past the tolerance: a value at its edge would agree too often
        why = f"the band {fmt(measured - paper, 2)} ± {fmt(half, 2)} reaches past the tolerance ±{fmt(tolerance, 2)}; "
    needed = None
    if gap >= tolerance:
        why += "no number of units makes it agree at this value (it lies at or past the tolerance)"
    else:
        why += _units_to_decide(n, se, paper_se, tolerance - gap, k, None if k_given else dof, unit)
        needed = units_to_decide(n, se, paper_se, tolerance - gap, k, None if k_given else dof)
    return _too_little_power(measured, unc, stat, record, why, needed)


def _too_few_to_agree(k: float, dof: float | None, n: int | None, k_given: bool) -> str:
    """The reason of a band that may disagree but not agree (:func:`iclab.stats._rules.band_false_agree`)."""
    need = units_to_agree(k if k_given else None)
    band = f"±{k:.3g} SE" + (
        f" with the SE from {fmt(dof + 1, 3)} units ({fmt(dof, 3)} dof)" if dof is not None else ""
    )
    return (
        f"too few units to agree: the band {band} contains a value {SHIFT_SE:g} SE from the paper's "
        f"{band_false_agree(k, dof):.0%} of the time (more than {NOMINAL:.0%}); "
        + (
            f"agreeing needs at least {need} units" + (f" (now {n})" if n else "")
            if need
            else "no number of units does (a band this wide even with a known SE)"
        )
    )


def judge_equivalence(
    estimate: float,
    se: float,
    target: float,
    *,
    rel_tol: float,
    confidence: float = 0.95,
    n: int | None = None,
    dof: float | None = None,
) -> Verdict:
    """Theory vs simulation: is ``estimate`` within ``rel_tol`` of ``target``, with confidence?

    Arguments: ``estimate``, ``target`` real numbers and ``se`` one or None (NaN, None: not judged); ``rel_tol`` a finite number > 0;
    ``confidence`` in (0, 1); ``n`` None or an integer >= 0; ``dof`` None or a number >= 0."""
    estimate, target = real("estimate", estimate), real("target", target)
    se = real("se", se, optional=True)
    positive("rel_tol", rel_tol)
    check_judge(confidence, n, dof)
    if not (math.isfinite(estimate) and math.isfinite(target)):
        return not_judged("not measured (no finite value)", fmt(estimate))
    refused = refusal(se, dof=dof, measured=fmt(estimate))
    if refused is not None:
        return refused
    z = quantile(confidence, dof)
    tol = abs(target) * rel_tol
    gap = estimate - target
    lo, hi = gap - z * se, gap + z * se
    stat = (
        (
            f"gap {fmt(gap, 3)} = {gap / target:+.2%} of theory, {confidence:.0%} CI [{fmt(lo, 3)}, {fmt(hi, 3)}]"
            f" vs allowed ±{fmt(tol, 3)} ({rel_tol:.0%})"
        )
        if target
        else f"gap {fmt(gap, 3)}"
    )
    unc = f"± {fmt(se, 2)} (SE)"
    record = {"judge": "equivalence", "estimate": float(estimate), "se": float(se), "target": float(target)}
    record |= {"rel_tol": float(rel_tol), "confidence": float(confidence), "dof": _f(dof), "n": n}
    record["p"] = p_tost(gap, tol, float(se), dof=dof)
    code = int(interval_rule(lo, hi, -tol, tol))
    if code == AGREE:
        return _verdict(AGREES, estimate, unc, stat, record)
    if code == DISAGREE:
        return _verdict(DISAGREES, estimate, unc, stat, record)
    margin = abs(abs(gap) - tol)
    why = f"the interval straddles ±{rel_tol:.0%}; deciding needs " + _needed(n, se, margin, z)
    return _too_little_power(estimate, unc, stat, record, why, samples_to_decide(n, se, margin, z))


def judge_direction(
    estimate: float,
    se: float | None = None,
    *,
    ci: tuple[float, float] | None = None,
    sign: int = +1,
    smallest: float = 0.0,
    confidence: float = 0.95,
    n: int | None = None,
    dof: float | None = None,
    unit: str = "",
    needs: str = "",
) -> Verdict:
    """Effect direction: the effect (``estimate``, with ``se`` or an explicit ``ci``) has sign ``sign``.

    ``smallest`` (> 0) is the smallest effect of interest: an interval inside ``(-inf, smallest)`` (for
    ``sign=+1``) that contains zero means the claimed effect is absent (disagrees). ``needs`` completes "deciding
    needs …" in a "too little power" reason when the caller knows it exactly (an exact interval:
    :func:`~iclab.stats.clopper_pearson_trials`); else the normal approximation's count (half-width ∝ 1/√n).

    Arguments: ``estimate`` a real number and ``se`` one or None (NaN: not judged); ``ci`` None or two real numbers;
    ``sign`` +1 or -1; ``smallest`` a finite number >= 0; ``confidence`` in (0, 1); ``n`` None or an integer >= 0;
    ``dof`` None or a number >= 0; ``unit`` a string written after each number of the reason and ``needs`` a string
    (empty: the normal approximation's count) that completes "deciding needs …" (neither checked: any value is
    formatted as text)."""
    if not isinstance(sign, (int, np.integer)) or isinstance(sign, bool) or sign not in (+1, -1):
        raise ConfigError("sign", sign, "+1 or -1")
    estimate, se = real("estimate", estimate), real("se", se, optional=True)
    ci = None if ci is None else interval("ci", ci)
    nonnegative("smallest", smallest)
    check_judge(confidence, n, dof)
    if not math.isfinite(estimate):
        return not_judged("not measured (no finite effect)")
    refused = refusal(se, ci=ci, dof=dof, measured=fmt(estimate))
    if refused is not None:
        return refused
    given = None if ci is None else [float(c) for c in sorted(ci)]
    if ci is None:
        z = quantile(confidence, dof)
        ci = (estimate - z * se, estimate + z * se)
    lo, hi = sorted(ci)
    unc = _interval_text(estimate, lo, hi, confidence, unit)
    if given is not None:
        lo, hi = (float(x) for x in symmetric(estimate, lo, hi))
    stat = f"effect {fmt(estimate, 3)}{unit}, " + unc + (" (claimed > 0)" if sign > 0 else " (claimed < 0)")
    record = {"judge": "direction", "estimate": float(estimate), "se": _f(se) if given is None else None}
    record |= {"ci": given, "sign": sign, "smallest": float(smallest), "confidence": float(confidence)}
    record |= {"dof": _f(dof) if given is None else None, "n": n}
    side = se if given is None else (estimate - lo if sign > 0 else hi - estimate) / quantile(confidence)
    record["p"] = p_direction(estimate, side, sign, dof if given is None else None)
    code = int(direction_rule(lo, hi, sign, smallest))
    if code == AGREE:
        return _verdict(AGREES, estimate, unc, stat, record)
    if code == DISAGREE:
        s_hi = max(sign * lo, sign * hi)  # the interval's far end in the claimed direction
        why = (
            "the effect has the opposite sign"
            if s_hi < 0
            else f"no effect: the interval excludes every effect ≥ {fmt(smallest, 3)}{unit}"
        )
        return _verdict(DISAGREES, estimate, unc, stat, record, why)
    if needs:  # the caller's exact count
        why = f"the interval contains zero; deciding needs {needs}"
        return _too_little_power(estimate, unc, stat, record, why, needs)
    half = (hi - lo) / 2
    # the half-width that decides at this estimate: below |estimate| the interval excludes 0; below
    # smallest − sign·estimate it excludes every effect ≥ smallest (when a smallest effect is given)
    decides = max(abs(estimate), smallest - sign * estimate if smallest > 0 else 0.0)
    q = quantile(confidence, dof)
    why = f"the interval contains zero; deciding (a half-width below {fmt(decides, 3)}{unit}) needs " + _needed(
        n, half / q, decides, q
    )
    return _too_little_power(estimate, unc, stat, record, why, samples_to_decide(n, half / q, decides, q))
