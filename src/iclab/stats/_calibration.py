r"""Calibration by simulation: how often each test says "agrees" when the claim is false, at the run's own noise.

A verdict's ``test_record`` (:class:`iclab.stats.Verdict`) holds the statistic, its standard error or interval, its
degrees of freedom and every threshold. :func:`calibrate` draws statistics from the least favourable world in
which the claim is false and runs the test's own decision rule (:mod:`iclab.stats._rules`, the functions the
judges decide by) on every draw:

- **effect direction**: true effect 0;
- **equivalence** (theory vs simulation) and **absence**: the true gap at the edge of the margin, $\pm\epsilon|t|$
  or $\pm\delta$ (both edges, the worse reported);
- **paper value**: the true value at the edge of the tolerance, $p \pm \Delta$, and $5\sigma$ from the paper's,
  $\sigma = \sqrt{\mathrm{SE}^2 + \mathrm{SE}_p^2}$ the standard error of the difference the band is built on
  (both sides of each, the worst reported);
- **every cell**: one cell at the edge of its margin, the others at their target (every cell, both edges, the
  worst reported).

Noise: the estimate is normal with the recorded SE. A Student-t test (``dof`` recorded) also draws its SE,
$\widehat{\mathrm{SE}} = \mathrm{SE}\sqrt{\chi^2_\nu/\nu}$, so a band from few units is simulated with the
uncertainty of its own width. An explicit interval $[\hat\theta - L, \hat\theta + H]$ (a bootstrap, a floored
interval) is modelled as normal with SE $(L + H)/(2 z_{0.975})$ and keeps its shape around each draw.

The false-agree rate $r$ over $B$ draws has Monte Carlo SE $\sqrt{r(1 - r)/B}$; a test is calibrated when
$r \le$ :data:`NOMINAL` $+ 2\,\mathrm{SE}_{MC}$. ``docs/calibration.md`` explains the method and shows the table.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np

from iclab.domain import integer
from iclab.errors import ConfigError
from iclab.stats._every_cell import judge_every_cell
from iclab.stats._judges import judge_absence, judge_direction, judge_equivalence, judge_value
from iclab.stats._rules import (
    AGREE,
    NOMINAL,
    SHIFT_SE,
    absence_rule,
    direction_rule,
    interval_rule,
    symmetric,
    value_can_agree,
    value_rule,
)
from iclab.stats._verdict import Verdict, quantile

if TYPE_CHECKING:
    import pandas as pd

#: the columns of :func:`calibration_table`
TABLE_COLUMNS = (
    "experiment", "claim_id", "headline", "verdict", "judge", "null", "draws", "false_agree", "mc_se", "nominal",
    "passes",
)  # fmt: skip


@dataclass(frozen=True)
class Calibration:
    """The false-agree ``rate`` of one test over ``draws`` simulated tables under the ``null`` named, its Monte
    Carlo standard error ``mc_se``, and the ``nominal`` rate it must stay under (plus 2 ``mc_se``)."""

    rate: float
    mc_se: float
    draws: int
    null: str
    nominal: float = NOMINAL

    @property
    def passes(self) -> bool:
        return self.rate <= self.nominal + 2 * self.mc_se


def rejudge(record: Mapping[str, Any]) -> Verdict:
    """The verdict of the test in ``record`` (a ``Verdict.test_record``), run again from its inputs.

    Arguments: ``record`` a test record of a known judge with every field it reads."""
    kind = _judge_of(record)
    try:
        return _REJUDGE[kind](dict(record))
    except KeyError as exc:
        raise _missing_field(record, exc) from None


def _ci(r: Mapping[str, Any]) -> tuple[float, float] | None:
    """The record's explicit interval, or None where the test used the SE alone."""
    return None if r["ci"] is None else tuple(r["ci"])


#: each judge run again from a test record (its inputs, by the names the record stores them under)
_REJUDGE = {
    "value": lambda r: judge_value(
        r["estimate"], r["se"], r["paper"], k=r["k"], paper_se=r["paper_se"], tol=r["tol"], n=r["n"], dof=r["dof"],
        exact=r["exact"],
    ),
    "equivalence": lambda r: judge_equivalence(
        r["estimate"], r["se"], r["target"], rel_tol=r["rel_tol"], confidence=r["confidence"], n=r["n"], dof=r["dof"]
    ),
    "direction": lambda r: judge_direction(
        r["estimate"], r["se"], ci=_ci(r), sign=r["sign"], smallest=r["smallest"], confidence=r["confidence"],
        n=r["n"], dof=r["dof"],
    ),
    "absence": lambda r: judge_absence(r["estimate"], tuple(r["ci"]), smallest=r["smallest"], n=r["n"]),
    "every_cell": lambda r: judge_every_cell(
        [tuple(c) for c in r["cells"]], rel_tol=r["rel_tol"], confidence=r["confidence"], n=r["n"]
    ),
}  # fmt: skip
#: the judges a test record can name: exactly those :func:`rejudge` can run again
JUDGES = tuple(_REJUDGE)


