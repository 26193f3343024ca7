"""Every benchmark runs to the end at a tiny size, so one that rots with the code around it fails the suite.

Each ``benchmarks/bench_*.py`` runs as ``make bench`` runs it (``benchmarks/run_all.py``, which imports the file and
calls its ``main``), with ``--smoke``: ``main(smoke=True)``, the same code at a tiny size, in a fresh process (the
benchmarks set environment variables, thread counts and start Ray). Speed is not asserted: a smoke run's numbers
mean nothing; ``make bench`` measures.
"""

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"

pytestmark = pytest.mark.slow  # a benchmark starts worker pools, Ray or model processes: tens of seconds


@pytest.mark.parametrize("name", sorted(p.name for p in BENCHMARKS.glob("bench_*.py")))
def test_benchmark_runs_at_a_tiny_size(name):
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "run_all.py"), "--smoke", name], capture_output=True, text=True, timeout=900
    )
    out = done.stdout + done.stderr
    assert done.returncode == 0 and "1 of 1 benchmarks ran" in done.stdout, f"{name} failed:\n{out[-6000:]}"


def test_every_benchmark_file_is_found():
    """The parametrisation above sees the benchmarks (an empty glob would pass vacuously)."""
    names = {p.name for p in BENCHMARKS.glob("bench_*.py")}
    assert {"bench_executors.py", "bench_sweep_scale.py", "bench_hf_long.py"} <= names
