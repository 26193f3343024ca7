"""Run a registered experiment: its preset config (with ``--set``/``--seed``) -> a :class:`iclab.runs.Sweep`
-> the result store of its run folder. Figures and ``report.md`` are written by :mod:`iclab.report`."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from iclab.experiments._registry import get_experiment
from iclab.runs import RunResult, Sweep, default_run_dir, run_sweep

__all__ = ["run_experiment", "sweep_for", "run_dir_for"]


def sweep_for(name: str, preset: str = "quick", overrides: Mapping[str, Any] | None = None,
              seed: int | None = None) -> Sweep:
    """The sweep of experiment ``name`` at ``preset`` with ``overrides`` and ``seed`` applied (validated)."""
    exp = get_experiment(name)
    config = exp.config(preset, overrides, seed)
    return Sweep(name, preset, config, exp.cells(config), exp.run_cell, exp.shared)


def run_experiment(name: str, preset: str = "quick", overrides: Mapping[str, Any] | None = None,
                   seed: int | None = None, out: str | Path | None = None, executor: str = "local",
                   workers: int | None = None, address: str | None = None, force: bool = False,
                   retry_failed: bool = False, progress: bool = True) -> RunResult:
    """Run (or resume) experiment ``name``; return its results.

    The run folder is ``out``, else ``runs/NAME-PRESET``; a customised config (``overrides`` or ``seed``) without
    ``out`` gets its own folder ``runs/NAME-PRESET-<config hash>``, so it never collides with the preset's run.
    """
    sweep = sweep_for(name, preset, overrides, seed)
    out = run_dir_for(sweep, customised=bool(overrides) or seed is not None, out=out)
    return run_sweep(sweep, out, executor=executor, workers=workers, address=address, force=force,
                     retry_failed=retry_failed, progress=progress)


def run_dir_for(sweep: Sweep, customised: bool, out: str | Path | None = None) -> Path:
    """The run folder of ``sweep``: ``out`` if given, else ``runs/NAME-PRESET``, with ``-<config hash>`` appended
    when the config was ``customised`` (``--set``, ``--config`` or ``--seed``)."""
    if out is not None:
        return Path(out)
    folder = default_run_dir(sweep.name, sweep.preset)
    return Path(f"{folder}-{sweep.config_hash[:8]}") if customised else folder
