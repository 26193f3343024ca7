"""Executors run independent cells: ``serial`` (in the driver, here), ``local`` (a pool of spawned processes,
the default; :mod:`iclab.runs._local`) and ``ray`` (a Ray cluster; :mod:`iclab.runs._ray`).

All share one interface: ``run(tasks, shared) -> iterator of CellOutcome`` in completion order, each made from the
run's :class:`~iclab.runs.RunOptions` (workers, address, cell timeout). ``tasks`` is a sequence the executors draw
from lazily (a :class:`TaskQueue`), so a sweep of many cells never holds all its tasks at once. A cell is
shipped as a :class:`CellTask` (config, cell dict, and the experiment's cell function, which pickles by
reference: a module-level function or a ``lazy`` name), never as a closure. A cell that
raises becomes a failed outcome carrying its error text, and the sweep goes on. ``shared`` (heavy inputs
computed once by the driver) reaches each worker process once, when it starts, not once per cell.

An optional per-cell timeout (``--cell-timeout S``) is enforced where the cell runs: :func:`execute_cell` arms
``SIGALRM`` (a POSIX interval timer) on the thread that runs the cell, when that is the process's main thread, and
the cell is recorded as failed with ``timed out after S s``; the sweep goes on. This stops a cell in Python code
or in a blocking call that returns on a signal (sleep, I/O, a lock); a cell stuck inside one long C call stops
when that call returns. So the ``serial`` executor keeps running cells in the driver (it stays a debugger's
executor), while ``local`` and ``ray`` add a hard stop from the driver: a worker still busy with the cell some
seconds after the timeout is killed (local) or its task cancelled (Ray), and the cell fails the same way.
"""

from __future__ import annotations

import signal
import threading
import time
import traceback
from contextlib import contextmanager
from dataclasses import dataclass
from collections import deque
from typing import Any, Callable, Iterable, Iterator, Protocol, Sequence

from iclab.runs._options import RunOptions

