r"""Closed forms of arXiv:2503.12734 (He, Pan, Chen, Yang, ICML 2025: multi-head softmax attention for
in-context linear regression), NumPy. Section numbers below are those of docs/papers/multihead.md.

Data (§3.1): x ~ N(0, I_d), β ~ N(0, I_d/d), y = βᵀx + ε, ε ~ N(0, σ²), noisy query target; L context pairs.
``omega``/``mu`` are the per-head logit coefficients ω ∈ ℝ^H and OV last entries μ ∈ ℝ^H (§3.3).

* :func:`approx_loss` — the paper's approximate loss (§3.5), :math:`\tilde{\mathcal L}=1+\sigma^2-2\mu^\top\omega
  +\mu^\top(\omega\omega^\top+\frac{1+\sigma^2}L e^{\odot d\,\omega\omega^\top})\mu`, its gradient (§4.4),
  :func:`mu_star` and gradient descent on it (:func:`approx_dynamics`, the two-stage dynamics of §3.5).
* :func:`mu_gamma`, :func:`solution_manifold` — the solution manifold :math:`\mathscr S_\gamma` (§3.6).
* :func:`gd_risk` — the exact finite-L risk of vanilla and debiased one-step GD, derived by iclab (§4.1–4.2;
  :math:`X^\top CX\sim W_d(L-1,I)`): vanilla :math:`1+\sigma^2-2\eta+\eta^2(1+\frac{d+1}L+\frac{\sigma^2d}L)`,
  debiased :math:`1+\sigma^2-2\eta\frac{L-1}L+\eta^2\frac{(L-1)(L+d+\sigma^2d)}{L^2}`, minimised exactly at
  :math:`\eta^*=(1+(1+\sigma^2)d/L)^{-1}` of the paper's Theorem 1.
* :func:`bayes_risk_limit` (ξ = d/L → const, Thm 1, §3.7), :func:`bayes_risk` (finite d, L; exact in β and ε,
  Monte Carlo over X, §4.3), :func:`bayes_ratio_bound` (Thm 1, Bayes part) and its derivation's pieces
  (:func:`bayes_ratio_limit`, §4.9), :func:`risk_ratio_mc` (finite d, L: debiased GD and Bayes risks, both exact
  in β, ε and x_q given X, paired over Monte Carlo draws of X, §4.10), :func:`single_head_nw` (§3.8, §4.6).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

__all__ = [
    "approx_loss",
    "approx_loss_grad",
    "mu_star",
    "mu_gamma",
    "solution_manifold",
    "eta_star",
    "approx_loss_at_manifold",
    "gd_risk",
    "debiased_gd_risk_limit",
    "bayes_risk_limit",
    "bayes_risk",
    "bayes_ratio_bound",
    "bayes_ratio_limit",
    "dgd_conditional_risk",
    "bayes_conditional_risk",
    "risk_ratio_mc",
    "single_head_nw",
    "approx_dynamics",
]


def _c(L: float, sigma2: float) -> float:
    return (1.0 + sigma2) / L


def approx_loss(omega: ArrayLike, mu: ArrayLike, d: int, L: float, sigma2: float) -> float:
    r"""Approximate population loss :math:`\tilde{\mathcal L}(\omega,\mu)` of arXiv:2503.12734 (exp
    elementwise; docs/papers/multihead.md §3.5)."""
    w, m = np.asarray(omega, float).ravel(), np.asarray(mu, float).ravel()
    A = np.outer(w, w) + _c(L, sigma2) * np.exp(d * np.outer(w, w))  # (H, H)
    return float(1.0 + sigma2 - 2.0 * m @ w + m @ A @ m)


def approx_loss_grad(omega: ArrayLike, mu: ArrayLike, d: int, L: float, sigma2: float) -> tuple[np.ndarray, np.ndarray]:
    r"""``(∂L̃/∂ω, ∂L̃/∂μ)``: :math:`\partial_\mu=-2\omega+2A\mu`,
    :math:`\partial_\omega=-2\mu+2(\mu^\top\omega)\mu+2cd\,\mu\odot(E(\mu\odot\omega))`, E = exp(dωωᵀ),
    c = (1+σ²)/L (docs/papers/multihead.md §4.4)."""
    w, m = np.asarray(omega, float).ravel(), np.asarray(mu, float).ravel()
    E = np.exp(d * np.outer(w, w))  # (H, H)
    c = _c(L, sigma2)
    g_mu = -2.0 * w + 2.0 * (np.outer(w, w) + c * E) @ m
    g_w = -2.0 * m + 2.0 * (m @ w) * m + 2.0 * c * d * m * (E @ (m * w))
    return g_w, g_mu


def mu_star(omega: ArrayLike, d: int, L: float, sigma2: float) -> np.ndarray:
    r"""Optimal OV for fixed KQ (docs/papers/multihead.md §3.5):
    :math:`(\omega\omega^\top+\frac{1+\sigma^2}Le^{d\omega\omega^\top})^{-1}\omega`."""
    w = np.asarray(omega, float).ravel()
    A = np.outer(w, w) + _c(L, sigma2) * np.exp(d * np.outer(w, w))
    return np.linalg.lstsq(A, w, rcond=None)[0]


def mu_gamma(gamma: float, d: int, L: float, sigma2: float) -> float:
    r""":math:`\mu_\gamma=\frac{\gamma/2}{\gamma^2+\frac{1+\sigma^2}L\sinh(d\gamma^2)}`, the OV mass of each
    sign on the solution manifold (docs/papers/multihead.md §3.6, §4.5)."""
    return float((gamma / 2.0) / (gamma**2 + _c(L, sigma2) * np.sinh(d * gamma**2)))


def solution_manifold(
    gamma: float, d: int, L: float, sigma2: float, n_plus: int = 1, n_minus: int = 1, n_dummy: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    r"""A point of :math:`\mathscr S_\gamma` (docs/papers/multihead.md §3.6): ``n_plus`` heads with ω = +γ
    sharing μ_γ equally, ``n_minus`` with ω = −γ sharing −μ_γ, and ``n_dummy`` heads with ω = μ = 0.
    Returns ``(omega, mu)``."""
    mg = mu_gamma(gamma, d, L, sigma2)
    omega = np.r_[np.full(n_plus, gamma), np.full(n_minus, -gamma), np.zeros(n_dummy)]
    mu = np.r_[np.full(n_plus, mg / n_plus), np.full(n_minus, -mg / n_minus), np.zeros(n_dummy)]
    return omega, mu


def approx_loss_at_manifold(gamma: float, d: int, L: float, sigma2: float) -> float:
    r""":math:`\tilde{\mathcal L}` on :math:`\mathscr S_\gamma` (same for any split of heads)."""
    return approx_loss(*solution_manifold(gamma, d, L, sigma2), d, L, sigma2)


def eta_star(d: int, L: float, sigma2: float) -> float:
    r"""Optimal step of Thm 1 of arXiv:2503.12734, :math:`\eta^*=(1+(1+\sigma^2)d/L)^{-1}`; also the exact
    finite-L minimiser of the debiased-GD risk (docs/papers/multihead.md §3.7, §4.2)."""
    return 1.0 / (1.0 + (1.0 + sigma2) * d / L)


def gd_risk(eta: ArrayLike, d: int, L: int, sigma2: float, debiased: bool = True) -> np.ndarray:
    """Exact E(ŷ − y_q)² (noisy target, so it includes σ²) of one-step GD with step ``eta``; derived by iclab
    (module docstring; docs/papers/multihead.md §4.1–4.2)."""
    eta = np.asarray(eta, float)
    if debiased:
        return 1.0 + sigma2 - 2.0 * eta * (L - 1) / L + eta**2 * (L - 1) * (L + d + sigma2 * d) / L**2
    return 1.0 + sigma2 - 2.0 * eta + eta**2 * (1.0 + (d + 1) / L + sigma2 * d / L)


def debiased_gd_risk_limit(xi: float, sigma2: float) -> float:
    r"""L → ∞, d/L → ξ: :math:`1+\sigma^2-\eta^*` with :math:`\eta^*=(1+(1+\sigma^2)\xi)^{-1}`
    (docs/papers/multihead.md §4.2)."""
    return 1.0 + sigma2 - 1.0 / (1.0 + (1.0 + sigma2) * xi)


def bayes_risk_limit(xi: float, sigma2: float) -> float:
    r"""Limiting Bayes risk of Thm 1 of arXiv:2503.12734 (the authors' ``ridge_loss``; docs/papers/multihead.md
    §3.7): :math:`\frac12(\sigma^2+1-\xi^{-1}+\sqrt{(\sigma^2-1+\xi^{-1})^2+4\sigma^2})`, noisy target."""
    r = 1.0 / xi
    return 0.5 * (sigma2 + 1.0 - r + np.sqrt((sigma2 - 1.0 + r) ** 2 + 4.0 * sigma2))


def bayes_risk(d: int, L: int, sigma2: float, n_mc: int = 4000, seed: int = 0) -> tuple[float, float]:
    r"""Finite-(d, L) Bayes risk :math:`\sigma^2+\sigma^2E\,\mathrm{tr}(X^\top X+\sigma^2dI)^{-1}` (posterior
    mean under β ~ N(0, I/d)); exact in β and ε, Monte Carlo over X (docs/papers/multihead.md §4.3). Returns
    ``(mean, standard error)``."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_mc, L, d))  # (M, L, d)
    ev = np.linalg.eigvalsh(np.einsum("mld,mle->mde", X, X))  # (M, d)
    vals = sigma2 + sigma2 * (1.0 / (ev + sigma2 * d)).sum(-1)  # (M,)
    return float(vals.mean()), float(vals.std(ddof=1) / np.sqrt(n_mc))


