r"""Uncertainty and verdicts for comparing a measurement with a paper's claim.

A verdict is a test fixed before the run. Three kinds, one function each:

- **paper value** (:func:`judge_value`): the paper reports a number $p$; iclab measures $m \pm s$ (standard error
  over seeds or repeats). It agrees when $|m - p| \le k\sqrt{s^2 + s_p^2}$, with $s_p$ the paper's own spread (or
  half its last printed digit), and disagrees otherwise. Without any uncertainty ($s = s_p = 0$) nothing can be
  judged.
- **theory vs simulation** (:func:`judge_equivalence`): an equivalence test. Monte Carlo gives $m \pm s$ for a
  closed form $t$ that is allowed a relative error $\epsilon$ (an approximation such as dropped $O(1/l)$ terms).
  With $z$ the two-sided quantile, it agrees when the whole interval $m \pm z s$ lies within
  $t(1 \pm \epsilon)$, disagrees when the whole interval lies outside, and is *not judged (too little power)*
  when the interval straddles the boundary — with the sample size that would decide it.
- **effect direction** (:func:`judge_direction`): the paper claims an effect of a sign. The confidence interval
  of the effect must exclude zero on the claimed side to agree. An interval on the other side disagrees; an
  interval that contains zero disagrees when it also excludes every effect at least as large as the smallest
  effect of interest $\delta$ (the effect is absent), and is otherwise *not judged (too little power)*. A null
  effect therefore never agrees.

Helpers give the uncertainty: :func:`mean_se`, :func:`bootstrap_ci` (percentile bootstrap, seeded) and
:func:`paired_differences`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

__all__ = [
    "AGREES",
    "DISAGREES",
    "NOT_JUDGED",
    "VERDICTS",
    "KINDS",
    "Verdict",
    "judge_value",
    "judge_equivalence",
    "judge_direction",
    "not_judged",
    "mean_se",
    "bootstrap_ci",
    "binary_floor_ci",
    "paired_differences",
    "quantile",
    "fmt",
]

AGREES, DISAGREES, NOT_JUDGED = "agrees", "disagrees", "not judged"
VERDICTS = (AGREES, DISAGREES, NOT_JUDGED)
KINDS = ("paper value", "theory vs simulation", "effect direction")


@dataclass(frozen=True)
class Verdict:
    """The outcome of one test: ``verdict`` (one of :data:`VERDICTS`), the measured value and its uncertainty as
    text, the test ``statistic`` as text, and the ``reason`` (always given for "not judged")."""

    verdict: str
    measured: str = "—"
    uncertainty: str = "—"
    statistic: str = "—"
    reason: str = ""

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict {self.verdict!r} is not one of {VERDICTS}")
        if self.verdict == NOT_JUDGED and not self.reason:
            raise ValueError("a 'not judged' verdict needs a reason")


def fmt(x: float, digits: int = 4) -> str:
    """``x`` with ``digits`` significant digits (``nan`` and ``inf`` as words)."""
    if x is None or not math.isfinite(float(x)):
        return str(x)
    return f"{float(x):.{digits}g}"


def quantile(confidence: float = 0.95, dof: float | None = None) -> float:
    """Two-sided critical value: the normal quantile, or Student's t with ``dof`` degrees of freedom."""
    from scipy import stats

    q = 0.5 + confidence / 2
    return float(stats.norm.ppf(q) if dof is None or not math.isfinite(dof) else stats.t.ppf(q, dof))


def not_judged(reason: str, measured: str = "—", uncertainty: str = "—") -> Verdict:
    """A verdict that cannot be given: settings differ, unreliable source, too little power, or not measured."""
    return Verdict(NOT_JUDGED, measured, uncertainty, "—", reason)


def mean_se(values: Sequence[float]) -> tuple[float, float, int]:
    """Mean, standard error of the mean (``nan`` for one value) and count of the finite ``values``."""
    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]
    n = x.size
    if n == 0:
        return float("nan"), float("nan"), 0
    return float(x.mean()), float(x.std(ddof=1) / math.sqrt(n)) if n > 1 else float("nan"), n


def paired_differences(a: Sequence[float], b: Sequence[float]) -> np.ndarray:
    """``a - b`` element by element (two measurements on the same prompts, questions or seeds)."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.shape != y.shape:
        raise ValueError(f"paired samples need equal shapes, got {x.shape} and {y.shape}")
    return x - y


def bootstrap_ci(
    values: Sequence[float],
    stat: Callable[[np.ndarray], float] = np.mean,
    *,
    confidence: float = 0.95,
    n_boot: int = 4000,
    seed: int = 0,
) -> tuple[float, float, float]:
    """``(estimate, low, high)``: ``stat`` of ``values`` and its percentile-bootstrap interval (seeded, vectorised
    when ``stat`` takes an ``axis``)."""
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        return float("nan"), float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, x.size, size=(n_boot, x.size))  # (n_boot, n)
    try:
        boots = np.asarray(stat(x[idx], axis=1), dtype=float)  # (n_boot,)
    except TypeError:
        boots = np.array([stat(x[i]) for i in idx], dtype=float)
    alpha = (1 - confidence) / 2
    return float(stat(x)), float(np.quantile(boots, alpha)), float(np.quantile(boots, 1 - alpha))


def binary_floor_ci(estimate: float, lo: float, hi: float, n: int) -> tuple[float, float]:
    """``(lo, hi)`` widened to at least ``estimate ± 3/n``: the rule of three (95 % upper bound 3/n on the rate of
    changed outcomes among n paired 0/1 outcomes). A bootstrap of paired 0/1 differences has zero width when no
    outcome changed; this keeps "no change seen" from reading as "no effect possible"."""
    floor = 3.0 / max(int(n), 1)
    return min(lo, estimate - floor), max(hi, estimate + floor)


def judge_value(measured: float, se: float, paper: float, *, k: float = 2.0, paper_se: float = 0.0) -> Verdict:
    """Paper value: agrees when ``|measured - paper| <= k * sqrt(se^2 + paper_se^2)`` (see module docstring)."""
    if not (math.isfinite(measured) and math.isfinite(paper)):
        return not_judged("not measured (no finite value)", fmt(measured))
    spread = math.sqrt((se if math.isfinite(se) else 0.0) ** 2 + paper_se**2)
    unc = f"± {fmt(se, 2)} (SE)" if math.isfinite(se) and se > 0 else "—"
    if spread == 0:
        return not_judged(
            "no uncertainty: neither a standard error nor the paper's spread is known", fmt(measured), unc
        )
    z = (measured - paper) / spread
    stat = f"z = {z:+.2f} (band ±{k:g}·{fmt(spread, 2)})"
    return Verdict(AGREES if abs(z) <= k else DISAGREES, fmt(measured), unc, stat)


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
    if not math.isfinite(se) or se <= 0:
        return not_judged("no standard error for the simulation", fmt(estimate))
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
    if ci is None:
        if se is None or not math.isfinite(se) or se <= 0:
            return not_judged("no uncertainty for the effect (one seed or repeat?)", fmt(estimate))
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
