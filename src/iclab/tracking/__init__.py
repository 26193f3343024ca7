"""Experiment tracking: a run's config, per-cell metrics, figures and report — and training curves through the
trainer's callbacks — sent to MLflow, Weights & Biases or TensorBoard.

Each backend is an optional extra (``pip install 'iclab[mlflow]'``, ``[wandb]``, ``[tensorboard]``, or
``[tracking]`` for all three), imported only when a tracker is made::

    from iclab.tracking import make_tracker
    with make_tracker("mlflow", run_name="my-sweep", group="temperature") as tracker:
        train(model, data, loss_fn, cfg, callbacks=[tracker.train_callback()])

``iclab run NAME --tracker mlflow`` starts the tracked run before the first cell (:func:`log_run_start`), logs each
cell as it finishes (:func:`log_cell`) and the figures and report at the end (:func:`log_run_end`);
:func:`log_run_folder` logs a finished run folder after the fact. Where the records
go is each tool's own setting: ``MLFLOW_TRACKING_URI``, ``WANDB_MODE``/``WANDB_DIR``/``WANDB_PROJECT``, and the
TensorBoard log folder passed to :func:`make_tracker`.
"""

from iclab.tracking._base import TRACKERS as TRACKERS
from iclab.tracking._base import Tracker as Tracker
from iclab.tracking._base import flat_params as flat_params
from iclab.tracking._base import make_tracker as make_tracker
from iclab.tracking._base import require_backend as require_backend
from iclab.tracking._run_folder import cell_metrics as cell_metrics
from iclab.tracking._run_folder import log_cell as log_cell
from iclab.tracking._run_folder import log_run_end as log_run_end
from iclab.tracking._run_folder import log_run_folder as log_run_folder
from iclab.tracking._run_folder import log_run_start as log_run_start

__all__ = [
    "TRACKERS",
    "Tracker",
    "make_tracker",
    "require_backend",
    "flat_params",
    "cell_metrics",
    "log_run_folder",
    "log_run_start",
    "log_cell",
    "log_run_end",
]
