"""The tracker interface shared by the MLflow, W&B and TensorBoard backends, and :func:`make_tracker`."""

from __future__ import annotations

import importlib
import importlib.util
import json
import math
import re
from pathlib import Path
from typing import Any, Callable, Mapping

from iclab.errors import ConfigError, IclabError

__all__ = ["TRACKERS", "Tracker", "make_tracker", "require_backend", "flat_params", "metric_key"]

# tracker name -> (module it needs, iclab extra that installs it, backend module, class)
_BACKENDS = {
    "mlflow": ("mlflow", "mlflow", "iclab.tracking._mlflow", "MLflowTracker"),
    "wandb": ("wandb", "wandb", "iclab.tracking._wandb", "WandbTracker"),
    "tensorboard": ("tensorboard", "tensorboard", "iclab.tracking._tensorboard", "TensorBoardTracker"),
}
TRACKERS = tuple(_BACKENDS)


class Tracker:
    """One tracked run. A backend implements the ``log_*`` methods and :meth:`finish`; use it as a context
    manager (or call :meth:`finish`) so the run is closed even when the code inside fails."""

    name = ""

    def log_params(self, params: Mapping[str, Any]) -> None:
        """Record the run's settings (flat ``{name: value}``; see :func:`flat_params`)."""
        raise NotImplementedError

    def log_metrics(self, metrics: Mapping[str, float], step: int) -> None:
        """Record scalar ``metrics`` at ``step`` (a cell's index, or a training step)."""
        raise NotImplementedError

    def log_image(self, path: Path, key: str) -> None:
        """Record the PNG at ``path`` under ``key`` (e.g. ``figures/fig2a``)."""
        raise NotImplementedError

    def log_artifact(self, path: Path, folder: str = "") -> None:
        """Attach the file at ``path`` (report, CSV, config) under ``folder``."""
        raise NotImplementedError

    def flush(self) -> None:
        """Send what is buffered now, so that it shows while the run goes on (a no-op where nothing is held)."""

    def finish(self, failed: bool = False) -> None:
        """Flush and close the run; ``failed`` marks it failed (the code inside the ``with`` block raised)."""
        raise NotImplementedError

    def location(self) -> str:
        """Where the records went, in words (printed by the CLI)."""
        return self.name

    def train_callback(self, prefix: str = "train/") -> Callable[[dict[str, Any]], None]:
        """A callback for :func:`iclab.train.train`: each numeric field of a log record becomes ``prefix + key``
        at the record's ``step``."""

        def callback(record: dict[str, Any]) -> None:
            metrics = {metric_key(prefix + k): float(v) for k, v in record.items() if k != "step" and _is_number(v)}
            self.log_metrics(metrics, int(record["step"]))

        return callback

    def __enter__(self) -> "Tracker":
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        self.finish(failed=exc_type is not None)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def metric_key(name: str) -> str:
    """``name`` with characters MLflow refuses in a key (anything but letters, digits, ``_ - . / space``)
    replaced by ``_``; every backend uses the same keys."""
    return re.sub(r"[^\w\-./ ]", "_", name, flags=re.ASCII)


def flat_params(config: Mapping[str, Any], prefix: str = "") -> dict[str, str]:
    """A config as flat ``{name: text}``: nested mappings become ``outer.inner``; lists and tuples are JSON."""
    out: dict[str, str] = {}
    for key, value in config.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(flat_params(value, name + "."))
        else:
            out[name] = value if isinstance(value, str) else json.dumps(value)
    return out


def require_backend(name: str) -> None:
    """Check that tracker ``name`` is known and its package installed (before anything runs)."""
    if name not in _BACKENDS:
        raise ConfigError("--tracker", name, "one of " + ", ".join(map(repr, TRACKERS)))
    module, extra = _BACKENDS[name][:2]
    if importlib.util.find_spec(module) is None:
        raise IclabError(f"--tracker {name} needs the {module} package: pip install 'iclab[{extra}]'")


def make_tracker(
    name: str,
    run_name: str,
    *,
    group: str | None = None,
    log_dir: str | Path | None = None,
    config: Mapping[str, Any] | None = None,
) -> Tracker:
    """Start a run on tracker ``name`` (``mlflow`` | ``wandb`` | ``tensorboard``) and log ``config`` to it.

    Args:
        run_name: the run's name (the CLI uses the run folder's name, e.g. ``temperature-quick``).
        group: what runs are grouped under: the MLflow experiment and the W&B group (default ``iclab``).
        log_dir: TensorBoard's log folder (required for ``tensorboard``); W&B's ``dir``; unused by MLflow,
            which follows ``MLFLOW_TRACKING_URI``.
        config: settings logged as parameters (flattened by :func:`flat_params`).
    """
    require_backend(name)
    backend = importlib.import_module(_BACKENDS[name][2])
    tracker = getattr(backend, _BACKENDS[name][3])(run_name, group=group or "iclab", log_dir=log_dir)
    if config:
        tracker.log_params(flat_params(config))
    return tracker
