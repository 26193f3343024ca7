r"""Part ``ratio`` of the ``multihead`` experiment: the Bayes-risk part of Thm 1 of arXiv:2503.12734 — debiased GD
at η* is within the factor :math:`1+\sigma^{-2}\{(1+\xi\sigma^2)(1+\sigma^2+\xi^{-1})\}^{-1}` of the Bayes risk as
L → ∞ with d/L → ξ — at finite (d, L): across the prompt length at the experiment's d, and across d at the
experiment's ξ = d / n_train (docs/papers/multihead.md §4.9–4.10). Both risks are exact in β, ε and x_q given the
context inputs X and paired over Monte Carlo draws of X (:func:`iclab.theory.multihead.risk_ratio_mc`)."""

from __future__ import annotations

from iclab.data import derive_seed
from iclab.theory import multihead as th

__all__ = ["ratio_cell", "ratio_grid"]

_KEYS = (
    "d",
    "L",
    "eta",
    "dgd",
    "dgd_se",
    "bayes",
    "bayes_se",
    "ratio",
    "ratio_se",
    "dgd_closed_form",
    "bound",
    "limit_ratio",
)


def ratio_grid(cfg) -> list[tuple[int, int, str]]:
    """``(d, L, sweep)``: every evaluation/paper length at ``d`` (sweep ``"L"``), then every ``ratio_dims`` entry
    with L = d·n_train/cfg.d (sweep ``"d"``, fixed ξ)."""
    lengths = sorted(set(cfg.eval_lengths) | set(cfg.paper_lengths))
    grid = [(cfg.d, n, "L") for n in lengths]
    grid += [(dd, max(1, round(dd * cfg.n_train / cfg.d)), "d") for dd in cfg.ratio_dims]
    return grid


def ratio_cell(cfg, cell: dict) -> dict:
    row: dict = {f"ratio_{k}": [] for k in _KEYS}
    row["ratio_sweep"] = []
    for d, L, sweep in ratio_grid(cfg):
        r = th.risk_ratio_mc(
            d, L, cfg.sigma2, cfg.n_ratio, seed=derive_seed(cfg.seed, "replicate", cell["seed"], "ratio", d, L)
        )
        for k in _KEYS:
            row[f"ratio_{k}"].append(r[k])
        row["ratio_sweep"].append(sweep)
    return row