def bayes_ratio_bound(xi: float, sigma2: float) -> float:
    r"""Thm 1 of arXiv:2503.12734 (Bayes risk; docs/papers/multihead.md §3.7):
    :math:`\mathcal E(\hat y^{gd}(\eta^*))/\mathrm{Bayes}\le1+\sigma^{-2}\{(1+\xi\sigma^2)(1+\sigma^2+\xi^{-1})\}^{-1}`."""
    return 1.0 + 1.0 / (sigma2 * (1.0 + xi * sigma2) * (1.0 + sigma2 + 1.0 / xi))


def bayes_ratio_limit(xi: float, sigma2: float) -> float:
    r"""The limiting ratio the bound of Thm 1 bounds: :func:`debiased_gd_risk_limit` / :func:`bayes_risk_limit`.
    With r = 1/ξ, s = σ²: the debiased-GD risk is s + (1+s)/(r+1+s), and the Bayes excess e = B − s solves
    e(e + s + r − 1) = s (docs/papers/multihead.md §4.9)."""
    return float(debiased_gd_risk_limit(xi, sigma2) / bayes_risk_limit(xi, sigma2))


def dgd_conditional_risk(X: np.ndarray, eta: float | np.ndarray, sigma2: float) -> np.ndarray:
    r"""Risk of debiased GD with step ``eta`` given the context inputs ``X`` (``(M, L, d)``), exact in β ~ N(0, I/d),
    ε and x_q ~ N(0, I): :math:`\sigma^2+\frac1d\|A-I\|_F^2+\sigma^2\frac{\eta^2}{L^2}\mathrm{tr}\,X^\top CX`,
    :math:`A=\frac\eta LX^\top CX`, C the centring (docs/papers/multihead.md §4.10). ``eta`` a number or ``(M,)``.
    Returns ``(M,)``; its mean over X is :func:`gd_risk`."""
    M, L, d = X.shape
    Xc = X - X.mean(1, keepdims=True)  # (M, L, d)  C X
    G = np.ascontiguousarray(Xc.transpose(0, 2, 1)) @ Xc  # (M, d, d)  Xᵀ C X (contiguous: BLAS)
    e = np.broadcast_to(np.asarray(eta, float), (M,))[:, None, None] / L  # (M, 1, 1)
    A = e * G - np.eye(d)
    return sigma2 + (A**2).sum((1, 2)) / d + sigma2 * e[:, 0, 0] ** 2 * np.trace(G, axis1=1, axis2=2)


