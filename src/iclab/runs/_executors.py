"""Executors run independent cells: ``serial`` (in the driver), ``local`` (a process pool, the default).

All share one interface: ``run(tasks, shared) -> iterator of CellOutcome`` in completion order. A cell
that raises becomes a failed outcome carrying its error text; the sweep goes on. ``shared`` (heavy inputs
computed once by the driver) reaches each worker once, through the pool initializer, not once per cell.
"""

from __future__ import annotations

import multiprocessing as mp
import time
import traceback
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Protocol

__all__ = ["CellTask", "CellOutcome", "Executor", "SerialExecutor", "LocalExecutor", "make_executor", "execute_cell",
           "EXECUTORS"]

EXECUTORS = ("serial", "local", "ray")


@dataclass(frozen=True)
class CellTask:
    key: str
    idx: int
    experiment: str
    config: dict
    cell: dict


@dataclass(frozen=True)
class CellOutcome:
    key: str
    idx: int
    cell: dict
    result: dict | None
    error: str | None
    seconds: float


def execute_cell(task: CellTask, shared: Any) -> CellOutcome:
    """Run one cell in this process; exceptions become a failed outcome with the error text."""
    from iclab.experiments import get_experiment

    start = time.perf_counter()
    try:
        exp = get_experiment(task.experiment)
        config = exp.config_cls.from_dict(task.config)
        result = exp.run_cell(config, dict(task.cell), shared)
        if not isinstance(result, dict):
            raise TypeError(f"run_cell of {task.experiment!r} returned {type(result).__name__}, expected dict")
        return CellOutcome(task.key, task.idx, task.cell, result, None, time.perf_counter() - start)
    except Exception as exc:  # noqa: BLE001 - a failing cell must not stop the sweep
        tb = traceback.format_exc(limit=6)
        return CellOutcome(task.key, task.idx, task.cell, None, f"{type(exc).__name__}: {exc}\n{tb}",
                           time.perf_counter() - start)


class Executor(Protocol):
    name: str

    def run(self, tasks: list[CellTask], shared: Any) -> Iterator[CellOutcome]: ...


class SerialExecutor:
    """Runs cells one after another in the driver process."""

    name = "serial"

    def run(self, tasks: list[CellTask], shared: Any) -> Iterator[CellOutcome]:
        for task in tasks:
            yield execute_cell(task, shared)


_WORKER_SHARED: Any = None


def _init_worker(shared: Any) -> None:
    global _WORKER_SHARED
    import torch

    torch.set_num_threads(1)
    _WORKER_SHARED = shared


def _worker_execute(task: CellTask) -> CellOutcome:
    return execute_cell(task, _WORKER_SHARED)


class LocalExecutor:
    """A pool of ``workers`` local processes (spawned, one torch thread each)."""

    name = "local"

    def __init__(self, workers: int | None = None):
        self.workers = workers or max(1, mp.cpu_count())

    def run(self, tasks: list[CellTask], shared: Any) -> Iterator[CellOutcome]:
        if not tasks:
            return
        if len(tasks) == 1 or self.workers == 1:
            yield from SerialExecutor().run(tasks, shared)
            return
        ctx = mp.get_context("spawn")
        with ProcessPoolExecutor(max_workers=min(self.workers, len(tasks)), mp_context=ctx,
                                 initializer=_init_worker, initargs=(shared,)) as pool:
            futures = {pool.submit(_worker_execute, t): t for t in tasks}
            pending = set(futures)
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for fut in done:
                    task = futures[fut]
                    try:
                        yield fut.result()
                    except BrokenProcessPool as exc:
                        yield CellOutcome(task.key, task.idx, task.cell, None,
                                          f"worker process died: {exc}", 0.0)
                    except Exception as exc:  # noqa: BLE001 - e.g. an unpicklable result
                        yield CellOutcome(task.key, task.idx, task.cell, None, f"{type(exc).__name__}: {exc}", 0.0)


def make_executor(name: str, workers: int | None = None, address: str | None = None) -> Executor:
    """``serial`` | ``local`` | ``ray`` (the Ray executor lives in ``iclab.runs._ray``)."""
    from iclab.config import check_choice

    check_choice("executor", name, EXECUTORS)
    if name == "serial":
        return SerialExecutor()
    if name == "local":
        return LocalExecutor(workers)
    from iclab.runs._ray import RayExecutor  # imported lazily: ray is heavy

    return RayExecutor(address=address, workers=workers)
