"""Run a sweep: a config's grid of cells -> executor -> result store, resumably.

A :class:`Sweep` is everything this layer knows of an experiment: its name, preset and config, the cells, and
the cell function (a picklable module-level function or reference, shipped to workers as its name). Cells are
keyed by a hash of ``(experiment, config hash, cell)``; cells already ``done`` in the store are read back, never
recomputed. Failed cells are rerun only with ``retry_failed=True``. The driver holds an exclusive lock on the
run folder while it runs (released by the OS even on SIGKILL), so two processes never write one folder at once.
Figures and reports are written by the layer above (``iclab.report``), not here.

Everything that can be checked is checked before the run folder is touched: the grid (no repeated, at least one
cell), the executor's arguments, and the target folder (:meth:`RunFolder.check_target`: a non-empty folder
that is not a run folder is never written). A store that cannot be written (disk full, read-only) stops the
sweep with one :class:`~iclab.runs._store.StoreWriteError` saying that every finished cell is kept.
"""

from __future__ import annotations

import os
import sys
import time
from contextlib import closing, contextmanager
from dataclasses import dataclass, fields, is_dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

import pandas as pd
from filelock import FileLock, Timeout
from tqdm.auto import tqdm

from iclab.budget import check_budget
from iclab.config import check_choice, check_positive, config_hash
from iclab.errors import ConfigError, IclabError, RunFolderError
from iclab.runs._executors import EXECUTORS, CellTask, Executor, SerialExecutor
from iclab.runs._local import LocalExecutor
from iclab.runs._folder import RunFolder
from iclab.runs._store import ResultStore, StoreUnreadableError, StoreWriteError, results_row

__all__ = ["Sweep", "RunResult", "RunChecks", "check_run", "run_sweep", "load_results", "default_run_dir",
           "folder_lock", "make_executor", "CELL_SECONDS_LIMIT", "OnCell"]

MAX_CELLS = 1_000_000
CELL_SECONDS_LIMIT = float(os.environ.get("ICLAB_CELL_SECONDS_LIMIT", 24 * 3600))  # CPU seconds one cell may need
OnCell = Callable[[int, dict], None]  # on_cell(index in the grid, results row) of run_sweep


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
        budget: optional ``config -> list[Need]``: what the largest cell needs (checked before the folder is made).
    """

    name: str
    preset: str
    config: Any
    cells: list[dict]
    run_cell: Callable[[Any, dict, Any], dict]
    shared: Callable[[Any], Any] | None = None
    budget: Callable[[Any], list] | None = None

    @property
    def config_hash(self) -> str:
        return config_hash({"experiment": self.name, "config": self.config.to_dict()})

    def tasks(self) -> list[CellTask]:
        """One task per cell, keyed by ``(config hash, cell)``; a repeated cell is a ConfigError."""
        h = self.config_hash
        tasks = [CellTask(config_hash({"h": h, "cell": cell}), i, self.name, self.config, cell, self.run_cell)
                 for i, cell in enumerate(self.cells)]
        if len(tasks) > MAX_CELLS:
            raise ConfigError("config", len(tasks), message=f"experiment {self.name!r}: the config makes "
                              f"{len(tasks)} cells, more than {MAX_CELLS} (one SQLite row each); shrink the grid")
        if not tasks:  # e.g. --set parts=
            raise ConfigError("config", self.name, message=f"experiment {self.name!r}: the config produces no cells "
                              "(is a grid field empty?)")
        if len({t.key for t in tasks}) != len(tasks):  # e.g. --set l_values=10,10
            seen: set[str] = set()
            dup = next(t.cell for t in tasks if t.key in seen or seen.add(t.key))
            names = [f.name for f in fields(self.config)] if is_dataclass(self.config) else []
            values = {k: getattr(self.config, k) for k in names}
            repeated = [k for k, v in values.items() if isinstance(v, (tuple, list)) and len(set(map(repr, v))) < len(v)]
            where = ", ".join(repeated) if repeated else "the grid fields"
            raise ConfigError(repeated[0] if repeated else "config", dup, message=f"experiment {self.name!r}: the config "
                              f"produces the same cell twice ({dup}); remove repeated values from {where}")
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
def folder_lock(path: Path) -> Iterator[None]:
    """Exclusive, non-blocking lock on ``path/.lock`` for the life of one driver, through ``filelock`` (``flock``
    on POSIX, ``msvcrt`` on Windows: the OS releases it even on SIGKILL). The holder writes its pid into it. A
    folder that cannot be made or written is one RunFolderError (not mistaken for a lock held by another)."""
    path = Path(path)
    RunFolder.make(path)
    try:
        open(path / ".lock", "a").close()
    except OSError as exc:
        raise RunFolderError(f"cannot write run folder {path}: {exc.strerror or exc}; make it writable or pass "
                             "--out DIR") from None
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
    """The results of a run folder as a DataFrame (one row per cell, cell keys and metrics as columns).

    Reads only: a missing folder or store is a RunFolderError, and nothing is created or changed."""
    with ResultStore(path, readonly=True) as store:
        return pd.DataFrame(list(store.rows(status)))


def _open_store(path: Path, force: bool) -> ResultStore:
    """The folder's store; with ``force``, an unreadable one (not a database, a folder) is discarded first."""
    try:
        return ResultStore(path)
    except StoreUnreadableError:
        if not force:
            raise
        print(f"warning: --force: discarding {path / ResultStore.FILENAME}, which is not a readable result store",
              file=sys.stderr)
        RunFolder.discard_results(path)
        return ResultStore(path)


