"""Verdicts: the three outcomes, :class:`Verdict`, and the two refusals every test makes first (no uncertainty,
too few units; :mod:`iclab.stats`)."""

from __future__ import annotations

import functools
import math
import numbers
from dataclasses import dataclass, field

import numpy as np

from iclab.domain import integer, interval, number, probability, real
from iclab.errors import ConfigError

AGREES, DISAGREES, NOT_JUDGED = "agrees", "disagrees", "not judged"

VERDICTS = (AGREES, DISAGREES, NOT_JUDGED)

KINDS = ("paper value", "theory vs simulation", "equivalence", "effect direction")

#: fewest units (seeds, models, draws) behind a Student-t band: t(1) is ±12.7 SE wide (module docstring)
MIN_UNITS = 3

#: a paper value's tolerance when its claim states none: 10 % of the paper's value (a number 10 % off is another
#: number in every paper iclab checks: their tables print two to three significant digits)
DEFAULT_REL_TOL = 0.10

NO_UNCERTAINTY = "no uncertainty"


@dataclass(frozen=True)
class Verdict:
    """The outcome of one test: ``verdict`` (one of :data:`VERDICTS`), the measured value and its uncertainty as
    text, the test ``statistic`` as text, and the ``reason`` (always given for "not judged").

    ``test_record`` is the test that gave it, as JSON-ready data (``None`` for a verdict built by hand or a
    refusal): ``judge`` (``"value"``, ``"equivalence"``, ``"direction"``, ``"absence"``, ``"every_cell"``), the
    estimate, its standard error or interval, degrees of freedom and units, every threshold, the test's own
    ``verdict`` and ``p`` (the p-value of an "agrees", :mod:`iclab.stats._rules`). :func:`iclab.stats.rejudge`
    runs the test again from it and :func:`iclab.stats.calibrate` simulates it. It takes no part in equality."""

    verdict: str
    measured: str = "—"
    uncertainty: str = "—"
    statistic: str = "—"
    reason: str = ""
    test_record: dict | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.verdict, str) or self.verdict not in VERDICTS:
            raise ConfigError("verdict", self.verdict, f"one of {', '.join(VERDICTS)}")
        if self.verdict == NOT_JUDGED and not (isinstance(self.reason, str) and self.reason.strip()):
            raise ConfigError("reason", self.reason, "the reason a 'not judged' verdict gives (a non-empty string)")


def fmt(x: float, digits: int = 4) -> str:
    """``x`` with ``digits`` significant digits (``nan`` and ``inf`` as words; None as ``None``).

    Arguments: ``x`` None or a real number; ``digits`` an integer in 1..17."""
    digits = integer("digits", digits, high=17)
    if x is not None and not (isinstance(x, numbers.Real) and not isinstance(x, (bool, np.bool_))):
        raise ConfigError("x", x, "a real number or None")
    if x is None or not math.isfinite(float(x)):
        return str(x)
    return f"{float(x):.{digits}g}"


def quantile(confidence: float = 0.95, dof: float | None = None) -> float:
    """Two-sided critical value: the normal quantile, or Student's t with ``dof`` degrees of freedom.

    Arguments: ``confidence`` a number in (0, 1); ``dof`` None, a number > 0 or inf (the normal quantile)."""
    confidence = probability("confidence", confidence)
    if dof is not None:
        dof = number("dof", dof, above=0, why="degrees of freedom", inf_ok=True)
    q = _quantile(float(confidence), None if dof is None else float(dof))
    if not math.isfinite(q):
        raise ConfigError("dof", dof, "degrees of freedom whose t quantile is finite (a tiny dof has none)")
    return q


@functools.lru_cache(maxsize=1024)
def _quantile(confidence: float, dof: float | None) -> float:
    """:func:`quantile`, remembered: a judge asks for the same few values thousands of times."""
    from scipy import stats

    q = 0.5 + confidence / 2
    return float(stats.norm.ppf(q) if dof is None or not math.isfinite(dof) else stats.t.ppf(q, dof))


def not_judged(reason: str, measured: str = "—", uncertainty: str = "—") -> Verdict:
    """A verdict that cannot be given: settings differ, unreliable source, too little power, or not measured.

    Arguments: ``reason`` a non-empty string; ``measured``, ``uncertainty`` strings."""
    for name, v in (("reason", reason), ("measured", measured), ("uncertainty", uncertainty)):
        if not isinstance(v, str):
            raise ConfigError(name, v, "a string")
    return Verdict(NOT_JUDGED, measured, uncertainty, "—", reason)


def refusal(
    se: float | None = None, *, ci: tuple[float, float] | None = None, dof: float | None = None, measured: str = "—"
) -> Verdict | None:
    """The verdict every test gives before testing, or None: *not judged: no uncertainty* for a NaN, zero or
    missing ``se`` (or, with ``ci``, a NaN or zero-width interval); *not judged: too few units* for a Student-t
    band with ``dof + 1 <`` :data:`MIN_UNITS` (module docstring).

    Arguments: ``se`` None or a real number (NaN: refused); ``ci`` None or two real numbers; ``dof`` None or a number
    >= 0 (inf allowed); ``measured`` a string."""
    se = real("se", se, optional=True)
    ci = None if ci is None else interval("ci", ci)
    if dof is not None:
        dof = number("dof", dof, low=0, why="degrees of freedom", inf_ok=True)
    if ci is not None:
        lo, hi = (float(x) for x in ci)
        if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
            return not_judged(f"{NO_UNCERTAINTY}: the interval [{fmt(lo, 3)}, {fmt(hi, 3)}] has no width", measured)
    elif se is None or not math.isfinite(float(se)) or float(se) <= 0:
        if se == 0 and dof is not None and math.isfinite(dof) and dof >= 1:  # several units, one value
            why = f"its {fmt(dof + 1, 3)} units all gave the same value: an exact identity is a test, not a claim"
        else:
            why = "one unit, or none measured"
        return not_judged(f"{NO_UNCERTAINTY}: the standard error is {se} ({why})", measured)
    if dof is not None and math.isfinite(dof) and dof + 1 < MIN_UNITS:
        return not_judged(
            f"too few units: a Student-t band from {fmt(dof + 1, 3)} unit(s) (t({fmt(dof, 3)}) = "
            f"{quantile(0.95, max(dof, 1e-3)):.3g} SE wide) cannot fail; it needs at least {MIN_UNITS}",
            measured,
        )
    return None
