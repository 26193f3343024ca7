"""One :class:`RunOptions` from the caller to the executor: validated once (one ConfigError line naming the flag),
the keyword shorthand makes the same object, a built Sweep runs as it is; the driver's lazy pieces (keys, task
queue, the columnar results table) give what the materialised ones gave."""

import math

import numpy as np
import pandas as pd
import pytest

import fixtures_experiments  # noqa: F401 - registers fx_sweep / fx_other in this process
from iclab.errors import ConfigError
from iclab.experiments import run_experiment, sweep_for
from iclab.runs import RunOptions, SweepTasks, TaskQueue, make_executor
from iclab.runs._table import key_ints, results_table


@pytest.mark.parametrize(
    "fields, needle",
    [
        ({"executor": "dask"}, "--executor"),
        ({"workers": 0}, "--workers"),
        ({"workers": True}, "--workers"),
        ({"workers": 2.0}, "--workers"),
        ({"cell_timeout": -1.0}, "--cell-timeout"),
        ({"cell_timeout": math.nan}, "--cell-timeout"),
        ({"executor": "local", "address": "127.0.0.1:6379"}, "--address"),
        ({"executor": "ray", "address": "garbage"}, "--address"),
        ({"progress": "yes"}, "progress"),
        ({"retry_failed": 1}, "retry_failed"),
        ({"on_cell": 3}, "on_cell"),
    ],
)
def test_bad_run_options_are_one_line_naming_the_field(fields, needle):
    with pytest.raises(ConfigError) as info:
        RunOptions(**fields)
    text = str(info.value)
    assert needle in text and "expected" in text and "\n" not in text


def test_the_keyword_shorthand_makes_the_same_options():
    base = RunOptions(executor="serial", progress=False)
    assert RunOptions.of(None, executor="serial", progress=False) == base
    assert RunOptions.of(base) is base  # passed down unchanged
    assert RunOptions.of(base, workers=3) == RunOptions(executor="serial", progress=False, workers=3)
    with pytest.raises(ConfigError, match="run option.*'exeuctor'.*one of executor, workers"):
        RunOptions.of(None, exeuctor="serial")
    with pytest.raises(ConfigError, match="options"):
        RunOptions.of({"executor": "serial"})
    with pytest.raises(ConfigError, match="--workers"):
        RunOptions.of(base, workers=-2)  # a changed field is validated too


def test_executors_take_their_settings_from_the_options():
    assert make_executor(RunOptions(executor="local", workers=3, cell_timeout=4.0)).timeout == 4.0
    assert make_executor(RunOptions(executor="local", workers=3)).workers == 3


def test_run_experiment_with_options_or_keywords_or_a_built_sweep_gives_one_result(tmp_path):
    over = {"n_cells": 5, "n_samples": 40}
    seen = []
    options = RunOptions(executor="serial", progress=False, on_cell=lambda idx, row: seen.append(idx))
    a = run_experiment("fx_sweep", overrides=over, out=tmp_path / "a", options=options)
    b = run_experiment("fx_sweep", overrides=over, out=tmp_path / "b", executor="serial", progress=False)
    sweep = sweep_for("fx_sweep", overrides=over)
    c = run_experiment(sweep, out=tmp_path / "c", options=RunOptions(executor="serial", progress=False))
    assert sorted(seen) == [0, 1, 2, 3, 4]
    cols = ["i", "tau", "seed", "mean", "err", "n"]
    assert a.results[cols].equals(b.results[cols]) and a.results[cols].equals(c.results[cols])
    again = run_experiment(sweep, out=tmp_path / "c", options=options)
    assert (again.computed, again.reused) == (0, 5) and again.results[cols].equals(c.results[cols])
    with pytest.raises(ConfigError, match="out"):
        run_experiment(sweep, options=options)  # a Sweep has no default folder
    with pytest.raises(ConfigError, match="none with a Sweep"):
        run_experiment(sweep, "full", out=tmp_path / "d", options=options)
    assert not (tmp_path / "d").exists()


def test_sweep_keys_are_the_cell_hashes_and_a_repeated_cell_is_refused():
    sweep = sweep_for("fx_sweep", overrides={"n_cells": 4})
    keys = sweep.keys()
    tasks = sweep.tasks(np.array([2, 0]))
    assert isinstance(tasks, SweepTasks) and len(sweep.tasks()) == 4
    assert keys.dtype == np.uint64 and len(set(keys.tolist())) == 4
    assert [(t.idx, t.cell) for t in tasks] == [(2, sweep.cells[2]), (0, sweep.cells[0])]
    assert key_ints([t.key for t in tasks]).tolist() == [keys[2], keys[0]]
    twice = type(sweep)(sweep.name, sweep.preset, sweep.config, sweep.cells + [sweep.cells[1]], sweep.run_cell)
    with pytest.raises(ConfigError, match="the same cell twice"):
        twice.keys()
    assert sweep.keys() is keys  # computed once per sweep


def test_task_queue_hands_out_in_order_and_put_back_tasks_first():
    queue = TaskQueue(list("abcdef"))
    assert [queue.pop(), queue.pop()] == ["a", "b"]
    queue.put_back(["x", "y"])
    assert len(queue) == 6 and [queue.pop() for _ in range(6)] == ["x", "y", "c", "d", "e", "f"]
    assert not queue


ROWS = [
    {"i": 0, "x": 1.5, "s": "a", "flag": True, "curve": [1, 2], "_key": "k0"},
    {"i": 1, "x": None, "curve": [[1, 2], [3, 4]], "_key": "k1", "late": 7},
    {"i": 2, "x": math.nan, "s": None, "flag": False, "curve": [], "_key": "k2", "late": 2**70},
    {"i": 3, "x": 2, "s": "b", "flag": None, "curve": None, "_key": "k3", "deep": {"a": 1}},
]


@pytest.mark.parametrize("rows", [ROWS, ROWS[:1], ROWS[1:3], ROWS[::-1], []])
def test_results_table_is_the_dataframe_of_the_rows(rows):
    expected = pd.DataFrame(list(rows))
    got = results_table(iter(rows))
    assert list(got.columns) == list(expected.columns) and list(got.dtypes) == list(expected.dtypes)
    pd.testing.assert_frame_equal(got, expected)
