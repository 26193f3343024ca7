"""``--tracker mlflow|wandb|tensorboard`` of ``iclab run`` and ``iclab reproduce``: the tracked run starts before
the first cell with the run's settings (:func:`iclab.tracking.log_run_start`), each cell is logged as soon as it is
stored (:func:`iclab.tracking.log_cell`, so a long sweep shows in the tracker while it runs), and the figures,
report and counts follow once the run folder is complete (:func:`iclab.tracking.log_run_end`).

The backend's package is checked before anything runs; a tracker that cannot start stops the command before its
first cell, with the backend's whole message. A tracker that fails later loses nothing: the sweep goes on without
it, and rerunning the same command recomputes no cell and logs the run again. TensorBoard's event files go to
``<runs root>/tensorboard/<run folder name>/<time>``; MLflow and W&B follow their own settings
(``MLFLOW_TRACKING_URI``, ``WANDB_MODE``, ``WANDB_DIR``, ``WANDB_PROJECT``).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from iclab.cli._global_options import logger
from iclab.errors import IclabError
from iclab.runs import code_hash, iclab_version
from iclab.tracking import TRACKERS, Tracker, log_cell, log_run_end, log_run_start, make_tracker, require_backend

if TYPE_CHECKING:
    from iclab.runs import RunResult, Sweep

__all__ = ["TRACKER_HELP", "check_tracker", "start_tracking", "LiveTracking"]

TRACKER_HELP = (
    "Also log the config, each cell as it finishes, then the figures and report to a tracker: "
    + " | ".join(TRACKERS)
    + " (needs pip install 'iclab[NAME]')."
)


def check_tracker(name: str | None) -> None:
    """Refuse an unknown tracker, or one whose package is missing, before any cell runs."""
    if name is not None:
        require_backend(name)


class LiveTracking:
    """The tracked run of one run folder, fed while its sweep runs (``tracker`` None: nothing is logged).

    Pass :meth:`on_cell` to the run as its ``on_cell``; then call :meth:`close` with the finished run, or
    :meth:`abort` when the run stopped with an error."""

    def __init__(self, name: str | None, tracker: Tracker | None, folder: Path, n_cells: int):
        self.name, self.tracker, self.folder, self.n_cells = name, tracker, folder, n_cells
        self.logged = 0  # cells logged
        self.error: Exception | None = None  # the first error of the tracker: it logs nothing after it

    def on_cell(self, idx: int, row: dict[str, Any]) -> None:
        """Log a done cell at step ``idx`` (its index in the grid); failed cells show in the counts at the end."""
        if self.tracker is None or self.error is not None or row.get("_status") != "done":
            return
        try:
            log_cell(self.tracker, idx, row)
            self.logged += 1
        except Exception as exc:  # noqa: BLE001 - the sweep must go on whatever the tracker does
            self.error = exc
            typer.echo(
                f"warning: --tracker {self.name} stopped logging ({type(exc).__name__}: {exc}); the run goes on",
                err=True,
            )

    def close(self, result: RunResult) -> None:
        """Log the figures, report and counts of the finished ``result`` and finish the tracked run; an error of the
        tracker (now or during the sweep) is one IclabError saying the run folder is complete."""
        if self.tracker is None:
            return
        try:
            if self.error is None:
                log_run_end(self.tracker, result.path, result.results, self.n_cells)
            self.tracker.finish(failed=self.error is not None)
        except Exception as exc:  # noqa: BLE001 - the run folder is complete whatever the tracker does
            self.error = self.error or exc
        if self.error is not None:
            raise IclabError(
                f"--tracker {self.name} failed ({type(self.error).__name__}: {self.error}); the run folder "
                f"{self.folder} is complete: rerun the same command to log it again (no cell is recomputed)"
            ) from None
        typer.echo(f"{self.name}: {self.logged} cells -> {self.tracker.location()}")

    def abort(self) -> None:
        """Finish the tracked run as failed (the run stopped with an error, which the caller reports)."""
        if self.tracker is None:
            return
        try:
            self.tracker.finish(failed=True)
        except Exception:  # noqa: BLE001, S110 - the run's own error is the one worth reporting
            pass


def start_tracking(name: str | None, sweep: Sweep, folder: Path) -> LiveTracking:
    """Start tracker ``name`` (None: none) for the run of ``sweep`` in ``folder`` and log its settings, before any
    cell runs; a tracker that cannot start is one IclabError with the backend's whole message."""
    if name is None:
        return LiveTracking(None, None, folder, len(sweep.cells))
    log_dir = (
        folder.parent / "tensorboard" / folder.name / time.strftime("%Y%m%d-%H%M%S") if name == "tensorboard" else None
    )
    meta = {
        "experiment": sweep.name,
        "preset": sweep.preset,
        "config_hash": sweep.config_hash,
        "config": sweep.config.to_dict(),
        "iclab_version": iclab_version(),
        "code_hash": code_hash(),
    }
    logger.info("logging %s to %s", folder, name)
    tracker = None
    try:
        tracker = make_tracker(name, folder.name, group=sweep.name, log_dir=log_dir)
        log_run_start(tracker, meta)
    except Exception as exc:  # noqa: BLE001 - any failure of the backend, said whole, before any cell
        if tracker is not None:
            LiveTracking(name, tracker, folder, 0).abort()
        raise IclabError(f"--tracker {name} could not start ({type(exc).__name__}: {exc}); no cell was run") from None
    return LiveTracking(name, tracker, folder, len(sweep.cells))
