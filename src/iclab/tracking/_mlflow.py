"""MLflow backend: one MLflow run per tracked run, in the MLflow experiment named by ``group``.

The store is MLflow's own setting (``MLFLOW_TRACKING_URI``; MLflow's default is ``sqlite:///mlflow.db`` in the
working folder). A file store (``file:`` URI or a plain path) is kept by MLflow 3 behind ``MLFLOW_ALLOW_FILE_STORE``;
naming one is taken as asking for it, so the switch is set to ``true`` unless it is set already. Metrics are sent
in batches through ``MlflowClient.log_batch`` (at most 1000 per call), and at once on :meth:`MLflowTracker.flush`.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, Mapping
from urllib.parse import urlparse

from iclab.tracking._base import Tracker

__all__ = ["MLflowTracker"]

_BATCH = 1000  # MLflow's limit of metrics per log_batch call
_PARAM_BATCH = 100  # ... and of params
_PARAM_CHARS = 6000  # longest param value MLflow stores


class MLflowTracker(Tracker):
    """A run in MLflow's tracking store (see the module docstring)."""

    name = "mlflow"

    def __init__(self, run_name: str, *, group: str = "iclab", log_dir: str | Path | None = None):
        import mlflow
        from mlflow.entities import Metric, Param

        self._Metric, self._Param = Metric, Param
        self.uri = mlflow.get_tracking_uri()
        if urlparse(self.uri).scheme in ("", "file"):  # MLflow 3 refuses a file store without this switch
            os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
        self.client = mlflow.MlflowClient(self.uri)
        experiment = os.environ.get("MLFLOW_EXPERIMENT_NAME", group)
        found = self.client.get_experiment_by_name(experiment)
        experiment_id = found.experiment_id if found else self.client.create_experiment(experiment)
        self.run_id = self.client.create_run(experiment_id, run_name=run_name, tags={"iclab.group": group}).info.run_id
        self._pending: list[Any] = []

    def log_params(self, params: Mapping[str, Any]) -> None:
        items = [self._Param(k, str(v)[:_PARAM_CHARS]) for k, v in params.items()]
        for i in range(0, len(items), _PARAM_BATCH):
            self.client.log_batch(self.run_id, params=items[i : i + _PARAM_BATCH])

    def log_metrics(self, metrics: Mapping[str, float], step: int) -> None:
        now = int(time.time() * 1000)
        self._pending += [self._Metric(k, float(v), now, int(step)) for k, v in metrics.items()]
        if len(self._pending) >= _BATCH:
            self.flush()

    def flush(self) -> None:
        while self._pending:
            batch, self._pending = self._pending[:_BATCH], self._pending[_BATCH:]
            self.client.log_batch(self.run_id, metrics=batch)

    def log_image(self, path: Path, key: str) -> None:
        self.log_artifact(path, str(Path(key).parent) if "/" in key else "")

    def log_artifact(self, path: Path, folder: str = "") -> None:
        self.client.log_artifact(self.run_id, str(path), folder or None)

    def finish(self, failed: bool = False) -> None:
        self.flush()
        self.client.set_terminated(self.run_id, "FAILED" if failed else "FINISHED")

    def location(self) -> str:
        return f"mlflow run {self.run_id} in {self.uri}"
