"""Notes of ``scaling-rules``: what the run measured and what it can and cannot decide (docs/papers/scaling.md §5)."""

from __future__ import annotations

import pandas as pd

from iclab.experiments.scaling.config import STOCK, ScalingConfig
from iclab.experiments.scaling.tables import accuracy_table, prompt_rows

__all__ = ["notes"]


def notes(cfg: ScalingConfig, results: pd.DataFrame) -> str:
    rows = prompt_rows(results)
    lines = [
        "Each rule is applied to every attention layer of the stock model at inference only, as the released model "
        "that ships it applies it, and scored on the same prompts as the stock model (paired per prompt). Rules "
        "set to a nominal length below the model's trained one (`L=512`) act inside the run's range: they measure "
        "what the rule costs where the model needs no help.",
    ]
    if len(rows):
        table = accuracy_table(rows)
        largest = table[table["size"] == table["size"].max()]
        stock = largest[largest["rule"] == STOCK].set_index("model")["accuracy"]
        for _, r in largest[largest["rule"] != STOCK].iterrows():
            if r["model"] in stock.index:
                lines.append(
                    f"- {r['model']}, `{r['rule']}` at ~{r['tokens']:.0f} tokens: exact match {r['accuracy']:.2f} "
                    f"vs stock {stock[r['model']]:.2f}"
                )
        if not (~rows["within"]).any():
            lines.append(
                "Every prompt fits the models' trained lengths: the 'past the trained length' claims need longer "
                "prompts than this run's (the full preset reaches past SmolLM2's 8192 tokens, on a GPU)."
            )
    return "\n".join(lines)
