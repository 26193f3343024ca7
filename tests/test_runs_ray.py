"""The Ray executor (a local Ray with 2 CPUs on loopback, one session for the module): same results as serial,
shared input by reference, a crashed worker or raising cell fails only its cell, the sweep goes on."""

import os
from pathlib import Path

import pytest

import fixtures_experiments  # noqa: F401 - registers fx_sweep in this process
from fixtures_experiments import METRICS, fixture_env
from iclab.experiments import run_experiment

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def ray_session():
    import ray

    from iclab.runs._ray import ray_init

    mp = pytest.MonkeyPatch()
    env = fixture_env()
    for key in ("ICLAB_EXPERIMENT_MODULES", "PYTHONPATH"):
        mp.setenv(key, env[key])  # before ray.init: workers inherit it (and get it via runtime_env)
    mp.setenv("RAY_AUTH_MODE", "disabled")
    if ray.is_initialized():
        ray.shutdown()
    assert ray_init(num_cpus=2)
    yield ray
    ray.shutdown()
    mp.undo()


def _frame(result):
    return result.results[METRICS].sort_values("i").reset_index(drop=True)


def test_ray_matches_serial(ray_session, tmp_path):
    over = {"n_cells": 7, "n_samples": 33}
    serial = run_experiment("fx_sweep", overrides=over, out=tmp_path / "s", executor="serial", progress=False)
    ray = run_experiment("fx_sweep", overrides=over, out=tmp_path / "r", executor="ray", progress=False)
    assert ray.computed == 7 and len(ray.failed) == 0
    assert _frame(serial).equals(_frame(ray))
    assert set(ray.results["shared_pid"]) == {os.getpid()}  # shared computed once in the driver, ray.put by reference
    assert ray_session.is_initialized()  # an executor never shuts down a session it did not start


def test_ray_crash_and_raise_fail_only_their_cells(ray_session, tmp_path):
    flag = tmp_path / "flag"
    over = {"n_cells": 5, "crash_cells": "1", "fail_cells": "3", "flag": str(flag)}
    first = run_experiment("fx_sweep", overrides=over, out=tmp_path / "r", executor="ray", workers=2, progress=False)
    errors = dict(zip(first.failed["i"], first.failed["_error"]))
    assert set(errors) == {1, 3} and len(first.results) == 3
    assert "WorkerCrashedError" in errors[1]
    assert errors[3].startswith("RuntimeError: fixture cell 3 fails until")
    flag.touch()
    retried = run_experiment(
        "fx_sweep", overrides=over, out=tmp_path / "r", executor="ray", retry_failed=True, progress=False
    )
    assert (retried.computed, retried.reused, len(retried.failed)) == (2, 3, 0)


def test_short_cells_travel_in_batches_and_a_crashed_batch_fails_only_its_culprit(ray_session, tmp_path):
    """After the first cells, short cells share Ray tasks; the batch holding the crashing cell is rerun one cell per
    task, so only that cell fails (as without batches)."""
    from iclab.runs._ray import BATCH_SECONDS, MAX_BATCH, RayExecutor

    assert RayExecutor._batch_size(3, 0.003, 100, 4) == 1  # fewer cells seen than tasks in flight: one per task
    assert RayExecutor._batch_size(8, 0.008, 10_000, 4) == min(int(BATCH_SECONDS / 0.001), MAX_BATCH)
    assert RayExecutor._batch_size(8, 0.008, 10, 4) == 3  # an even share of what is left
    assert RayExecutor._batch_size(8, 80.0, 10_000, 4) == 1  # long cells: one per task
    over = {"n_cells": 40, "crash_cells": "30", "flag": str(tmp_path / "flag")}
    run = run_experiment("fx_sweep", overrides=over, out=tmp_path / "r", executor="ray", workers=2, progress=False)
    assert list(run.failed["i"]) == [30] and "WorkerCrashedError" in run.failed["_error"].iloc[0]
    assert sorted(run.results["i"]) == [i for i in range(40) if i != 30]


def test_ray_cell_timeout_fails_the_hung_cell_and_goes_on(ray_session, tmp_path):
    """The worker's own timer stops the cell (Ray runs a task on its worker's main thread)."""
    from iclab.experiments import sweep_for
    from iclab.runs import RunOptions, run_sweep

    sweep = sweep_for("fx_sweep", overrides={"n_cells": 4, "hang_cells": "2"})
    result = run_sweep(sweep, tmp_path / "r", RunOptions(executor="ray", cell_timeout=1.0, progress=False))
    # the hung cell sleeps 120 s: its timeout error (not a result) shows the worker's timer fired
    assert sorted(result.results["i"]) == [0, 1, 3]
    assert result.failed["_error"].iloc[0].startswith("timed out after 1 s")


def _descendants(root: int) -> set[tuple[int, int]]:
    """``(pid, start time)`` of every process below ``root`` (zombies included)."""
    from iclab.runs._ray import _proc_stat

    stats = {int(d): _proc_stat(int(d)) for d in os.listdir("/proc") if d.isdigit()}
    found, todo = set(), [root]
    while todo:
        parent = todo.pop()
        for pid, stat in stats.items():
            if stat is not None and stat[0] == parent and (pid, stat[1]) not in found:
                found.add((pid, stat[1]))
                todo.append(pid)
    return found


