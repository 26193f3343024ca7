"""Training and evaluation of one multi-head regression model for the ``multihead`` experiment
(arXiv:2503.12734; settings: docs/papers/multihead.md §5.2).

Prompts follow the paper's law x ~ N(0, Σ), β ~ N(0, I/d), noise σ² (docs/papers/multihead.md §3.1). Training
draws them in float32 (fast); evaluation draws the same law in float32 and computes in float64. Errors are
E(ŷ − y_q)² against the noisy query label, so they include σ². Every model of a seed is evaluated on the same
prompts, and beside it debiased GD at η* and the Bayes posterior mean, so that its difference from debiased GD
and its ratio to the Bayes risk are paired (docs/papers/multihead.md §5.1).
"""

from __future__ import annotations

import torch

import math

from iclab.data import Float64Prompts, GaussianRegression, derive_seed, generator_for, seeded_init
from iclab.estimators import bayes_posterior_mean, debiased_gd, predict_with
from iclab.models import MultiHeadRegressionAttention, pattern_diagnostics, regression_mse
from iclab.train import TrainConfig, train

__all__ = [
    "eval_prompts",
    "train_prompts",
    "trained_steps",
    "train_model",
    "evaluate_lengths",
    "paired_mean",
    "ratio_of_means",
]

PATTERN_KEYS = ("kq_diag_mass", "ov_last_mass", "ov_zero_sum", "omega", "mu")  # traced along training


def train_prompts(cfg, n: int, cov_x=None) -> GaussianRegression:
    """Training prompts of length ``n``: x ~ N(0, Σ) (Σ = ``cov_x``, default I), β ~ N(0, I/d), noise σ²,
    drawn in float32."""
    return GaussianRegression(cfg.d, n, cov_x=cov_x, cov_w=1.0 / cfg.d, sigma=cfg.sigma2**0.5, dtype=torch.float32)


def eval_prompts(cfg, n: int, cov_x=None) -> Float64Prompts:
    """Evaluation and Monte Carlo prompts: the law of :func:`train_prompts`, drawn in float32 (≈5× faster than
    float64 on CPUs) and returned in float64."""
    return Float64Prompts(train_prompts(cfg, n, cov_x))


def _pattern_probe(model) -> dict:
    return {k: v for k, v in pattern_diagnostics(model).items() if k in PATTERN_KEYS}


def trained_steps(cfg, part: str, H: int, attention: str) -> int:
    """Adam steps of one model: ``stage2_steps`` (when set) for the ``iso`` softmax models with H ≥ 2, else
    ``steps``."""
    stage2 = part == "iso" and attention == "softmax" and H >= 2 and cfg.stage2_steps > 0
    return cfg.stage2_steps if stage2 else cfg.steps


def train_model(
    cfg,
    cell: dict,
    data,
    H: int,
    attention: str,
    n_out: int = 1,
    linear_length: int | None = None,
    attention_params: dict | None = None,
) -> tuple[MultiHeadRegressionAttention, dict]:
    """Train one model with the iclab trainer (Adam, :func:`trained_steps` steps); returns it on the CPU and its
    curves.

    With ``seed = derive_seed(cfg.seed, "replicate", cell["seed"])``, the initialisation is seeded by
    ``(seed, "init", part, H, attention)``, the held-out monitor prompts by ``(seed, "monitor", part)``. The curves are the held-out MSE and, for single-output models, the traced
    KQ/OV pattern statistics, every ``log_every`` steps; plus wall time, steps/s and the steps trained.
    """
    seed = derive_seed(cfg.seed, "replicate", cell["seed"])
    steps = trained_steps(cfg, cell["part"], H, attention)
    with seeded_init(seed, "init", cell["part"], H, attention):
        model = MultiHeadRegressionAttention(
            data.d, H, attention, n_out=n_out, linear_length=linear_length, attention_params=attention_params
        )
    monitor = data.sample(cfg.n_monitor, generator_for(seed, "monitor", cell["part"]))
    probes = {} if n_out > 1 else {"p": _pattern_probe}
    tcfg = TrainConfig(
        steps=steps,
        batch_size=cfg.batch_size,
        lr=cfg.lr,
        optimizer="adam",
        seed=seed,
        log_every=cfg.log_every,
        device=cfg.device,
    )
    res = train(
        model,
        data,
        regression_mse,
        tcfg,
        probes=probes,
        eval_fn=lambda m: {"mse": float(regression_mse(m, monitor.to(cfg.device)))},
    )
    hist = res.history
    curves = {
        "curve_step": [r["step"] for r in hist],
        "curve_loss": [r["eval/mse"] for r in hist],
        "seconds": res.seconds,
        "steps_per_s": res.steps / max(res.seconds, 1e-9),
        "trained_steps": res.steps,
    }
    if probes:
        for k in PATTERN_KEYS:
            curves[f"curve_{k}"] = [r[f"p/{k}"] for r in hist]
    return res.model.cpu(), curves


def paired_mean(diff: torch.Tensor) -> tuple[float, float]:
    """Mean of per-prompt differences and its standard error."""
    diff = diff.double()
    return float(diff.mean()), float(diff.std() / math.sqrt(diff.numel()))


def ratio_of_means(a: torch.Tensor, b: torch.Tensor) -> tuple[float, float]:
    """``mean(a) / mean(b)`` of paired samples and its delta-method standard error."""
    a, b = a.double(), b.double()
    r = float(a.mean() / b.mean())
    cov = torch.cov(torch.stack([a, b]))  # (2, 2)
    var = float(cov[0, 0] - 2 * r * cov[0, 1] + r**2 * cov[1, 1]) / (float(b.mean()) ** 2 * a.numel())
    return r, math.sqrt(max(var, 0.0))


def evaluate_lengths(cfg, model, make_data, seed: int, lengths, eta: float) -> dict[str, list[float]]:
    """``model`` on ``n_eval`` prompts of ``make_data(n)`` for each n in ``lengths`` (the same prompts for every
    model of ``seed``), with debiased GD at step ``eta`` and the Bayes posterior mean on the same prompts:

    ``err`` (E(ŷ − y_q)²) and ``err_sd`` (the per-prompt standard deviation of (ŷ − y_q)²), ``dgd_err``,
    ``dgd_diff`` ± ``dgd_diff_se`` (paired model − debiased GD), ``bayes_err``, and ``bayes_ratio`` ±
    ``bayes_ratio_se`` (model error over Bayes error, delta method), one entry per length."""
    keys = ("err", "err_sd", "dgd_err", "dgd_diff", "dgd_diff_se", "bayes_err", "bayes_ratio", "bayes_ratio_se")
    out: dict[str, list[float]] = {k: [] for k in keys}
    for n in lengths:
        b = make_data(n).sample(cfg.n_eval, generator_for(seed, "eval", n))
        with torch.no_grad():
            e_m = (model(b.x, b.y).double() - b.target.double()) ** 2  # (M,)
        e_g = (debiased_gd(b, eta).double() - b.target.double()) ** 2  # (M,)
        w_bayes = bayes_posterior_mean(b, None, 1.0 / cfg.d, cfg.sigma2**0.5, False)
        e_b = (predict_with(w_bayes, b).double() - b.target.double()) ** 2  # (M,)
        diff, diff_se = paired_mean(e_m - e_g)
        ratio, ratio_se = ratio_of_means(e_m, e_b)
        for k, v in zip(
            keys,
            (float(e_m.mean()), float(e_m.std()), float(e_g.mean()), diff, diff_se, float(e_b.mean()), ratio, ratio_se),
        ):
            out[k].append(v)
    return out
