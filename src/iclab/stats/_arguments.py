"""The arguments every judge of :mod:`iclab.stats` shares, checked where they enter (:mod:`iclab.domain`'s rules)."""

from __future__ import annotations

import numpy as np

from iclab.domain import integer, number, probability
from iclab.errors import ConfigError


def check_judge(confidence: float = 0.95, n: int | None = None, dof: float | None = None, exact: bool = False) -> None:
    """The arguments every judge shares: ``confidence`` in (0, 1), ``n`` None or an integer >= 0, ``dof`` None or a
    number >= 0 (inf allowed), ``exact`` a boolean; a ConfigError naming the first that breaks its rule."""
    if not isinstance(exact, (bool, np.bool_)):
        raise ConfigError("exact", exact, "True or False")
    probability("confidence", confidence)
    if n is not None:
        integer("n", n, low=0, why="units behind the measurement")
    if dof is not None:
        number("dof", dof, low=0, why="degrees of freedom", inf_ok=True)
