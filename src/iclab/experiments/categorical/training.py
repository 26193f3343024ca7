"""Training and evaluation of the categorical-ICL classifiers of the ``categorical`` experiment (Wang et al.,
arXiv:2405.17248; settings in docs/papers/categorical.md §5.2): the shared trainer on the query NLL, early stopping
that keeps the state with the best validation NLL, an optional stop once the validation NLL has plateaued, and
top-1 accuracy / NLL on a test batch."""

from __future__ import annotations

import copy
import math

import numpy as np
import torch

from iclab.models import categorical_loss
from iclab.train import TrainConfig, train

__all__ = ["evaluate", "fit_classifier", "val_plateau", "PLATEAU_MIN_EVALS"]

PLATEAU_MIN_EVALS = 8  # validations before a plateau may stop training


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


def val_plateau(val_curve: list[float]) -> float:
    """How much the validation NLL still fell at the end of training: (mean over the third quarter of the logged
    values − mean over the last quarter) / mean over the last quarter (docs/papers/categorical.md §5.2); about 0
    once it has plateaued, negative when it rises again (overfitting)."""
    v = np.asarray(val_curve, dtype=float)
    v = v[np.isfinite(v)]
    n = v.size
    if n < 4:
        return float("nan")
    q3, q4 = v[n // 2 : (3 * n) // 4], v[(3 * n) // 4 :]
    return float((q3.mean() - q4.mean()) / q4.mean())


def fit_classifier(
    model,
    data,
    val_batch,
    *,
    steps: int,
    batch_size: int,
    lr: float,
    optimizer: str,
    seed: int,
    pool_size: int | None,
    eval_every: int,
    grad_clip: float | None = None,
    device: str = "cpu",
    schedule: str = "constant",
    stop_plateau: float = 0.0,
):
    """Train ``model`` with :func:`iclab.train.train` on the categorical NLL; early stopping = restore the
    state with the lowest validation NLL seen at the logged steps. With ``stop_plateau`` > 0 training ends once
    :func:`val_plateau` of the validation curve is at most ``stop_plateau`` (after :data:`PLATEAU_MIN_EVALS`
    validations). Returns ``(model, info)``."""
    best = {"nll": math.inf, "state": copy.deepcopy(model.state_dict())}
    curve: list[float] = []

    def eval_fn(m):
        r = evaluate(m, val_batch.to(device))
        curve.append(r["nll"])
        if r["nll"] < best["nll"]:
            best.update(nll=r["nll"], state=copy.deepcopy(m.state_dict()))
        return r

    def plateaued(done, groups) -> bool:
        return stop_plateau > 0 and len(curve) >= PLATEAU_MIN_EVALS and val_plateau(curve) <= stop_plateau

    tc = TrainConfig(
        steps=steps,
        batch_size=batch_size,
        lr=lr,
        optimizer=optimizer,
        seed=seed,
        pool_size=pool_size,
        log_every=eval_every,
        grad_clip=grad_clip,
        device=device,
        schedule=schedule,
    )
    res = train(model, data, categorical_loss, tc, eval_fn=eval_fn, stop_rule=plateaued)
    model.load_state_dict(best["state"])
    return model, {
        "seconds": res.seconds,
        "best_val_nll": best["nll"],
        "final_train_loss": res.final_loss,
        "steps": res.steps,
        "val_curve": [h.get("eval/nll", float("nan")) for h in res.history],
    }
