"""Run a registered experiment: its preset config (with ``--set``/``--seed``) -> a :class:`iclab.runs.Sweep`, built
once -> the result store of its run folder, run as one :class:`iclab.runs.RunOptions` says. Figures and
``report.md`` are written by :mod:`iclab.report`."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import pandas as pd

from iclab.errors import ConfigError
from iclab.experiments._device import check_config_device
from iclab.experiments._registry import get_experiment
from iclab.runs import ResultStore, RunFolder, RunOptions, RunResult, Sweep, default_run_dir, load_results, run_sweep

__all__ = ["run_experiment", "sweep_for", "run_dir_for", "load_run", "LoadedRun"]


def sweep_for(
    name: str, preset: str = "quick", overrides: Mapping[str, Any] | None = None, seed: int | None = None
) -> Sweep:
    """The sweep of experiment ``name`` at ``preset`` with ``overrides`` and ``seed`` applied (validated)."""
    exp = get_experiment(name)
    config = exp.config(preset, overrides, seed)
    check_config_device(config)  # once, in the driver
    return Sweep(name, preset, config, exp.cells(config), exp.run_cell, exp.shared, exp.budget)


def run_experiment(
    experiment: str | Sweep,
    preset: str | None = None,
    overrides: Mapping[str, Any] | None = None,
    seed: int | None = None,
    out: str | Path | None = None,
    options: RunOptions | None = None,
    **option_fields: Any,
) -> RunResult:
    """Run (or resume) an experiment as ``options`` say (:class:`iclab.runs.RunOptions`: executor, workers, cell
    timeout, ...; see :func:`iclab.runs.run_sweep`); return its results.

    ``experiment`` is a registered name (with ``preset``, default ``quick``, ``overrides`` and ``seed``), or the
    :class:`~iclab.runs.Sweep` that :func:`sweep_for` already built (``iclab run`` builds it once for its checks and
    runs that one): then ``out`` is required and ``preset``, ``overrides`` and ``seed`` are the sweep's own.
    ``option_fields`` (``executor="serial"``, ``progress=False``, ...) are a shorthand for the same fields of
    ``options``: :meth:`RunOptions.of <iclab.runs.RunOptions.of>` makes the one options object from both.

    The run folder is ``out``, else ``runs/NAME-PRESET``; a customised config (``overrides`` or ``seed``) without
    ``out`` gets its own folder ``runs/NAME-PRESET-<config hash>``, so it never collides with the preset's run.
    """
    options = RunOptions.of(options, **option_fields)
    if not isinstance(experiment, Sweep):
        sweep = sweep_for(experiment, preset or "quick", overrides, seed)
        return run_sweep(sweep, run_dir_for(sweep, customised=bool(overrides) or seed is not None, out=out), options)
    if preset is not None or overrides or seed is not None:
        raise ConfigError(
            "preset/overrides/seed",
            {"preset": preset, "overrides": overrides, "seed": seed},
            f"none with a Sweep (sweep {experiment.name!r} has its own config)",
        )
    if out is None:
        raise ConfigError("out", out, f"a run folder for the sweep {experiment.name!r} (a Sweep has no default folder)")
    return run_sweep(experiment, out, options)


def run_dir_for(sweep: Sweep, customised: bool, out: str | Path | None = None) -> Path:
    """The run folder of ``sweep``: ``out`` if given, else ``runs/NAME-PRESET``, with ``-<config hash>`` appended
    when the config was ``customised`` (``--set``, ``--config`` or ``--seed``)."""
    if out is not None:
        return Path(out)
    folder = default_run_dir(sweep.name, sweep.preset)
    return Path(f"{folder}-{sweep.config_hash[:8]}") if customised else folder


@dataclass(frozen=True)
class LoadedRun:
    """A finished (or partly finished) run read back from its folder: what :func:`load_run` returns.

    Fields:
        path: the run folder.
        experiment: the registered experiment's name.
        preset: the preset the config came from.
        config: the config, as the experiment's config class (validated).
        results: one row per finished cell (cell keys and metrics as columns; empty if none finished).
        failed: one row per failed cell, with its ``_error``.
        meta: everything ``config.json`` records (config hash, seed, iclab version, git revision, versions).
    """

    path: Path
    experiment: str
    preset: str
    config: Any
    results: pd.DataFrame
    failed: pd.DataFrame
    meta: dict = field(repr=False)


def load_run(path: str | Path) -> LoadedRun:
    """Read the run folder ``path`` (``iclab.load_run``): its results and its typed config; it changes nothing.

    A path that is not a run folder (missing, a file, no ``config.json``) or records an experiment that is not
    registered raises one IclabError."""
    folder = RunFolder.load(path)
    exp = get_experiment(folder.meta["experiment"])
    config = exp.config_cls.from_dict(folder.meta["config"])
    stored = (folder.path / ResultStore.FILENAME).exists()
    results = load_results(folder.path) if stored else pd.DataFrame()
    failed = load_results(folder.path, "failed") if stored else pd.DataFrame()
    return LoadedRun(folder.path, exp.name, str(folder.meta.get("preset", "")), config, results, failed, folder.meta)
