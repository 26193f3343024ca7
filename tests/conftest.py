"""Test-wide settings: no network, deterministic torch, one thread (CI machines have 2 cores)."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("RAY_AUTH_MODE", "disabled")

import torch  # noqa: E402

torch.set_num_threads(1)

from hypothesis import settings  # noqa: E402

# CI machines are small and shared: no per-example deadline; no example database written into the checkout. Under
# CI (CI set) the examples are derived from each test's name, so a submission's verdict never rests on a lucky draw;
# elsewhere every run explores new examples.
settings.register_profile("iclab", deadline=None, database=None, derandomize=bool(os.environ.get("CI")))
settings.load_profile("iclab")


def pytest_terminal_summary(terminalreporter):
    """The fuzz suite's counts (tests/fuzz_harness.py), when it ran."""
    import sys

    harness = sys.modules.get("fuzz_harness")
    if harness is not None and harness.COUNTS["cases"]:
        c = harness.COUNTS
        terminalreporter.write_line(
            f"fuzz: {c['cases']} cases tried: {c['clear']} clear errors, {c['correct']} correct results, "
            f"{c['traceback']} tracebacks, {c['hang']} hangs, {c['files_changed']} changed files, "
            f"{c['accepted']} wrongly accepted, {c['unclear']} unclear errors, {c['wrong']} wrong results; "
            f"{c['valid']} huge values accepted as legal settings"
        )
