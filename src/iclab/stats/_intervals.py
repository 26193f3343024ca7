"""Uncertainty of a measurement: mean and standard error (across units, or from the units' own SEs when they are
too few), the exact interval of a share, paired differences, the seeded percentile bootstrap, the bootstrap of a grid
argmin, the floors that keep an interval from reading narrower than the data can resolve, and how many units would
shrink an interval enough to decide a test (for the exact interval of a share, exactly) (:mod:`iclab.stats`)."""

from __future__ import annotations

import math
from typing import Callable, Sequence

import numpy as np

from iclab.domain import array, integer, number, probability
from iclab.errors import ConfigError
from iclab.stats._rules import symmetric
from iclab.stats._verdict import quantile


MAX_RESAMPLED = 1 << 27  # bootstrap indices held at once (1 GiB of int64): more is refused, never allocated


def mean_se(values: Sequence[float], *, drop_nonfinite: bool = True) -> tuple[float, float, int]:
    """Mean, standard error of the mean (``nan`` for one value) and count of the finite ``values``.

    ``drop_nonfinite=False`` is for samples where a non-finite value is a failure, not a lost unit (per-prompt
    Monte-Carlo errors): any NaN or inf then makes the mean and SE NaN, so the judge refuses it ("no uncertainty")
    instead of averaging the survivors.

    Arguments: ``values`` numbers (NaN and inf allowed: they are the lost units) of one axis; ``drop_nonfinite`` a
    boolean. The NaN results above are the refusals the judges read, on purpose."""
    x = array("values", values, ndim=1, min_size=0, finite=False)
    if not isinstance(drop_nonfinite, (bool, np.bool_)):
        raise ConfigError("drop_nonfinite", drop_nonfinite, "True or False")
    if not drop_nonfinite and not np.isfinite(x).all():
        return float("nan"), float("nan"), int(x.size)
    x = x[np.isfinite(x)]
    n = x.size
    if n == 0:
        return float("nan"), float("nan"), 0
    return float(x.mean()), float(x.std(ddof=1) / math.sqrt(n)) if n > 1 else float("nan"), n