def test_a_local_ray_dies_with_its_sigkilled_driver(tmp_path):
    """Kill -9 the driver of a Ray sweep while cells run: every process it started (GCS, raylet, agents, the
    workers started for the cells) is gone, zombies included. Before, Ray's agents outlived the driver by about a
    minute, and then the workers Ray started after ``ray.init`` (here: for the two cells that crash theirs) by
    ~15 s. (The time it takes is printed; the bound is generous: the reaper's own test is below.)"""
    import signal
    import subprocess
    import sys
    import time

    from iclab.runs._ray import _proc_stat
    from test_runs_faults import _done

    out = tmp_path / "r"
    cmd = [
        sys.executable,
        "-m",
        "iclab",
        "run",
        "fx_sweep",
        "--executor",
        "ray",
        "--workers",
        "2",
        "--out",
        str(out),
        "--set",
        "n_cells=200",
        "--set",
        "sleep=0.3",
        "--set",
        "crash_cells=0,1",
        "--set",
        f"flag={tmp_path / 'no'}",
    ]
    driver = subprocess.Popen(cmd, env=fixture_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 240
    while _done(out) < 4 and driver.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    started = _descendants(driver.pid)
    names = sorted(Path(f"/proc/{pid}/comm").read_text().strip() for pid, _ in started)
    assert driver.poll() is None and _done(out) >= 4, names
    workers = [n for n in names if n.startswith("ray::") and not n.startswith(("ray::DashboardA", "ray::RuntimeEnv"))]
    assert "raylet" in names and workers, names
    driver.send_signal(signal.SIGKILL)
    driver.wait(30)
    killed = time.monotonic()
    alive = started
    while alive and time.monotonic() < killed + 30:
        time.sleep(0.1)
        alive = {(pid, start) for pid, start in alive if (_proc_stat(pid) or (0, -1))[1] == start}
    print(f"\nray processes of the killed driver: {len(started)}, all gone after {time.monotonic() - killed:.1f} s")
    for pid, _ in alive:  # (the test cleans up whatever it finds)
        os.kill(pid, signal.SIGKILL)
    assert not alive, f"{len(alive)} of {len(started)} Ray processes outlived the driver by 30 s: {names}"


def test_sigterm_stops_a_ray_run_like_ctrl_c(tmp_path):
    """ray.init installs its own SIGTERM handler (``sys.exit``): iclab puts its own back, so SIGTERM gives the
    ``interrupted:`` line and exit 143 (before: exit 15, no word), and every finished cell is kept."""
    import signal

    from test_runs_faults import assert_interrupted_and_resumable, interrupt_a_run

    rc, err, out = interrupt_a_run(tmp_path, "ray", signal.SIGTERM)
    assert_interrupted_and_resumable(rc, err, out, signal.SIGTERM)


def test_the_reaper_also_kills_what_its_targets_started_later():
    """The reaper is given the Ray processes that exist after ``ray.init``; the raylet starts workers later. A
    stand-in raylet starts a stand-in worker after the reaper: when the driver's pipe closes, both die (before,
    the worker lived on: Ray's idle workers outlived a SIGKILLed driver by ~15 s)."""
    import signal
    import subprocess
    import sys
    import time

    from iclab.runs._ray import _REAPER, _proc_stat

    raylet = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import subprocess, sys, time; input(); "
            "w = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)']); print(w.pid, flush=True); "
            "time.sleep(600)",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    reaper = subprocess.Popen(
        [sys.executable, "-S", "-c", _REAPER, f"{raylet.pid}:{_proc_stat(raylet.pid)[1]}"], stdin=subprocess.PIPE
    )
    raylet.stdin.write("start a worker\n")
    raylet.stdin.flush()
    worker = int(raylet.stdout.readline())
    worker_start = _proc_stat(worker)[1]
    reaper.stdin.close()  # the driver is gone
    reaper.wait(30)
    raylet.wait(30)  # (this test is its parent: it reaps it)
    deadline = time.monotonic() + 30
    while (_proc_stat(worker) or (0, -1))[1] == worker_start and time.monotonic() < deadline:
        time.sleep(0.1)  # killed; reaped by init once re-parented
    alive = (_proc_stat(worker) or (0, -1))[1] == worker_start
    if alive:
        os.kill(worker, signal.SIGKILL)
    assert raylet.returncode == -signal.SIGKILL and not alive


def test_ray_records_system_exit_and_keyboard_interrupt_as_failed_cells(ray_session, tmp_path):
    """The sweep contract (issue 42) under Ray: the same failed cells as the serial executor and the local pool."""
    from iclab.runs import RunOptions, run_sweep
    from test_sweep_contract import _errors, _raising_cell, _sweep

    result = run_sweep(_sweep(_raising_cell, 4), tmp_path / "r", RunOptions(executor="ray", progress=False))
    assert _errors(result) == {
        0: "SystemExit: 3",
        1: "KeyboardInterrupt raised by the cell",
        2: "ValueError: plain failure",
    }
    assert result.results["value"].tolist() == [3.0] and result.computed == 4
