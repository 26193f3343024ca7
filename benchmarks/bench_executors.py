"""Executors side by side: cells/second for a sweep of 200 no-op cells (serial, local pool, Ray), the start-up
cost of each (time to the first finished cell) and the steady-state time per cell after that, measured end to
end through ``run_experiment`` (result store included), in one process.

Start-up and per-cell time come from the store's ``finished_at`` stamps: start-up = first stamp - start,
per cell = (last stamp - first stamp) / (n - 1). The local pool starts fresh worker processes for every sweep
(each imports torch and iclab); Ray keeps its workers, so its second sweep ("ray warm") shows the cost when a
cluster is already up. With cells of w seconds and k workers, a parallel executor beats serial roughly once
n * w * (1 - 1/k) > start-up - n * serial's per-cell time; the last lines evaluate that for n = 200.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from iclab.config import Config, check_int
from iclab.experiments import Experiment, register

HERE = Path(__file__).resolve().parent
N_SMALL, N_LARGE, WORKERS = 20, 200, 2


@dataclass(frozen=True)
class NoopConfig(Config):
    n_cells: int = N_LARGE
    seed: int = 0

    def __post_init__(self) -> None:
        check_int("n_cells", self.n_cells)


def noop_cell(config, cell: dict, shared) -> dict:
    return {"x": cell["seed"] * 2}


# Registered at import: worker processes import this module through ICLAB_EXPERIMENT_MODULES.
register(
    Experiment(
        name="bench_noop",
        paper="bench",
        title="no-op cells",
        claim="-",
        config_cls=NoopConfig,
        presets={"quick": NoopConfig(), "full": NoopConfig()},
        cells=lambda c: [{"seed": c.seed * 100_000 + i} for i in range(c.n_cells)],
        run_cell=noop_cell,
        figures=lambda c, df, d: [],
        compare=lambda c, df: {},
        claims=lambda c: [],
    )
)


def _sweep(executor: str, n: int, root: Path) -> tuple[float, float, float]:
    """(wall seconds, start-up seconds, steady-state seconds per cell) of one sweep of ``n`` no-op cells."""
    from iclab.experiments import run_experiment
    from iclab.runs import ResultStore

    out = root / f"{executor}-{n}-{time.time_ns()}"
    wall0, start = time.time(), time.perf_counter()
    res = run_experiment(
        "bench_noop",
        overrides={"n_cells": n},
        out=out,
        executor=executor,
        workers=WORKERS,
        progress=False,
    )
    wall = time.perf_counter() - start
    assert res.computed == n and len(res.failed) == 0, res.failed
    with ResultStore(out, readonly=True) as store:
        stamps = sorted(t for (t,) in store._db.execute("SELECT finished_at FROM cells"))
    return wall, stamps[0] - wall0, (stamps[-1] - stamps[0]) / (n - 1)


def worker_environment(env: dict | None = None) -> dict:
    """``env`` (default ``os.environ``, changed in place) set up so that every process of a sweep (pool workers,
    Ray workers, ``python -m iclab``) imports this module and so knows ``bench_noop``; returns it."""
    env = os.environ if env is None else env
    modules = env.get("ICLAB_EXPERIMENT_MODULES", "")
    if "bench_executors" not in modules.split(","):
        env["ICLAB_EXPERIMENT_MODULES"] = ",".join(filter(None, [modules, "bench_executors"]))
    if str(HERE) not in env.get("PYTHONPATH", "").split(os.pathsep):
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE), env.get("PYTHONPATH", "")]))
    env.setdefault("RAY_AUTH_MODE", "disabled")
    if str(HERE) not in sys.path:
        sys.path.insert(0, str(HERE))  # spawned workers inherit sys.path; Ray workers get PYTHONPATH
    return env


def main(smoke: bool = False) -> None:
    """The table of the module docstring; ``smoke=True``: the same at 20 cells (a check that it runs)."""
    n = N_SMALL if smoke else N_LARGE
    worker_environment()
    import ray

    from iclab.runs._ray import ray_init

    rows = []
    with tempfile.TemporaryDirectory(prefix="iclab-bench-") as tmp:
        _sweep("serial", 5, Path(tmp))  # warm-up: imports of the driver
        for label, executor in (("serial", "serial"), ("local", "local")):
            rows.append((label, *_sweep(executor, n, Path(tmp))))
        t0 = time.perf_counter()
        started = ray_init(num_cpus=WORKERS)
        ray_start = time.perf_counter() - t0
        rows.append(("ray cold", *_sweep("ray", n, Path(tmp))))
        rows.append(("ray warm", *_sweep("ray", n, Path(tmp))))
        if started:
            ray.shutdown()
    print(
        f"machine: {os.cpu_count()} CPUs; local and ray use {WORKERS} workers; ray.init took {ray_start:.1f} s "
        "(not included below).\nTimings on a shared, loaded machine are inflated by other processes."
    )
    print(f"{'executor':9s} {'cells/s':>8s} {'start-up':>9s} {'per cell':>10s} {f'{n} cells':>10s}")
    for name, wall, startup, per_cell in rows:
        print(f"{name:9s} {n / wall:8.1f} {startup:8.2f}s {per_cell * 1e3:7.2f} ms {wall:9.2f}s")
    serial_cell = rows[0][3]
    print(f"\nwhen a parallel executor pays off for a sweep of n = {n} cells ({WORKERS} workers):")
    for name, _, startup, per_cell in rows[1:]:
        w_star = (startup / n - serial_cell) / (1 - 1 / WORKERS)
        print(
            f"  {name:9s} cells longer than ~{max(w_star, per_cell * WORKERS) * 1e3:.0f} ms "
            f"(per-cell overhead {per_cell * 1e3:.2f} ms, start-up {startup:.1f} s)"
        )


if __name__ == "__main__":
    main(smoke="--smoke" in sys.argv[1:])
