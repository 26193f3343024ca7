"""``--executor ray --address`` against a real two-node cluster, as a cluster user runs it: ``ray start --head`` and
a second ``ray start --address`` on loopback, each node with its own resources; a sweep submitted from the command
line; the second node killed mid-sweep. The sweep finishes on the head node, the cells the dead node held are
failed, ``--retry-failed`` completes them, and the results equal a serial run. Both nodes are cleaned up by pid
(never ``ray stop``, which would stop every Ray on the machine)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

import fixtures_experiments  # noqa: F401 - registers fx_sweep in this process
from fixtures_experiments import METRICS, fixture_env
from iclab.experiments import run_experiment
from iclab.runs import load_results

pytestmark = pytest.mark.slow

RAY = str(Path(sys.executable).with_name("ray"))
FAST_NODE_DEATH = {
    "RAY_health_check_initial_delay_ms": "0",
    "RAY_health_check_period_ms": "1000",
    "RAY_health_check_timeout_ms": "1000",
    "RAY_health_check_failure_threshold": "3",
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _children() -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for d in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{d}/stat", "rb") as f:
                ppid = int(f.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        out.setdefault(ppid, []).append(int(d))
    return out


def _with_descendants(pids: list[int]) -> set[int]:
    children, found, todo = _children(), set(), list(pids)
    while todo:
        pid = todo.pop()
        if pid not in found:
            found.add(pid)
            todo.extend(children.get(pid, []))
    return found


class LoopbackCluster:
    """Two Ray nodes on this machine (1 CPU each, custom resources ``n1``/``n2``) in a private temp dir."""

    def __init__(self) -> None:
        self.tmp = tempfile.mkdtemp(prefix="iclab-ray-", dir="/tmp")  # short: Ray's socket paths must fit
        self.port = _free_port()
        self.address = f"127.0.0.1:{self.port}"
        env = {**os.environ, "RAY_AUTH_MODE": "disabled", **FAST_NODE_DEATH}
        common = ["--num-cpus=1", "--disable-usage-stats", "--node-ip-address=127.0.0.1"]
        self._start(
            [
                RAY,
                "start",
                "--head",
                f"--port={self.port}",
                '--resources={"n1": 1}',
                "--include-dashboard=false",
                f"--temp-dir={self.tmp}",
                *common,
            ],
            env,
        )
        self._start([RAY, "start", f"--address={self.address}", '--resources={"n2": 1}', *common], env)

    @staticmethod
    def _start(cmd: list[str], env: dict) -> None:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=180)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]

    def processes(self) -> set[int]:
        """Every process of this cluster: those naming its temp dir, and everything below them."""
        roots = [int(d) for d in filter(str.isdigit, os.listdir("/proc")) if self.tmp in _cmdline(int(d))]
        return _with_descendants(roots)

    def node_processes(self, resource: str) -> set[int]:
        """The raylet owning ``resource`` and everything below it (its agents and workers)."""
        raylets = [
            int(d)
            for d in filter(str.isdigit, os.listdir("/proc"))
            if "raylet/raylet" in (c := _cmdline(int(d)))
            and self.tmp in c
            and f"--static_resource_list={resource}," in c
        ]
        assert len(raylets) == 1, raylets
        return _with_descendants(raylets)

    def running_a_cell(self, resource: str) -> bool:
        """Whether a worker of that node is running an iclab cell now (Ray titles it after the task)."""
        return any(_cmdline(pid).startswith("ray::_run_on_worker") for pid in self.node_processes(resource))

    def kill(self, pids: set[int]) -> None:
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def shutdown(self) -> None:
        for _ in range(3):  # workers may be starting while we kill: sweep until nothing is left
            self.kill(self.processes())
            time.sleep(1)
        shutil.rmtree(self.tmp, ignore_errors=True)


@pytest.fixture
def cluster():
    c = LoopbackCluster()
    try:
        yield c
    finally:
        c.shutdown()
    assert not c.processes(), "cluster processes left behind"


def _done(out: Path) -> int:
    try:
        with sqlite3.connect(f"file:{out / 'results.sqlite'}?mode=ro", uri=True, timeout=5) as db:
            return db.execute("SELECT COUNT(*) FROM cells").fetchone()[0]
    except sqlite3.Error:
        return 0


def _frame(results):
    return results[[m for m in METRICS if m != "shared_pid"]].sort_values("i").reset_index(drop=True)


def test_two_node_cluster_loses_a_node_mid_sweep(cluster, tmp_path):
    n = 10
    args = [
        "run",
        "fx_sweep",
        "--executor",
        "ray",
        "--address",
        cluster.address,
        "--out",
        str(tmp_path / "r"),
        "--set",
        f"n_cells={n}",
        "--set",
        "sleep=1.5",
    ]
    driver = subprocess.Popen(
        [sys.executable, "-m", "iclab", *args],
        env=fixture_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 240
    while (
        not (_done(tmp_path / "r") >= 1 and cluster.running_a_cell("n2"))
        and driver.poll() is None
        and time.monotonic() < deadline
    ):
        time.sleep(0.1)
    assert driver.poll() is None, driver.communicate()[1][-3000:]
    cluster.kill(cluster.node_processes("n2"))  # node 2 crashes while it runs a cell
    out, err = driver.communicate(timeout=300)
    assert driver.returncode in (0, 1) and "Traceback" not in err, err[-3000:]
    first = load_results(tmp_path / "r", None)
    assert len(first) == n and set(first["_status"]) <= {"done", "failed"}  # every cell once: done or failed
    lost = int((first["_status"] == "failed").sum())
    assert lost >= 1 and driver.returncode == 1  # the cell node 2 was running, at least
    assert all("ray task failed" in e for e in first.loc[first["_status"] == "failed", "_error"])
    if lost:
        retry = subprocess.run(
            [sys.executable, "-m", "iclab", *args, "--retry-failed"],
            env=fixture_env(),
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert retry.returncode == 0, retry.stderr[-3000:]
        assert f"{n} cells done, 0 failed ({lost} run now, {n - lost} read back)" in retry.stdout
    meta = json.loads((tmp_path / "r" / "config.json").read_text())
    assert meta["experiment"] == "fx_sweep"
    # the cells' results do not depend on ``sleep`` (it only delays a cell: fixture_cell), and METRICS holds no
    # config column, so the serial reference runs without the sweep's 10 x 1.5 s of sleeping
    serial = run_experiment("fx_sweep", overrides={"n_cells": n}, out=tmp_path / "s", executor="serial", progress=False)
    assert _frame(load_results(tmp_path / "r")).equals(_frame(serial.results))
