"""Tiny multi-layer transformers (1–3 layers, width 16; spec §5.1, §6) on the K = 2 feature prompts: OOD error
under rotation, then fine-tuning on U with overlaps (γ1, γ2) and the source forgetting F.

Model: :class:`iclab.models.FeatureTransformer` (tokens [x; y], query [x_q; 0], pre-LN blocks, MLP 4x, read-out
at the query). Trained with Adam on the Monte-Carlo loss c(ŷ − wᵀx_q)² (w sampled; the w-average of §4.1 has
no closed form here). Source and OOD losses are measured on fixed evaluation sets (the same prompts before
and after fine-tuning, so F has no sampling noise from the evaluation set). The merged-Q theory gives no
numbers for this model; it is compared by the sign of forgetting per feature (K = 2 rule −γ_kγ_m > γ_k²).
"""

from __future__ import annotations

import copy
import math

import torch

from iclab.data import FeaturePrompts, feature_basis, generator_for, overlap_features, rotated_features
from iclab.models import FeatureTransformer, prompt_mse_loss
from iclab.experiments._ood_synthetic import _change, _predicted_change
from iclab.train import TrainConfig, train

__all__ = ["tiny_cell", "layer1_logits"]


def _eval(model, data, n: int, seed, key) -> list[float]:
    b = data.sample(n, generator_for(seed, "tiny-eval", key))
    with torch.no_grad():
        yhat = model(b.x.float(), b.y.float(), b.xq.float()).double()
    per = 0.5 * (yhat - b.yq) ** 2
    return [float(per[b.qfeat == k].mean()) for k in range(data.K)]


def layer1_logits(model: FeatureTransformer, V: torch.Tensor) -> torch.Tensor:
    """Layer-1 α/β probe (spec §6): logits of head 0 between feature tokens [v; 0] after read-in and the first
    LayerNorm, S[m, k] = k(v_m)·q(v_k)/√d_h -> (K_token, K_query); α = diagonal, β = off-diagonal."""
    net = model.net
    z = torch.cat([V.T, torch.zeros(V.shape[1], 1, dtype=V.dtype)], 1).float()  # (K, d+1)
    with torch.no_grad():
        h = net.ln1[0](net.read_in(z))  # (K, D)
        attn = net.attn[0]
        q, k, _ = attn.qkv(h).split(h.shape[1], dim=-1)  # (K, D) each
        q, k = q[:, : attn.d_head], k[:, : attn.d_head]  # head 0
        return (k @ q.T / math.sqrt(attn.d_head)).double()  # (K, K)


def _float_loss(m, b):
    return prompt_mse_loss(m, b.__class__(b.x.float(), b.y.float(), b.xq.float(), b.yq.float(), b.w.float(),
                                          b.feat, b.qfeat), 0.5, 2)


def tiny_cell(cfg, cell) -> dict:
    """One depth: pre-train on V, OOD error vs θ, fine-tune on U(γ1, γ2) for each γ2, F and its sign."""
    torch.manual_seed(cfg.seed)
    layers, K, d = int(cell["layers"]), 2, cfg.tiny_d
    V, Vp = feature_basis(d, K, generator_for(cfg.seed, "tiny-basis"))
    src = FeaturePrompts(V, n_tokens=cfg.tiny_n_tokens)
    model = FeatureTransformer(d, d_model=cfg.tiny_width, n_layers=layers)
    tc = TrainConfig(steps=cfg.tiny_steps, batch_size=cfg.tiny_batch, lr=cfg.tiny_lr, optimizer="adam",
                     log_every=max(1, cfg.tiny_steps // 10), seed=cfg.seed)
    res = train(model, src, _float_loss, tc)
    before = _eval(model, src, cfg.tiny_eval, cfg.seed, "src")
    S1 = layer1_logits(model, V)
    off = ~torch.eye(K, dtype=torch.bool)
    ood = [sum(_eval(model, src.with_features(rotated_features(V, Vp, math.radians(th))), cfg.tiny_eval, cfg.seed,
                     f"ood{th}")) / K for th in cfg.tiny_thetas_deg]
    out = {"pretrain_seconds": res.seconds, "source_before": before, "alpha1": float(S1.diagonal().mean()),
           "beta1": float(S1[off].mean()), "theta_deg": list(cfg.tiny_thetas_deg),
           "ood_loss": ood, "gamma1": cfg.tiny_gamma1, "gamma2_list": list(cfg.tiny_gamma2)}
    rows = {k: [] for k in ("F", "src1_after", "src2_after", "ood_before", "ood_after", "forgot1", "forgot2",
                            "pred1", "pred2", "dalpha1_src", "dbeta1_src")}
    ft_cfg = tc.with_overrides({"steps": cfg.tiny_ft_steps, "seed": cfg.seed + 1,
                                "log_every": max(1, cfg.tiny_ft_steps // 5)})
    for g2 in cfg.tiny_gamma2:
        U = overlap_features(V, Vp, [cfg.tiny_gamma1, g2])
        tgt = src.with_features(U)
        m = copy.deepcopy(model)
        ood_before = sum(_eval(m, tgt, cfg.tiny_eval, cfg.seed, f"tgt{g2}")) / K
        train(m, tgt, _float_loss, ft_cfg)
        after = _eval(m, src, cfg.tiny_eval, cfg.seed, "src")
        dS = layer1_logits(m, V) - S1
        rows["dalpha1_src"].append(float(dS.diagonal().mean()))
        rows["dbeta1_src"].append(float(dS[off].mean()))
        pred = _predicted_change(cfg.tiny_gamma1, g2)
        rows["F"].append(sum(a - b for a, b in zip(after, before)) / K)
        rows["src1_after"].append(after[0])
        rows["src2_after"].append(after[1])
        rows["ood_before"].append(ood_before)
        rows["ood_after"].append(sum(_eval(m, tgt, cfg.tiny_eval, cfg.seed, f"tgt{g2}")) / K)
        rows["forgot1"].append(_change(after[0], before[0]))
        rows["forgot2"].append(_change(after[1], before[1]))
        rows["pred1"].append(int(pred[0]))
        rows["pred2"].append(int(pred[1]))
    out.update(rows)
    return out
