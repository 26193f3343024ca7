"""Run folders, the SQLite result store, executors (serial / local process pool / Ray) and the driver.

``RayExecutor`` lives in ``iclab.runs._ray`` and is imported lazily (``make_executor("ray")``): ray is heavy.
"""

from iclab.runs._execute import (CELL_SECONDS_LIMIT, OnCell, RunChecks, RunResult, Sweep, check_run, default_run_dir,
                                 folder_lock, load_results, make_executor, run_sweep)
from iclab.runs._executors import EXECUTORS, CellOutcome, CellTask, SerialExecutor, execute_cell, jsonable
from iclab.runs._export import EXPORT_FORMATS, export_results, read_export
from iclab.runs._local import LocalExecutor
from iclab.runs._folder import RunFolder, code_hash, environment_versions, git_revision, iclab_version
from iclab.runs._store import ResultStore

__all__ = [
    "Sweep",
    "CELL_SECONDS_LIMIT",
    "RunResult",
    "run_sweep",
    "check_run",
    "RunChecks",
    "OnCell",
    "load_results",
    "default_run_dir",
    "EXECUTORS",
    "CellTask",
    "CellOutcome",
    "SerialExecutor",
    "LocalExecutor",
    "execute_cell",
    "make_executor",
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


def __getattr__(name: str):
    """``iclab.runs.RayExecutor`` / ``ray_init`` load ``ray`` only when first used."""
    if name in ("RayExecutor", "ray_init"):
        from iclab.runs import _ray

        return getattr(_ray, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
