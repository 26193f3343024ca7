"""Stopping rules for :func:`iclab.train.train` beyond ``steps`` and ``target_loss``.

A stop rule is ``(step, groups) -> bool``, called at every logged step with the per-group losses that
``loss_fn`` returned (e.g. one loss per feature). ``all_groups_below(eps)`` is the rule "every feature's loss
<= eps" of the OOD paper (arXiv:2609.36448, with eps = ε/K; docs/papers/ood.md); rules compose with :func:`any_of`.
"""

from __future__ import annotations

from typing import Callable, Mapping

from iclab.config import check_int, check_positive

__all__ = ["StopRule", "all_groups_below", "any_of", "after_step"]

StopRule = Callable[[int, Mapping[str, float]], bool]


def all_groups_below(threshold: float, groups: tuple[str, ...] | None = None) -> StopRule:
    """Stop once every group's loss (or every one named in ``groups``) is ``<= threshold``.

    No groups reported yet means "do not stop" (a missing named group also blocks stopping).
    """
    check_positive("threshold", threshold)

    def rule(step: int, values: Mapping[str, float]) -> bool:
        names = groups if groups is not None else tuple(values)
        return bool(names) and all(n in values and values[n] <= threshold for n in names)

    return rule


def after_step(step_limit: int) -> StopRule:
    """Stop once ``step >= step_limit`` (useful inside :func:`any_of`)."""
    check_int("step_limit", step_limit, 1)
    return lambda step, values: step >= step_limit


def any_of(*rules: StopRule) -> StopRule:
    """Stop when any of ``rules`` says so."""
    return lambda step, values: any(r(step, values) for r in rules)
