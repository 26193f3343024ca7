"""Kept local workers (``iclab.runs.kept_workers``, ``LocalExecutor(keep=True)``): the workers of one sweep run the
next sweep's cells with that sweep's own ``shared``, the results equal the serial executor's, a sweep that ends in
an error stops its workers, and the block's end stops every worker it kept."""

import os
import time

import pytest

import fixtures_experiments  # noqa: F401 - registers fx_sweep / fx_other in this process
from fixtures_experiments import METRICS, FixtureConfig
from iclab.experiments import run_experiment
from iclab.files import process_ended
from iclab.runs import CellTask, LocalExecutor, RunOptions, kept_workers, make_executor

pytestmark = pytest.mark.usefixtures("fixture_experiments_env")


def pid_cell(config, cell, shared) -> dict:
    """Which process ran the cell, and which sweep's ``shared`` it saw."""
    return {"pid": os.getpid(), "tag": shared["tag"], "cell_i": cell["i"]}


def _tasks(n: int) -> list[CellTask]:
    return [CellTask(f"k{i}", i, "pids", FixtureConfig(), {"i": i}, pid_cell) for i in range(n)]


def _gone(pids: set[int], seconds: float = 10.0) -> bool:
    """Every process of ``pids`` has exited (and been reaped) within ``seconds``."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if all(process_ended(p) for p in pids):
            return True
        time.sleep(0.05)
    return False


def _run(runner, tag: str, n: int = 6) -> list[dict]:
    out = list(runner.run(_tasks(n), {"tag": tag}))
    assert all(o.error is None for o in out), [o.error for o in out]
    return sorted((o.result for o in out), key=lambda r: r["cell_i"])


def test_kept_workers_run_the_next_sweep_with_its_own_shared_then_stop_on_close():
    runner = LocalExecutor(RunOptions(workers=2), keep=True)
    first, second = _run(runner, "a"), _run(runner, "b")
    pids = {r["pid"] for r in first}
    assert len(pids) == 2 and os.getpid() not in pids
    assert {r["pid"] for r in second} == pids  # the same two processes
    assert [r["tag"] for r in first] == ["a"] * 6 and [r["tag"] for r in second] == ["b"] * 6
    runner.close()
    assert _gone(pids)
    assert {r["tag"] for r in _run(runner, "c")} == {"c"}  # a closed executor starts new workers
    runner.close()


def test_without_keep_each_sweep_starts_its_own_workers():
    runner = LocalExecutor(RunOptions(workers=2))
    first = {r["pid"] for r in _run(runner, "a")}
    assert _gone(first)  # stopped at the end of the sweep
    assert not first & {r["pid"] for r in _run(runner, "b")}


def test_a_sweep_that_stops_early_stops_its_workers_and_keeps_none():
    runner = LocalExecutor(RunOptions(workers=2), keep=True)
    outcomes = runner.run(_tasks(6), {"tag": "a"})
    first = next(outcomes)
    outcomes.close()  # what run_sweep does when an error stops the sweep
    assert _gone({first.result["pid"]})
    assert {r["tag"] for r in _run(runner, "b")} == {"b"}
    runner.close()


def test_experiments_in_one_kept_block_equal_serial_and_the_block_stops_its_workers(tmp_path):
    over = {"n_cells": 5, "n_samples": 17}
    with kept_workers():
        runner = make_executor(RunOptions(workers=2))
        assert make_executor(RunOptions(workers=2)) is runner  # one pool for the block
        assert make_executor(RunOptions(workers=1)) is not runner
        kept = {name: run_experiment(name, overrides=over, out=tmp_path / name, executor="local", workers=2,
                                     progress=False) for name in ("fx_sweep", "fx_other")}  # fmt: skip
        pids = {w.proc.pid for w in runner._kept}
        assert len(pids) == 2
    assert _gone(pids)
    assert make_executor(RunOptions(workers=2)) is not runner  # outside the block: a fresh executor
    for name, result in kept.items():
        serial = run_experiment(name, overrides=over, out=tmp_path / f"{name}-serial", executor="serial",
                                progress=False)  # fmt: skip
        frame = [r.results[METRICS].sort_values("i").reset_index(drop=True) for r in (result, serial)]
        assert result.computed == 5 and frame[0].equals(frame[1])


def no_shared(config):
    """A ``shared`` that fails, as a broken experiment's would."""
    raise ValueError(f"no shared input for n_cells={config.n_cells}")


def _table(result):
    return result.results[[m for m in METRICS if m != "shared_pid"]].sort_values("i").reset_index(drop=True)


def test_shared_computed_ahead_by_one_helper_equals_the_drivers_and_its_errors_are_the_drivers(tmp_path):
    import dataclasses

    from iclab.experiments import sweep_for
    from iclab.runs import run_sweep

    sweeps = [sweep_for(name, overrides={"n_cells": 4}) for name in ("fx_sweep", "fx_other")]
    broken = dataclasses.replace(sweep_for("fx_sweep", overrides={"n_cells": 3}), shared=no_shared)
    late = sweep_for("fx_sweep", overrides={"n_cells": 5})  # not given ahead: the driver computes it
    options = RunOptions(workers=2, progress=False)
    with kept_workers(ahead=[*sweeps, broken]):
        from iclab.runs._session import _BLOCKS

        helper = _BLOCKS[-1].ahead.proc
        ahead = [run_sweep(s, tmp_path / f"ahead-{i}", options) for i, s in enumerate(sweeps)]
        with pytest.raises(ValueError, match="no shared input for n_cells=3"):
            run_sweep(broken, tmp_path / "broken", options)
        driver = run_sweep(late, tmp_path / "late", options)
    helper.join(10)
    assert not helper.is_alive()
    for result in ahead:
        (pid,) = set(result.results["shared_pid"])
        assert pid == helper.pid != os.getpid()  # computed by the helper process
    assert set(driver.results["shared_pid"]) == {os.getpid()}
    serial = [run_sweep(s, tmp_path / f"serial-{i}", RunOptions(executor="serial", progress=False))
              for i, s in enumerate(sweeps)]  # fmt: skip
    assert all(_table(a).equals(_table(s)) for a, s in zip(ahead, serial))


def tensor_shared(config):
    """A ``shared`` of torch tensors (a trained model's state dict, as ``temperature-gpt2-regression``'s)."""
    import torch

    return {"w": torch.arange(6.0).reshape(2, 3) * config.n_cells}


def test_a_shared_of_tensors_comes_back_by_value_after_the_helper_has_ended():
    import dataclasses

    import torch

    from iclab.experiments import sweep_for
    from iclab.runs._ahead import SharedAhead

    sweep = dataclasses.replace(sweep_for("fx_sweep", overrides={"n_cells": 2}), shared=tensor_shared)
    ahead = SharedAhead([sweep])
    ahead.proc.join(60)  # its one job done, the helper has exited: nothing may depend on it any more
    ready, value = ahead.take(sweep)
    assert ready and torch.equal(value["w"], torch.arange(6.0).reshape(2, 3) * 2)
    assert ahead.take(sweep) == (False, None)  # taken once
    ahead.close()


def test_the_first_cells_are_dealt_round_robin_so_each_worker_starts_on_its_own_cell():
    """With 2 workers and ``prefetch`` 2, worker 0 holds cells 0 and 2 and worker 1 cells 1 and 3 from the start (an
    experiment whose consecutive cells use different models starts each worker on its own model)."""
    runner = LocalExecutor(RunOptions(workers=2), prefetch=2)
    pid = {r["cell_i"]: r["pid"] for r in _run(runner, "dealt", n=4)}
    assert pid[0] == pid[2] != pid[1] == pid[3]