def bayes_conditional_risk(X: np.ndarray, sigma2: float) -> np.ndarray:
    r"""Bayes risk given ``X`` (``(M, L, d)``) under β ~ N(0, I/d), noisy target:
    :math:`\sigma^2+\sigma^2\,\mathrm{tr}(X^\top X+\sigma^2dI)^{-1}` (docs/papers/multihead.md §4.3). ``(M,)``."""
    d = X.shape[-1]
    ev = np.linalg.eigvalsh(np.ascontiguousarray(X.transpose(0, 2, 1)) @ X)  # (M, d)
    return sigma2 + sigma2 * (1.0 / (ev + sigma2 * d)).sum(-1)


def risk_ratio_mc(
    d: int, L: int, sigma2: float, n_draws: int = 4000, seed: int = 0, eta: float | None = None, chunk: int = 500
) -> dict[str, float]:
    r"""Risk of debiased GD at ``eta`` (default η*(d, L)) over the Bayes risk, at finite (d, L), both exact in β, ε and
    x_q given X and paired over ``n_draws`` Monte Carlo draws of X (docs/papers/multihead.md §4.10). Returns the
    means and standard errors of both risks, their ``ratio`` with its delta-method standard error ``ratio_se``,
    the closed form :func:`gd_risk` and Thm 1's bound at ξ = d/L."""
    eta = eta_star(d, L, sigma2) if eta is None else float(eta)
    rng = np.random.default_rng(seed)
    a, b = [], []
    for start in range(0, n_draws, chunk):
        X = rng.standard_normal((min(chunk, n_draws - start), L, d))  # (m, L, d)
        a.append(dgd_conditional_risk(X, eta, sigma2))
        b.append(bayes_conditional_risk(X, sigma2))
    a, b = np.concatenate(a), np.concatenate(b)  # (M,)
    ma, mb = a.mean(), b.mean()
    r = ma / mb
    cov = np.cov(a, b)  # (2, 2)
    var_r = (cov[0, 0] - 2 * r * cov[0, 1] + r**2 * cov[1, 1]) / (mb**2 * n_draws)
    return {
        "d": d,
        "L": L,
        "eta": eta,
        "dgd": float(ma),
        "dgd_se": float(np.sqrt(cov[0, 0] / n_draws)),
        "bayes": float(mb),
        "bayes_se": float(np.sqrt(cov[1, 1] / n_draws)),
        "ratio": float(r),
        "ratio_se": float(np.sqrt(max(var_r, 0.0))),
        "dgd_closed_form": float(gd_risk(eta, d, L, sigma2)),
        "bound": bayes_ratio_bound(d / L, sigma2),
        "limit_ratio": bayes_ratio_limit(d / L, sigma2),
        "n": n_draws,
    }


