"""The every-cell test of a claim record (``Rule("every cell", by=...)``): the selection split into its cells, each
cell's units combined by the record's combine rule and judged against the cell's target by
:func:`iclab.stats.judge_every_cell` (an intersection–union test). :func:`~iclab.claims._records.judge_records` judges
through :func:`every_cell_verdict`; the row-level calibration (:mod:`iclab.claims._calibrate_cells`) draws the cells
of :func:`every_cell_parts` at their truths and judges them with :func:`judge_cell_parts`. ``rec`` is a
:class:`~iclab.claims._records.ClaimRecord`.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence

import pandas as pd

from iclab.claims._sample import Sample, sample_of
from iclab.stats import Verdict, judge_every_cell, not_judged

__all__ = ["every_cell_parts", "every_cell_verdict", "judge_cell_parts"]


def every_cell_verdict(rec: Any, config: Any, results: pd.DataFrame, sample: Sample) -> Verdict:
    """Every-cell test: one estimate per cell (``rule.by``) of the whole selection ``sample`` against the cell's
    ``rule.target`` column (the gates then read the whole selection; ``note`` and ``measured`` read one estimate,
    which an every-cell test does not have)."""
    parts = every_cell_parts(rec, config, results, sample)
    return parts if isinstance(parts, Verdict) else judge_cell_parts(rec, config, parts)


def every_cell_parts(
    rec: Any, config: Any, results: pd.DataFrame, sample: Sample
) -> list[tuple[str, Sample, float]] | Verdict:
    """The cells of an every-cell record: ``(label, the cell's Sample, its target)`` per cell (``rule.by``) of the
    selection ``sample``, the target the mean of the cell's ``rule.target`` column; "not judged" when a cell has no
    sample. The row-level calibration draws each cell's units at its own truth
    (:mod:`iclab.claims._calibrate_cells`)."""
    m, t = rec.measure, rec.rule
    parts = []
    for key, g in sample.rows.reset_index().groupby(list(t.by), sort=True):
        cell = dict(zip(t.by, key if isinstance(key, tuple) else (key,)))  # a text and a number keep their types
        base = None if m.base is None else {**m.base, **cell}  # paired within the cell
        sub = sample_of(dataclasses.replace(m, where={**m.where, **cell}, base=base, cells=None), config, results)
        if isinstance(sub, str):
            return not_judged(sub)
        parts.append((", ".join(f"{c} = {k}" for c, k in cell.items()), sub, float(g[t.target].mean())))
    return parts


def judge_cell_parts(rec: Any, config: Any, parts: Sequence[tuple[str, Sample, float]]) -> Verdict:
    """:func:`iclab.stats.judge_every_cell` over the cells :func:`every_cell_parts` gives, each combined by the
    record's combine rule (a refusal in any cell: "not judged")."""
    m, t = rec.measure, rec.rule
    cells = []
    for label, sub, target in parts:
        est = m.combine(config, sub)
        if est.refused:
            return not_judged(est.refused)
        cells.append((label, est.value, est.se if est.se is not None else float("nan"), target))
    n = getattr(config, t.n) if t.n else None
    return judge_every_cell(cells, rel_tol=t.rel_tol, n=n)