@dataclass(frozen=True)
class RunChecks:
    """What :func:`check_run` found: the cells, the executor (made, nothing started), the run folder and, when the
    folder already holds this run, its ``config.json`` record (else None)."""

    tasks: list[CellTask]
    executor: Executor
    path: Path
    recorded: dict | None


def check_run(sweep: Sweep, out: str | Path, *, executor: str = "local", workers: int | None = None,
              address: str | None = None, cell_timeout: float | None = None, budget_check: bool = True,
              force: bool = False) -> RunChecks:
    """Every check :func:`run_sweep` makes before it touches the run folder, creating and writing nothing: the grid
    (at least one cell, none repeated), the devices and models the cells need (``sweep.budget``), their memory and
    CPU time against this machine (unless ``budget_check=False``), the executor's arguments, and the folder
    ``out`` (new, empty, or a run folder of this very run; another run's only with ``force``). Raises the error
    the run would raise. ``iclab run --dry-run`` calls it and stops."""
    tasks = sweep.tasks()
    needs = sweep.budget(sweep.config) if sweep.budget is not None else []  # raises if the machine lacks a device
    if budget_check:
        check_budget(needs, CELL_SECONDS_LIMIT)
    runner = make_executor(executor, workers, address, cell_timeout)  # checks the arguments; starts nothing
    path = RunFolder.check_target(out)
    recorded = RunFolder.check_reuse(path, experiment=sweep.name, config_hash=sweep.config_hash, force=force)
    return RunChecks(tasks, runner, path, recorded)


def run_sweep(sweep: Sweep, out: str | Path, *, executor: str = "local", workers: int | None = None,
              address: str | None = None, force: bool = False, retry_failed: bool = False,
              progress: bool = True, cell_timeout: float | None = None, budget_check: bool = True,
              on_cell: OnCell | None = None) -> RunResult:
    """Run (or resume) ``sweep`` in the run folder ``out``; return its results (figures are not drawn here).

    :func:`check_run` runs first (nothing is written when it refuses). ``cell_timeout`` (seconds) fails a cell that
    runs longer (``timed out after N s``); the sweep goes on. ``sweep.budget`` is checked against this machine
    (memory, and :data:`CELL_SECONDS_LIMIT` of CPU per cell) unless ``budget_check=False``.

    ``on_cell(idx, row)`` hears of every cell with an outcome, ``idx`` its index in the grid and ``row`` its
    results row (as :func:`load_results` gives it, ``_status`` ``done`` or ``failed``): first the cells read back
    from the store, then each cell as soon as it is stored. It runs in the driver between cells; an exception
    it raises stops the sweep (every stored cell is kept)."""
    start = time.perf_counter()
    checks = check_run(sweep, out, executor=executor, workers=workers, address=address, cell_timeout=cell_timeout,
                       budget_check=budget_check, force=force)
    tasks, runner = checks.tasks, checks.executor
    with folder_lock(checks.path):
        folder = RunFolder.open(checks.path, experiment=sweep.name, preset=sweep.preset, config=sweep.config.to_dict(),
                                config_hash=sweep.config_hash, seed=sweep.config.seed, force=force)
        computed, runner_name = 0, ""
        with _open_store(folder.path, force) as store:
            status = store.statuses()
            todo = [t for t in tasks if status.get(t.key) != "done" and (retry_failed or status.get(t.key) != "failed")]
            reused = sum(1 for t in tasks if status.get(t.key) == "done")
            if on_cell is not None:
                _report_stored(store, tasks, {t.key for t in todo}, on_cell)
            if todo:
                computed = _execute(sweep, todo, len(tasks), store, runner, workers, progress, on_cell)
                runner_name = executor
            keys = {t.key for t in tasks}
            rows = [r for r in store.rows("done") if r["_key"] in keys]
            failed_rows = [r for r in store.rows("failed") if r["_key"] in keys]
    return RunResult(folder, sweep.config, pd.DataFrame(rows), pd.DataFrame(failed_rows), computed, reused,
                     time.perf_counter() - start if computed else 0.0, runner_name)


