"""The ``local`` executor: a pool of spawned worker processes that survives a dead worker.

Every worker has its own pipe and runs the cells sent to it in order (up to ``prefetch`` queued, so it never
waits for the driver; at the start they are dealt round robin, so worker ``i`` begins on cell ``i``). When a
worker dies (segfault, OOM kill, ``os._exit``) the driver knows exactly which cell
it was running (its oldest unanswered one), records only that cell as failed with the exit code, puts the cells
the worker still held back in the queue, starts a replacement and carries on. ``shared`` reaches each worker
once, as an argument of the process (pickled at spawn), never per cell. Workers exit by themselves when the
driver disappears: between cells their pipe closes, and during a cell a watchdog thread sees the worker re-parented
(its parent process id changes) within a second and ends it, so a killed driver (``kill -9``, ``SIGTERM``) leaves no
orphans computing. When the cells run on
``device="cuda"``, the pool defaults to one worker per visible GPU, each pinned to its GPU by
``CUDA_VISIBLE_DEVICES`` (so no two workers load their model copies onto the same GPU). With a per-cell
timeout, a worker still on one cell ``HARD_STOP_GRACE`` seconds after its timeout (a cell stuck where the
worker's own timer cannot reach, see :mod:`iclab.runs._executors`) is killed; that cell fails as timed out.

With ``keep=True`` (what :func:`iclab.runs.kept_workers` makes, and ``iclab reproduce`` uses) the workers outlive a
sweep that ends normally: the next sweep sends each idle worker its own ``shared`` (pickled once per worker, as at
a start) and reuses it, so imports and the models a worker loaded (:func:`iclab.hf.shared_model`) are paid once per
command rather than once per experiment; :meth:`LocalExecutor.close` stops them. A sweep that ends in an error stops
its workers as before. A reused worker computes what a fresh one does: every cell seeds itself and sets its own
torch threads, as in the serial executor, which runs every experiment in one process.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import time
from collections import deque
from multiprocessing.connection import wait as mp_wait
from typing import Any, Iterator, Sequence

from iclab.errors import IclabError
from iclab.runs._executors import CellOutcome, CellTask, TaskQueue, execute_cell, timed_out
from iclab.runs._options import RunOptions

__all__ = ["LocalExecutor", "HARD_STOP_GRACE", "cuda_cells", "visible_gpus", "worker_environment"]

HARD_STOP_GRACE = 5.0  # seconds past --cell-timeout before the driver kills a worker its own timer did not stop


def cuda_cells(tasks: Sequence[CellTask]) -> bool:
    """True when the cells' config asks for ``device="cuda"`` (any GPU: the pool pins one per worker; an explicit
    ``cuda:N`` is left alone)."""
    return bool(tasks) and getattr(tasks[0].config, "device", "cpu") == "cuda"


def visible_gpus() -> list[str]:
    """The GPUs this process may use: the entries of ``CUDA_VISIBLE_DEVICES`` when set, else ``0 … count − 1``."""
    env = os.environ.get("CUDA_VISIBLE_DEVICES")
    if env is not None:
        ids = [x.strip() for x in env.split(",") if x.strip()]
        return ids[: ids.index("-1")] if "-1" in ids else ids
    import torch

    return [str(i) for i in range(torch.cuda.device_count())]


def worker_environment(i: int, gpus: list[str]) -> dict[str, str]:
    """Environment variables of pool worker ``i``: pinned to GPU ``gpus[i mod len]``; nothing on CPU."""
    return {"CUDA_VISIBLE_DEVICES": gpus[i % len(gpus)]} if gpus else {}


def _worker_main(conn, shared: Any, env: dict[str, str] | None = None, timeout: float | None = None) -> None:
    """Worker loop of the local pool: receive a task, send its outcome; stop on ``None`` or a lost driver."""
    os.environ.update(env or {})  # before CUDA initialises: CUDA_VISIBLE_DEVICES pins this worker's GPU
    import torch

    _follow_driver()
    torch.set_num_threads(1)
    conn.send(_READY)
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):  # the driver is gone (killed): nothing left to do
            return
        if task is None:
            return
        if isinstance(task, _NewShared):  # a kept worker, reused by the next sweep
            shared = task.value
            continue
        outcome = execute_cell(task, shared, timeout)
        try:
            conn.send(outcome)
        except Exception as exc:  # noqa: BLE001 - e.g. an unpicklable value in the result
            conn.send(CellOutcome.failure(task, f"could not send the result back: {type(exc).__name__}: {exc}"))


_READY = "iclab-worker-ready"
PARENT_POLL = 1.0  # seconds between a worker's checks that its driver is alive


class _NewShared:
    """The message that gives a kept worker the next sweep's ``shared``."""

    def __init__(self, value: Any) -> None:
        self.value = value


