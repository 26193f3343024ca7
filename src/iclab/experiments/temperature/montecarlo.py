r"""One cell of the ``temperature`` experiment: theory against Monte Carlo for arXiv:2511.01292 (Demir & Doğan).

At one context length ``l``: the Bayes-mimicking weights of Lemma 4.1 (v1; Prop. 4.4 in v2, Eq. 11) from a
pretraining covariance Σ̂, the coefficients of Theorem 4.2 (Eqs. 12–14) and τ_opt of Theorem 4.3 (Eq. 15) for the
test distribution, the Monte-Carlo test error on fresh prompts, τ by grid search, and the test-/train-prior Bayes
errors of Eq. 9 (docs/papers/temperature.md §3.4–3.7, §5.1).

The approximate-softmax prediction is exactly affine in 1/τ (Eq. 10; docs/papers/temperature.md §4.2),
:math:`\hat y=b_{\rm Att}+r/\tau` with :math:`r=\hat{\mathbf w}_{\rm Att}^\top\mathbf x_l`, so one pass over the
prompts gives ``(f, b, r)`` per prompt and the Monte-Carlo error at every τ of the grid; its exact minimiser is
:math:`\tau=\mathbb E[r^2]/\mathbb E[(f-b)r]` (docs/papers/temperature.md §4.4). The query's own label noise
:math:`\epsilon_l` never reaches a prediction, so every squared error is averaged over it exactly:
:math:`\mathbb E_{\epsilon_l}(y_l-\hat y)^2=(f-\hat y)^2+\sigma^2` with :math:`f=\mathbf w^\top\mathbf x_l`
(docs/papers/temperature.md §5.1). Every error comes with its standard error over prompts, and the differences the
claims judge (τ = 1 against τ_opt, the model against Bayes) with the standard error of the per-prompt
difference on the same prompts.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import torch

from iclab.data import GaussianRegression, generator_for, mean_along_ones
from iclab.estimators import bayes_posterior_mean, predict_with
from iclab.models import ICLAttention, bayes_mimicking_weights, pretraining_covariance
from iclab.stats import mean_se
from iclab.theory import temperature as theory

__all__ = [
    "train_distribution",
    "test_distribution",
    "pretraining_sigma_hat",
    "pretrained_weights",
    "sample_prompts",
    "evaluate_cell",
    "tau_grid",
    "ratio_se",
]

_CHUNK_ELEMS = 4_000_000  # floats per sampled chunk (x of shape (chunk, l, d))


def train_distribution(cell: dict) -> GaussianRegression:
    """Pretraining prompts (§5.1): x ~ N(0, I), w ~ N(μw_tr, I), noise σ_tr, ``l`` columns."""
    d = int(cell["d"])
    return GaussianRegression(
        d=d, n=int(cell["l"]) - 1, mu_w=mean_along_ones(d, cell["mu_w_tr"]), sigma=cell["sigma_tr"]
    )


def test_distribution(cell: dict) -> GaussianRegression:
    """Test prompts: x ~ N(μx, a·I), w ~ N(μw, b·I), noise σ_test (the cell's shift; note §3.8)."""
    d = int(cell["d"])
    return GaussianRegression(
        d=d,
        n=int(cell["l"]) - 1,
        mu_x=mean_along_ones(d, cell["mu_x"]),
        cov_x=float(cell["cov_x"]),
        mu_w=mean_along_ones(d, cell["mu_w"]),
        cov_w=float(cell["cov_w"]),
        sigma=cell["sigma_test"],
    )


def tau_grid(tau_min: float, tau_max: float, n_tau: int) -> np.ndarray:
    """Log-spaced τ grid (note §5.5: [0.25, 8])."""
    return np.geomspace(tau_min, tau_max, n_tau)


def ratio_se(num: np.ndarray, den: np.ndarray) -> tuple[float, float]:
    r"""The ratio of means :math:`R=\bar a/\bar b` of per-prompt values and its delta-method standard error
    :math:`\mathrm{sd}(a-Rb)/(|\bar b|\sqrt n)`."""
    ratio = float(num.mean() / den.mean())
    return ratio, float((num - ratio * den).std(ddof=1) / (abs(den.mean()) * math.sqrt(num.size)))


def pretraining_sigma_hat(cell: dict, train: GaussianRegression | None = None) -> np.ndarray:
    """Σ̂ of Eq. 11 from ``m`` pretraining prompts, its own random stream per (d, l, σ_tr, μw_tr); normals drawn in
    float32 as in :func:`sample_prompts`."""
    train = train_distribution(cell) if train is None else train
    seed, d, l, m = int(cell["seed"]), int(cell["d"]), int(cell["l"]), int(cell["m"])
    gen = generator_for(seed, "pretrain", d, l, cell["sigma_tr"], cell["mu_w_tr"])
    return pretraining_covariance(train, m, gen, centring=cell.get("centring", "global"), draw_dtype=torch.float32)


def pretrained_weights(cell: dict, train: GaussianRegression | None = None) -> dict:
    """Lemma 4.1 weights (Eq. 11) from :func:`pretraining_sigma_hat` and the train noise and task prior."""
    train = train_distribution(cell) if train is None else train
    return _weights_for(pretraining_sigma_hat(cell, train), int(cell["l"]), train.moments())


def _weights_for(sig_hat: np.ndarray, l: int, prior: dict) -> dict:
    """Eq. 11 with Σ̂ and the noise and task prior of ``prior`` (train moments: Lemma 4.1; test moments: the
    weights a shift would need, §4.2's definition of a harmful shift)."""
    return bayes_mimicking_weights(sig_hat, l, prior["sigma"], prior["mu_w"], prior["cov_w"])


def sample_prompts(test: GaussianRegression, n: int, generator: torch.Generator):
    """``n`` test prompts in chunks, drawn in float32 (about 3× faster than float64 draws; their rounding,
    1e-7, is far below the Monte-Carlo error) and returned in float64 for the model."""
    d, l = int(test.d), test.l
    test32 = dataclasses.replace(test, dtype=torch.float32)
    chunk = max(1, min(n, _CHUNK_ELEMS // (l * d)))
    done = 0
    while done < n:
        b = test32.sample(min(chunk, n - done), generator)
        done += len(b)
        yield b.double()


def _bayes_sq_errors(batch, f: torch.Tensor, prior: dict, center: bool) -> np.ndarray:
    """Squared errors ``(B,)`` of the Bayes posterior mean (Eq. 9) under ``prior``, averaged over the query noise."""
    w_hat = bayes_posterior_mean(batch, prior["mu_w"], prior["cov_w"], prior["sigma"], center)
    return ((predict_with(w_hat, batch) - f) ** 2).numpy()


def _same_prior(train: GaussianRegression, test: GaussianRegression) -> bool:
    mom, tm = test.moments(), train.moments()
    return all(np.array_equal(mom[k], tm[k]) for k in ("mu_w", "cov_w", "sigma"))


def _simulate(
    cell: dict,
    weights: dict,
    matched: dict | None,
    train: GaussianRegression,
    test: GaussianRegression,
    extras: bool,
    bayes: bool,
) -> dict[str, np.ndarray]:
    """Per-prompt arrays over ``n_test`` fresh test prompts from the cell's test stream.

    ``f``, ``b``, ``r``: noiseless target wᵀx_l, b_Att and ŵ_Attᵀx_l; with ``matched`` weights, ``matched_b``,
    ``matched_r`` of the layer with those weights; with ``bayes``, ``bayes``/``bayes_train``/``bayes_exact``: squared
    errors (less σ²) of test-Bayes (centred), train-Bayes (absent when the priors agree) and the exact (uncentred)
    posterior mean; with ``extras``, linear attention's squared errors (less σ²) and (b, r) of the
    query-not-a-key variant."""
    seed, d, l = int(cell["seed"]), int(cell["d"]), int(cell["l"])
    model = ICLAttention.from_weights(**weights)
    mods = {}
    if extras:
        mods = {
            "linear": ICLAttention.from_weights(**weights, attention="linear"),
            "noquery": ICLAttention.from_weights(**weights, query_key=False),
        }
    if matched is not None:
        mods["matched"] = ICLAttention.from_weights(**matched)
    mom, tm = test.moments(), train.moments()
    same_prior = _same_prior(train, test)
    out: dict[str, list] = {}
    gen = generator_for(
        seed, "test", cell["part"], d, l, cell["cov_x"], cell["cov_w"], cell["mu_x"], cell["mu_w"], cell["sigma_test"]
    )

    def put(key: str, value) -> None:
        out.setdefault(key, []).append(value.numpy() if isinstance(value, torch.Tensor) else value)

    with torch.no_grad():
        for batch in sample_prompts(test, int(cell["n_test"]), gen):
            f = (batch.w * batch.query_x).sum(-1)  # (B,): the target without its noise
            b, w = model.decompose(batch)  # (B,), (B, d)
            put("f", f)
            put("b", b)
            put("r", (w * batch.query_x).sum(-1))
            if matched is not None:
                bm, wm = mods["matched"].decompose(batch)
                put("matched_b", bm)
                put("matched_r", (wm * batch.query_x).sum(-1))
            if bayes:
                put("bayes", _bayes_sq_errors(batch, f, mom, True))
                if not same_prior:
                    put("bayes_train", _bayes_sq_errors(batch, f, tm, True))
                put("bayes_exact", _bayes_sq_errors(batch, f, mom, False))
            if extras:
                put("linear", (mods["linear"](batch) - f) ** 2)
                bq, wq = mods["noquery"].decompose(batch)
                put("noquery_b", bq)
                put("noquery_r", (wq * batch.query_x).sum(-1))
    if bayes and same_prior:
        out["bayes_train"] = out["bayes"]
    return {k: np.concatenate(v) for k, v in out.items()}


def _theory_metrics(coefs: theory.GCoefficients) -> dict:
    """a₁, a₂, c of Theorem 4.2, τ_opt of Theorem 4.3, G(1) and G(τ_opt)."""
    return {
        "a1": coefs.a1,
        "a2": coefs.a2,
        "c": coefs.c,
        "tau_opt_theory": coefs.tau_opt,
        "G1_theory": float(coefs.G(1.0)),
        "Gopt_theory": coefs.G_min,
    }


def _mc_metrics(sim: dict, taus: np.ndarray, tau_th: float, s2: float) -> dict:
    """Monte-Carlo error on the τ grid, its minimiser, the moments behind a₁, a₂, c, G(1) and G(τ_opt) with their
    standard errors, and the paired gain G(1) − G(τ_opt) on the same prompts."""
    f, b, r = sim["f"], sim["b"], sim["r"]
    e = f - b
    g_grid = np.array([np.mean((e - r / t) ** 2) for t in taus]) + s2  # (n_tau,), one τ at a time (memory)
    k = int(np.argmin(g_grid))
    e1, eopt = (e - r) ** 2 + s2, (e - r / tau_th) ** 2 + s2  # (N,) per-prompt errors at τ = 1 and τ_opt
    res = {
        "tau_grid": float(taus[k]),
        "G_grid": float(g_grid[k]),
        "G_curve_mc": [float(v) for v in g_grid],
        "mc_a2": float(np.mean(r * r)),
        "mc_a1": float(2 * np.mean(f * r)),
        "mc_c": float(np.mean(f * f) + s2),
        "mc_b2": float(np.mean(b * b)),
    }
    res["tau_opt_mc"], res["tau_opt_mc_se"] = ratio_se(r * r, e * r)  # exact minimiser of the MC error
    res["G1_mc"], res["G1_se"] = mean_se(e1, drop_nonfinite=False)[:2]
    res["Gopt_mc"], res["Gopt_se"] = mean_se(eopt, drop_nonfinite=False)[:2]
    res["gain_opt"], res["gain_opt_se"] = mean_se(e1 - eopt, drop_nonfinite=False)[:2]
    return res


def _bayes_metrics(sim: dict, s2: float, e1: np.ndarray) -> dict:
    """Bayes errors with their standard errors, and the model's excess over test-Bayes at τ = 1 (paired)."""
    res = {}
    for name, key in (("bayes_test", "bayes"), ("bayes_train", "bayes_train"), ("bayes_exact", "bayes_exact")):
        res[name], res[f"{name}_se"] = mean_se(sim[key] + s2, drop_nonfinite=False)[:2]
    res["excess1"], res["excess1_se"] = mean_se(e1 - sim["bayes"], drop_nonfinite=False)[:2]
    return res


def _harm_metrics(sim: dict, s2: float, e1: np.ndarray) -> dict:
    """The shift's harm at τ = 1: the error with the pretrained weights minus the error with the weights Eq. 11 gives
    for the test noise and task prior (same Σ̂, same prompts; §4.2 calls a shift harmful when matching test-Bayes
    needs other M or V)."""
    e1m = (sim["f"] - sim["matched_b"] - sim["matched_r"]) ** 2 + s2
    res = {}
    res["G1_matched"], res["G1_matched_se"] = mean_se(e1m, drop_nonfinite=False)[:2]
    res["harm1"], res["harm1_se"] = mean_se(e1 - e1m, drop_nonfinite=False)[:2]
    return res


def _isotropic_metrics(cell: dict) -> dict:
    """The isotropic τ_opt (note §4.5) and the Marchenko–Pastur Bayes error (note §4.7) where they apply."""
    d, l = int(cell["d"]), int(cell["l"])
    iso = cell["mu_w"] == 0 and cell["mu_w_tr"] == 0
    return {
        "tau_opt_iso": (
            theory.tau_opt_isotropic(d, l, cell["cov_x"], cell["cov_w"], cell["sigma_test"], cell["sigma_tr"])
            if iso
            else float("nan")
        ),
        "bayes_mp": (
            theory.bayes_error_mp(d, l - 1, cell["cov_x"], cell["cov_w"], cell["sigma_test"])
            if iso and cell["mu_x"] == 0 and cell["sigma_test"] > 0
            else float("nan")
        ),
    }


def _extras_metrics(sim: dict, s2: float) -> dict:
    """Linear attention at τ = 1 and the query-not-a-key variant at τ = 1 and at its own best τ (Remark 3.4)."""
    f, bq, rq = sim["f"], sim["noquery_b"], sim["noquery_r"]
    res = {}
    res["linear_mc"], res["linear_se"] = mean_se(sim["linear"] + s2, drop_nonfinite=False)[:2]
    res["noquery1_mc"], res["noquery1_se"] = mean_se((f - bq - rq) ** 2 + s2, drop_nonfinite=False)[:2]
    res["noquery_opt_mc"] = float(np.mean((f - bq) ** 2) + s2 - np.mean((f - bq) * rq) ** 2 / np.mean(rq * rq))
    return res


def evaluate_cell(cell: dict, taus: np.ndarray, extras: bool = False, bayes: bool = True) -> dict:
    """Metrics of one cell (see the module docstring). ``extras`` adds linear attention and the query-excluded
    variant (input-mean-shift panel, Remark 3.4); ``bayes=False`` skips the Bayes estimators (the check cells)."""
    train, test = train_distribution(cell), test_distribution(cell)
    sig_hat, l = pretraining_sigma_hat(cell, train), int(cell["l"])
    weights = _weights_for(sig_hat, l, train.moments())
    matched = None if _same_prior(train, test) else _weights_for(sig_hat, l, test.moments())
    coefs = theory.coefficients(weights, l, **test.moments())
    sim = _simulate(cell, weights, matched, train, test, extras, bayes)
    s2 = float(cell["sigma_test"]) ** 2
    e1 = (sim["f"] - sim["b"] - sim["r"]) ** 2 + s2
    res = {**_theory_metrics(coefs), **_mc_metrics(sim, taus, coefs.tau_opt, s2), **_isotropic_metrics(cell)}
    if matched is not None:
        res.update(_harm_metrics(sim, s2, e1))
    if bayes:
        res.update(_bayes_metrics(sim, s2, e1))
    if extras:
        res.update(_extras_metrics(sim, s2))
    return res
