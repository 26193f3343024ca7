"""Optimal temperature of arXiv:2511.01292 (Theorems 4.2–4.3; docs/papers/temperature.md §3.6–3.7): τ_opt by
closed form vs by Monte-Carlo grid search at d = 50, and batched Monte-Carlo evaluation of G(τ) vs a per-prompt
Python loop (the direct implementation of the predictor of Eq. 10, docs/papers/temperature.md §4.2).

Both sides of each ratio run in this process on the same inputs; timings on a shared machine are noisy.
"""

from __future__ import annotations

import time

import numpy as np
import torch

from iclab.data import GaussianRegression, generator_for
from iclab.models import ICLAttention, bayes_mimicking_weights
from iclab.theory import temperature as T

D, L, N_GRID, N_LOOP = 50, 100, 2000, 200
TAUS = np.geomspace(0.25, 8.0, 41)


def _best(fn, repeat: int = 3) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def main() -> None:
    weights = bayes_mimicking_weights(np.eye(D), L, 0.1)
    test = GaussianRegression(d=D, n=L - 1, cov_x=2.0, sigma=0.5)
    model = ICLAttention.from_weights(**weights)
    batch = test.sample(N_GRID, generator_for(0, "bench", "temperature"))

    t_formula, tau_formula = _best(lambda: T.coefficients(weights, L, **test.moments()).tau_opt, repeat=20)

    def grid_search() -> float:
        with torch.no_grad():
            errs = [float(((model(batch, tau=float(t)) - batch.target) ** 2).mean()) for t in TAUS]
        return float(TAUS[int(np.argmin(errs))])

    t_grid, tau_grid = _best(grid_search, repeat=1)
    print(f"tau_opt at d={D}, l={L}, Σx=2I, σ=0.5:")
    print(f"  closed form (Thm 4.3)     : tau={tau_formula:.4f}  {t_formula * 1e3:8.2f} ms")
    print(f"  MC grid search ({len(TAUS)} τ × {N_GRID} prompts): tau={tau_grid:.4f}  {t_grid * 1e3:8.2f} ms")
    print(
        f"  speed ratio grid/formula  : {t_grid / t_formula:,.0f}x;  |Δτ|/τ = {abs(tau_grid - tau_formula) / tau_formula:.3%}"
        f" (grid step {TAUS[1] / TAUS[0] - 1:.1%})"
    )

    # Batched MC of G(τ) vs a per-prompt Python loop (the predictor of Eq. 10, written out per prompt).
    W = model.weights()
    xs, ys = batch.x.numpy(), batch.y.numpy().copy()
    ys[:, -1] = 0.0

    def loop(n: int) -> float:
        err = 0.0
        for i in range(n):
            X, y = xs[i], ys[i]
            xq = X[-1]
            a = X @ W["M11"] @ xq + y * (W["m21"] @ xq)
            w = (1 + (a - a.mean()) / 1.5) / L
            err += (float((X @ W["v21"] + W["v22"] * y) @ w) - float(batch.target[i])) ** 2
        return err / n

    def batched() -> float:
        with torch.no_grad():
            return float(((model(batch, tau=1.5) - batch.target) ** 2).mean())

    t_loop, g_loop = _best(lambda: loop(N_LOOP), repeat=1)
    t_batch, g_batch = _best(batched)
    with torch.no_grad():
        same = float(((model(batch.index(slice(0, N_LOOP)), tau=1.5) - batch.target[:N_LOOP]) ** 2).mean())
    rate_loop, rate_batch = N_LOOP / t_loop, N_GRID / t_batch
    print(f"G(τ=1.5) Monte Carlo at d={D}, l={L}:")
    print(
        f"  per-prompt Python loop : {rate_loop:10,.0f} prompts/s (G on {N_LOOP} = {g_loop:.3f}; batched on the same "
        f"prompts {same:.3f})"
    )
    print(f"  batched torch          : {rate_batch:10,.0f} prompts/s (G on {N_GRID} = {g_batch:.3f})")
    print(f"  ratio batched/loop     : {rate_batch / rate_loop:,.1f}x")


if __name__ == "__main__":
    main()
