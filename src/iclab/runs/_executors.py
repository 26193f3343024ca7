"""Executors run independent cells: ``serial`` (in the driver, here), ``local`` (a pool of spawned processes,
the default; :mod:`iclab.runs._local`) and ``ray`` (a Ray cluster; :mod:`iclab.runs._ray`).

All share one interface: ``run(tasks, shared) -> iterator of CellOutcome`` in completion order. A cell is
shipped as a :class:`CellTask` (config, cell dict, and the experiment's cell function, which pickles by
reference: a module-level function or a ``lazy`` name), never as a closure. A cell that
raises becomes a failed outcome carrying its error text, and the sweep goes on. ``shared`` (heavy inputs
computed once by the driver) reaches each worker process once, when it starts, not once per cell.

"""

from __future__ import annotations

import time
import traceback
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Protocol

__all__ = ["CellTask", "CellOutcome", "Executor", "SerialExecutor", "execute_cell",
           "EXECUTORS", "jsonable"]

EXECUTORS = ("serial", "local", "ray")


@dataclass(frozen=True)
class CellTask:
    """What a worker needs to run one cell: the config, the cell and the function ``run_cell(config, cell, shared)``."""

    key: str
    idx: int
    experiment: str
    config: Any
    cell: dict
    run_cell: Callable[[Any, dict, Any], dict]


@dataclass(frozen=True)
class CellOutcome:
    """A finished cell: ``result`` (metrics) when it succeeded, ``error`` (text) when it failed."""

    key: str
    idx: int
    cell: dict
    result: dict | None
    error: str | None
    seconds: float

    @classmethod
    def failure(cls, task: CellTask, error: str, seconds: float = 0.0) -> "CellOutcome":
        return cls(task.key, task.idx, task.cell, None, error, seconds)


def jsonable(value: Any, where: str = "result") -> Any:
    """``value`` with numpy/torch scalars and arrays turned into plain floats/ints/lists (JSON-able).

    Raises ``TypeError`` naming the offending key for anything else, so a bad metric fails its cell in the
    worker instead of the driver's store.
    """
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return float(value)
    if isinstance(value, dict):
        return {str(k): jsonable(v, f"{where}[{k!r}]") for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if hasattr(value, "tolist") and callable(value.tolist):  # numpy / torch scalars and arrays
        return jsonable(value.tolist(), where)
    raise TypeError(f"{where} is a {type(value).__name__}; cell metrics must be numbers, strings or lists of them")


def execute_cell(task: CellTask, shared: Any) -> CellOutcome:
    """Run one cell in this process; exceptions become a failed outcome with the error text."""
    import torch

    # One intra-op thread in every executor: reductions then sum in the same order in the driver (serial),
    # in pool workers and on Ray, so a cell gives bit-identical numbers whatever runs it.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    start = time.perf_counter()
    try:
        result = task.run_cell(task.config, dict(task.cell), shared)
        if not isinstance(result, dict):
            raise TypeError(f"run_cell of {task.experiment!r} returned {type(result).__name__}, expected dict")
        result = jsonable(result)
        return CellOutcome(task.key, task.idx, task.cell, result, None, time.perf_counter() - start)
    except Exception as exc:  # noqa: BLE001 - a failing cell must not stop the sweep
        tb = traceback.format_exc(limit=-4)
        return CellOutcome.failure(task, f"{type(exc).__name__}: {exc}\n{tb}", time.perf_counter() - start)
    finally:
        torch.set_num_threads(threads)


class Executor(Protocol):
    name: str

    def run(self, tasks: list[CellTask], shared: Any) -> Iterator[CellOutcome]: ...


class SerialExecutor:
    """Runs cells one after another in the driver process (a crash here takes the driver with it)."""

    name = "serial"

    def run(self, tasks: list[CellTask], shared: Any) -> Iterator[CellOutcome]:
        for task in tasks:
            yield execute_cell(task, shared)
