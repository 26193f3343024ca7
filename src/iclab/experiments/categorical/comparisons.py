"""Verdicts on the declared claims of the ``categorical`` experiment against Wang et al., arXiv:2405.17248
(docs/papers/categorical.md §6, §7): :func:`compare` judges the synthetic claims of :mod:`.claims` — records, read
by the generic judge of :mod:`iclab.experiments._records` — and, with the tests of
:mod:`iclab.experiments.categorical.verdicts`, the claims not yet records (functional GD, stationarity, features,
language); :func:`notes` (from :mod:`.notes`) says where iclab and the paper differ.
"""

from __future__ import annotations

import pandas as pd

from iclab.experiments._judge import one_per_unit
from iclab.experiments._records import ClaimRecord, judge_records
from iclab.experiments.categorical.claims import FGD_TOL, claims, real_data_claims, stationarity_claims
from iclab.experiments.categorical.notes import notes
from iclab.experiments.categorical.tables import part_rows
from iclab.experiments.categorical.verdicts import features_verdict, fgd_verdict, stationarity_verdict
from iclab.stats import Verdict, not_judged

__all__ = ["claims", "compare", "notes"]

_CELL = ("model", "kernel", "blocks", "erase", "L", "embedding_seed", "seed")


def _with_defaults(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with the synthetic columns of older runs filled in (one W_e draw, exact erase head)."""
    missing = {col: default for col, default in (("erase", "distance"), ("embedding_seed", 42)) if col not in df}
    return df.assign(**missing) if missing else df


def _fgd(cfg, df: pd.DataFrame, erase: str) -> Verdict | None:
    syn = one_per_unit(part_rows(df, "synthetic"), _CELL)
    rows = syn[(syn["model"] == "gd") & (syn["erase"] == erase)] if len(syn) else syn
    rows = rows[rows["fgd_tv"].notna()] if "fgd_tv" in rows else rows.iloc[0:0]
    return fgd_verdict(rows, FGD_TOL, cfg.n_test) if len(rows) else None


def _language(lm: pd.DataFrame) -> Verdict:
    m = lm.groupby("model")["perplexity"].mean()
    txt = ", ".join(f"{k} {v:.2f}" for k, v in m.items())
    return not_judged(
        "settings differ: held-out character perplexity on pydoc_data text stands in for TinyStories + "
        "GPT-4o grades (the corpus and a judge model would judge it)",
        f"perplexity {txt}",
    )


def compare(cfg, df: pd.DataFrame) -> dict[str, Verdict]:
    """Verdicts ``{claim id: Verdict}`` of the declared claims (docs/papers/categorical.md §7)."""
    declared = claims(cfg)
    df = _with_defaults(df)
    out = judge_records([c for c in declared if isinstance(c, ClaimRecord)], cfg, df)
    for c in declared:
        if c.id.startswith("fgd-steps/") and (v := _fgd(cfg, df, c.id.split("/")[1])) is not None:
            out[c.id] = v
    st, feat, lm = part_rows(df, "stationarity"), part_rows(df, "features"), part_rows(df, "language")
    if len(st) and stationarity_claims(cfg):
        out |= stationarity_verdict(st, cfg.stationarity_prompts)
    if len(feat) and cfg.feature_blocks:
        out |= features_verdict(feat, max(cfg.feature_blocks), cfg.n_test)
    if len(lm) and {"gd_ff", "transformer"} <= set(lm["model"]) and real_data_claims(cfg):
        out["language/gd-ff-vs-transformer"] = _language(lm)
    return out