def single_head_nw(d: int, L: float, sigma2: float) -> dict[str, float]:
    """Single head (docs/papers/multihead.md §3.8, §4.6): ω = 1/√d, μ = √d/(1 + (1+σ²)e·d/L) = argmin_μ L̃,
    and L̃ = 1 + σ² − 1/(1 + e(1+σ²)d/L)."""
    k = np.e * (1.0 + sigma2) * d / L
    return {"omega": 1.0 / np.sqrt(d), "mu": np.sqrt(d) / (1.0 + k), "approx_loss": 1.0 + sigma2 - 1.0 / (1.0 + k)}


def approx_dynamics(
    omega0: ArrayLike,
    mu0: ArrayLike,
    d: int,
    L: float,
    sigma2: float,
    lr: float = 0.01,
    steps: int = 2000,
    every: int = 10,
) -> dict[str, np.ndarray]:
    r"""Gradient descent on :math:`\tilde{\mathcal L}` from ``(omega0, mu0)`` (docs/papers/multihead.md §3.5).
    Returns ``{"step": (T,), "omega": (T, H), "mu": (T, H), "loss": (T,)}`` every ``every`` steps."""
    w, m = np.asarray(omega0, float).copy(), np.asarray(mu0, float).copy()
    rec = {"step": [], "omega": [], "mu": [], "loss": []}
    for t in range(steps + 1):
        if t % every == 0:
            for k, v in (("step", t), ("omega", w.copy()), ("mu", m.copy()), ("loss", approx_loss(w, m, d, L, sigma2))):
                rec[k].append(v)
        gw, gm = approx_loss_grad(w, m, d, L, sigma2)
        w, m = w - lr * gw, m - lr * gm
    return {k: np.asarray(v) for k, v in rec.items()}
