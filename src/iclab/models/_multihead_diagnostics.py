r"""Diagnostics of the emergent structure of a trained :class:`MultiHeadRegressionAttention`: the KQ/OV patterns,
the solution manifold and the debiased-GD predictor of arXiv:2503.12734 (docs/papers/multihead.md §3.3, §3.6;
the measurement conventions are iclab's, §4.8 there).

With logit scale ``s`` and ``d`` inputs, per head h (single output):

* :math:`\omega^{(h)}` = mean of the first d diagonal entries of :math:`s\,KQ^{(h)}` (the coefficient of
  :math:`x_\ell^\top x_q` in the logit), :math:`\mu^{(h)}=OV^{(h)}_{d+1,d+1}`;
* KQ diagonal mass: :math:`\sum_i K_{ii}^2/\sum_{ij}K_{ij}^2` over the top-left d×d block; diagonal variance;
  sup-norm of the off-diagonal entries; homogeneity = std/mean of :math:`|\omega^{(h)}|` across non-dummy heads;
* OV last-entry mass :math:`\mu^2/\|OV_{d+1,:}\|^2`; zero-sum :math:`|\sum_h\mu^{(h)}|/\sum_h|\mu^{(h)}|`;
  sign matching; the effective :math:`(\gamma,\mu_+)` of the solution manifold and
  :math:`\eta_{\rm eff}=\sum_h\mu^{(h)}\omega^{(h)}`;
* distance of the model's predictions from debiased GD on held-out prompts.

A head is *dummy* when its contribution :math:`|\mu^{(h)}\omega^{(h)}|` is below ``dummy_frac`` (1 %) of the
largest one. Re-exported from :mod:`iclab.models`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from iclab.data import RegressionBatch
from iclab.estimators import debiased_gd
from iclab.models._multihead import MultiHeadRegressionAttention

__all__ = ["head_parameters", "head_pattern", "pattern_diagnostics", "distance_to_debiased_gd", "kq_block", "corr_with"]


def head_parameters(model: MultiHeadRegressionAttention) -> dict[str, np.ndarray]:
    """``{"omega": (H,), "mu": (H,), "kq": (H, d, d) = s·KQ top block, "ov": (H, N, D), "omega_vec": (H, d),
    "mu_mat": (H, N)}`` as float64 NumPy (``omega_vec``/``mu_mat`` are the per-coordinate / per-task versions
    used for multi-task models, docs/papers/multihead.md §3.10)."""
    d, N = model.d, model.n_out
    with torch.no_grad():
        kq = (model.kq * model.scale).double().cpu().numpy()  # (H, D, D)
        ov = model.ov.double().cpu().numpy()  # (H, N, D)
    top = kq[:, :d, :d]  # (H, d, d)
    omega_vec = np.diagonal(top, axis1=1, axis2=2)  # (H, d)
    mu_mat = np.stack([ov[:, n, d + n] for n in range(N)], axis=1)  # (H, N)
    return {
        "omega": omega_vec.mean(1),
        "mu": mu_mat[:, 0],
        "kq": top,
        "kq_full": kq,
        "ov": ov,
        "omega_vec": omega_vec,
        "mu_mat": mu_mat,
    }


def head_pattern(omega: np.ndarray, mu: np.ndarray, dummy_frac: float = 0.01) -> dict[str, Any]:
    r"""The part of the pattern summary that needs only the per-head :math:`\omega^{(h)}` and :math:`\mu^{(h)}`
    (``(H,)`` each; a model's, or one logged step of its training curves): the live heads (module docstring), the
    homogeneity, zero-sum and sign matching, the dummy / positive / negative head counts, :math:`\gamma` (mean
    :math:`|\omega|` of the live heads), :math:`\mu_\pm` and :math:`\eta_{\rm eff}=\sum_h\mu^{(h)}\omega^{(h)}`;
    ``live`` is the ``(H,)`` mask."""
    omega, mu = np.asarray(omega, dtype=float), np.asarray(mu, dtype=float)
    contrib = np.abs(omega * mu)  # (H,)
    live = contrib >= dummy_frac * max(contrib.max(), 1e-300)
    absw = np.abs(omega[live])
    pos, neg = live & (mu > 0), live & (mu < 0)
    return {
        "live": live,
        "kq_homogeneity": float(absw.std() / absw.mean()) if absw.size else float("nan"),
        "ov_zero_sum": float(abs(mu.sum()) / max(np.abs(mu).sum(), 1e-300)),
        "sign_match": float((np.sign(omega[live]) == np.sign(mu[live])).mean()),
        "n_dummy": int((~live).sum()),
        "n_plus": int(pos.sum()),
        "n_minus": int(neg.sum()),
        "gamma": float(absw.mean()) if absw.size else float("nan"),
        "mu_plus": float(mu[pos].sum()),
        "mu_minus": float(mu[neg].sum()),
        "eta_eff": float((mu * omega).sum()),
    }


def pattern_diagnostics(model: MultiHeadRegressionAttention, dummy_frac: float = 0.01) -> dict[str, Any]:
    """Summary of the KQ/OV patterns (module docstring); JSON-able floats plus per-head lists."""
    p = head_parameters(model)
    d = model.d
    omega, mu, top, ov = p["omega"], p["mu"], p["kq"], p["ov"][:, 0, :]
    heads = head_pattern(omega, mu, dummy_frac)
    live = heads.pop("live")
    tl = top[live]  # (H', d, d)
    diag = np.diagonal(tl, axis1=1, axis2=2)  # (H', d)
    off = tl - np.einsum("hi,ij->hij", diag, np.eye(d))
    return {
        "omega": omega.tolist(),
        "mu": mu.tolist(),
        "kq_diag_mass": float(((diag**2).sum(1) / np.maximum((tl**2).sum((1, 2)), 1e-300)).mean()),
        "kq_diag_var": float(diag.var(1).mean()),
        "kq_offdiag_sup": float(np.abs(off).max()) if d > 1 else 0.0,
        "kq_y_row_sup": float(np.abs(p["kq_full"][live, d, :d]).max()),
        "kq_homogeneity": heads.pop("kq_homogeneity"),
        "ov_last_mass": float((mu[live] ** 2 / np.maximum((ov[live] ** 2).sum(1), 1e-300)).mean()),
        **heads,  # zero-sum, sign matching, head counts, γ, μ±, η_eff (key order as before)
    }


def distance_to_debiased_gd(
    model: MultiHeadRegressionAttention, batch: RegressionBatch, eta: float | None = None
) -> dict[str, float]:
    """Mean squared distance between the model's ŷ_q and debiased GD on ``batch`` (held-out prompts).

    Returns ``mse`` and ``rel`` (= mse / E ŷ_gd²) at ``eta`` (default: the model's η_eff), and the same at the
    least-squares best step ``eta_fit`` (ŷ regressed on debiased GD with unit step, no intercept), with the
    heteroscedasticity-robust standard error ``eta_fit_se`` of that step over the prompts.
    """
    if eta is None:
        eta = pattern_diagnostics(model)["eta_eff"]
    with torch.no_grad():
        y_m = model(batch.x, batch.y).double()  # (B,)
    g = debiased_gd(batch, 1.0).double()  # (B,)  debiased GD with unit step
    gg = (g * g).sum()
    eta_fit = float((y_m * g).sum() / gg)
    resid = y_m - eta_fit * g  # (B,)
    eta_fit_se = float(((g * resid) ** 2).sum().sqrt() / gg)
    out = {"eta": float(eta), "eta_fit": eta_fit, "eta_fit_se": eta_fit_se}
    for key, e in (("", eta), ("_fit", eta_fit)):
        diff = ((y_m - e * g) ** 2).mean()
        out["mse" + key] = float(diff)
        out["rel" + key] = float(diff / ((e * g) ** 2).mean().clamp_min(1e-300))
    return out


def kq_block(model: MultiHeadRegressionAttention, dummy_frac: float = 0.01) -> np.ndarray:
    """Sign-aligned average of the live heads' top-left d×d blocks of s·KQ, ``(d, d)``: heads with μ < 0 are
    flipped, so for the anisotropic model (docs/papers/multihead.md §3.9) the result is ≈ γΩ with Ω ≈ Σ⁻¹."""
    p = head_parameters(model)
    contrib = np.abs(p["omega"] * p["mu"])
    live = contrib >= dummy_frac * max(contrib.max(), 1e-300)
    s = np.sign(p["mu"][live])
    return np.einsum("h,hij->ij", s, p["kq"][live]) / max(live.sum(), 1)


def corr_with(a: np.ndarray, b: np.ndarray) -> float:
    """Pearson correlation of the entries of two equally-shaped arrays."""
    a, b = np.asarray(a, float).ravel(), np.asarray(b, float).ravel()
    return float(np.corrcoef(a, b)[0, 1])
