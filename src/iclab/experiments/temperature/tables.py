"""Reading the results table of the one-layer ``temperature`` experiment (arXiv:2511.01292): the rows of one
part, in order of context length."""

from __future__ import annotations

import pandas as pd

__all__ = ["part_rows"]


def part_rows(df: pd.DataFrame, part: str, by: str = "l") -> pd.DataFrame:
    """The rows whose ``part`` is ``part``, sorted by ``by`` (none when the table has no ``part`` column)."""
    return df[df["part"] == part].sort_values(by) if "part" in df else df.iloc[:0]
