"""Executors run independent cells: ``serial`` (in the driver), ``local`` (a pool of spawned processes, the
default) and ``ray`` (a Ray cluster; :mod:`iclab.runs._ray`).

All share one interface: ``run(tasks, shared) -> iterator of CellOutcome`` in completion order. A cell is
shipped as a :class:`CellTask` (experiment name + config dict + cell dict), never as a closure. A cell that
raises becomes a failed outcome carrying its error text, and the sweep goes on. ``shared`` (heavy inputs
computed once by the driver) reaches each worker process once, when it starts, not once per cell.

The local pool is crash-proof: every worker has its own pipe and runs the cells sent to it in order, so when a
worker dies (segfault, OOM kill, ``os._exit``) the driver knows exactly which cell it was running, records only
that cell as failed (with the exit code), starts a replacement worker and carries on with the rest.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import time
import traceback
from collections import deque
from dataclasses import dataclass
from multiprocessing.connection import wait as mp_wait
from typing import Any, Iterator, Protocol

__all__ = ["CellTask", "CellOutcome", "Executor", "SerialExecutor", "LocalExecutor", "make_executor", "execute_cell",
           "EXECUTORS", "jsonable"]

EXECUTORS = ("serial", "local", "ray")


@dataclass(frozen=True)
class CellTask:
    """What a worker needs to run one cell: the experiment's name, its config (as a dict) and the cell."""

    key: str
    idx: int
    experiment: str
    config: dict
    cell: dict


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
    from iclab.experiments import get_experiment

    start = time.perf_counter()
    try:
        exp = get_experiment(task.experiment)
        config = exp.config_cls.from_dict(task.config)
        result = exp.run_cell(config, dict(task.cell), shared)
        if not isinstance(result, dict):
            raise TypeError(f"run_cell of {task.experiment!r} returned {type(result).__name__}, expected dict")
        result = jsonable(result)
        return CellOutcome(task.key, task.idx, task.cell, result, None, time.perf_counter() - start)
    except Exception as exc:  # noqa: BLE001 - a failing cell must not stop the sweep
        tb = traceback.format_exc(limit=-4)
        return CellOutcome.failure(task, f"{type(exc).__name__}: {exc}\n{tb}", time.perf_counter() - start)


class Executor(Protocol):
    name: str

    def run(self, tasks: list[CellTask], shared: Any) -> Iterator[CellOutcome]: ...


class SerialExecutor:
    """Runs cells one after another in the driver process (a crash here takes the driver with it)."""

    name = "serial"

    def run(self, tasks: list[CellTask], shared: Any) -> Iterator[CellOutcome]:
        for task in tasks:
            yield execute_cell(task, shared)


def _worker_main(conn, shared: Any) -> None:
    """Worker loop of the local pool: receive a task, send its outcome; stop on ``None`` or a lost driver."""
    import torch

    torch.set_num_threads(1)
    conn.send(_READY)
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):  # the driver is gone (killed): nothing left to do
            return
        if task is None:
            return
        outcome = execute_cell(task, shared)
        try:
            conn.send(outcome)
        except Exception as exc:  # noqa: BLE001 - e.g. an unpicklable value in the result
            conn.send(CellOutcome.failure(task, f"could not send the result back: {type(exc).__name__}: {exc}"))


_READY = "iclab-worker-ready"


class _Worker:
    """One spawned worker process and the tasks sent to it, oldest first (it runs them in that order)."""

    def __init__(self, ctx, shared: Any):
        self.conn, child = ctx.Pipe(duplex=True)
        self.proc = ctx.Process(target=_worker_main, args=(child, shared), daemon=True)
        self.proc.start()
        child.close()
        self.tasks: deque[CellTask] = deque()
        self.started = time.perf_counter()  # when its oldest outstanding task started (roughly)
        self.ready = False  # set when the worker has started up (imported iclab, unpickled ``shared``)

    def give(self, task: CellTask) -> None:
        self.conn.send(task)
        if not self.tasks:
            self.started = time.perf_counter()
        self.tasks.append(task)

    def ask_to_stop(self) -> None:
        """Tell an idle worker to exit (a busy one is terminated by :meth:`stop`)."""
        try:
            if self.proc.is_alive() and not self.tasks:
                self.conn.send(None)
        except OSError:
            pass

    def stop(self, timeout: float = 2.0) -> None:
        self.ask_to_stop()
        if not self.tasks:
            self.proc.join(timeout)
        if self.proc.is_alive():
            self.proc.terminate()
            self.proc.join(timeout)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join(timeout)
        self.conn.close()


