"""The one trainer (optimiser, schedule, stopping rules, checkpoint/resume, NaN guard, metrics stream)."""

from iclab.train._config import OPTIMIZERS, SCHEDULES, TrainConfig
from iclab.train._trainer import CHECKPOINT, METRICS, TrainingDiverged, TrainResult, train

__all__ = ["TrainConfig", "OPTIMIZERS", "SCHEDULES", "train", "TrainResult", "TrainingDiverged", "CHECKPOINT", "METRICS"]
