"""The cost model of ``iclab plan`` (:mod:`iclab.report._sizes`, issue 38): the CPU seconds of a fresh run of an
experiment at a changed config, from the seconds each cell of a finished run took (times ``cpu_scale``: a shipped
reference's recorded CPU time over its cells' wall time). A cell the run has keeps its own seconds; a new one (a
field that adds cells: seeds, models, groups) takes the mean of its part's; a field that works inside the cells
(prompts, questions, samples) multiplies the cells of the parts it scales by :math:`v'/v`."""

from __future__ import annotations

import json
import math
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from iclab.experiments import Experiment

__all__ = ["RunCosts", "cell_value"]


class RunCosts:
    """Seconds of a fresh run of ``exp`` at ``config`` with overrides: the grid's cells at their measured seconds
    (:mod:`iclab.report._sizes`)."""

    def __init__(self, exp: Experiment, config: Any, results: pd.DataFrame, cpu_scale: float = 1.0) -> None:
        self.exp, self.config = exp, config
        cells = exp.cells(config)
        self.seconds = {k: s * cpu_scale for k, s in _measured(cells, results).items()}
        self.results = results
        by_part: dict[str, list[float]] = {}
        for c in cells:
            if _cell_id(c) in self.seconds:
                by_part.setdefault(str(c.get("part", "")), []).append(self.seconds[_cell_id(c)])
        self.part_mean = {p: float(np.mean(v)) for p, v in by_part.items()}
        self.mean = float(np.mean(list(self.seconds.values()))) if self.seconds else math.nan
        self.parts = sorted({str(c.get("part", "")) for c in cells})
        self.grid_size = len(cells)

    def timed(self) -> bool:
        return bool(self.seconds)

    def config_with(self, overrides: Mapping[str, Any]) -> Any:
        return self.config.with_overrides(dict(overrides)) if overrides else self.config

    def check(self, overrides: Mapping[str, Any]) -> None:
        """The checks a run makes before it starts (the experiment's ``budget``: a task that cannot supply the
        questions, a device or model this machine lacks): a ConfigError when the overrides could not run."""
        config = self.config_with(overrides)
        if self.exp.budget is not None:
            self.exp.budget(config)

    def adds_cells(self, name: str, value: int) -> bool:
        """Whether setting ``name`` to ``value`` changes the grid (else it works inside the cells)."""
        return len(self.exp.cells(self.config_with({name: value}))) != self.grid_size

    def run_seconds(self, overrides: Mapping[str, int], parts: Mapping[str, set[str]]) -> float:
        """CPU seconds of a fresh run with ``overrides``; ``parts[field]``: the parts whose cells a field that works
        inside the cells scales."""
        cells = self.exp.cells(self.config_with(overrides))
        inside = {f: v for f, v in overrides.items() if len(cells) == self.grid_size or not self.adds_cells(f, v)}
        total = 0.0
        for c in cells:
            part = str(c.get("part", ""))
            s = self.seconds.get(_cell_id(c), self.part_mean.get(part, self.mean))
            for f, v in inside.items():
                if part in parts.get(f, set(self.parts)):
                    s *= v / max(float(getattr(self.config, f)), 1.0)
            total += s
        return total


def cell_value(value: Any) -> Any:
    """A cell value as the results table and a cell dict both give it (an int column read back as floats)."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, float, np.integer, np.floating)):
        return float(value)
    return str(value)


def _cell_id(cell: Mapping[str, Any]) -> str:
    return json.dumps({k: cell_value(v) for k, v in cell.items()}, sort_keys=True)


def _measured(cells: Sequence[Mapping[str, Any]], results: pd.DataFrame) -> dict[str, float]:
    """``{cell id: seconds}`` of the ``cells`` that have a row in ``results`` with its ``_seconds``, matched by the
    cell's own values (the run's cell keys hash its config, which a later iclab may spell with more fields)."""
    if not len(results) or "_seconds" not in results:
        return {}
    out: dict[str, float] = {}
    for names in {tuple(sorted(c)) for c in cells}:
        if not set(names) <= set(results.columns):
            continue
        for values, s in zip(results[list(names)].itertuples(index=False, name=None), results["_seconds"]):
            if s is not None and s == s:
                out.setdefault(_cell_id(dict(zip(names, values))), float(s))
    return out
