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
import re
from typing import Any, Iterable, Mapping

from iclab.domain import nonnegative, positive
from iclab.errors import ConfigError, short_repr
from iclab.settings import setting

__all__ = ["Need", "check_budget", "check_call", "memory_limit", "seconds_limit", "fmt_bytes", "parse_duration"]


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
    """``512 MB``, ``3.2 GB``, ``4e+03 TB``; ``inf`` for an estimate too large to count.

    Arguments: ``n`` a number >= 0 (bytes; inf allowed)."""
    if not isinstance(n, (int, float)) or isinstance(n, bool) or not n >= 0:
        raise ConfigError("n", n, "a number of bytes >= 0")
    if math.isinf(n):
        return "inf"
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n / 1e3:.3g} kB"


def memory_limit() -> float:
    """Bytes a cell may use: ``ICLAB_MEMORY_LIMIT_GB`` if set, else this machine's physical memory.

    Arguments: none (``ICLAB_MEMORY_LIMIT_GB``, when set, must be a finite number > 0: a ConfigError naming it)."""
    gb = setting("ICLAB_MEMORY_LIMIT_GB")
    if gb is not None:
        return gb * 1e9
    try:
        return float(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        return 16e9


def seconds_limit() -> float:
    """CPU seconds one cell (or one theory call) may need: ``ICLAB_CELL_SECONDS_LIMIT`` if set, else 86400.

    Arguments: none (``ICLAB_CELL_SECONDS_LIMIT``, when set, must be a finite number > 0: a ConfigError naming it)."""
    return float(setting("ICLAB_CELL_SECONDS_LIMIT"))


def check_call(fields: Mapping[str, Any], memory: float = 0.0, seconds: float = 0.0) -> None:
    """Refuse before allocating: one ConfigError naming ``fields`` (the arguments the cost grows with), the
    estimate and the limit when a call would need more than :func:`memory_limit` bytes or :func:`seconds_limit`
    CPU seconds (estimates within a factor of a few, like :class:`Need`'s).

    Arguments: ``fields`` a non-empty mapping; ``memory``, ``seconds`` numbers >= 0 (inf allowed: too large)."""
    if not isinstance(fields, Mapping) or not fields:
        raise ConfigError("fields", fields, "a non-empty mapping of the arguments the estimate grows with")
    for name, v in (("memory", memory), ("seconds", seconds)):
        if not (isinstance(v, (int, float)) and not isinstance(v, bool) and v == math.inf):
            nonnegative(name, v)
    limit = seconds_limit()
    if memory > memory_limit():
        _refuse(
            Need(fields, memory),
            f"about {fmt_bytes(memory)} of memory, and this machine has {fmt_bytes(memory_limit())}",
            "ICLAB_MEMORY_LIMIT_GB",
            "this call",
        )
    if seconds > limit:
        _refuse(
            Need(fields, seconds=seconds),
            f"about {seconds:.3g} s of CPU, over the limit of {limit:g} s",
            "ICLAB_CELL_SECONDS_LIMIT",
            "this call",
        )


def check_budget(
    needs: Iterable[Need], seconds_limit: float | None = None, override: str = "--no-budget-check"
) -> None:
    """One ConfigError when the needs add up to more memory than :func:`memory_limit` or more seconds than
    ``seconds_limit``, naming the fields of the largest part with their values, the total, the limit and
    ``override``.

    Arguments: ``needs`` an iterable of :class:`Need` with numbers >= 0 (inf allowed: too large to count);
    ``seconds_limit`` None or a finite number > 0; ``override`` a string."""
    if isinstance(needs, (str, bytes)) or not hasattr(needs, "__iter__"):
        raise ConfigError("needs", needs, "a list of Need")
    needs = list(needs)
    for need in needs:
        if not isinstance(need, Need):
            raise ConfigError("needs", need, "Need(fields, memory, seconds) entries")
        for name in ("memory", "seconds"):
            v = getattr(need, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not v >= 0:
                raise ConfigError(name, v, "a number >= 0 (inf: too large to count)")
    if seconds_limit is not None:
        positive("seconds_limit", seconds_limit)
    if not isinstance(override, str):
        raise ConfigError("override", override, "a string (the flag that skips the check)")
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


def _refuse(need: Need, what: str, override: str, subject: str = "one cell") -> None:
    names = list(need.fields)
    shown = ", ".join(f"{k}={short_repr(v)}" for k, v in need.fields.items())
    how = f"raise {override} to try anyway" if override.startswith("ICLAB_") else f"pass {override} to try anyway"
    raise ConfigError(
        names[0],
        need.fields[names[0]],
        message=f"invalid {shown}: {subject} would need {what}; lower {' or '.join(names)}, or {how}",
    )


#: seconds per unit of a duration (:func:`parse_duration`)
_DURATION_UNITS = {"s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "hr": 3600, "hour": 3600, "hours": 3600, "d": 86400}
_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)\s*([a-z]+)")
MAX_DURATION = 1e9  # seconds (about 32 years of one core): more is a typo, not a budget


def parse_duration(flag: str, text: str) -> float:
    """Seconds in a duration such as ``3h``, ``90m``, ``2h30m``, ``1.5 hours``, ``3600s`` or ``2d`` (units s, sec,
    m, min, h, hr, hour(s), d; case and spaces between parts ignored): a number > 0 and at most
    :data:`MAX_DURATION`. Anything else — a bare number, an unknown unit ("3 parsecs"), zero — is one ConfigError
    naming ``flag`` (``--budget``).

    Arguments: ``flag`` the option the ConfigError names (a string, not checked); ``text`` a string: a duration as
    above, > 0 s and at most :data:`MAX_DURATION` seconds."""
    allowed = "a duration > 0 such as 3h, 90m, 2h30m or 3600s (units s, m, h, d)"
    if not isinstance(text, str):
        raise ConfigError(flag, text, allowed)
    spec = text.strip().lower().replace(" ", "")
    parts = _DURATION_PART.findall(spec)
    if not spec or "".join(n + u for n, u in parts) != spec or any(u not in _DURATION_UNITS for _, u in parts):
        raise ConfigError(flag, text, allowed)
    seconds = sum(float(n) * _DURATION_UNITS[u] for n, u in parts)
    if not 0 < seconds <= MAX_DURATION:
        raise ConfigError(flag, text, f"{allowed}, at most {MAX_DURATION:.0e} s")
    return seconds
