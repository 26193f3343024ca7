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
    retried = run_experiment("fx_sweep", overrides=over, out=tmp_path / "r", executor="ray", retry_failed=True,
                             progress=False)
    assert (retried.computed, retried.reused, len(retried.failed)) == (2, 3, 0)
