"""Optimal temperature of arXiv:2511.01292 (Theorems 4.2–4.3; docs/papers/temperature.md §3.6–3.7): τ_opt by
closed form vs by Monte-Carlo grid search at d = 50, and batched Monte-Carlo evaluation of G(τ) vs a per-prompt
Python loop (the direct implementation of the predictor of Eq. 10, docs/papers/temperature.md §4.2).

Both sides of each ratio run in this process on the same inputs; timings on a shared machine are noisy.
``main(smoke=True)`` runs the same at d = 5, l = 20 on a few prompts (a check that it runs, in seconds).
"""

from __future__ import annotations

import time

import numpy as np
import torch

from iclab.data import GaussianRegression, generator_for
from iclab.models import ICLAttention, bayes_mimicking_weights
from iclab.theory import temperature as T

SIZES = {"full": (50, 100, 2000, 200), "smoke": (5, 20, 40, 10)}  # d, l, prompts of the grid, prompts of the loop
TAUS = np.geomspace(0.25, 8.0, 41)


def _best(fn, repeat: int = 3) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def main(smoke: bool = False) -> None:
    d, l, n_grid, n_loop = SIZES["smoke" if smoke else "full"]
    weights = bayes_mimicking_weights(np.eye(d), l, 0.1)
    test = GaussianRegression(d=d, n=l - 1, cov_x=2.0, sigma=0.5)
    model = ICLAttention.from_weights(**weights)
    batch = test.sample(n_grid, generator_for(0, "bench", "temperature"))

    t_formula, tau_formula = _best(lambda: T.coefficients(weights, l, **test.moments()).tau_opt, repeat=20)

    def grid_search() -> float:
        with torch.no_grad():
            errs = [float(((model(batch, tau=float(t)) - batch.target) ** 2).mean()) for t in TAUS]
        return float(TAUS[int(np.argmin(errs))])

    t_grid, tau_grid = _best(grid_search, repeat=1)
    print(f"tau_opt at d={d}, l={l}, Σx=2I, σ=0.5:")
    print(f"  closed form (Thm 4.3)     : tau={tau_formula:.4f}  {t_formula * 1e3:8.2f} ms")
    print(f"  MC grid search ({len(TAUS)} τ × {n_grid} prompts): tau={tau_grid:.4f}  {t_grid * 1e3:8.2f} ms")
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
            w = (1 + (a - a.mean()) / 1.5) / l
            err += (float((X @ W["v21"] + W["v22"] * y) @ w) - float(batch.target[i])) ** 2
        return err / n

    def batched() -> float:
        with torch.no_grad():
            return float(((model(batch, tau=1.5) - batch.target) ** 2).mean())

    t_loop, g_loop = _best(lambda: loop(n_loop), repeat=1)
    t_batch, g_batch = _best(batched)
    with torch.no_grad():
        same = float(((model(batch.index(slice(0, n_loop)), tau=1.5) - batch.target[:n_loop]) ** 2).mean())
    rate_loop, rate_batch = n_loop / t_loop, n_grid / t_batch
    print(f"G(τ=1.5) Monte Carlo at d={d}, l={l}:")
    print(
        f"  per-prompt Python loop : {rate_loop:10,.0f} prompts/s (G on {n_loop} = {g_loop:.3f}; batched on the same "
        f"prompts {same:.3f})"
    )
    print(f"  batched torch          : {rate_batch:10,.0f} prompts/s (G on {n_grid} = {g_batch:.3f})")
    print(f"  ratio batched/loop     : {rate_batch / rate_loop:,.1f}x")


if __name__ == "__main__":
    import sys

    main(smoke="--smoke" in sys.argv[1:])
