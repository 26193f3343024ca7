"""The rows the claims, figures and notes of ``scaling-rules`` read: one per (model, task, size, rule, prompt), its
exact match averaged over the prompt's questions (docs/papers/scaling.md §4)."""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["prompt_rows", "accuracy_table"]


def prompt_rows(df: pd.DataFrame) -> pd.DataFrame:
    """One row per prompt of every finished cell: ``em`` (mean exact match of its questions), ``tokens`` (its
    prefix), ``within`` (the prefix fits the model's trained length)."""
    out = []
    for _, r in df[df["part"] == "retrieval"].iterrows():
        em, group = np.asarray(r["em"], float), np.asarray(r["group"], int)
        for g, tokens in enumerate(r["tokens"]):
            out.append(
                {
                    **{k: r[k] for k in ("part", "model", "task", "size", "rule", "seed")},
                    "group": g,
                    "em": float(em[group == g].mean()),
                    "tokens": int(tokens),
                    "within": bool(tokens <= r["trained_tokens"]),
                }
            )
    return pd.DataFrame(
        out, columns=["part", "model", "task", "size", "rule", "seed", "group", "em", "tokens", "within"]
    )


def accuracy_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Per (model, size, rule), pooled over tasks: mean tokens, accuracy and its SE across prompts."""
    grouped = rows.groupby(["model", "size", "rule"])
    table = grouped.agg(tokens=("tokens", "mean"), accuracy=("em", "mean"), prompts=("em", "size"))
    table["se"] = grouped["em"].std(ddof=1) / np.sqrt(table["prompts"])
    return table.reset_index()
