r"""Part ``aniso`` of the ``multihead`` experiment: a model trained on :math:`x\sim\mathcal N(0,\Sigma)` with
:math:`\Sigma_{ij}=\rho^{|i-j|}` learns KQ ≈ ±γΩ with Ω ≈ Σ⁻¹, i.e. preconditioned debiased GD
(arXiv:2503.12734, Fig. 3.1; docs/papers/multihead.md §3.9)."""

from __future__ import annotations

import numpy as np
import torch

from iclab.data import derive_seed, generator_for, toeplitz_cov
from iclab.estimators import bayes_posterior_mean, mse, predict_with, preconditioned_gd
from iclab.experiments.multihead.training import eval_prompts, paired_mean, train_model, train_prompts
from iclab.models import corr_with, kq_block, pattern_diagnostics

__all__ = ["anisotropic_cell"]


def _learned_kq(cfg, model, cov: np.ndarray, prec: np.ndarray) -> dict:
    """The sign-aligned KQ block and its correlation with Σ⁻¹, I and Σ."""
    blk = kq_block(model)
    return {
        "kq_block": blk.tolist(),
        "sigma_inv": prec.tolist(),
        "corr_sigma_inv": corr_with(blk, prec),
        "corr_identity": corr_with(blk, np.eye(cfg.d)),
        "corr_sigma": corr_with(blk, cov),
    }


def _test_errors(cfg, model, batch, prec: np.ndarray) -> dict:
    """Errors of the model, of oracle-step preconditioned (Ω = Σ⁻¹) and plain debiased GD, and of Bayes; and how
    far the model's predictions are from each GD predictor (each at its least-squares step), paired per prompt:
    ``closer_to_pgd`` = E(ŷ − ŷ_dgd)² − E(ŷ − ŷ_pgd)² (> 0: the model is preconditioned GD) ± its SE."""
    with torch.no_grad():
        y_m = model(batch.x, batch.y).double()  # (M,)
    tgt = batch.target.double()
    row = {"err_model": float(mse(y_m, batch))}  # batch.target is float64: E(ŷ − y_q)²
    dist = {}
    for name, om in (("pgd", torch.as_tensor(prec)), ("dgd", None)):
        g = preconditioned_gd(batch, 1.0, om).double()  # (M,)
        eta = float((g * tgt).sum() / (g * g).sum())  # oracle step
        row[f"err_{name}"] = float(mse(eta * g, batch))
        fit = float((g * y_m).sum() / (g * g).sum())  # the model's own step along this predictor
        dist[name] = (y_m - fit * g) ** 2  # (M,)
        row[f"dist_{name}"] = float(dist[name].mean() / (y_m**2).mean())
    row["closer_to_pgd"], row["closer_to_pgd_se"] = paired_mean(dist["dgd"] - dist["pgd"])
    bayes = bayes_posterior_mean(batch, None, 1.0 / cfg.d, cfg.sigma2**0.5, False)
    row["err_bayes"] = float(mse(predict_with(bayes, batch), batch))
    return row


def anisotropic_cell(cfg, cell: dict) -> dict:
    cov = toeplitz_cov(cfg.d, cfg.aniso_rho)
    prec = np.linalg.inv(cov)
    test = eval_prompts(cfg, cfg.n_train, cov)
    model, row = train_model(cfg, cell, train_prompts(cfg, cfg.n_train, cov), int(cell["H"]), "softmax")
    row.update(_learned_kq(cfg, model, cov, prec))
    row.update({f"diag_{k}": v for k, v in pattern_diagnostics(model).items()})
    b = test.sample(cfg.n_eval, generator_for(derive_seed(cfg.seed, "replicate", cell["seed"]), "aniso-eval"))
    row.update(_test_errors(cfg, model, b, prec))
    return row
