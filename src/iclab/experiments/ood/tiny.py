r"""The ``tiny`` cell: tiny multi-layer transformers (1–3 layers, width 16) on the K = 2 feature prompts
(arXiv:2609.36448; docs/papers/ood.md §5.5): OOD error under rotation, then fine-tuning on U with overlaps
(γ1, γ2) and the source forgetting F.

Model: :class:`iclab.models.FeatureTransformer` (tokens [x; y], query [x_q; 0], pre-LN blocks, MLP 4x, read-out
at the query). Trained with Adam on the Monte-Carlo loss :math:`c(\hat y-w^\top x_q)^2` (w sampled; the w-average
of note §4.1 has no closed form here). Source and OOD losses are measured on fixed evaluation sets (the same
prompts before and after fine-tuning, so F has no sampling noise from the evaluation set). The merged-Q theory
gives no numbers for this model; it is compared by the sign of forgetting per feature (the K = 2 rule
:math:`-\gamma_k\gamma_m>\gamma_k^2`, note §4.9).
"""

from __future__ import annotations

import copy
import dataclasses
import math

import torch

from iclab.data import (
    FeaturePrompts,
    derive_seed,
    feature_basis,
    generator_for,
    overlap_features,
    rotated_features,
    seeded_init,
)
from iclab.models import FeatureTransformer, prompt_mse_loss
from iclab.theory import ood as T
from iclab.train import TrainConfig, train

__all__ = ["tiny_cell"]

_K = 2
_ROWS = (
    "F",
    "F_se",
    "src1_after",
    "src2_after",
    "ood_before",
    "ood_after",
    "forgot1",
    "forgot2",
    "pred1",
    "pred2",
    "dalpha1_src",
    "dbeta1_src",
)


def _eval(model, data, n: int, seed, key, c: float) -> dict:
    """Loss c(ŷ − wᵀx_q)² of every one of ``n`` prompts drawn from the key (the same prompts every call):
    ``per`` (n,), the query feature ``qfeat`` (n,) and the per-feature means ``L`` (K,)."""
    b = data.sample(n, generator_for(seed, "tiny-eval", key))
    with torch.no_grad():
        yhat = model(b.x.float(), b.y.float(), b.xq.float()).double()
    per = c * (yhat - b.yq) ** 2  # (n,)
    return {"per": per, "qfeat": b.qfeat, "L": [float(per[b.qfeat == k].mean()) for k in range(data.K)]}


def _paired_change(after: dict, before: dict, K: int) -> tuple[float, float]:
    """F = mean over features of the per-feature mean change on the same prompts, and its standard error."""
    d = after["per"] - before["per"]  # (n,) paired: the same prompts before and after
    groups = [d[before["qfeat"] == k] for k in range(K)]
    F = sum(float(g.mean()) for g in groups) / K
    se = math.sqrt(sum(float(g.var()) / max(1, len(g)) for g in groups)) / K
    return F, se


def _float_loss(c: float):
    def loss(m, b):
        return prompt_mse_loss(
            m, b.__class__(b.x.float(), b.y.float(), b.xq.float(), b.yq.float(), b.w.float(), b.feat, b.qfeat), c, _K
        )

    return loss


