"""Parts ``iso``, ``lengthgen`` and ``activation`` of the ``multihead`` experiment: train one model on isotropic
prompts (arXiv:2503.12734, Figs. 2.2–2.8, 4.1 and 4.2; docs/papers/multihead.md §5.1) and measure its error
against the prompt length (paired with debiased GD and Bayes on the same prompts), its KQ/OV patterns and its
distance to debiased GD."""

from __future__ import annotations

import numpy as np

from iclab.attention import activation_slope
from iclab.data import derive_seed, generator_for
from iclab.experiments.multihead.training import evaluate_lengths, eval_prompts, train_model, train_prompts
from iclab.models import distance_to_debiased_gd, pattern_diagnostics
from iclab.theory import multihead as th

__all__ = ["isotropic_cell"]


def _attention_params(cfg, attention: str) -> dict:
    """The constant C of the activation ablation's ``affine`` normalisers; nothing for the others."""
    return {"C": cfg.activation_C} if attention.startswith("affine") else {}


def isotropic_cell(cfg, cell: dict, n_train: int) -> dict:
    """Train at context length ``n_train`` (``n_train`` for ``iso`` and ``activation``, ``lengthgen_train`` for
    ``lengthgen``); a linear-attention model keeps the 1/n of ``n_train`` at every test length. Beside the model,
    debiased GD at η*(``n_train``) and Bayes on the same test prompts.

    For softmax and the activation-ablation normalisers, ``eta_weights`` = 2 C_f ‖ω‖∞ ‖μ‖∞ is the effective step
    the paper reads off the weights (Fig. 4.2; C_f = 1 for exp), to compare with the fitted step ``dgd_eta_fit``."""
    H, att = int(cell["H"]), cell["attention"]
    params = _attention_params(cfg, att)
    data = train_prompts(cfg, n_train)
    model, row = train_model(
        cfg, cell, data, H, att, linear_length=n_train if att == "linear" else None, attention_params=params
    )
    eta = th.eta_star(cfg.d, n_train, cfg.sigma2)
    row["lengths"] = list(cfg.eval_lengths)
    row["eta_star"] = eta
    seed = derive_seed(cfg.seed, "replicate", cell["seed"])
    row.update(evaluate_lengths(cfg, model, lambda n: eval_prompts(cfg, n), seed, cfg.eval_lengths, eta))
    diag = pattern_diagnostics(model)
    row.update({f"diag_{k}": v for k, v in diag.items()})
    held = eval_prompts(cfg, n_train).sample(cfg.n_eval, generator_for(seed, "held-out"))
    row.update({f"dgd_{k}": v for k, v in distance_to_debiased_gd(model, held).items()})
    if att != "linear":
        c_f = activation_slope(att, **params)
        row["c_f"] = c_f
        row["eta_weights"] = float(2 * c_f * np.max(np.abs(diag["omega"])) * np.max(np.abs(diag["mu"])))
    return row
