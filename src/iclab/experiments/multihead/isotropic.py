"""Parts ``iso`` and ``lengthgen`` of the ``multihead`` experiment: train one model on isotropic prompts
(arXiv:2503.12734, Figs. 2.2–2.8 and 4.1; docs/papers/multihead.md §5.1) and measure its error against the
prompt length, its KQ/OV patterns and its distance to debiased GD."""

from __future__ import annotations

from iclab.data import generator_for
from iclab.experiments.multihead.training import errors_vs_length, eval_prompts, train_model, train_prompts
from iclab.models import distance_to_debiased_gd, pattern_diagnostics

__all__ = ["isotropic_cell"]


def isotropic_cell(cfg, cell: dict, n_train: int) -> dict:
    """Train at context length ``n_train`` (``n_train`` for ``iso``, ``lengthgen_train`` for ``lengthgen``);
    a linear-attention model keeps the 1/n of ``n_train`` at every test length."""
    H, att = int(cell["H"]), cell["attention"]
    data = train_prompts(cfg, n_train)
    model, row = train_model(cfg, cell, data, H, att, linear_length=n_train if att == "linear" else None)
    row["lengths"] = list(cfg.eval_lengths)
    row["err"] = errors_vs_length(cfg, model, lambda n: eval_prompts(cfg, n), int(cell["seed"]), cfg.eval_lengths)
    row.update({f"diag_{k}": v for k, v in pattern_diagnostics(model).items()})
    held = eval_prompts(cfg, n_train).sample(cfg.n_eval, generator_for(cell["seed"], "held-out"))
    row.update({f"dgd_{k}": v for k, v in distance_to_debiased_gd(model, held).items()})
    return row
