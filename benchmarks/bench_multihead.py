"""Training throughput (optimiser steps/s) of iclab's H-head regression attention (the model of arXiv:2503.12734,
docs/papers/multihead.md §3.2) vs the same-size model built from Hugging Face ``GPT2Model`` with read-in/read-out
linear layers (the way public ICL codebases, e.g. Garg et al. 2022, train), same batch, same context, same Adam
step, measured side by side in one process.

GPT-2 gets the same tokens (x_ℓ; y_ℓ) with the query's label slot 0, one layer, H heads of width d+1
(n_embd = H(d+1)), no dropout; its prediction is the read-out of the last (query) position.
"""

from __future__ import annotations

import os
import time

import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")


class GPT2Regressor(torch.nn.Module):
    def __init__(self, d: int, n: int, n_heads: int):
        super().__init__()
        from transformers import GPT2Config, GPT2Model

        D = d + 1
        width = n_heads * D
        cfg = GPT2Config(
            vocab_size=1,
            bos_token_id=0,
            eos_token_id=0,
            n_positions=n + 1,
            n_embd=width,
            n_layer=1,
            n_head=n_heads,
            resid_pdrop=0.0,
            embd_pdrop=0.0,
            attn_pdrop=0.0,
            use_cache=False,
        )
        self.read_in = torch.nn.Linear(D, width)
        self.gpt2 = GPT2Model(cfg)
        self.read_out = torch.nn.Linear(width, 1)

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        yy = y.clone()
        yy[:, -1] = 0.0
        z = torch.cat([x, yy.unsqueeze(-1)], -1)  # (B, n+1, d+1)
        h = self.gpt2(inputs_embeds=self.read_in(z)).last_hidden_state  # (B, n+1, width)
        return self.read_out(h[:, -1]).squeeze(-1)  # (B,)


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def _steps_per_s(model, batches, reps: int, device: str = "cpu") -> float:
    from iclab.models import regression_mse

    opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    def step(b):
        loss = regression_mse(model, b)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    for b in batches[:5]:  # warm-up
        step(b)
    _sync(device)
    t0 = time.perf_counter()
    for i in range(reps):
        step(batches[i % len(batches)])
    _sync(device)
    return reps / (time.perf_counter() - t0)


def main(device: str | None = None, smoke: bool = False) -> None:
    """Print steps/s side by side; ``device`` defaults to ``$ICLAB_BENCH_DEVICE`` or ``cpu``. ``smoke=True``: a few
    steps at H = 1, 2 (a check that it runs, in seconds)."""
    from iclab.data import GaussianRegression, generator_for
    from iclab.models import MultiHeadRegressionAttention

    device = device or os.environ.get("ICLAB_BENCH_DEVICE", "cpu")
    if device == "cpu":
        torch.set_num_threads(1)
    d, n, B, reps = 5, 40, 256, 150 if device == "cpu" else 500
    if smoke:
        B, reps = 16, 2
    data = GaussianRegression(d, n, cov_w=1.0 / d, sigma=0.1**0.5, dtype=torch.float32)
    batches = [data.sample(B, generator_for(0, "bench", i)).to(device) for i in range(10)]
    print(f"multihead training throughput on {device}, d={d}, n={n}, batch={B}, Adam (steps/s; CPU machine shared)")
    print(f"{'H':>3} {'iclab':>10} {'GPT2Model':>10} {'ratio':>7} {'params iclab/gpt2':>18}")
    for H in (1, 2) if smoke else (1, 2, 4, 8):
        torch.manual_seed(0)
        ours, ref = MultiHeadRegressionAttention(d, H).to(device), GPT2Regressor(d, n, H).to(device)
        rates = {"ours": [], "ref": []}
        for _ in range(1 if smoke else 3):  # interleave to share the machine's load fairly
            rates["ours"].append(_steps_per_s(ours, batches, reps, device))
            rates["ref"].append(_steps_per_s(ref, batches, reps, device))
        a, b = max(rates["ours"]), max(rates["ref"])
        pa, pb = sum(p.numel() for p in ours.parameters()), sum(p.numel() for p in ref.parameters())
        print(f"{H:>3} {a:>10.1f} {b:>10.1f} {a / b:>6.2f}x {pa:>8d}/{pb:<8d}")
    _sampling(data, B, 1 if smoke else 300)


def _sampling(data, batch: int, reps: int) -> None:
    """One training batch drawn as the trainer draws it (isotropic inputs: a diagonal covariance factor scales the
    coordinates) against the matrix product g @ Lᵀ it replaces (the same numbers), interleaved, median of 7."""
    import dataclasses
    import statistics

    product = dataclasses.replace(data)
    object.__setattr__(product, "_diagonal", {"cov_x": False, "cov_w": False})  # the baseline: always the product
    g = torch.Generator().manual_seed(0)
    times: dict[str, list[float]] = {"scaled": [], "product": []}
    for _ in range(7):
        for name, task in (("scaled", data), ("product", product)):
            t0 = time.process_time()
            for _ in range(reps):
                task.sample(batch, g)
            times[name].append((time.process_time() - t0) / reps * 1e6)
    a, b = statistics.median(times["scaled"]), statistics.median(times["product"])
    print(f"prompt draw (batch {batch}): diagonal scaling {a:.0f} µs, matrix product {b:.0f} µs ({a / b:.2f}x)")


if __name__ == "__main__":
    import sys

    main(smoke="--smoke" in sys.argv[1:])
