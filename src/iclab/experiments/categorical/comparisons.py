"""The claims of Wang et al., arXiv:2405.17248 that the ``categorical`` experiment judges, declared before the run
(:func:`claims`), their verdicts (:func:`compare`) and the notes on where iclab and the paper differ (:func:`notes`;
docs/papers/categorical.md §6, §7).

Replicates are (seed, W_e draw) pairs: accuracies are means over them with Student-t intervals, and paired
differences (GD − trained TF, K blocks − 1 block) are taken within a replicate. Claims whose paper settings a
preset lacks (N = 125, the authors' training budget for the trained transformer, ImageNet/VGG16 features) are
"not judged (settings differ)"; the linear- and RBF-kernel models of the authors are not functional GD from two
blocks on, so iclab's exact-GD cells there are "not judged (not comparable)". The tests themselves are in
:mod:`iclab.experiments.categorical.verdicts`.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np
import pandas as pd

from iclab.experiments._judge import Claim, downgrade, one_per_unit
from iclab.experiments.categorical.notes import notes
from iclab.experiments.categorical.paper_values import PAPER_BLOCKS, PAPER_L_SWEEP
from iclab.experiments.categorical.tables import part_rows
from iclab.experiments.categorical.verdicts import (
    COMPARABLE_NOTE,
    STATIONARITY_TOL,
    acc_verdict,
    features_verdict,
    fgd_verdict,
    paired_direction,
    stationarity_verdict,
)
from iclab.stats import Verdict, judge_direction, mean_se, not_judged

__all__ = ["claims", "compare", "notes", "FGD_TOL", "DATA_LAW", "GD_LIKE"]

SRC = "arXiv:2405.17248"
FGD_TOL = 1e-3  # functional-GD check: allowed mean total-variation distance between the two predictions
DATA_LAW = {"n_classes": 25, "d": 10, "d_embed": 5, "n_context": 125}  # the authors' synthetic setting (§5.1)
GD_LIKE = 3.0  # "≈ scalar × identity": diagonal RMS at least this many times the off-diagonal RMS
_ACC_TEST = (
    "mean accuracy over (seed, W_e draw) replicates against the paper's: disagrees when |Δ| > "
    "t(0.975, n−1)·√(SE² + s_W² + 0.003²/5), s_W the spread of accuracy between W_e draws (the authors' W_e "
    "is one unknown draw) and 0.003 the authors' seed std; agrees only when that band is within ±0.02 (else "
    "not judged: too little power; fewer than 3 replicates: not judged); not judged while the validation NLL "
    "still fell > 1 % over the last quarter of training (mean of the third quarter vs the last)"
)


def _tf_budget(L: int) -> dict:
    """The authors' training budget of the trained transformer at pool size L: 5000 passes at minibatch 512."""
    return {"batch_size": 512, "steps": 5000 * L // 512}


def _has(cfg, part: str) -> bool:
    return part in cfg.parts


def _blocks_erase(cfg, K: int) -> str:
    """The erase head of the authors' model at K blocks among the sweep's (``dot`` from 3 blocks when run)."""
    return "dot" if K >= 3 and "dot" in cfg.blocks_erase else "distance"


# ---------------------------------------------------------------------------------------------------------- claims


def _l_sweep_claims(cfg) -> list[Claim]:
    out = []
    if not (_has(cfg, "synthetic") and "softmax" in cfg.kernels and 2 in cfg.layers):
        return out
    for L in (L for L in cfg.train_sizes if L in PAPER_L_SWEEP):
        for j, model in enumerate(("gd", "tf")):
            name = "GD model" if model == "gd" else "trained transformer"
            out.append(
                Claim(
                    f"acc/L={L}/{model}",
                    f"{name}, 2 blocks, softmax kernel, L = {L}: query accuracy",
                    f"{SRC}, training-set-size figure (authors' notebook output)",
                    "paper value",
                    _ACC_TEST,
                    f"{PAPER_L_SWEEP[L][j]:.3f}",
                    paper_settings=DATA_LAW | ({} if model == "gd" else _tf_budget(L)),
                )
            )
    return out


def _blocks_claims(cfg) -> list[Claim]:
    out = []
    if not (_has(cfg, "blocks") and cfg.blocks_L == 2048):
        return out
    for K in (K for K in cfg.blocks_sweep if K in PAPER_BLOCKS and K != 2):
        for model, j in (("gd", 0), ("tf", 2)):
            who = ("authors'" if _blocks_erase(cfg, K) == "dot" else "exact") + " erase head"
            name = f"GD model ({who})" if model == "gd" else "trained transformer"
            out.append(
                Claim(
                    f"acc/blocks={K}/{model}",
                    f"{name}, {K} block(s), softmax kernel, L = 2048: query accuracy",
                    f"{SRC}, number-of-blocks figure (authors' notebook output)",
                    "paper value",
                    _ACC_TEST,
                    f"{PAPER_BLOCKS[K][j]:.3f}",
                    paper_settings=DATA_LAW | ({} if model == "gd" else _tf_budget(2048)),
                )
            )
    return out


def _gd_vs_tf_claims(cfg) -> list[Claim]:
    out = []
    if not _has(cfg, "synthetic"):
        return out
    sizes = {"softmax": cfg.train_sizes, "rbf": cfg.rbf_train_sizes, "linear": cfg.linear_train_sizes}
    for kernel in cfg.kernels:
        L = min(sizes[kernel])
        for K in cfg.layers:
            out.append(
                Claim(
                    f"gd-beats-tf/{kernel}/K={K}",
                    f"with few training contexts the GD model beats the fully trained "
                    f"transformer ({kernel} kernel, {K} block(s), L = {L})",
                    f"{SRC}, training-set-size figures",
                    "effect direction",
                    "paired accuracy difference GD − trained TF within each (seed, W_e draw) "
                    "replicate; its t-interval must exclude 0 on the positive side (smallest effect of interest 0.01)",
                    "GD better at small L (0.718 vs 0.524 at L = 2048, softmax, 2 blocks)",
                    headline=kernel == "softmax",
                    paper_settings=DATA_LAW | _tf_budget(L),
                )
            )
    return out


def _blocks_help_claims(cfg) -> list[Claim]:
    if not (_has(cfg, "blocks") and 1 in cfg.blocks_sweep and max(cfg.blocks_sweep) > 1):
        return []
    K = max(cfg.blocks_sweep)
    out = []
    for erase in cfg.blocks_erase:
        who = "the authors' erase head (dot-product score)" if erase == "dot" else "iclab's exact erase head"
        out.append(
            Claim(
                f"blocks-help/{erase}",
                f"more blocks improve the GD model: accuracy at {K} blocks > at 1 block ({who})",
                f"{SRC}, number-of-blocks figure",
                "effect direction",
                "paired accuracy difference (K = max − K = 1 blocks) within each replicate; its t-interval must exclude 0 "
                "on the positive side (smallest effect of interest 0.005)",
                "0.702 → 0.727 (1 → 6 blocks)",
                paper_settings=DATA_LAW,
            )
        )
    return out


def _tf_gd_like_claims(cfg) -> list[Claim]:
    if not _has(cfg, "synthetic"):
        return []
    return [
        Claim(
            f"tf-gd-like/{key}",
            f"after training, the trained transformer's {what}",
            f"{SRC}, trained-TF visualisation (authors' trained_tf_visualization.py)",
            "effect direction",
            f"log10 of the diagonal / off-diagonal RMS ratio of block 0 minus log10 {GD_LIKE:g} (random "
            "matrices: ratio ≈ 1), mean over the trained-TF cells; its t-interval must exclude 0 on the positive "
            "side",
            "identity / diagonal pattern",
            paper_settings=DATA_LAW | _tf_budget(2048),
        )
        for key, what in (
            ("qk", "head-1 Q_x K_xᵀ is ≈ a scalar × identity"),
            ("vp", "label → f block of V·P is ≈ diagonal"),
        )
    ]


def _fgd_claims(cfg) -> list[Claim]:
    # iclab's own erase head ("distance") equals K steps of functional GD by construction: a test
    # (tests/test_claim_identities.py), not a claim (it agreed at TV 1e-16 whatever the run).
    out = []
    if _has(cfg, "blocks") and "gd" in cfg.blocks_models and "dot" in cfg.blocks_erase and max(cfg.blocks_sweep) >= 3:
        out.append(
            Claim(
                "fgd-steps/dot",
                "the authors' construction (dot-product erase head) performs K steps of functional GD "
                "(K ≥ 3; up to 2 blocks it is the same function as iclab's)",
                f"{SRC}, the construction as implemented in the authors' code; docs/papers/categorical.md §4.2a",
                "theory vs simulation",
                "total-variation distance between the predicted class distributions of the GD cells with the "
                "authors' erase head (K ≥ 3) and of K steps of functional GD with the same α, s, W_e, mean over the "
                f"test prompts (float64): agrees when its 95 % CI lies within ±{FGD_TOL:g} for every (kernel, K)",
                "K blocks = K steps (exact: TV 0)",
            )
        )
    return out


def _stationarity_claims(cfg) -> list[Claim]:
    if not _has(cfg, "stationarity"):
        return []
    src = f"{SRC}, Theorems 1–2 (statements reconstructed)"
    out = []
    for k in cfg.stationarity_kernels:
        out += [
            Claim(
                f"stationarity/x-coupling/{k}",
                f"at a GD configuration the expected ICL-loss gradient of every "
                f"off-pattern entry that couples an x coordinate is zero ({k} kernel)",
                src,
                "theory vs simulation",
                "RMS mean gradient of those entries / RMS mean gradient of the free GD entries at the random "
                "configuration, at the random and at the trained configuration: agrees when its 95 % CI lies "
                f"within ±{STATIONARITY_TOL:.0%} at both",
                "0",
                headline=k == "softmax",
            ),
            Claim(
                f"stationarity/other/{k}",
                "at the optimal GD configuration the remaining off-pattern gradients "
                f"(label / scratch / f couplings) are zero too ({k} kernel)",
                src,
                "theory vs simulation",
                "as stationarity/x-coupling, for the other off-pattern entries at the trained configuration; not "
                "judged while the free GD parameters' own gradient is non-zero (z > 3: not the optimum)",
                "0",
            ),
        ]
    return out


def _real_data_claims(cfg) -> list[Claim]:
    out = []
    if _has(cfg, "features") and cfg.feature_blocks:
        K = max(cfg.feature_blocks)
        out += [
            Claim(
                f"features/{ds}",
                f"{K} GD block(s) roughly match a per-context linear probe on unseen classes ({ds})",
                f"{SRC}, ImageNet experiment (known from second-hand notes, no numbers)",
                "paper value",
                f"equivalence: GD accuracy ({K} blocks, linear kernel) within ±3 % of the "
                "probe's, 95 % CI (SE over seeds, or binomial over test prompts with one seed)",
                "2–3 GD blocks ≈ linear probe",
                headline=True,
                paper_settings={"feature_datasets": ("imagenet-vgg16",)},
            )
            for ds in cfg.feature_datasets
        ]
    if _has(cfg, "language") and {"gd_ff", "transformer"} <= set(cfg.lm_models):
        out.append(
            Claim(
                "language/gd-ff-vs-transformer",
                "a one-layer GD language model with a feed-forward layer almost equals a one-layer transformer",
                f"{SRC}, language experiment (GPT-4o grades; second-hand notes)",
                "paper value",
                "needs TinyStories and GPT-4o grades; iclab measures character perplexity on pydoc text "
                "instead and does not judge it",
                "almost equal (GPT-4o grades)",
                headline=True,
            )
        )
    return out


def claims(cfg) -> list[Claim]:
    """Every claim this config judges, declared before the run (docs/papers/categorical.md §7)."""
    return (
        _fgd_claims(cfg)
        + _stationarity_claims(cfg)
        + _gd_vs_tf_claims(cfg)
        + _blocks_help_claims(cfg)
        + _l_sweep_claims(cfg)
        + _blocks_claims(cfg)
        + _tf_gd_like_claims(cfg)
        + _real_data_claims(cfg)
    )


# ---------------------------------------------------------------------------------------------------------- compare


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
        erase = _blocks_erase(cfg, int(val)) if model == "gd" else "distance"
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
    if len(st) and _stationarity_claims(cfg):
        out |= stationarity_verdict(st, cfg.stationarity_prompts)
    if len(feat) and cfg.feature_blocks:
        out |= features_verdict(feat, max(cfg.feature_blocks), cfg.n_test)
    if len(lm) and {"gd_ff", "transformer"} <= set(lm["model"]) and _real_data_claims(cfg):
        out["language/gd-ff-vs-transformer"] = _language(lm)
    return out
