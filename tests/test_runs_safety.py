"""Run folders are never overwritten or created by mistake, read-only commands change nothing, and a hung cell or
a broken store gives one clear error (the in-process half of the safety tests; faults that need a real process —
disk full, read-only folders, SIGINT — are in ``test_runs_faults.py``)."""

from __future__ import annotations

import hashlib
import os
import sqlite3
from pathlib import Path

import pandas as pd
import pytest

import fixtures_experiments  # noqa: F401 - registers fx_sweep / fx_other in this process
from iclab.cli import main
from iclab.errors import RunFolderError
from iclab.experiments import run_experiment, sweep_for
from iclab.runs import ResultStore, RunOptions, export_results, load_results, read_export, run_sweep


pytestmark = pytest.mark.usefixtures("fixture_experiments_env")


def snapshot(root: Path) -> dict[str, str]:
    """Every file and folder under ``root`` with the SHA-256 of its bytes (folders: ``"dir"``)."""
    if not root.exists():
        return {}
    if root.is_file():
        return {".": hashlib.sha256(root.read_bytes()).hexdigest()}
    return {
        str(p.relative_to(root)): "dir" if p.is_dir() else hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
    }


def cli(capsys, *argv) -> tuple[int, str]:
    rc = main(list(argv))
    return rc, capsys.readouterr().err


def _one_line_error(err: str, *needles: str) -> None:
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    for needle in needles:
        assert needle in err, err


def _run(out, **over):
    return run_experiment("fx_sweep", overrides=over, out=out, executor="serial", progress=False)


def test_out_never_writes_into_a_folder_iclab_did_not_make(tmp_path, capsys, monkeypatch):
    notes = tmp_path / "notes"
    (notes / "figures").mkdir(parents=True)
    (notes / "report.md").write_text("my notes")
    (notes / "summary.json").write_text("{}")
    (notes / "figures" / "lognormal_mean.png").write_bytes(b"\x89PNG mine")
    (tmp_path / "a_file").write_text("x")
    before = snapshot(tmp_path)
    run = ["run", "fx_sweep", "--executor", "serial", "--out"]
    for out, needle in (
        (str(notes), "not an iclab run folder"),
        (str(tmp_path / "a_file"), "is a file"),
        (str(tmp_path / "a_file" / "sub"), "Not a directory"),
        ("", "--out"),
        ("x" * 300, "File name too long"),
    ):
        rc, err = cli(capsys, *run, out)
        assert rc == 2, (out[:40], err)
        _one_line_error(err, needle)
    monkeypatch.chdir(notes)  # --out . in a folder of notes: refused too
    rc, err = cli(capsys, *run, ".")
    assert rc == 2 and "not an iclab run folder" in err
    assert snapshot(tmp_path) == before  # not even a .lock was made


def test_an_empty_folder_and_a_run_folder_are_accepted(tmp_path):
    (tmp_path / "empty").mkdir()
    assert _run(tmp_path / "empty", n_cells=2).computed == 2
    assert _run(tmp_path / "empty", n_cells=2).reused == 2


@pytest.mark.parametrize("store", ["missing", "empty file"])
def test_report_and_export_change_nothing_in_a_folder_without_cells(tmp_path, capsys, store):
    _run(tmp_path / "good", n_cells=2)
    folder = tmp_path / "r"
    folder.mkdir()
    (folder / "config.json").write_bytes((tmp_path / "good" / "config.json").read_bytes())
    (folder / "report.md").write_text("a good report")
    if store == "empty file":
        (folder / "results.sqlite").write_bytes(b"")
    before = snapshot(folder)
    for argv, needle in (
        (["report", str(folder)], "nothing to report"),
        (["export", str(folder)], "nothing to export"),
        (["export", str(folder), "--format", "parquet"], "nothing to export"),
    ):
        rc, err = cli(capsys, *argv)
        assert rc == 2
        _one_line_error(err, "no results.sqlite" if store == "missing" and argv[0] == "export" else needle)
    assert snapshot(folder) == before


