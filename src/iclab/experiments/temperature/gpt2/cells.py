r"""Cells of ``temperature-gpt2-regression``: the error of a trained GPT-2 on in-context regression as a function
of the inference-time attention temperature, under one shift of arXiv:2511.01292 §4.2 (docs/papers/temperature.md
§5.2).

The models are trained once per run in :func:`shared`. A cell is one (shift, trained model): on ``n_test`` prompts
of the shifted distribution, every layer's attention logits are divided by τ (``iclab.hf.with_temperature``; τ = 1
is the trained model), or only the first layer's, and the normalised query error
:math:`\mathbb E(y_l-\hat y_l)^2/(\mathrm{Tr}(\mathbf A\mathbf B)+\sigma^2)` is read for each τ of the grid, with the
test-prior Bayes error (Eq. 9) as the ideal learner. Every cell's ``part`` is ``"error_vs_tau"``.

Every τ is scored on the same prompts, so the cell also returns paired statistics the claims judge
(docs/papers/temperature.md §5.2): the gain of a re-tuned τ over τ = 1, **cross-fitted** (τ picked on one half of
the prompts, the per-prompt error difference read on the other half, both ways — picking τ on the prompts it is
scored on would turn noise into a gain), the gain at the grid τ nearest the one-layer τ_opt, and a bootstrap over
prompts of the grid-best τ.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from iclab.budget import Need
from iclab.data import derive_seed, generator_for
from iclab.experiments.temperature.gpt2.config import TemperatureGPT2Config
from iclab.experiments.temperature.gpt2.shifts import shift_distribution, theory_tau, zero_predictor_error
from iclab.experiments.temperature.gpt2.training import build_model, train_models
from iclab.stats import bootstrap_argmin, mean_se

__all__ = [
    "cells",
    "run_cell",
    "shared",
    "errors_vs_tau",
    "squared_errors",
    "cross_fitted_gain",
    "tau_statistics",
    "budget",
]


def cells(cfg: TemperatureGPT2Config) -> list[dict]:
    """One cell per (shift, trained model)."""
    return [
        {"part": "error_vs_tau", "shift": s, "train_seed": t, "seed": cfg.seed}
        for s in cfg.shifts
        for t in range(cfg.train_seeds)
    ]


def shared(cfg: TemperatureGPT2Config) -> dict:
    """The trained models, once per run in the driver (:func:`~.training.train_models`)."""
    return train_models(cfg)


_N_BOOT = 200


@torch.no_grad()
def squared_errors(model, batch, taus, first_only: bool, n_layer: int) -> np.ndarray:
    """Per-prompt squared query errors ``(n_tau, B)``, τ applied to all layers or to the first only."""
    from iclab.hf import with_temperature

    out = []
    for tau in taus:
        t = [float(tau)] + [1.0] * (n_layer - 1) if first_only else float(tau)
        with with_temperature(model.backbone, tau=t):
            pred = model(batch)  # (B,)
        out.append(((pred - batch.target) ** 2).double().cpu().numpy())
    return np.stack(out)


def errors_vs_tau(model, batch, taus, first_only: bool, n_layer: int) -> tuple[list[float], list[float]]:
    """Mean squared query error and its standard error for each τ, applied to all layers or the first only."""
    err = squared_errors(model, batch, taus, first_only, n_layer)  # (n_tau, B)
    return [float(v) for v in err.mean(1)], [float(v) for v in err.std(1, ddof=1) / math.sqrt(err.shape[1])]


def cross_fitted_gain(err: np.ndarray, i1: int) -> tuple[float, float, list[int]]:
    """Gain of a re-tuned τ over τ = 1 (index ``i1``), cross-fitted over the two halves (even, odd) of the prompts.

    ``err`` is ``(n_tau, B)``. Returns the mean per-prompt difference err(τ = 1) − err(τ picked on the other half),
    its standard error, and the two picked indices."""
    halves = (np.arange(0, err.shape[1], 2), np.arange(1, err.shape[1], 2))
    picks = [int(np.argmin(err[:, h].mean(1))) for h in halves]
    diff = np.concatenate(
        [err[i1, halves[1]] - err[picks[0], halves[1]], err[i1, halves[0]] - err[picks[1], halves[0]]]
    )
    return (*mean_se(diff, drop_nonfinite=False)[:2], picks)


def tau_statistics(err: np.ndarray, taus, theory: float, seed: int, suffix: str) -> dict:
    """Means, SEs, best τ, cross-fitted and theory-τ gains (paired) and the bootstrapped best τ of ``err``."""
    taus = list(taus)
    i1, ib = taus.index(1.0), int(np.argmin(err.mean(1)))
    j = int(np.argmin(np.abs(np.log(taus) - math.log(theory))))
    gain, gain_se, picks = cross_fitted_gain(err, i1)
    th_gain, th_gain_se, _ = mean_se(err[i1] - err[j], drop_nonfinite=False)
    return {
        f"err_{suffix}": [float(v) for v in err.mean(1)],
        f"se_{suffix}": [float(v) for v in err.std(1, ddof=1) / math.sqrt(err.shape[1])],
        f"best_tau_{suffix}": taus[ib],
        f"best_err_{suffix}": float(err[ib].mean()),
        f"cf_gain_{suffix}": gain,
        f"cf_gain_{suffix}_se": gain_se,
        f"cf_taus_{suffix}": [taus[k] for k in picks],
        f"theory_gain_{suffix}": th_gain,
        f"theory_gain_{suffix}_se": th_gain_se,
        f"best_tau_{suffix}_boot": bootstrap_argmin(err, taus, _N_BOOT, seed).tolist(),  # resampled prompts
    }


def _bayes_error(batch, dist) -> float:
    """Error of the test-prior Bayes posterior mean (Eq. 9, ``iclab.estimators``): the ideal learner."""
    from iclab.estimators import bayes_for, mse

    b64 = batch.double().to("cpu")
    return float(mse(bayes_for(dist, center=False).predict(b64), b64))


def run_cell(cfg: TemperatureGPT2Config, cell: dict, shared: dict) -> dict:
    """Error vs τ (all layers and first layer only) for one (shift, trained model), normalised by Tr(AB) + σ²."""

    model = build_model(cfg)
    model.load_state_dict(shared[cell["train_seed"]]["state"])
    model.to(cfg.device).eval()
    dist = shift_distribution(cfg, cell["shift"])
    batch = dist.sample(cfg.n_test, generator_for(cell["seed"], "test", cell["shift"])).to(cfg.device)
    norm = zero_predictor_error(dist)
    th = theory_tau(cfg, cell["shift"])
    res = {
        "theory_tau": th,
        "bayes_err": _bayes_error(batch, dist) / norm,
        "train_loss": float(shared[cell["train_seed"]]["final_loss"]),
    }
    for first, suffix in ((False, "all"), (True, "first")):
        err = squared_errors(model, batch, cfg.taus, first, cfg.n_layer) / norm  # (n_tau, B), normalised
        res.update(
            tau_statistics(err, cfg.taus, th, derive_seed(cell["seed"], "bootstrap", cell["train_seed"]), suffix)
        )
    i1 = list(cfg.taus).index(1.0)
    res["err_tau1"], res["err_tau1_se"] = res["err_all"][i1], res["se_all"][i1]
    return res


def budget(cfg: TemperatureGPT2Config) -> list[Need]:
    r"""The largest cell and the training in :func:`shared` (fp32 GPT-2 over l = n + 1 tokens): parameters and Adam
    state, a training batch's activations and attention maps, the test prompts at evaluation; time ~ 6 · params
    · tokens per step at ~2e10 flop/s (matrix products)."""
    from iclab.config import check_device_available

    check_device_available("device", cfg.device)
    l = cfg.n + 1
    params = 12 * cfg.n_layer * cfg.n_embd**2 + l * cfg.n_embd
    acts = l * cfg.n_layer * (16 * cfg.n_embd + 3 * cfg.n_head * l)
    shape = {"n": cfg.n, "n_embd": cfg.n_embd, "n_layer": cfg.n_layer}
    return [
        Need({"n_embd": cfg.n_embd, "n_layer": cfg.n_layer}, memory=4.0 * 4 * params),
        Need(
            {"batch_size": cfg.batch_size, **shape},
            memory=4.0 * 2 * cfg.batch_size * acts,
            seconds=6.0 * cfg.train_seeds * cfg.steps * cfg.batch_size * l * params / 2e10,
        ),
        Need({"n_test": cfg.n_test, **shape}, memory=4.0 * cfg.n_test * (acts / 4 + l * cfg.d * 4)),
    ]
