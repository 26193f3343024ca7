"""The arguments every judge of :mod:`iclab.stats` shares, checked where they enter (:mod:`iclab.domain`'s rules)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from iclab.domain import integer, number, probability, real
from iclab.errors import ConfigError


def check_judge(confidence: float = 0.95, n: int | None = None, dof: float | None = None) -> None:
    """The arguments every judge shares: ``confidence`` in (0, 1), ``n`` None or an integer >= 0, ``dof`` None or a
    number >= 0 (inf allowed); a ConfigError naming the first that breaks its rule."""
    probability("confidence", confidence)
    if n is not None:
        integer("n", n, low=0, why="units behind the measurement")
    if dof is not None and dof != math.inf:
        number("dof", dof, low=0, why="degrees of freedom")


def pair(name: str, value: Any) -> tuple[float, float]:
    """Two real numbers (an interval's ends; NaN allowed: not measured)."""
    if not isinstance(value, (list, tuple, np.ndarray)) or len(value) != 2:
        raise ConfigError(name, value, "two numbers (low, high)")
    return real(f"{name}[0]", value[0]), real(f"{name}[1]", value[1])