def _follow_driver() -> None:
    """Set up a process the driver spawned (a pool worker, the helper of :mod:`iclab.runs._ahead`): Ctrl-C and
    SIGTERM are the driver's, which stops its processes itself, so they are ignored here; and the process ends once
    the driver is gone (:func:`_watch_parent`)."""
    import signal

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_IGN)
    _watch_parent(os.getppid())


def _watch_parent(parent: int) -> None:
    """End this worker (``os._exit``) once its driver ``parent`` is gone, even in the middle of a cell: a daemon
    thread polls the parent process id, which changes when the driver dies and the worker is re-parented."""
    import threading

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL)
        os._exit(1)

    threading.Thread(target=watch, name="iclab-parent-watchdog", daemon=True).start()


class _Worker:
    """One spawned worker process and the tasks sent to it, oldest first (it runs them in that order)."""

    def __init__(self, ctx, shared: Any, env: dict[str, str] | None = None, timeout: float | None = None):
        self.conn, child = ctx.Pipe(duplex=True)
        self.env = env or {}
        self.proc = ctx.Process(target=_worker_main, args=(child, shared, self.env, timeout), daemon=True)
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
        """Tell an idle worker to exit (a busy one is killed by :meth:`stop`)."""
        try:
            if self.proc.is_alive() and not self.tasks:
                self.conn.send(None)
        except OSError:
            pass

    def stop(self, timeout: float = 2.0) -> None:
        self.ask_to_stop()
        if not self.tasks:
            self.proc.join(timeout)
        if self.proc.is_alive():  # a busy worker (it ignores SIGTERM, so: SIGKILL)
            self.proc.kill()
            self.proc.join(timeout)
        self.conn.close()


def _stop_all(workers: list[_Worker]) -> None:
    """Stop ``workers``: all asked at once, then each waited for briefly (idle workers hold nothing to lose; a busy
    one is killed)."""
    for w in workers:
        w.ask_to_stop()
    for w in workers:
        w.stop(timeout=0.5)


