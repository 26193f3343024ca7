"""Run an experiment: preset config -> grid of cells -> executor -> result store -> figures and report.md.

Cells are keyed by a hash of ``(experiment, config hash, cell)``; cells already ``done`` in the store are
read back, never recomputed. Failed cells are rerun only with ``retry_failed=True``. The driver holds an
exclusive lock on the run folder while it runs (released by the OS even on SIGKILL), so two processes never
write one folder at once.
"""

from __future__ import annotations

import os
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import pandas as pd
from tqdm.auto import tqdm

from iclab.config import config_hash
from iclab.errors import ConfigError, RunFolderError
from iclab.runs._executors import CellTask, make_executor
from iclab.runs._folder import RunFolder
from iclab.runs._store import ResultStore

__all__ = ["RunResult", "run_experiment", "load_results", "default_run_dir"]


@dataclass
class RunResult:
    folder: RunFolder
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
    return Path(root) / f"{name}-{preset}"


@contextmanager
def folder_lock(path: Path):
    """Exclusive, non-blocking lock on ``path/.lock`` for the life of one driver (POSIX ``flock``)."""
    path.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: no lock
        yield
        return
    fh = open(path / ".lock", "a+")
    try:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            holder = fh.read().strip() or "?"
            raise RunFolderError(f"run folder {path} is in use by another iclab process (pid {holder}); "
                                 "wait for it to finish or pass --out DIR") from None
        fh.seek(0)
        fh.truncate()
        fh.write(str(os.getpid()))
        fh.flush()
        yield
    finally:
        fh.close()


def load_results(path: str | Path, status: str | None = "done") -> pd.DataFrame:
    """The results of a run folder as a DataFrame (one row per cell, cell keys and metrics as columns)."""
    with ResultStore(path) as store:
        return pd.DataFrame(list(store.rows(status)))


def run_experiment(name: str, preset: str = "quick", overrides: Mapping[str, Any] | None = None,
                   seed: int | None = None, out: str | Path | None = None, executor: str = "local",
                   workers: int | None = None, address: str | None = None, force: bool = False,
                   retry_failed: bool = False, progress: bool = True, report: bool = True) -> RunResult:
    """Run (or resume) experiment ``name`` and write its figures and ``report.md``."""
    from iclab.experiments import get_experiment

    exp = get_experiment(name)
    config = exp.config(preset, overrides, seed)
    cfg_dict = config.to_dict()
    cfg_hash = config_hash({"experiment": name, "config": cfg_dict})
    start = time.perf_counter()
    cells = exp.cells(config)
    tasks = [CellTask(config_hash({"h": cfg_hash, "cell": cell}), i, name, cfg_dict, cell)
             for i, cell in enumerate(cells)]
    if len({t.key for t in tasks}) != len(tasks):  # e.g. --set l_values=10,10
        seen: set[str] = set()
        dup = next(t.cell for t in tasks if t.key in seen or seen.add(t.key))
        raise ConfigError("config", dup, message=f"experiment {name!r}: the config produces the same cell twice "
                          f"({dup}); remove repeated values from the grid fields")
    if out is None and (overrides or seed is not None):
        # a customised config gets its own folder, so it never collides with the preset's run
        out = Path(f"{default_run_dir(name, preset)}-{cfg_hash[:8]}")
    path = Path(out or default_run_dir(name, preset))
    with folder_lock(path):
        folder = RunFolder.open(path, experiment=name, preset=preset, config=cfg_dict, config_hash=cfg_hash,
                                seed=config.seed, force=force)
        computed, runner_name = 0, ""
        with ResultStore(folder.path) as store:
            status = store.statuses()
            todo = [t for t in tasks if status.get(t.key) != "done" and (retry_failed or status.get(t.key) != "failed")]
            reused = sum(1 for t in tasks if status.get(t.key) == "done")
            if todo:
                computed = _sweep(exp, config, todo, len(tasks), store, executor, workers, address, progress)
                runner_name = executor
            keys = {t.key for t in tasks}
            rows = [r for r in store.rows("done") if r["_key"] in keys]
            failed_rows = [r for r in store.rows("failed") if r["_key"] in keys]
        result = RunResult(folder, pd.DataFrame(rows), pd.DataFrame(failed_rows), computed, reused,
                           time.perf_counter() - start if computed else 0.0, runner_name)
        if report:
            from iclab.report import write_run_report

            write_run_report(exp, config, result)
    return result


def _sweep(exp, config, todo: list[CellTask], total: int, store: ResultStore, executor: str, workers: int | None,
           address: str | None, progress: bool) -> int:
    """Run ``todo`` on the executor, writing each outcome to the store as it arrives (any order)."""
    runner = make_executor(executor, workers, address)
    shared = exp.shared(config) if exp.shared is not None else None  # once per run, in the driver
    sweep = store.start_sweep(runner.name, workers, len(todo))
    computed = failed = 0
    bar = tqdm(total=total, initial=total - len(todo), desc=f"{exp.name} [{runner.name}]", unit="cell",
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
                bar.write(f"cell {outcome.idx} of {exp.name} failed: {outcome.error.splitlines()[0]}", file=sys.stderr)
    finally:
        bar.close()
        store.finish_sweep(sweep, computed, failed)
    return computed
