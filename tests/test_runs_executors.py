"""Executors: serial and local (spawned pool) give identical results; a cell that raises or whose worker dies is
recorded as failed with its error and the sweep goes on; ``retry_failed`` completes those cells only."""

import os

import numpy as np
import pytest
import torch

import fixtures_experiments  # noqa: F401 - registers fx_sweep / fx_other in this process
from fixtures_experiments import METRICS, FixtureConfig, fixture_cell
from iclab.runs import CellTask, RunOptions, SerialExecutor, execute_cell, jsonable, make_executor
from iclab.experiments import run_experiment


pytestmark = pytest.mark.usefixtures("fixture_experiments_env")


def _frame(result):
    return result.results[METRICS].sort_values("i").reset_index(drop=True)


def test_serial_and_local_give_identical_results(tmp_path):
    over = {"n_cells": 7, "n_samples": 33}
    serial = run_experiment("fx_sweep", overrides=over, out=tmp_path / "s", executor="serial", progress=False)
    local = run_experiment("fx_sweep", overrides=over, out=tmp_path / "l", executor="local", workers=2, progress=False)
    assert serial.computed == local.computed == 7 and len(local.failed) == 0
    assert _frame(serial).equals(_frame(local))
    assert set(local.results["shared_pid"]) == {os.getpid()}  # shared computed once, in the driver
    assert local.results["n"].tolist() == [33] * 7  # numpy ints reached the store as plain ints
    again = run_experiment("fx_sweep", overrides=over, out=tmp_path / "l", executor="local", workers=2, progress=False)
    assert (again.computed, again.reused) == (0, 7)  # read back, never recomputed


@pytest.mark.slow
def test_local_pool_survives_a_dead_worker_and_a_raising_cell(tmp_path):
    flag = tmp_path / "flag"
    over = {"n_cells": 7, "crash_cells": "2", "fail_cells": "4", "flag": str(flag)}
    out = tmp_path / "run"
    first = run_experiment("fx_sweep", overrides=over, out=out, executor="local", workers=2, progress=False)
    assert first.computed == 7 and len(first.results) == 5
    errors = dict(zip(first.failed["i"], first.failed["_error"]))
    assert set(errors) == {2, 4}
    assert "worker process died" in errors[2] and "exit code 13" in errors[2]
    assert errors[4].startswith("RuntimeError: fixture cell 4 fails until")
    # without --retry-failed the failed cells stay failed; with it, only they rerun
    assert run_experiment("fx_sweep", overrides=over, out=out, executor="serial", progress=False).computed == 0
    flag.touch()
    retried = run_experiment("fx_sweep", overrides=over, out=out, executor="serial", retry_failed=True, progress=False)
    assert (retried.computed, retried.reused, len(retried.failed)) == (2, 5, 0)
    clean = run_experiment("fx_sweep", overrides=over, out=tmp_path / "clean", executor="serial", progress=False)
    assert _frame(retried).equals(_frame(clean))


def test_serial_executor_records_a_raising_cell_and_goes_on():
    task = CellTask("k", 0, "fx_sweep", FixtureConfig(fail_cells=(0,)), {"i": 0, "tau": 1.0, "seed": 3}, fixture_cell)
    ok = CellTask("k2", 1, "fx_sweep", FixtureConfig(), {"i": 1, "tau": 1.0, "seed": 3}, fixture_cell)
    outcomes = list(SerialExecutor().run([task, ok], {"offset": np.zeros(3), "driver_pid": 1}))
    assert outcomes[0].result is None and "fixture cell 0 fails" in outcomes[0].error
    assert outcomes[1].error is None and outcomes[1].result["offset_sum"] == 0.0


def _not_a_dict(config, cell, shared):
    return [1.0, 2.0]


def test_execute_cell_reports_bad_metrics_as_failure():
    bad = CellTask("k", 0, "odd_experiment", FixtureConfig(), {"seed": 1}, _not_a_dict)
    out = execute_cell(bad, None)
    assert out.result is None and "run_cell of 'odd_experiment' returned list, expected dict" in out.error


def test_jsonable_converts_numpy_and_torch_and_rejects_objects():
    value = {"a": np.float32(1.5), "b": np.arange(3), "c": torch.tensor([1.0, 2.0]), "d": (np.int64(7), None)}
    assert jsonable(value) == {"a": 1.5, "b": [0, 1, 2], "c": [1.0, 2.0], "d": [7, None]}
    with pytest.raises(TypeError, match=r"result\['x'\] is a object"):
        jsonable({"x": object()})


def test_make_executor_validates():
    assert make_executor(RunOptions(executor="serial")).name == "serial"
    assert make_executor(RunOptions(workers=3)).workers == 3
    assert make_executor(RunOptions(executor="serial", cell_timeout=2.5)).timeout == 2.5


def test_ray_executor_connects_to_an_address_or_starts_a_loopback_ray(monkeypatch):
    """Which ``ray.init`` call each setting makes (no cluster needed: ``ray.init`` is intercepted)."""
    import ray

    from iclab.runs import RayExecutor, ray_init

    from iclab.runs import _ray

    calls, probed = [], []
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", lambda **kw: calls.append(kw))
    monkeypatch.setattr(_ray, "_check_reachable", lambda address, seconds: probed.append(address))
    monkeypatch.setattr(_ray, "_reap_with_this_driver", lambda: None)
    assert make_executor(RunOptions(executor="ray", workers=3, address="10.0.0.5:6379")).address == "10.0.0.5:6379"
    assert isinstance(make_executor(RunOptions(executor="ray")), RayExecutor)
    ray_init("10.0.0.5:6379")
    ray_init(None, num_cpus=3)
    assert calls[0]["address"] == "10.0.0.5:6379" and "num_cpus" not in calls[0]
    assert probed == ["10.0.0.5:6379", "10.0.0.5:6379"]  # reached before the run folder, and again at ray.init
    assert calls[1]["num_cpus"] == 3 and calls[1]["_node_ip_address"] == "127.0.0.1"
    assert all(c["include_dashboard"] is False for c in calls)
    assert calls[1]["runtime_env"]["env_vars"]["ICLAB_EXPERIMENT_MODULES"] == "fixtures_experiments"
    assert os.environ["RAY_AUTH_MODE"] == "disabled"
