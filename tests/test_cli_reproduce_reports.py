"""``iclab reproduce`` with worker processes writes each finished run's report on a thread, beside the next sweep's
cells: the same reports as inline, every one written before the command ends (errors and Ctrl-C included)."""

import json
import threading

import pytest

import fixtures_experiments  # noqa: F401 - registers fx_sweep / fx_other in this process
import iclab.experiments
import iclab.report
from iclab.cli import main

pytestmark = pytest.mark.usefixtures("fixture_experiments_env")

NAMES = ("fx_sweep", "fx_other")
WAIT = 120  # seconds a gate waits for the other side before the test fails (it never waits this long when right)


def _reproduce(root, *extra):
    args = ["reproduce", "--root", str(root), *[a for n in NAMES for a in ("--only", n)], *extra]
    return main(args)


def _verdicts(root, name):
    summary = json.loads((root / f"{name}-quick" / "summary.json").read_text())
    return [(c["id"], c["verdict"], c["measured"]) for c in summary["comparisons"]]


@pytest.fixture
def watched(monkeypatch):
    """Wrap the report writer and the sweep runner: record which thread wrote each report; ``gates`` holds events a
    test sets up: ``("report", name)`` is awaited before that report is written, ``("run", name)`` set when that
    sweep starts; ``interrupt`` names a sweep that raises KeyboardInterrupt when it starts."""
    state = {"threads": {}, "gates": {}, "interrupt": None, "fail": None}
    write, run = iclab.report.write_run_report, iclab.experiments.run_experiment

    def write_report(exp, config, result):
        gate = state["gates"].get(("report", exp.name))
        if gate is not None:
            state["threads"][exp.name + " waited"] = gate.wait(WAIT)
        state["threads"][exp.name] = threading.current_thread().name
        if state["fail"] == exp.name:
            raise RuntimeError("the figures could not be drawn")
        return write(exp, config, result)

    def run_experiment(sweep, *args, **kwargs):
        started = state["gates"].get(("run", sweep.name))
        if started is not None:
            started.set()
        if state["interrupt"] == sweep.name:
            raise KeyboardInterrupt
        return run(sweep, *args, **kwargs)

    monkeypatch.setattr(iclab.report, "write_run_report", write_report)
    monkeypatch.setattr(iclab.experiments, "run_experiment", run_experiment)
    return state


def test_reports_are_written_beside_the_next_sweep_and_equal_the_serial_ones(tmp_path, watched):
    next_started = threading.Event()
    watched["gates"] = {("report", "fx_sweep"): next_started, ("run", "fx_other"): next_started}
    assert _reproduce(tmp_path / "local", "--executor", "local", "--workers", "2") == 0
    assert watched["threads"]["fx_sweep waited"]  # fx_other's sweep began while fx_sweep's report was unwritten
    assert {watched["threads"][n] for n in NAMES} == {"iclab-report_0"}
    beside = {n: _verdicts(tmp_path / "local", n) for n in NAMES}

    watched["gates"], watched["threads"] = {}, {}
    assert _reproduce(tmp_path / "serial", "--executor", "serial") == 0
    assert {watched["threads"][n] for n in NAMES} == {"MainThread"}
    assert beside == {n: _verdicts(tmp_path / "serial", n) for n in NAMES}
    assert all(beside.values())
    assert (tmp_path / "local" / "report" / "index.html").exists()


def test_a_tracker_keeps_reports_inline(tmp_path, watched):
    args = ("--executor", "local", "--workers", "2", "--tracker", "tensorboard")
    assert _reproduce(tmp_path, *args) == 0
    assert {watched["threads"][n] for n in NAMES} == {"MainThread"}


def test_a_report_that_fails_on_the_thread_fails_its_experiment_alone(tmp_path, watched, capsys):
    watched["fail"] = "fx_sweep"
    assert _reproduce(tmp_path, "--executor", "local", "--workers", "2") == 1
    err = capsys.readouterr().err
    assert "error in fx_sweep: RuntimeError: the figures could not be drawn" in err
    assert "failed experiments:\n  fx_sweep: RuntimeError" in err
    assert (tmp_path / "fx_sweep-quick" / "results.sqlite").exists()  # its cells are kept
    assert not (tmp_path / "fx_sweep-quick" / "report.md").exists()
    assert _verdicts(tmp_path, "fx_other")


def test_ctrl_c_in_the_next_sweep_still_writes_the_finished_runs_report(tmp_path, watched):
    interrupted = threading.Event()
    watched["gates"] = {("report", "fx_sweep"): interrupted, ("run", "fx_other"): interrupted}
    watched["interrupt"] = "fx_other"
    assert _reproduce(tmp_path, "--executor", "local", "--workers", "2") == 130
    assert watched["threads"]["fx_sweep waited"] and watched["threads"]["fx_sweep"] == "iclab-report_0"
    assert _verdicts(tmp_path, "fx_sweep")
    assert not (tmp_path / "fx_other-quick" / "report.md").exists()
