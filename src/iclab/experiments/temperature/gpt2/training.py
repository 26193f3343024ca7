"""Training of the GPT-2 regressor of ``temperature-gpt2-regression`` with the iclab trainer: in-context linear
regression x ~ N(0, I_d), w ~ N(0, I_d), noise σ_tr, the setting of arXiv:2511.01292 §5.1 (docs/papers/temperature.md
§5.2).
"""

from __future__ import annotations

import torch

from iclab.data import GaussianRegression
from iclab.experiments.temperature.gpt2.config import TemperatureGPT2Config
from iclab.models import GPT2Regressor

__all__ = ["build_model", "query_loss", "train_models"]


def build_model(cfg: TemperatureGPT2Config) -> GPT2Regressor:
    """An untrained :class:`~iclab.models.GPT2Regressor` of the config's size (draws from torch's global RNG)."""
    return GPT2Regressor(cfg.d, cfg.n + 1, cfg.n_embd, cfg.n_layer, cfg.n_head)


def query_loss(model: GPT2Regressor, batch) -> torch.Tensor:
    """Squared error of the query prediction, divided by ``d`` (so predicting 0 scores ≈ 1 in training)."""
    return ((model(batch) - batch.target) ** 2).mean() / batch.x.shape[-1]


def _train_one(cfg: TemperatureGPT2Config, data: GaussianRegression, s: int) -> dict:
    """One model trained with the iclab trainer (Adam, cosine schedule, 5 % warm-up, grad clip 1)."""
    from iclab.train import TrainConfig, train

    torch.manual_seed(cfg.seed * 1000 + s)
    model = build_model(cfg)
    tc = TrainConfig(steps=cfg.steps, batch_size=cfg.batch_size, lr=cfg.lr, schedule="cosine",
                     warmup_steps=max(1, cfg.steps // 20), grad_clip=1.0, seed=cfg.seed * 1000 + s,
                     log_every=max(1, cfg.steps // 10), device=cfg.device, progress=True)
    res = train(model, data, query_loss, tc, desc=f"gpt2-regression seed {s}")
    return {"state": {k: v.cpu() for k, v in res.model.state_dict().items()}, "final_loss": res.final_loss,
            "seconds": res.seconds}


def train_models(cfg: TemperatureGPT2Config) -> dict:
    """``{seed index: {"state", "final_loss", "seconds"}}`` for ``train_seeds`` models (picklable state dicts)."""
    data = GaussianRegression(cfg.d, cfg.n, sigma=cfg.sigma_train, dtype=torch.float32)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a model this small gains nothing from a second thread
    try:
        return {s: _train_one(cfg, data, s) for s in range(cfg.train_seeds)}
    finally:
        torch.set_num_threads(threads)
