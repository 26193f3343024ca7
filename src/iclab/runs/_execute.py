"""Run a sweep: a config's grid of cells -> executor -> result store, resumably.

A :class:`Sweep` is everything this layer knows of an experiment: its name, preset and config, the cells, and
the cell function (a picklable module-level function or reference, shipped to workers as its name); how it runs is
one :class:`~iclab.runs.RunOptions`. Cells are keyed by a hash of ``(experiment, config hash, cell)``; cells
already ``done`` in the store are read back, never recomputed. Failed cells are rerun only with
``retry_failed=True``. The driver holds an exclusive lock on the run folder while it runs (released by the OS even
on SIGKILL), so two processes never write one folder at once. Figures and reports are written by the layer above
(``iclab.report``), not here.

The driver's memory stays flat in the number of cells beyond the grid itself and the table it returns: a cell's
key is held as one 64-bit integer, its task is made only when an executor draws it (:class:`~iclab.runs.TaskQueue`),
each outcome goes to the store as it arrives, and the results table is read back from the store column by column
(:meth:`ResultStore.table`), never as a list of row dicts.

Everything that can be checked is checked before the run folder is touched: the grid (no repeated, at least one
cell), the executor's arguments, and the target folder (:meth:`RunFolder.check_target`: a non-empty folder
that is not a run folder is never written). A store that cannot be written (disk full, read-only) stops the
sweep with one :class:`~iclab.runs._store.StoreWriteError` saying that every finished cell is kept.
"""

from __future__ import annotations

import functools
import json
import os
import sys
import time
from contextlib import closing, contextmanager
from dataclasses import dataclass, fields, is_dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

import numpy as np
import pandas as pd
from filelock import FileLock, Timeout
from tqdm.auto import tqdm

from iclab.budget import check_budget, seconds_limit
from iclab.config import config_hash
from iclab.errors import ConfigError, IclabError, RunFolderError
from iclab.runs._executors import CellTask, Executor
from iclab.runs._folder import RunFolder
from iclab.runs._options import OnCell, RunOptions
from iclab.runs._session import make_executor, shared_for
from iclab.runs._store import ResultStore, StoreUnreadableError, StoreWriteError, results_row
from iclab.runs._table import key_ints

__all__ = ["Sweep", "SweepTasks", "RunResult", "RunChecks", "check_run", "run_sweep", "load_results",
           "default_run_dir", "folder_lock", "make_executor", "CELL_SECONDS_LIMIT"]

MAX_CELLS = 1_000_000
CELL_SECONDS_LIMIT = 24 * 3600.0  # CPU seconds one cell may need, unless ICLAB_CELL_SECONDS_LIMIT says otherwise


