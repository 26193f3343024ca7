"""Faults that need a real process: a full disk (``ulimit -f``), a read-only run folder, Ctrl-C and SIGTERM. Each
gives one ``error:``/``interrupted:`` line and no traceback, and no finished cell is lost: a rerun reads every one
back.
SIGTERM stops a run as Ctrl-C does (exit 143 instead of 130; the Ray executor's case is in ``test_runs_ray.py``).

(SIGKILL of the driver is in ``test_runs_store.py``, a dying worker in ``test_runs_executors.py`` and
``test_runs_ray.py``.) Read-only folders mean nothing to root, so when the tests run as root the child process
drops ``CAP_DAC_OVERRIDE``/``CAP_DAC_READ_SEARCH`` from its capability bounding set before it starts: it then
obeys file modes like any user.
"""

from __future__ import annotations

import ctypes
import os
import resource
import signal
import sqlite3
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

import fixtures_experiments  # noqa: F401 - registers fx_sweep in this process
from fixtures_experiments import fixture_env, iclab_cli
from iclab.experiments import run_experiment
from iclab.runs import load_results
from test_runs_safety import snapshot

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("fixture_experiments_env")]

_PR_CAPBSET_DROP, _CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH = 24, 1, 2


def _done(out: Path) -> int:
    try:
        with sqlite3.connect(f"file:{out / 'results.sqlite'}?mode=ro", uri=True, timeout=5) as db:
            return db.execute("SELECT COUNT(*) FROM cells WHERE status = 'done'").fetchone()[0]
    except sqlite3.Error:  # not created yet
        return 0


def _assert_one_error_line(proc: subprocess.CompletedProcess, *needles: str) -> str:
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("error:")]
    assert proc.returncode == 2 and len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def _file_size_limit(nbytes: int):
    def limit() -> None:  # Python ignores SIGXFSZ, so an oversized write fails with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (nbytes, nbytes))

    return limit


def _as_a_user() -> None:
    """In the child, before exec: without these capabilities root obeys file modes."""
    if os.geteuid() == 0:
        libc = ctypes.CDLL(None, use_errno=True)
        for cap in (_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH):
            if libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
                raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def _read_only(root: Path) -> None:
    for p in [root, *root.rglob("*")]:
        p.chmod(p.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


def test_disk_full_stops_with_one_line_and_keeps_every_finished_cell(tmp_path):
    out, n = tmp_path / "r", 60
    proc = iclab_cli(
        ["run", "fx_sweep", "--executor", "serial", "--out", str(out), "--set", f"n_cells={n}"],
        preexec=_file_size_limit(96 * 1024),
    )
    _assert_one_error_line(proc, "could not write", "every cell finished before is kept", "ulimit")
    kept = len(load_results(out))
    assert 0 < kept < n
    resumed = run_experiment("fx_sweep", overrides={"n_cells": n}, out=out, executor="serial", progress=False)
    assert (resumed.reused, resumed.computed, len(resumed.results)) == (kept, n - kept, n)


def test_a_read_only_run_folder_is_refused_by_every_command_and_left_as_it_is(tmp_path):
    out = tmp_path / "r"
    args = [
        "--executor",
        "serial",
        "--out",
        str(out),
        "--set",
        "n_cells=3",
        "--set",
        "fail_cells=1",
        "--set",
        f"flag={tmp_path / 'flag'}",
    ]
    first = run_experiment(
        "fx_sweep",
        overrides={"n_cells": 3, "fail_cells": "1", "flag": str(tmp_path / "flag")},
        out=out,
        executor="serial",
        progress=False,
    )
    assert len(first.failed) == 1
    (tmp_path / "flag").touch()
    (out / "results.sqlite").chmod(0o444)  # the store alone is read-only: resuming must not write it
    _assert_one_error_line(iclab_cli(["run", "fx_sweep", *args, "--retry-failed"], preexec=_as_a_user), "read-only")
    _read_only(out)
    before = snapshot(out)
    _assert_one_error_line(
        iclab_cli(["run", "fx_sweep", *args, "--retry-failed"], preexec=_as_a_user),
        "cannot write run folder",
        "Permission denied",
    )
    _assert_one_error_line(iclab_cli(["report", str(out)], preexec=_as_a_user), "Permission denied")
    _assert_one_error_line(iclab_cli(["export", str(out)], preexec=_as_a_user), "Permission denied")
    assert snapshot(out) == before
    assert len(load_results(out, None)) == 3


def interrupt_a_run(tmp_path: Path, executor: str, sig: int, n: int = 40) -> tuple[int, str, Path]:
    """Start ``iclab run fx_sweep`` (cells of 0.2 s), send ``sig`` once 3 cells are done: (exit status, stderr, out)."""
    out = tmp_path / "r"
    cmd = [
        sys.executable,
        "-m",
        "iclab",
        "run",
        "fx_sweep",
        "--executor",
        executor,
        "--out",
        str(out),
        "--set",
        f"n_cells={n}",
        "--set",
        "sleep=0.2",
    ]
    if executor != "serial":
        cmd += ["--workers", "1"]
    # SIGINT at its default in the child, as in a terminal (a suite run as a background job inherits it ignored)
    proc = subprocess.Popen(
        cmd,
        env=fixture_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 180
    while _done(out) < 3 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    return proc.returncode, err, out


def assert_interrupted_and_resumable(rc: int, err: str, out: Path, sig: int, n: int = 40) -> None:
    """The ``interrupted:`` line, exit 128 + signal, no traceback; a rerun reads back every finished cell."""
    assert rc == 128 + sig, err[-3000:]
    assert "interrupted: finished cells are kept; rerun the same command to resume" in err
    assert "Traceback" not in err, err[-3000:]
    kept = len(load_results(out))
    assert 3 <= kept < n and len(load_results(out, "failed")) == 0
    resumed = run_experiment(
        "fx_sweep", overrides={"n_cells": n, "sleep": 0.2}, out=out, executor="serial", progress=False
    )
    assert (resumed.reused, resumed.computed) == (kept, n - kept)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
@pytest.mark.parametrize("executor", ["serial", "local"])
def test_ctrl_c_and_sigterm_print_the_interrupted_line_and_keep_finished_cells(tmp_path, executor, sig):
    rc, err, out = interrupt_a_run(tmp_path, executor, sig)
    assert_interrupted_and_resumable(rc, err, out, sig)
