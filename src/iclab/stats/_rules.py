r"""The decision rules of the tests of :mod:`iclab.stats`, vectorised, and the p-value of each test's "agrees".

Each rule maps the test statistic to an outcome code — :data:`AGREE` (1), :data:`DISAGREE` (−1) or :data:`OPEN`
(0, not judged) — elementwise over NumPy arrays. The judges of :mod:`iclab.stats` decide a verdict through these
functions, and :func:`iclab.stats.calibrate` runs the same functions over thousands of simulated statistics, so
what is calibrated is the rule that judges.

p-values of an "agrees" (the evidence a family-wise correction needs; ``sf`` is the upper tail of the normal, or of
Student's t with ``dof`` degrees of freedom):

- effect direction: one-sided, $p = \mathrm{sf}(s\,\hat\theta / \mathrm{SE})$ for claimed sign $s$;
- equivalence, absence, paper value: the two one-sided tests (TOST, Schuirmann 1987) of
  $|\theta| \ge \Delta$, $p = \max(\mathrm{sf}((\Delta + \hat\theta)/\mathrm{SE}_-),\
  \mathrm{sf}((\Delta - \hat\theta)/\mathrm{SE}_+))$;
- every cell: the intersection–union test (Berger 1982), $p = \max$ over cells of each cell's TOST $p$.

A two-sided 95 % interval inside the margin is exactly a TOST at 2.5 % per side, so for the equivalence, absence,
every-cell and direction tests "agrees" implies $p \le 0.025$; a paper value's band test has no such link (its
"agrees" can have $p$ up to 0.5 at the edge of its tolerance).
"""

from __future__ import annotations

import functools
import math

import numpy as np

AGREE, DISAGREE, OPEN = 1, -1, 0

#: the false-agree rate a test may reach under the least favourable false claim (:func:`iclab.stats.calibrate`)
NOMINAL = 0.05

#: a paper value is calibrated against tables with the true value moved this many standard errors
SHIFT_SE = 5.0


def _sf(x, dof: float | None):
    """Upper tail of N(0, 1), or of Student's t with ``dof`` degrees of freedom (the normal's as ``ndtr(-x)``,
    which is what ``scipy.stats.norm.sf`` computes, without its generic argument handling)."""
    from scipy import special, stats

    x = np.asarray(x, dtype=float)
    return special.ndtr(-x) if dof is None or not math.isfinite(dof) else stats.t.sf(x, dof)


def value_rule(d, spread, k: float, tol: float, can_agree: bool = True):
    """Paper value: disagree when ``|d| / spread > k``; agree when not, the band around the measured value lies within
    the tolerance, ``|d| + k * spread <= tol`` (an equivalence at the tolerance: a true value at its edge agrees at
    most Φ(−k) of the time, issue 43), and the band ``can_agree`` (:func:`band_false_agree` at most
    :data:`NOMINAL`); else open."""
    d, spread = np.broadcast_arrays(np.asarray(d, dtype=float), np.asarray(spread, dtype=float))
    with np.errstate(divide="ignore", invalid="ignore"):
        z = d / spread
    inside = np.abs(d) + k * spread <= tol
    return np.where(np.abs(z) > k, DISAGREE, np.where(inside & can_agree, AGREE, OPEN))


@functools.lru_cache(maxsize=256)
def band_false_agree(k: float, dof: float | None) -> float:
    r"""How often a band :math:`|d| \le k\,\widehat{\mathrm{SE}}` contains a difference :data:`SHIFT_SE` SEs away,
    :math:`P(|5 + Z| \le k S)` with :math:`S = \sqrt{\chi^2_\nu/\nu}` the estimated SE in units of the true one
    (:math:`S = 1` without ``dof``): the false-agree rate of a paper value whose tolerance is no limit. A band with
    this above :data:`NOMINAL` cannot tell a value 5 SE away from the paper's (e.g. t(2): ±4.30 SE, 28 %; t(3):
    10 %; t(4): 4.5 %)."""
    from scipy import stats

    def inside(s):
        return stats.norm.cdf(k * s - SHIFT_SE) - stats.norm.cdf(-k * s - SHIFT_SE)

    if dof is None or not math.isfinite(dof):
        return float(inside(1.0))
    return float(stats.chi2.expect(lambda x: inside(np.sqrt(x / dof)), args=(dof,)))