class LocalExecutor:
    """``options.workers`` spawned local processes (one torch thread each), each with up to ``prefetch`` cells
    queued; ``options.cell_timeout`` arms the hard stop (module docstring).

    ``shared`` is pickled once per worker process at start-up (and again only for a replacement worker). A worker
    runs its cells in the order it received them, so when it dies the oldest cell it had not answered is the
    culprit: only that cell is marked failed; the others it held go back to the queue.
    """

    name = "local"

    def __init__(self, options: RunOptions | None = None, prefetch: int = 2, keep: bool = False) -> None:
        from iclab.config import check_int

        check_int("prefetch", prefetch)
        self.requested = options.workers if options is not None else None  # (checked by RunOptions)
        self.workers = self.requested or max(1, os.cpu_count() or 1)
        self.prefetch = prefetch
        self.timeout = options.cell_timeout if options is not None else None
        self.keep = bool(keep)
        self._kept: list[_Worker] = []  # idle workers of the last sweep (``keep``), alive

    def close(self) -> None:
        """Stop the workers kept from the last sweep (none without ``keep``); the executor can run again."""
        kept, self._kept = self._kept, []
        _stop_all(kept)

    def _start(self, ctx, shared: Any, envs: list[dict[str, str]]) -> list[_Worker]:
        """One worker per environment: a kept one with that environment, given ``shared``, else a new process."""
        pool: list[_Worker] = []
        try:
            for env in envs:
                w = next((k for k in self._kept if k.env == env), None)
                if w is not None:
                    self._kept.remove(w)
                    pool.append(w)
                    try:
                        w.conn.send(_NewShared(shared))
                        continue
                    except OSError:  # it died while idle: not a cell's fault; start another
                        pool.pop().stop()
                pool.append(_Worker(ctx, shared, env, self.timeout))
        except BaseException:  # e.g. a shared that does not pickle: stop what this sweep holds, then say so
            _stop_all(pool)
            raise
        return pool

    def _overdue(self, pool: list[_Worker]) -> tuple[list[int], float | None]:
        """Indices of workers past the hard stop, and seconds until the next one is due (None: no timeout)."""
        if not self.timeout:
            return [], None
        now, late, wait = time.perf_counter(), [], None
        for i, w in enumerate(pool):
            if w.tasks and w.ready:
                left = w.started + self.timeout + HARD_STOP_GRACE - now
                if left <= 0:
                    late.append(i)
                else:
                    wait = left if wait is None else min(wait, left)
        return late, wait

    def plan(self, tasks: Sequence[CellTask]) -> list[dict[str, str]]:
        """One environment per worker to start: one worker per visible GPU (pinned) when the cells run on CUDA and
        ``workers`` was not given, else ``workers`` CPU workers (capped at the number of cells)."""
        gpus = visible_gpus() if cuda_cells(tasks) else []
        n = self.requested or (len(gpus) if gpus else self.workers)
        return [worker_environment(i, gpus) for i in range(min(n, len(tasks)))]

    def run(self, tasks: Sequence[CellTask], shared: Any) -> Iterator[CellOutcome]:
        if not len(tasks):
            return
        ctx = mp.get_context("spawn")
        queue = TaskQueue(tasks)  # drawn as workers need them: the driver never holds every task
        pool: list[_Worker] = []
        envs = self.plan(tasks)

        def fill(i: int, depth: int | None = None) -> None:
            while queue and len(pool[i].tasks) < (depth or self.prefetch):
                task = queue.pop()
                try:
                    pool[i].give(task)
                except OSError:  # died while idle: not the cell's fault; requeue everything it held
                    queue.put_back([*pool[i].tasks, task])
                    pool[i].tasks.clear()
                    pool[i].stop()
                    pool[i] = _Worker(ctx, shared, envs[i], self.timeout)

        finished = False
        try:
            pool = self._start(ctx, shared, envs)
            for depth in range(1, self.prefetch + 1):  # round robin: worker i starts on cell i, not i * prefetch
                for i in range(len(pool)):
                    fill(i, depth)
            while any(w.tasks for w in pool):
                late, wait = self._overdue(pool)
                for i in late:
                    yield self._hard_stop(pool, i, queue, ctx, shared)
                    fill(i)
                busy = [w for w in pool if w.tasks]
                if late or not busy:
                    continue
                ready = set(mp_wait([w.conn for w in busy] + [w.proc.sentinel for w in busy], timeout=wait))
                for i, w in enumerate(pool):
                    if not w.tasks or (w.conn not in ready and w.proc.sentinel not in ready):
                        continue
                    try:
                        outcome = w.conn.recv() if w.conn.poll() else None
                    except (EOFError, OSError):
                        outcome = None
                    if outcome == _READY:
                        w.ready = True
                        w.started = time.perf_counter()  # its first cell starts now
                        continue
                    if outcome is None and w.proc.is_alive():
                        continue  # woke up without a message; keep waiting
                    if outcome is None:  # died while running its oldest task: only that cell fails
                        w.proc.join(5)
                        code = w.proc.exitcode
                        why = f"exit code {code}" + (f", signal {-code}" if code is not None and code < 0 else "")
                        if not w.ready:  # not the cell's fault: the worker could not even start
                            raise IclabError(
                                f"a local worker process exited ({why}) before it could run a cell; see its "
                                "error above. Finished cells are kept; try --executor serial to debug."
                            )
                        culprit = w.tasks.popleft()
                        outcome = CellOutcome.failure(
                            culprit,
                            f"worker process died while running this cell ({why})",
                            time.perf_counter() - w.started,
                        )
                        queue.put_back(w.tasks)
                        w.tasks.clear()
                        w.stop()
                        if queue:
                            pool[i] = _Worker(ctx, shared, envs[i], self.timeout)
                    else:
                        w.tasks.popleft()
                        w.started = time.perf_counter()
                    yield outcome
                    fill(i)
            finished = True
        finally:
            if finished and self.keep:  # a normal end: every worker is idle; keep the live ones for the next sweep
                self._kept += [w for w in pool if w.proc.is_alive()]
                pool = [w for w in pool if w not in self._kept]
            _stop_all(pool)

    def _hard_stop(self, pool: list[_Worker], i: int, queue: TaskQueue, ctx, shared: Any) -> CellOutcome:
        """Kill worker ``i`` (its cell ran past the timeout); fail that cell, requeue the rest, start a new one."""
        w = pool[i]
        culprit = w.tasks.popleft()
        queue.put_back(w.tasks)
        w.tasks.clear()
        w.proc.kill()
        w.stop(timeout=5)
        if queue:
            pool[i] = _Worker(ctx, shared, w.env, self.timeout)
        return CellOutcome.failure(
            culprit, timed_out(self.timeout) + "; the worker was killed", time.perf_counter() - w.started
        )
