"""The result store and run folders: kill -9 the driver and resume; never mix configs or iclab versions;
one writer per folder; export round-trips."""

import json
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import fixtures_experiments  # noqa: F401 - registers fx_sweep / fx_other in this process
from fixtures_experiments import METRICS, fixture_env
from iclab.errors import RunFolderError
from iclab.runs import ResultStore, export_results, folder_lock, load_results, read_export
from iclab.experiments import run_experiment


pytestmark = pytest.mark.usefixtures("fixture_experiments_env")


def _run(out, executor="serial", **over):
    return run_experiment("fx_sweep", overrides=over, out=out, executor=executor, progress=False)


def _done(path) -> int:
    try:
        with sqlite3.connect(f"file:{path / 'results.sqlite'}?mode=ro", uri=True, timeout=5) as db:
            return db.execute("SELECT COUNT(*) FROM cells WHERE status = 'done'").fetchone()[0]
    except sqlite3.OperationalError:  # not created yet
        return 0


@pytest.mark.slow
def test_sigkill_the_driver_then_resume(tmp_path):
    """A CLI driver (local pool, 2 workers) is SIGKILLed partway; the rerun reads back the finished cells,
    computes only the rest, and the store equals an uninterrupted run: every cell exactly once."""
    out, n = tmp_path / "killed", 24
    cmd = [
        sys.executable,
        "-c",
        "import sys; from iclab.cli import main; sys.exit(main(sys.argv[1:]))",
        "run",
        "fx_sweep",
        "--out",
        str(out),
        "--executor",
        "local",
        "--workers",
        "2",
        "--set",
        f"n_cells={n}",
        "--set",
        "sleep=0.15",
    ]
    log = open(tmp_path / "driver.log", "w")
    proc = subprocess.Popen(cmd, env=fixture_env(), stdout=log, stderr=log)
    deadline = time.monotonic() + 240
    while _done(out) < 6 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    log.close()
    at_kill = _done(out)
    assert proc.returncode == -signal.SIGKILL and 6 <= at_kill < n, (
        proc.returncode,
        at_kill,
        (tmp_path / "driver.log").read_text()[-2000:],
    )

    resumed = _run(out, n_cells=n, sleep=0.15)
    assert (resumed.reused, resumed.computed, len(resumed.failed)) == (at_kill, n - at_kill, 0)
    with ResultStore(out) as store:
        keys = [r["_key"] for r in store.rows(None)]
        sweeps = store.sweeps()
    assert len(keys) == len(set(keys)) == n
    assert sweeps[0]["finished"] is None and sweeps[-1]["computed"] == n - at_kill  # the killed sweep, then ours
    clean = _run(tmp_path / "clean", n_cells=n)  # the results do not depend on sleep (it only delays a cell)
    same = [m for m in METRICS if m != "shared_pid"]  # the killed driver had another pid
    assert resumed.results[same].equals(clean.results[same])


def test_refuses_a_changed_config_or_version_unless_forced(tmp_path):
    out = tmp_path / "run"
    _run(out, n_cells=3)
    with pytest.raises(RunFolderError, match=r"config hash .*--out DIR.*--force"):
        _run(out, n_cells=4)
    with pytest.raises(RunFolderError, match="experiment 'fx_sweep'"):
        run_experiment("fx_other", overrides={"n_cells": 3}, out=out, executor="serial", progress=False)
    meta = json.loads((out / "config.json").read_text())
    (out / "config.json").write_text(json.dumps({**meta, "iclab_version": "0.0.1"}))
    with pytest.raises(RunFolderError, match=r"iclab 0\.0\.1"):
        _run(out, n_cells=3)
    forced = run_experiment(
        "fx_sweep", overrides={"n_cells": 4}, out=out, executor="serial", force=True, progress=False
    )
    assert (forced.computed, forced.reused) == (4, 0) and len(load_results(out)) == 4  # old rows discarded


def test_one_driver_per_folder(tmp_path):
    out = tmp_path / "run"
    with folder_lock(out):
        with pytest.raises(RunFolderError, match="in use by another iclab process"):
            _run(out, n_cells=3)
    assert _run(out, n_cells=3).computed == 3  # the lock is released with its holder


