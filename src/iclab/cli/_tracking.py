"""``--tracker mlflow|wandb|tensorboard`` of ``iclab run`` and ``iclab reproduce``: once a run folder is complete,
its config, per-cell metrics, figures and report go to the tracker (:func:`iclab.tracking.log_run_folder`).

The backend is checked before anything runs; a tracker that fails afterwards loses nothing (the run folder is
complete, and rerunning the same command recomputes no cell and logs it again). TensorBoard's event files go to
``<runs root>/tensorboard/<run folder name>/<time>``; MLflow and W&B follow their own settings
(``MLFLOW_TRACKING_URI``, ``WANDB_MODE``, ``WANDB_DIR``, ``WANDB_PROJECT``).
"""

from __future__ import annotations

import time

import typer

from iclab.cli._global_options import logger
from iclab.errors import IclabError
from iclab.tracking import TRACKERS, log_run_folder, make_tracker, require_backend

__all__ = ["TRACKER_HELP", "check_tracker", "track_run"]

TRACKER_HELP = (
    "Also log the config, per-cell metrics, figures and report to a tracker: "
    + " | ".join(TRACKERS)
    + " (needs pip install 'iclab[NAME]')."
)


def check_tracker(name: str | None) -> None:
    """Refuse an unknown tracker, or one whose package is missing, before any cell runs."""
    if name is not None:
        require_backend(name)


def track_run(name: str | None, result) -> None:
    """Log the finished run ``result`` (a :class:`iclab.runs.RunResult`) to tracker ``name`` (None: nothing)."""
    if name is None:
        return
    folder = result.path
    log_dir = (
        folder.parent / "tensorboard" / folder.name / time.strftime("%Y%m%d-%H%M%S") if name == "tensorboard" else None
    )
    logger.info("logging %s to %s", folder, name)
    try:
        with make_tracker(name, folder.name, group=result.folder.meta.get("experiment"), log_dir=log_dir) as tracker:
            cells = log_run_folder(tracker, folder, result.folder.meta, result.results)
    except Exception as exc:  # noqa: BLE001 - the run folder is complete whatever the tracker does
        raise IclabError(
            f"--tracker {name} failed ({type(exc).__name__}: {exc}); the run folder {folder} is "
            "complete: rerun the same command to log it again (no cell is recomputed)"
        ) from None
    typer.echo(f"{name}: {cells} cells -> {tracker.location()}")
