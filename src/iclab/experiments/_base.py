"""What an experiment is: a config with ``quick``/``full`` presets, a grid of independent cells, a pure cell
function, figure functions and the paper's reference values.

A *cell* is a small JSON-able dict (one point of the grid, including its ``seed``); ``run_cell(config, cell,
shared)`` returns a JSON-able dict of metrics (numbers, strings, or lists of numbers for curves). Cells must
be pure: the same ``(config, cell)`` gives the same row on any executor and in any process. Heavy inputs
needed by many cells (a trained model, a pretraining covariance) come from ``shared(config)``, computed once
per run in the driver and handed to workers by reference.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

import pandas as pd

from iclab.config import Config
from iclab.errors import ConfigError

__all__ = ["Experiment", "Comparison", "PRESETS", "lazy"]

PRESETS = ("quick", "full")


@dataclass(frozen=True)
class lazy:  # noqa: N801 - reads as a function at the call site
    """A picklable reference ``"package.module:function"`` imported on first call.

    Experiment modules stay light to import (``iclab list`` imports all of them) while their figure,
    comparison and cell code lives in private modules that import matplotlib, transformers or sklearn:
    ``Experiment(..., figures=lazy("iclab.experiments._x_report:figures"))``.
    """

    target: str

    def __call__(self, *args, **kwargs):
        import importlib

        module, _, attr = self.target.partition(":")
        return getattr(importlib.import_module(module), attr)(*args, **kwargs)


@dataclass(frozen=True)
class Comparison:
    """One row of the "paper reports / iclab measures / within tolerance?" table.

    ``paper`` is what the paper (or the spec) reports, as text; ``"—"`` when it reports nothing numeric.
    ``ok`` is True/False when a tolerance applies, None when the comparison is qualitative only.
    ``note`` says why they differ, or what the tolerance was.
    """

    quantity: str
    paper: str
    measured: str
    ok: bool | None = None
    note: str = ""


@dataclass(frozen=True)
class Experiment:
    """A registered experiment (see module docstring).

    Fields:
        name: CLI name, e.g. ``"temperature"``.
        paper: paper key from DESIGN.md (``temperature``, ``ood``, ``dispersion``, ``multihead``, ``categorical``).
        title: one-line title for the report.
        claim: markdown paragraph: what the paper claims that this experiment tests.
        config_cls: frozen dataclass deriving from :class:`iclab.config.Config`, with a ``seed: int`` field.
        presets: ``{"quick": cfg, "full": cfg}``.
        cells: ``config -> list[cell dict]``.
        run_cell: ``(config, cell, shared) -> metrics dict``. Must be a module-level function (pickled).
        figures: ``(config, results DataFrame, figure_dir) -> list of PNG paths`` (each with a CSV beside it).
        compare: ``(config, results) -> list[Comparison]``.
        shared: optional ``config -> object`` computed once per run in the driver.
        notes: optional ``(config, results) -> markdown`` with disagreements and why.
    """

    name: str
    paper: str
    title: str
    claim: str
    config_cls: type
    presets: Mapping[str, Config]
    cells: Callable[[Any], list[dict]]
    run_cell: Callable[[Any, dict, Any], dict]
    figures: Callable[[Any, pd.DataFrame, Path], list[Path]]
    compare: Callable[[Any, pd.DataFrame], list[Comparison]]
    shared: Callable[[Any], Any] | None = None
    notes: Callable[[Any, pd.DataFrame], str] | None = None
    order: int = 100
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        missing = [p for p in PRESETS if p not in self.presets]
        if missing:
            raise ValueError(f"experiment {self.name!r} lacks presets {missing}")
        if "seed" not in {f.name for f in dataclasses.fields(self.config_cls)}:
            raise ValueError(f"experiment {self.name!r}: config {self.config_cls.__name__} needs a 'seed' field")

    def config(self, preset: str = "quick", overrides: Mapping[str, Any] | None = None, seed: int | None = None):
        """The preset config with ``--set`` overrides and ``--seed`` applied (validated)."""
        if preset not in self.presets:
            raise ConfigError("preset", preset, "one of " + ", ".join(self.presets))
        cfg = self.presets[preset].with_overrides(dict(overrides or {}))
        if seed is not None:
            cfg = cfg.with_overrides({"seed": seed})
        return cfg