def test_store_put_is_one_row_per_key_and_a_corrupt_store_is_refused(tmp_path):
    with ResultStore(tmp_path) as store:
        store.put("k", 0, {"seed": 1}, error="boom")
        store.put("k", 0, {"seed": 1}, result={"x": float("nan"), "curve": [1.0, 2.0]})
        rows = list(store.rows(None))
        assert len(rows) == 1 and rows[0]["_status"] == "done" and rows[0]["curve"] == [1.0, 2.0]
        assert store.count() == {"done": 1}
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / ResultStore.FILENAME).write_bytes(b"this is not a database" * 100)
    with pytest.raises(RunFolderError, match="not a readable iclab result store"):
        ResultStore(bad)


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_export_round_trips(tmp_path, fmt):
    out = tmp_path / "run"
    _run(out, n_cells=5, fail_cells="3")
    target = export_results(out, fmt)
    assert target == out / f"results.{fmt}"
    back = read_export(target)
    orig = load_results(out, status=None)
    assert list(back.columns) == list(orig.columns) and len(back) == 5
    assert back["curve"].iloc[0] == orig["curve"].iloc[0] and isinstance(back["curve"].iloc[0], list)
    pd.testing.assert_frame_equal(
        back[["i", "mean", "_key", "_status"]], orig[["i", "mean", "_key", "_status"]], check_dtype=False
    )
    assert back.loc[back["i"] == 3, "_error"].iloc[0].startswith("RuntimeError: fixture cell 3")


def _children(pid: int) -> list[int]:
    """Process ids whose parent is ``pid`` (Linux ``/proc``)."""
    out = []
    for p in Path("/proc").iterdir():
        try:
            if p.name.isdigit() and int((p / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(p.name))
        except (OSError, IndexError, ValueError):  # gone meanwhile
            continue
    return out


def _cpu_ticks(pid: int) -> int:
    """User + system CPU ticks of ``pid`` so far (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process parents from Linux /proc")
def test_workers_die_with_a_killed_driver_mid_cell(tmp_path):
    """SIGKILL the driver while both local workers are inside a 60 s cell: the workers end within seconds (their
    watchdog sees the driver gone) instead of computing their cells to the end."""
    cmd = [
        sys.executable,
        "-c",
        "import sys; from iclab.cli import main; sys.exit(main(sys.argv[1:]))",
        "run",
        "fx_sweep",
        "--out",
        str(tmp_path / "run"),
        "--executor",
        "local",
        "--workers",
        "2",
        "--set",
        "n_cells=2",
        "--set",
        "sleep=60",
    ]
    proc = subprocess.Popen(cmd, env=fixture_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    workers: list[int] = []
    while time.monotonic() < deadline and proc.poll() is None:
        workers = [c for c in _children(proc.pid) if b"spawn_main" in Path(f"/proc/{c}/cmdline").read_bytes()]
        if len(workers) == 2:
            break
        time.sleep(0.2)
    assert len(workers) == 2, "the two workers never started"
    # a worker that has started up sits in its cell's 60 s sleep: its CPU time stops growing (startup imports torch)
    ticks, still = None, 0
    while time.monotonic() < deadline and still < 3:
        time.sleep(1.0)
        now = [_cpu_ticks(w) for w in workers]
        still = still + 1 if now == ticks and min(now) > 0 else 0
        ticks = now
    assert still >= 3, "the workers never settled into their cells"
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    end = time.monotonic() + 15
    while time.monotonic() < end and any(Path(f"/proc/{w}").exists() for w in workers):
        time.sleep(0.2)
    alive = [
        w
        for w in workers
        if Path(f"/proc/{w}").exists() and "Z" not in Path(f"/proc/{w}/stat").read_text().rsplit(")", 1)[1].split()[0]
    ]
    assert not alive, f"workers {alive} outlived their driver"


def test_wall_seconds_counts_a_killed_invocation_up_to_its_last_cell(tmp_path, monkeypatch):
    """Wall time over the invocations: a finished one from start to finish, a killed one (no ``finished``) from
    its start to its last cell on record, not 0 and not up to the next invocation."""
    import iclab.runs._store as store_module

    clock = iter([100.0, 103.0, 107.0, 500.0, 502.0, 510.0])  # start, cell, cell (killed) | start, cell, finish
    monkeypatch.setattr(store_module.time, "time", lambda: next(clock))
    with ResultStore(tmp_path) as store:
        store.start_sweep("local", 2, 3)
        store.put("a" * 16, 0, {"i": 0}, result={"x": 1})
        store.put("b" * 16, 1, {"i": 1}, result={"x": 2})
        second = store.start_sweep("local", 2, 1)
        store.put("c" * 16, 2, {"i": 2}, result={"x": 3})
        store.finish_sweep(second, 1, 0)
    with ResultStore(tmp_path, readonly=True) as store:
        assert [s["finished"] for s in store.sweeps()] == [None, 510.0]
        assert store.wall_seconds() == (107.0 - 100.0) + (510.0 - 500.0)