@dataclass(frozen=True)
class Sweep:
    """One experiment's run as this layer sees it.

    Fields:
        name: experiment name (stored in ``config.json``; part of every cell key).
        preset: preset the config came from (``quick``, ``full``, …).
        config: the validated config (a :class:`iclab.config.Config`; picklable).
        cells: the grid, one JSON-able dict per cell.
        run_cell: ``(config, cell, shared) -> metrics``; must pickle by reference (module-level or ``lazy``).
        shared: optional ``config -> object`` computed once for every cell: in the driver, or ahead inside
            :func:`~iclab.runs.kept_workers` (a function of the config alone).
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

    def keys(self) -> np.ndarray:
        """The key of every cell, in grid order: the 16 hex digits of ``config_hash((config hash, cell))`` as one
        unsigned 64-bit integer each (:func:`~iclab.runs._table.key_ints`), computed once per sweep (8 bytes a cell).
        No cells, too many, or a repeated cell is a ConfigError."""
        return self._keys

    @functools.cached_property
    def _keys(self) -> np.ndarray:
        if len(self.cells) > MAX_CELLS:
            raise ConfigError("config", len(self.cells), message=f"experiment {self.name!r}: the config makes "
                              f"{len(self.cells)} cells, more than {MAX_CELLS} (one SQLite row each); shrink the grid")
        if not self.cells:  # e.g. --set parts=
            raise ConfigError("config", self.name, message=f"experiment {self.name!r}: the config produces no cells "
                              "(is a grid field empty?)")
        h = self.config_hash
        keys = key_ints(config_hash({"h": h, "cell": cell}) for cell in self.cells)
        ordered = np.sort(keys)
        repeated = ordered[1:][ordered[1:] == ordered[:-1]]
        if len(repeated):  # e.g. --set l_values=10,10
            dup = self.cells[int(np.flatnonzero(keys == repeated[0])[0])]
            names = [f.name for f in fields(self.config)] if is_dataclass(self.config) else []
            values = {k: getattr(self.config, k) for k in names}
            grid = [k for k, v in values.items() if isinstance(v, (tuple, list)) and len(set(map(repr, v))) < len(v)]
            where = ", ".join(grid) if grid else "the grid fields"
            raise ConfigError(grid[0] if grid else "config", dup, message=f"experiment {self.name!r}: the config "
                              f"produces the same cell twice ({dup}); remove repeated values from {where}")
        return keys

    def tasks(self, which: np.ndarray | None = None) -> SweepTasks:
        """The tasks of the cells at grid positions ``which`` (default: all), made as they are drawn."""
        return SweepTasks(self, np.arange(len(self.cells)) if which is None else which)


class SweepTasks(Sequence[CellTask]):
    """The tasks of some cells of a sweep, made one at a time as an executor draws them (the driver holds two
    integers a cell: its key and its grid position, not a :class:`CellTask`)."""

    def __init__(self, sweep: Sweep, which: np.ndarray) -> None:
        self.sweep, self.keys, self.which = sweep, sweep.keys(), which

    def __len__(self) -> int:
        return len(self.which)

    def __getitem__(self, i: int) -> CellTask:  # type: ignore[override] - (no slices: executors draw one at a time)
        idx = int(self.which[i])
        s = self.sweep
        return CellTask(f"{int(self.keys[idx]):016x}", idx, s.name, s.config, s.cells[idx], s.run_cell)


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
        return store.table(status)


def unrun_cells(path: str | Path, cells: Iterable[dict]) -> list[dict]:
    """The ``cells`` (a run's planned grid) that the store of the run folder ``path`` holds no row of, done or
    failed — those a run stopped before it reached; compared as the JSON text a cell is stored as, so the grid a
    config makes today and the one it made when the run ran must agree exactly. Reads only; a folder with no store
    has run none."""
    stored: set[str] = set()
    if (Path(path) / ResultStore.FILENAME).exists():
        with ResultStore(path, readonly=True) as store:
            stored = store.cell_texts()
    return [cell for cell in cells if json.dumps(cell, sort_keys=True) not in stored]


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
    """What :func:`check_run` found: the cells' keys (:meth:`Sweep.keys`), the executor (made, nothing started), the
    run folder and, when the folder already holds this run, its ``config.json`` record (else None)."""

    keys: np.ndarray
    executor: Executor
    path: Path
    recorded: dict | None


def check_run(sweep: Sweep, out: str | Path, options: RunOptions | None = None) -> RunChecks:
    """Every check :func:`run_sweep` makes before it touches the run folder, creating and writing nothing: the grid
    (at least one cell, none repeated), the devices and models the cells need (``sweep.budget``), their memory and
    CPU time against this machine (unless ``options.budget_check`` is False), the executor (a Ray address is
    reached), and the folder ``out`` (new, empty, or a run folder of this very run; another run's only with
    ``options.force``). Raises the error the run would raise. ``iclab run --dry-run`` calls it and stops."""
    options = options or RunOptions()
    keys = sweep.keys()
    needs = sweep.budget(sweep.config) if sweep.budget is not None else []  # raises if the machine lacks a device
    if options.budget_check:
        check_budget(needs, seconds_limit())  # ICLAB_CELL_SECONDS_LIMIT, default CELL_SECONDS_LIMIT
    runner = make_executor(options)  # starts nothing
    path = RunFolder.check_target(out)
    recorded = RunFolder.check_reuse(path, experiment=sweep.name, config_hash=sweep.config_hash, force=options.force)
    return RunChecks(keys, runner, path, recorded)


def run_sweep(sweep: Sweep, out: str | Path, options: RunOptions | None = None) -> RunResult:
    """Run (or resume) ``sweep`` in the run folder ``out`` as ``options`` say (default ``RunOptions()``: the local
    pool); return its results (figures are not drawn here).

    :func:`check_run` runs first (nothing is written when it refuses). ``options.cell_timeout`` (seconds) fails a
    cell that runs longer (``timed out after N s``); the sweep goes on. ``sweep.budget`` is checked against this
    machine (memory, and ``ICLAB_CELL_SECONDS_LIMIT`` (default :data:`CELL_SECONDS_LIMIT`) of CPU per cell) unless ``options.budget_check`` is False.

    ``options.on_cell(idx, row)`` hears of every cell with an outcome, ``idx`` its index in the grid and ``row`` its
    results row (as :func:`load_results` gives it, ``_status`` ``done`` or ``failed``): first the cells read back
    from the store, then each cell as soon as it is stored. It runs in the driver between cells; an exception
    it raises stops the sweep (every stored cell is kept)."""
    start = time.perf_counter()
    options = options or RunOptions()
    checks = check_run(sweep, out, options)
    keys = checks.keys
    with folder_lock(checks.path):
        folder = RunFolder.open(checks.path, experiment=sweep.name, preset=sweep.preset, config=sweep.config.to_dict(),
                                config_hash=sweep.config_hash, seed=sweep.config.seed, force=options.force)
        computed, runner_name = 0, ""
        with _open_store(folder.path, options.force) as store:
            done = np.isin(keys, store.keys("done"))
            rerun = ~done if options.retry_failed else ~(done | np.isin(keys, store.keys("failed")))
            todo = np.flatnonzero(rerun)  # grid positions of the cells to run, in grid order
            if options.on_cell is not None:
                _report_stored(store, keys, rerun, options.on_cell)
            if len(todo):
                computed = _execute(sweep, sweep.tasks(todo), len(keys), store, checks.executor, options)
                runner_name = options.executor
            results, failed = store.table("done", keys), store.table("failed", keys)
    return RunResult(folder, sweep.config, results, failed, computed, int(done.sum()),
                     time.perf_counter() - start if computed else 0.0, runner_name)


def _report_stored(store: ResultStore, keys: np.ndarray, rerun: np.ndarray, on_cell: OnCell) -> None:
    """``on_cell`` for each cell of the grid (``keys``) the store holds and this sweep does not rerun, in grid
    order."""
    order = np.argsort(keys)
    for row in store.rows(None):
        k = key_ints([row["_key"]])
        at = int(np.searchsorted(keys, k[0], sorter=order))
        if at < len(keys) and keys[order[at]] == k[0] and not rerun[order[at]]:
            on_cell(int(order[at]), row)


def _execute(sweep: Sweep, todo: SweepTasks, total: int, store: ResultStore, runner: Executor,
             options: RunOptions) -> int:
    """Run ``todo`` on the executor, writing each outcome to the store as it arrives (any order), then telling
    ``options.on_cell``."""
    shared = shared_for(sweep)  # once per run: in the driver, or ahead (iclab.runs.kept_workers)
    sweep_id = store.start_sweep(runner.name, options.workers, len(todo))
    computed = failed = 0
    bar = tqdm(total=total, initial=total - len(todo), desc=f"{sweep.name} [{runner.name}]", unit="cell",
               disable=not options.progress, file=sys.stderr, dynamic_ncols=True, smoothing=0.1)
    error: BaseException | None = None
    try:
        with closing(runner.run(todo, shared)) as outcomes:  # closed at once on an error: workers stop
            for outcome in outcomes:
                store.put(outcome.key, outcome.idx, outcome.cell, result=outcome.result, error=outcome.error,
                          seconds=outcome.seconds)
                computed += 1  # counted as stored, before any callback: the sweep log always matches the rows
                failed += outcome.error is not None
                bar.update(1)
                if outcome.error is not None:
                    bar.set_postfix(failed=failed)
                    bar.write(f"cell {outcome.idx} of {sweep.name} failed: {outcome.error.splitlines()[0]}",
                              file=sys.stderr)
                if options.on_cell is not None:
                    status = "failed" if outcome.error is not None else "done"  # as the store records it
                    options.on_cell(outcome.idx, results_row(outcome.key, outcome.cell, status, outcome.result,
                                                             outcome.error, outcome.seconds))
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
