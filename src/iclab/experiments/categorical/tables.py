"""Reading the results table of the ``categorical`` experiment (Wang et al., arXiv:2405.17248): the rows of one
part, and means over seeds with their standard errors."""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["mean_with_se"]


def mean_with_se(df: pd.DataFrame, keys: list[str], cols: list[str]) -> pd.DataFrame:
    """Mean of ``cols`` per group of ``keys``, with ``<col>_se`` = sd / sqrt(count) (0 for a single seed)."""
    g = df.groupby(keys)
    out = g[cols].mean()
    for c in cols:
        out[c + "_se"] = g[c].std().fillna(0.0) / np.sqrt(g[c].count())
    return out.reset_index()
