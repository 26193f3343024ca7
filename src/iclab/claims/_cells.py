"""The rows of a claim's cells: which rows a cell selects, one row per unit of replication, and which cells a claim
names that have no row (then it is "not measured", naming them).

- :func:`one_per_unit`: rows are merged or counted only after de-duplication by the setting and the unit of
  replication (seed, model, W_e draw, question group, prompt): a repeated row is one unit, never two.
- :func:`unmeasured` (with :func:`missing_cells`, :func:`not_measured`): a claim is judged on the cells it names or
  not at all; when they failed or are missing it is "not measured", naming them, and no other setting (another σ,
  a smaller size) stands in.
- :func:`cell_mask`, :func:`part_rows`, :func:`planned_cells`: the one notion of "the rows of a cell", and of the
  planned cells a selection reads.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from iclab.stats import Verdict, not_judged

__all__ = ["one_per_unit", "part_rows", "missing_cells", "cell_mask", "planned_cells", "not_measured", "unmeasured"]


def one_per_unit(rows: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """``rows`` with one row per unit of replication: rows equal on every column of ``keys`` that ``rows`` has —
    the setting and the unit (seed, model, W_e draw, question group, prompt) — are one unit, and the first is kept
    (a cell run twice, or a table merged twice, gives the same row again; counting it twice would shrink the
    standard error by √2 with no new information)."""
    cols = [k for k in keys if k in rows.columns]
    if not cols or len(rows) < 2:
        return rows
    return rows.loc[~rows[cols].astype(str).duplicated(keep="first")]


def missing_cells(rows: pd.DataFrame, cells: Sequence[Mapping[str, Any]]) -> list[str]:
    """The ``cells`` (each a mapping column → value, numbers compared to 1e-9) that have no row in ``rows``, as
    ``"col = value, …"``."""
    return [
        ", ".join(f"{c} = {_short(v)}" for c, v in cell.items()) for cell in cells if not cell_mask(rows, cell).any()
    ]


def cell_mask(rows: pd.DataFrame, cell: Mapping[str, Any]) -> np.ndarray:
    """(len(rows),) bool: the rows of ``cell`` (column → value; numbers compared to 1e-9 relative, a column the
    rows lack matches none) — the one notion of "the rows of a cell" that :func:`missing_cells` and the claim
    records' selection share."""
    hit = np.ones(len(rows), dtype=bool)
    for col, want in cell.items():
        if col not in rows.columns:
            return np.zeros(len(rows), dtype=bool)
        got = rows[col]
        if isinstance(want, (int, float)) and not isinstance(want, bool):
            hit &= np.isclose(pd.to_numeric(got, errors="coerce").to_numpy(float), float(want), rtol=1e-9, atol=0)
        else:
            hit &= (got == want).to_numpy()
    return hit


def part_rows(df: pd.DataFrame, part: str, ints: Sequence[str] = (), **cell: Any) -> pd.DataFrame:
    """The rows of ``part`` (and of the other ``cell`` columns, :func:`cell_mask`); none when the table has no
    ``part`` column. ``ints`` names columns to give back as integers: a column that other parts leave empty is
    read back as floats."""
    out = df[cell_mask(df, {"part": part, **cell})] if "part" in df else df.iloc[0:0]
    for col in (c for c in ints if c in out and len(out) and out[c].notna().all()):
        out = out.assign(**{col: out[col].astype(int)})
    return out


def planned_cells(
    planned: Sequence[Mapping[str, Any]], selections: Sequence[Mapping[str, Any]], columns: Sequence[str]
) -> list[dict]:
    """The cells of ``planned`` (a run's grid, or its failed cells) that the ``selections`` (a measure's ``where`` and
    ``base``) read: each cell kept to its scalar keys that are columns of the rows, and taken when it agrees with a
    selection on every key both name (numbers to 1e-9 relative, as :func:`cell_mask`). A selection key the cell does
    not set (a column the cell computes) does not decide, so a cell is counted rather than missed; a cell that sets
    no column is skipped."""
    cols = set(columns)
    out: dict[tuple, dict] = {}
    for cell in planned:
        keys = {k: v for k, v in cell.items() if k in cols and _scalar(v)}
        if keys and any(all(_same(keys[k], w) for k, w in sel.items() if k in keys) for sel in selections):
            out.setdefault(tuple(sorted((k, repr(v)) for k, v in keys.items())), keys)
    return list(out.values())


def _scalar(v: Any) -> bool:
    return isinstance(v, (str, int, float, bool, np.integer, np.floating)) and not (isinstance(v, float) and v != v)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (int, float, np.integer, np.floating)) and isinstance(b, (int, float, np.integer, np.floating)):
        return bool(np.isclose(float(a), float(b), rtol=1e-9, atol=0))
    return a == b


def not_measured(missing: Sequence[str], total: int | None = None) -> Verdict:
    """ "not measured", naming the ``missing`` cells (from :func:`missing_cells`) the claim needs; with ``total`` (the
    cells a claim over a table needs) "n of N cells", naming the first three missing."""
    if total is None:
        return not_judged(
            f"not measured: no result for the cell(s) it names ({'; '.join(missing)}) — a failed cell or one not run; "
            "no other setting stands in for it"
        )
    shown = list(missing[:3]) + ([f"… {len(missing) - 3} more"] if len(missing) > 3 else [])
    return not_judged(
        f"not measured: {total - len(missing)} of {total} cells it needs have a result (missing: {'; '.join(shown)}) "
        "— a failed cell or one not run; a claim is never judged on the cells that are left"
    )


def unmeasured(rows: pd.DataFrame, named: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, Verdict]:
    """``{claim id: "not measured"}`` for every claim of ``named`` (claim id → the cells it is judged on) with a
    named cell missing from ``rows``: ``compare`` puts these over its own verdicts, so a claim is never judged on
    the cells that happen to be there (the shortest l left, a smaller σ_test, a shorter list)."""
    return {cid: not_measured(gone) for cid, cells in named.items() if (gone := missing_cells(rows, cells))}


def _short(value: Any, limit: int = 60) -> str:
    text = ",".join(map(str, value)) if isinstance(value, (tuple, list)) else str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
