"""Verdicts on the declared claims of the ``categorical`` experiment against Wang et al., arXiv:2405.17248
(docs/papers/categorical.md §6, §7): :func:`compare` judges every claim of :mod:`.claims` whose cells finished,
with the tests of :mod:`iclab.experiments.categorical.verdicts`; :func:`notes` (from :mod:`.notes`) says where
iclab and the paper differ.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np
import pandas as pd

from iclab.experiments._judge import Claim, downgrade, one_per_unit
from iclab.experiments.categorical.claims import (
    FGD_TOL,
    GD_LIKE,
    blocks_erase,
    claims,
    real_data_claims,
    stationarity_claims,
)
from iclab.experiments.categorical.notes import notes
from iclab.experiments.categorical.tables import part_rows
from iclab.experiments.categorical.verdicts import (
    COMPARABLE_NOTE,
    acc_verdict,
    features_verdict,
    fgd_verdict,
    paired_direction,
    stationarity_verdict,
)
from iclab.stats import Verdict, judge_direction, mean_se, not_judged

__all__ = ["claims", "compare", "notes"]


def _syn(df: pd.DataFrame) -> pd.DataFrame:
    """Synthetic rows, with the columns of older runs filled in (one W_e draw, exact erase head)."""
    syn = part_rows(df, "synthetic").copy()
    for col, default in (("erase", "distance"), ("embedding_seed", 42)):
        if col not in syn:
            syn[col] = default
    return one_per_unit(syn, ("model", "kernel", "blocks", "erase", "L", "embedding_seed", "seed"))  # a cell once


def _select(syn: pd.DataFrame, **eq) -> pd.DataFrame:
    m = np.ones(len(syn), dtype=bool)
    for k, v in eq.items():
        m &= (syn[k] == v).to_numpy() if k in syn else False
    return syn[m]


def _acc(cfg, syn, claim: Claim) -> Verdict | None:
    _, what, model = claim.id.split("/")
    kind, val = what.split("=")
    if kind == "L":
        rows = _select(syn, model=model, kernel="softmax", blocks=2, L=int(val))
    else:
        erase = blocks_erase(cfg, int(val)) if model == "gd" else "distance"
        rows = _select(syn, model=model, kernel="softmax", blocks=int(val), L=2048, erase=erase)
    return acc_verdict(rows, float(claim.paper_value)) if len(rows) else None


def _gd_beats_tf(cfg, syn, claim: Claim) -> Verdict | None:
    _, kernel, k = claim.id.split("/")
    K = int(k.split("=")[1])
    sizes = {"softmax": cfg.train_sizes, "rbf": cfg.rbf_train_sizes, "linear": cfg.linear_train_sizes}
    rows = _select(syn, kernel=kernel, blocks=K, erase="distance")
    rows = rows[rows["L"] == min(sizes[kernel])] if len(rows) else rows  # the L the claim names, even if it failed
    v = paired_direction(_select(rows, model="gd"), _select(rows, model="tf"), smallest=0.01)
    if v is None or kernel == "softmax" or K == 1:
        return v
    return downgrade(v, f"not comparable: {COMPARABLE_NOTE[kernel]}")


def _blocks_help(cfg, syn, claim: Claim) -> Verdict | None:
    erase, K = claim.id.split("/")[1], max(cfg.blocks_sweep)
    base = _select(syn, model="gd", kernel="softmax", blocks=1, L=cfg.blocks_L, erase="distance")
    top = _select(syn, model="gd", kernel="softmax", blocks=K, L=cfg.blocks_L, erase=erase if K >= 3 else "distance")
    return paired_direction(top, base, smallest=0.005)


def _tf_gd_like(cfg, syn, claim: Claim) -> Verdict | None:
    col = {"qk": "qk_diag_ratio", "vp": "vp_wf_diag_ratio"}[claim.id.split("/")[1]]
    tf = _select(syn, model="tf")
    if col not in tf or not tf[col].notna().any():
        return None
    x = np.log10(tf[col].dropna().to_numpy(dtype=float)) - math.log10(GD_LIKE)
    m, se, n = mean_se(x)
    return judge_direction(m, se, sign=+1, n=n, dof=n - 1 if n > 1 else None)


def _fgd(cfg, syn, claim: Claim) -> Verdict | None:
    rows = _select(syn, model="gd", erase=claim.id.split("/")[1])
    rows = rows[rows["fgd_tv"].notna()] if "fgd_tv" in rows else rows.iloc[0:0]
    return fgd_verdict(rows, FGD_TOL, cfg.n_test) if len(rows) else None


_JUDGES: dict[str, Callable] = {
    "acc": _acc,
    "gd-beats-tf": _gd_beats_tf,
    "blocks-help": _blocks_help,
    "tf-gd-like": _tf_gd_like,
    "fgd-steps": _fgd,
}


def _language(lm: pd.DataFrame) -> Verdict:
    m = lm.groupby("model")["perplexity"].mean()
    txt = ", ".join(f"{k} {v:.2f}" for k, v in m.items())
    return not_judged(
        "settings differ: held-out character perplexity on pydoc_data text stands in for TinyStories + "
        "GPT-4o grades (the corpus and a judge model would judge it)",
        f"perplexity {txt}",
    )


def _not_run(cfg, claim: Claim) -> str:
    """Why this preset runs no cell for ``claim`` ("" when it does)."""
    head, tail = claim.id.split("/")[0], claim.id.split("/")[-1]
    if head == "fgd-steps":  # declared only where GD cells with the authors' erase head run
        return ""
    blocks_row = claim.id.startswith("acc/blocks=") or head == "blocks-help"
    models = cfg.blocks_models if blocks_row else cfg.models
    needs = {"tf"} if tail == "tf" or head == "tf-gd-like" else {"gd", "tf"} if head == "gd-beats-tf" else {"gd"}
    missing = sorted(needs - set(models))
    if not missing:
        return ""
    return f"not run in this preset: `{'blocks_models' if blocks_row else 'models'}` lacks {', '.join(missing)}" + (
        " (the trained transformer at the authors' budget needs a GPU)" if "tf" in missing else ""
    )


def compare(cfg, df: pd.DataFrame) -> dict[str, Verdict]:
    """Verdicts ``{claim id: Verdict}`` of the declared claims whose cells finished (docs/papers/categorical.md §7)."""
    declared = claims(cfg)
    syn, out = _syn(df), {}
    for c in declared:
        judge, why = _JUDGES.get(c.id.split("/")[0]), _not_run(cfg, c)
        v = (
            not_judged(why)
            if why and judge is not None
            else judge(cfg, syn, c)
            if judge is not None and len(syn)
            else None
        )
        if v is not None:
            out[c.id] = v
    st, feat, lm = part_rows(df, "stationarity"), part_rows(df, "features"), part_rows(df, "language")
    if len(st) and stationarity_claims(cfg):
        out |= stationarity_verdict(st, cfg.stationarity_prompts)
    if len(feat) and cfg.feature_blocks:
        out |= features_verdict(feat, max(cfg.feature_blocks), cfg.n_test)
    if len(lm) and {"gd_ff", "transformer"} <= set(lm["model"]) and real_data_claims(cfg):
        out["language/gd-ff-vs-transformer"] = _language(lm)
    return out
