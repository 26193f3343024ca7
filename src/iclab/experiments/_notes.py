"""The shapes the experiments' report notes share (``<paper>/notes.py``: ``notes(config, results) -> str``): a section
under a heading, a markdown table, a list of labelled values, a value with its spread.

A note says only what no claim row says: conventions and settings, caveats, why a second-hand value is unreliable,
pointers to the derivations in ``docs/papers/<paper>.md``, and the run's numbers the rows do not show (a claim's
measured and paper values are its row's, never restated). Every number comes from the results or the config: none
is typed by hand (issue 22).
"""

from __future__ import annotations

from typing import Iterable, Sequence

__all__ = ["section", "md_table", "labelled", "pm"]


def section(title: str, *body: str) -> list[str]:
    """``### title``, a blank line, the ``body`` lines and a blank line; nothing when the body is empty."""
    return [f"### {title}", "", *body, ""] if body else []


def md_table(header: str, rows: Iterable[str]) -> list[str]:
    """A markdown table from cells joined by ``" | "``: the ``header``, the separator, one line per row, then a
    blank line."""
    return [f"| {header} |", "|" + "---|" * (header.count(" | ") + 1), *(f"| {r} |" for r in rows), ""]


def labelled(values, spec: str = ".3g", labels: Sequence | None = None, sep: str = ", ", join: str = ": ") -> str:
    """The ``values`` formatted with ``spec``, each after its label when ``labels`` are given
    (``"label: value, label: value"``), joined by ``sep``."""
    out = [format(v, spec) for v in values]
    if labels is not None:
        out = [f"{k}{join}{v}" for k, v in zip(labels, out, strict=True)]
    return sep.join(out)


def pm(mean: float, spread: float, spec: str = ".2f") -> str:
    """``mean ± spread``, both formatted with ``spec``."""
    return f"{format(mean, spec)} ± {format(spread, spec)}"
