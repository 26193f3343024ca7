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

from iclab.budget import check_call
from iclab.domain import array, broadcastable, finite_result, integer, nonnegative, number, positive
from iclab.errors import ConfigError

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


_GEMM_SECONDS = 1e-9  # CPU seconds per multiply-add of a NumPy kernel, rounded up (for refusing, not predicting)
_STEP_SECONDS = 2e-5  # CPU seconds of one approx_dynamics step at a few heads (Python overhead dominates)


def _c(L: float, sigma2: float) -> float:
    return (1.0 + sigma2) / L


def _dims(d: int, L: float, sigma2: float, integer_L: bool = False) -> tuple[int, float, float]:
    """``(d, L, sigma2)`` checked: d an integer >= 1, L a number > 0 (an integer >= 1 when ``integer_L``), σ² a
    finite number >= 0."""
    d = integer("d", d, why="the input dimension")
    L = integer("L", L, why="context pairs") if integer_L else positive("L", L, "the context length")
    return d, L, nonnegative("sigma2", sigma2, "the noise variance")


def _heads(omega: ArrayLike, mu: ArrayLike | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """ω and μ as flat finite arrays of one length H >= 1 (one entry per head)."""
    w = array("omega", np.ravel(omega) if np.ndim(omega) else omega, ndim=1, why="one logit coefficient per head")
    m = (
        None
        if mu is None
        else array("mu", np.ravel(mu) if np.ndim(mu) else mu, shape=(w.size,), why="one OV entry per head, as omega")
    )
    return w, m


def _xi(xi: ArrayLike, sigma2: ArrayLike, sigma_positive: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """ξ finite numbers > 0; σ² finite, >= 0 (> 0 when ``sigma_positive``); arrays that broadcast together (a 0-d
    array for a number, so a number in gives a number out)."""
    bound = {"above": 0} if sigma_positive else {"low": 0}
    s = array("sigma2", sigma2, min_size=0, why="the noise variance", **bound)
    x = array("xi", xi, above=0, min_size=0, why="the ratio d/L")
    broadcastable("sigma2", s, "xi", x)
    return x, s


def approx_loss(omega: ArrayLike, mu: ArrayLike, d: int, L: float, sigma2: float) -> float:
    r"""Approximate population loss :math:`\tilde{\mathcal L}(\omega,\mu)` of arXiv:2503.12734 (exp
    elementwise; docs/papers/multihead.md §3.5).

    Arguments: ``omega``, ``mu`` finite, one entry per head (H >= 1 each, the same H); ``d`` an integer >= 1;
    ``L`` a finite number > 0; ``sigma2`` a finite number >= 0."""
    (w, m), (d, L, sigma2) = _heads(omega, mu), _dims(d, L, sigma2)
    return finite_result(_loss(w, m, d, L, sigma2), omega=omega, mu=mu, d=d, L=L)


def _loss(w: np.ndarray, m: np.ndarray, d: int, L: float, sigma2: float) -> float:
    """:func:`approx_loss` of checked arguments (inf or NaN when it overflows)."""
    with np.errstate(over="ignore", invalid="ignore"):
        A = np.outer(w, w) + _c(L, sigma2) * np.exp(d * np.outer(w, w))  # (H, H)
        return float(1.0 + sigma2 - 2.0 * m @ w + m @ A @ m)


def approx_loss_grad(omega: ArrayLike, mu: ArrayLike, d: int, L: float, sigma2: float) -> tuple[np.ndarray, np.ndarray]:
    r"""``(∂L̃/∂ω, ∂L̃/∂μ)``: :math:`\partial_\mu=-2\omega+2A\mu`,
    :math:`\partial_\omega=-2\mu+2(\mu^\top\omega)\mu+2cd\,\mu\odot(E(\mu\odot\omega))`, E = exp(dωωᵀ),
    c = (1+σ²)/L (docs/papers/multihead.md §4.4).

    Arguments: as :func:`approx_loss`."""
    (w, m), (d, L, sigma2) = _heads(omega, mu), _dims(d, L, sigma2)
    return finite_result(_grad(w, m, d, L, sigma2), omega=omega, mu=mu, d=d, L=L)


def _grad(w: np.ndarray, m: np.ndarray, d: int, L: float, sigma2: float) -> tuple[np.ndarray, np.ndarray]:
    """:func:`approx_loss_grad` of checked arguments (inf or NaN entries when it overflows)."""
    with np.errstate(over="ignore", invalid="ignore"):
        E = np.exp(d * np.outer(w, w))  # (H, H)
        c = _c(L, sigma2)
        g_mu = -2.0 * w + 2.0 * (np.outer(w, w) + c * E) @ m
        g_w = -2.0 * m + 2.0 * (m @ w) * m + 2.0 * c * d * m * (E @ (m * w))
    return g_w, g_mu


def mu_star(omega: ArrayLike, d: int, L: float, sigma2: float) -> np.ndarray:
    r"""Optimal OV for fixed KQ (docs/papers/multihead.md §3.5):
    :math:`(\omega\omega^\top+\frac{1+\sigma^2}Le^{d\omega\omega^\top})^{-1}\omega`.

    Arguments: ``omega`` finite, H >= 1 entries; ``d``, ``L``, ``sigma2`` as :func:`approx_loss`."""
    (w, _), (d, L, sigma2) = _heads(omega), _dims(d, L, sigma2)
    with np.errstate(over="ignore", invalid="ignore"):
        A = np.outer(w, w) + _c(L, sigma2) * np.exp(d * np.outer(w, w))
    finite_result(A, omega=omega, d=d, L=L)
    return finite_result(np.linalg.lstsq(A, w, rcond=None)[0], omega=omega, d=d, L=L)


def mu_gamma(gamma: float, d: int, L: float, sigma2: float) -> float:
    r""":math:`\mu_\gamma=\frac{\gamma/2}{\gamma^2+\frac{1+\sigma^2}L\sinh(d\gamma^2)}`, the OV mass of each
    sign on the solution manifold (docs/papers/multihead.md §3.6, §4.5).

    Arguments: ``gamma`` a finite number > 0; ``d``, ``L``, ``sigma2`` as :func:`approx_loss`."""
    gamma, (d, L, sigma2) = positive("gamma", gamma, "the heads' |omega|"), _dims(d, L, sigma2)
    with np.errstate(over="ignore", invalid="ignore"):
        return finite_result(_mu_gamma(gamma, d, L, sigma2), gamma=gamma, d=d, L=L)


def _mu_gamma(gamma: float, d: int, L: float, sigma2: float) -> float:
    return float((gamma / 2.0) / (gamma**2 + _c(L, sigma2) * np.sinh(d * gamma**2)))


def solution_manifold(
    gamma: float, d: int, L: float, sigma2: float, n_plus: int = 1, n_minus: int = 1, n_dummy: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    r"""A point of :math:`\mathscr S_\gamma` (docs/papers/multihead.md §3.6): ``n_plus`` heads with ω = +γ
    sharing μ_γ equally, ``n_minus`` with ω = −γ sharing −μ_γ, and ``n_dummy`` heads with ω = μ = 0.
    Returns ``(omega, mu)``.

    Arguments: as :func:`mu_gamma`; ``n_plus``, ``n_minus`` integers in 1..10**6; ``n_dummy`` an integer in
    0..10**6."""
    n_plus, n_minus = integer("n_plus", n_plus, high=10**6), integer("n_minus", n_minus, high=10**6)
    n_dummy = integer("n_dummy", n_dummy, low=0, high=10**6)
    mg = mu_gamma(gamma, d, L, sigma2)
    omega = np.r_[np.full(n_plus, gamma), np.full(n_minus, -gamma), np.zeros(n_dummy)]
    mu = np.r_[np.full(n_plus, mg / n_plus), np.full(n_minus, -mg / n_minus), np.zeros(n_dummy)]
    return omega, mu


def approx_loss_at_manifold(gamma: float, d: int, L: float, sigma2: float) -> float:
    r""":math:`\tilde{\mathcal L}` on :math:`\mathscr S_\gamma` (same for any split of heads).

    Arguments: as :func:`mu_gamma`."""
    return approx_loss(*solution_manifold(gamma, d, L, sigma2), d, L, sigma2)


def eta_star(d: int, L: float, sigma2: float) -> float:
    r"""Optimal step of Thm 1 of arXiv:2503.12734, :math:`\eta^*=(1+(1+\sigma^2)d/L)^{-1}`; also the exact
    finite-L minimiser of the debiased-GD risk (docs/papers/multihead.md §3.7, §4.2).

    Arguments: ``d`` an integer >= 1; ``L`` a finite number > 0; ``sigma2`` a finite number >= 0."""
    d, L, sigma2 = _dims(d, L, sigma2)
    return 1.0 / (1.0 + (1.0 + sigma2) * d / L)


def gd_risk(eta: ArrayLike, d: int, L: int, sigma2: float, debiased: bool = True) -> np.ndarray:
    """Exact E(ŷ − y_q)² (noisy target, so it includes σ²) of one-step GD with step ``eta``; derived by iclab
    (module docstring; docs/papers/multihead.md §4.1–4.2).

    Arguments: ``eta`` finite numbers; ``d``, ``L`` integers >= 1; ``sigma2`` a finite number >= 0; ``debiased``
    a boolean."""
    eta, (d, L, sigma2) = array("eta", eta, min_size=0, why="step sizes"), _dims(d, L, sigma2, integer_L=True)
    if not isinstance(debiased, (bool, np.bool_)):
        raise ConfigError("debiased", debiased, "True or False")
    if debiased:
        risk = 1.0 + sigma2 - 2.0 * eta * (L - 1) / L + eta**2 * (L - 1) * (L + d + sigma2 * d) / L**2
    else:
        risk = 1.0 + sigma2 - 2.0 * eta + eta**2 * (1.0 + (d + 1) / L + sigma2 * d / L)
    return finite_result(risk, eta=eta, d=d, L=L, sigma2=sigma2)


def debiased_gd_risk_limit(xi: float, sigma2: float) -> float:
    r"""L → ∞, d/L → ξ: :math:`1+\sigma^2-\eta^*` with :math:`\eta^*=(1+(1+\sigma^2)\xi)^{-1}`
    (docs/papers/multihead.md §4.2).

    Arguments: ``xi`` finite numbers > 0; ``sigma2`` finite numbers >= 0 (arrays broadcast together)."""
    xi, sigma2 = _xi(xi, sigma2)
    return finite_result(1.0 + sigma2 - 1.0 / (1.0 + (1.0 + sigma2) * xi), xi=xi, sigma2=sigma2)


def bayes_risk_limit(xi: float, sigma2: float) -> float:
    r"""Limiting Bayes risk of Thm 1 of arXiv:2503.12734 (the authors' ``ridge_loss``; docs/papers/multihead.md
    §3.7): :math:`\frac12(\sigma^2+1-\xi^{-1}+\sqrt{(\sigma^2-1+\xi^{-1})^2+4\sigma^2})`, noisy target.

    Arguments: ``xi`` finite numbers > 0; ``sigma2`` finite numbers >= 0 (arrays broadcast together)."""
    xi, sigma2 = _xi(xi, sigma2)
    r = 1.0 / xi
    with np.errstate(over="ignore", invalid="ignore"):
        risk = 0.5 * (sigma2 + 1.0 - r + np.sqrt((sigma2 - 1.0 + r) ** 2 + 4.0 * sigma2))
    return finite_result(risk, xi=xi, sigma2=sigma2)


def bayes_risk(d: int, L: int, sigma2: float, n_mc: int = 4000, seed: int = 0) -> tuple[float, float]:
    r"""Finite-(d, L) Bayes risk :math:`\sigma^2+\sigma^2E\,\mathrm{tr}(X^\top X+\sigma^2dI)^{-1}` (posterior
    mean under β ~ N(0, I/d)); exact in β and ε, Monte Carlo over X (docs/papers/multihead.md §4.3). Returns
    ``(mean, standard error)``.

    Arguments: ``d``, ``L`` integers >= 1; ``sigma2`` a finite number > 0; ``n_mc`` an integer >= 2; ``seed`` an
    integer >= 0; the draws (``n_mc·L·d`` numbers and ``n_mc`` d×d eigenproblems) must fit this machine's memory
    and ``ICLAB_CELL_SECONDS_LIMIT``, or a ConfigError names the estimate and the limit before anything is drawn."""
    d, L, sigma2 = _dims(d, L, sigma2, integer_L=True)
    sigma2 = positive("sigma2", sigma2, "the Bayes posterior needs noise")
    n_mc, seed = integer("n_mc", n_mc, low=2, why="a standard error"), integer("seed", seed, low=0)
    check_call(
        {"n_mc": n_mc, "L": L, "d": d},
        memory=8.0 * n_mc * (L * d + 3 * d * d),
        seconds=_GEMM_SECONDS * n_mc * (L * d * d + 10 * d**3),
    )
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_mc, L, d))  # (M, L, d)
    ev = np.linalg.eigvalsh(np.einsum("mld,mle->mde", X, X))  # (M, d)
    vals = sigma2 + sigma2 * (1.0 / (ev + sigma2 * d)).sum(-1)  # (M,)
    return finite_result((float(vals.mean()), float(vals.std(ddof=1) / np.sqrt(n_mc))), sigma2=sigma2, d=d, L=L)


def bayes_ratio_bound(xi: float, sigma2: float) -> float:
    r"""Thm 1 of arXiv:2503.12734 (Bayes risk; docs/papers/multihead.md §3.7):
    :math:`\mathcal E(\hat y^{gd}(\eta^*))/\mathrm{Bayes}\le1+\sigma^{-2}\{(1+\xi\sigma^2)(1+\sigma^2+\xi^{-1})\}^{-1}`.

    Arguments: ``xi``, ``sigma2`` finite numbers > 0 (arrays broadcast together)."""
    xi, sigma2 = _xi(xi, sigma2, sigma_positive=True)
    with np.errstate(over="ignore", divide="ignore"):
        bound = 1.0 + 1.0 / (sigma2 * (1.0 + xi * sigma2) * (1.0 + sigma2 + 1.0 / xi))
    return finite_result(bound, xi=xi, sigma2=sigma2)


def bayes_ratio_limit(xi: float, sigma2: float) -> float:
    r"""The limiting ratio the bound of Thm 1 bounds: :func:`debiased_gd_risk_limit` / :func:`bayes_risk_limit`.
    With r = 1/ξ, s = σ²: the debiased-GD risk is s + (1+s)/(r+1+s), and the Bayes excess e = B − s solves
    e(e + s + r − 1) = s (docs/papers/multihead.md §4.9).

    Arguments: ``xi``, ``sigma2`` finite numbers > 0 (the Bayes risk is 0 without noise)."""
    xi, sigma2 = positive("xi", xi, "the ratio d/L"), positive("sigma2", sigma2, "the Bayes risk is 0 without noise")
    return finite_result(float(debiased_gd_risk_limit(xi, sigma2) / bayes_risk_limit(xi, sigma2)), xi=xi, sigma2=sigma2)


def dgd_conditional_risk(X: np.ndarray, eta: float | np.ndarray, sigma2: float) -> np.ndarray:
    r"""Risk of debiased GD with step ``eta`` given the context inputs ``X`` (``(M, L, d)``), exact in β ~ N(0, I/d),
    ε and x_q ~ N(0, I): :math:`\sigma^2+\frac1d\|A-I\|_F^2+\sigma^2\frac{\eta^2}{L^2}\mathrm{tr}\,X^\top CX`,
    :math:`A=\frac\eta LX^\top CX`, C the centring (docs/papers/multihead.md §4.10). ``eta`` a number or ``(M,)``.
    Returns ``(M,)``; its mean over X is :func:`gd_risk`.

    Arguments: ``X`` finite, shape (M, L, d) with M, L, d >= 1; ``eta`` a finite number or (M,) of them;
    ``sigma2`` a finite number >= 0."""
    X = array("X", X, ndim=3)
    M, L, d = X.shape
    nonnegative("sigma2", sigma2, "the noise variance")
    if np.ndim(eta):
        eta = array("eta", eta, shape=(M,), why="one step per draw of X")
    else:
        number("eta", eta)
    Xc = X - X.mean(1, keepdims=True)  # (M, L, d)  C X
    G = np.ascontiguousarray(Xc.transpose(0, 2, 1)) @ Xc  # (M, d, d)  Xᵀ C X (contiguous: BLAS)
    e = np.broadcast_to(np.asarray(eta, float), (M,))[:, None, None] / L  # (M, 1, 1)
    A = e * G - np.eye(d)
    risk = sigma2 + (A**2).sum((1, 2)) / d + sigma2 * e[:, 0, 0] ** 2 * np.trace(G, axis1=1, axis2=2)
    return finite_result(risk, X=X, eta=eta, sigma2=sigma2)


def bayes_conditional_risk(X: np.ndarray, sigma2: float) -> np.ndarray:
    r"""Bayes risk given ``X`` (``(M, L, d)``) under β ~ N(0, I/d), noisy target:
    :math:`\sigma^2+\sigma^2\,\mathrm{tr}(X^\top X+\sigma^2dI)^{-1}` (docs/papers/multihead.md §4.3). ``(M,)``.

    Arguments: ``X`` finite, shape (M, L, d) with M, L, d >= 1; ``sigma2`` a finite number > 0."""
    X = array("X", X, ndim=3)
    d = X.shape[-1]
    sigma2 = positive("sigma2", sigma2, "the Bayes posterior needs noise")
    ev = np.linalg.eigvalsh(np.ascontiguousarray(X.transpose(0, 2, 1)) @ X)  # (M, d)
    with np.errstate(divide="ignore"):
        return finite_result(sigma2 + sigma2 * (1.0 / (ev + sigma2 * d)).sum(-1), X=X, sigma2=sigma2)


def risk_ratio_mc(
    d: int, L: int, sigma2: float, n_draws: int = 4000, seed: int = 0, eta: float | None = None, chunk: int = 500
) -> dict[str, float]:
    r"""Risk of debiased GD at ``eta`` (default η*(d, L)) over the Bayes risk, at finite (d, L), both exact in β, ε and
    x_q given X and paired over ``n_draws`` Monte Carlo draws of X (docs/papers/multihead.md §4.10). Returns the
    means and standard errors of both risks, their ``ratio`` with its delta-method standard error ``ratio_se``,
    the closed form :func:`gd_risk` and Thm 1's bound at ξ = d/L.

    Arguments: ``d``, ``L`` integers >= 1; ``sigma2`` a finite number > 0; ``n_draws`` an integer >= 2; ``seed`` an
    integer >= 0; ``eta`` None or a finite number; ``chunk`` an integer >= 1; the draws must fit this machine's
    memory and ``ICLAB_CELL_SECONDS_LIMIT`` (refused before anything is drawn)."""
    d, L, sigma2 = _dims(d, L, sigma2, integer_L=True)
    sigma2 = positive("sigma2", sigma2, "the Bayes posterior needs noise")
    n_draws, seed = integer("n_draws", n_draws, low=2, why="a standard error"), integer("seed", seed, low=0)
    chunk = min(integer("chunk", chunk), n_draws)
    check_call(
        {"n_draws": n_draws, "L": L, "d": d},
        memory=8.0 * chunk * (4 * L * d + 6 * d * d),
        seconds=_GEMM_SECONDS * n_draws * (2 * L * d * d + 20 * d**3),
    )
    eta = eta_star(d, L, sigma2) if eta is None else number("eta", eta)
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
    and L̃ = 1 + σ² − 1/(1 + e(1+σ²)d/L).

    Arguments: ``d`` an integer >= 1; ``L`` a finite number > 0; ``sigma2`` a finite number >= 0."""
    d, L, sigma2 = _dims(d, L, sigma2)
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
    Returns ``{"step": (T,), "omega": (T, H), "mu": (T, H), "loss": (T,)}`` every ``every`` steps.

    Arguments: ``omega0``, ``mu0`` as :func:`approx_loss`'s ``omega``, ``mu``; ``d``, ``L``, ``sigma2`` as there;
    ``lr`` a finite number > 0; ``steps`` an integer >= 0; ``every`` an integer >= 1; the loop (``steps``
    iterations) and its record must fit ``ICLAB_CELL_SECONDS_LIMIT`` and memory, refused before the first step.
    A run that diverges (the loss leaves double precision) is a ConfigError naming ``lr``."""
    (w, m), (d, L, sigma2) = _heads(omega0, mu0), _dims(d, L, sigma2)
    lr, steps = positive("lr", lr, "a step size"), integer("steps", steps, low=0)
    every = integer("every", every)
    check_call(
        {"steps": steps, "omega0": f"{w.size} heads"},
        memory=(steps // every + 1) * (400 + 16 * w.size),
        seconds=_STEP_SECONDS * (steps + 1) * (1 + w.size**2 / 100),
    )
    w, m = w.copy(), m.copy()
    rec = {"step": [], "omega": [], "mu": [], "loss": []}
    for t in range(steps + 1):
        if t % every == 0:
            for k, v in (("step", t), ("omega", w.copy()), ("mu", m.copy()), ("loss", _loss(w, m, d, L, sigma2))):
                rec[k].append(v)
        gw, gm = _grad(w, m, d, L, sigma2)
        w, m = w - lr * gw, m - lr * gm
        if not (np.isfinite(w).all() and np.isfinite(m).all()):
            raise ConfigError("lr", lr, f"a step size at which GD stays finite (it diverged at step {t})")
    return finite_result({k: np.asarray(v) for k, v in rec.items()}, omega0=omega0, mu0=mu0, lr=lr)
