"""The results table of a run, built from the store's rows as they stream past: column by column
(:func:`results_table`, the same DataFrame as ``pd.DataFrame(list(rows))``), filtered by cell key in bounded chunks
(:func:`among`), with each cell's key held as one 64-bit integer (:func:`key_ints`). So the driver never holds a
sweep's rows as dicts, and its memory beyond the table it returns stays flat in the number of cells."""

from __future__ import annotations

from array import array
from typing import Any, Iterable, Iterator

import numpy as np
import pandas as pd

__all__ = ["results_table", "key_ints", "among"]


def results_table(rows: Iterable[dict[str, Any]]) -> pd.DataFrame:
    """The DataFrame ``pd.DataFrame(list(rows))`` would be (columns in order of first appearance, NaN where a row
    lacks a column, the same dtypes), built column by column as the rows stream past, never holding them as dicts:
    a column whose values are all Python ints in int64 range, or all floats, with none missing, fills a typed buffer
    (8 bytes a value: the int64 / float64 column pandas would infer for it); every other column is kept as its
    values (NaN where missing, short repeated texts such as ``_status`` shared) and typed by pandas itself."""
    typed: dict[str, array] = {}  # int ('q') or float ('d') columns, none missing so far
    objects: dict[str, list] = {}  # every other column
    names: list[str] = []  # in order of first appearance
    texts: dict[str, str] = {}  # one object per repeated short text (bounded)
    n = 0
    for row in rows:
        for name, value in row.items():
            column = typed.get(name)
            if column is not None:
                if type(value) is (int if column.typecode == "q" else float) and _append(column, value):
                    continue
                objects[name] = column.tolist()
                del typed[name]
            if name in objects:
                objects[name].append(_shared(value, texts))
                continue
            names.append(name)
            if n == 0 and type(value) in (int, float) and _append(column := array("q" if type(value) is int else "d"),
                                                                  value):
                typed[name] = column
            else:
                objects[name] = [np.nan] * n + [_shared(value, texts)]
        n += 1
        for name in [name for name, column in typed.items() if len(column) < n]:  # missing here: NaN, as pandas has
            objects[name] = typed.pop(name).tolist()
        for column in objects.values():
            if len(column) < n:
                column.append(np.nan)
    if not names:
        return pd.DataFrame(index=range(n)) if n else pd.DataFrame()
    data = {}
    for name in names:
        if name in typed:
            column = typed.pop(name)
            data[name] = np.frombuffer(column, dtype=np.int64 if column.typecode == "q" else np.float64)
        else:
            data[name] = np.fromiter(objects.pop(name), dtype=object, count=n)
    return pd.DataFrame(data).infer_objects()  # what pandas infers for the same rows given as dicts


def _append(column: array, value: int | float) -> bool:
    """Append ``value`` to a typed column; False when it does not fit (an int beyond int64)."""
    try:
        column.append(value)
        return True
    except OverflowError:
        return False


def _shared(value: Any, texts: dict[str, str], limit: int = 4096) -> Any:
    """``value``, or the equal short text seen before (so a repeated text is held once, not once a row)."""
    if type(value) is not str or len(value) > 32:
        return value
    if len(texts) < limit:
        return texts.setdefault(value, value)
    return texts.get(value, value)


def key_ints(keys: Iterable[str]) -> np.ndarray:
    """Cell keys (16 hex digits, :meth:`iclab.runs.Sweep.keys`) as unsigned 64-bit integers, 8 bytes a cell; a key
    of another form (never written by this iclab) becomes 0, which a real cell's key is with probability 2⁻⁶⁴."""
    def value(key: str) -> int:
        try:
            return int(key, 16) if len(key) == 16 else 0
        except ValueError:
            return 0

    return np.fromiter((value(k) for k in keys), dtype=np.uint64)


def among(rows: Iterator[dict[str, Any]], wanted: np.ndarray, chunk: int = 4096) -> Iterator[dict[str, Any]]:
    """The rows whose ``_key`` is in the sorted key array ``wanted``, in order, read ``chunk`` rows at a time."""
    while True:
        batch = [row for _, row in zip(range(chunk), rows)]
        if not batch:
            return
        keep = np.isin(key_ints(row["_key"] for row in batch), wanted)
        yield from (row for row, kept in zip(batch, keep) if kept)
