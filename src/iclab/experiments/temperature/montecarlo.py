r"""One cell of the ``temperature`` experiment: theory against Monte Carlo for arXiv:2511.01292 (Demir & Doğan).

At one context length ``l``: the Bayes-mimicking weights of Lemma 4.1 (v1; Prop. 4.4 in v2, Eq. 11) from a
pretraining covariance Σ̂, the coefficients of Theorem 4.2 (Eqs. 12–14) and τ_opt of Theorem 4.3 (Eq. 15) for the
test distribution, the Monte-Carlo test error on fresh prompts, τ by grid search, and the test-/train-prior Bayes
errors of Eq. 9 (docs/papers/temperature.md §3.4–3.7, §5.1).

The approximate-softmax prediction is exactly affine in 1/τ (Eq. 10; docs/papers/temperature.md §4.2),
:math:`\hat y=b_{\rm Att}+r/\tau` with :math:`r=\hat{\mathbf w}_{\rm Att}^\top\mathbf x_l`, so one pass over the
prompts gives ``(y, b, r)`` per prompt and the Monte-Carlo error at every τ of the grid; its exact minimiser is
:math:`\tau=\mathbb E[r^2]/\mathbb E[(y-b)r]` (docs/papers/temperature.md §4.4).
"""

from __future__ import annotations

import math

import numpy as np
import torch

from iclab.data import GaussianRegression, generator_for, mean_along_ones
from iclab.estimators import bayes_posterior_mean, predict_with
from iclab.models import ICLAttention, bayes_mimicking_weights, pretraining_covariance
from iclab.theory import temperature as theory

__all__ = ["train_distribution", "test_distribution", "evaluate_cell", "tau_grid"]

_CHUNK_ELEMS = 4_000_000  # floats per sampled chunk (x of shape (chunk, l, d))


def train_distribution(cell: dict) -> GaussianRegression:
    """Pretraining prompts (§5.1): x ~ N(0, I), w ~ N(μw_tr, I), noise σ_tr, ``l`` columns."""
    d = int(cell["d"])
    return GaussianRegression(d=d, n=int(cell["l"]) - 1, mu_w=mean_along_ones(d, cell["mu_w_tr"]),
                              sigma=cell["sigma_tr"])


def test_distribution(cell: dict) -> GaussianRegression:
    """Test prompts: x ~ N(μx, a·I), w ~ N(μw, b·I), noise σ_test (the cell's shift; note §3.8)."""
    d = int(cell["d"])
    return GaussianRegression(d=d, n=int(cell["l"]) - 1, mu_x=mean_along_ones(d, cell["mu_x"]),
                              cov_x=float(cell["cov_x"]), mu_w=mean_along_ones(d, cell["mu_w"]),
                              cov_w=float(cell["cov_w"]), sigma=cell["sigma_test"])


def tau_grid(tau_min: float, tau_max: float, n_tau: int) -> np.ndarray:
    """Log-spaced τ grid (note §5.5: [0.25, 8])."""
    return np.geomspace(tau_min, tau_max, n_tau)


def _mc(err: np.ndarray) -> tuple[float, float]:
    """Mean and its standard error."""
    return float(err.mean()), float(err.std(ddof=1) / math.sqrt(err.size))


def _pretrained_weights(cell: dict, train: GaussianRegression) -> dict:
    """Lemma 4.1 weights from Σ̂ of ``m`` pretraining prompts (its own random stream per (d, l, σ_tr, μw_tr))."""
    seed, d, l, m = int(cell["seed"]), int(cell["d"]), int(cell["l"]), int(cell["m"])
    tm = train.moments()
    gen = generator_for(seed, "pretrain", d, l, cell["sigma_tr"], cell["mu_w_tr"])
    sig_hat = pretraining_covariance(train, m, gen, centring=cell.get("centring", "global"))
    return bayes_mimicking_weights(sig_hat, l, tm["sigma"], tm["mu_w"], tm["cov_w"])


def _bayes_sq_errors(batch, prior: dict, center: bool) -> np.ndarray:
    """Squared errors ``(B,)`` of the Bayes posterior mean (Eq. 9) under ``prior``."""
    w_hat = bayes_posterior_mean(batch, prior["mu_w"], prior["cov_w"], prior["sigma"], center)
    return ((predict_with(w_hat, batch) - batch.target) ** 2).numpy()