__all__ = ["CellTask", "CellOutcome", "Executor", "SerialExecutor", "execute_cell", "CellTimeout",
           "jsonable", "timed_out", "can_time_out_here", "TaskQueue", "RESERVED", "check_result_keys"]



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
        out = {str(k): jsonable(v, f"{where}[{k!r}]") for k, v in value.items()}
        if len(out) < len(value):  # {1: a, "1": b}: JSON keys are strings, so one would overwrite the other
            seen = [str(k) for k in value]
            clash = next(k for k in value if seen.count(str(k)) > 1)
            raise TypeError(f"{where} has two keys that are both {str(clash)!r} in JSON (keys are strings there)")
        return out
    if isinstance(value, (list, tuple)):
        return [jsonable(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if hasattr(value, "tolist") and callable(value.tolist):  # numpy / torch scalars and arrays
        return jsonable(value.tolist(), where)
    raise TypeError(f"{where} is a {type(value).__name__}; cell metrics must be numbers, strings or lists of them")


class CellTimeout(BaseException):
    """Raised in a cell by the timer: a BaseException, so a cell's own ``except Exception`` cannot swallow it."""


def timed_out(seconds: float) -> str:
    """The error text of a cell stopped by ``--cell-timeout``."""
    return f"timed out after {seconds:g} s (--cell-timeout)"


def can_time_out_here() -> bool:
    """Whether :func:`execute_cell` can arm its timer on this thread (POSIX, main thread)."""
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


@contextmanager
def _alarm(seconds: float | None):
    """Raise :class:`CellTimeout` in this (main) thread after ``seconds``; no-op without a timeout."""
    if not seconds or not can_time_out_here():
        yield
        return

    def ring(signum, frame):
        raise CellTimeout()

    previous = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


RESERVED = ("_key", "_status", "_seconds", "_error")  # the store's bookkeeping columns of every results row


def check_result_keys(result: dict, cell: dict) -> None:
    """A TypeError naming the key when a cell's (JSON-ed) ``result`` uses a name the sweep reserves: a bookkeeping
    column (:data:`RESERVED`) or a key of its grid cell, which the results row would otherwise silently overwrite."""
    for key in result:
        if key in RESERVED:
            raise TypeError(f"the result uses the reserved key {key!r} (the store's own column; reserved: "
                            f"{', '.join(RESERVED)} and the cell's grid keys)")
        if key in cell:
            raise TypeError(f"the result uses the key {key!r} of its grid cell (the results row holds the cell's "
                            f"{key}={cell[key]!r}); rename the metric")


class _DriverInterrupt:
    """While a cell runs on the main thread, tells a real interrupt of this process (SIGINT or SIGTERM handled by a
    Python handler: the driver's Ctrl-C, the CLI's SIGTERM) from an exception the cell raises itself: each such
    handler is wrapped to note the signal first, so what it raises still stops the run, while a KeyboardInterrupt or
    SystemExit the cell raises is a failed cell (as in pool and Ray workers, which ignore SIGINT)."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.seen, self.previous = False, {}

    def __enter__(self) -> "_DriverInterrupt":
        if threading.current_thread() is threading.main_thread():
            for sig in self.SIGNALS:
                handler = signal.getsignal(sig)
                if callable(handler):  # SIG_DFL and SIG_IGN need no wrapper: nothing raises in Python
                    self.previous[sig] = handler
                    signal.signal(sig, self._noting(handler))
        return self

    def _noting(self, handler):
        def note(signum, frame):
            self.seen = True
            return handler(signum, frame)

        return note

    def __exit__(self, *exc) -> None:
        for sig, handler in self.previous.items():
            signal.signal(sig, handler)


def execute_cell(task: CellTask, shared: Any, timeout: float | None = None) -> CellOutcome:
    """Run one cell in this process; every exception it raises (``SystemExit`` and ``KeyboardInterrupt``
    included) becomes a failed outcome with the error text, as does a result that is not a dict of JSON-able
    metrics or that uses a reserved key (:func:`check_result_keys`), and a cell still running after ``timeout``
    seconds (see the module docstring). A real Ctrl-C or SIGTERM to the driver (serial executor) still stops the
    run (:class:`_DriverInterrupt`)."""
    import torch

    # One intra-op thread in every executor: reductions then sum in the same order in the driver (serial),
    # in pool workers and on Ray, so a cell gives bit-identical numbers whatever runs it.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    start = time.perf_counter()
    interrupt = _DriverInterrupt().__enter__()  # left in `finally`: a signal after the cell is still noted
    try:
        with _alarm(timeout):
            result = task.run_cell(task.config, dict(task.cell), shared)
        if not isinstance(result, dict):
            raise TypeError(f"run_cell of {task.experiment!r} returned {type(result).__name__}, expected dict")
        result = jsonable(result)
        check_result_keys(result, task.cell)
        return CellOutcome(task.key, task.idx, task.cell, result, None, time.perf_counter() - start)
    except CellTimeout:
        return CellOutcome.failure(task, timed_out(timeout), time.perf_counter() - start)
    except BaseException as exc:  # noqa: BLE001 - a failing cell (SystemExit too) must not stop the sweep
        if interrupt.seen:  # a real Ctrl-C or SIGTERM to this process: stop the run
            raise
        if isinstance(exc, KeyboardInterrupt):
            tb = traceback.format_exc(limit=-4)
            return CellOutcome.failure(task, f"KeyboardInterrupt raised by the cell\n{tb}", time.perf_counter() - start)
        tb = traceback.format_exc(limit=-4)
        return CellOutcome.failure(task, f"{type(exc).__name__}: {exc}\n{tb}", time.perf_counter() - start)
    finally:
        interrupt.__exit__()
        torch.set_num_threads(threads)


class TaskQueue:
    """The tasks still to hand out, in order: drawn one at a time from ``tasks`` (a list, or the lazy sequence of a
    sweep, which makes each task when it is drawn), with tasks put back ahead of the rest (a dead worker's)."""

    def __init__(self, tasks: Sequence[CellTask]) -> None:
        self._tasks, self._next, self._back = tasks, 0, deque()

    def __len__(self) -> int:
        return len(self._back) + len(self._tasks) - self._next

    def pop(self) -> CellTask:
        """The next task (IndexError when none is left)."""
        if self._back:
            return self._back.popleft()
        task = self._tasks[self._next]
        self._next += 1
        return task

    def put_back(self, tasks: Iterable[CellTask]) -> None:
        """``tasks``, in their order, ahead of every task not handed out yet."""
        self._back.extendleft(reversed(list(tasks)))


class Executor(Protocol):
    name: str

    def run(self, tasks: Sequence[CellTask], shared: Any) -> Iterator[CellOutcome]: ...


class SerialExecutor:
    """Runs cells one after another in the driver process (a crash here takes the driver with it). With
    ``timeout`` the cell is stopped by ``SIGALRM`` (module docstring), so it must run on the main thread."""

    name = "serial"

    def __init__(self, options: RunOptions | None = None) -> None:
        self.timeout = options.cell_timeout if options is not None else None

    def run(self, tasks: Sequence[CellTask], shared: Any) -> Iterator[CellOutcome]:
        if self.timeout and not can_time_out_here():
            from iclab.errors import ConfigError

            raise ConfigError("cell_timeout", self.timeout, message="--cell-timeout with --executor serial needs "
                              "the main thread of a POSIX process (it uses SIGALRM); use --executor local")
        for task in tasks:
            yield execute_cell(task, shared, self.timeout)
