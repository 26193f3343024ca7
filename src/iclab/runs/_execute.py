"""Run an experiment: preset config -> grid of cells -> executor -> result store -> figures and report.md.

Cells are keyed by a hash of ``(experiment, config hash, cell)``; cells already ``done`` in the store are
read back, never recomputed. Failed cells are rerun only with ``retry_failed=True``.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import pandas as pd
from tqdm.auto import tqdm

from iclab.config import config_hash
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

    @property
    def path(self) -> Path:
        return self.folder.path


def default_run_dir(name: str, preset: str, root: str | Path = "runs") -> Path:
    return Path(root) / f"{name}-{preset}"


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
    folder = RunFolder.open(out or default_run_dir(name, preset), experiment=name, preset=preset, config=cfg_dict,
                            config_hash=cfg_hash, seed=config.seed, force=force)
    cells = exp.cells(config)
    tasks = [CellTask(config_hash({"h": cfg_hash, "cell": cell}), i, name, cfg_dict, cell) for i, cell in enumerate(cells)]
    if len({t.key for t in tasks}) != len(tasks):
        raise ValueError(f"experiment {name!r} produced duplicate cells")

    computed = 0
    with ResultStore(folder.path) as store:
        status = store.statuses()
        todo = [t for t in tasks if status.get(t.key) != "done" and (retry_failed or status.get(t.key) != "failed")]
        reused = sum(1 for t in tasks if status.get(t.key) == "done")
        if todo:
            shared = exp.shared(config) if exp.shared is not None else None
            runner = make_executor(executor, workers, address)
            bar = tqdm(total=len(tasks), initial=len(tasks) - len(todo), desc=f"{name} [{runner.name}]",
                       unit="cell", disable=not progress, file=sys.stderr, dynamic_ncols=True)
            try:
                for outcome in runner.run(todo, shared):
                    store.put(outcome.key, outcome.idx, outcome.cell, result=outcome.result, error=outcome.error,
                              seconds=outcome.seconds)
                    computed += 1
                    bar.update(1)
                    if outcome.error is not None:
                        bar.write(f"cell {outcome.idx} of {name} failed: {outcome.error.splitlines()[0]}")
            finally:
                bar.close()
        keys = {t.key for t in tasks}
        rows = [r for r in store.rows("done") if r["_key"] in keys]
        failed_rows = [r for r in store.rows("failed") if r["_key"] in keys]
    results = pd.DataFrame(rows)
    failed = pd.DataFrame(failed_rows)
    result = RunResult(folder, results, failed, computed, reused)
    if report:
        from iclab.report import write_run_report

        write_run_report(exp, config, result)
    return result