class LocalExecutor:
    """``workers`` spawned local processes (one torch thread each), each with up to ``prefetch`` cells queued.

    ``shared`` is pickled once per worker process at start-up (and again only for a replacement worker). A worker
    runs its cells in the order it received them, so when it dies the oldest cell it had not answered is the
    culprit: only that cell is marked failed; the others it held go back to the queue.
    """

    name = "local"

    def __init__(self, workers: int | None = None, prefetch: int = 2):
        from iclab.config import check_int

        if workers is not None:
            check_int("workers", workers)
        check_int("prefetch", prefetch)
        self.workers = workers or max(1, os.cpu_count() or 1)
        self.prefetch = prefetch

    def run(self, tasks: list[CellTask], shared: Any) -> Iterator[CellOutcome]:
        if not tasks:
            return
        ctx = mp.get_context("spawn")
        queue = deque(tasks)
        pool: list[_Worker] = []

        def fill(i: int) -> None:
            while queue and len(pool[i].tasks) < self.prefetch:
                task = queue.popleft()
                try:
                    pool[i].give(task)
                except OSError:  # died while idle: not the cell's fault; requeue everything it held
                    queue.appendleft(task)
                    queue.extendleft(reversed(pool[i].tasks))
                    pool[i].tasks.clear()
                    pool[i].stop()
                    pool[i] = _Worker(ctx, shared)

        try:
            pool = [_Worker(ctx, shared) for _ in range(min(self.workers, len(tasks)))]
            for i in range(len(pool)):
                fill(i)
            while any(w.tasks for w in pool):
                busy = [w for w in pool if w.tasks]
                ready = set(mp_wait([w.conn for w in busy] + [w.proc.sentinel for w in busy]))
                for i, w in enumerate(pool):
                    if not w.tasks or (w.conn not in ready and w.proc.sentinel not in ready):
                        continue
                    try:
                        outcome = w.conn.recv() if w.conn.poll() else None
                    except (EOFError, OSError):
                        outcome = None
                    if outcome == _READY:
                        w.ready = True
                        continue
                    if outcome is None and w.proc.is_alive():
                        continue  # woke up without a message; keep waiting
                    if outcome is None:  # died while running its oldest task: only that cell fails
                        w.proc.join(5)
                        code = w.proc.exitcode
                        why = f"exit code {code}" + (f", signal {-code}" if code is not None and code < 0 else "")
                        if not w.ready:  # not the cell's fault: the worker could not even start
                            raise RuntimeError(
                                f"a local worker process exited ({why}) before it could run a cell; see its "
                                "error above. Finished cells are kept; try --executor serial to debug.")
                        culprit = w.tasks.popleft()
                        outcome = CellOutcome.failure(culprit, f"worker process died while running this cell ({why})",
                                                      time.perf_counter() - w.started)
                        queue.extendleft(reversed(w.tasks))
                        w.tasks.clear()
                        w.stop()
                        if queue:
                            pool[i] = _Worker(ctx, shared)
                    else:
                        w.tasks.popleft()
                        w.started = time.perf_counter()
                    yield outcome
                    fill(i)
        finally:
            for w in pool:  # all at once, then wait for each
                w.ask_to_stop()
            for w in pool:
                w.stop()


def make_executor(name: str, workers: int | None = None, address: str | None = None) -> Executor:
    """``serial`` | ``local`` | ``ray`` (the Ray executor lives in ``iclab.runs._ray``; imported lazily)."""
    from iclab.config import check_choice

    check_choice("executor", name, EXECUTORS)
    if name == "serial":
        return SerialExecutor()
    if name == "local":
        return LocalExecutor(workers)
    from iclab.runs._ray import RayExecutor  # imported lazily: ray is heavy

    return RayExecutor(address=address, workers=workers)