def _simulate(cell: dict, weights: dict, train: GaussianRegression, test: GaussianRegression,
              extras: bool) -> dict[str, np.ndarray]:
    """Per-prompt arrays over ``n_test`` fresh test prompts, sampled in chunks from the cell's test stream.

    ``y``, ``b``, ``r``: target, b_Att and ŵ_Attᵀx_l; ``bayes``/``bayes_train``/``bayes_exact``: squared errors of
    test-Bayes (centred), train-Bayes (absent when the priors agree) and the exact (uncentred) posterior mean;
    with ``extras``, linear attention's squared errors and (b, r) of the query-not-a-key variant."""
    seed, d, l = int(cell["seed"]), int(cell["d"]), int(cell["l"])
    model = ICLAttention.from_weights(**weights)
    mods = {}
    if extras:
        mods = {"linear": ICLAttention.from_weights(**weights, attention="linear"),
                "noquery": ICLAttention.from_weights(**weights, query_key=False)}
    mom, tm = test.moments(), train.moments()
    same_prior = all(np.array_equal(mom[k], tm[k]) for k in ("mu_w", "cov_w", "sigma"))
    n_test = int(cell["n_test"])
    chunk = max(1, min(n_test, _CHUNK_ELEMS // (l * d)))
    keys = ("y", "b", "r", "bayes", "bayes_train", "bayes_exact", "linear", "noquery_b", "noquery_r")
    out: dict[str, list] = {k: [] for k in keys}
    gen = generator_for(seed, "test", cell["part"], d, l, cell["cov_x"], cell["cov_w"], cell["mu_x"], cell["mu_w"],
                        cell["sigma_test"])
    done = 0
    with torch.no_grad():
        while done < n_test:
            batch = test.sample(min(chunk, n_test - done), gen)
            done += len(batch)
            b, w = model.decompose(batch)  # (B,), (B, d)
            out["y"].append(batch.target.numpy())
            out["b"].append(b.numpy())
            out["r"].append((w * batch.query_x).sum(-1).numpy())
            out["bayes"].append(_bayes_sq_errors(batch, mom, True))
            if not same_prior:
                out["bayes_train"].append(_bayes_sq_errors(batch, tm, True))
            out["bayes_exact"].append(_bayes_sq_errors(batch, mom, False))
            if extras:
                out["linear"].append(((mods["linear"](batch) - batch.target) ** 2).numpy())
                bq, wq = mods["noquery"].decompose(batch)
                out["noquery_b"].append(bq.numpy())
                out["noquery_r"].append((wq * batch.query_x).sum(-1).numpy())
    if same_prior:
        out["bayes_train"] = out["bayes"]
    return {k: np.concatenate(v) for k, v in out.items() if v}


def _theory_metrics(coefs: theory.GCoefficients) -> dict:
    """a₁, a₂, c of Theorem 4.2, τ_opt of Theorem 4.3, G(1) and G(τ_opt)."""
    return {"a1": coefs.a1, "a2": coefs.a2, "c": coefs.c, "tau_opt_theory": coefs.tau_opt,
            "G1_theory": float(coefs.G(1.0)), "Gopt_theory": coefs.G_min}


def _mc_metrics(sim: dict, taus: np.ndarray, tau_th: float) -> dict:
    """Monte-Carlo error on the τ grid, its minimiser, the moments behind a₁, a₂, c, and G(1), G(τ_opt)."""
    y, b, r = sim["y"], sim["b"], sim["r"]
    err_grid = (y[None] - b[None] - r[None] / taus[:, None]) ** 2  # (n_tau, N)
    g_grid = err_grid.mean(1)
    k = int(np.argmin(g_grid))
    res = {
        "tau_opt_mc": float(np.mean(r * r) / np.mean((y - b) * r)),  # exact minimiser of the MC error
        "tau_grid": float(taus[k]), "G_grid": float(g_grid[k]),
        "G_curve_mc": [float(v) for v in g_grid],
        "mc_a2": float(np.mean(r * r)), "mc_a1": float(2 * np.mean(y * r)), "mc_c": float(np.mean(y * y)),
        "mc_b2": float(np.mean(b * b)),
    }
    res["G1_mc"], res["G1_se"] = _mc((y - b - r) ** 2)
    res["Gopt_mc"], res["Gopt_se"] = _mc((y - b - r / tau_th) ** 2)
    return res


def _bayes_metrics(sim: dict) -> dict:
    res = {}
    for name, key in (("bayes_test", "bayes"), ("bayes_train", "bayes_train"), ("bayes_exact", "bayes_exact")):
        res[name], res[f"{name}_se"] = _mc(sim[key])
    return res


def _isotropic_metrics(cell: dict) -> dict:
    """The isotropic τ_opt (note §4.5) and the Marchenko–Pastur Bayes error (note §4.7) where they apply."""
    d, l = int(cell["d"]), int(cell["l"])
    iso = cell["mu_w"] == 0 and cell["mu_w_tr"] == 0
    return {"tau_opt_iso": (theory.tau_opt_isotropic(d, l, cell["cov_x"], cell["cov_w"], cell["sigma_test"],
                                                     cell["sigma_tr"]) if iso else float("nan")),
            "bayes_mp": (theory.bayes_error_mp(d, l - 1, cell["cov_x"], cell["cov_w"], cell["sigma_test"])
                         if iso and cell["mu_x"] == 0 and cell["sigma_test"] > 0 else float("nan"))}


def _extras_metrics(sim: dict) -> dict:
    """Linear attention at τ = 1 and the query-not-a-key variant at τ = 1 and at its own best τ (Remark 3.4)."""
    y, bq, rq = sim["y"], sim["noquery_b"], sim["noquery_r"]
    res = {}
    res["linear_mc"], res["linear_se"] = _mc(sim["linear"])
    res["noquery1_mc"], res["noquery1_se"] = _mc((y - bq - rq) ** 2)
    res["noquery_opt_mc"] = float(np.mean((y - bq) ** 2) - np.mean((y - bq) * rq) ** 2 / np.mean(rq * rq))
    return res


def evaluate_cell(cell: dict, taus: np.ndarray, extras: bool = False) -> dict:
    """Metrics of one cell (see the module docstring). ``extras`` adds linear attention and the query-excluded
    variant (input-mean-shift panel, Remark 3.4)."""
    train, test = train_distribution(cell), test_distribution(cell)
    weights = _pretrained_weights(cell, train)
    coefs = theory.coefficients(weights, int(cell["l"]), **test.moments())
    sim = _simulate(cell, weights, train, test, extras)
    res = {**_theory_metrics(coefs), **_mc_metrics(sim, taus, coefs.tau_opt), **_bayes_metrics(sim),
           **_isotropic_metrics(cell)}
    if extras:
        res.update(_extras_metrics(sim))
    return res
