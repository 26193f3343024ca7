"""Sweeps on GPUs without a GPU: the local pool starts one worker per visible GPU, each pinned by
``CUDA_VISIBLE_DEVICES``, when the cells run on ``device="cuda"`` (device count faked); Ray cells request a GPU."""

from __future__ import annotations

import dataclasses
import os

import pytest
import torch

from fixtures_experiments import fixture_env
from iclab.runs import CellTask, LocalExecutor, RunOptions
from iclab.runs._local import visible_gpus, worker_environment
from iclab.runs._ray import task_resources


@dataclasses.dataclass(frozen=True)
class DeviceConfig:
    device: str = "cpu"


def cell_gpu(config, cell, shared) -> dict:
    """The GPU this worker was pinned to (``CUDA_VISIBLE_DEVICES`` as its process sees it)."""
    return {"gpu": os.environ.get("CUDA_VISIBLE_DEVICES", "none"), "pid": os.getpid()}


def tasks(n: int, device: str) -> list[CellTask]:
    return [CellTask(f"k{i}", i, "gpu_test", DeviceConfig(device), {"i": i}, cell_gpu) for i in range(n)]


@pytest.fixture()
def four_gpus(monkeypatch):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 4)


def test_worker_environments_one_per_visible_gpu(four_gpus, monkeypatch):
    assert visible_gpus() == ["0", "1", "2", "3"]
    pool = LocalExecutor()
    assert pool.plan(tasks(9, "cuda")) == [{"CUDA_VISIBLE_DEVICES": g} for g in "0123"]
    assert pool.plan(tasks(2, "cuda")) == [{"CUDA_VISIBLE_DEVICES": "0"}, {"CUDA_VISIBLE_DEVICES": "1"}]
    assert pool.plan(tasks(9, "cpu")) == [{}] * min(9, os.cpu_count() or 1)  # CPU cells: no pinning
    assert pool.plan(tasks(9, "cuda:1")) == [{}] * min(9, os.cpu_count() or 1)  # an explicit GPU is left alone
    assert [e["CUDA_VISIBLE_DEVICES"] for e in LocalExecutor(RunOptions(workers=6)).plan(tasks(9, "cuda"))] == list(
        "012301"
    )
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "5,7")
    assert LocalExecutor().plan(tasks(9, "cuda")) == [{"CUDA_VISIBLE_DEVICES": "5"}, {"CUDA_VISIBLE_DEVICES": "7"}]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert visible_gpus() == [] and worker_environment(3, []) == {}


def test_pool_workers_see_only_their_gpu(four_gpus, monkeypatch):
    env = fixture_env()
    monkeypatch.setenv("PYTHONPATH", env["PYTHONPATH"])  # workers import this module by name
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    outcomes = list(LocalExecutor(prefetch=1).run(tasks(4, "cuda"), None))
    assert all(o.error is None for o in outcomes)
    by_gpu = {}
    for o in outcomes:
        by_gpu.setdefault(o.result["gpu"], set()).add(o.result["pid"])
    assert set(by_gpu) <= {"0", "1"} and all(len(p) == 1 for p in by_gpu.values())  # one process per GPU
    assert len({p for ps in by_gpu.values() for p in ps}) == len(by_gpu)


def test_ray_cells_request_a_gpu_on_cuda():
    assert task_resources(tasks(2, "cuda")) == {"num_cpus": 1, "num_gpus": 1}
    assert task_resources(tasks(2, "cpu")) == {"num_cpus": 1, "num_gpus": 0}