def test_reading_results_creates_nothing(tmp_path):
    with pytest.raises(RunFolderError, match="no such folder"):
        load_results(tmp_path / "typo")
    assert not (tmp_path / "typo").exists()
    _run(tmp_path / "r", n_cells=3)
    before = snapshot(tmp_path / "r")
    assert len(load_results(tmp_path / "r")) == 3 and len(load_results(tmp_path / "r", None)) == 3
    with ResultStore(tmp_path / "r", readonly=True) as store:
        assert store.count() == {"done": 3}
    assert snapshot(tmp_path / "r") == before  # no -wal/-shm side files either


def test_a_store_written_after_a_crash_is_read_with_its_wal(tmp_path):
    """Rows still in the -wal file (a SIGKILLed driver never checkpoints) are read, and nothing is created."""
    _run(tmp_path / "r", n_cells=2)
    db = sqlite3.connect(tmp_path / "r" / "results.sqlite")
    db.execute("PRAGMA wal_autocheckpoint=0")
    with db:
        db.execute("UPDATE cells SET status = 'failed', error = 'x' WHERE idx = 1")
    assert (tmp_path / "r" / "results.sqlite-wal").exists()
    assert len(load_results(tmp_path / "r", "failed")) == 1  # while the writer still holds the file open
    db.close()


def test_force_clears_what_cannot_be_read(tmp_path, capsys):
    base = ["run", "fx_sweep", "--executor", "serial", "--set", "n_cells=2", "--out"]
    for name, damage in (
        ("corrupt", lambda p: (p / "results.sqlite").write_bytes(b"not a db" * 100)),
        ("folder", lambda p: ((p / "results.sqlite").unlink(), (p / "results.sqlite").mkdir())),
        ("record", lambda p: (p / "config.json").write_text("{not json")),
    ):
        out = tmp_path / name
        assert cli(capsys, *base, str(out))[0] == 0
        damage(out)
        rc, err = cli(capsys, *base, str(out))
        assert rc == 2, name
        _one_line_error(err, "--force")
        rc, err = cli(capsys, *base, str(out), "--force")
        assert rc == 0, err
        assert len(load_results(out)) == 2


def test_export_keeps_curves_as_parquet_lists_and_refuses_a_folder_target(tmp_path, capsys):
    import pyarrow.parquet as pq

    out = tmp_path / "r"
    _run(out, n_cells=4, fail_cells="2")
    target = export_results(out, "parquet")
    assert str(pq.read_schema(target).field("curve").type) == "list<element: double>"
    back, orig = read_export(target), load_results(out, status=None)
    assert back["curve"].iloc[0] == orig["curve"].iloc[0] == [float(v) for v in orig["curve"].iloc[0]]
    assert back["curve"].isna().tolist() == orig["curve"].isna().tolist() == [False, False, True, False]
    (tmp_path / "dest").mkdir()
    capsys.readouterr()
    before = snapshot(tmp_path / "dest")
    rc, err = cli(capsys, "export", str(out), "--out", str(tmp_path / "dest"))
    assert rc == 2
    _one_line_error(err, "a file name")
    assert snapshot(tmp_path / "dest") == before


def test_a_grid_without_cells_and_executor_arguments_are_refused_before_the_folder(tmp_path, capsys):
    out = tmp_path / "r"
    for argv, needle in (
        (["--executor", "serial", "--address", "127.0.0.1:6379"], "--address"),
        (["--executor", "ray", "--address", "garbage"], "HOST:PORT"),
        (["--executor", "ray", "--address", "127.0.0.1:1"], "cannot reach a Ray cluster"),
        (["--executor", "local", "--workers", "0"], "--workers"),
    ):
        rc, err = cli(capsys, "run", "fx_sweep", "--out", str(out), *argv)
        assert rc == 2
        _one_line_error(err, needle)
    assert not out.exists()


def test_serial_cell_timeout_fails_the_hung_cell_and_goes_on(tmp_path):
    sweep = sweep_for("fx_sweep", overrides={"n_cells": 3, "hang_cells": "1"})
    result = run_sweep(sweep, tmp_path / "r", RunOptions(executor="serial", cell_timeout=0.5, progress=False))
    # the hung cell sleeps 120 s: the run returning with its timeout error (not its result) shows the timer fired
    assert sorted(result.results["i"]) == [0, 2]
    assert result.failed["_error"].iloc[0].startswith("timed out after 0.5 s")


