"""The tests behind every verdict: paper value, theory vs simulation, effect direction, absence on both sides and
at every cell (:mod:`iclab.stats`, whose docstring states each rule)."""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

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


def judge_absence(
    estimate: float, ci: tuple[float, float], *, smallest: float, n: int | None = None, unit: str = ""
) -> Verdict:
    """Absence of an effect on both sides: agrees when the interval ``ci`` of the effect lies inside
    ``(-smallest, +smallest)`` (two one-sided tests at the interval's level); disagrees when it lies wholly above
    ``+smallest`` or wholly below ``-smallest`` (the reason names the side); otherwise not judged (too little
    power). An effect of either sign is therefore never read as "no effect"."""
    if smallest <= 0:
        raise ValueError("an absence claim needs the smallest effect it excludes (> 0)")
    if not (math.isfinite(estimate) and all(math.isfinite(float(c)) for c in ci)):
        return not_judged("not measured (no finite effect or interval)", fmt(estimate))
    lo, hi = sorted(float(c) for c in ci)
    refused = refusal(ci=(lo, hi), measured=fmt(estimate))  # a zero-width interval must not read "no effect"
    if refused is not None:
        return refused
    unc = f"95 % CI [{fmt(lo, 3)}, {fmt(hi, 3)}]{unit}"
    stat = f"effect {fmt(estimate, 3)}{unit}, {unc} vs no effect: ±{fmt(smallest, 3)}{unit}"
    if -smallest < lo and hi < smallest:
        return Verdict(AGREES, fmt(estimate), unc, stat)
    if lo >= smallest or hi <= -smallest:
        side = "above +" if lo >= smallest else "below −"
        return Verdict(
            DISAGREES, fmt(estimate), unc, stat, f"an effect: the interval lies {side}{fmt(smallest, 3)}{unit}"
        )
    z = quantile(0.95)
    margin = abs(smallest - abs(estimate))
    return Verdict(
        NOT_JUDGED,
        fmt(estimate),
        unc,
        stat,
        f"too little power: the interval straddles ±{fmt(smallest, 3)}{unit}; deciding needs "
        + _needed(n, (hi - lo) / 2 / z, margin, z),
    )


