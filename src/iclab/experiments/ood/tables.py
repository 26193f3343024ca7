"""Views of the ``ood`` results table (arXiv:2609.36448; docs/papers/ood.md §5) used by the figures, notes and claim statistics:
the rows of one part, and the ``forget`` cells unrolled into one row per (γ1, γ2)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from iclab.experiments._judge import part_rows

__all__ = ["first_row", "forget_table", "within_target_spearman"]

_FORGET_COLUMNS = (
    "F",
    "F_theory",
    "F_largeN",
    "forgot1",
    "forgot2",
    "pred1",
    "pred2",
    "src1_after",
    "src2_after",
    "ood1_before",
    "ood2_before",
    "steps",
    "theory_steps",
    "backproj_dev",
    "conservation_ft",
    "dAlphaV1",
    "dAlphaV2",
)


def first_row(df: pd.DataFrame, part: str):
    """The first row of ``part``, or None."""
    sub = part_rows(df, part)
    return None if sub.empty else sub.iloc[0]


def forget_table(df: pd.DataFrame) -> pd.DataFrame:
    """One row per (γ1, γ2) of the ``forget`` cells, with the per-γ2 list entries of ``_FORGET_COLUMNS``."""
    rows = []
    for _, r in part_rows(df, "forget").iterrows():
        for i, g2 in enumerate(r["gamma2_list"]):
            rows.append({"gamma1": float(r["gamma1"]), "gamma2": float(g2), **{k: r[k][i] for k in _FORGET_COLUMNS}})
    return pd.DataFrame(rows)


def within_target_spearman(sim, ce) -> list[float]:
    """Per target domain t: Spearman ρ between similarity sim[s][t] and cross-entropy ce[s][t] over sources s ≠ t
    (the target's own difficulty is held fixed)."""
    from scipy.stats import spearmanr

    sim, ce = np.asarray(sim, float), np.asarray(ce, float)
    out = []
    for t in range(sim.shape[0]):
        s = [i for i in range(sim.shape[0]) if i != t]
        rho = spearmanr(sim[s, t], ce[s, t])[0] if len(s) > 2 else float("nan")
        out.append(float(rho))
    return out