def paired_differences(a: Sequence[float], b: Sequence[float]) -> np.ndarray:
    """``a - b`` element by element (two measurements on the same prompts, questions or seeds).

    Arguments: ``a``, ``b`` numbers of one shape (NaN and ±inf allowed: a unit lost on either side stays lost, a
    non-finite difference that :func:`mean_se` drops)."""
    x, y = array("a", a, min_size=0, finite=False), array("b", b, min_size=0, finite=False)
    if x.shape != y.shape:
        raise ConfigError("b", f"shape {y.shape}", f"shape {x.shape}, as a has (paired samples)")
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
    when ``stat`` takes an ``axis``).

    Arguments: ``values`` finite numbers of one axis (none: ``(nan, nan, nan)``, nothing measured); ``stat`` a
    callable; ``confidence`` in (0, 1); ``n_boot`` an integer >= 1 with ``n_boot × len(values)`` at most
    :data:`MAX_RESAMPLED`; ``seed`` an integer >= 0."""
    x = array("values", values, ndim=1, min_size=0)
    confidence, seed = probability("confidence", confidence), integer("seed", seed, low=0)
    n_boot = integer("n_boot", n_boot, high=max(1, MAX_RESAMPLED // max(x.size, 1)), why="resampled values in memory")
    if not callable(stat):
        raise ConfigError("stat", stat, "a callable (np.mean, np.median, ...)")
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


def bootstrap_argmin(
    curves: np.ndarray, grid: Sequence[float], n_boot: int, seed: int, *, max_elements: int = 1 << 22
) -> np.ndarray:
    r"""``(n_boot,)`` percentile-bootstrap draws of the grid point that minimises a mean curve: ``curves (G, n)``
    holds one value per grid point (e.g. the error at each τ) and unit (prompt); each draw resamples the ``n`` units
    with replacement (seeded) and returns :math:`g_{\hat j}` with :math:`\hat j = \operatorname{arg\,min}_j` of the
    resampled mean of row j (first minimiser on ties).

    Vectorised over draws in chunks of at most ``max_elements`` gathered values (G × draws × n), so memory stays
    bounded at any size. The resampling indices are drawn one draw at a time from one generator, as a loop over
    draws would, so the draws do not depend on the chunk size.

    Arguments: ``curves`` finite (G, n) with G, n >= 1; ``grid`` G finite numbers; ``n_boot`` an integer >= 0 with
    ``n_boot × n`` at most :data:`MAX_RESAMPLED`; ``seed`` an integer >= 0; ``max_elements`` an integer >= 1."""
    c = array("curves", curves, ndim=2)
    g = array("grid", grid, shape=(c.shape[0],), why="one grid point per row of curves")
    n_boot = integer("n_boot", n_boot, low=0, high=MAX_RESAMPLED // c.shape[1], why="resampling indices in memory")
    seed, max_elements = integer("seed", seed, low=0), integer("max_elements", max_elements)
    rng = np.random.default_rng(seed)
    G, n = c.shape
    idx = np.stack([rng.integers(0, n, n) for _ in range(n_boot)]) if n_boot else np.zeros((0, n), int)
    chunk = max(1, max_elements // max(1, G * n))
    best = [np.argmin(c[:, idx[i : i + chunk]].mean(-1), axis=0) for i in range(0, n_boot, chunk)]  # (chunk,) each
    return g[np.concatenate(best)] if best else np.zeros(0)


def binary_floor_ci(estimate: float, lo: float, hi: float, n: int) -> tuple[float, float]:
    """``(lo, hi)`` widened to at least ``estimate ± 3/n``: the rule of three (95 % upper bound 3/n on the rate of
    changed outcomes among n paired 0/1 outcomes). A bootstrap of paired 0/1 differences has zero width when no
    outcome changed; this keeps "no change seen" from reading as "no effect possible".

    Arguments: ``estimate``, ``lo``, ``hi`` finite numbers; ``n`` an integer >= 0."""
    estimate, lo, hi = number("estimate", estimate), number("lo", lo), number("hi", hi)
    n = integer("n", n, low=0)
    floor = 3.0 / max(int(n), 1)
    return min(lo, estimate - floor), max(hi, estimate + floor)


def binary_unit_band(values: Sequence[float], outcomes: int) -> tuple[float, float, float, int]:
    r"""``(mean, lo, hi, k)``: the mean of ``k`` per-unit paired differences of 0/1 outcomes (e.g. a question group's
    EM change, each a mean over its questions) with its Student-t 95 % band across the units,
    :math:`\bar d \pm t_{k-1} s/\sqrt k`, widened by :func:`binary_floor_ci` to at least ±3/``outcomes`` (the
    paired outcomes behind the units): units that all show no change have zero spread, and the rule of three keeps
    "no change seen" from reading as "no effect possible". Fewer than two finite units: NaN bounds.

    Arguments: ``values`` numbers of one axis (non-finite ones are lost units, left out); ``outcomes`` an integer
    >= 0."""
    m, se, k = mean_se(values)
    outcomes = integer("outcomes", outcomes, low=0, why="the paired 0/1 outcomes behind the units")
    if k < 2:
        return m, math.nan, math.nan, k
    half = quantile(0.95, k - 1) * se
    return (m, *binary_floor_ci(m, m - half, m + half, outcomes), k)


def grid_floor_ci(estimate: float, lo: float, hi: float, grid: Sequence[float]) -> tuple[float, float]:
    """``(lo, hi)`` widened to at least ``estimate ±`` half the smallest step of ``grid``: an argmin read off a grid
    is resolved to half a step at best, so models or bootstrap draws that all pick one grid point give an interval
    of that width, never a zero-width one (pass log values for a geometric grid).

    Arguments: ``estimate``, ``lo``, ``hi`` finite numbers; ``grid`` finite numbers."""
    estimate, lo, hi = number("estimate", estimate), number("lo", lo), number("hi", hi)
    g = np.unique(array("grid", grid, min_size=0))
    if g.size < 2:
        return lo, hi
    half = 0.5 * float(np.diff(g).min())
    return min(lo, estimate - half), max(hi, estimate + half)


#: what :func:`units_to_decide` gives when no count decides: the spread the units cannot shrink (the paper's, or
#: between draws) is already too wide (a count, math.inf, is an impractically large sample)
NO_COUNT_DECIDES = -1


def units_to_decide(n, se: float, paper_se: float, tol: float, k: float, dof: float | None) -> float | None:
    r"""The smallest count :math:`n'` of units at which the band :math:`k\sqrt{se^2 n / n' + se_p^2}` shrinks to
    ``tol`` (SE ∝ 1/√n), with a Student-t ``k`` recomputed at :math:`n' - 1` dof when the band is Student t (``dof``
    given): an integer ≥ n + 1; ``math.inf`` beyond 10¹⁵; :data:`NO_COUNT_DECIDES` when the spread the units
    cannot shrink (``paper_se``) alone fills ``tol``, or there is no spread to shrink; None without ``n``."""
    k_at = (lambda m: quantile(0.95, m - 1)) if dof is not None else (lambda m: k)
    if se > 0 and not n:
        return None
    if se <= 0 or (tol / k_at(math.inf)) ** 2 <= paper_se**2:
        return NO_COUNT_DECIDES

    def fits(m: float) -> bool:
        return k_at(m) * math.sqrt(se * se * n / m + paper_se**2) <= tol

    lo, hi = int(n), int(n) + 1
    while not fits(hi):
        lo, hi = hi, hi * 2
        if hi > 1e15:
            return math.inf
    while hi - lo > 1:  # the smallest count that fits
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if fits(mid) else (mid, hi)
    return hi


def _units_to_decide(n, se: float, paper_se: float, tol: float, k: float, dof: float | None, unit: str) -> str:
    """:func:`units_to_decide` as the words of a "too little power" reason."""
    count = units_to_decide(n, se, paper_se, tol, k, dof)
    if count is None:
        return f"deciding needs more {unit} (a narrower band)"
    if count == NO_COUNT_DECIDES:
        return "no number of units decides: the spread added to the SE (the paper's, or between draws) is too wide"
    if math.isinf(count):
        return f"deciding needs an impractically large sample (now {n:,} {unit})"
    return f"deciding needs about {count:,} {unit} (now {n:,})"


def samples_to_decide(n: int | None, se: float, margin: float, z: float) -> float | None:
    r"""The sample size at which the half-width :math:`z \cdot se \sqrt{n / n'}` shrinks to ``margin`` (SE ∝ 1/√n):
    :math:`n' = \lceil n (z \cdot se / \text{margin})^2 \rceil`, at least n + 1 (at n the interval only just
    reaches its edge, undecided); ``math.inf`` beyond 10¹⁵; None without n, margin or spread."""
    if not n or margin <= 0 or not math.isfinite(se) or se <= 0:
        return None
    ratio = z * se / margin
    needed = n * ratio * ratio if ratio < 1e7 else math.inf
    if not math.isfinite(needed) or needed > 1e15:
        return math.inf
    return max(math.ceil(needed), int(n) + 1)


def _needed(n: int | None, se: float, margin: float, z: float) -> str:
    """:func:`samples_to_decide` as the words of a "too little power" reason."""
    count = samples_to_decide(n, se, margin, z)
    if count is None:
        return "a larger sample"
    if math.isinf(count):
        return f"an impractically large sample (now {n:,})"
    if count == int(n) + 1 and math.ceil(n * (z * se / margin) ** 2) <= n:  # only just reaches its edge
        return f"slightly more than the {n:,} samples now (the interval only just reaches its edge)"
    return f"about {count:,} samples (now {n:,})"


def unit_mean(
    values: Sequence[float], ses: Sequence[float] | None, min_units: float, drop_nan: bool = False
) -> tuple[float, float, int | None]:
    r"""The mean :math:`\bar v` of the per-unit ``values`` (k units), its standard error and the dof of its band.

    From ``min_units`` units on, the SE is the spread across the units, :math:`s / \sqrt k`, with a Student-t band
    of k − 1 dof: it holds every source of variation between replicates (seed, trained model, W_e draw). With fewer
    units that spread rests on too few degrees of freedom (two units: t(1) makes the band ±12.7 SE, and
    :func:`~iclab.stats.refusal` refuses a t band from fewer than :data:`~iclab.stats.MIN_UNITS` units), so the SE
    is the units' own within-run SEs ``ses`` (over prompts or test points), :math:`\sqrt{\sum_i se_i^2} / k`, with a
    normal band — which leaves out the between-unit variation that so few units cannot estimate (``min_units`` =
    ``math.inf``: always). No ``ses``: the SE is NaN (refused: no uncertainty).

    ``drop_nan``: units without a finite value are left out (a prompt length that was not evaluated); else one
    makes the mean NaN, which the test refuses. No unit left: NaN, NaN.

    Arguments: ``values`` numbers of one axis (NaN allowed, as above); ``ses`` None or as many numbers;
    ``min_units`` a number >= 2 or inf; ``drop_nan`` a boolean."""
    v = array("values", values, ndim=1, min_size=0, finite=False)
    if not isinstance(drop_nan, (bool, np.bool_)):
        raise ConfigError("drop_nan", drop_nan, "True or False")
    s = None if ses is None else array("ses", ses, shape=v.shape, min_size=0, finite=False, why="one SE per value")
    if not (isinstance(min_units, (int, float)) and not isinstance(min_units, bool)):
        raise ConfigError("min_units", min_units, "a number >= 2 or math.inf")
    number("min_units", min(min_units, 2.0**60), low=2)
    if drop_nan:
        keep = np.isfinite(v)
        v, s = v[keep], (None if s is None else s[keep])
    k = v.size
    if k == 0:
        return math.nan, math.nan, None
    if k >= min_units:
        return float(v.mean()), float(v.std(ddof=1) / math.sqrt(k)), k - 1
    return float(v.mean()), float(np.sqrt((s**2).sum()) / k) if s is not None else math.nan, None


def _clopper_pearson_bounds(hits, n) -> tuple[np.ndarray, np.ndarray]:
    """:func:`clopper_pearson`'s bounds, element by element over arrays ``hits`` and ``n``."""
    from scipy.stats import beta

    k, m = np.asarray(hits, dtype=float), np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore"):  # the Beta quantile at an edge (a shape 0) is NaN, replaced by 0 or 1
        lo = np.where(k > 0, beta.ppf(0.025, k, m - k + 1), 0.0)
        hi = np.where(k < m, beta.ppf(0.975, k + 1, m - k), 1.0)
    return lo, hi