def judge_every_cell(
    cells: Sequence[tuple[str, float, float, float]],
    *,
    rel_tol: float,
    confidence: float = 0.95,
    n: int | None = None,
) -> Verdict:
    """Theory vs simulation at every cell of a family; ``cells`` are ``(label, estimate, se, target)``.

    Agrees when every cell's ``confidence`` interval lies within ``target (1 ± rel_tol)`` (an intersection–union
    test: "every cell agrees" is concluded at the level of each cell's test, no correction, Berger 1982). Disagrees
    when some cell's interval at the Bonferroni level ``1 − (1 − confidence)/m`` lies wholly outside: Holm's
    step-down rejects some cell exactly when its first (Bonferroni) step does, so a "disagrees" has family-wise error
    at most ``1 − confidence``. Otherwise not judged, naming the undecided cells."""
    m = len(cells)
    if not m:
        return not_judged("not measured (no cells)")
    bonferroni = 1 - (1 - confidence) / m
    each = [(lab, judge_equivalence(e, s, t, rel_tol=rel_tol, confidence=confidence, n=n)) for lab, e, s, t in cells]
    strict = [(lab, judge_equivalence(e, s, t, rel_tol=rel_tol, confidence=bonferroni, n=n)) for lab, e, s, t in cells]
    gaps = [abs(e - t) / abs(t) if t else math.inf for _, e, _, t in cells]
    worst = int(np.nanargmax(gaps)) if any(math.isfinite(g) for g in gaps) else 0
    lab, e, s, t = cells[worst]
    measured = f"worst |gap| {gaps[worst]:.1%} at {lab}"
    unc = f"± {fmt(abs(s / t) if t else s, 2)} (SE, relative) there"
    inside = sum(v.verdict == AGREES for _, v in each)
    outside = [lab for lab, v in strict if v.verdict == DISAGREES]
    stat = (
        f"{inside}/{m} cells with the {confidence:.0%} CI within ±{rel_tol:.0%} of theory; "
        f"{len(outside)} wholly outside at the Bonferroni {bonferroni:.2%} level"
        + (f" ({', '.join(outside[:4])}{', …' if len(outside) > 4 else ''})" if outside else "")
        + f"; worst: {each[worst][1].statistic}"
    )
    if outside:
        return Verdict(DISAGREES, measured, unc, stat, f"outside ±{rel_tol:.0%} at {', '.join(outside[:4])}")
    if inside == m:
        return Verdict(AGREES, measured, unc, stat)
    open_ = [(lab, v) for lab, v in each if v.verdict != AGREES]
    return Verdict(
        NOT_JUDGED,
        measured,
        unc,
        stat,
        f"{len(open_)} of {m} cells undecided ({', '.join(lab for lab, _ in open_[:4])}"
        f"{', …' if len(open_) > 4 else ''}); {open_[0][0]}: {open_[0][1].reason}",
    )


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
    when not and the band's half-width is within the tolerance (``tol``, or ``rel_tol * |paper|``, default
    :data:`DEFAULT_REL_TOL`), else not judged (too little power).

    ``k`` defaults to the 95 % Student-t quantile with ``dof`` degrees of freedom (2 without ``dof``); ``n`` is the
    number of ``unit`` behind ``se`` (to say how many would decide); ``exact`` says ``measured`` is a closed form
    (SE 0 allowed: the band is the paper's spread)."""
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
    spread = math.sqrt(se**2 + paper_se**2)
    half = k * spread
    tolerance = float(tol) if tol is not None else (DEFAULT_REL_TOL if rel_tol is None else rel_tol) * abs(paper)
    z = (measured - paper) / spread
    stat = f"z = {z:+.2f} (band ±{k:.3g}·{fmt(spread, 2)} = ±{fmt(half, 2)}; tolerance ±{fmt(tolerance, 2)})"
    if abs(z) > k:
        return Verdict(DISAGREES, fmt(measured), unc, stat)
    if half <= tolerance:
        return Verdict(AGREES, fmt(measured), unc, stat)
    return Verdict(
        NOT_JUDGED,
        fmt(measured),
        unc,
        stat,
        f"too little power: the band ±{fmt(half, 2)} is wider than the claim's tolerance ±{fmt(tolerance, 2)}; "
        + _units_to_decide(n, se, paper_se, tolerance, k, None if k_given else dof, unit),
    )


def _units_to_decide(n, se: float, paper_se: float, tol: float, k: float, dof: float | None, unit: str) -> str:
    """How many units n' shrink the band ``k·√(se²·n/n' + paper_se²)`` to ``tol`` (SE ∝ 1/√n), with a Student-t
    ``k`` recomputed at n' − 1 dof when the band is Student t (``dof`` given)."""
    k_at = (lambda m: quantile(0.95, m - 1)) if dof is not None else (lambda m: k)
    if se > 0 and not n:
        return f"deciding needs more {unit} (a narrower band)"
    if se <= 0 or (tol / k_at(math.inf)) ** 2 <= paper_se**2:
        return "no number of units decides: the spread added to the SE (the paper's, or between draws) is too wide"

    def fits(m: float) -> bool:
        return k_at(m) * math.sqrt(se * se * n / m + paper_se**2) <= tol

    lo, hi = int(n), int(n) + 1
    while not fits(hi):
        lo, hi = hi, hi * 2
        if hi > 1e15:
            return f"deciding needs an impractically large sample (now {n:,} {unit})"
    while hi - lo > 1:  # the smallest count that fits
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if fits(mid) else (mid, hi)
    return f"deciding needs about {hi:,} {unit} (now {n:,})"


def _needed(n: int | None, se: float, margin: float, z: float) -> str:
    """Sample size at which ``z * se * sqrt(n / n_needed)`` shrinks to ``margin`` (SE ∝ 1/sqrt(n))."""
    if not n or margin <= 0 or not math.isfinite(se) or se <= 0:
        return "a larger sample"
    ratio = z * se / margin
    needed = n * ratio * ratio if ratio < 1e7 else math.inf
    if not math.isfinite(needed) or needed > 1e15:
        return f"an impractically large sample (now {n:,})"
    return f"about {math.ceil(needed):,} samples (now {n:,})"


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
    """Theory vs simulation: is ``estimate`` within ``rel_tol`` of ``target``, with confidence?"""
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
    if -tol <= lo and hi <= tol:
        return Verdict(AGREES, fmt(estimate), unc, stat)
    if hi < -tol or lo > tol:
        return Verdict(DISAGREES, fmt(estimate), unc, stat)
    margin = abs(abs(gap) - tol)
    return Verdict(
        NOT_JUDGED,
        fmt(estimate),
        unc,
        stat,
        f"too little power: the interval straddles ±{rel_tol:.0%}; deciding needs " + _needed(n, se, margin, z),
    )


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
) -> Verdict:
    """Effect direction: the effect (``estimate``, with ``se`` or an explicit ``ci``) has sign ``sign``.

    ``smallest`` (> 0) is the smallest effect of interest: an interval inside ``(-inf, smallest)`` (for
    ``sign=+1``) that contains zero means the claimed effect is absent (disagrees)."""
    if sign not in (+1, -1):
        raise ValueError("sign must be +1 or -1")
    if not math.isfinite(estimate):
        return not_judged("not measured (no finite effect)")
    refused = refusal(se, ci=ci, dof=dof, measured=fmt(estimate))
    if refused is not None:
        return refused
    if ci is None:
        z = quantile(confidence, dof)
        ci = (estimate - z * se, estimate + z * se)
    lo, hi = sorted(ci)
    s_lo, s_hi = sorted((sign * lo, sign * hi))  # the interval of the effect in the claimed direction
    unc = f"{confidence:.0%} CI [{fmt(lo, 3)}, {fmt(hi, 3)}]{unit}"
    stat = f"effect {fmt(estimate, 3)}{unit}, " + unc + (" (claimed > 0)" if sign > 0 else " (claimed < 0)")
    if s_lo > 0:
        return Verdict(AGREES, fmt(estimate), unc, stat)
    if s_hi < 0:
        return Verdict(DISAGREES, fmt(estimate), unc, stat, "the effect has the opposite sign")
    if smallest > 0 and s_hi < smallest:
        return Verdict(
            DISAGREES,
            fmt(estimate),
            unc,
            stat,
            f"no effect: the interval excludes every effect ≥ {fmt(smallest, 3)}{unit}",
        )
    half = (hi - lo) / 2
    target = max(abs(estimate), smallest)
    return Verdict(
        NOT_JUDGED,
        fmt(estimate),
        unc,
        stat,
        "too little power: the interval contains zero; detecting an effect of "
        f"{fmt(target, 3)}{unit} needs "
        + _needed(n, half / quantile(confidence, dof), target, quantile(confidence, dof)),
    )
