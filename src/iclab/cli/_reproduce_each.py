"""The loop of ``iclab reproduce`` (:func:`reproduce_each`): each experiment run in turn into the root, its report
written beside the next experiment's cells, one broken experiment never losing the others."""

from __future__ import annotations

from pathlib import Path

import typer

from iclab.cli._tracking import start_tracking
from iclab.errors import IclabError
from iclab.runs import RunOptions

__all__ = ["reproduce_each"]


def reproduce_each(sweeps, preset: str, root: Path, options: RunOptions, tracker, run_dirs: list, failures: list
                    ) -> None:  # fmt: skip
    """Run and report each sweep of ``iclab reproduce`` in turn into ``root``, appending its run folder to
    ``run_dirs`` or its error to ``failures``: one broken experiment does not lose the others; Ctrl-C stops all.

    With worker processes (``local`` or ``ray``) and no tracker, a finished sweep's report (its judge, figures,
    ``summary.json`` and ``report.md``, one core of the driver for seconds) is written on a thread beside the next
    sweep's cells, which it would otherwise leave a core idle for; the reports are written in order, every one
    before this returns (a Ctrl-C waits for them too). The serial executor computes its cells in the driver, and a
    tracker logs each run's verdicts when it closes before the next starts: both report each run inline."""
    from concurrent.futures import ThreadPoolExecutor

    from iclab.experiments import get_experiment, run_experiment
    from iclab.report import write_run_report
    from iclab.runs import default_run_dir

    beside = options.executor != "serial" and tracker is None
    reports = ThreadPoolExecutor(max_workers=1, thread_name_prefix="iclab-report") if beside else None
    written = []  # (name, result, future of its report or None when written inline, its tracking), in order
    try:
        for sweep in sweeps:
            name = sweep.name
            typer.echo(f"== {name} ({preset})", err=True)
            out = default_run_dir(name, preset, root)
            live = None
            try:
                live = start_tracking(tracker, sweep, out)  # before the experiment's first cell
                result = run_experiment(sweep, out=out, options=RunOptions.of(options, on_cell=live.on_cell))
                args = (get_experiment(name), result.config, result)
                report = reports.submit(write_run_report, *args) if reports else None
                if reports is None:
                    write_run_report(*args)  # inline: an error here fails this experiment, as below
            except Exception as exc:  # noqa: BLE001 - one broken experiment must not lose the others
                if live is not None:
                    live.abort()
                _failed(failures, name, f"{type(exc).__name__}: {exc}")
                continue
            except BaseException:  # Ctrl-C: the tracked run ends as failed, and so does the command
                if live is not None:
                    live.abort()
                raise
            written.append((name, result, report, live))
    finally:
        if reports:
            reports.shutdown(wait=True)  # the runs that finished keep their reports, even after a Ctrl-C
    for name, result, report, live in written:
        try:
            if report is not None:
                report.result()
        except Exception as exc:  # noqa: BLE001 - its cells are kept; the report can be written again
            _failed(failures, name, f"{type(exc).__name__}: {exc}")
            continue
        run_dirs.append(result.path)
        try:
            live.close(result)
        except IclabError as exc:  # the run folder is complete; say so and go on
            _failed(failures, name, str(exc))


def _failed(failures: list, name: str, why: str) -> None:
    """Record and print that experiment ``name`` failed (``why``)."""
    failures.append(f"{name}: {why}")
    typer.echo(f"error in {name}: {why}", err=True)
