"""Weights & Biases backend: one W&B run per tracked run, grouped by ``group`` in project ``$WANDB_PROJECT``
(default ``iclab``). Offline use: ``WANDB_MODE=offline`` writes the run under ``dir`` (``wandb sync`` uploads it
later)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping

from iclab.tracking._base import Tracker

__all__ = ["WandbTracker"]


class WandbTracker(Tracker):
    """A W&B run (see the module docstring); ``log_dir`` is W&B's ``dir`` (default: W&B's own, ``./wandb``)."""

    name = "wandb"

    def __init__(self, run_name: str, *, group: str = "iclab", log_dir: str | Path | None = None):
        import wandb

        self._wandb = wandb
        if log_dir is not None:
            Path(log_dir).mkdir(parents=True, exist_ok=True)
        self.run = wandb.init(
            project=os.environ.get("WANDB_PROJECT", "iclab"),
            name=run_name,
            group=group,
            dir=None if log_dir is None else str(log_dir),
            reinit="create_new",
        )

    def log_params(self, params: Mapping[str, Any]) -> None:
        self.run.config.update(dict(params), allow_val_change=True)

    def log_metrics(self, metrics: Mapping[str, float], step: int) -> None:
        self.run.log(dict(metrics), step=int(step))

    def log_image(self, path: Path, key: str) -> None:
        self.run.log({key: self._wandb.Image(str(path))})

    def log_artifact(self, path: Path, folder: str = "") -> None:
        self.run.save(str(path), base_path=str(Path(path).parent), policy="now")

    def finish(self) -> None:
        self.run.finish()

    def location(self) -> str:
        return f"wandb run {self.run.id} ({self.run.settings.mode}) in {self.run.dir}"