def _judge_of(record: Mapping[str, Any]) -> str:
    """The judge named in ``record`` (one of :data:`JUDGES`); a ConfigError naming the known ones otherwise."""
    if not isinstance(record, Mapping):
        raise ConfigError("record", record, "a test record (a mapping, as Verdict.test_record holds it)")
    kind = record.get("judge")
    if not isinstance(kind, str) or kind not in JUDGES:
        raise ConfigError("record", kind, message=f"test record of unknown judge {kind!r}; known: {', '.join(JUDGES)}")
    return kind


def _missing_field(record: Mapping[str, Any], exc: KeyError) -> ConfigError:
    """The ConfigError of a test record that lacks a field its judge reads."""
    return ConfigError("record", record.get("judge"), f"a test record with every field its judge reads ({exc} missing)")


def _se_draws(se: float, dof: float | None, draws: int, rng: np.random.Generator) -> np.ndarray:
    """(draws,) estimated SEs: ``se`` itself, or ``se * sqrt(chi2(dof) / dof)`` for a Student-t test."""
    if dof is None or not math.isfinite(dof):
        return np.full(draws, float(se))
    return float(se) * np.sqrt(rng.chisquare(dof, draws) / dof)  # (draws,)


def _ci_shape(record: Mapping[str, Any]) -> tuple[float, float, float]:
    """``(L, H, sd)`` of an explicit interval ``[estimate - L, estimate + H]`` and its normal SE ``(L + H)/(2z)``."""
    lo, hi = record["ci"]
    est = record["estimate"]
    return est - lo, hi - est, (hi - lo) / (2 * quantile(record.get("confidence", 0.95)))


def _value(r, draws, rng) -> list[tuple[str, np.ndarray]]:
    spread = math.hypot(r["se"], r["paper_se"])
    can_agree = value_can_agree(r["k"], r["dof"], r["exact"] and r["se"] == 0)
    out = []
    for side in (+1, -1):
        d = side * SHIFT_SE * spread + rng.normal(0.0, spread, draws)  # (draws,) measured − paper
        se = _se_draws(r["se"], r["dof"], draws, rng)  # (draws,)
        out.append(
            (
                f"paper value moved {side * SHIFT_SE:+g} SE",
                value_rule(d, np.hypot(se, r["paper_se"]), r["k"], r["tol"], can_agree),
            )
        )
        edge = side * r["tol"] + rng.normal(0.0, spread, draws)  # (draws,) a true value at the tolerance's edge
        se = _se_draws(r["se"], r["dof"], draws, rng)
        out.append(
            (
                f"true value at the tolerance's edge {'+' if side > 0 else '−'}{r['tol']:.3g}",
                value_rule(edge, np.hypot(se, r["paper_se"]), r["k"], r["tol"], can_agree),
            )
        )
    return out


def _equivalence(r, draws, rng) -> list[tuple[str, np.ndarray]]:
    tol = abs(r["target"]) * r["rel_tol"]
    z = quantile(r["confidence"], r["dof"])
    out = []
    for side in (+1, -1):
        gap = side * tol + rng.normal(0.0, r["se"], draws)  # (draws,)
        se = _se_draws(r["se"], r["dof"], draws, rng)
        out.append(
            (f"gap at {side * r['rel_tol']:+.3g} of the target", interval_rule(gap - z * se, gap + z * se, -tol, tol))
        )
    return out


def _direction(r, draws, rng) -> list[tuple[str, np.ndarray]]:
    if r["ci"] is None:
        est = rng.normal(0.0, r["se"], draws)  # (draws,)
        half = quantile(r["confidence"], r["dof"]) * _se_draws(r["se"], r["dof"], draws, rng)
        lo, hi = est - half, est + half
    else:
        low, high, sd = _ci_shape(r)
        est = rng.normal(0.0, sd, draws)
        lo, hi = symmetric(est, est - low, est + high)
    return [("true effect 0", direction_rule(lo, hi, r["sign"], r["smallest"]))]


def _absence(r, draws, rng) -> list[tuple[str, np.ndarray]]:
    low, high, sd = _ci_shape(r)
    out = []
    for side in (+1, -1):
        est = side * r["smallest"] + rng.normal(0.0, sd, draws)  # (draws,)
        lo, hi = symmetric(est, est - low, est + high)
        out.append((f"true effect {side * r['smallest']:+.3g}", absence_rule(lo, hi, r["smallest"])))
    return out


