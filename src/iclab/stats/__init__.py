r"""Uncertainty and verdicts for comparing a measurement with a paper's claim.

A verdict is a test fixed before the run. Three kinds, one function each:

- **paper value** (:func:`judge_value`): the paper reports a number $p$; iclab measures $m \pm s$ (standard error
  over $n$ units: seeds, models, W_e draws, question groups, prompts). With $\sigma = \sqrt{s^2 + s_p^2}$ ($s_p$
  the paper's own spread, or half its last printed digit) and $k$ the band (Student t with $n - 1$ dof when the
  SE comes from few units), it disagrees when $|m - p| > k\sigma$; it agrees only when also $k\sigma \le$ the
  claim's tolerance $\Delta$ (the smallest difference that matters; :data:`DEFAULT_REL_TOL` of $|p|$ when the claim
  states none) — a band wider than $\Delta$ contains values the claim rules out, so it is *not judged (too little
  power)*, with the number of units that would shrink it to $\Delta$. A band that a value $5\sigma$ away falls
  inside more than 5 % of the time cannot agree (*too few units to agree*): a Student-t band from 3 units
  (t(2) = 4.30: 28 %) or 4 units (10 %) may disagree, but agreeing needs 5 (4.5 %; ``docs/calibration.md``).
- **theory vs simulation** (:func:`judge_equivalence`): an equivalence test. Monte Carlo gives $m \pm s$ for a
  closed form $t$ that is allowed a relative error $\epsilon$ (an approximation such as dropped $O(1/l)$ terms).
  With $z$ the two-sided quantile, it agrees when the whole interval $m \pm z s$ lies within
  $t(1 \pm \epsilon)$, disagrees when the whole interval lies outside, and is *not judged (too little power)*
  when the interval straddles the boundary — with the sample size that would decide it.
- **absence, both sides** (:func:`judge_absence`): the paper claims *no* effect. It agrees only when the interval
  excludes every effect at least $\delta$ in size *on both sides* (two one-sided tests), so an effect of the
  opposite sign is a disagreement, never "no effect".
- **at every cell** (:func:`judge_every_cell`): theory vs simulation claimed at every point of a family (every l).
  It agrees when each cell's interval lies within the tolerance (an intersection–union test: its level is each
  cell's, no correction needed) and disagrees when some cell's Bonferroni interval lies wholly outside (the first
  step of Holm's procedure, so the family-wise error of a "disagrees" is at most $1 -$ confidence).
- **effect direction** (:func:`judge_direction`): the paper claims an effect of a sign. The confidence interval
  of the effect must exclude zero on the claimed side to agree. An interval on the other side disagrees; an
  interval that contains zero disagrees when it also excludes every effect at least as large as the smallest
  effect of interest $\delta$ (the effect is absent), and is otherwise *not judged (too little power)*, with the
  sample size that would decide it (the caller's exact count for an exact interval: :func:`clopper_pearson_trials`).
  A null effect therefore never agrees.
- **explicit intervals**: an interval $[\hat\theta - L, \hat\theta + H]$ (a bootstrap) is tested at its wider
  side, $\hat\theta \pm \max(L, H)$, by the direction and absence tests: a short side toward the boundary, from a
  skewed resampling distribution, would agree more often than the interval's level (``docs/calibration.md``).

Two refusals come before every test (:func:`refusal`), the same in all three:

- **no uncertainty**: a NaN, zero or missing standard error (or a zero-width or NaN interval) is *not judged: no
  uncertainty* — never a zero-width interval, never NaN read as 0. Only a value the caller declares exact (a
  closed form, ``exact=True`` in :func:`judge_value`) may have SE 0, and then the paper's own spread is the band.
- **too few units**: a Student-t band from $n$ units (``dof`` $= n - 1$) needs $n \ge$ :data:`MIN_UNITS` $= 3$.
  With 2 units t(1) makes the 95 % band ±12.7 SE and the SE itself rests on one degree of freedom (its 95 % range
  is 0.03–2.2 times the true SE): no paper value can fail such a band, and one lost seed of three would turn a
  disagreement into an agreement. With 3 units t(2) = 4.3 and the power rule above decides whether that is narrow
  enough.

Helpers give the uncertainty: :func:`mean_se`, :func:`bootstrap_ci` (percentile bootstrap, seeded),
:func:`bootstrap_argmin` (bootstrap draws of a grid argmin) and :func:`paired_differences`.

Every verdict a test gives carries the test (``Verdict.test_record``: statistic, SE or interval, dof, thresholds,
and the p-value of an "agrees"); :func:`rejudge` runs it again, and :func:`calibrate` simulates it under its least
favourable false claim at the run's own noise level and returns its false-agree rate (``docs/calibration.md``;
:func:`calibration_table` for a whole run).
"""

from iclab.stats._verdict import (
    AGREES,
    DEFAULT_REL_TOL,
    DISAGREES,
    KINDS,
    MIN_UNITS,
    NO_UNCERTAINTY as NO_UNCERTAINTY,
    NOT_JUDGED,
    VERDICTS,
    Verdict,
    fmt,
    not_judged,
    quantile,
    refusal,
)
from iclab.stats._intervals import (
    binary_floor_ci,
    binary_unit_band,
    bootstrap_argmin,
    bootstrap_ci,
    clopper_pearson,
    clopper_pearson_trials,
    grid_floor_ci,
    mean_se,
    paired_differences,
    unit_mean,
)
from iclab.stats._every_cell import judge_every_cell
from iclab.stats._judges import judge_absence, judge_direction, judge_equivalence, judge_value
from iclab.stats._rules import SHIFT_SE, units_to_agree
from iclab.stats._calibration import (
    NOMINAL,
    Calibration,
    calibrate,
    calibration_table,
    claim_rng,
    rejudge,
)

__all__ = [
    "AGREES",
    "DISAGREES",
    "NOT_JUDGED",
    "VERDICTS",
    "KINDS",
    "Verdict",
    "MIN_UNITS",
    "DEFAULT_REL_TOL",
    "judge_value",
    "refusal",
    "judge_equivalence",
    "judge_direction",
    "not_judged",
    "mean_se",
    "unit_mean",
    "clopper_pearson",
    "clopper_pearson_trials",
    "bootstrap_ci",
    "bootstrap_argmin",
    "binary_floor_ci",
    "binary_unit_band",
    "grid_floor_ci",
    "paired_differences",
    "judge_absence",
    "judge_every_cell",
    "quantile",
    "fmt",
    "NOMINAL",
    "Calibration",
    "calibrate",
    "calibration_table",
    "claim_rng",
    "rejudge",
    "SHIFT_SE",
    "units_to_agree",
]
