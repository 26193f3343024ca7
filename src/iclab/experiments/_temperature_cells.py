"""One cell of the ``temperature`` experiment: Lemma 4.1 weights at one context length, Monte Carlo of the test
error on fresh prompts of one test distribution, Theorem 4.2 theory, τ_opt by formula and by grid search, and the
test-/train-prior Bayes errors (optimal-temperature spec §3.2–3.6, §4.1, open details 2–5).

The attention's prediction is exactly affine in 1/τ (spec §1.5), :math:`\\hat y=b_{\\rm Att}+r/\\tau`, so one pass
over the prompts gives ``(y, b, r)`` per prompt and the Monte-Carlo error at every τ of the grid.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from iclab.data import GaussianRegression, generator_for
from iclab.estimators import bayes_posterior_mean, predict_with
from iclab.models import ICLAttention, bayes_mimicking_weights, pretraining_covariance
from iclab.theory import temperature as theory

__all__ = ["unit_mean", "train_distribution", "test_distribution", "evaluate_cell", "tau_grid"]

_CHUNK_ELEMS = 4_000_000  # floats per sampled chunk (x of shape (chunk, l, d))


def unit_mean(d: int, norm: float) -> np.ndarray | None:
    """A mean of Euclidean norm ``norm`` along (1, …, 1)/√d (spec open detail 4: μw = 1/√d); None when 0."""
    return None if norm == 0 else np.full(d, norm / math.sqrt(d))


def train_distribution(cell: dict) -> GaussianRegression:
    """Pretraining prompts (spec §4.1): x ~ N(0, I), w ~ N(μw_tr, I), noise σ_tr, ``l`` columns."""
    d = int(cell["d"])
    return GaussianRegression(d=d, n=int(cell["l"]) - 1, mu_w=unit_mean(d, cell["mu_w_tr"]), sigma=cell["sigma_tr"])


def test_distribution(cell: dict) -> GaussianRegression:
    """Test prompts: x ~ N(μx, a·I), w ~ N(μw, b·I), noise σ_test (the cell's shift, spec §3.7)."""
    d = int(cell["d"])
    return GaussianRegression(d=d, n=int(cell["l"]) - 1, mu_x=unit_mean(d, cell["mu_x"]), cov_x=float(cell["cov_x"]),
                              mu_w=unit_mean(d, cell["mu_w"]), cov_w=float(cell["cov_w"]), sigma=cell["sigma_test"])


def tau_grid(tau_min: float, tau_max: float, n_tau: int) -> np.ndarray:
    """Log-spaced τ grid (spec open detail 4: [0.25, 8])."""
    return np.geomspace(tau_min, tau_max, n_tau)


def _mc(err: np.ndarray) -> tuple[float, float]:
    return float(err.mean()), float(err.std(ddof=1) / math.sqrt(err.size))


def evaluate_cell(cell: dict, taus: np.ndarray, extras: bool = False) -> dict:
    """Metrics of one cell (see module docstring). ``extras`` adds linear attention and the query-excluded
    variant (input-mean-shift panel, Remark 3.4)."""
    seed, d, l, m = int(cell["seed"]), int(cell["d"]), int(cell["l"]), int(cell["m"])
    train, test = train_distribution(cell), test_distribution(cell)
    tm = train.moments()
    sig_hat = pretraining_covariance(train, m, generator_for(seed, "pretrain", d, l, cell["sigma_tr"], cell["mu_w_tr"]),
                                     centring=cell.get("centring", "global"))
    weights = bayes_mimicking_weights(sig_hat, l, tm["sigma"], tm["mu_w"], tm["cov_w"])
    model = ICLAttention.from_weights(**weights)
    coefs = theory.coefficients(weights, l, **test.moments())
    tau_th = coefs.tau_opt
    mods = {}
    if extras:
        mods = {"linear": ICLAttention.from_weights(**weights, attention="linear"),
                "noquery": ICLAttention.from_weights(**weights, query_key=False)}
    mom = test.moments()
    same_prior = all(np.array_equal(mom[k], tm[k]) for k in ("mu_w", "cov_w", "sigma"))
    n_test = int(cell["n_test"])
    chunk = max(1, min(n_test, _CHUNK_ELEMS // (l * d)))
    ys, bs, rs, bayes, bayes_tr, bayes_ex, ex = [], [], [], [], [], [], {k: [] for k in ("linear", "noquery_b", "noquery_r")}
    gen = generator_for(seed, "test", cell["scenario"], d, l, cell["cov_x"], cell["cov_w"], cell["mu_x"], cell["mu_w"],
                        cell["sigma_test"])
    done = 0
    with torch.no_grad():
        while done < n_test:
            batch = test.sample(min(chunk, n_test - done), gen)
            done += len(batch)
            b, w = model.decompose(batch)  # (B,), (B, d)
            ys.append(batch.target.numpy())
            bs.append(b.numpy())
            rs.append((w * batch.query_x).sum(-1).numpy())
            for out, prior, center in ((bayes, mom, True), (bayes_tr, tm, True), (bayes_ex, mom, False)):
                if out is bayes_tr and same_prior:
                    continue
                w_hat = bayes_posterior_mean(batch, prior["mu_w"], prior["cov_w"], prior["sigma"], center)
                out.append(((predict_with(w_hat, batch) - batch.target) ** 2).numpy())
            if extras:
                ex["linear"].append(((mods["linear"](batch) - batch.target) ** 2).numpy())
                bq, wq = mods["noquery"].decompose(batch)
                ex["noquery_b"].append(bq.numpy())
                ex["noquery_r"].append((wq * batch.query_x).sum(-1).numpy())
    y, b, r = (np.concatenate(v) for v in (ys, bs, rs))
    err_grid = (y[None] - b[None] - r[None] / taus[:, None]) ** 2  # (n_tau, N)
    g_grid = err_grid.mean(1)
    k = int(np.argmin(g_grid))
    res = {
        "a1": coefs.a1, "a2": coefs.a2, "c": coefs.c, "tau_opt_theory": tau_th,
        "G1_theory": float(coefs.G(1.0)), "Gopt_theory": coefs.G_min,
        "tau_opt_mc": float(np.mean(r * r) / np.mean((y - b) * r)),  # exact minimiser of the MC error
        "tau_grid": float(taus[k]), "G_grid": float(g_grid[k]),
        "G_curve_mc": [float(v) for v in g_grid],
        "mc_a2": float(np.mean(r * r)), "mc_a1": float(2 * np.mean(y * r)), "mc_c": float(np.mean(y * y)),
        "mc_b2": float(np.mean(b * b)),
    }
    res["G1_mc"], res["G1_se"] = _mc((y - b - r) ** 2)
    res["Gopt_mc"], res["Gopt_se"] = _mc((y - b - r / tau_th) ** 2)
    res["bayes_test"], res["bayes_test_se"] = _mc(np.concatenate(bayes))
    res["bayes_train"], res["bayes_train_se"] = _mc(np.concatenate(bayes if same_prior else bayes_tr))
    res["bayes_exact"], res["bayes_exact_se"] = _mc(np.concatenate(bayes_ex))
    iso = cell["mu_w"] == 0 and cell["mu_w_tr"] == 0
    res["tau_opt_iso"] = (theory.tau_opt_isotropic(d, l, cell["cov_x"], cell["cov_w"], cell["sigma_test"],
                                                   cell["sigma_tr"]) if iso else float("nan"))
    res["bayes_mp"] = (theory.bayes_error_mp(d, l - 1, cell["cov_x"], cell["cov_w"], cell["sigma_test"])
                       if iso and cell["mu_x"] == 0 and cell["sigma_test"] > 0 else float("nan"))
    if extras:
        res["linear_mc"], res["linear_se"] = _mc(np.concatenate(ex["linear"]))
        bq, rq = np.concatenate(ex["noquery_b"]), np.concatenate(ex["noquery_r"])
        res["noquery1_mc"], res["noquery1_se"] = _mc((y - bq - rq) ** 2)
        res["noquery_opt_mc"] = float(np.mean((y - bq) ** 2) - np.mean((y - bq) * rq) ** 2 / np.mean(rq * rq))
    return res
