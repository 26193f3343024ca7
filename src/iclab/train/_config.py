"""Configuration of the one trainer (every field validated on construction)."""

from __future__ import annotations

from dataclasses import dataclass

from iclab.config import Config, check_choice, check_int, check_nonnegative, check_positive

__all__ = ["TrainConfig", "OPTIMIZERS", "SCHEDULES"]

OPTIMIZERS = ("adam", "adamw", "sgd")
SCHEDULES = ("constant", "cosine", "linear")


@dataclass(frozen=True)
class TrainConfig(Config):
    """Settings of :func:`iclab.train.train`.

    Fields:
        steps: maximum optimiser steps.
        batch_size: prompts per step (fresh ones each step, drawn from ``(seed, step)``).
        lr: peak learning rate.
        optimizer: ``adam`` | ``adamw`` | ``sgd``.
        weight_decay: L2 (adam/sgd) or decoupled (adamw) weight decay.
        momentum: SGD momentum.
        schedule: ``constant`` | ``cosine`` (to 0 at ``steps``) | ``linear`` (to 0 at ``steps``),
            after ``warmup_steps`` of linear warm-up.
        warmup_steps: linear warm-up steps.
        grad_clip: max global gradient norm, or None.
        seed: base seed; batches come from ``generator_for(seed, "train", step)``.
        pool_size: if set, a fixed pool of this many prompts is drawn once (finite data / task diversity)
            and each step takes a random minibatch of it.
        target_loss: stop once the logged (smoothed) training loss is at or below this value.
        log_every: steps between metric records (and probe calls).
        checkpoint_every: steps between checkpoints (0: only at the end and on interrupt).
        device: ``cpu``, ``cuda``, ``cuda:1`` …; nothing else in iclab hard-codes a device.
        progress: show a progress bar with loss and steps/s.
    """

    steps: int = 1000
    batch_size: int = 64
    lr: float = 1e-3
    optimizer: str = "adam"
    weight_decay: float = 0.0
    momentum: float = 0.0
    schedule: str = "constant"
    warmup_steps: int = 0
    grad_clip: float | None = None
    seed: int = 0
    pool_size: int | None = None
    target_loss: float | None = None
    log_every: int = 50
    checkpoint_every: int = 0
    device: str = "cpu"
    progress: bool = False

    def __post_init__(self) -> None:
        check_int("steps", self.steps, 1)
        check_int("batch_size", self.batch_size, 1)
        check_positive("lr", self.lr)
        check_choice("optimizer", self.optimizer, OPTIMIZERS)
        check_nonnegative("weight_decay", self.weight_decay)
        check_nonnegative("momentum", self.momentum)
        check_choice("schedule", self.schedule, SCHEDULES)
        check_int("warmup_steps", self.warmup_steps, 0)
        if self.grad_clip is not None:
            check_positive("grad_clip", self.grad_clip)
        check_int("seed", self.seed, 0)
        if self.pool_size is not None:
            check_int("pool_size", self.pool_size, 1)
        if self.target_loss is not None:
            check_nonnegative("target_loss", self.target_loss)
        check_int("log_every", self.log_every, 1)
        check_int("checkpoint_every", self.checkpoint_every, 0)
        if not isinstance(self.device, str) or not (self.device == "cpu" or self.device.startswith(("cuda", "mps"))):
            from iclab.errors import ConfigError

            raise ConfigError("device", self.device, "'cpu', 'cuda', 'cuda:N' or 'mps'")