def _report_stored(store: ResultStore, tasks: list[CellTask], todo: set[str], on_cell: OnCell) -> None:
    """``on_cell`` for each cell of ``tasks`` the store holds and this sweep does not rerun, in grid order."""
    index = {t.key: t.idx for t in tasks}
    for row in store.rows(None):
        if row["_key"] in index and row["_key"] not in todo:
            on_cell(index[row["_key"]], row)


def _execute(sweep: Sweep, todo: list[CellTask], total: int, store: ResultStore, runner: Executor,
             workers: int | None, progress: bool, on_cell: OnCell | None = None) -> int:
    """Run ``todo`` on the executor, writing each outcome to the store as it arrives (any order), then telling
    ``on_cell``."""
    shared = sweep.shared(sweep.config) if sweep.shared is not None else None  # once per run, in the driver
    sweep_id = store.start_sweep(runner.name, workers, len(todo))
    computed = failed = 0
    bar = tqdm(total=total, initial=total - len(todo), desc=f"{sweep.name} [{runner.name}]", unit="cell",
               disable=not progress, file=sys.stderr, dynamic_ncols=True, smoothing=0.1)
    error: BaseException | None = None
    try:
        with closing(runner.run(todo, shared)) as outcomes:  # closed at once on an error: workers stop
            for outcome in outcomes:
                store.put(outcome.key, outcome.idx, outcome.cell, result=outcome.result, error=outcome.error,
                          seconds=outcome.seconds)
                if on_cell is not None:
                    status = "failed" if outcome.error is not None else "done"  # as the store records it
                    on_cell(outcome.idx, results_row(outcome.key, outcome.cell, status, outcome.result,
                                                     outcome.error, outcome.seconds))
                computed += 1
                bar.update(1)
                if outcome.error is not None:
                    failed += 1
                    bar.set_postfix(failed=failed)
                    bar.write(f"cell {outcome.idx} of {sweep.name} failed: {outcome.error.splitlines()[0]}",
                              file=sys.stderr)
    except BaseException as exc:
        error = exc
        raise
    finally:
        bar.close()
        try:
            store.finish_sweep(sweep_id, computed, failed)
        except StoreWriteError:
            if error is None:  # else the first error is the one worth reporting
                raise
    return computed


def make_executor(name: str, workers: int | None = None, address: str | None = None,
                  cell_timeout: float | None = None) -> Executor:
    """``serial`` | ``local`` | ``ray`` (the Ray executor lives in ``iclab.runs._ray``; imported lazily).

    Checks every argument and starts nothing: ``address`` only with ``ray``, ``cell_timeout`` > 0."""
    check_choice("executor", name, EXECUTORS)
    if cell_timeout is not None:
        check_positive("cell_timeout", cell_timeout)
    if address is not None and name != "ray":
        raise ConfigError("--address", address, f"no address with --executor {name} (it is for --executor ray)")
    if name == "serial":
        return SerialExecutor(cell_timeout)
    if name == "local":
        return LocalExecutor(workers, timeout=cell_timeout)
    try:
        import ray  # noqa: F401 - imported lazily: ray is heavy
    except ImportError:
        raise IclabError("--executor ray needs Ray: pip install ray==2.60.0 (make install does)") from None
    from iclab.runs._ray import RayExecutor

    return RayExecutor(address=address, workers=workers, timeout=cell_timeout)
