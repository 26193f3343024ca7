"""Training of the GPT-2 regressor of ``temperature-gpt2-regression`` with the iclab trainer: in-context linear
regression x ~ N(0, I_d), w ~ N(0, I_d), noise σ_tr, the setting of arXiv:2511.01292 §5.1 (docs/papers/temperature.md
§5.2). Several models train in parallel on CPU, one process per core.
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor

import torch

from iclab.data import GaussianRegression, derive_seed, seeded_init
from iclab.experiments.temperature.gpt2.config import TemperatureGPT2Config
from iclab.models import GPT2Regressor

__all__ = ["build_model", "query_loss", "train_models"]


def build_model(cfg: TemperatureGPT2Config) -> GPT2Regressor:
    """An untrained :class:`~iclab.models.GPT2Regressor` of the config's size (draws from torch's global RNG)."""
    return GPT2Regressor(cfg.d, cfg.n + 1, cfg.n_embd, cfg.n_layer, cfg.n_head)


def query_loss(model: GPT2Regressor, batch) -> torch.Tensor:
    """Squared error of the query prediction, divided by ``d`` (so predicting 0 scores ≈ 1 in training)."""
    return ((model(batch) - batch.target) ** 2).mean() / batch.x.shape[-1]


def _train_one(cfg: TemperatureGPT2Config, s: int, progress: bool = True) -> dict:
    """One model trained with the iclab trainer (Adam, cosine schedule, 5 % warm-up, grad clip 1); one torch
    thread (a model this small gains nothing from a second one)."""
    from iclab.train import TrainConfig, train

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with seeded_init(cfg.seed, "init", s):
            model = build_model(cfg)
        data = GaussianRegression(cfg.d, cfg.n, sigma=cfg.sigma_train, dtype=torch.float32)
        tc = TrainConfig(
            steps=cfg.steps,
            batch_size=cfg.batch_size,
            lr=cfg.lr,
            schedule="cosine",
            warmup_steps=max(1, cfg.steps // 20),
            grad_clip=1.0,
            seed=derive_seed(cfg.seed, "train", s),
            log_every=max(1, cfg.steps // 10),
            device=cfg.device,
            progress=progress,
        )
        res = train(model, data, query_loss, tc, desc=f"gpt2-regression seed {s}")
    finally:
        torch.set_num_threads(threads)
    return {
        "state": {k: v.cpu() for k, v in res.model.state_dict().items()},
        "final_loss": res.final_loss,
        "seconds": res.seconds,
    }


def _parallel_workers(cfg: TemperatureGPT2Config) -> int:
    """How many models to train at once: one per CPU core on CPU (at most ``train_seeds``), one on a GPU."""
    if cfg.device != "cpu" or cfg.train_seeds < 2:
        return 1
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(cfg.train_seeds, cores))


def train_models(cfg: TemperatureGPT2Config) -> dict:
    """``{seed index: {"state", "final_loss", "seconds"}}`` for ``train_seeds`` models (picklable state dicts).

    On CPU the models train in parallel, one spawned process per core; every model seeds its own initialisation and
    batches, so the result is the same as training them one after another."""
    workers = _parallel_workers(cfg)
    if workers == 1:
        return {s: _train_one(cfg, s) for s in range(cfg.train_seeds)}
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
        futures = {s: pool.submit(_train_one, cfg, s, False) for s in range(cfg.train_seeds)}
        return {s: f.result() for s, f in futures.items()}
