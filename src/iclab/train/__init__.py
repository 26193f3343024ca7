"""The one trainer (optimiser, schedule, stopping rules, checkpoint/resume, NaN guard, metrics stream)."""

from iclab.train._config import OPTIMIZERS, SCHEDULES, TrainConfig
from iclab.train._checkpoint import CHECKPOINT
from iclab.train._metrics import METRICS, metrics_to_parquet, read_metrics
from iclab.train._stopping import after_step, all_groups_below, any_of
from iclab.train._trainer import TrainingDiverged, TrainResult, train

__all__ = [
    "TrainConfig",
    "OPTIMIZERS",
    "SCHEDULES",
    "train",
    "TrainResult",
    "TrainingDiverged",
    "CHECKPOINT",
    "METRICS",
    "read_metrics",
    "metrics_to_parquet",
    "all_groups_below",
    "any_of",
    "after_step",
]
