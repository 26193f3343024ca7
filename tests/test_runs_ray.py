"""The Ray executor (a local Ray with 2 CPUs on loopback, one session for the module): same results as serial,
shared input by reference, a crashed worker or raising cell fails only its cell, the sweep goes on."""

import os

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
    import time

    from iclab.experiments import sweep_for
    from iclab.runs import run_sweep

    sweep = sweep_for("fx_sweep", overrides={"n_cells": 4, "hang_cells": "2"})
    start = time.monotonic()
    result = run_sweep(sweep, tmp_path / "r", executor="ray", cell_timeout=1.0, progress=False)
    assert time.monotonic() - start < 100  # the hung cell sleeps 120 s
    assert sorted(result.results["i"]) == [0, 1, 3]
    assert result.failed["_error"].iloc[0].startswith("timed out after 1 s")


def test_a_local_ray_dies_with_its_sigkilled_driver(tmp_path):
    """Without the reaper, Ray's dashboard and runtime-env agents outlive a SIGKILLed driver by about a minute."""
    import signal
    import subprocess
    import sys
    import time

    from iclab.runs._ray import _proc_stat

    code = (
        "import os, time; from iclab.runs._ray import ray_init, _ray_descendants; ray_init(num_cpus=1); "
        "print(' '.join(f'{p}:{s}' for p, s in _ray_descendants()), flush=True); time.sleep(600)"
    )
    driver = subprocess.Popen([sys.executable, "-c", code], env=fixture_env(), stdout=subprocess.PIPE, text=True)
    started = [tuple(map(int, t.split(":"))) for t in driver.stdout.readline().split()]
    assert len(started) >= 4  # gcs_server, raylet, the two agents, ...
    driver.send_signal(signal.SIGKILL)
    driver.wait(30)
    deadline = time.monotonic() + 20
    alive = started
    while alive and time.monotonic() < deadline:
        alive = [(pid, start) for pid, start in alive if (_proc_stat(pid) or (0, -1))[1] == start]
        time.sleep(0.2)
    for pid, _ in alive:  # (the test cleans up whatever it finds)
        os.kill(pid, signal.SIGKILL)
    assert not alive, f"{len(alive)} Ray processes outlived the driver by 20 s"
