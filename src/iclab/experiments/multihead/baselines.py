r"""Part ``baseline`` of the ``multihead`` experiment: the analytic estimators of arXiv:2503.12734, Fig. 2.5
(two-head kernel regressor, one-step and debiased GD, single-head Nadaraya–Watson, ridge/Bayes) by Monte Carlo
against the prompt length, with iclab's exact closed forms beside them (docs/papers/multihead.md §4.1–4.3, §4.7).
"""

from __future__ import annotations

from typing import Any

from iclab.data import derive_seed, generator_for
from iclab.estimators import bayes_posterior_mean, debiased_gd, kernel_regression, one_step_gd, predict_with
from iclab.experiments.multihead.paper_values import PAPER_ETA, PAPER_MU, PAPER_OMEGA
from iclab.experiments.multihead.training import eval_prompts
from iclab.theory import multihead as th

__all__ = ["baseline_cell"]


def _estimators(cfg) -> dict:
    """Predictors by key: GD/debiased GD at Thm 1's η* and at the paper's η = 2·0.13·3.45, the paper's two-head
    model (ω = ±0.13, μ = ±3.45), the two-head model at γ = 0.05 on the solution manifold, the single head at
    ω = 1/√d, and the Bayes posterior mean."""
    eta = th.eta_star(cfg.d, cfg.n_train, cfg.sigma2)
    nw = th.single_head_nw(cfg.d, cfg.n_train, cfg.sigma2)
    mg = th.mu_gamma(0.05, cfg.d, cfg.n_train, cfg.sigma2)
    return {
        "dgd_star": lambda b: debiased_gd(b, eta),
        "gd_star": lambda b: one_step_gd(b, eta),
        "dgd_paper": lambda b: debiased_gd(b, PAPER_ETA),
        "gd_paper": lambda b: one_step_gd(b, PAPER_ETA),
        "mh_paper": lambda b: kernel_regression(b, [PAPER_OMEGA, -PAPER_OMEGA], [PAPER_MU, -PAPER_MU]),
        "mh_gamma005": lambda b: kernel_regression(b, [0.05, -0.05], [mg, -mg]),
        "nw": lambda b: kernel_regression(b, [nw["omega"]], [nw["mu"]]),
        "bayes": lambda b: predict_with(bayes_posterior_mean(b, None, 1.0 / cfg.d, cfg.sigma2**0.5, False), b),
    }


def _monte_carlo(cfg, cell: dict, lengths: list[int], row: dict[str, Any]) -> None:
    """``mc_<key>`` (mean squared error) and ``se_<key>`` (its standard error) of every estimator at every length,
    on ``n_mc`` prompts seeded by ``(seed, "baseline", n)``."""
    est = _estimators(cfg)
    for key in est:
        row[f"mc_{key}"], row[f"se_{key}"] = [], []
    for n in lengths:
        b = eval_prompts(cfg, n).sample(
            cfg.n_mc, generator_for(derive_seed(cfg.seed, "replicate", cell["seed"]), "baseline", n)
        )
        for key, f in est.items():
            err = (f(b).double() - b.target.double()) ** 2  # (M,)
            row[f"mc_{key}"].append(float(err.mean()))
            row[f"se_{key}"].append(float(err.std() / err.numel() ** 0.5))


def _closed_forms(cfg, lengths: list[int], eta: float, row: dict[str, Any]) -> None:
    """Exact GD/debiased-GD risks (at η* and the paper's η), the finite-(d, L) Bayes risk, and the length-
    generalisation references: debiased GD at η*(lengthgen_train), and linear attention = vanilla GD whose step
    grows like n / lengthgen_train (its 1/L frozen at training, docs/papers/multihead.md §4.7)."""
    d, s2 = cfg.d, cfg.sigma2
    row["th_dgd_star"] = [float(th.gd_risk(eta, d, n, s2)) for n in lengths]
    row["th_gd_star"] = [float(th.gd_risk(eta, d, n, s2, False)) for n in lengths]
    row["th_dgd_paper"] = [float(th.gd_risk(PAPER_ETA, d, n, s2)) for n in lengths]
    row["th_gd_paper"] = [float(th.gd_risk(PAPER_ETA, d, n, s2, False)) for n in lengths]
    row["th_bayes"] = [th.bayes_risk(d, n, s2, n_mc=2000, seed=derive_seed(cfg.seed, "bayes", n))[0] for n in lengths]
    e_lg = th.eta_star(d, cfg.lengthgen_train, s2)
    row["th_dgd_lg"] = [float(th.gd_risk(e_lg, d, n, s2)) for n in lengths]
    row["th_linear_lg"] = [float(th.gd_risk(e_lg * n / cfg.lengthgen_train, d, n, s2, False)) for n in lengths]


def baseline_cell(cfg, cell: dict) -> dict:
    lengths = sorted(set(cfg.eval_lengths) | set(cfg.paper_lengths))
    eta = th.eta_star(cfg.d, cfg.n_train, cfg.sigma2)
    row: dict[str, Any] = {"lengths": lengths, "eta_star": eta}
    _monte_carlo(cfg, cell, lengths, row)
    _closed_forms(cfg, lengths, eta, row)
    return row
