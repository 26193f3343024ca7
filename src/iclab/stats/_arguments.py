"""The arguments every judge of :mod:`iclab.stats` shares, checked where they enter (:mod:`iclab.domain`'s rules)."""

from __future__ import annotations

import math

from iclab.domain import integer, number, probability


def check_judge(confidence: float = 0.95, n: int | None = None, dof: float | None = None) -> None:
    """The arguments every judge shares: ``confidence`` in (0, 1), ``n`` None or an integer >= 0, ``dof`` None or a
    number >= 0 (inf allowed); a ConfigError naming the first that breaks its rule."""
    probability("confidence", confidence)
    if n is not None:
        integer("n", n, low=0, why="units behind the measurement")
    if dof is not None and dof != math.inf:
        number("dof", dof, low=0, why="degrees of freedom")
