r"""Part ``multitask`` of the ``multihead`` experiment: N = 2 regression tasks on overlapping supports
(arXiv:2503.12734, Figs. 3.2–3.5; docs/papers/multihead.md §3.10). Records the per-head KQ diagonals
:math:`\omega^{(h)}\in\mathbb R^d` and OV entries :math:`\mu^{(h)}\in\mathbb R^N`, which heads serve which task
(superposition when 2 < H < 2N), and the error against oracle-step debiased GD on each task's own support."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import torch

from iclab.data import MultiTaskRegression, generator_for
from iclab.estimators import debiased_gd
from iclab.experiments.multihead.training import mse, train_model
from iclab.models import head_parameters

__all__ = ["multitask_cell"]


def _head_roles(om: np.ndarray, mu: np.ndarray, masks: np.ndarray) -> dict:
    """``om`` (H, d), ``mu`` (H, N), ``masks`` (N, d): effective steps, zero-sum per task and the heads serving
    each task (head h serves task n if |μ_n|·‖ω_{S_n}‖ ≥ 10 % of the largest such value)."""
    eff = np.einsum("hn,hd->nd", mu, om)  # (N, d) per-task, per-coordinate effective step Σ_h μ_n ω_i
    serve = np.abs(mu) * np.sqrt(np.einsum("hd,nd->hn", om**2, masks))  # (H, N)
    serves = serve >= 0.1 * serve.max()
    return {"omega_vec": om.tolist(), "mu_mat": mu.tolist(), "eff_step": eff.tolist(),
            "zero_sum_per_task": (np.abs(mu.sum(0)) / np.abs(mu).sum(0)).tolist(),
            "off_support_frac": float((np.abs(eff) * (1 - masks)).sum() / np.abs(eff).sum()),
            "heads_serving_both": int(serves.all(1).sum()),
            "heads_per_task": serves.sum(0).tolist()}


def _oracle_dgd_errors(data: MultiTaskRegression, b, tgt: torch.Tensor) -> list[float]:
    """Per task: debiased GD on the task's own support with the least-squares (oracle) step."""
    errs = []
    for t, s in enumerate(data.supports):
        xs = b.x[:, :, list(s)].double()  # (B, l, |S_t|)
        ys = b.y[:, :, t].double()  # (B, l)
        g = debiased_gd(SimpleNamespace(x=xs, y=ys), 1.0)
        eta = float((g * tgt[:, t]).sum() / (g * g).sum())
        errs.append(mse(eta * g, tgt[:, t]))
    return errs


def multitask_cell(cfg, cell: dict) -> dict:
    data = MultiTaskRegression(cfg.mt_d, cfg.n_train, cfg.sigma2**0.5)
    model, row = train_model(cfg, cell, data, int(cell["H"]), "softmax", n_out=len(data.supports))
    p = head_parameters(model)
    row.update(_head_roles(p["omega_vec"], p["mu_mat"], data.masks.numpy()))
    b = data.sample(cfg.n_eval, generator_for(cell["seed"], "mt-eval"))
    with torch.no_grad():
        pred = model(b.x, b.y).double()  # (B, N)
    tgt = b.y[:, -1].double()  # (B, N)
    row["err_per_task"] = ((pred - tgt) ** 2).mean(0).tolist()
    row["err_dgd_per_task"] = _oracle_dgd_errors(data, b, tgt)
    return row
