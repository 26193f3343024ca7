"""Run folders, the SQLite result store, executors (serial / local process pool / Ray), the run options and the
driver.

``ray`` itself is imported only when a Ray executor runs (``RunOptions(executor="ray")``): it is heavy.
"""

from iclab.runs._execute import (CELL_SECONDS_LIMIT, RunChecks, RunResult, Sweep, SweepTasks, check_run,
                                 default_run_dir, folder_lock, load_results, run_sweep, unrun_cells)
from iclab.runs._executors import CellOutcome, CellTask, SerialExecutor, TaskQueue, execute_cell, jsonable
from iclab.runs._session import kept_workers, make_executor
from iclab.runs._options import EXECUTORS, OnCell, RunOptions
from iclab.runs._ray import RayExecutor, ray_init
from iclab.runs._export import EXPORT_FORMATS, export_results, read_export
from iclab.runs._local import LocalExecutor
from iclab.runs._folder import RunFolder, code_hash, environment_versions, git_revision, iclab_version
from iclab.runs._store import ResultStore

__all__ = [
    "Sweep",
    "SweepTasks",
    "RunOptions",
    "TaskQueue",
    "CELL_SECONDS_LIMIT",
    "RunResult",
    "run_sweep",
    "check_run",
    "RunChecks",
    "OnCell",
    "load_results",
    "unrun_cells",
    "default_run_dir",
    "EXECUTORS",
    "CellTask",
    "CellOutcome",
    "SerialExecutor",
    "LocalExecutor",
    "RayExecutor",
    "ray_init",
    "execute_cell",
    "make_executor",
    "kept_workers",
    "jsonable",
    "folder_lock",
    "export_results",
    "read_export",
    "EXPORT_FORMATS",
    "RunFolder",
    "ResultStore",
    "iclab_version",
    "environment_versions",
    "git_revision",
    "code_hash",
]

