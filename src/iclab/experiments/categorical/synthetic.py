"""Cells of the ``categorical`` experiment on synthetic prompts (Wang et al., arXiv:2405.17248: the training-set-size
and number-of-blocks figures; docs/papers/categorical.md §5.1, §5.2). Train the GD model or the trained transformer
on a fixed pool of L contexts drawn with one draw of the class embeddings W_e (``embedding_seed``), keep the
checkpoint with the best validation NLL, and report test top-1 accuracy and NLL next to the Bayes classifier that
knows the generating probabilities; for the GD model also its distance to K steps of functional GD with the same
parameters (§4.8)."""

from __future__ import annotations

import torch

from iclab.data import CategoricalICL, derive_seed, generator_for
from iclab.experiments.categorical.training import evaluate, fit_classifier, val_plateau
from iclab.models import FunctionalGDModel, TrainedCategoricalTransformer
from iclab.theory.categorical import functional_gd

__all__ = ["synthetic_data", "synthetic_cell", "gd_likeness", "functional_gd_gap"]


def synthetic_data(cfg, embedding_seed: int = 42) -> CategoricalICL:
    """The synthetic prompt distribution of ``cfg`` with the data embedding W_e drawn from ``embedding_seed``:
    uniform covariates (docs/papers/categorical.md §5.1)."""
    return CategoricalICL(
        n_classes=cfg.n_classes,
        d=cfg.d,
        d_embed=cfg.d_embed,
        n_context=cfg.n_context,
        scale=cfg.latent_scale,
        embedding_seed=embedding_seed,
    )


def _make_model(cfg, kind: str, blocks: int, kernel: str, seed: int, erase: str):
    g = generator_for(seed, "init")
    if kind == "gd":
        return FunctionalGDModel(cfg.d, cfg.n_classes, cfg.d_embed, blocks, kernel, generator=g, erase=erase)
    return TrainedCategoricalTransformer(cfg.d, cfg.n_classes, cfg.d_embed, blocks, kernel, generator=g, erase=erase)


def _bayes(test) -> dict[str, float]:
    """Accuracy and NLL of the classifier that knows the generating probabilities (docs/papers/categorical.md §4.7)."""
    p = test.probs_query.double()  # (M, 1, C)
    return {
        "bayes_acc": float((p.argmax(-1) == test.y_query).double().mean()),
        "bayes_nll": float(-p.gather(-1, test.y_query[..., None]).clamp_min(1e-300).log().mean()),
    }


@torch.no_grad()
def functional_gd_gap(model: FunctionalGDModel, test, chunk: int = 256) -> dict[str, float]:
    """The K-block GD model against K steps of :func:`iclab.theory.categorical.functional_gd` with the same
    α, kernel scale and W_e, on the test prompts, in float64 (docs/papers/categorical.md §4.8): the mean and
    standard error over prompts of the total-variation distance between the two predicted class distributions
    (``fgd_tv``, ``fgd_tv_se``), the mean query NLL of functional GD (``fgd_nll``), the mean and standard error of
    the paired NLL difference model − functional GD (``fgd_gap``, ``fgd_gap_se``) and the largest logit difference
    (``fgd_max_logit_diff``)."""
    m = FunctionalGDModel(
        model.d,
        model.n_classes,
        model.d_embed,
        model.n_blocks,
        model.kernel,
        model.erase_lambda,
        dtype=torch.float64,
        erase=model.erase,
    )
    m.load_state_dict({k: v.double() for k, v in model.state_dict().items()})
    W, alpha, s = m.W_e.numpy(), m.alpha.numpy(), float(m.scale)
    tv, gap, nll_fgd, max_diff = [], [], [], 0.0
    for lo in range(0, test.batch_size, chunk):
        b = test.index(slice(lo, lo + chunk)).double()
        logits = m(b)  # (b, Q, C)
        _, fq = functional_gd(b.x.numpy(), b.y.numpy(), b.x_query.numpy(), W, alpha, model.kernel, s)
        logits_gd = torch.from_numpy(fq[-1] @ W)  # (b, Q, C)
        lp, lp_gd = torch.log_softmax(logits, -1), torch.log_softmax(logits_gd, -1)  # (b, Q, C)
        y = b.y_query[..., None]
        n_m, n_g = -lp.gather(-1, y).squeeze(-1), -lp_gd.gather(-1, y).squeeze(-1)  # (b, Q)
        tv.append(0.5 * (lp.exp() - lp_gd.exp()).abs().sum(-1).flatten())
        gap.append((n_m - n_g).flatten())
        nll_fgd.append(n_g.flatten())
        max_diff = max(max_diff, float((logits - logits_gd).abs().max()))
    tv_all, gap_all = torch.cat(tv), torch.cat(gap)
    n = len(gap_all)
    return {
        "fgd_tv": float(tv_all.mean()),
        "fgd_tv_se": float(tv_all.std() / n**0.5),
        "fgd_nll": float(torch.cat(nll_fgd).mean()),
        "fgd_gap": float(gap_all.mean()),
        "fgd_gap_se": float(gap_all.std() / n**0.5),
        "fgd_max_logit_diff": max_diff,
    }


def synthetic_cell(cfg, cell: dict) -> dict:
    """One (model, kernel, blocks, erase, L, embedding_seed, seed) point of the L sweep or the blocks sweep
    (docs/papers/categorical.md §5.2)."""
    seed, erase = derive_seed(cfg.seed, "replicate", cell["seed"]), cell.get("erase", "distance")
    data = synthetic_data(cfg, cell.get("embedding_seed", 42))
    val = data.sample(cfg.n_val, generator_for(seed, "val"))
    test = data.sample(cfg.n_test, generator_for(seed, "test"))
    model = _make_model(cfg, cell["model"], cell["blocks"], cell["kernel"], seed, erase)
    lr = cfg.lr_gd if cell["model"] == "gd" else cfg.lr_tf
    opt = "adam" if cell["model"] == "gd" else "adamw"
    model, info = fit_classifier(
        model,
        data,
        val,
        steps=cfg.steps,
        batch_size=cfg.batch_size,
        lr=lr,
        optimizer=opt,
        seed=seed,
        pool_size=cell["L"],
        eval_every=cfg.eval_every,
        grad_clip=cfg.grad_clip,
        device=cfg.device,
        stop_plateau=cfg.stop_plateau,
    )
    r = evaluate(model, test.to(cfg.device))
    out = {
        "acc": r["acc"],
        "nll": r["nll"],
        **_bayes(test),
        "n_params": sum(q.numel() for q in model.parameters()),
        "train_seconds": info["seconds"],
        "steps_done": info["steps"],
        "best_val_nll": info["best_val_nll"],
        "val_plateau": val_plateau(info["val_curve"]),
        "val_curve": info["val_curve"],
    }
    if cell["model"] == "tf":
        out |= gd_likeness(model, cfg.d, cfg.d_embed)
    else:
        out |= functional_gd_gap(model.cpu(), test)
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
    vp = (p["v1"] @ p["p1"])[d : d + dp, d + 2 * dp :]  # (d', d') label slot -> f slot

    def ratio(M):
        eye = torch.eye(M.shape[0], dtype=torch.bool)
        return float(M[eye].pow(2).mean().sqrt() / M[~eye].pow(2).mean().sqrt().clamp_min(1e-30))

    return {"qk_diag_ratio": ratio(qk), "vp_wf_diag_ratio": ratio(vp)}
