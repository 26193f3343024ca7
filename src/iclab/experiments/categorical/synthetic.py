"""Cells of the ``categorical`` experiment on synthetic prompts (Wang et al., arXiv:2405.17248: the training-set-size
and number-of-blocks figures; docs/papers/categorical.md §5.1, §5.2). Train the GD model or the trained transformer
on a fixed pool of L contexts, keep the checkpoint with the best validation NLL, and report test top-1 accuracy
and NLL next to the Bayes classifier that knows the generating probabilities."""

from __future__ import annotations

import torch

from iclab.data import CategoricalICL, generator_for
from iclab.experiments.categorical.training import evaluate, fit_classifier
from iclab.models import FunctionalGDModel, TrainedCategoricalTransformer

__all__ = ["synthetic_data", "synthetic_cell", "gd_likeness"]


def synthetic_data(cfg) -> CategoricalICL:
    """The synthetic prompt distribution of ``cfg``: uniform covariates (docs/papers/categorical.md §5.1)."""
    return CategoricalICL(n_classes=cfg.n_classes, d=cfg.d, d_embed=cfg.d_embed, n_context=cfg.n_context,
                          scale=cfg.latent_scale)


def _make_model(cfg, kind: str, blocks: int, kernel: str, seed: int):
    g = torch.Generator().manual_seed(seed)
    if kind == "gd":
        return FunctionalGDModel(cfg.d, cfg.n_classes, cfg.d_embed, blocks, kernel, generator=g)
    return TrainedCategoricalTransformer(cfg.d, cfg.n_classes, cfg.d_embed, blocks, kernel, generator=g)


def synthetic_cell(cfg, cell: dict) -> dict:
    """One (model, kernel, blocks, L, seed) point of the L sweep or the blocks sweep (docs/papers/categorical.md
    §5.2)."""
    seed = cell["seed"]
    data = synthetic_data(cfg)
    val = data.sample(cfg.n_val, generator_for(seed, "val"))
    test = data.sample(cfg.n_test, generator_for(seed, "test"))
    model = _make_model(cfg, cell["model"], cell["blocks"], cell["kernel"], seed)
    lr = cfg.lr_gd if cell["model"] == "gd" else cfg.lr_tf
    opt = "adam" if cell["model"] == "gd" else "adamw"
    model, info = fit_classifier(model, data, val, steps=cfg.steps, batch_size=cfg.batch_size, lr=lr, optimizer=opt,
                                 seed=seed, pool_size=cell["L"], eval_every=cfg.eval_every,
                                 grad_clip=cfg.grad_clip, device=cfg.device)
    r = evaluate(model, test.to(cfg.device))
    p = test.probs_query.double()  # (M, 1, C)
    bayes_acc = float((p.argmax(-1) == test.y_query).double().mean())
    bayes_nll = float(-p.gather(-1, test.y_query[..., None]).clamp_min(1e-300).log().mean())
    out = {"acc": r["acc"], "nll": r["nll"], "bayes_acc": bayes_acc, "bayes_nll": bayes_nll,
           "n_params": sum(q.numel() for q in model.parameters()), "train_seconds": info["seconds"],
           "best_val_nll": info["best_val_nll"], "val_curve": info["val_curve"]}
    if cell["model"] == "tf":
        out |= gd_likeness(model, cfg.d, cfg.d_embed)
    return out


@torch.no_grad()
def gd_likeness(tf, d: int, dp: int) -> dict[str, float]:
    """How close block 0 of a trained transformer is to the GD construction (the authors' empirical check of
    Theorems 1–2, docs/papers/categorical.md §4.6): RMS of the diagonal over RMS of the off-diagonal of the
    head-1 x-block bilinear form ``Q_x K_x^T`` (``qk_diag_ratio``) and of the value-projection map from the label
    slot into the f slot (``vp_wf_diag_ratio``); about 1 for random matrices, large for a scaled identity /
    diagonal map."""
    p = tf.blocks[0]
    qk = p["q1"][:d] @ p["k1"][:d].t()  # (d, d)
    vp = (p["v1"] @ p["p1"])[d:d + dp, d + 2 * dp:]  # (d', d') label slot -> f slot

    def ratio(M):
        eye = torch.eye(M.shape[0], dtype=torch.bool)
        return float(M[eye].pow(2).mean().sqrt() / M[~eye].pow(2).mean().sqrt().clamp_min(1e-30))

    return {"qk_diag_ratio": ratio(qk), "vp_wf_diag_ratio": ratio(vp)}
