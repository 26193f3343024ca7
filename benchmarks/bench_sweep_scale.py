"""The sweep engine at scale: 20 000 no-op cells (``bench_executors``' ``bench_noop``) through serial, the local
pool and Ray, end to end through ``run_experiment`` (result store included).

Per (executor, n) a fresh child process runs one sweep (``main(smoke=True)``: one child per executor runs both
sizes, at 20 and 40 cells, with no warm-up sweep, which only keeps one-off costs out of numbers a smoke run does not
read) and reports:

* per-cell overhead: the steady state from the store's ``finished_at`` stamps, (last - first) / (n - 1), so the
  pool's start-up (spawned workers import torch and iclab) and Ray's are left out; Ray is "warm" (``ray.init``
  and a 200-cell warm-up sweep before the measured one, neither timed);
* driver CPU per cell: CPU seconds of the driver process over the sweep / n (start-up included): what the driver
  itself spends per cell (store, pipes, Ray calls), which the machine's other load does not inflate as it does the
  wall-clock overhead;
* wall: the whole ``run_experiment`` call, start-up, store and the returned results table included;
* warm-up: before the measured sweeps, ``ray.init`` (Ray only) and a warm-up sweep (200 cells on Ray, 5 otherwise),
  what a fresh Ray pays to start its workers;
* driver memory: the peak resident memory the sweep added (the kernel's ``VmHWM`` reset through
  ``/proc/self/clear_refs`` after the imports and warm-up, then ``VmHWM - VmRSS`` before), at ``N_SMALL`` and
  ``N_LARGE`` cells; its growth per cell (KiB/cell, between the two sizes) is what the driver holds per cell. The
  first sweep of a process also pays the allocators' one-off reservations (pymalloc arenas, the arena pyarrow's
  string columns come from), which land between the two sizes; a second sweep of as many cells in the same process
  ("again") shows the steady state a long-lived driver (``iclab reproduce``) sees.
  Beside it: the size of the results table the call returns (``memory_usage(deep=True)``) and of the experiment's
  grid (the list of cell dicts ``Experiment.cells`` makes, measured by ``tracemalloc``), both per cell, which the
  engine cannot do without; the rest is the engine's own.

Then on the serial store of ``N_LARGE`` finished cells: resume (the same ``run_experiment`` again: every cell is
read back as done, none recomputed), and ``iclab report`` / ``iclab export`` (CSV, Parquet) as the user runs them
(a fresh ``python -m iclab`` each, interpreter and imports included). Goals of issue 25: ≤ 2 ms per cell (local,
Ray warm), resume ≤ 2 s, report and export in seconds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
N_SMALL, N_LARGE, WORKERS, RAY_WARMUP = 2_000, 20_000, 2, 200


def _status(field: str) -> int:
    """``/proc/self/status`` field in bytes (``VmRSS``, ``VmHWM``)."""
    with open("/proc/self/status") as fh:
        line = next(x for x in fh if x.startswith(field + ":"))
    return int(line.split()[1]) * 1024


def _sweep_child(executor: str, sizes: list[int], root: str, warmup: bool = True) -> list[dict]:
    """One measured sweep per size in ``sizes`` into ``root/EXECUTOR-N`` (a fresh process; module docstring), after a
    warm-up sweep unless ``warmup`` is false."""
    import bench_executors

    bench_executors.worker_environment()
    from iclab.experiments import run_experiment
    from iclab.runs import RunOptions

    options = RunOptions(executor=executor, workers=WORKERS, progress=False)

    def sweep(cells: int, folder: str):
        return run_experiment("bench_noop", overrides={"n_cells": cells}, out=folder, options=options)

    start = time.perf_counter()
    if executor == "ray":
        from iclab.runs import ray_init

        ray_init(num_cpus=WORKERS)
    if warmup:  # Ray's workers, the driver's imports; a new folder per child: the warm-up computes its cells
        sweep(min(RAY_WARMUP, max(sizes)) if executor == "ray" else 5, f"{root}/{executor}-{max(sizes)}-warmup")
    warm = time.perf_counter() - start  # Ray: ray.init and the warm-up sweep that starts its workers (smoke: init only)
    return [{**_measured(sweep, executor, n, f"{root}/{executor}-{n}"), "warmup": warm} for n in sizes]


def _measured(sweep, executor: str, n: int, out: str) -> dict:
    """Wall, start-up, per-cell seconds and peak memory added of ``sweep(n, out)`` (+ resume, serial only)."""
    from iclab.runs import ResultStore

    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")  # reset the peak-RSS counter to the current RSS
    base = _status("VmRSS")
    wall0, start, cpu = time.time(), time.perf_counter(), time.process_time()
    res = sweep(n, out)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    peak = _status("VmHWM") - base
    assert res.computed == n and len(res.failed) == 0 and len(res.results) == n
    with ResultStore(out, readonly=True) as store:
        stamps = sorted(t for (t,) in store._db.execute("SELECT finished_at FROM cells"))
    row = {
        "wall": wall,
        "startup": stamps[0] - wall0,
        "per_cell": (stamps[-1] - stamps[0]) / (n - 1),
        "peak_mib": peak / 2**20,
        "table_mib": float(res.results.memory_usage(deep=True).sum()) / 2**20,  # the results table it returns
        "cpu_per_cell": cpu / n,
    }
    if executor == "serial":
        start, cpu = time.perf_counter(), time.process_time()
        again = sweep(n, out)
        row["resume"], row["resume_cpu"] = time.perf_counter() - start, time.process_time() - cpu
        assert again.computed == 0 and again.reused == n and len(again.results) == n
    row["grid_mib"] = _grid_bytes(n) / 2**20
    del res
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")
    base = _status("VmRSS")
    again = sweep(n, out + "-again")
    row["again_peak_mib"] = (_status("VmHWM") - base) / 2**20
    assert again.computed == n and len(again.results) == n
    return row


def _grid_bytes(n: int) -> int:
    """Bytes of the grid of ``n`` no-op cells (the list of cell dicts the experiment makes), by ``tracemalloc``."""
    import tracemalloc

    from iclab.experiments import get_experiment

    exp = get_experiment("bench_noop")
    config = exp.config("quick", {"n_cells": n})
    tracemalloc.start()
    cells = exp.cells(config)
    size = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del cells
    return size


def _child(executor: str, sizes: list[int], root: str, warmup: bool) -> list[dict]:
    code = (
        f"import sys, json; sys.path.insert(0, {str(HERE)!r}); import bench_sweep_scale as b; "
        f"print('ROW ' + json.dumps(b._sweep_child({executor!r}, {sizes!r}, {root!r}, {warmup!r})))"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    rows = [x for x in p.stdout.splitlines() if x.startswith("ROW ")]
    if p.returncode or not rows:
        raise RuntimeError(f"sweep child ({executor}, {sizes}) failed (exit {p.returncode}):\n{p.stderr[-3000:]}")
    return json.loads(rows[-1][4:])


def _cli(*args: str) -> float:
    """Wall seconds of ``python -m iclab ARGS`` (a fresh interpreter, as a user runs it)."""
    import bench_executors

    env = bench_executors.worker_environment(dict(os.environ))
    start = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "iclab", *args], capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - start
    if p.returncode:
        raise RuntimeError(f"iclab {' '.join(args)} failed (exit {p.returncode}):\n{p.stderr[-3000:]}")
    return seconds


def main(smoke: bool = False) -> dict:
    """Print the tables; return the headline numbers (``--record`` keeps them): per executor at the large size."""
    if str(HERE) not in sys.path:
        sys.path.insert(0, str(HERE))
    small, large = (20, 40) if smoke else (N_SMALL, N_LARGE)
    rows = {}
    with tempfile.TemporaryDirectory(prefix="iclab-bench-scale-") as tmp:
        for executor in ("serial", "local", "ray"):
            for sizes in [[small, large]] if smoke else [[small], [large]]:
                rows.update({(executor, n): r for n, r in zip(sizes, _child(executor, sizes, tmp, not smoke))})
        store = str(Path(tmp) / f"serial-{large}")
        cli = {
            "report": _cli("report", store),
            "export csv": _cli("export", store, "--format", "csv"),
            "export parquet": _cli("export", store, "--format", "parquet"),
        }
        if not smoke:
            cli["python -m iclab --help"] = _cli("--help")
    print(
        f"{large} no-op cells, {WORKERS} workers (local, ray), one fresh driver process per sweep; "
        "machine load inflates absolute times"
    )
    print(
        f"{'executor':9s} {'per cell':>9s} {'goal':>6s} {'driver CPU':>11s} {'wall':>8s} {'start-up':>9s} "
        f"{f'peak MiB @{small}':>15s} {f'@{large}':>8s} {'KiB/cell':>9s} {'of it: table':>13s} {'grid':>6s} "
        f"{'again':>6s}"
    )
    for executor in ("serial", "local", "ray"):
        a, b = rows[executor, small], rows[executor, large]
        per_cell_kib, table_kib, grid_kib, again_kib = (
            (b[k] - a[k]) * 1024 / (large - small) for k in ("peak_mib", "table_mib", "grid_mib", "again_peak_mib")
        )
        print(
            f"{executor + (' warm' if executor == 'ray' else ''):9s} {b['per_cell'] * 1e3:6.2f} ms "
            f"{'' if executor == 'serial' else '≤ 2 ms':>6s} {b['cpu_per_cell'] * 1e3:8.3f} ms {b['wall']:7.1f}s {b['startup']:8.2f}s "
            f"{a['peak_mib']:15.1f} {b['peak_mib']:8.1f} {per_cell_kib:9.2f} {table_kib:13.2f} {grid_kib:6.2f} "
            f"{again_kib:6.2f}"
        )
    print(
        "KiB/cell: the driver's peak memory growth per cell, first sweep of the process; of it the table it returns "
        "and the grid it is given;\nagain: the same for a second sweep in the same process (allocators warm). Goal: "
        "flat beyond the grid and the table."
    )
    print(
        f"resume of {large} finished cells (run_experiment again, nothing recomputed): "
        f"{rows['serial', large]['resume']:.2f} s, {rows['serial', large]['resume_cpu']:.2f} s CPU (goal ≤ 2 s)"
    )
    for name, seconds in cli.items():
        print(
            f"  {name:24s} {seconds:6.2f} s"
            + ("  (the interpreter and imports alone)" if "help" in name else f"  on the store of {large} cells")
        )
    keys = ("per_cell", "cpu_per_cell", "wall", "startup", "warmup")
    return {
        "cells": large,
        "workers": WORKERS,
        "ray_warmup_cells": RAY_WARMUP,
        "executors": {e: {k: rows[e, large][k] for k in keys} for e in ("serial", "local", "ray")},
        "kib_per_cell": {
            k: {e: (rows[e, large][k] - rows[e, small][k]) * 1024 / (large - small) for e in ("serial", "local", "ray")}
            for k in ("peak_mib", "again_peak_mib", "grid_mib")
        },
        "resume_s": rows["serial", large]["resume"],
        "cli_s": cli,
    }


if __name__ == "__main__":
    main(smoke="--smoke" in sys.argv[1:])
