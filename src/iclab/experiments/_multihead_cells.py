"""Cells of the ``multihead`` experiment: each trains one (setting, H, attention, seed) model with the one
trainer and evaluates it, or computes the analytic baselines (spec §5.2) by Monte Carlo.

Kinds: ``baseline`` (estimators of spec §5.2/§5.4 vs prompt length), ``iso`` (isotropic training at
``n_train``: dynamics, patterns, error vs length), ``lengthgen`` (trained at ``lengthgen_train``, tested up to
the longest eval length), ``aniso`` (Toeplitz Σ, spec §3.3/§4.6), ``multitask`` (spec §3.4/§4.7).
Errors are E(ŷ − y_q)² against the noisy query label (they include σ², spec §6).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import torch

from iclab.data import derive_seed, generator_for
from iclab.estimators import bayes_posterior_mean, debiased_gd, kernel_regression, one_step_gd, predict_with
from iclab.estimators import preconditioned_gd
from iclab.models import MultiHeadRegressionAttention, regression_mse
from iclab.models._multihead_diagnostics import (corr_with, distance_to_debiased_gd, head_parameters, kq_block,
                                                 pattern_diagnostics)
from iclab.theory import multihead as th
from iclab.train import TrainConfig, train

__all__ = ["run_cell", "PAPER_OMEGA", "PAPER_MU", "PAPER_ETA"]

PAPER_OMEGA, PAPER_MU = 0.13, 3.45  # spec §5.1/§5.2: the authors' analytic two-head estimator
PAPER_ETA = 2 * PAPER_OMEGA * PAPER_MU
_PATTERN_KEYS = ("kq_diag_mass", "ov_last_mass", "ov_zero_sum", "omega", "mu")


class _Float64:
    """Draw float32 normals (≈5× faster than float64 on these CPUs), then compute in float64."""

    def __init__(self, dist):
        self.dist = dist

    def sample(self, batch: int, generator=None):
        b = self.dist.sample(batch, generator)
        return type(b)(b.x.double(), b.y.double(), b.w.double())


def _iso(cfg, n: int, cov_x=None):
    """Evaluation / Monte Carlo prompts of spec §3.1 (the law of ``GaussianRegression(d, n, cov_x,
    cov_w=1/d, sigma)``), float64."""
    return _Float64(_train_data(cfg, n, cov_x))


def _train_data(cfg, n: int, cov_x=None):
    """Training prompts: the law of :func:`_iso` (x ~ N(0, Σ), β ~ N(0, I/d), noise σ²), drawn in float32 (fast)."""
    from iclab.data import GaussianRegression

    return GaussianRegression(cfg.d, n, cov_x=cov_x, cov_w=1.0 / cfg.d, sigma=cfg.sigma2**0.5, dtype=torch.float32)


def _mse(pred: torch.Tensor, target: torch.Tensor) -> float:
    return float(((pred.double() - target.double()) ** 2).mean())


def _train(cfg, cell: dict, data, H: int, attention: str, n_out: int = 1, linear_length: int | None = None):
    seed = int(cell["seed"])
    torch.manual_seed(derive_seed(seed, "init", cell["kind"], H, attention))
    model = MultiHeadRegressionAttention(data.d, H, attention, n_out=n_out, linear_length=linear_length)
    monitor = data.sample(cfg.n_monitor, generator_for(seed, "monitor", cell["kind"]))
    probes = {} if n_out > 1 else {"p": lambda m: {k: v for k, v in pattern_diagnostics(m).items()
                                                   if k in _PATTERN_KEYS}}
    tcfg = TrainConfig(steps=cfg.steps, batch_size=cfg.batch_size, lr=cfg.lr, optimizer="adam", seed=seed,
                       log_every=cfg.log_every, device=cfg.device)
    res = train(model, data, regression_mse, tcfg, probes=probes,
                eval_fn=lambda m: {"mse": float(regression_mse(m, monitor.to(cfg.device)))})
    model = res.model.cpu()
    hist = res.history
    curves = {"curve_step": [r["step"] for r in hist], "curve_loss": [r["eval/mse"] for r in hist],
              "seconds": res.seconds, "steps_per_s": res.steps / max(res.seconds, 1e-9)}
    if probes:
        for k in _PATTERN_KEYS:
            curves[f"curve_{k}"] = [r[f"p/{k}"] for r in hist]
    return model, curves


def _errors_vs_length(cfg, model, make_data, seed: int, lengths) -> list[float]:
    out = []
    for n in lengths:
        b = make_data(n).sample(cfg.n_eval, generator_for(seed, "eval", n))
        with torch.no_grad():
            out.append(_mse(model(b.x, b.y), b.y[:, -1]))
    return out


def _cell_baseline(cfg, cell) -> dict:
    """Spec §5.2 estimators (and Theorem 1 η*) by Monte Carlo at every length; closed forms beside them."""
    lengths = sorted(set(cfg.eval_lengths) | set(cfg.paper_lengths))
    eta = th.eta_star(cfg.d, cfg.n_train, cfg.sigma2)
    nw = th.single_head_nw(cfg.d, cfg.n_train, cfg.sigma2)
    mg = th.mu_gamma(0.05, cfg.d, cfg.n_train, cfg.sigma2)
    est = {
        "dgd_star": lambda b: debiased_gd(b, eta), "gd_star": lambda b: one_step_gd(b, eta),
        "dgd_paper": lambda b: debiased_gd(b, PAPER_ETA), "gd_paper": lambda b: one_step_gd(b, PAPER_ETA),
        "mh_paper": lambda b: kernel_regression(b, [PAPER_OMEGA, -PAPER_OMEGA], [PAPER_MU, -PAPER_MU]),
        "mh_gamma005": lambda b: kernel_regression(b, [0.05, -0.05], [mg, -mg]),
        "nw": lambda b: kernel_regression(b, [nw["omega"]], [nw["mu"]]),
        "bayes": lambda b: predict_with(bayes_posterior_mean(b, None, 1.0 / cfg.d, cfg.sigma2**0.5, False), b),
    }
    row: dict[str, Any] = {"lengths": lengths, "eta_star": eta}
    for key in est:
        row[f"mc_{key}"], row[f"se_{key}"] = [], []
    for n in lengths:
        b = _iso(cfg, n).sample(cfg.n_mc, generator_for(cell["seed"], "baseline", n))
        for key, f in est.items():
            err = (f(b).double() - b.target.double()) ** 2  # (M,)
            row[f"mc_{key}"].append(float(err.mean()))
            row[f"se_{key}"].append(float(err.std() / err.numel() ** 0.5))
    row["th_dgd_star"] = [float(th.gd_risk(eta, cfg.d, n, cfg.sigma2)) for n in lengths]
    row["th_gd_star"] = [float(th.gd_risk(eta, cfg.d, n, cfg.sigma2, False)) for n in lengths]
    row["th_dgd_paper"] = [float(th.gd_risk(PAPER_ETA, cfg.d, n, cfg.sigma2)) for n in lengths]
    row["th_gd_paper"] = [float(th.gd_risk(PAPER_ETA, cfg.d, n, cfg.sigma2, False)) for n in lengths]
    row["th_bayes"] = [th.bayes_risk(cfg.d, n, cfg.sigma2, n_mc=2000, seed=n)[0] for n in lengths]
    # length generalisation references (trained at lengthgen_train): DGD with its η*, and linear attention
    # = vanilla GD whose step grows like n / n_train (1/L frozen at training, spec §2.5)
    e20 = th.eta_star(cfg.d, cfg.lengthgen_train, cfg.sigma2)
    row["th_dgd_lg"] = [float(th.gd_risk(e20, cfg.d, n, cfg.sigma2)) for n in lengths]
    row["th_linear_lg"] = [float(th.gd_risk(e20 * n / cfg.lengthgen_train, cfg.d, n, cfg.sigma2, False))
                           for n in lengths]
    return row


def _cell_iso(cfg, cell, n_train: int) -> dict:
    H, att = int(cell["H"]), cell["attention"]
    data = _train_data(cfg, n_train)
    model, row = _train(cfg, cell, data, H, att, linear_length=n_train if att == "linear" else None)
    row["lengths"] = list(cfg.eval_lengths)
    row["err"] = _errors_vs_length(cfg, model, lambda n: _iso(cfg, n), int(cell["seed"]), cfg.eval_lengths)
    diag = pattern_diagnostics(model)
    row.update({f"diag_{k}": v for k, v in diag.items()})
    held = _iso(cfg, n_train).sample(cfg.n_eval, generator_for(cell["seed"], "held-out"))
    row.update({f"dgd_{k}": v for k, v in distance_to_debiased_gd(model, held).items()})
    return row


def _cell_aniso(cfg, cell) -> dict:
    from iclab.experiments._multihead_data import toeplitz_cov

    cov = toeplitz_cov(cfg.d, cfg.aniso_rho)
    prec = np.linalg.inv(cov)
    test = _iso(cfg, cfg.n_train, cov)
    model, row = _train(cfg, cell, _train_data(cfg, cfg.n_train, cov), int(cell["H"]), "softmax")
    blk = kq_block(model)
    row.update({"kq_block": blk.tolist(), "sigma_inv": prec.tolist(), "corr_sigma_inv": corr_with(blk, prec),
                "corr_identity": corr_with(blk, np.eye(cfg.d)), "corr_sigma": corr_with(blk, cov)})
    row.update({f"diag_{k}": v for k, v in pattern_diagnostics(model).items()})
    b = test.sample(cfg.n_eval, generator_for(cell["seed"], "aniso-eval"))
    with torch.no_grad():
        row["err_model"] = _mse(model(b.x, b.y), b.target)
    for name, om in (("pgd", torch.as_tensor(prec)), ("dgd", None)):
        g = preconditioned_gd(b, 1.0, om)
        eta = float((g * b.target).sum() / (g * g).sum())  # oracle step
        row[f"err_{name}"] = _mse(eta * g, b.target)
    row["err_bayes"] = _mse(predict_with(bayes_posterior_mean(b, None, 1.0 / cfg.d, cfg.sigma2**0.5, False), b),
                            b.target)
    return row


def _cell_multitask(cfg, cell) -> dict:
    from iclab.experiments._multihead_data import MultiTaskRegression

    data = MultiTaskRegression(cfg.mt_d, cfg.n_train, cfg.sigma2**0.5)
    H = int(cell["H"])
    model, row = _train(cfg, cell, data, H, "softmax", n_out=len(data.supports))
    p = head_parameters(model)
    om, mu = p["omega_vec"], p["mu_mat"]  # (H, d), (H, N)
    masks = data.masks.numpy()  # (N, d)
    eff = np.einsum("hn,hd->nd", mu, om)  # (N, d) per-task, per-coordinate effective step Σ_h μ_n ω_i
    serve = np.abs(mu) * np.sqrt(np.einsum("hd,nd->hn", om**2, masks))  # (H, N)
    serves = serve >= 0.1 * serve.max()
    row.update({"omega_vec": om.tolist(), "mu_mat": mu.tolist(), "eff_step": eff.tolist(),
                "zero_sum_per_task": (np.abs(mu.sum(0)) / np.abs(mu).sum(0)).tolist(),
                "off_support_frac": float((np.abs(eff) * (1 - masks)).sum() / np.abs(eff).sum()),
                "heads_serving_both": int(serves.all(1).sum()),
                "heads_per_task": serves.sum(0).tolist()})
    b = data.sample(cfg.n_eval, generator_for(cell["seed"], "mt-eval"))
    with torch.no_grad():
        pred = model(b.x, b.y).double()  # (B, N)
    tgt = b.y[:, -1].double()
    row["err_per_task"] = ((pred - tgt) ** 2).mean(0).tolist()
    errs = []
    for t, s in enumerate(data.supports):  # oracle-step debiased GD on each task's own support
        xs = b.x[:, :, list(s)].double()
        ys = b.y[:, :, t].double()
        g = debiased_gd(SimpleNamespace(x=xs, y=ys), 1.0)
        eta = float((g * tgt[:, t]).sum() / (g * g).sum())
        errs.append(_mse(eta * g, tgt[:, t]))
    row["err_dgd_per_task"] = errs
    return row


def run_cell(cfg, cell: dict, shared: Any = None) -> dict:
    kind = cell["kind"]
    if kind == "baseline":
        return _cell_baseline(cfg, cell)
    if kind == "iso":
        return _cell_iso(cfg, cell, cfg.n_train)
    if kind == "lengthgen":
        return _cell_iso(cfg, cell, cfg.lengthgen_train)
    if kind == "aniso":
        return _cell_aniso(cfg, cell)
    if kind == "multitask":
        return _cell_multitask(cfg, cell)
    raise ValueError(f"unknown multihead cell kind {kind!r}")
