"""The ``ray`` executor: cells as Ray tasks on an existing cluster (``--address``) or on a local Ray started
on demand (loopback only, no dashboard).

Each cell is shipped as a :class:`CellTask` (config, cell and the cell function by reference). ``shared`` is put in the
object store once (``ray.put``) and passed to every task by reference; each worker process fetches it once and
keeps it for the later cells of the same run. Outcomes come back in completion order (``ray.wait``). A task
whose worker dies (``WorkerCrashedError``) or that Ray cannot run becomes a failed cell with the error text;
tasks are not retried by Ray (``max_retries=0``), so a crashing cell fails once and ``--retry-failed`` reruns it.
Short cells travel in batches: once the first cells show how long a cell takes, one Ray task carries about
:data:`BATCH_SECONDS` of cells (at most :data:`MAX_BATCH`, and never more than an even share of what is left), so
Ray's own cost of a task (milliseconds) is paid per batch, not per cell; each outcome is still recorded in its own
store transaction as its batch returns. A batch whose worker dies is rerun one cell per task, so that only the cell
that crashed fails. With a per-cell timeout every task carries one cell.
Cells on ``device="cuda"`` request one GPU each (``num_gpus=1``): Ray pins each task to its GPU.

Connecting never hangs: ``--address`` must be ``HOST:PORT``, ``ray://HOST:PORT`` or ``auto``; before
``ray.init`` (which retries an unreachable address forever) the driver opens a TCP connection to the address Ray
will really use (Ray rewrites ``127.0.0.1`` to this machine's address) and asks its GCS for the cluster id, each
within :data:`CONNECT_TIMEOUT` seconds (``ICLAB_RAY_CONNECT_TIMEOUT``); a failure is one :class:`IclabError`.
A local Ray that iclab starts runs without the dashboard (``include_dashboard=False``) and dies with its driver,
SIGKILL included: Ray's agents (dashboard and runtime-env agent: Ray 2.60's raylet refuses to start without them
and dies with them, so they run even with the dashboard off) would otherwise spend a minute trying to report the
raylet's death to the dead GCS, and its idle workers linger for seconds, so a small reaper process
(:data:`_REAPER`) waits for the driver's pipe to close and then kills the Ray processes the driver started
(checked by start time, so a reused pid is never hit) and every process they started since (the workers).
With a per-cell timeout, at most one task per CPU is in flight and a task still unanswered
``timeout + HARD_STOP_GRACE`` seconds after it was submitted is cancelled (its worker killed) and fails as timed out.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from typing import Any, Iterator, Sequence

from iclab.errors import IclabError
from iclab.settings import setting
from iclab.runs._executors import CellOutcome, CellTask, TaskQueue, execute_cell, timed_out
from iclab.runs._local import cuda_cells
from iclab.runs._options import RunOptions, check_address

__all__ = ["RayExecutor", "ray_init", "task_resources", "CONNECT_TIMEOUT", "HARD_STOP_GRACE"]

CONNECT_TIMEOUT = 30.0  # seconds, unless ICLAB_RAY_CONNECT_TIMEOUT says otherwise (read when used)
HARD_STOP_GRACE = 60.0  # seconds past --cell-timeout (a Ray worker may take this long to start on a small machine)
BATCH_SECONDS = 0.05  # work one Ray task carries once cells are known to be short (module docstring)
MAX_BATCH = 256

# Environment a worker needs to import the same modules as the driver (user / test experiment modules).
_FORWARD_ENV = ("ICLAB_EXPERIMENT_MODULES", "PYTHONPATH", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")

_SHARED_CACHE: dict[str, Any] = {}  # per worker process: object-ref hex -> shared value


def _tcp_reachable(host: str, port: int, seconds: float) -> str | None:
    """None if a TCP connection to ``host:port`` opens within ``seconds``, else the reason."""
    import socket

    try:
        with socket.create_connection((host, port), timeout=seconds):
            return None
    except OSError as exc:
        return exc.strerror or type(exc).__name__


def _gcs_answers(address: str, seconds: float) -> bool:
    """Whether a Ray GCS at ``address`` gives its cluster id within ``seconds`` (probed on a daemon thread,
    abandoned if it does not return: Ray's own client retries for much longer)."""
    try:
        from ray._raylet import GcsClient
    except ImportError:  # pragma: no cover - another Ray: only the TCP check applies
        return True
    answer: list[bool] = []

    def probe() -> None:
        try:
            GcsClient(address=address)
            answer.append(True)
        except Exception:  # noqa: BLE001 - any failure means: not a GCS we can use
            answer.append(False)

    thread = threading.Thread(target=probe, name="iclab-ray-probe", daemon=True)
    thread.start()
    thread.join(seconds)
    return bool(answer and answer[0])


def _check_reachable(address: str, seconds: float) -> None:
    """One IclabError unless the Ray cluster at ``address`` answers within ``seconds`` (module docstring)."""
    host, port = check_address(address) or (None, None)
    if host is None:
        return
    target = f"{host}:{port}"
    if not address.startswith("ray://"):
        from ray._private.services import canonicalize_bootstrap_address

        target = canonicalize_bootstrap_address(address) or target  # Ray rewrites 127.0.0.1 to the node's IP
    t_host, _, t_port = target.rpartition(":")
    why = _tcp_reachable(t_host, int(t_port), min(seconds, 10.0))
    rewritten = f" (Ray connects to {target} for {address})" if target != address else ""
    if why is not None:
        raise IclabError(f"cannot reach a Ray cluster at {address}{rewritten}: {why}. Start one with "
                         "`ray start --head`, check the address, or drop --address to start a local Ray")
    if not address.startswith("ray://") and not _gcs_answers(target, seconds):
        raise IclabError(f"{address}{rewritten} accepts connections but no Ray GCS answered within {seconds:g} s; "
                         "is it the head node's GCS port (`ray start --head --port`, default 6379)?")


# Run as `python -S -c _REAPER pid:start ...` with stdin a pipe from the driver: EOF means the driver is gone. It
# stops the Ray processes it was given (so the raylet starts no new worker), adds everything they started since
# (the workers, ``ray::IDLE`` and busy), and kills them all.
_REAPER = r"""
import os, signal, sys
def stat(pid):
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return int(fields[1]), int(fields[19])
    except (OSError, ValueError, IndexError):
        return None
def send(pids, sig):
    for pid in pids:
        try:
            os.kill(pid, sig)
        except OSError:
            pass
targets = [tuple(map(int, a.split(":"))) for a in sys.argv[1:]]
sys.stdin.buffer.read()
mine = {pid for pid, start in targets if (stat(pid) or (0, -1))[1] == start}
send(mine, signal.SIGSTOP)
stats = {int(d): stat(int(d)) for d in os.listdir("/proc") if d.isdigit()}
todo = list(mine)
while todo:
    parent = todo.pop()
    found = {pid for pid, st in stats.items() if st and st[0] == parent} - mine
    mine |= found
    todo.extend(found)
send(mine, signal.SIGKILL)
"""
_REAPERS: list = []  # the reapers' Popen objects: their pipes must stay open while this driver lives


def _proc_stat(pid: int) -> tuple[int, int] | None:
    """``(parent pid, start time in clock ticks)`` of a process from ``/proc``; None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return int(fields[1]), int(fields[19])
    except (OSError, ValueError, IndexError):
        return None


def _ray_descendants() -> list[tuple[int, int]]:
    """``(pid, start time)`` of every process below this one whose command line mentions ray."""
    stats = {int(d): _proc_stat(int(d)) for d in os.listdir("/proc") if d.isdigit()}
    children: dict[int, list[int]] = {}
    for pid, stat in stats.items():
        if stat is not None:
            children.setdefault(stat[0], []).append(pid)
    found, todo = [], list(children.get(os.getpid(), []))
    while todo:
        pid = todo.pop()
        todo.extend(children.get(pid, []))
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"ray" in f.read():
                    found.append((pid, stats[pid][1]))
        except OSError:
            pass
    return found


def _reap_with_this_driver() -> None:
    """Start the reaper for the Ray processes this driver has just started (Linux; elsewhere a no-op)."""
    import subprocess
    import sys

    if not os.path.isdir("/proc"):
        return
    targets = [f"{pid}:{start}" for pid, start in _ray_descendants()]
    if targets:
        _REAPERS.append(subprocess.Popen([sys.executable, "-S", "-c", _REAPER, *targets], stdin=subprocess.PIPE,
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                         start_new_session=True))


def _run_on_worker(tasks: list[CellTask], shared_ref: list, timeout: float | None = None) -> list[CellOutcome]:
    """Body of the Ray task: the cells ``tasks`` in order. ``shared_ref`` is ``[ObjectRef]`` (wrapped, so Ray does
    not resolve it per task)."""
    import ray
    import torch

    torch.set_num_threads(1)
    shared = None
    if shared_ref:
        key = shared_ref[0].hex()
        if key not in _SHARED_CACHE:
            _SHARED_CACHE.clear()  # one run at a time: drop the previous run's shared input
            _SHARED_CACHE[key] = ray.get(shared_ref[0])
        shared = _SHARED_CACHE[key]
    return [execute_cell(task, shared, timeout) for task in tasks]


def ray_init(address: str | None = None, num_cpus: int | None = None) -> bool:
    """Connect to the cluster at ``address``, or start a local Ray on loopback; no-op when Ray is already up.

    Returns True when this call started (or connected) Ray, False when it was already initialised.
    """
    import ray

    if ray.is_initialized():
        return False
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    env = {k: os.environ[k] for k in _FORWARD_ENV if os.environ.get(k)}
    kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": True, "logging_level": "warning",
                              "runtime_env": {"env_vars": env} if env else None}
    term = signal.getsignal(signal.SIGTERM) if threading.current_thread() is threading.main_thread() else None
    if address:
        _check_reachable(address, setting("ICLAB_RAY_CONNECT_TIMEOUT"))
        ray.init(address=address, **kwargs)
    else:
        ray.init(num_cpus=num_cpus or os.cpu_count() or 1, _node_ip_address="127.0.0.1", **kwargs)
        _reap_with_this_driver()
    if term is not None:  # ray.init sets its own (sys.exit): SIGTERM stops a sweep as Ctrl-C does (iclab.cli)
        signal.signal(signal.SIGTERM, term)
    return True


def task_resources(tasks: Sequence[CellTask]) -> dict[str, int]:
    """Ray resources of one cell: one CPU, and one GPU when the cells run on ``device="cuda"``."""
    return {"num_cpus": 1, "num_gpus": 1 if cuda_cells(tasks) else 0}


class RayExecutor:
    """Run cells as Ray tasks (one CPU each) on ``options.address`` (else a local Ray); ``options.workers`` caps the
    cells in flight (default: cluster CPUs); ``options.cell_timeout`` as in the module docstring."""

    name = "ray"

    def __init__(self, options: RunOptions | None = None) -> None:
        self.address = options.address if options is not None else None  # (checked by RunOptions)
        self.workers = options.workers if options is not None else None
        self.timeout = options.cell_timeout if options is not None else None
        if self.address is not None:
            import ray

            if not ray.is_initialized():
                _check_reachable(self.address, setting("ICLAB_RAY_CONNECT_TIMEOUT"))  # before the run folder is made

    def _overdue(self, inflight: dict) -> list:
        """Refs whose task ran past ``timeout + HARD_STOP_GRACE`` since it was submitted."""
        if not self.timeout:
            return []
        now = time.perf_counter()
        return [ref for ref, (_, started) in inflight.items() if now - started > self.timeout + HARD_STOP_GRACE]

    @staticmethod
    def _batch_size(seen: int, seconds: float, left: int, limit: int) -> int:
        """Cells for the next task: about :data:`BATCH_SECONDS` of work at the mean time of the ``seen`` cells so far
        (``seconds`` in all; one cell per task until ``limit`` are seen), at most :data:`MAX_BATCH` and an even share
        of the ``left`` cells among ``limit`` tasks."""
        if seen < limit:
            return 1
        return max(1, min(int(BATCH_SECONDS * seen / max(seconds, 1e-9)), MAX_BATCH, -(-left // limit)))

    def run(self, tasks: Sequence[CellTask], shared: Any) -> Iterator[CellOutcome]:
        if not len(tasks):
            return
        import ray

        ray_init(self.address, self.workers)
        resources = task_resources(tasks)
        remote = ray.remote(max_retries=0, **resources)(_run_on_worker)
        shared_ref = [ray.put(shared)] if shared is not None else []
        unit = "GPU" if resources["num_gpus"] else "CPU"
        limit = self.workers or max(1, int(ray.cluster_resources().get(unit, 1)))
        if not self.timeout:  # keep workers busy while the driver writes results (with a timeout: one per worker,
            limit = max(limit * 2, limit + 2)  # so a task starts when it is submitted and its clock is fair)
        queue = TaskQueue(tasks)  # drawn as tasks are submitted: the driver never holds every task
        alone: list[CellTask] = []  # cells of a batch whose worker died: rerun one per task
        seen, seconds = 0, 0.0  # cells seen so far and their run time (sizes the batches)
        inflight: dict[Any, tuple[list[CellTask], float]] = {}
        try:
            while queue or alone or inflight:
                while (queue or alone) and len(inflight) < limit:
                    n = 1 if alone or self.timeout else self._batch_size(seen, seconds, len(queue), limit)
                    batch = [alone.pop()] if alone else [queue.pop() for _ in range(min(n, len(queue)))]
                    inflight[remote.remote(batch, shared_ref, self.timeout)] = (batch, time.perf_counter())
                for ref in self._overdue(inflight):
                    batch, started = inflight.pop(ref)
                    ray.cancel(ref, force=True)
                    yield CellOutcome.failure(batch[0], timed_out(self.timeout) + "; its Ray task was cancelled",
                                              time.perf_counter() - started)
                if not inflight:
                    continue
                done, _ = ray.wait(list(inflight), num_returns=1, timeout=5.0 if self.timeout else None)
                for ref in done:
                    batch, started = inflight.pop(ref)
                    try:
                        outcomes = ray.get(ref)
                    except Exception as exc:  # noqa: BLE001 - a dead worker / lost node fails only this cell
                        if len(batch) > 1:  # which cell of the batch? rerun each alone
                            alone.extend(reversed(batch))
                            continue
                        text = f"{type(exc).__name__}: {exc}".strip()
                        outcomes = [CellOutcome.failure(batch[0], "ray task failed: " + text[:4000],
                                                        time.perf_counter() - started)]
                    for outcome in outcomes:
                        seen, seconds = seen + 1, seconds + outcome.seconds
                        yield outcome
        finally:
            # Interrupted: leave no work running on a cluster (--address). A local Ray that iclab started goes down
            # with its workers at shutdown, so its tasks are not cancelled: force-cancelling them as the driver
            # stops tripped Ray 2.60's "Tried to complete task that was not pending" check in about one SIGTERM of
            # three, aborting the driver with exit 1 instead of 143 (tests/test_runs_ray.py).
            for ref in inflight if self.address else ():
                try:
                    ray.cancel(ref, force=True)
                except Exception:  # noqa: BLE001
                    pass
