r"""Cells of ``temperature-gpt2-regression``: the error of a trained GPT-2 on in-context regression as a function
of the inference-time attention temperature, under one shift of arXiv:2511.01292 §4.2 (docs/papers/temperature.md
§5.2).

The models are trained once per run in :func:`shared`. A cell is one (shift, trained model): on ``n_test`` prompts
of the shifted distribution, every layer's attention logits are divided by τ (``iclab.hf.with_temperature``; τ = 1
is the trained model), or only the first layer's, and the normalised query error
:math:`\mathbb E(y_l-\hat y_l)^2/(\mathrm{Tr}(\mathbf A\mathbf B)+\sigma^2)` is read for each τ of the grid, with the
test-prior Bayes error (Eq. 9) as the ideal learner. Every cell's ``part`` is ``"error_vs_tau"``.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from iclab.experiments.temperature.gpt2.config import TemperatureGPT2Config
from iclab.experiments.temperature.gpt2.shifts import shift_distribution, theory_tau, zero_predictor_error
from iclab.experiments.temperature.gpt2.training import build_model, train_models

__all__ = ["cells", "run_cell", "shared", "errors_vs_tau"]


def cells(cfg: TemperatureGPT2Config) -> list[dict]:
    """One cell per (shift, trained model)."""
    return [{"part": "error_vs_tau", "shift": s, "train_seed": t, "seed": cfg.seed}
            for s in cfg.shifts for t in range(cfg.train_seeds)]


def shared(cfg: TemperatureGPT2Config) -> dict:
    """The trained models, once per run in the driver (:func:`~.training.train_models`)."""
    return train_models(cfg)


@torch.no_grad()
def errors_vs_tau(model, batch, taus, first_only: bool, n_layer: int) -> tuple[list[float], list[float]]:
    """Mean squared query error and its standard error for each τ, applied to all layers or the first only."""
    from iclab.hf import with_temperature

    means, ses = [], []
    for tau in taus:
        t = [float(tau)] + [1.0] * (n_layer - 1) if first_only else float(tau)
        with with_temperature(model.backbone, tau=t):
            pred = model(batch)  # (B,)
        err = (pred - batch.target) ** 2  # (B,)
        means.append(float(err.mean()))
        ses.append(float(err.std() / math.sqrt(len(err))))
    return means, ses


def _bayes_error(batch, dist) -> float:
    """Error of the test-prior Bayes posterior mean (Eq. 9, ``iclab.estimators``): the ideal learner."""
    from iclab.estimators import bayes_for, mse

    b64 = type(batch)(batch.x.double().cpu(), batch.y.double().cpu(), batch.w.double().cpu())
    return float(mse(bayes_for(dist, center=False).predict(b64), b64))


def run_cell(cfg: TemperatureGPT2Config, cell: dict, shared: dict) -> dict:
    """Error vs τ (all layers and first layer only) for one (shift, trained model), normalised by Tr(AB) + σ²."""
    from iclab.data import generator_for

    model = build_model(cfg)
    model.load_state_dict(shared[cell["train_seed"]]["state"])
    model.to(cfg.device).eval()
    dist = shift_distribution(cfg, cell["shift"])
    batch = dist.sample(cfg.n_test, generator_for(cell["seed"], "test", cell["shift"])).to(cfg.device)
    norm = zero_predictor_error(dist)
    err_all, se_all = errors_vs_tau(model, batch, cfg.taus, False, cfg.n_layer)
    err_first, se_first = errors_vs_tau(model, batch, cfg.taus, True, cfg.n_layer)
    bayes = _bayes_error(batch, dist)
    taus = list(cfg.taus)
    i1, ib = taus.index(1.0), int(np.argmin(err_all))
    return {
        "err_all": [e / norm for e in err_all], "se_all": [e / norm for e in se_all],
        "err_first": [e / norm for e in err_first], "se_first": [e / norm for e in se_first],
        "err_tau1": err_all[i1] / norm, "best_tau_all": taus[ib], "best_err_all": err_all[ib] / norm,
        "best_tau_first": taus[int(np.argmin(err_first))], "best_err_first": min(err_first) / norm,
        "theory_tau": theory_tau(cfg, cell["shift"]), "bayes_err": bayes / norm,
        "train_loss": float(shared[cell["train_seed"]]["final_loss"]),
    }
