"""Weights & Biases backend: one W&B run per tracked run, grouped by ``group`` in project ``$WANDB_PROJECT``
(default ``iclab``). Offline use: ``WANDB_MODE=offline`` writes the run under ``dir`` (``wandb sync`` uploads it
later).

W&B's own step must only grow, while cells finish in any order (and a resumed run logs its stored cells first):
so every record carries its step as the metric ``step``, which :func:`wandb.define_metric` makes the x-axis of
every chart, and W&B counts its records itself. Attached files are copied into the run (W&B would otherwise link
to them, and a temporary file such as ``cells.csv`` is gone before an offline run is synced)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any, Mapping

from iclab.tracking._base import Tracker

__all__ = ["WandbTracker"]

STEP = "step"  # the metric every record carries its step in


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
        self.run.define_metric(STEP)
        self.run.define_metric("*", step_metric=STEP)

    def log_params(self, params: Mapping[str, Any]) -> None:
        self.run.config.update(dict(params), allow_val_change=True)

    def log_metrics(self, metrics: Mapping[str, float], step: int) -> None:
        self.run.log({**metrics, STEP: int(step)})

    def log_image(self, path: Path, key: str) -> None:
        self.run.log({key: self._wandb.Image(str(path))})

    def log_artifact(self, path: Path, folder: str = "") -> None:
        copy = Path(self.run.dir) / folder / Path(path).name
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, copy)
        self.run.save(str(copy), base_path=self.run.dir, policy="now")

    def finish(self, failed: bool = False) -> None:
        self.run.finish(exit_code=1 if failed else 0)

    def location(self) -> str:
        return f"wandb run {self.run.id} ({self.run.settings.mode}) in {self.run.dir}"
