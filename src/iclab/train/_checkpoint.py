"""Checkpoints of the one trainer: everything needed to continue a run bit-for-bit.

A checkpoint holds the model, optimiser and scheduler states, the number of steps done, the metric history,
the smoothed loss used by ``target_loss``, the global torch RNG states (for models with dropout) and the
training config, so that :func:`iclab.train.train` with ``resume=True`` gives the same final weights as an
uninterrupted run. It is written through :func:`iclab.files.atomic_write` (a temporary file beside it, fsync-ed and
renamed), so a kill or a full disk mid-write leaves the last good checkpoint, and the next save removes the
temporary file of a killed one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from iclab.errors import ConfigError, RunFolderError
from iclab.files import atomic_write

__all__ = ["CHECKPOINT", "save_checkpoint", "load_checkpoint", "RESUME_INVARIANT_FIELDS"]

CHECKPOINT = "checkpoint.pt"

# TrainConfig fields that may change between a run and its resumption (they do not change the weights).
# free on resume: progress, device, log_every, checkpoint_every, target_loss, and steps for a constant schedule
RESUME_INVARIANT_FIELDS = (
    "batch_size",
    "lr",
    "optimizer",
    "weight_decay",
    "momentum",
    "schedule",
    "warmup_steps",
    "grad_clip",
    "seed",
    "pool_size",
)


def save_checkpoint(
    path: Path,
    model: torch.nn.Module,
    opt,
    sched,
    step: int,
    history: list,
    smoothed: float | None,
    config: dict[str, Any],
) -> None:
    state = {
        "model": model.state_dict(),
        "optimizer": opt.state_dict(),
        "scheduler": sched.state_dict(),
        "step": step,
        "history": history,
        "smoothed": smoothed,
        "config": config,
        "rng_cpu": torch.get_rng_state(),
        "rng_cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None,
    }
    with atomic_write(path) as tmp:
        torch.save(state, tmp)


def load_checkpoint(
    path: Path, model: torch.nn.Module, opt, sched, config: dict[str, Any], device: torch.device
) -> tuple[int, list, float | None]:
    """Restore states in place; return ``(step, history, smoothed)``. Raises ConfigError when the checkpoint
    was written with a different optimisation setting (then resuming would not continue the same run)."""
    try:
        state = torch.load(path, map_location=device, weights_only=False)
    except Exception as exc:  # noqa: BLE001 - a corrupt file is a run-folder problem
        raise RunFolderError(f"cannot read checkpoint {path}: {exc}") from exc
    saved = state.get("config") or {}
    # a decaying schedule is a function of the total step count: changing ``steps`` would change every lr
    invariant = RESUME_INVARIANT_FIELDS + (("steps",) if saved.get("schedule", "constant") != "constant" else ())
    for key in invariant:
        if key in saved and saved[key] != config.get(key):
            raise ConfigError(
                key,
                config.get(key),
                message=(
                    f"cannot resume {path}: it was trained with {key}={saved[key]!r}, the config now says "
                    f"{config.get(key)!r}; use the same value or a new run folder"
                ),
            )
    model.load_state_dict(state["model"])
    opt.load_state_dict(state["optimizer"])
    sched.load_state_dict(state["scheduler"])
    if state.get("rng_cpu") is not None:
        torch.set_rng_state(state["rng_cpu"].cpu())
    if state.get("rng_cuda") is not None and torch.cuda.is_available():
        torch.cuda.set_rng_state_all([s.cpu() for s in state["rng_cuda"]])
    return int(state["step"]), list(state["history"]), state.get("smoothed")