def _every_cell(r, draws, rng) -> list[tuple[str, np.ndarray]]:
    labels = [c[0] for c in r["cells"]]
    se = np.array([c[2] for c in r["cells"]], dtype=float)  # (m,)
    target = np.array([c[3] for c in r["cells"]], dtype=float)  # (m,)
    tol = np.abs(target) * r["rel_tol"]  # (m,)
    z = quantile(r["confidence"])
    noise = rng.normal(0.0, 1.0, (draws, se.size)) * se  # (draws, m) gaps of cells at their target
    at_target = interval_rule(noise - z * se, noise + z * se, -tol, tol) == AGREE  # (draws, m)
    agreeing = at_target.sum(axis=1)  # (draws,) cells that agree
    out = []
    for j in range(se.size):
        others = agreeing - at_target[:, j] == se.size - 1  # (draws,) every cell but j agrees
        for side in (+1, -1):
            gap = noise[:, j] + side * tol[j]  # (draws,) cell j at the edge of its margin
            edge = interval_rule(gap - z * se[j], gap + z * se[j], -tol[j], tol[j]) == AGREE
            out.append((f"{labels[j]} at {side * r['rel_tol']:+.3g} of its target", np.where(others & edge, AGREE, 0)))
    return out


_NULLS = {"value": _value, "equivalence": _equivalence, "direction": _direction, "absence": _absence}
_NULLS["every_cell"] = _every_cell


def calibrate(record: Mapping[str, Any], draws: int = 1000, rng: np.random.Generator | None = None) -> Calibration:
    """The false-agree rate of the test in ``record`` under its least favourable false claim (module docstring),
    over ``draws`` tables drawn with ``rng`` (seed 0 when None); the worst of the nulls tried.

    Arguments: ``record`` a test record of a known judge with its fields; ``draws`` an integer in 1..10**6; ``rng``
    None or a NumPy Generator."""
    kind, draws = _judge_of(record), integer("draws", draws, high=10**6, why="simulated tables")
    if rng is not None and not isinstance(rng, np.random.Generator):
        raise ConfigError("rng", rng, "None or a numpy.random.Generator")
    rng = np.random.default_rng(0) if rng is None else rng
    try:
        rates = [(float(np.mean(np.asarray(code) == AGREE)), null) for null, code in _NULLS[kind](record, draws, rng)]
    except KeyError as exc:
        raise _missing_field(record, exc) from None
    rate, null = max(rates, key=lambda rn: rn[0])
    return Calibration(rate, math.sqrt(rate * (1 - rate) / draws), draws, null)


def claim_rng(seed: int, experiment: str, claim_id: str) -> np.random.Generator:
    """The generator of one claim's simulation: a function of ``(seed, experiment, claim id)`` only.

    Arguments: ``seed`` an integer >= 0; ``experiment``, ``claim_id`` strings."""
    seed = integer("seed", seed, low=0)
    for name, v in (("experiment", experiment), ("claim_id", claim_id)):
        if not isinstance(v, str):
            raise ConfigError(name, v, "a string")
    return np.random.default_rng([int(seed), zlib.crc32(f"{experiment}/{claim_id}".encode())])


def calibration_table(
    summary_or_rows: Mapping[str, Any] | Sequence[Any], draws: int = 1000, seed: int = 0
) -> pd.DataFrame:
    """One row per claim of a run's ``summary.json`` (or its comparison rows, dicts or
    :class:`iclab.experiments.Comparison`): experiment, claim id, headline, verdict, judge, the null simulated,
    draws, false-agree rate and its Monte Carlo SE, nominal, and whether it passes (``None`` for a claim without a
    test record: a refusal, a claim not measured, or a verdict built by hand).

    Arguments: ``summary_or_rows`` a mapping with ``comparisons`` (a ``summary.json``) or a list or tuple of comparison
    rows; ``draws`` an integer in 1..10**6; ``seed`` an integer >= 0."""
    draws, seed = integer("draws", draws, high=10**6), integer("seed", seed, low=0)
    if not isinstance(summary_or_rows, (Mapping, list, tuple)):
        raise ConfigError("summary_or_rows", summary_or_rows, "a summary.json mapping or a list of comparison rows")
    import pandas as pd  # only for the table: importing iclab.stats stays light

    rows = summary_or_rows.get("comparisons", []) if isinstance(summary_or_rows, Mapping) else summary_or_rows
    out = []
    for row in rows:
        c = row if isinstance(row, Mapping) else vars(row)
        record = c.get("test_record")
        line = {"experiment": c.get("experiment", ""), "claim_id": c.get("id", ""), "headline": c.get("headline")}
        line |= {"verdict": c.get("verdict", ""), "judge": "—", "null": "no test record", "draws": 0}
        line |= {"false_agree": math.nan, "mc_se": math.nan, "nominal": NOMINAL, "passes": None}
        if record:
            cal = calibrate(record, draws, claim_rng(seed, line["experiment"], line["claim_id"]))
            line |= {"judge": record["judge"], "null": cal.null, "draws": draws, "false_agree": cal.rate}
            line |= {"mc_se": cal.mc_se, "passes": cal.passes}
        out.append(line)
    return pd.DataFrame(out, columns=TABLE_COLUMNS)
