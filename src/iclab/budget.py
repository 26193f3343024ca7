"""Resource estimates and the check that refuses what cannot fit (issue 15's budgets).

Every experiment's ``cells.py`` has ``budget(config) -> list[Need]``: what its largest cell needs, each part named
by the config fields it grows with. The driver adds the parts up and checks them once, before any run folder is
made (:func:`check_budget`): more memory than this machine has (:func:`memory_limit`) or more CPU seconds than
the limit is one :class:`~iclab.errors.ConfigError` naming the fields, their values, the estimate and the limit,
and the flag that overrides the check. ``iclab theory tau-opt`` estimates its ``--d`` and ``--m`` the same way.
"""

from __future__ import annotations

import dataclasses
import math
import os
from typing import Any, Iterable, Mapping

from iclab.errors import ConfigError, short_repr

__all__ = ["Need", "check_budget", "memory_limit", "fmt_bytes"]


@dataclasses.dataclass(frozen=True)
class Need:
    """One part of what a cell (or a command) needs: about ``memory`` bytes at the cell's peak and ``seconds`` of
    one CPU core, growing with the config ``fields`` (name -> value; a product of several names them all). A
    budget is a list of these for the largest cell; they add up. Estimates are rough (a factor of a few): they
    exist to refuse what cannot fit (``n_test=1000000000``), not to predict run times."""

    fields: Mapping[str, Any]
    memory: float = 0.0
    seconds: float = 0.0


def fmt_bytes(n: float) -> str:
    """``512 MB``, ``3.2 GB``, ``4e+03 TB``."""
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n / 1e3:.3g} kB"


def memory_limit() -> float:
    """Bytes a cell may use: ``ICLAB_MEMORY_LIMIT_GB`` if set, else this machine's physical memory."""
    if os.environ.get("ICLAB_MEMORY_LIMIT_GB"):
        return float(os.environ["ICLAB_MEMORY_LIMIT_GB"]) * 1e9
    try:
        return float(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        return 16e9


def check_budget(
    needs: Iterable[Need], seconds_limit: float | None = None, override: str = "--no-budget-check"
) -> None:
    """One ConfigError when the needs add up to more memory than :func:`memory_limit` or more seconds than
    ``seconds_limit``, naming the fields of the largest part with their values, the total, the limit and
    ``override``."""
    needs = list(needs)
    if not needs:
        return
    limit = memory_limit()
    memory, seconds = sum(n.memory for n in needs), sum(n.seconds for n in needs)
    if not math.isfinite(memory) or memory > limit:
        _refuse(
            max(needs, key=lambda n: n.memory),
            f"about {fmt_bytes(memory)} of memory, and this machine has {fmt_bytes(limit)}",
            override,
        )
    if seconds_limit is not None and (not math.isfinite(seconds) or seconds > seconds_limit):
        _refuse(
            max(needs, key=lambda n: n.seconds),
            f"about {seconds:.3g} s of CPU, over the limit of {seconds_limit:g} s",
            override,
        )


def _refuse(need: Need, what: str, override: str) -> None:
    names = list(need.fields)
    shown = ", ".join(f"{k}={short_repr(v)}" for k, v in need.fields.items())
    raise ConfigError(
        names[0],
        need.fields[names[0]],
        message=f"invalid {shown}: one cell would need {what}; "
        f"lower {' or '.join(names)}, or pass {override} to try anyway",
    )
