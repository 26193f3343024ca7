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

from iclab.domain import array, finite_result, integer, nonnegative, number, positive
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
        with np.errstate(over="ignore"):
            g = self.a2 / t**2 - self.a1 / t + self.c
        return finite_result(g, tau=tau, a2=self.a2, a1=self.a1, c=self.c)

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
    return t if t.ndim else t[()]  # a NumPy scalar: its powers overflow to inf (refused), never OverflowError


def _moments(d: int, mu_x, cov_x, mu_w, cov_w, sigma) -> tuple:
    from iclab.data import as_covariance, as_mean

    sigma = nonnegative("sigma", sigma, "a noise level")
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
    :class:`~iclab.data.GaussianRegression` accepts.

    Arguments: ``weights`` a mapping with a finite square ``M11 (d, d)``, ``v21 (d,)`` and a finite number ``v22``;
    ``l`` an integer >= 2; ``sigma`` a finite number >= 0; the test moments as ``GaussianRegression`` takes them:
    ``mu_x``, ``mu_w`` None (0), a number (every coordinate) or a ``(d,)`` vector, finite; ``cov_x``, ``cov_w`` None
    (I), a number c (c·I), a ``(d,)`` diagonal or a ``(d, d)`` matrix, finite, symmetric and positive definite."""
    if not isinstance(weights, Mapping) or not {"M11", "v21", "v22"} <= set(weights):
        raise ConfigError("weights", weights, "a mapping with keys 'M11', 'v21' and 'v22'")
    M = array("M11", weights["M11"], ndim=2)
    d = M.shape[0]
    M = array("M11", M, shape=(d, d), why="a square (d, d) matrix")
    v21 = array("v21", np.asarray(weights["v21"]).reshape(-1), shape=(d,))
    if "m21" in weights and np.any(np.asarray(weights["m21"]) != 0):
        raise ConfigError("m21", "non-zero", "0 (Theorem 4.2 assumes m21 = 0, Assumption 4.5)")
    l = integer("l", l, low=2, why="context pairs + query")
    v22 = float(array("v22", weights["v22"], ndim=0))
    mux, Sx, muw, Sw, sig = _moments(d, mu_x, cov_x, mu_w, cov_w, sigma)
    A = Sx + np.outer(mux, mux)  # (d, d)
    B = Sw + np.outer(muw, muw)  # (d, d)
    Bh = v22 * (np.outer(muw, v21) + np.outer(v21, muw)) + v22**2 * B  # (d, d)
    F1 = (Sx @ Bh + (v22**2 * sig**2 + np.trace(Bh @ Sx)) / l * np.eye(d)) @ Sx  # (d, d)
    F2 = (np.outer(muw, v21) + v22 * B) @ Sx  # (d, d)
    a2 = float(np.trace(A @ M.T @ F1 @ M))
    a1 = float(np.trace(A @ (F2 @ M + M.T @ F2.T)))
    return GCoefficients(a2=a2, a1=a1, c=float(np.trace(A @ B) + sig**2))


def _check_coefs(coefs: Any) -> GCoefficients:
    """``coefs``; a ConfigError unless it is a :class:`GCoefficients` with finite a2, a1, c."""
    if not isinstance(coefs, GCoefficients):
        raise ConfigError("coefs", coefs, "a GCoefficients (from coefficients())")
    for name in ("a2", "a1", "c"):
        array(name, getattr(coefs, name), ndim=0)
    return coefs


def G(tau: Any, coefs: GCoefficients) -> np.ndarray | float:
    r""":math:`\mathcal G(\tau)` of Theorem 4.2 (vectorised over ``tau``).

    Arguments: ``tau`` finite numbers > 0; ``coefs`` a :class:`GCoefficients` with finite entries."""
    return _check_coefs(coefs).G(tau)


def G_normalised(tau: Any, coefs: GCoefficients) -> np.ndarray | float:
    r""":math:`\mathcal G(\tau)/(\mathrm{Tr}(\mathbf A\mathbf B)+\sigma^2)` (note §5.5): 1 = predicting 0.

    Arguments: ``tau`` finite numbers > 0; ``coefs`` a :class:`GCoefficients` with finite entries and ``c > 0``."""
    if _check_coefs(coefs).c <= 0:
        raise ConfigError("c", coefs.c, "> 0 (the error of predicting 0 normalises G)")
    return coefs.G(tau) / coefs.c


def tau_opt(coefs: GCoefficients) -> float:
    r""":math:`\tau_{\rm opt}=2a_2/a_1` (Thm 4.3, Eq. 15); ``inf`` when ``a1 <= 0`` (then G falls as τ grows).

    Arguments: ``coefs`` a :class:`GCoefficients` with finite entries and ``a2 > 0``."""
    _check_coefs(coefs)
    if coefs.a2 <= 0:
        raise ConfigError("a2", coefs.a2, "> 0 (Theorem 4.3 needs a1, a2 > 0)")
    return float("inf") if coefs.a1 <= 0 else 2.0 * coefs.a2 / coefs.a1


def G_min(coefs: GCoefficients) -> float:
    r""":math:`\mathcal G(\tau_{\rm opt})=c-a_1^2/(4a_2)` (note §4.4); ``c`` when ``a1 <= 0``.

    Arguments: ``coefs`` a :class:`GCoefficients` with finite entries and ``a2 > 0``."""
    tau_opt(coefs)  # the same rule
    return coefs.c if coefs.a1 <= 0 else coefs.c - coefs.a1**2 / (4.0 * coefs.a2)


def tau_opt_isotropic(
    d: int, l: int, a: float = 1.0, b: float = 1.0, sigma: float = 0.0, sigma_tr: float = 0.0
) -> float:
    r"""Isotropic τ_opt (derived in note §4.5): train x, w ~ N(0, I), noise σ_tr, Σ̂ ≈ I; test x ~ N(μx, aI),
    w ~ N(0, bI), noise σ: :math:`\tau_{\rm opt}=\frac{a(1+d/l)+\sigma^2/(bl)}{1+\sigma_{\rm tr}^2/l}`.

    Arguments: ``d``, ``l`` integers >= 1; ``a``, ``b`` finite numbers > 0; ``sigma``, ``sigma_tr`` finite numbers
    >= 0."""
    d, l = integer("d", d), integer("l", l)
    a, b = positive("a", a, "a scale"), positive("b", b, "a scale")
    sigma, sigma_tr = nonnegative("sigma", sigma), nonnegative("sigma_tr", sigma_tr)
    tau = (a * (1 + d / l) + sigma**2 / (b * l)) / (1 + sigma_tr**2 / l)
    return finite_result(tau, d=d, l=l, a=a, b=b, sigma=sigma, sigma_tr=sigma_tr)


def mp_stieltjes(z: complex | float, gamma: float) -> float:
    r"""Marchenko–Pastur Stieltjes transform :math:`m_\gamma(z)` (note §4.7) for real ``z < 0``.

    Arguments: ``z`` a finite number < 0; ``gamma`` a finite number > 0."""
    z = number("z", z, below=0)
    gamma = positive("gamma", gamma, "the aspect ratio d/n")
    with np.errstate(over="ignore", invalid="ignore"):
        t = np.float64(1 - gamma - z)
        m = float((t - np.sqrt(t * t - 4 * gamma * z)) / (2 * gamma * z))
    return finite_result(m, z=z, gamma=gamma)


def bayes_error_mp(d: int, n: int, a: float = 1.0, b: float = 1.0, sigma: float = 0.1) -> float:
    r"""Isotropic Bayes error (derived in note §4.7): μx = μw = 0, Σx = aI, Σw = bI, ``n`` context pairs:
    :math:`\sigma^2+\frac{abd}{s}m_\gamma(-1/s)`, γ = d/n, s = abn/σ² (needs σ > 0).

    Arguments: ``d``, ``n`` integers >= 1; ``a``, ``b``, ``sigma`` finite numbers > 0."""
    d, n = integer("d", d), integer("n", n)
    a, b = positive("a", a, "a scale"), positive("b", b, "a scale")
    sigma = positive("sigma", sigma, "the Marchenko–Pastur form needs noise")
    with np.errstate(over="ignore", under="ignore"):
        gamma, s = d / n, float(np.float64(a) * b * n / np.float64(sigma) ** 2)
    if not 0 < s < np.inf:
        finite_result(np.inf, d=d, n=n, a=a, b=b, sigma=sigma)  # raises: s leaves double precision
    return finite_result(sigma**2 + a * b * d / s * mp_stieltjes(-1.0 / s, gamma), d=d, n=n, a=a, b=b, sigma=sigma)
