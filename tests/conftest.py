"""Test-wide settings: no network, deterministic torch, one thread (``make test`` runs two test processes side by
side, pytest-xdist; CI machines have 2 cores)."""

import os
from collections import Counter

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("RAY_AUTH_MODE", "disabled")

import pytest  # noqa: E402
import torch  # noqa: E402

torch.set_num_threads(1)

from hypothesis import settings  # noqa: E402

# CI machines are small and shared: no per-example deadline; no example database written into the checkout. Under
# CI (CI set) the examples are derived from each test's name, so a submission's verdict never rests on a lucky draw;
# elsewhere every run explores new examples.
settings.register_profile("iclab", deadline=None, database=None, derandomize=bool(os.environ.get("CI")))
settings.load_profile("iclab")


@pytest.fixture
def fixture_experiments_env(monkeypatch):
    """The test experiments of ``fixtures_experiments`` findable by this process and by every worker or CLI process
    it starts (a module marks itself with ``pytestmark = pytest.mark.usefixtures("fixture_experiments_env")``)."""
    from fixtures_experiments import fixture_env

    env = fixture_env()
    monkeypatch.setenv("ICLAB_EXPERIMENT_MODULES", env["ICLAB_EXPERIMENT_MODULES"])
    monkeypatch.setenv("PYTHONPATH", env["PYTHONPATH"])


_WORKER_FUZZ_COUNTS: list[dict] = []  # under pytest-xdist: the counts each worker sent back (controller side)


def _fuzz_counts() -> dict | None:
    """This process's fuzz counts (tests/fuzz_harness.py), None when the fuzz suite did not run here."""
    import sys

    harness = sys.modules.get("fuzz_harness")
    return dict(harness.COUNTS) if harness is not None and harness.COUNTS["cases"] else None


def pytest_sessionfinish(session):
    """An xdist worker sends its fuzz counts back to the controller (``workeroutput``)."""
    out, counts = getattr(session.config, "workeroutput", None), _fuzz_counts()
    if out is not None and counts is not None:
        out["fuzz_counts"] = counts


@pytest.hookimpl(optionalhook=True)  # an xdist hook: unknown (and never called) without pytest-xdist
def pytest_testnodedown(node, error):
    counts = getattr(node, "workeroutput", {}).get("fuzz_counts")
    if counts:
        _WORKER_FUZZ_COUNTS.append(counts)


def pytest_terminal_summary(terminalreporter):
    """The fuzz suite's counts (tests/fuzz_harness.py), when it ran: of this process, or summed over the xdist
    workers."""
    parts = [c for c in [_fuzz_counts(), *_WORKER_FUZZ_COUNTS] if c]
    if parts:
        c = sum((Counter(p) for p in parts), Counter())
        terminalreporter.write_line(
            f"fuzz: {c['cases']} cases tried: {c['clear']} clear errors, {c['correct']} correct results, "
            f"{c['traceback']} tracebacks, {c['hang']} hangs, {c['files_changed']} changed files, "
            f"{c['accepted']} wrongly accepted, {c['unclear']} unclear errors, {c['wrong']} wrong results; "
            f"{c['valid']} huge values accepted as legal settings"
        )