def interval_rule(lo, hi, low_edge: float, high_edge: float):
    """Equivalence: agree when ``[lo, hi]`` lies within ``[low_edge, high_edge]``, disagree when it lies wholly
    outside (``hi < low_edge`` or ``lo > high_edge``), else open."""
    lo, hi = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
    inside = (low_edge <= lo) & (hi <= high_edge)
    outside = (hi < low_edge) | (lo > high_edge)
    return np.where(inside, AGREE, np.where(outside, DISAGREE, OPEN))


def symmetric(estimate, lo, hi):
    """``(estimate - w, estimate + w)`` with ``w`` the wider half of ``[lo, hi]`` around ``estimate``: an explicit
    interval (a percentile bootstrap) is trusted only at its wider side, so a short side toward the boundary, from
    a skewed resampling distribution, cannot make a test agree more often than its level."""
    est = np.asarray(estimate, dtype=float)
    w = np.maximum(est - np.asarray(lo, dtype=float), np.asarray(hi, dtype=float) - est)
    return est - w, est + w


def direction_rule(lo, hi, sign: int, smallest: float):
    """Effect direction: with ``[s_lo, s_hi]`` the interval in the claimed direction, disagree when ``s_hi < 0``, or
    when ``smallest > 0`` and ``s_hi < smallest`` (no effect of interest: an interval wholly inside (0, smallest)
    included — a bare sign is no agreement, issue 43); else agree when ``s_lo > 0``; else open."""
    a, b = sign * np.asarray(lo, dtype=float), sign * np.asarray(hi, dtype=float)
    s_lo, s_hi = np.minimum(a, b), np.maximum(a, b)
    absent = (s_hi < smallest) if smallest > 0 else np.zeros_like(s_hi, dtype=bool)
    return np.where((s_hi < 0) | absent, DISAGREE, np.where(s_lo > 0, AGREE, OPEN))


def absence_rule(lo, hi, smallest: float):
    """Absence on both sides: agree when ``-smallest < lo`` and ``hi < smallest``; disagree when
    ``lo >= smallest`` or ``hi <= -smallest``; else open."""
    lo, hi = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
    inside = (-smallest < lo) & (hi < smallest)
    outside = (lo >= smallest) | (hi <= -smallest)
    return np.where(inside, AGREE, np.where(outside, DISAGREE, OPEN))


def value_can_agree(k: float, dof: float | None, exact: bool = False) -> bool:
    """Whether a paper-value band may say "agrees": its :func:`band_false_agree` is at most :data:`NOMINAL` (an exact
    value's band rests on the paper's stated spread, not on an estimated SE: no ``dof``)."""
    return band_false_agree(float(k), None if exact else dof) <= NOMINAL


def units_to_agree(k: float | None, most: int = 10_000) -> int | None:
    """The fewest units n whose band (``k``, or the 95 % Student-t quantile at n − 1 dof when ``k`` is None) passes
    :func:`value_can_agree`; None when no number does (a fixed ``k`` too wide even with a known SE).

    Arguments: ``k`` None or a finite number > 0; ``most`` an integer in 2..10**9."""
    from iclab.domain import integer, positive
    from iclab.stats._verdict import quantile

    k, most = None if k is None else positive("k", k, "a band's half-width in SEs"), integer("most", most, 2, 10**9)

    if k is not None and band_false_agree(float(k), None) > NOMINAL:
        return None
    n = 2
    while n <= most:
        if band_false_agree(float(k) if k is not None else quantile(0.95, n - 1), n - 1) <= NOMINAL:
            return n
        n = n + 1 if n < 64 else n * 2
    return None


def p_direction(estimate: float, se: float, sign: int, dof: float | None = None) -> float:
    """One-sided p-value of an effect of sign ``sign``: ``sf(sign * estimate / se)``."""
    if not (se > 0 and math.isfinite(estimate)):
        return float("nan")
    return float(_sf(sign * estimate / se, dof))


def p_tost(diff: float, margin: float, se_low: float, se_high: float | None = None, dof: float | None = None) -> float:
    """TOST p-value of ``|true diff| < margin``: ``max(sf((margin + diff)/se_low), sf((margin - diff)/se_high))``
    (``se_high`` defaults to ``se_low``; an asymmetric interval gives one SE per side)."""
    se_high = se_low if se_high is None else se_high
    if not (se_low > 0 and se_high > 0 and math.isfinite(diff)) or margin <= 0:
        return float("nan") if margin > 0 else 1.0
    return float(max(_sf((margin + diff) / se_low, dof), _sf((margin - diff) / se_high, dof)))
