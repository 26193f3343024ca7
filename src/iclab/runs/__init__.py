"""Run folders, the SQLite result store, executors (serial / local process pool / Ray) and the driver."""

from iclab.runs._execute import RunResult, default_run_dir, load_results, run_experiment
from iclab.runs._executors import EXECUTORS, CellOutcome, CellTask, LocalExecutor, SerialExecutor, execute_cell, make_executor
from iclab.runs._folder import RunFolder, environment_versions, git_revision, iclab_version
from iclab.runs._store import ResultStore

__all__ = [
    "RunResult",
    "run_experiment",
    "load_results",
    "default_run_dir",
    "EXECUTORS",
    "CellTask",
    "CellOutcome",
    "SerialExecutor",
    "LocalExecutor",
    "execute_cell",
    "make_executor",
    "RunFolder",
    "ResultStore",
    "iclab_version",
    "environment_versions",
    "git_revision",
]
