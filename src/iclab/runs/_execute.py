"""Run a sweep: a config's grid of cells -> executor -> result store, resumably.

A :class:`Sweep` is everything this layer knows of an experiment: its name, preset and config, the cells, and
the cell function (a picklable module-level function or reference, shipped to workers as its name). Cells are
keyed by a hash of ``(experiment, config hash, cell)``; cells already ``done`` in the store are read back, never
recomputed. Failed cells are rerun only with ``retry_failed=True``. The driver holds an exclusive lock on the
run folder while it runs (released by the OS even on SIGKILL), so two processes never write one folder at once.
Figures and reports are written by the layer above (``iclab.report``), not here.
"""

from __future__ import annotations

import os
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import pandas as pd
from filelock import FileLock, Timeout
from tqdm.auto import tqdm

from iclab.config import check_choice, config_hash
from iclab.errors import ConfigError, IclabError, RunFolderError
from iclab.runs._executors import EXECUTORS, CellTask, Executor, SerialExecutor
from iclab.runs._local import LocalExecutor
from iclab.runs._folder import RunFolder
from iclab.runs._store import ResultStore

__all__ = ["Sweep", "RunResult", "run_sweep", "load_results", "default_run_dir", "folder_lock", "make_executor"]


@dataclass(frozen=True)
class Sweep:
    """One experiment's run as this layer sees it.

    Fields:
        name: experiment name (stored in ``config.json``; part of every cell key).
        preset: preset the config came from (``quick``, ``full``, …).
        config: the validated config (a :class:`iclab.config.Config`; picklable).
        cells: the grid, one JSON-able dict per cell.
        run_cell: ``(config, cell, shared) -> metrics``; must pickle by reference (module-level or ``lazy``).
        shared: optional ``config -> object`` computed once in the driver for every cell.
    """

    name: str
    preset: str
    config: Any
    cells: list[dict]
    run_cell: Callable[[Any, dict, Any], dict]
    shared: Callable[[Any], Any] | None = None

    @property
    def config_hash(self) -> str:
        return config_hash({"experiment": self.name, "config": self.config.to_dict()})

    def tasks(self) -> list[CellTask]:
        """One task per cell, keyed by ``(config hash, cell)``; a repeated cell is a ConfigError."""
        h = self.config_hash
        tasks = [CellTask(config_hash({"h": h, "cell": cell}), i, self.name, self.config, cell, self.run_cell)
                 for i, cell in enumerate(self.cells)]
        if len({t.key for t in tasks}) != len(tasks):  # e.g. --set l_values=10,10
            seen: set[str] = set()
            dup = next(t.cell for t in tasks if t.key in seen or seen.add(t.key))
            raise ConfigError("config", dup, message=f"experiment {self.name!r}: the config produces the same cell "
                              f"twice ({dup}); remove repeated values from the grid fields")
        return tasks


@dataclass
class RunResult:
    folder: RunFolder
    config: Any
    results: pd.DataFrame
    failed: pd.DataFrame
    computed: int
    reused: int
    seconds: float = 0.0  # wall time of this call (0 when nothing ran)
    executor: str = ""

    @property
    def path(self) -> Path:
        return self.folder.path


def default_run_dir(name: str, preset: str, root: str | Path = "runs") -> Path:
    """``root/NAME-PRESET``: the run folder of a preset run without ``--out``."""
    return Path(root) / f"{name}-{preset}"


@contextmanager
def folder_lock(path: Path):
    """Exclusive, non-blocking lock on ``path/.lock`` for the life of one driver, through ``filelock`` (``flock``
    on POSIX, ``msvcrt`` on Windows: the OS releases it even on SIGKILL). The holder writes its pid into it."""
    path.mkdir(parents=True, exist_ok=True)
    lock = FileLock(path / ".lock", timeout=0)
    try:
        lock.acquire()
    except Timeout:
        holder = (path / ".lock").read_text().strip() or "?"
        raise RunFolderError(f"run folder {path} is in use by another iclab process (pid {holder}); "
                             "wait for it to finish or pass --out DIR") from None
    try:
        with open(path / ".lock", "r+") as fh:  # filelock never truncates the file: the pid stays for others
            fh.truncate()
            fh.write(str(os.getpid()))
        yield
    finally:
        lock.release()