def _finetune_row(cfg, model, src, V, Vp, g2: float, before: dict, S1, ft_cfg) -> dict:
    """Fine-tune a copy of ``model`` on U(γ1, γ2): source losses after, F, OOD loss before/after, the measured
    and predicted sign per feature, and the change of the layer-1 source α/β."""
    off = ~torch.eye(_K, dtype=torch.bool)
    U = overlap_features(V, Vp, [cfg.tiny_gamma1, g2])
    tgt = src.with_features(U)
    m = copy.deepcopy(model)
    ood_before = sum(_eval(m, tgt, cfg.tiny_eval, cfg.seed, f"tgt{g2}", cfg.c)["L"]) / _K
    train(m, tgt, _float_loss(cfg.c), ft_cfg)
    after = _eval(m, src, cfg.tiny_eval, cfg.seed, "src", cfg.c)
    F, F_se = _paired_change(after, before, _K)
    a, b = after["L"], before["L"]
    dS = m.layer1_logits(V) - S1
    pred = T.forgetting_sign_k2(cfg.tiny_gamma1, g2)
    return {
        "dalpha1_src": float(dS.diagonal().mean()),
        "dbeta1_src": float(dS[off].mean()),
        "F": F,
        "F_se": F_se,
        "src1_after": a[0],
        "src2_after": a[1],
        "ood_before": ood_before,
        "ood_after": sum(_eval(m, tgt, cfg.tiny_eval, cfg.seed, f"tgt{g2}", cfg.c)["L"]) / _K,
        "forgot1": T.loss_change_sign(a[0], b[0]),
        "forgot2": T.loss_change_sign(a[1], b[1]),
        "pred1": int(pred[0]),
        "pred2": int(pred[1]),
    }


def replicate_seed(seed: int, replicate: int) -> int:
    """The seed of tiny replicate ``replicate`` of a run with ``seed``: ``seed`` itself for replicate 0 (the runs
    before replicates existed), else one derived from both."""
    return seed if replicate == 0 else derive_seed(seed, "tiny-replicate", replicate)


def tiny_cell(cfg, cell) -> dict:
    """One depth and replicate: pre-train on V, OOD error vs θ, fine-tune on U(γ1, γ2) for each γ2, F and its sign;
    every random draw (basis, initialisation, batches, evaluation prompts) from the replicate's seed."""
    cfg = dataclasses.replace(cfg, seed=replicate_seed(cfg.seed, int(cell.get("replicate", 0))))
    layers, d = int(cell["layers"]), cfg.tiny_d
    V, Vp = feature_basis(d, _K, generator_for(cfg.seed, "tiny-basis"))
    src = FeaturePrompts(V, n_tokens=cfg.tiny_n_tokens)
    with seeded_init(cfg.seed, "tiny-init", layers):
        model = FeatureTransformer(d, d_model=cfg.tiny_width, n_layers=layers)
    tc = TrainConfig(
        steps=cfg.tiny_steps,
        batch_size=cfg.tiny_batch,
        lr=cfg.tiny_lr,
        optimizer="adam",
        log_every=max(1, cfg.tiny_steps // 10),
        seed=derive_seed(cfg.seed, "tiny-train"),
    )
    res = train(model, src, _float_loss(cfg.c), tc)
    before = _eval(model, src, cfg.tiny_eval, cfg.seed, "src", cfg.c)
    S1 = model.layer1_logits(V)
    off = ~torch.eye(_K, dtype=torch.bool)
    ood = [
        sum(
            _eval(
                model,
                src.with_features(rotated_features(V, Vp, math.radians(th))),
                cfg.tiny_eval,
                cfg.seed,
                f"ood{th}",
                cfg.c,
            )["L"]
        )
        / _K
        for th in cfg.tiny_thetas_deg
    ]
    out = {
        "pretrain_seconds": res.seconds,
        "source_before": before["L"],
        "alpha1": float(S1.diagonal().mean()),
        "beta1": float(S1[off].mean()),
        "theta_deg": list(cfg.tiny_thetas_deg),
        "ood_loss": ood,
        "gamma1": cfg.tiny_gamma1,
        "gamma2_list": list(cfg.tiny_gamma2),
    }
    ft_cfg = tc.with_overrides(
        {
            "steps": cfg.tiny_ft_steps,
            "seed": derive_seed(cfg.seed, "tiny-finetune"),
            "log_every": max(1, cfg.tiny_ft_steps // 5),
        }
    )
    rows = {k: [] for k in _ROWS}
    for g2 in cfg.tiny_gamma2:
        for k, v in _finetune_row(cfg, model, src, V, Vp, g2, before, S1, ft_cfg).items():
            rows[k].append(v)
    out.update(rows)
    return out
