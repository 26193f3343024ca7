"""Cells of the ``categorical`` experiment on synthetic prompts (categorical-ICL spec §3.1, §5.3) and the
stationarity check (spec §4.2): train the GD model or the trained transformer on a fixed pool of L contexts
with the shared trainer, keep the checkpoint with the best validation NLL (early stopping), report test
top-1 accuracy and NLL next to the Bayes classifier that knows the generating probabilities."""

from __future__ import annotations

import copy
import math

import torch

__all__ = ["fit_classifier", "evaluate", "synthetic_cell", "stationarity_cell", "synthetic_data", "gd_likeness"]


def synthetic_data(cfg, covariate: str = "uniform"):
    from iclab.data import CategoricalICL

    return CategoricalICL(n_classes=cfg.n_classes, d=cfg.d, d_embed=cfg.d_embed, n_context=cfg.n_context,
                          scale=cfg.latent_scale, covariate=covariate)


@torch.no_grad()
def evaluate(model, batch, chunk: int = 512) -> dict[str, float]:
    """Top-1 accuracy and mean NLL of the query labels over ``batch`` (evaluated in chunks)."""
    model.eval()
    correct, nll, n = 0.0, 0.0, 0
    for s in range(0, batch.batch_size, chunk):
        b = batch.index(slice(s, s + chunk))
        logits = model(b).double()  # (b, Q, C)
        lp = torch.log_softmax(logits, -1)
        nll += float(-lp.gather(-1, b.y_query[..., None]).sum())
        correct += float((logits.argmax(-1) == b.y_query).sum())
        n += b.y_query.numel()
    return {"acc": correct / n, "nll": nll / n}


def fit_classifier(model, data, val_batch, *, steps: int, batch_size: int, lr: float, optimizer: str, seed: int,
                   pool_size: int | None, eval_every: int, grad_clip: float | None = None, device: str = "cpu",
                   schedule: str = "constant"):
    """Train ``model`` with :func:`iclab.train.train` on the categorical NLL; early stopping = restore the
    state with the lowest validation NLL seen at the logged steps. Returns ``(model, info)``."""
    from iclab.models import categorical_loss
    from iclab.train import TrainConfig, train

    best = {"nll": math.inf, "state": copy.deepcopy(model.state_dict()), "step": 0}
    calls = {"n": 0}

    def eval_fn(m):
        calls["n"] += 1
        r = evaluate(m, val_batch.to(device))
        if r["nll"] < best["nll"]:
            best.update(nll=r["nll"], state=copy.deepcopy(m.state_dict()), step=calls["n"])
        return r

    tc = TrainConfig(steps=steps, batch_size=batch_size, lr=lr, optimizer=optimizer, seed=seed, pool_size=pool_size,
                     log_every=eval_every, grad_clip=grad_clip, device=device, schedule=schedule)
    res = train(model, data, categorical_loss, tc, eval_fn=eval_fn)
    model.load_state_dict(best["state"])
    return model, {"seconds": res.seconds, "best_val_nll": best["nll"], "final_train_loss": res.final_loss,
                   "val_curve": [h.get("eval/nll", float("nan")) for h in res.history]}


def _make_model(cfg, kind: str, blocks: int, kernel: str, seed: int):
    from iclab.models import FunctionalGDModel, TrainedCategoricalTransformer

    g = torch.Generator().manual_seed(seed)
    if kind == "gd":
        return FunctionalGDModel(cfg.d, cfg.n_classes, cfg.d_embed, blocks, kernel, generator=g)
    return TrainedCategoricalTransformer(cfg.d, cfg.n_classes, cfg.d_embed, blocks, kernel, generator=g)


def synthetic_cell(cfg, cell: dict) -> dict:
    """One (model, kernel, blocks, L, seed) point of the L sweep / blocks sweep (spec §5.3)."""
    from iclab.data import generator_for

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
    """How close block 0 of a trained transformer is to the GD construction (spec §4.2, empirical check):
    RMS of the diagonal over RMS of the off-diagonal of the head-1 x-block bilinear form ``Q_x K_x^T``
    (``qk_diag_ratio``) and of the value-projection map from the label slot into the f slot
    (``vp_wf_diag_ratio``); about 1 for random matrices, large for a scaled identity / diagonal map."""
    p = tf.blocks[0]
    qk = p["q1"][:d] @ p["k1"][:d].t()  # (d, d)
    vp = (p["v1"] @ p["p1"])[d:d + dp, d + 2 * dp:]  # (d', d') label slot -> f slot

    def ratio(M):
        eye = torch.eye(M.shape[0], dtype=torch.bool)
        return float(M[eye].pow(2).mean().sqrt() / M[~eye].pow(2).mean().sqrt().clamp_min(1e-30))

    return {"qk_diag_ratio": ratio(qk), "vp_wf_diag_ratio": ratio(vp)}


def stationarity_cell(cfg, cell: dict) -> dict:
    """Train the GD model (float64, small rotation-invariant problem), then measure the gradient of the ICL
    loss w.r.t. every parameter of the full transformer at that GD configuration (spec §4.2)."""
    from iclab.data import CategoricalICL, generator_for
    from iclab.models import FunctionalGDModel
    from iclab.theory.categorical import stationarity_check

    seed = cell["seed"]
    data = CategoricalICL(n_classes=7, d=5, d_embed=3, n_context=15, n_clusters=3, scale=3.0,
                          covariate=cell["covariate"])
    gd = FunctionalGDModel(5, 7, 3, n_blocks=cell["blocks"], kernel=cell["kernel"], dtype=torch.float64,
                           generator=torch.Generator().manual_seed(seed))
    before = stationarity_check(data, gd, n_prompts=cfg.stationarity_prompts, n_chunks=16, seed=seed)
    val = data.sample(512, generator_for(seed, "val"), dtype=torch.float64)

    class _Data64:  # the trainer samples float32 by default; this model is float64
        def sample(self, b, g):
            return data.sample(b, g, dtype=torch.float64)

    fit_classifier(gd, _Data64(), val, steps=cfg.stationarity_steps, batch_size=256, lr=0.05, optimizer="adam",
                   seed=seed, pool_size=None, eval_every=max(1, cfg.stationarity_steps // 5), schedule="cosine")
    after = stationarity_check(data, gd, n_prompts=cfg.stationarity_prompts, n_chunks=16, seed=seed + 1)
    out = {}
    for tag, r in (("init", before), ("trained", after)):
        for grp, v in r.items():
            out[f"{tag}_{grp}_z"] = v["z"]
            out[f"{tag}_{grp}_rms"] = v["rms_mean"]
    return out