def load_results(path: str | Path, status: str | None = "done") -> pd.DataFrame:
    """The results of a run folder as a DataFrame (one row per cell, cell keys and metrics as columns)."""
    with ResultStore(path) as store:
        return pd.DataFrame(list(store.rows(status)))


def run_sweep(sweep: Sweep, out: str | Path, *, executor: str = "local", workers: int | None = None,
              address: str | None = None, force: bool = False, retry_failed: bool = False,
              progress: bool = True) -> RunResult:
    """Run (or resume) ``sweep`` in the run folder ``out``; return its results (figures are not drawn here)."""
    start = time.perf_counter()
    tasks = sweep.tasks()
    path = Path(out)
    with folder_lock(path):
        folder = RunFolder.open(path, experiment=sweep.name, preset=sweep.preset, config=sweep.config.to_dict(),
                                config_hash=sweep.config_hash, seed=sweep.config.seed, force=force)
        computed, runner_name = 0, ""
        with ResultStore(folder.path) as store:
            status = store.statuses()
            todo = [t for t in tasks if status.get(t.key) != "done" and (retry_failed or status.get(t.key) != "failed")]
            reused = sum(1 for t in tasks if status.get(t.key) == "done")
            if todo:
                computed = _execute(sweep, todo, len(tasks), store, executor, workers, address, progress)
                runner_name = executor
            keys = {t.key for t in tasks}
            rows = [r for r in store.rows("done") if r["_key"] in keys]
            failed_rows = [r for r in store.rows("failed") if r["_key"] in keys]
    return RunResult(folder, sweep.config, pd.DataFrame(rows), pd.DataFrame(failed_rows), computed, reused,
                     time.perf_counter() - start if computed else 0.0, runner_name)


def _execute(sweep: Sweep, todo: list[CellTask], total: int, store: ResultStore, executor: str,
             workers: int | None, address: str | None, progress: bool) -> int:
    """Run ``todo`` on the executor, writing each outcome to the store as it arrives (any order)."""
    runner = make_executor(executor, workers, address)
    shared = sweep.shared(sweep.config) if sweep.shared is not None else None  # once per run, in the driver
    sweep_id = store.start_sweep(runner.name, workers, len(todo))
    computed = failed = 0
    bar = tqdm(total=total, initial=total - len(todo), desc=f"{sweep.name} [{runner.name}]", unit="cell",
               disable=not progress, file=sys.stderr, dynamic_ncols=True, smoothing=0.1)
    try:
        for outcome in runner.run(todo, shared):
            store.put(outcome.key, outcome.idx, outcome.cell, result=outcome.result, error=outcome.error,
                      seconds=outcome.seconds)
            computed += 1
            bar.update(1)
            if outcome.error is not None:
                failed += 1
                bar.set_postfix(failed=failed)
                bar.write(f"cell {outcome.idx} of {sweep.name} failed: {outcome.error.splitlines()[0]}", file=sys.stderr)
    finally:
        bar.close()
        store.finish_sweep(sweep_id, computed, failed)
    return computed


def make_executor(name: str, workers: int | None = None, address: str | None = None) -> Executor:
    """``serial`` | ``local`` | ``ray`` (the Ray executor lives in ``iclab.runs._ray``; imported lazily)."""
    check_choice("executor", name, EXECUTORS)
    if name == "serial":
        return SerialExecutor()
    if name == "local":
        return LocalExecutor(workers)
    try:
        import ray  # noqa: F401 - imported lazily: ray is heavy
    except ImportError:
        raise IclabError("--executor ray needs Ray: pip install ray==2.60.0 (make install does)") from None
    from iclab.runs._ray import RayExecutor

    return RayExecutor(address=address, workers=workers)
