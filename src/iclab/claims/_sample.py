"""The rows a claim record is judged on (:func:`sample_of`): the selection of its cells, one row per unit, paired on
the unit against its baseline, and every cell a claim over a table needs (issue 43: a failed or missing one makes it
"not measured: n of N cells"; rows that would collapse as duplicates of one unit are an error naming the columns that
tell them apart). The vocabulary is :mod:`iclab.claims._records`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from iclab.claims._cells import cell_mask, missing_cells, not_measured, planned_cells

__all__ = ["Sample", "sample_of"]


@dataclass(frozen=True)
class Sample:
    """What a combine rule, a note and a gate read: the selected rows (one per unit, indexed and sorted by the unit),
    the baseline rows (paired measures, else None), the ``units`` both have, and on them, in the same order: the
    selection's values ``a`` and the baseline's ``b`` (``Measure.base_column``, else its column; ``scale`` applied
    to ``a``), the per-unit ``values`` (``a``, or ``a`` against ``b`` by the contrast) and their own standard errors
    ``ses`` (``Measure.se_column``, else None)."""

    rows: pd.DataFrame
    base: pd.DataFrame | None
    units: pd.Index
    a: np.ndarray  # (units,)
    b: np.ndarray | None  # (units,)
    values: np.ndarray  # (units,)
    ses: np.ndarray | None  # (units,)


def _select(df: pd.DataFrame, where: Mapping[str, Any], unit: Sequence[str]) -> pd.DataFrame:
    """The rows of the cells ``where``, one per unit, sorted and indexed by the unit. Rows equal on every column are
    one unit (a cell run twice); rows equal on the cells and the unit that differ elsewhere are different cells the
    measure does not tell apart, an error naming the columns that do (:func:`_apart`), never silently one."""
    rows = df[cell_mask(df, where)]
    keys = [k for k in list(where) + list(unit) if k in rows.columns]
    if len(rows) > 1 and keys:
        text = rows.astype(str)
        keep = ~text.duplicated(keep="first").to_numpy()
        rows, text = rows[keep], text[keep]
        clash = text.duplicated(subset=keys, keep=False).to_numpy()
        if clash.any():
            raise ValueError(_apart(text[clash], keys))
    return rows.sort_values(list(unit)).set_index(list(unit))


def _apart(clash: pd.DataFrame, keys: list[str]) -> str:
    """The error of rows that would collapse: the columns that tell them apart, fewest distinct values first (a grid
    column before a measured one)."""
    differ = [c for c in clash.columns if c not in keys and clash.groupby(keys)[c].nunique(dropna=False).max() > 1]
    differ.sort(key=lambda c: clash[c].nunique(dropna=False))
    return (
        f"{len(clash)} rows equal on {', '.join(keys)} differ in {', '.join(differ[:6])}"
        f"{' …' if len(differ) > 6 else ''}: they would collapse as duplicates of one unit; name the columns that tell "
        "them apart in the measure's unit (or where)"
    )


def _column(rows: pd.DataFrame, column, scale: float | None = None) -> np.ndarray:
    values = np.asarray(column(rows) if callable(column) else rows[column].to_numpy(float), dtype=float)
    return values if scale is None else values * scale


def sample_of(
    m: Any, config: Any, results: pd.DataFrame, planned: Sequence[Mapping[str, Any]] | None = None
) -> Sample | str:
    """The :class:`Sample` of measure ``m`` (a :class:`~iclab.claims._records.Measure`) in ``results``, or why
    there is none ("not measured: …"): a cell it names without a row, one of ``Measure.cells`` without a row, or —
    when ``planned`` (a grid of cells that must all have a row: the row-level calibration's, whose tables are
    complete runs with rows taken away) is given and the measure names no cells of its own — one of the planned
    cells its selection or baseline reads (:func:`~iclab.claims._cells.planned_cells`) without a row: "not
    measured: n of N cells", never a claim judged on the units left. In a run the judge learns of a lost cell from
    the run's failed cells (:func:`~iclab.claims._judge.judge_run`)."""
    cells = m.selections()
    gone = missing_cells(results, cells)
    if gone:
        return not_measured(gone).reason
    if m.cells is not None:
        needed = m.named_cells(config)
        gone = missing_cells(results, needed)
        if gone or not needed:
            return not_measured(gone or ["the config runs none of them"], len(needed)).reason
    elif planned is not None:
        needed = planned_cells(planned, cells, results.columns)
        gone = missing_cells(results, needed)
        if gone:
            return not_measured(gone, len(needed)).reason
    lacking = [c for c in m.unit if c not in results.columns]
    if lacking:
        return f"not measured: the rows lack the unit column(s) {', '.join(lacking)}"
    rows = _select(results, m.where, m.unit)
    scale = m.scale(config) if m.scale is not None else None
    if m.base is None:
        a = _column(rows, m.column, scale)
        ses = _se(rows, m.se_column, scale)
        return Sample(rows, None, rows.index, a, None, a, ses)
    base = _select(results, m.base, m.unit)
    units = rows.index.intersection(base.index)
    if not len(units):
        return "not measured: no unit of replication has both the cells and the baseline cells"
    a = _column(rows.loc[units], m.column, scale)
    b = _column(base.loc[units], m.column if m.base_column is None else m.base_column)
    values = a - b if m.contrast == "minus" else np.log(a / b)
    ses = None
    if m.se_column:
        ses = np.hypot(_se(rows.loc[units], m.se_column, scale), _se(base.loc[units], m.se_column, None))
    return Sample(rows, base, units, a, b, values, ses)


def _se(rows: pd.DataFrame, col, scale: float | None) -> np.ndarray | None:
    if not callable(col) and not col:
        return None
    return _column(rows, col, scale)