@pytest.mark.slow
def test_local_pool_kills_a_worker_its_timer_cannot_stop(tmp_path):
    """A cell with SIGALRM blocked (like one stuck in C code) outlives its worker's timer: the driver kills the
    worker HARD_STOP_GRACE seconds later, records the cell as timed out, and finishes the others."""
    sweep = sweep_for("fx_sweep", overrides={"n_cells": 4, "hang_cells": "1", "hang_blocks_alarm": "true"})
    result = run_sweep(sweep, tmp_path / "r", RunOptions(executor="local", workers=1, cell_timeout=1.0, progress=False))
    # the cell sleeps 120 s: its "timed out … killed" error (not a result) shows the driver stopped it
    assert sorted(result.results["i"]) == [0, 2, 3]
    assert "timed out after 1 s" in result.failed["_error"].iloc[0] and "killed" in result.failed["_error"].iloc[0]


def test_store_write_errors_are_one_error_that_keeps_finished_cells(tmp_path, monkeypatch):
    """An SQLite write error (the disk-full case, simulated here; the real one is in test_runs_faults) stops the
    sweep with one StoreWriteError; the cells written before it stay readable."""
    from iclab.runs import _store

    real_put, calls = _store.ResultStore.put, []

    def failing_put(self, *args, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            with self._writing("cell 2"):
                raise sqlite3.OperationalError("database or disk is full")
        return real_put(self, *args, **kwargs)

    monkeypatch.setattr(_store.ResultStore, "put", failing_put)
    with pytest.raises(_store.StoreWriteError, match=r"disk is full.*every cell finished before is kept \(2 cells"):
        _run(tmp_path / "r", n_cells=5)
    monkeypatch.undo()
    assert len(load_results(tmp_path / "r")) == 2
    assert _run(tmp_path / "r", n_cells=5).reused == 2


def test_long_values_and_keys_are_cut_in_errors(capsys):
    rc, err = cli(capsys, "run", "fx_sweep", "--set", "k" * 100_000 + "=1")
    assert rc == 2 and len(err) < 700 and "(100000 characters)" in err
    rc, err = cli(capsys, "run", "fx_sweep", "--set", "n_samples=" + "9" * 100_000)
    assert rc == 2 and len(err) < 700


def test_results_are_readable_as_a_frame(tmp_path):
    _run(tmp_path / "r", n_cells=2)
    assert isinstance(load_results(tmp_path / "r"), pd.DataFrame)
    assert os.listdir(tmp_path / "r")  # sanity: the run wrote its folder


def test_load_run_gives_results_and_the_typed_config_and_refuses_what_is_not_a_run(tmp_path):
    import iclab
    from fixtures_experiments import FixtureConfig

    _run(tmp_path / "r", n_cells=3, fail_cells="1")
    before = snapshot(tmp_path)
    run = iclab.load_run(tmp_path / "r")
    assert isinstance(run.config, FixtureConfig) and run.config.n_cells == 3 and run.experiment == "fx_sweep"
    assert sorted(run.results["i"]) == [0, 2] and list(run.failed["i"]) == [1]
    for bad, needle in (
        (tmp_path / "typo", "no such folder"),
        (tmp_path / "r" / "config.json", "a file"),
        (tmp_path, "not an iclab run folder"),
    ):
        with pytest.raises(RunFolderError, match=needle):
            iclab.load_run(bad)
    assert snapshot(tmp_path) == before


def test_import_iclab_stays_light():
    import subprocess
    import sys

    code = "import sys, iclab; print(sorted({'torch', 'pandas', 'numpy', 'iclab.experiments'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_reproduce_never_replaces_a_report_folder_iclab_did_not_write(tmp_path, capsys):
    (tmp_path / "runs" / "report" / "figures").mkdir(parents=True)
    (tmp_path / "runs" / "report" / "figures" / "mine.png").write_bytes(b"my figure")
    before = snapshot(tmp_path)
    rc, err = cli(capsys, "reproduce", "--only", "fx_sweep", "--root", str(tmp_path / "runs"), "--executor", "serial")
    assert rc == 2
    _one_line_error(err, "did not write")
    assert snapshot(tmp_path) == before
