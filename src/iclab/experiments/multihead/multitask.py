r"""Part ``multitask`` of the ``multihead`` experiment: N = 2 regression tasks on overlapping supports
(arXiv:2503.12734, Figs. 3.2–3.5; docs/papers/multihead.md §3.10). Records the per-head KQ diagonals
:math:`\omega^{(h)}\in\mathbb R^d` and OV entries :math:`\mu^{(h)}\in\mathbb R^N`, which heads serve which task
(superposition when 2 < H < 2N), the error of each task paired with oracle-step debiased GD on the task's own
support (and its mean over the tasks, paired per prompt), and what each head does for each task: the rise of the
task's error when the head is removed, paired on the same prompts (docs/papers/multihead.md §4.8)."""

from __future__ import annotations

import copy
from types import SimpleNamespace

import numpy as np
import torch

from iclab.data import MultiTaskRegression, derive_seed, generator_for
from iclab.estimators import debiased_gd
from iclab.experiments.multihead.training import paired_mean, train_model
from iclab.models import head_parameters

__all__ = ["multitask_cell", "multitask_data"]


def multitask_data(cfg) -> MultiTaskRegression:
    """The multi-task prompts of ``cfg``: d = ``mt_d``, L = ``mt_n``, the law ``mt_law`` (post or the authors' code)."""
    return MultiTaskRegression(cfg.mt_d, cfg.mt_n, cfg.sigma2**0.5, law=cfg.mt_law)


def _head_roles(om: np.ndarray, mu: np.ndarray, masks: np.ndarray) -> dict:
    """``om`` (H, d), ``mu`` (H, N), ``masks`` (N, d): effective steps, zero-sum per task and the heads serving
    each task (head h serves task n if |μ_n|·‖ω_{S_n}‖ ≥ 10 % of the largest such value)."""
    eff = np.einsum("hn,hd->nd", mu, om)  # (N, d) per-task, per-coordinate effective step Σ_h μ_n ω_i
    serve = np.abs(mu) * np.sqrt(np.einsum("hd,nd->hn", om**2, masks))  # (H, N)
    serves = serve >= 0.1 * serve.max()
    return {
        "omega_vec": om.tolist(),
        "mu_mat": mu.tolist(),
        "eff_step": eff.tolist(),
        "zero_sum_per_task": (np.abs(mu.sum(0)) / np.abs(mu).sum(0)).tolist(),
        "off_support_frac": float((np.abs(eff) * (1 - masks)).sum() / np.abs(eff).sum()),
        "serve": serve.tolist(),
        "heads_serving_both": int(serves.all(1).sum()),
        "heads_per_task": serves.sum(0).tolist(),
    }


def _oracle_dgd(data: MultiTaskRegression, b, tgt: torch.Tensor) -> torch.Tensor:
    """Per task: debiased GD on the task's own support with the least-squares (oracle) step; ``(B, N)``."""
    preds = []
    for t, s in enumerate(data.supports):
        xs = b.x[:, :, list(s)].double()  # (B, l, |S_t|)
        ys = b.y[:, :, t].double()  # (B, l)
        g = debiased_gd(SimpleNamespace(x=xs, y=ys), 1.0)  # (B,)
        preds.append(float((g * tgt[:, t]).sum() / (g * g).sum()) * g)
    return torch.stack(preds, 1)


def _ablations(model, b, tgt: torch.Tensor, e_full: torch.Tensor) -> dict:
    """For each head h and task n: the paired rise of the task's squared error when head h's read-out is zeroed,
    mean and standard error, each ``(H, N)``."""
    rise, rise_se = [], []
    for h in range(model.n_heads):
        m = copy.deepcopy(model)
        with torch.no_grad():
            m.o[h].zero_()
            e = (m(b.x, b.y).double() - tgt) ** 2  # (B, N)
        stats = [paired_mean(e[:, n] - e_full[:, n]) for n in range(e.shape[1])]
        rise.append([s[0] for s in stats])
        rise_se.append([s[1] for s in stats])
    return {"ablation_rise": rise, "ablation_rise_se": rise_se}


def multitask_cell(cfg, cell: dict) -> dict:
    data = multitask_data(cfg)
    model, row = train_model(cfg, cell, data, int(cell["H"]), "softmax", n_out=len(data.supports))
    p = head_parameters(model)
    row.update(_head_roles(p["omega_vec"], p["mu_mat"], data.masks.numpy()))
    b = data.sample(cfg.n_eval, generator_for(derive_seed(cfg.seed, "replicate", cell["seed"]), "mt-eval"))
    tgt = b.y[:, -1].double()  # (B, N)
    with torch.no_grad():
        e_full = (model(b.x, b.y).double() - tgt) ** 2  # (B, N)
    e_dgd = (_oracle_dgd(data, b, tgt) - tgt) ** 2  # (B, N)
    diffs = [paired_mean(e_full[:, n] - e_dgd[:, n]) for n in range(tgt.shape[1])]
    row["err_per_task"] = e_full.mean(0).tolist()
    row["err_dgd_per_task"] = e_dgd.mean(0).tolist()
    row["dgd_diff_per_task"] = [d[0] for d in diffs]
    row["dgd_diff_se_per_task"] = [d[1] for d in diffs]
    # the mean over tasks paired per prompt (both tasks are scored on the same prompts, so their differences covary)
    row["dgd_diff_mean"], row["dgd_diff_mean_se"] = paired_mean((e_full - e_dgd).mean(1))
    row.update(_ablations(model, b, tgt, e_full))
    row["mt_law"] = cfg.mt_law
    return row
