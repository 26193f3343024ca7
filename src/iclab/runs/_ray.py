"""The ``ray`` executor: cells as Ray tasks on an existing cluster (``--address``) or on a local Ray started
on demand (loopback only, no dashboard).

Each cell is shipped as a :class:`CellTask` (config, cell and the cell function by reference). ``shared`` is put in the
object store once (``ray.put``) and passed to every task by reference; each worker process fetches it once and
keeps it for the later cells of the same run. Outcomes come back in completion order (``ray.wait``). A task
whose worker dies (``WorkerCrashedError``) or that Ray cannot run becomes a failed cell with the error text;
tasks are not retried by Ray (``max_retries=0``), so a crashing cell fails once and ``--retry-failed`` reruns it.
Cells on ``device="cuda"`` request one GPU each (``num_gpus=1``): Ray pins each task to its GPU.
"""

from __future__ import annotations

import os
import time
from typing import Any, Iterator

from iclab.runs._executors import CellOutcome, CellTask, execute_cell
from iclab.runs._local import cuda_cells

__all__ = ["RayExecutor", "ray_init", "task_resources"]

# Environment a worker needs to import the same modules as the driver (user / test experiment modules).
_FORWARD_ENV = ("ICLAB_EXPERIMENT_MODULES", "PYTHONPATH", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")

_SHARED_CACHE: dict[str, Any] = {}  # per worker process: object-ref hex -> shared value


def _run_on_worker(task: CellTask, shared_ref: list) -> CellOutcome:
    """Body of the Ray task. ``shared_ref`` is ``[ObjectRef]`` (wrapped, so Ray does not resolve it per task)."""
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
    return execute_cell(task, shared)


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
    if address:
        ray.init(address=address, **kwargs)
    else:
        ray.init(num_cpus=num_cpus or os.cpu_count() or 1, _node_ip_address="127.0.0.1", **kwargs)
    return True


def task_resources(tasks: list[CellTask]) -> dict[str, int]:
    """Ray resources of one cell: one CPU, and one GPU when the cells run on ``device="cuda"``."""
    return {"num_cpus": 1, "num_gpus": 1 if cuda_cells(tasks) else 0}


class RayExecutor:
    """Run cells as Ray tasks (one CPU each). ``workers`` caps the cells in flight (default: cluster CPUs)."""

    name = "ray"

    def __init__(self, address: str | None = None, workers: int | None = None):
        from iclab.config import check_int

        if workers is not None:
            check_int("workers", workers)
        self.address = address
        self.workers = workers

    def run(self, tasks: list[CellTask], shared: Any) -> Iterator[CellOutcome]:
        if not tasks:
            return
        import ray

        ray_init(self.address, self.workers)
        resources = task_resources(tasks)
        remote = ray.remote(max_retries=0, **resources)(_run_on_worker)
        shared_ref = [ray.put(shared)] if shared is not None else []
        unit = "GPU" if resources["num_gpus"] else "CPU"
        limit = self.workers or max(1, int(ray.cluster_resources().get(unit, 1)))
        limit = max(limit * 2, limit + 2)  # keep workers busy while the driver writes results
        queue = list(reversed(tasks))
        inflight: dict[Any, tuple[CellTask, float]] = {}
        try:
            while queue or inflight:
                while queue and len(inflight) < limit:
                    task = queue.pop()
                    inflight[remote.remote(task, shared_ref)] = (task, time.perf_counter())
                done, _ = ray.wait(list(inflight), num_returns=1)
                for ref in done:
                    task, started = inflight.pop(ref)
                    try:
                        outcome = ray.get(ref)
                    except Exception as exc:  # noqa: BLE001 - a dead worker / lost node fails only this cell
                        text = f"{type(exc).__name__}: {exc}".strip()
                        outcome = CellOutcome.failure(task, "ray task failed: " + text[:4000],
                                                      time.perf_counter() - started)
                    yield outcome
        finally:
            for ref in inflight:  # driver interrupted: do not leave work running on the cluster
                try:
                    ray.cancel(ref, force=True)
                except Exception:  # noqa: BLE001
                    pass
