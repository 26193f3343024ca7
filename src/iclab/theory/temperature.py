r"""Closed forms of arXiv:2511.01292, Demir & Doğan, "Optimal attention temperature improves the robustness of
in-context learning under distribution shift in high dimensions": the high-dimensional ICL error G(τ) of Theorem 4.2
(v0/v1 Thm 4.6, Eqs. 12–14; docs/papers/temperature.md §3.6) for any test moments and any weights, τ_opt of
Theorem 4.3 (v0/v1 Thm 4.7, Eq. 15; note §3.7) and G_min (note §4.4), and two formulas iclab derived: the isotropic
τ_opt (note §4.5) and the Marchenko–Pastur Bayes error (note §4.7).

With :math:`\mathbf A=\boldsymbol\Sigma_x+\boldsymbol\mu_x\boldsymbol\mu_x^\top`,
:math:`\mathbf B=\boldsymbol\Sigma_w+\boldsymbol\mu_w\boldsymbol\mu_w^\top`,
:math:`\hat{\mathbf B}=v_{22}(\boldsymbol\mu_w\mathbf v_{21}^\top+\mathbf v_{21}\boldsymbol\mu_w^\top)+v_{22}^2\mathbf B`,
:math:`\mathbf F_1=(\boldsymbol\Sigma_x\hat{\mathbf B}+\frac1l(v_{22}^2\sigma^2+\mathrm{Tr}\,\hat{\mathbf B}\boldsymbol\Sigma_x)\mathbf I)\boldsymbol\Sigma_x`,
:math:`\mathbf F_2=(\boldsymbol\mu_w\mathbf v_{21}^\top+v_{22}\mathbf B)\boldsymbol\Sigma_x`:
:math:`\mathcal G(\tau)=a_2\tau^{-2}-a_1\tau^{-1}+c`, :math:`a_2=\mathrm{Tr}(\mathbf A\mathbf M_{11}^\top\mathbf F_1\mathbf M_{11})`,
:math:`a_1=\mathrm{Tr}(\mathbf A(\mathbf F_2\mathbf M_{11}+\mathbf M_{11}^\top\mathbf F_2^\top))`,
:math:`c=\mathrm{Tr}(\mathbf A\mathbf B)+\sigma^2`. All moments are the **test** ones. Pure NumPy functions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from iclab.errors import ConfigError

__all__ = [
    "GCoefficients",
    "coefficients",
    "G",
    "G_normalised",
    "tau_opt",
    "G_min",
    "tau_opt_isotropic",
    "mp_stieltjes",
    "bayes_error_mp",
]


@dataclass(frozen=True)
class GCoefficients:
    r""":math:`\mathcal G(\tau)=a_2/\tau^2-a_1/\tau+c` (Thm 4.2); ``c`` is the error of predicting 0."""

    a2: float
    a1: float
    c: float

    def G(self, tau: Any) -> np.ndarray | float:
        t = _check_tau(tau)
        return self.a2 / t**2 - self.a1 / t + self.c

    @property
    def tau_opt(self) -> float:
        return tau_opt(self)

    @property
    def G_min(self) -> float:
        return G_min(self)


def _check_tau(tau: Any) -> np.ndarray | float:
    if isinstance(tau, (bool, str)):
        raise ConfigError("tau", tau, "a finite temperature > 0")
    try:
        t = np.asarray(tau, dtype=float)
    except (TypeError, ValueError):
        raise ConfigError("tau", tau, "a finite temperature > 0 (a number or an array of them)") from None
    if not np.all(np.isfinite(t)) or np.any(t <= 0):
        bad = "" if t.size == 1 else f" (entry {float(t[~(np.isfinite(t) & (t > 0))].flat[0])!r} is not)"
        raise ConfigError("tau", tau, f"a finite temperature > 0{bad}")
    return t if t.ndim else float(t)


def _moments(d: int, mu_x, cov_x, mu_w, cov_w, sigma) -> tuple:
    from iclab.data import as_covariance, as_mean

    if not np.isfinite(sigma) or sigma < 0:
        raise ConfigError("sigma", sigma, "a finite noise level >= 0")
    return (
        as_mean("mu_x", mu_x, d),
        as_covariance("cov_x", cov_x, d),
        as_mean("mu_w", mu_w, d),
        as_covariance("cov_w", cov_w, d),
        float(sigma),
    )


def coefficients(
    weights: Mapping[str, Any],
    l: int,
    mu_x: Any = None,
    cov_x: Any = None,
    mu_w: Any = None,
    cov_w: Any = None,
    sigma: float = 0.0,
) -> GCoefficients:
    """a2, a1, c of Theorem 4.2 (Eqs. 12–14; note §3.6) for weights ``{"M11", "v21", "v22"[, "m21"]}``
    (``m21`` must be 0, Assumption 4.5 of v1, 4.1 of v2) and test moments in any form
    :class:`~iclab.data.GaussianRegression` accepts."""
    M = np.asarray(weights["M11"], dtype=float)
    d = M.shape[0]
    if M.shape != (d, d):
        raise ConfigError("M11", f"shape {M.shape}", "a square (d, d) matrix")
    v21 = np.asarray(weights["v21"], dtype=float).reshape(-1)
    if v21.shape != (d,):
        raise ConfigError("v21", f"shape {v21.shape}", f"shape ({d},)")
    if "m21" in weights and np.any(np.asarray(weights["m21"]) != 0):
        raise ConfigError("m21", "non-zero", "0 (Theorem 4.2 assumes m21 = 0, Assumption 4.5)")
    if not isinstance(l, (int, np.integer)) or l < 2:
        raise ConfigError("l", l, "an integer >= 2 (context pairs + query)")
    v22 = float(weights["v22"])
    mux, Sx, muw, Sw, sig = _moments(d, mu_x, cov_x, mu_w, cov_w, sigma)
    A = Sx + np.outer(mux, mux)  # (d, d)
    B = Sw + np.outer(muw, muw)  # (d, d)
    Bh = v22 * (np.outer(muw, v21) + np.outer(v21, muw)) + v22**2 * B  # (d, d)
    F1 = (Sx @ Bh + (v22**2 * sig**2 + np.trace(Bh @ Sx)) / l * np.eye(d)) @ Sx  # (d, d)
    F2 = (np.outer(muw, v21) + v22 * B) @ Sx  # (d, d)
    a2 = float(np.trace(A @ M.T @ F1 @ M))
    a1 = float(np.trace(A @ (F2 @ M + M.T @ F2.T)))
    return GCoefficients(a2=a2, a1=a1, c=float(np.trace(A @ B) + sig**2))


def G(tau: Any, coefs: GCoefficients) -> np.ndarray | float:
    r""":math:`\mathcal G(\tau)` of Theorem 4.2 (vectorised over ``tau``)."""
    return coefs.G(tau)


def G_normalised(tau: Any, coefs: GCoefficients) -> np.ndarray | float:
    r""":math:`\mathcal G(\tau)/(\mathrm{Tr}(\mathbf A\mathbf B)+\sigma^2)` (note §5.5): 1 = predicting 0."""
    return coefs.G(tau) / coefs.c


def tau_opt(coefs: GCoefficients) -> float:
    r""":math:`\tau_{\rm opt}=2a_2/a_1` (Thm 4.3, Eq. 15); ``inf`` when ``a1 <= 0`` (then G falls as τ grows)."""
    if coefs.a2 <= 0:
        raise ConfigError("a2", coefs.a2, "> 0 (Theorem 4.3 needs a1, a2 > 0)")
    return float("inf") if coefs.a1 <= 0 else 2.0 * coefs.a2 / coefs.a1


def G_min(coefs: GCoefficients) -> float:
    r""":math:`\mathcal G(\tau_{\rm opt})=c-a_1^2/(4a_2)` (note §4.4); ``c`` when ``a1 <= 0``."""
    return coefs.c if coefs.a1 <= 0 else coefs.c - coefs.a1**2 / (4.0 * coefs.a2)


def tau_opt_isotropic(
    d: int, l: int, a: float = 1.0, b: float = 1.0, sigma: float = 0.0, sigma_tr: float = 0.0
) -> float:
    r"""Isotropic τ_opt (derived in note §4.5): train x, w ~ N(0, I), noise σ_tr, Σ̂ ≈ I; test x ~ N(μx, aI),
    w ~ N(0, bI), noise σ: :math:`\tau_{\rm opt}=\frac{a(1+d/l)+\sigma^2/(bl)}{1+\sigma_{\rm tr}^2/l}`."""
    for name, v in (("a", a), ("b", b)):
        if not np.isfinite(v) or v <= 0:
            raise ConfigError(name, v, "a finite scale > 0")
    return (a * (1 + d / l) + sigma**2 / (b * l)) / (1 + sigma_tr**2 / l)


def mp_stieltjes(z: complex | float, gamma: float) -> float:
    r"""Marchenko–Pastur Stieltjes transform :math:`m_\gamma(z)` (note §4.7) for real ``z < 0``."""
    t = 1 - gamma - z
    return float((t - np.sqrt(t * t - 4 * gamma * z)) / (2 * gamma * z))


def bayes_error_mp(d: int, n: int, a: float = 1.0, b: float = 1.0, sigma: float = 0.1) -> float:
    r"""Isotropic Bayes error (derived in note §4.7): μx = μw = 0, Σx = aI, Σw = bI, ``n`` context pairs:
    :math:`\sigma^2+\frac{abd}{s}m_\gamma(-1/s)`, γ = d/n, s = abn/σ² (needs σ > 0)."""
    if sigma <= 0:
        raise ConfigError("sigma", sigma, "> 0 (the Marchenko–Pastur form needs noise)")
    gamma, s = d / n, a * b * n / sigma**2
    return sigma**2 + a * b * d / s * mp_stieltjes(-1.0 / s, gamma)
