r"""The approximate softmax against softmax with the same weights: what justifies the surrogate of
arXiv:2511.01292 (Demir & Doğan, Eq. 5; v2 Fig. 1), docs/papers/temperature.md §4.12, §6.9.

The paper analyses the first-order surrogate :math:`(1+s_i-\bar s)/l` of :math:`\mathrm{softmax}(s)_i`,
:math:`s=\mathbf a/\tau`, which is accurate only while the spread of the scores over the keys is small against τ.
At one (d, l), with the Lemma 4.1 weights of the experiment and the same test prompts, this cell evaluates both
layers — the normalisers ``approx_softmax`` and ``softmax`` of :mod:`iclab.attention` applied to the same query
scores :math:`a_i` and values :math:`u_i` — at every τ of a wide log grid, and at Eq. 15's τ_opt. It returns the
test error of each (averaged over the query noise, as in :mod:`.montecarlo`), the relative output discrepancy
:math:`\mathrm{RMS}(\hat y_{\rm soft}-\hat y_{\rm approx})/\mathrm{RMS}(\hat y_{\rm approx})`, the spread of the
scores, the τ that minimises the exact-softmax layer's error (with a bootstrap interval over prompts), and the
paired difference of the two errors at τ_opt. Because the softmax layer's output is a convex combination of values
scaled by v₂₂ = 1/d, it also returns the softmax layer's error with the best output scale γ at each τ,
:math:`\mathbb E f^2-(\mathbb E f\hat y)^2/\mathbb E\hat y^2+\sigma^2` (a least-squares read-out): whether the
scores themselves, not the value scale, are what the softmax layer cannot use.
"""

from __future__ import annotations

import numpy as np
import torch

from iclab.attention import normalise
from iclab.data import derive_seed, generator_for
from iclab.experiments.temperature.montecarlo import pretrained_weights, sample_prompts, test_distribution
from iclab.models import ICLAttention
from iclab.stats import bootstrap_argmin, mean_se
from iclab.theory import temperature as theory

__all__ = ["evaluate_surrogate", "TRACK_TOL"]

TRACK_TOL = 0.1  # "tracks": relative output discrepancy at most 10 %
_N_BOOT = 400


def _scores_values(cell: dict, weights: dict) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Query scores ``a (N, l)``, values ``u (N, l)`` and noiseless targets ``f (N,)`` on the cell's prompts."""
    model = ICLAttention.from_weights(**weights)
    gen = generator_for(int(cell["seed"]), "surrogate", int(cell["d"]), int(cell["l"]))
    parts: list[tuple] = []
    with torch.no_grad():
        for batch in sample_prompts(test_distribution(cell), int(cell["n_test"]), gen):
            a, u = model.scores_values(batch)  # (B, l), (B, l)
            parts.append((a, u, (batch.w * batch.query_x).sum(-1)))
    return tuple(torch.cat(p) for p in zip(*parts))  # type: ignore[return-value]


def _outputs(a: torch.Tensor, u: torch.Tensor, tau: float) -> tuple[np.ndarray, np.ndarray]:
    """Predictions ``(N,)`` of the approximate-softmax and the softmax layer at temperature ``tau``."""
    out = [(normalise(name, a, tau=float(tau)) * u).sum(-1).numpy() for name in ("approx_softmax", "softmax")]
    return out[0], out[1]


def _best_tau_interval(err: np.ndarray, taus: np.ndarray, seed: int) -> tuple[float, float]:
    """95 % percentile-bootstrap interval (over prompts) of the grid τ minimising the mean of ``err (n_tau, N)``."""
    best = bootstrap_argmin(err, taus, _N_BOOT, seed)
    return float(np.quantile(best, 0.025)), float(np.quantile(best, 0.975))


def _tracking_tau(diff: np.ndarray, taus: np.ndarray) -> float:
    """The smallest grid τ from which the relative output discrepancy stays within :data:`TRACK_TOL`."""
    ok = diff <= TRACK_TOL
    bad = np.flatnonzero(~ok)
    if not len(bad):
        return float(taus[0])
    return float(taus[bad[-1] + 1]) if bad[-1] + 1 < len(taus) else float("inf")


def _best_scale_error(f: np.ndarray, y: np.ndarray) -> float:
    """Mean of (f − γy)² at the least-squares γ = E[f y]/E[y²] (``nan`` when y is identically 0)."""
    yy = float(np.mean(y * y))
    return float(np.mean(f * f) - np.mean(f * y) ** 2 / yy) if yy > 0 else float("nan")


def evaluate_surrogate(cell: dict, taus: np.ndarray) -> dict:
    """Metrics of one (d, l) cell (module docstring); errors raw, with ``c`` = Tr(AB) + σ² to normalise them."""
    weights = pretrained_weights(cell)
    coefs = theory.coefficients(weights, int(cell["l"]), **test_distribution(cell).moments())
    a, u, f = _scores_values(cell, weights)
    s2, fn = float(cell["sigma_test"]) ** 2, f.numpy()
    err_a, err_s, diff, scaled = [], [], [], []
    for tau in taus:
        ya, ys = _outputs(a, u, tau)
        err_a.append((fn - ya) ** 2 + s2)
        err_s.append((fn - ys) ** 2 + s2)
        diff.append(float(np.sqrt(np.mean((ys - ya) ** 2) / np.mean(ya**2))))
        scaled.append(_best_scale_error(fn, ys) + s2)
    err_a, err_s, diff = np.array(err_a), np.array(err_s), np.array(diff)  # (n_tau, N), (n_tau, N), (n_tau,)
    ks = int(np.nanargmin(scaled))
    ya, ys = _outputs(a, u, coefs.tau_opt)
    ea, es = (fn - ya) ** 2 + s2, (fn - ys) ** 2 + s2
    k = int(np.argmin(err_s.mean(1)))
    lo, hi = _best_tau_interval(err_s, taus, derive_seed(int(cell["seed"]), "best-tau", int(cell["d"]), int(cell["l"])))
    res = {
        "c": coefs.c,
        "tau_opt_theory": coefs.tau_opt,
        "Gopt_theory": coefs.G_min,
        "score_spread": float((a - a.mean(-1, keepdim=True)).std(-1).mean()),
        "taus": [float(t) for t in taus],
        "G_approx_curve": [float(v) for v in err_a.mean(1)],
        "G_soft_curve": [float(v) for v in err_s.mean(1)],
        "out_diff_curve": [float(v) for v in diff],
        "tau_best_soft": float(taus[k]),
        "tau_best_soft_lo": lo,
        "tau_best_soft_hi": hi,
        "G_soft_best": float(err_s[k].mean()),
        "tau_best_approx": float(taus[int(np.argmin(err_a.mean(1)))]),
        "tau_track": _tracking_tau(diff, taus),
        "G_soft_scaled_curve": [float(v) for v in scaled],
        "G_soft_scaled_best": float(scaled[ks]),
        "tau_best_soft_scaled": float(taus[ks]),
        "out_diff_opt": float(np.sqrt(np.mean((ys - ya) ** 2) / np.mean(ya**2))),
    }
    res["Ga_opt_mc"], res["Ga_opt_se"] = mean_se(ea)[:2]
    res["Gs_opt_mc"], res["Gs_opt_se"] = mean_se(es)[:2]
    res["soft_minus_approx_opt"], res["soft_minus_approx_opt_se"] = mean_se(es - ea)[:2]
    return res