def clopper_pearson(hits: float, n: float) -> tuple[float, float]:
    """The exact (Clopper–Pearson) 95 % interval of the share ``hits / n``: the 2.5 % quantile of Beta(hits,
    n − hits + 1) and the 97.5 % quantile of Beta(hits + 1, n − hits); 0 and 1 at the edges (Clopper & Pearson 1934).

    Arguments: ``n`` a number in [1, 1e15] (trials); ``hits`` a number in [0, n]."""
    n = number("n", n, low=1, high=1e15, why="trials")
    hits = number("hits", hits, low=0, high=n, why="hits among the n trials")
    lo, hi = _clopper_pearson_bounds(hits, n)
    return float(lo), float(hi)


def clopper_pearson_trials(hits: float, n: int, above: float, most: int = 10_000) -> int | None:
    r"""The smallest number of trials :math:`m \ge n` (at most ``most``) at which the share :math:`(h + m - n)/m`
    (h = ``hits`` of the ``n`` trials so far; every added trial a hit) has a :func:`clopper_pearson` interval wholly
    above ``above``, read at its wider side around the share (:func:`~iclab.stats._rules.symmetric`) as
    :func:`~iclab.stats.judge_direction` reads an explicit interval; None when no such m. It is what would decide a
    direction test of a share against ``above`` when its interval is exact, where the normal approximation
    (half-width ∝ 1/√n) does not hold. All hits: the lower bound is :math:`0.025^{1/m}`, above 0.9 first at m = 36.

    Arguments: ``n`` an integer >= 0; ``hits`` 0 or a number in [1e-6, n] (fractional: partial matches);
    ``above`` a number in [0, 1]; ``most`` an integer in n..10**6."""
    n = integer("n", n, low=0)
    hits, above = number("hits", hits, low=0, high=n), number("above", above, low=0, high=1)
    if 0 < hits < 1e-6:  # Beta(hits, ·) quantiles overflow there
        raise ConfigError("hits", hits, f"0 or a number of hits in [1e-6, {n}]")
    most = integer("most", most, low=n, high=10**6, why="candidate trial counts, computed at once")
    m = np.arange(int(n), int(most) + 1)  # (candidates,)
    k = float(hits) + (m - int(n))
    lo, hi = _clopper_pearson_bounds(k, m)
    share = k / np.maximum(m, 1)
    clear = (symmetric(share, lo, hi)[0] > above) & (m > 0)
    return int(m[np.argmax(clear)]) if clear.any() else None
